// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @attention
// CHECK: %[[A:.*]] = kiln.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale = 1.250000e-01 : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>
// CHECK: return %[[A]] : tensor<2x4x16x32xf32>
func.func @attention(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x32xf32>)
    -> tensor<2x4x16x32xf32> {
  %0 = kiln.attention %q, %k, %v causal scale = 0.125
      : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>
  return %0 : tensor<2x4x16x32xf32>
}

// Decoding 3 queries against 11 cached keys (causal, ends aligned); default scale.
// CHECK-LABEL: func.func @attention_cache
// CHECK: %[[A:.*]] = kiln.attention %{{.*}}, %{{.*}}, %{{.*}} causal : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x8xbf16>
// CHECK: %[[B:.*]] = kiln.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x8xbf16>
// CHECK: return %[[A]], %[[B]] : tensor<1x6x3x8xbf16>, tensor<1x6x3x8xbf16>
func.func @attention_cache(%q: tensor<1x6x3x8xbf16>, %k: tensor<1x6x11x8xbf16>, %v: tensor<1x6x11x8xbf16>)
    -> (tensor<1x6x3x8xbf16>, tensor<1x6x3x8xbf16>) {
  %0 = kiln.attention %q, %k, %v causal
      : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x8xbf16>
  %1 = kiln.attention %q, %k, %v
      : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x8xbf16>
  return %0, %1 : tensor<1x6x3x8xbf16>, tensor<1x6x3x8xbf16>
}

// With the rows' log-sum-exp: an f32 [B, H, Tq] second result.
// CHECK-LABEL: func.func @attention_row_lse
// CHECK: %[[O:.*]], %[[L:.*]] = kiln.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 2.500000e-01 with_row_lse : tensor<1x2x3x8xf16>, tensor<1x2x5x8xf16>, tensor<1x2x5x4xf16>
// CHECK: return %[[O]], %[[L]] : tensor<1x2x3x4xf16>, tensor<1x2x3xf32>
func.func @attention_row_lse(%q: tensor<1x2x3x8xf16>, %k: tensor<1x2x5x8xf16>, %v: tensor<1x2x5x4xf16>)
    -> (tensor<1x2x3x4xf16>, tensor<1x2x3xf32>) {
  %o, %lse = kiln.attention %q, %k, %v scale = 0.25 with_row_lse
      : tensor<1x2x3x8xf16>, tensor<1x2x5x8xf16>, tensor<1x2x5x4xf16>
  return %o, %lse : tensor<1x2x3x4xf16>, tensor<1x2x3xf32>
}
