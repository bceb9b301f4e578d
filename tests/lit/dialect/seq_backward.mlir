// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// The results take the types of query, key and value.
// CHECK-LABEL: func.func @attention_backward
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = kiln.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} causal scale = 1.250000e-01 : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]] : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>
func.func @attention_backward(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x32xf32>,
                              %o: tensor<2x4x16x32xf32>, %do: tensor<2x4x16x32xf32>)
    -> (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>) {
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %do causal scale = 0.125
      : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>
  return %dq, %dk, %dv : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>
}

// Given the forward's row log-sum-exp.
// CHECK-LABEL: func.func @attention_backward_row_lse
// CHECK: %[[O:.*]], %[[L:.*]] = kiln.attention %{{.*}}, %{{.*}}, %{{.*}} causal with_row_lse : tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>
// CHECK: kiln.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %{{.*}} causal row_lse(%[[L]] : tensor<2x4x16xf32>) : tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x32xbf16>
func.func @attention_backward_row_lse(%q: tensor<2x4x16x64xbf16>, %k: tensor<2x4x16x64xbf16>, %v: tensor<2x4x16x32xbf16>,
                                      %do: tensor<2x4x16x32xbf16>)
    -> (tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>) {
  %o, %lse = kiln.attention %q, %k, %v causal with_row_lse
      : tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %do causal row_lse(%lse : tensor<2x4x16xf32>)
      : tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>, tensor<2x4x16x32xbf16>
  return %dq, %dk, %dv : tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>
}

// Three queries after a cache of eleven keys, default scale, bf16.
// CHECK-LABEL: func.func @attention_backward_cache
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = kiln.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} causal : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x5xbf16>, tensor<1x6x3x5xbf16>
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = kiln.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x5xbf16>, tensor<1x6x3x5xbf16>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]] : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x5xbf16>
func.func @attention_backward_cache(%q: tensor<1x6x3x8xbf16>, %k: tensor<1x6x11x8xbf16>, %v: tensor<1x6x11x5xbf16>,
                                    %o: tensor<1x6x3x5xbf16>, %do: tensor<1x6x3x5xbf16>)
    -> (tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x5xbf16>) {
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %do causal
      : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x5xbf16>, tensor<1x6x3x5xbf16>
  %dq2, %dk2, %dv2 = kiln.attention_backward %q, %k, %v, %o, %do
      : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x5xbf16>, tensor<1x6x3x5xbf16>
  return %dq, %dk, %dv : tensor<1x6x3x8xbf16>, tensor<1x6x11x8xbf16>, tensor<1x6x11x5xbf16>
}

// B = 2, T = 5, NH = 3, D = 16; the results take the types of the forward
// operands.
// CHECK-LABEL: func.func @rnn_backward_lstm
// CHECK: %[[DX:.*]], %[[DR:.*]], %[[DB:.*]], %[[DS:.*]] = kiln.rnn_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} function = lstm : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x2x5x3x16xf32>
// CHECK: return %[[DX]], %[[DR]], %[[DB]], %[[DS]] : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>
func.func @rnn_backward_lstm(%wx: tensor<2x5x4x3x16xf32>, %r: tensor<4x3x16x16xf32>, %b: tensor<4x3x16xf32>,
                             %s0: tensor<2x2x3x16xf32>, %all: tensor<2x2x5x3x16xf32>,
                             %dall: tensor<2x2x5x3x16xf32>, %dlast: tensor<2x2x3x16xf32>)
    -> (tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>) {
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %dall, %dlast function = lstm
      : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x2x5x3x16xf32>
  return %dwx, %dr, %db, %ds0 : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>
}

// CHECK-LABEL: func.func @rnn_backward_gru
// CHECK: %[[DX:.*]], %[[DR:.*]], %[[DB:.*]], %[[DS:.*]] = kiln.rnn_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} function = gru : tensor<3x7x3x2x8xbf16>, tensor<3x2x8x8xbf16>, tensor<4x2x8xbf16>, tensor<1x3x2x8xbf16>, tensor<1x3x7x2x8xbf16>
// CHECK: return %[[DX]], %[[DR]], %[[DB]], %[[DS]] : tensor<3x7x3x2x8xbf16>, tensor<3x2x8x8xbf16>, tensor<4x2x8xbf16>, tensor<1x3x2x8xbf16>
func.func @rnn_backward_gru(%wx: tensor<3x7x3x2x8xbf16>, %r: tensor<3x2x8x8xbf16>, %b: tensor<4x2x8xbf16>,
                            %s0: tensor<1x3x2x8xbf16>, %all: tensor<1x3x7x2x8xbf16>,
                            %dall: tensor<1x3x7x2x8xbf16>, %dlast: tensor<1x3x2x8xbf16>)
    -> (tensor<3x7x3x2x8xbf16>, tensor<3x2x8x8xbf16>, tensor<4x2x8xbf16>, tensor<1x3x2x8xbf16>) {
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %dall, %dlast function = gru
      : tensor<3x7x3x2x8xbf16>, tensor<3x2x8x8xbf16>, tensor<4x2x8xbf16>, tensor<1x3x2x8xbf16>, tensor<1x3x7x2x8xbf16>
  return %dwx, %dr, %db, %ds0 : tensor<3x7x3x2x8xbf16>, tensor<3x2x8x8xbf16>, tensor<4x2x8xbf16>, tensor<1x3x2x8xbf16>
}

// CHECK-LABEL: func.func @rnn_backward_slstm_elman
// CHECK: kiln.rnn_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} function = slstm : tensor<1x4x4x1x6xf16>, tensor<4x1x6x6xf16>, tensor<4x1x6xf16>, tensor<4x1x1x6xf16>, tensor<4x1x4x1x6xf16>
// CHECK: kiln.rnn_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} function = elman : tensor<5x1x1x4x2xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2xf32>, tensor<1x5x4x2xf32>, tensor<1x5x1x4x2xf32>
func.func @rnn_backward_slstm_elman(%wx: tensor<1x4x4x1x6xf16>, %r: tensor<4x1x6x6xf16>, %b: tensor<4x1x6xf16>,
                                    %s0: tensor<4x1x1x6xf16>, %all: tensor<4x1x4x1x6xf16>,
                                    %ex: tensor<5x1x1x4x2xf32>, %er: tensor<1x4x2x2xf32>, %eb: tensor<1x4x2xf32>,
                                    %es0: tensor<1x5x4x2xf32>, %eall: tensor<1x5x1x4x2xf32>)
    -> (tensor<4x1x6x6xf16>, tensor<1x4x2x2xf32>) {
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = slstm
      : tensor<1x4x4x1x6xf16>, tensor<4x1x6x6xf16>, tensor<4x1x6xf16>, tensor<4x1x1x6xf16>, tensor<4x1x4x1x6xf16>
  %edwx, %edr, %edb, %eds0 = kiln.rnn_backward %ex, %er, %eb, %es0, %eall, %eall, %es0 function = elman
      : tensor<5x1x1x4x2xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2xf32>, tensor<1x5x4x2xf32>, tensor<1x5x1x4x2xf32>
  return %dr, %edr : tensor<4x1x6x6xf16>, tensor<1x4x2x2xf32>
}
