//===- KilnNNBackwardOps.td - dedicated backward ops -----------------*- tablegen -*-===//
//
// Backward ops of the neural-network family, produced by autodiff where a
// composition of primitives would be wasteful: the norms, convolution,
// pooling, embedding and the two logit losses. Each takes the gradient of
// the forward result first and recomputes what it needs from the forward
// operands (statistics, window maxima, softmax), so the forward op keeps no
// hidden state.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_NNBACKWARD_OPS_TD
#define KILN_NNBACKWARD_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Kiln_LayerNormBackwardOp : Kiln_Op<"layer_norm_backward",
    [InferTypeOpAdaptor, AllTypesMatch<["grad", "input"]>, Kiln_Reduces]> {
  let summary = "gradients of kiln.layer_norm";
  let description = [{
    Gradients of `kiln.layer_norm` (same `num_normalized_dims`, default 1,
    and `eps`, default 1e-5, positive) for `grad`, the gradient of its
    result, which has the type of `input`. With the `M` elements of each
    normalised slice, its mean `m`, biased variance `v`,
    `r = 1 / sqrt(v + eps)`, `xh = (x - m) * r` and `gy = grad * weight`
    (`weight` optional, absent: 1; shape of the normalised dims):

    - `input_grad = r * (gy - mean(gy) - xh * mean(gy * xh))`, means over
      the slice; the type of `input`;
    - `weight_grad = sum(grad * xh)` and `bias_grad = sum(grad)` over the
      leading (not normalised) dims, shaped like the normalised dims with
      the input's element type. They are the gradients of the weight and
      bias of the forward op; without a `weight` they are still computed
      (for an implicit weight of ones) and are usually unused.

    ```mlir
    %dx, %dw, %db = kiln.layer_norm_backward %g, %x, %w dims = 2
        : tensor<2x7x4x6xf32>, tensor<4x6xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_FloatTensor:$input,
                       Optional<Kiln_FloatTensor>:$weight,
                       DefaultValuedAttr<I64Attr, "1">:$num_normalized_dims,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Kiln_FloatTensor:$input_grad,
                      Kiln_FloatTensor:$weight_grad,
                      Kiln_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input (`,` $weight^)? (`dims` `=` $num_normalized_dims^)?
    (`eps` `=` $eps^)? attr-dict `:` type($input) (`,` type($weight)^)?
  }];
  let hasVerifier = 1;
}

def Kiln_RmsNormBackwardOp : Kiln_Op<"rms_norm_backward",
    [InferTypeOpAdaptor, AllTypesMatch<["grad", "input"]>, Kiln_Reduces]> {
  let summary = "gradients of kiln.rms_norm";
  let description = [{
    Gradients of `kiln.rms_norm` (same `eps`, default 1e-5, positive) for
    `grad`, the gradient of its result, which has the type of `input`. Over
    the last dim of size `D`, with `r = 1 / sqrt(mean(x^2) + eps)`,
    `xh = x * r` and `gy = grad * weight` (`weight` `[D]` optional,
    absent: 1):

    - `input_grad = r * (gy - xh * mean(gy * xh))`; the type of `input`;
    - `weight_grad = sum(grad * xh)` over all dims but the last: `[D]` of
      the input's element type (computed for an implicit weight of ones when
      `weight` is absent).

    ```mlir
    %dx, %dw = kiln.rms_norm_backward %g, %x, %w eps = 1.0e-06
        : tensor<2x9x64xbf16>, tensor<64xbf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_FloatTensor:$input,
                       Optional<Kiln_FloatTensor>:$weight,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Kiln_FloatTensor:$input_grad,
                      Kiln_FloatTensor:$weight_grad);
  let assemblyFormat = [{
    $grad `,` $input (`,` $weight^)? (`eps` `=` $eps^)? attr-dict
    `:` type($input) (`,` type($weight)^)?
  }];
  let hasVerifier = 1;
}

def Kiln_GroupNormBackwardOp : Kiln_Op<"group_norm_backward",
    [InferTypeOpAdaptor, AllTypesMatch<["grad", "input"]>, Kiln_Reduces]> {
  let summary = "gradients of kiln.group_norm";
  let description = [{
    Gradients of `kiln.group_norm` (same `groups`, `dim`, default 1, and
    `eps`, default 1e-5) for `grad`, the gradient of its result, which has
    the type of `input` `[N, C, ...]` (or `[N, ..., C]` with `dim` its
    last). Over the `M` elements of each (sample, group), with its
    mean `m`, biased variance `v`, `r = 1 / sqrt(v + eps)`,
    `xh = (x - m) * r` and `gy = grad * weight[c]` (`weight` `[C]` optional,
    absent: 1):

    - `input_grad = r * (gy - mean(gy) - xh * mean(gy * xh))`, means over
      the group; the type of `input`;
    - `weight_grad[c] = sum(grad * xh)` and `bias_grad[c] = sum(grad)` over
      the samples and spatial positions of channel `c`: `[C]` of the input's
      element type (computed for a weight of ones when `weight` is absent).

    ```mlir
    %dx, %dw, %db = kiln.group_norm_backward %g, %x, %w groups = 8
        : tensor<2x32x16x16xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_FloatTensor:$input,
                       Optional<Kiln_FloatTensor>:$weight,
                       I64Attr:$groups,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       DefaultValuedAttr<I64Attr, "1">:$dim);
  let results = (outs Kiln_FloatTensor:$input_grad,
                      Kiln_FloatTensor:$weight_grad,
                      Kiln_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input (`,` $weight^)? `groups` `=` $groups (`dim` `=` $dim^)?
    (`eps` `=` $eps^)?
    attr-dict `:` type($input) (`,` type($weight)^)?
  }];
  let hasVerifier = 1;
}

def Kiln_BatchNormBackwardOp : Kiln_Op<"batch_norm_backward",
    [InferTypeOpAdaptor, AllTypesMatch<["grad", "input"]>,
     Kiln_DedicatedKernel<"batch_norm">]> {
  let summary = "gradients of kiln.batch_norm through its normalised result";
  let description = [{
    Gradients of the first result `y` of `kiln.batch_norm` (same `dim`,
    default 1, and `eps`, default 1e-5, positive) for `grad`, the gradient
    of `y`, which has the type of `input`. Per channel `c`, over the `M`
    elements of the other dims, with the batch mean `m`, biased variance
    `v`, `r = 1 / sqrt(v + eps)` and `xh = (x - m) * r`:

    - `input_grad = gamma * r * (grad - mean(grad) - xh * mean(grad * xh))`;
    - `gamma_grad = sum(grad * xh)`, `beta_grad = sum(grad)`, both `[C]`.

    Gradients that reach the mean and variance results are not included
    (autodiff adds them with elementwise ops).

    ```mlir
    %dx, %dgamma, %dbeta = kiln.batch_norm_backward %g, %x, %gamma dim = 3
        : tensor<8x5x5x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_FloatTensor:$input,
                       Kiln_FloatTensor:$gamma,
                       DefaultValuedAttr<I64Attr, "1">:$dim,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Kiln_FloatTensor:$input_grad, Kiln_FloatTensor:$gamma_grad,
                      Kiln_FloatTensor:$beta_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $gamma (`dim` `=` $dim^)? (`eps` `=` $eps^)?
    attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// The attributes of kiln.conv2d, with its defaults.
class Kiln_ConvBackwardOp<string mnemonic, string other, string summaryText,
                          string doc>
    : Kiln_Op<mnemonic, [Kiln_DedicatedKernel<"conv">]> {
  let summary = summaryText;
  let description = doc;
  let arguments = !con((ins Kiln_FloatTensor:$grad),
                       !dag(ins, [Kiln_FloatTensor], [other]),
                       (ins Kiln_ConvLayoutAttr:$layout,
                        DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
                        DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                        DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
                        DefaultValuedAttr<I64Attr, "1">:$groups));
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $" # other # " `layout` `=` `` $layout "
    # "(`stride` `=` $stride^)? (`padding` `=` $padding^)? "
    # "(`dilation` `=` $dilation^)? (`groups` `=` $groups^)? attr-dict "
    # "`:` type($grad) `,` type($" # other # ") `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_Conv2dBackwardInputOp : Kiln_ConvBackwardOp<"conv2d_backward_input",
    "filter", "gradient of kiln.conv2d with respect to its input", [{
    The gradient of `kiln.conv2d` with respect to `input` (a transposed
    convolution): for `grad` of the forward result's shape and the forward
    `filter`, with the forward op's `layout`, `stride`, `padding`,
    `dilation` and `groups` (same defaults),

    `result[n, c, ih, iw] = sum grad[n, o, oh, ow] * filter[o, c % (C/groups), kh, kw]`

    over every `(o, oh, ow, kh, kw)` of c's group with
    `ih = oh*sh - top + kh*dh` and `iw = ow*sw - left + kw*dw` (NCHW index
    names; NHWC likewise). The result type, the forward input's, is written
    out because strides make it ambiguous; a forward conv2d of it with
    `filter` must give `grad`'s shape, and all types share one element
    type.

    It is also a layer of its own, a transposed convolution of `grad` (ONNX
    ConvTranspose, PyTorch's `nn.ConvTranspose2d` with its weight
    `[C_in, C_out/groups, KH, KW]` as `filter`): it is differentiable, with
    a `kiln.conv2d` of the result's gradient for `grad` and a
    `kiln.conv2d_backward_filter` for `filter`.

    ```mlir
    %dx = kiln.conv2d_backward_input %g, %w layout = nchw stride = [2, 2]
        padding = [1, 1, 1, 1] groups = 2
        : tensor<2x8x9x9xf32>, tensor<8x3x3x3xf32> -> tensor<2x6x17x17xf32>
    ```
  }]>;

def Kiln_Conv2dBackwardFilterOp : Kiln_ConvBackwardOp<"conv2d_backward_filter",
    "input", "gradient of kiln.conv2d with respect to its filter", [{
    The gradient of `kiln.conv2d` with respect to `filter`: for `grad` of
    the forward result's shape and the forward `input`, with the forward
    op's `layout`, `stride`, `padding`, `dilation` and `groups` (same
    defaults),

    `result[o, c, kh, kw] = sum grad[n, o, oh, ow] * input[n, g*C/groups + c, ih, iw]`

    over `(n, oh, ow)`, with `g` the group of output channel `o`,
    `ih = oh*sh - top + kh*dh`, `iw = ow*sw - left + kw*dw` and padding
    read as zeros (NCHW index names; NHWC likewise). The result type, the
    forward filter's, is written out because the kernel size is not
    determined by the other shapes; a forward conv2d of `input` with it must
    give `grad`'s shape, and all types share one element type. The bias
    gradient is a plain sum of `grad` over N, H and W.

    ```mlir
    %dw = kiln.conv2d_backward_filter %g, %x layout = nhwc dilation = [2, 2]
        : tensor<3x6x8x7xf32>, tensor<3x10x12x5xf32> -> tensor<7x3x3x5xf32>
    ```
  }]>;

def Kiln_MaxPool2dBackwardOp : Kiln_Op<"max_pool2d_backward",
    [AllTypesMatch<["input", "result"]>, Kiln_DedicatedKernel<"pool">]> {
  let summary = "gradient of kiln.max_pool2d";
  let description = [{
    Routes `grad` (the gradient of a `kiln.max_pool2d` result, same
    `layout`, `kernel`, `stride` and `padding`) back to `input`: each output
    element's gradient goes to the position of its window's maximum, and
    positions that win several windows add up. Ties go to the first maximum
    in window order (row by row, as PyTorch does); padding never wins. The
    result has the type of `input`; `grad` must have the forward result's
    type.

    ```mlir
    %dx = kiln.max_pool2d_backward %g, %x layout = nchw kernel = [3, 3]
        stride = [2, 2] padding = [1, 1, 1, 1]
        : tensor<2x16x8x8xf32>, tensor<2x16x15x15xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                       Kiln_ConvLayoutAttr:$layout);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input `layout` `=` `` $layout `kernel` `=` $kernel
    (`stride` `=` $stride^)? (`padding` `=` $padding^)? attr-dict
    `:` type($grad) `,` type($input)
  }];
  let hasVerifier = 1;
}

def Kiln_AvgPool2dBackwardOp : Kiln_Op<"avg_pool2d_backward",
    [Kiln_DedicatedKernel<"pool">]> {
  let summary = "gradient of kiln.avg_pool2d";
  let description = [{
    Spreads `grad` (the gradient of a `kiln.avg_pool2d` result, same
    `layout`, `kernel`, `stride`, `padding` and `count_include_pad`) evenly
    over each window: every input position inside a window receives the
    window's gradient divided by the forward divisor (the number of window
    elements inside the input, or `kh * kw` with `count_include_pad`). The
    result type, the forward input's, is written out because strides make
    it ambiguous; pooling it must give `grad`'s shape, with one element
    type.

    ```mlir
    %dx = kiln.avg_pool2d_backward %g layout = nhwc kernel = [2, 2]
        stride = [2, 2] : tensor<2x4x4x3xf32> -> tensor<2x8x8x3xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, DenseI64ArrayAttr:$kernel,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                       Kiln_ConvLayoutAttr:$layout, UnitAttr:$count_include_pad);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `layout` `=` `` $layout `kernel` `=` $kernel
    (`stride` `=` $stride^)? (`padding` `=` $padding^)?
    (`count_include_pad` $count_include_pad^)? attr-dict
    `:` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Resizing
//===----------------------------------------------------------------------===//

def Kiln_ResizeBackwardOp : Kiln_Op<"resize_backward",
    [Kiln_DedicatedKernel<"resize">]> {
  let summary = "gradient of kiln.resize";
  let description = [{
    The gradient of `kiln.resize` (same `mode`, `coordinates`, `rounding`
    and `scales`) with respect to its input, for `grad` of the forward
    result's type: every input element receives the gradients of the output
    elements that read it, each times the weight it was read with (1 for
    nearest, the blend weights for linear, multiplied over the resized
    dims). Kernels gather, in increasing output order, without atomics. The
    result type, the forward input's, is written out.

    ```mlir
    %dx = kiln.resize_backward %g mode = linear coordinates = align_corners
        scales = [1.0, 1.0, 2.0, 2.0] : tensor<2x3x8x10xf32> -> tensor<2x3x4x5xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_ResizeModeAttr:$mode,
      Kiln_ResizeCoordinatesAttr:$coordinates,
      DefaultValuedAttr<Kiln_ResizeRoundingAttr,
                        "::mlir::kiln::ResizeRounding::round_prefer_floor">:$rounding,
      DenseF64ArrayAttr:$scales);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `mode` `=` `` $mode `coordinates` `=` `` $coordinates
    (`rounding` `=` `` $rounding^)? `scales` `=` custom<ExactF64Array>($scales) attr-dict
    `:` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The dims whose size or scale changes, in increasing order.
    ::llvm::SmallVector<int64_t> getResizedDims();
  }];
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

def Kiln_EmbeddingBackwardOp : Kiln_Op<"embedding_backward",
    [Kiln_DedicatedKernel<"embedding">]> {
  let summary = "gradient of kiln.embedding: scatter-add of rows";
  let description = [{
    `result[v, :] = sum over i... with indices[i...] == v of grad[i..., :]`:
    the gradient of the `[V, D]` table of `kiln.embedding` from the gradient
    `grad` (shape `S + [D]`) of its result and its i32 `indices` (shape
    `S`). Rows no index names are zero; indices outside `[0, V)` contribute
    nothing. The result type `[V, D]` is written out (V is not determined by
    the operands) and has `grad`'s element type.

    ```mlir
    %dt = kiln.embedding_backward %g, %tokens
        : tensor<4x32x64xf32>, tensor<4x32xi32> -> tensor<1000x64xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_IndexTensor:$indices);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` type($grad) `,` type($indices)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// `grad` (the gradient of a scalar loss) is a rank-0 tensor of the element
/// type of `operand`, so the assembly need not spell out its type.
class Kiln_ScalarGradOf<string operand>
    : TypesMatchWith<"'grad' is a rank-0 tensor of the element type of '"
                     # operand # "'", operand, "grad",
                     "::mlir::RankedTensorType::get({}, "
                     "::llvm::cast<::mlir::ShapedType>($_self).getElementType())">;

def Kiln_CrossEntropyBackwardOp : Kiln_Op<"cross_entropy_backward",
    [AllTypesMatch<["logits", "result"]>, Kiln_ScalarGradOf<"logits">,
     Kiln_Reduces]> {
  let summary = "gradient of kiln.cross_entropy with respect to the logits";
  let description = [{
    For `grad`, the rank-0 gradient of a `kiln.cross_entropy` loss (same
    `reduction`, default `mean`, `label_smoothing` `eps`, default 0, in
    `[0, 1]`, and `ignore_index`), its `logits` `[N, C]` and i32 `labels`
    `[N]`:

    `result[n, c] = grad * s * (softmax(logits)[n, c] - (1 - eps) * [c == labels[n]] - eps / C)`

    with `s = 1/K` for `mean` and 1 for `sum`, where K is the number of rows
    whose label is not `ignore_index` (N without it); the softmax subtracts
    the row maximum first. Rows whose label is `ignore_index` are 0; any
    other label outside `[0, C)` makes its row unspecified. The result has
    the type of `logits`; `grad` is a rank-0 tensor of their element type.

    ```mlir
    %dl = kiln.cross_entropy_backward %g, %logits, %labels
        label_smoothing = 1.000000e-01 : tensor<32x10xf32>, tensor<32xi32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_FloatTensor:$logits,
      Kiln_IndexTensor:$labels,
      DefaultValuedAttr<Kiln_ReductionAttr, "::mlir::kiln::Reduction::mean">:$reduction,
      DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
      OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $labels (`reduction` `=` `` $reduction^)?
    (`label_smoothing` `=` $label_smoothing^)?
    (`ignore_index` `=` $ignore_index^)? attr-dict
    `:` type($logits) `,` type($labels)
  }];
  let hasVerifier = 1;
}

def Kiln_BinaryCrossEntropyBackwardOp
    : Kiln_Op<"binary_cross_entropy_backward",
              [AllTypesMatch<["logits", "target", "result"]>,
               Kiln_ScalarGradOf<"logits">, Kiln_Reduces]> {
  let summary = "gradient of kiln.binary_cross_entropy with respect to the logits";
  let description = [{
    For `grad`, the rank-0 gradient of a `kiln.binary_cross_entropy` loss
    (same `reduction`, default `mean`), its `logits` and `target`:

    `result = grad * s * (sigmoid(logits) - target)`

    elementwise, with `s` one over the number of elements for `mean` and 1
    for `sum`. The sigmoid is evaluated without overflow for large `|x|`.
    The result has the type of `logits`; `grad` is a rank-0 tensor of their
    element type. (The target's gradient, `-grad * s * logits`, needs no op
    of its own.)

    ```mlir
    %dx = kiln.binary_cross_entropy_backward %g, %x, %t reduction = sum
        : tensor<32x1xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$grad, Kiln_FloatTensor:$logits,
      Kiln_FloatTensor:$target,
      DefaultValuedAttr<Kiln_ReductionAttr, "::mlir::kiln::Reduction::mean">:$reduction);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $target (`reduction` `=` `` $reduction^)? attr-dict
    `:` type($logits)
  }];
}

#endif // KILN_NNBACKWARD_OPS_TD
