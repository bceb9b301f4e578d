// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @mse
// CHECK: %[[A:.*]] = kiln.mse_loss %{{.*}}, %{{.*}} : tensor<16x3x5xf32>
// CHECK: %[[B:.*]] = kiln.mse_loss %{{.*}}, %{{.*}} reduction = sum : tensor<16x3x5xf32>
// CHECK: return %[[A]], %[[B]] : tensor<f32>, tensor<f32>
func.func @mse(%p: tensor<16x3x5xf32>, %t: tensor<16x3x5xf32>) -> (tensor<f32>, tensor<f32>) {
  %0 = kiln.mse_loss %p, %t reduction = mean : tensor<16x3x5xf32>
  %1 = kiln.mse_loss %p, %t reduction = sum : tensor<16x3x5xf32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @cross_entropy
// CHECK: %[[A:.*]] = kiln.cross_entropy %{{.*}}, %{{.*}} label_smoothing = 1.000000e-01 : tensor<32x10xbf16>, tensor<32xi32>
// CHECK: %[[B:.*]] = kiln.cross_entropy %{{.*}}, %{{.*}} reduction = sum : tensor<32x10xbf16>, tensor<32xi32>
// CHECK: %[[I:.*]] = kiln.cross_entropy %{{.*}}, %{{.*}} ignore_index = -100 : tensor<32x10xbf16>, tensor<32xi32>
// CHECK: %[[J:.*]] = kiln.cross_entropy %{{.*}}, %{{.*}} reduction = sum label_smoothing = 2.000000e-01 ignore_index = 3 : tensor<32x10xbf16>, tensor<32xi32>
// CHECK: return %[[A]], %[[B]], %[[I]], %[[J]] : tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>
func.func @cross_entropy(%logits: tensor<32x10xbf16>, %labels: tensor<32xi32>) -> (tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>) {
  %0 = kiln.cross_entropy %logits, %labels label_smoothing = 0.1 : tensor<32x10xbf16>, tensor<32xi32>
  %1 = kiln.cross_entropy %logits, %labels reduction = sum label_smoothing = 0.0
      : tensor<32x10xbf16>, tensor<32xi32>
  %2 = kiln.cross_entropy %logits, %labels ignore_index = -100 : tensor<32x10xbf16>, tensor<32xi32>
  %3 = kiln.cross_entropy %logits, %labels reduction = sum label_smoothing = 0.2 ignore_index = 3
      : tensor<32x10xbf16>, tensor<32xi32>
  return %0, %1, %2, %3 : tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>
}

// CHECK-LABEL: func.func @bce
// CHECK: %[[A:.*]] = kiln.binary_cross_entropy %{{.*}}, %{{.*}} : tensor<7x1xf16>
// CHECK: %[[B:.*]] = kiln.binary_cross_entropy %{{.*}}, %{{.*}} reduction = sum : tensor<7x1xf16>
// CHECK: return %[[A]], %[[B]] : tensor<f16>, tensor<f16>
func.func @bce(%x: tensor<7x1xf16>, %t: tensor<7x1xf16>) -> (tensor<f16>, tensor<f16>) {
  %0 = kiln.binary_cross_entropy %x, %t : tensor<7x1xf16>
  %1 = kiln.binary_cross_entropy %x, %t reduction = sum : tensor<7x1xf16>
  return %0, %1 : tensor<f16>, tensor<f16>
}
