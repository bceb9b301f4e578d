// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[A:.*]] = kiln.layer_norm %{{.*}}, %{{.*}}, %{{.*}} dims = 2 eps = 9.9999999999999995E-7 : tensor<2x7x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
// CHECK: %[[B:.*]] = kiln.layer_norm %{{.*}}, %{{.*}} : tensor<2x7x4x6xf32>, tensor<6xf32>
// CHECK: %[[C:.*]] = kiln.layer_norm %{{.*}} dims = 4 : tensor<2x7x4x6xf32>
// CHECK: return %[[A]], %[[B]], %[[C]] : tensor<2x7x4x6xf32>, tensor<2x7x4x6xf32>, tensor<2x7x4x6xf32>
func.func @layer_norm(%x: tensor<2x7x4x6xf32>, %w: tensor<4x6xf32>, %b: tensor<4x6xf32>,
                      %w1: tensor<6xf32>)
    -> (tensor<2x7x4x6xf32>, tensor<2x7x4x6xf32>, tensor<2x7x4x6xf32>) {
  %0 = kiln.layer_norm %x, %w, %b dims = 2 eps = 1.0e-06
      : tensor<2x7x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
  %1 = kiln.layer_norm %x, %w1 dims = 1 eps = 1.0e-05 : tensor<2x7x4x6xf32>, tensor<6xf32>
  %2 = kiln.layer_norm %x dims = 4 : tensor<2x7x4x6xf32>
  return %0, %1, %2 : tensor<2x7x4x6xf32>, tensor<2x7x4x6xf32>, tensor<2x7x4x6xf32>
}

// CHECK-LABEL: func.func @rms_norm
// CHECK: %[[A:.*]] = kiln.rms_norm %{{.*}}, %{{.*}} eps = 9.9999999999999995E-7 : tensor<2x9x64xbf16>, tensor<64xbf16>
// CHECK: %[[B:.*]] = kiln.rms_norm %{{.*}} : tensor<2x9x64xbf16>
// CHECK: return %[[A]], %[[B]] : tensor<2x9x64xbf16>, tensor<2x9x64xbf16>
func.func @rms_norm(%x: tensor<2x9x64xbf16>, %w: tensor<64xbf16>)
    -> (tensor<2x9x64xbf16>, tensor<2x9x64xbf16>) {
  %0 = kiln.rms_norm %x, %w eps = 1.0e-06 : tensor<2x9x64xbf16>, tensor<64xbf16>
  %1 = kiln.rms_norm %x : tensor<2x9x64xbf16>
  return %0, %1 : tensor<2x9x64xbf16>, tensor<2x9x64xbf16>
}

// CHECK-LABEL: func.func @batch_norm
// CHECK: %{{.*}}, %[[M:.*]], %[[V:.*]] = kiln.batch_norm %{{.*}}, %{{.*}}, %{{.*}} dim = 3 eps = 1.000000e-03 : tensor<8x5x5x16xf32>, tensor<16xf32>, tensor<16xf32>
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = kiln.batch_norm %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3x11xf16>, tensor<3xf16>, tensor<3xf16>
// CHECK: return %[[M]], %[[V]], %[[Y]] : tensor<16xf32>, tensor<16xf32>, tensor<4x3x11xf16>
func.func @batch_norm(%x: tensor<8x5x5x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>,
                      %x1: tensor<4x3x11xf16>, %g1: tensor<3xf16>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<4x3x11xf16>) {
  %y, %mean, %var = kiln.batch_norm %x, %g, %b dim = 3 eps = 1.0e-03
      : tensor<8x5x5x16xf32>, tensor<16xf32>, tensor<16xf32>
  %y1:3 = kiln.batch_norm %x1, %g1, %g1 : tensor<4x3x11xf16>, tensor<3xf16>, tensor<3xf16>
  return %mean, %var, %y1#0 : tensor<16xf32>, tensor<16xf32>, tensor<4x3x11xf16>
}

// Running statistics: two more results of the statistics' type (f32 here,
// beside bf16 activations); `eval` normalises with them.
// CHECK-LABEL: func.func @batch_norm_running
// CHECK: %[[U:[a-z_0-9]+]]:2 = kiln.batch_norm %{{.*}}, %{{.*}}, %{{.*}} running %{{.*}}, %{{.*}} : tensor<8x16x5x5xbf16>, tensor<16xbf16>, tensor<16xbf16>, tensor<16xf32>, tensor<16xf32>
// CHECK: %[[E:[a-z_0-9]+]], %{{.*}} = kiln.batch_norm %{{.*}}, %{{.*}}, %{{.*}} running %{{.*}}, %{{.*}} momentum = 2.500000e-01 eval dim = 3 eps = 1.000000e-03 : tensor<8x5x5x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
// CHECK: return %[[U]]#0, %[[U]]#1, %[[E]] : tensor<16xf32>, tensor<16xf32>, tensor<8x5x5x16xf32>
func.func @batch_norm_running(%x: tensor<8x16x5x5xbf16>, %g: tensor<16xbf16>,
                              %rm: tensor<16xf32>, %rv: tensor<16xf32>,
                              %x1: tensor<8x5x5x16xf32>, %g1: tensor<16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<8x5x5x16xf32>) {
  %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %g, %g running %rm, %rv
      : tensor<8x16x5x5xbf16>, tensor<16xbf16>, tensor<16xbf16>, tensor<16xf32>, tensor<16xf32>
  %e:5 = kiln.batch_norm %x1, %g1, %g1 running %rm, %rv momentum = 0.25 eval dim = 3 eps = 1.0e-03
      : tensor<8x5x5x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  return %rm1, %rv1, %e#0 : tensor<16xf32>, tensor<16xf32>, tensor<8x5x5x16xf32>
}

// Model state is a function argument with an initialiser, like a parameter.
// CHECK-LABEL: func.func @state_arguments
// CHECK-SAME: kiln.state = #kiln.init<zeros>
// CHECK-SAME: kiln.state = #kiln.init<ones>
func.func @state_arguments(%rm: tensor<16xf32> {kiln.state = #kiln.init<zeros>},
                           %rv: tensor<16xf32> {kiln.state = #kiln.init<ones>}) {
  return
}
