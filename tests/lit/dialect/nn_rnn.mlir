// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// B = 2, T = 5, NH = 3, D = 16; (Gw, Gr, Gb, S) per function.

// CHECK-LABEL: func.func @lstm
// CHECK: %[[ALL:.*]], %[[LAST:.*]] = kiln.rnn %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} function = lstm : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>
// CHECK: return %[[ALL]], %[[LAST]] : tensor<2x2x5x3x16xf32>, tensor<2x2x3x16xf32>
func.func @lstm(%wx: tensor<2x5x4x3x16xf32>, %r: tensor<4x3x16x16xf32>, %b: tensor<4x3x16xf32>,
                %s0: tensor<2x2x3x16xf32>) -> (tensor<2x2x5x3x16xf32>, tensor<2x2x3x16xf32>) {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm
      : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>
  return %all, %last : tensor<2x2x5x3x16xf32>, tensor<2x2x3x16xf32>
}

// CHECK-LABEL: func.func @slstm
// CHECK: %[[ALL:.*]], %[[LAST:.*]] = kiln.rnn %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} function = slstm : tensor<2x5x4x3x16xbf16>, tensor<4x3x16x16xbf16>, tensor<4x3x16xbf16>, tensor<4x2x3x16xbf16>
// CHECK: return %[[ALL]], %[[LAST]] : tensor<4x2x5x3x16xbf16>, tensor<4x2x3x16xbf16>
func.func @slstm(%wx: tensor<2x5x4x3x16xbf16>, %r: tensor<4x3x16x16xbf16>, %b: tensor<4x3x16xbf16>,
                 %s0: tensor<4x2x3x16xbf16>) -> (tensor<4x2x5x3x16xbf16>, tensor<4x2x3x16xbf16>) {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = slstm
      : tensor<2x5x4x3x16xbf16>, tensor<4x3x16x16xbf16>, tensor<4x3x16xbf16>, tensor<4x2x3x16xbf16>
  return %all, %last : tensor<4x2x5x3x16xbf16>, tensor<4x2x3x16xbf16>
}

// CHECK-LABEL: func.func @gru
// CHECK: %[[ALL:.*]], %[[LAST:.*]] = kiln.rnn %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} function = gru : tensor<2x5x3x3x16xf32>, tensor<3x3x16x16xf32>, tensor<4x3x16xf32>, tensor<1x2x3x16xf32>
// CHECK: return %[[ALL]], %[[LAST]] : tensor<1x2x5x3x16xf32>, tensor<1x2x3x16xf32>
func.func @gru(%wx: tensor<2x5x3x3x16xf32>, %r: tensor<3x3x16x16xf32>, %b: tensor<4x3x16xf32>,
               %s0: tensor<1x2x3x16xf32>) -> (tensor<1x2x5x3x16xf32>, tensor<1x2x3x16xf32>) {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = gru
      : tensor<2x5x3x3x16xf32>, tensor<3x3x16x16xf32>, tensor<4x3x16xf32>, tensor<1x2x3x16xf32>
  return %all, %last : tensor<1x2x5x3x16xf32>, tensor<1x2x3x16xf32>
}

// CHECK-LABEL: func.func @elman
// CHECK: %[[ALL:.*]], %[[LAST:.*]] = kiln.rnn %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} function = elman : tensor<7x1x1x1x8xf16>, tensor<1x1x8x8xf16>, tensor<1x1x8xf16>, tensor<1x7x1x8xf16>
// CHECK: return %[[ALL]], %[[LAST]] : tensor<1x7x1x1x8xf16>, tensor<1x7x1x8xf16>
func.func @elman(%wx: tensor<7x1x1x1x8xf16>, %r: tensor<1x1x8x8xf16>, %b: tensor<1x1x8xf16>,
                 %s0: tensor<1x7x1x8xf16>) -> (tensor<1x7x1x1x8xf16>, tensor<1x7x1x8xf16>) {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = elman
      : tensor<7x1x1x1x8xf16>, tensor<1x1x8x8xf16>, tensor<1x1x8xf16>, tensor<1x7x1x8xf16>
  return %all, %last : tensor<1x7x1x1x8xf16>, tensor<1x7x1x8xf16>
}
