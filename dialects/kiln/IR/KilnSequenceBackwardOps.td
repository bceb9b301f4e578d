//===- KilnSequenceBackwardOps.td - dedicated backward ops -----------------*- tablegen -*-===//
//
// The fused backward ops of attention and of the recurrent op, which the
// gradient rules of kiln.attention and kiln.rnn emit.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_SEQUENCEBACKWARD_OPS_TD
#define KILN_SEQUENCEBACKWARD_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

//===----------------------------------------------------------------------===//
// Attention backward
//===----------------------------------------------------------------------===//

def Kiln_AttentionBackwardOp : Kiln_Op<"attention_backward",
    [InferTypeOpAdaptor, AllTypesMatch<["out", "d_out"]>,
     Kiln_DedicatedKernel<"attention">]> {
  let summary = "gradients of scaled dot-product attention";
  let description = [{
    The backward pass of `kiln.attention` with the same `causal` and `scale`
    (the scale defaults to `1/sqrt(D)` when absent and must be positive when
    given; causal needs `Tq <= Tk`). Operands: `query` `[B, H, Tq, D]`,
    `key` `[B, H, Tk, D]`, `value` `[B, H, Tk, Dv]`, the forward result
    `out` `[B, H, Tq, Dv]` and its gradient `d_out` (the type of `out`); all
    share one floating-point element type.

    Per batch and head, the attention weights are recomputed as in the
    forward op, `P = softmax(q @ k^T * scale + mask)` (with `causal`, query
    `i` sees key `j` only when `j <= i + (Tk - Tq)`; masked weights are 0),
    and with `delta_i = sum_e d_out[i, e] * out[i, e]`:

    - `d_value = P^T @ d_out`
    - `dP = d_out @ value^T`, `dS = P * (dP - delta)` (row `i` minus
      `delta_i`)
    - `d_query = scale * dS @ key`, `d_key = scale * dS^T @ query`

    The results have the types of `query`, `key` and `value`.

    The optional `row_lse` (f32 `[B, H, Tq]`) must be the forward op's row
    log-sum-exp (`kiln.attention ... with_row_lse`): the kernels then form
    `P = exp(q @ k^T * scale - row_lse)` without a sweep of their own to
    find it. The results are those of the recomputed softmax (the reference
    computes them so).

    ```mlir
    %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %do causal
        : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>,
          tensor<2x4x16x32xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key,
                       Kiln_FloatTensor:$value, Kiln_FloatTensor:$out,
                       Kiln_FloatTensor:$d_out, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale,
                       Optional<StaticShapeTensorOf<[F32]>>:$row_lse);
  let results = (outs Kiln_FloatTensor:$d_query, Kiln_FloatTensor:$d_key,
                      Kiln_FloatTensor:$d_value);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $d_out (`causal` $causal^)?
    (`scale` `=` $scale^)? (`row_lse` `(` $row_lse^ `:` type($row_lse) `)`)?
    attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($out)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Recurrent backward (backpropagation through time)
//===----------------------------------------------------------------------===//

def Kiln_RnnBackwardOp : Kiln_Op<"rnn_backward",
    [InferTypeOpAdaptor, AllTypesMatch<["states", "d_states"]>,
     AllTypesMatch<["states0", "d_last_states"]>,
     Kiln_DedicatedKernel<"rnn">]> {
  let summary = "backpropagation through time of kiln.rnn";
  let description = [{
    The backward pass of `kiln.rnn` with the same `function`. Operands (all
    of one floating-point element type; shapes as for `kiln.rnn`, see its
    table of `(Gw, Gr, Gb, S)`):

    - `input` (Wx) `[B, T, Gw, NH, D]`, `recurrent` (R) `[Gr, NH, D, D]`,
      `bias` (b) `[Gb, NH, D]`, `states0` `[S, B, NH, D]`: the forward
      operands;
    - `states` `[S, B, T, NH, D]`: the forward op's first result (every
      state after every step), from which the gate pre-activations of each
      step are recomputed (`states0` gives the states before step 0);
    - `d_states` `[S, B, T, NH, D]` and `d_last_states` `[S, B, NH, D]`:
      the gradients of the loss with respect to both forward results (pass
      zeros for a result the loss does not use).

    Walking the steps from `T - 1` down to 0, the gradient of the states
    after step `t` is `d_states[:, :, t]` (plus `d_last_states` at
    `t = T - 1`) plus what step `t + 1` passes back; each step applies the
    chain rule to its cell's equations (see `kiln.rnn`). In slstm,
    `m' = max(ĩ, log σ(f̃) + m)` passes its gradient to `ĩ` when
    `ĩ >= log σ(f̃) + m` and to the other side otherwise.

    Results, with the types of `input`, `recurrent`, `bias` and `states0`:
    `d_input[b, t, g]` is the gradient of the loss with respect to
    `Wx[b, t, g]`; with `a_g[b, t, n, d]` the gradient with respect to the
    product `(R_g h_{t-1})[n, d]` at step `t`,
    `d_recurrent[g, n, d, p] = sum_{b,t} a_g[b, t, n, d] * h_{t-1}[b, n, p]`;
    `d_bias[g]` sums the gradient with respect to the term that `b_g` is
    added to over batch and time; `d_states0` is the gradient of the initial
    states.

    ```mlir
    %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %dall, %dlast
        function = lstm : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>,
        tensor<4x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x2x5x3x16xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$recurrent,
                       Kiln_FloatTensor:$bias, Kiln_FloatTensor:$states0,
                       Kiln_FloatTensor:$states, Kiln_FloatTensor:$d_states,
                       Kiln_FloatTensor:$d_last_states,
                       Kiln_RnnFunctionAttr:$function);
  let results = (outs Kiln_FloatTensor:$d_input, Kiln_FloatTensor:$d_recurrent,
                      Kiln_FloatTensor:$d_bias, Kiln_FloatTensor:$d_states0);
  let assemblyFormat = [{
    $input `,` $recurrent `,` $bias `,` $states0 `,` $states `,` $d_states `,`
    $d_last_states `function` `=` `` $function attr-dict
    `:` type($input) `,` type($recurrent) `,` type($bias) `,` type($states0)
    `,` type($states)
  }];
  let hasVerifier = 1;
}

#endif // KILN_SEQUENCEBACKWARD_OPS_TD
