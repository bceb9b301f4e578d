//===- KilnNNOps.td - neural-network ops, losses, rnn, fusion ----*- tablegen -*-===//
//
// Softmax, normalisation, convolution, pooling, embedding, rotary embedding,
// attention, dropout, losses, the recurrent op and the fusion region.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_NN_OPS_TD
#define KILN_NN_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"
include "mlir/IR/OpBase.td"

/// A rank-0 i32 tensor (a run-time counter such as a step number). Buildable,
/// so assembly formats need not spell out its type.
def Kiln_I32Scalar : Type<And<[StaticShapeTensorOf<[I32]>.predicate,
                               HasAnyRankOfPred<[0]>]>,
                          "0-d tensor of i32 (tensor<i32>)">,
                     BuildableType<"::mlir::RankedTensorType::get({}, "
                                   "$_builder.getI32Type())">;

// Enum attributes print a space of their own before the keyword, so the
// formats below put an empty literal (``) after `=` to keep one space.

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

class Kiln_SoftmaxLikeOp<string mnemonic, string formula>
    : Kiln_Op<mnemonic, [SameOperandsAndResultType, Kiln_Reduces]> {
  let summary = formula # " along one dimension";
  let description = "Computes `" # formula # "` along dimension `dim` (in "
    # "[0, rank)), i.e. independently for every slice along `dim`. The "
    # "maximum of each slice is subtracted first, so large inputs do not "
    # "overflow. Floating-point only; the result has the input's type.\n\n"
    # "```mlir\n%y = kiln." # mnemonic # " %x dim = 1 : tensor<4x10xf32>\n```";
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `dim` `=` $dim attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Kiln_SoftmaxOp
    : Kiln_SoftmaxLikeOp<"softmax", "exp(x_i - max(x)) / sum_j exp(x_j - max(x))">;
def Kiln_LogSoftmaxOp
    : Kiln_SoftmaxLikeOp<"log_softmax", "x_i - max(x) - log(sum_j exp(x_j - max(x)))">;

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Kiln_LayerNormOp : Kiln_Op<"layer_norm",
    [AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>,
     Kiln_Reduces]> {
  let summary = "layer normalisation over the trailing dimensions";
  let description = [{
    Normalises `input` over its trailing `num_normalized_dims` dimensions
    (at least 1, at most the rank; default 1): with mean `m` and biased
    variance `v` of each normalised slice,

    `y = (x - m) / sqrt(v + eps) * weight + bias`

    `weight` and `bias` are optional (absent: 1 and 0) and have exactly the
    shape of the normalised dims, `input.shape[rank - num_normalized_dims:]`,
    and the input's element type. A `bias` is only accepted together with a
    `weight` (pass ones for a pure shift), which keeps the positional syntax
    unambiguous. `eps` (default 1e-5) must be positive. The result has the
    input's type.

    ```mlir
    %y = kiln.layer_norm %x, %w, %b dims = 2 eps = 1.0e-06
        : tensor<2x7x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
    %z = kiln.layer_norm %x : tensor<2x7x4x6xf32>   // dims = 1, eps = 1e-5
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
                       Optional<Kiln_FloatTensor>:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       DefaultValuedAttr<I64Attr, "1">:$num_normalized_dims,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? (`,` $bias^)?
    (`dims` `=` $num_normalized_dims^)? (`eps` `=` $eps^)?
    attr-dict `:` type($input) (`,` type($weight)^)? (`,` type($bias)^)?
  }];
  let hasVerifier = 1;
}

def Kiln_RmsNormOp : Kiln_Op<"rms_norm",
    [AllTypesMatch<["input", "result"]>, Kiln_Reduces]> {
  let summary = "RMS normalisation over the last dimension";
  let description = [{
    Normalises `input` (rank >= 1) over its last dimension of size `D` by the
    root mean square, without centring:

    `y = x / sqrt(mean(x^2) + eps) * weight`

    The optional `weight` (absent: 1) has shape `[D]` and the input's element
    type. `eps` (default 1e-5) must be positive. The result has the input's
    type.

    ```mlir
    %y = kiln.rms_norm %x, %w eps = 1.0e-06 : tensor<2x9x64xbf16>, tensor<64xbf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
                       Optional<Kiln_FloatTensor>:$weight,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? (`eps` `=` $eps^)?
    attr-dict `:` type($input) (`,` type($weight)^)?
  }];
  let hasVerifier = 1;
}

def Kiln_GroupNormOp : Kiln_Op<"group_norm",
    [AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>,
     Kiln_Reduces]> {
  let summary = "group normalisation over groups of channels";
  let description = [{
    Normalises `input` `[N, C, ...]` (rank >= 2, channels at dim 1, any
    spatial dims after them; C divisible by `groups`) over each of its
    `groups` groups of `C / groups` consecutive channels together with every
    spatial position, per sample: with mean `m` and biased variance `v` of
    each (sample, group),

    `y = (x - m) / sqrt(v + eps) * weight[c] + bias[c]`

    as PyTorch's `nn.GroupNorm` and ONNX GroupNormalization (21) define it.
    `dim` (default 1) is the channel dimension: 1, or the last dim of a
    channels-last input `[N, ..., C]` of rank >= 3 (NHWC activations use
    `dim = 3`); the spatial dims are all the others but the first.
    `weight` and `bias` are optional (absent: 1 and 0; a `bias` only with a
    `weight`), `[C]` of the input's element type. `groups` is positive;
    `eps` (default 1e-5) positive. The result has the input's type. One
    `groups = C` is instance normalisation, `groups = 1` layer
    normalisation over all but the batch dim.

    ```mlir
    %y = kiln.group_norm %x, %w, %b groups = 8 eps = 1.0e-06
        : tensor<2x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>
    %z = kiln.group_norm %xl, %w, %b groups = 8 dim = 3
        : tensor<2x16x16x32xf32>, tensor<32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
                       Optional<Kiln_FloatTensor>:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       I64Attr:$groups,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       DefaultValuedAttr<I64Attr, "1">:$dim);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? (`,` $bias^)? `groups` `=` $groups
    (`dim` `=` $dim^)? (`eps` `=` $eps^)?
    attr-dict `:` type($input) (`,` type($weight)^)? (`,` type($bias)^)?
  }];
  let hasVerifier = 1;
}

def Kiln_BatchNormOp : Kiln_Op<"batch_norm",
    [InferTypeOpAdaptor, Kiln_DedicatedKernel<"batch_norm">]> {
  let summary = "batch normalisation, with optional running statistics";
  let description = [{
    Training-mode batch normalisation. `dim` (default 1) is the channel
    dimension of `input` (rank >= 2), of size `C`: NCHW activations use
    `dim = 1`, NHWC activations `dim = 3`, `[N, C]` and `[N, C, L]` inputs
    `dim = 1`. For every channel `c`, the mean `m[c]` and the biased variance
    `v[c]` (divided by the number `n` of reduced elements, not `n - 1`)
    are taken over all other dimensions, and

    `y = (x - m[c]) / sqrt(v[c] + eps) * gamma[c] + beta[c]`

    `gamma` and `beta` have shape `[C]` and the input's element type; `eps`
    (default 1e-5) must be positive.

    Results: `y` (the input's type), the batch mean `[C]` and the batch
    variance `[C]` (biased), both of the input's element type.

    Running statistics (PyTorch's `running_mean` / `running_var`): with
    `running %rm, %rv` (two `[C]` float tensors of one type, which may differ
    from the input's, e.g. f32 statistics of bf16 activations) the op has two
    more results of that type, the updated statistics

    `rm' = (1 - momentum) * rm + momentum * m`,
    `rv' = (1 - momentum) * rv + momentum * v * n / (n - 1)`

    (the unbiased variance, as PyTorch keeps it; `momentum` in [0, 1],
    default 0.1; so `n` must exceed 1). With `eval` (what `model.eval()`
    does) the op normalises with the running statistics instead,
    `y = (x - rm[c]) / sqrt(rv[c] + eps) * gamma[c] + beta[c]`; its mean and
    variance results are then `rm` and `rv`, and the updated statistics
    equal them. The training entries write the updated statistics of
    `kiln.state` arguments back to their buffers; the forward entry
    evaluates every op of this form with `eval`.

    ```mlir
    %y, %mean, %var = kiln.batch_norm %x, %gamma, %beta dim = 3
        : tensor<8x5x5x16xf32>, tensor<16xf32>, tensor<16xf32>
    %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %gamma, %beta
        running %rm, %rv momentum = 1.0e-01
        : tensor<8x16x5x5xbf16>, tensor<16xbf16>, tensor<16xbf16>,
          tensor<16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$gamma,
                       Kiln_FloatTensor:$beta,
                       Variadic<Kiln_FloatTensor>:$running,
                       DefaultValuedAttr<I64Attr, "1">:$dim,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       OptionalAttr<F64Attr>:$momentum,
                       UnitAttr:$eval);
  let results = (outs Kiln_FloatTensor:$result, Kiln_FloatTensor:$mean,
                      Kiln_FloatTensor:$variance,
                      Variadic<Kiln_FloatTensor>:$updated_running);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta (`running` $running^)?
    (`momentum` `=` $momentum^)? (`eval` $eval^)?
    (`dim` `=` $dim^)? (`eps` `=` $eps^)?
    attr-dict `:` type($input) `,` type($gamma) `,` type($beta)
    (`,` type($running)^)?
  }];
  let extraClassDeclaration = [{
    /// PyTorch's default momentum of the running statistics.
    static constexpr double kDefaultMomentum = 0.1;
    bool hasRunningStats() { return getRunning().size() == 2; }
    /// The running statistics and their updates (null without them).
    ::mlir::Value getRunningMean() {
      return hasRunningStats() ? getRunning()[0] : ::mlir::Value();
    }
    ::mlir::Value getRunningVar() {
      return hasRunningStats() ? getRunning()[1] : ::mlir::Value();
    }
    ::mlir::Value getUpdatedRunningMean() {
      return getUpdatedRunning().size() == 2 ? getUpdatedRunning()[0]
                                             : ::mlir::Value();
    }
    ::mlir::Value getUpdatedRunningVar() {
      return getUpdatedRunning().size() == 2 ? getUpdatedRunning()[1]
                                             : ::mlir::Value();
    }
    double getMomentumValue() {
      auto momentum = getMomentum();
      return momentum ? momentum->convertToDouble() : kDefaultMomentum;
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

def Kiln_Conv2dOp : Kiln_Op<"conv2d",
    [InferTypeOpAdaptor, Kiln_DedicatedKernel<"conv">]> {
  let summary = "2-D convolution (cross-correlation), NCHW or NHWC";
  let description = [{
    2-D cross-correlation (no kernel flip, like PyTorch) with stride,
    zero padding, dilation and groups.

    Shapes by `layout`, which is required (`layout = nchw` or
    `layout = nhwc`, no default; the filter layout follows the activation
    layout):

    | layout | input          | filter                  | result             |
    |--------|----------------|-------------------------|--------------------|
    | `nchw` | `[N, C, H, W]` | `[O, C/groups, KH, KW]` | `[N, O, OH, OW]`   |
    | `nhwc` | `[N, H, W, C]` | `[O, KH, KW, C/groups]` | `[N, OH, OW, O]`   |

    Attributes: `stride = [sh, sw]` (default `[1, 1]`, positive),
    `padding = [top, bottom, left, right]` (default zeros, non-negative),
    `dilation = [dh, dw]` (default `[1, 1]`, positive), `groups` (default 1,
    positive; `C` and `O` must both be divisible by it; output channels
    `[g*O/groups, (g+1)*O/groups)` see input channels
    `[g*C/groups, (g+1)*C/groups)`). Output size:

    `OH = floor((H + top + bottom - dh*(KH - 1) - 1) / sh) + 1`,
    `OW = floor((W + left + right - dw*(KW - 1) - 1) / sw) + 1`,

    both of which must be positive. The optional `bias` has shape `[O]` and
    is added to every output position of its channel. All operands and the
    result share one floating-point element type.

    ```mlir
    %y = kiln.conv2d %x, %w, %b layout = nchw stride = [2, 2] padding = [1, 1, 1, 1]
        groups = 2 : tensor<2x6x17x17xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>
    // %y : tensor<2x8x9x9xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$filter,
                       Optional<Kiln_FloatTensor>:$bias,
                       Kiln_ConvLayoutAttr:$layout,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? `layout` `=` `` $layout
    (`stride` `=` $stride^)? (`padding` `=` $padding^)?
    (`dilation` `=` $dilation^)? (`groups` `=` $groups^)?
    attr-dict `:` type($input) `,` type($filter) (`,` type($bias)^)?
  }];
  let hasVerifier = 1;
}

class Kiln_Pool2dOp<string mnemonic, string what, dag extraArgs,
                    string extraDoc, string extraFormat>
    : Kiln_Op<mnemonic, [InferTypeOpAdaptor, Kiln_DedicatedKernel<"pool">]> {
  let summary = "2-D " # what # " pooling, NCHW or NHWC";
  let description = "Slides a `kernel = [kh, kw]` window with `stride = "
    # "[sh, sw]` (default `[1, 1]`) over the spatial dims of `input` "
    # "(`[N, C, H, W]` for `layout = nchw`, `[N, H, W, C]` for "
    # "`layout = nhwc`; `layout` is required), "
    # "after padding `padding = [top, bottom, left, right]` (default zeros), "
    # "and takes the " # what # " of each window. Every padding value must be "
    # "at most half of the kernel size along its axis, so each window "
    # "overlaps the input. Output size `OH = floor((H + top + bottom - kh) / sh)"
    # " + 1`, likewise `OW`; both must be positive. The result has the input's "
    # "layout and element type.\n\n" # extraDoc;
  let arguments = !con((ins Kiln_FloatTensor:$input,
                            DenseI64ArrayAttr:$kernel,
                            DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
                            DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
                            Kiln_ConvLayoutAttr:$layout), extraArgs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input `layout` `=` `` $layout `kernel` `=` $kernel "
    # "(`stride` `=` $stride^)? (`padding` `=` $padding^)? " # extraFormat
    # " attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Kiln_MaxPool2dOp : Kiln_Pool2dOp<"max_pool2d", "maximum", (ins),
  "Padding elements never win the maximum (they act as -infinity).\n\n"
  "```mlir\n%y = kiln.max_pool2d %x layout = nchw kernel = [3, 3] "
  "stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x16x15x15xf32>\n```", "">;

def Kiln_AvgPool2dOp : Kiln_Pool2dOp<"avg_pool2d", "average",
  (ins UnitAttr:$count_include_pad),
  "The divisor is the number of window elements inside the unpadded input, "
  "or `kh * kw` with `count_include_pad` (padding counted as zeros).\n\n"
  "```mlir\n%y = kiln.avg_pool2d %x layout = nhwc kernel = [2, 2] "
  "stride = [2, 2] : tensor<2x8x8x3xf32>\n```",
  "(`count_include_pad` $count_include_pad^)?">;

//===----------------------------------------------------------------------===//
// Resizing
//===----------------------------------------------------------------------===//

// Linear resizing over three dims reads 8 positions per element: more than
// a kernel computes an operand at (RemapChains.cpp), so the operand of a
// resize is read from a buffer.
def Kiln_ResizeOp : Kiln_Op<"resize",
    [Kiln_Layout</*readsPerElement=*/8>, Kiln_ScalarForm]> {
  let summary = "resamples a tensor: nearest neighbour or (multi)linear";
  let description = [{
    ONNX Resize (and PyTorch's `interpolate` / `nn.Upsample`) on any dims of
    a float tensor, to the sizes of the written result type; `scales` has
    one positive value per dim. A dim is resized when its size changes or
    its scale is not 1; at most three are (the others are copied). Along a
    resized dim of `in` input and `out` output elements with scale `s`,
    output index `o` reads input coordinate `x` by `coordinates`:

    | coordinates            | x                                              |
    |------------------------|------------------------------------------------|
    | `half_pixel`           | `(o + 0.5) / s - 0.5`                          |
    | `pytorch_half_pixel`   | `(o + 0.5) / s - 0.5`, 0 when `out == 1`       |
    | `align_corners`        | `o * (in - 1) / (out - 1)`, 0 when `out == 1`  |
    | `asymmetric`           | `o / s`                                        |
    | `half_pixel_symmetric` | `in/2 * (1 - out / (in*s)) + (o + 0.5) / s - 0.5` |

    computed in f64, each operation correctly rounded (the CPU reference and
    the GPU pick the same elements). `mode = nearest` reads the element at
    `x` rounded by `rounding` (`round_prefer_floor`, the default: to the
    nearest index, ties down; `round_prefer_ceil`: ties up; `floor`;
    `ceil`) and clamped to `[0, in - 1]`. `mode = linear` clamps `x` to
    `[0, in - 1]` and blends `i0 = floor(x)` and `i1 = min(i0 + 1, in - 1)`
    as `(1 - w) * v[i0] + w * v[i1]`, `w = x - i0`, dim after dim (bilinear
    over two dims: the blend along the first of the blends along the
    second). The result has the input's element type; its type is written
    out (ONNX's sizes need not be `floor(in * s)`).

    PyTorch exports `nn.Upsample(scale_factor=2)` (nearest) as `asymmetric`
    with `floor` rounding, bilinear with `half_pixel` (`align_corners`
    with `align_corners=True`). The gradient (`kiln.resize_backward`)
    gathers: each input element adds the outputs that read it.

    ```mlir
    %y = kiln.resize %x mode = nearest coordinates = asymmetric rounding = floor
        scales = [1.0, 1.0, 2.0, 2.0] : tensor<2x3x4x5xf32> -> tensor<2x3x8x10xf32>
    %z = kiln.resize %x mode = linear coordinates = half_pixel
        scales = [1.0, 1.0, 1.5, 1.5] : tensor<2x3x4x5xf32> -> tensor<2x3x6x7xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_ResizeModeAttr:$mode,
      Kiln_ResizeCoordinatesAttr:$coordinates,
      DefaultValuedAttr<Kiln_ResizeRoundingAttr,
                        "::mlir::kiln::ResizeRounding::round_prefer_floor">:$rounding,
      DenseF64ArrayAttr:$scales);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input `mode` `=` `` $mode `coordinates` `=` `` $coordinates
    (`rounding` `=` `` $rounding^)? `scales` `=` custom<ExactF64Array>($scales) attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The dims whose size or scale changes, in increasing order.
    ::llvm::SmallVector<int64_t> getResizedDims();
  }];
}

//===----------------------------------------------------------------------===//
// Embedding and rotary position embedding
//===----------------------------------------------------------------------===//

def Kiln_EmbeddingOp : Kiln_Op<"embedding",
    [InferTypeOpAdaptor, Kiln_Layout<>, Kiln_ScalarForm]> {
  let summary = "gathers rows of an embedding table";
  let description = [{
    `result[i..., :] = table[indices[i...], :]` for a float `table` `[V, D]`
    and i32 `indices` of any shape `S` (rank 0 included); the result has
    shape `S + [D]` and the table's element type. Indices must lie in
    `[0, V)`: outside that range the row is unspecified (implementations
    must not read out of bounds). The gradient flows to `table` only.

    ```mlir
    %e = kiln.embedding %table, %tokens : tensor<1000x64xf32>, tensor<4x32xi32>
    // %e : tensor<4x32x64xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$table, Kiln_IndexTensor:$indices);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat =
      "$table `,` $indices attr-dict `:` type($table) `,` type($indices)";
}

def Kiln_RopeOp : Kiln_Op<"rope", [SameOperandsAndResultType,
    Kiln_Layout</*readsPerElement=*/2>, Kiln_ScalarForm]> {
  let summary = "rotary position embedding (rotate-half pairing)";
  let description = [{
    Rotary position embedding of `input` laid out `[B, T, H, D]` (batch,
    position, head, head dim; `D` even). Position `t` is
    `p = t + position_offset` (`position_offset` default 0, non-negative,
    for decoding after a cache); for `i` in `[0, D/2)` the pair
    `(x[i], x[i + D/2])` (rotate-half pairing, as in GPT-NeoX and Llama's
    Hugging Face implementation) is rotated by the angle
    `a = p * theta^(-2i/D)` (`theta` default 10000, positive):

    `y[i] = x[i] cos(a) - x[i + D/2] sin(a)`,
    `y[i + D/2] = x[i + D/2] cos(a) + x[i] sin(a)`.

    With `inverse`, each pair is rotated by `-a` instead (the transpose of
    the rotation, which its gradient applies). The result has the input's
    type.

    ```mlir
    %q2 = kiln.rope %q theta = 5.000000e+05 : tensor<2x16x4x64xbf16>
    %g = kiln.rope %dq2 theta = 5.000000e+05 inverse : tensor<2x16x4x64xbf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "10000.0">:$theta,
                       DefaultValuedAttr<I64Attr, "0">:$position_offset,
                       UnitAttr:$inverse);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`theta` `=` $theta^)? (`position_offset` `=` $position_offset^)?
    (`inverse` $inverse^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Kiln_AttentionOp : Kiln_Op<"attention",
    [InferTypeOpAdaptor, Kiln_DedicatedKernel<"attention">]> {
  let summary = "scaled dot-product attention";
  let description = [{
    `softmax(q @ k^T * scale + mask) @ v` per batch and head, with
    `q` `[B, H, Tq, D]`, `k` `[B, H, Tk, D]`, `v` `[B, H, Tk, Dv]` and the
    result `[B, H, Tq, Dv]`; all four share one floating-point element type.

    `scale` defaults to `1/sqrt(D)` when absent and must be positive when
    given. With `causal`, query `i` attends to key `j` only when
    `j <= i + (Tk - Tq)`: the mask is aligned to the ends of the sequences
    (bottom-right, as in FlashAttention 2), so with `Tq == Tk` it is the usual
    lower triangle and a query block decoded after a key cache sees the whole
    cache. Causal attention needs `Tq <= Tk`, so that no query row is empty.

    With `with_row_lse`, a second f32 result `[B, H, Tq]` holds each query
    row's log-sum-exp of its scaled, masked scores,
    `lse_i = log(sum_j exp(q_i . k_j * scale))` over the keys it sees: what
    `kiln.attention_backward` needs to recompute the weights without a sweep
    of its own (compilation pairs the two ops). It stays f32 under
    `--precision=bf16|f16`, and it has no gradient: a loss that depends on
    it through a parameter is an error at the op.

    ```mlir
    %o = kiln.attention %q, %k, %v causal scale = 1.250000e-01
        : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x32xf32>
    %o2, %lse = kiln.attention %q, %k, %v with_row_lse
        : tensor<2x4x16x64xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x16x32xbf16>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key,
                       Kiln_FloatTensor:$value, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$with_row_lse);
  let results = (outs Kiln_FloatTensor:$result,
                      Optional<StaticShapeTensorOf<[F32]>>:$row_lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`causal` $causal^)? (`scale` `=` $scale^)?
    (`with_row_lse` $with_row_lse^)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

def Kiln_DropoutOp : Kiln_Op<"dropout",
    [AllTypesMatch<["input", "result"]>, Kiln_Pointwise, Kiln_ScalarForm]> {
  let summary = "inverted dropout with a counter-based Philox mask";
  let description = [{
    Keeps element `i` (row-major linear index) of `input` when its uniform
    draw `u_i` in `[0, 1)` satisfies `u_i >= rate` and scales the kept
    elements by `1 / (1 - rate)`; dropped elements become 0. `u_i` is the
    draw that `kiln.random_uniform` with the same `seed`, `stream` and
    `offset` produces for element `i` (Philox, counter based, so the CPU
    reference, the GPU kernel and the backward pass all see one mask).
    The optional rank-0 i32 `offset` operand (for example the step number)
    shifts the counter at run time, so every step draws a fresh mask; it
    defaults to 0. `0 <= rate < 1`; `seed` and `stream` are non-negative
    (`stream` defaults to 0). The result has the input's type; no gradient
    flows to `offset`.

    ```mlir
    %y = kiln.dropout %x, %step rate = 1.000000e-01 seed = 1 stream = 2
        : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Optional<Kiln_I32Scalar>:$offset,
                       F64Attr:$rate, I64Attr:$seed,
                       DefaultValuedAttr<I64Attr, "0">:$stream);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $offset^)? `rate` `=` $rate `seed` `=` $seed
    (`stream` `=` $stream^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Kiln_MseLossOp : Kiln_Op<"mse_loss",
    [InferTypeOpAdaptor, AllTypesMatch<["prediction", "target"]>,
     Kiln_Reduces]> {
  let summary = "mean squared error";
  let description = [{
    `(prediction - target)^2` elementwise, then reduced over all elements by
    `reduction` (`mean`, the default, or `sum`). `prediction` and `target`
    have the same type; the result is a rank-0 tensor of their element type.

    ```mlir
    %l = kiln.mse_loss %p, %t reduction = sum : tensor<16x3xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$prediction, Kiln_FloatTensor:$target,
      DefaultValuedAttr<Kiln_ReductionAttr, "::mlir::kiln::Reduction::mean">:$reduction);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $prediction `,` $target (`reduction` `=` `` $reduction^)? attr-dict
    `:` type($prediction)
  }];
}

def Kiln_CrossEntropyOp : Kiln_Op<"cross_entropy",
    [InferTypeOpAdaptor, Kiln_Reduces]> {
  let summary = "softmax cross entropy of logits and integer labels";
  let description = [{
    For float `logits` `[N, C]` and i32 `labels` `[N]` (each in `[0, C)` or
    equal to `ignore_index`; any other label makes the result unspecified),
    with `lsm = log_softmax(logits, dim 1)` and `eps = label_smoothing`
    (in `[0, 1]`, default 0) the loss of row `n` is

    `l[n] = -(1 - eps) * lsm[n, labels[n]] - eps / C * sum_c lsm[n, c]`

    (the target distribution puts `1 - eps + eps/C` on the label and `eps/C`
    elsewhere, as in PyTorch). The rows are reduced by `reduction` (`mean`,
    the default, divides by N; or `sum`); the result is a rank-0 tensor of
    the logits' element type. The gradient flows to `logits` only.

    `ignore_index` (optional, an i32 value; PyTorch's is -100) is a label
    that selects no class: its rows have loss 0, smoothing term included, and
    gradient 0, and `mean` divides by the number of the other rows, as
    `torch.nn.functional.cross_entropy(..., ignore_index=...)` does. When
    every row is ignored, `mean` is NaN (0 / 0) and the gradient 0.

    ```mlir
    %l = kiln.cross_entropy %logits, %labels label_smoothing = 1.000000e-01
        : tensor<32x10xf32>, tensor<32xi32>
    %t = kiln.cross_entropy %logits, %labels ignore_index = -100
        : tensor<32x10xf32>, tensor<32xi32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$logits, Kiln_IndexTensor:$labels,
      DefaultValuedAttr<Kiln_ReductionAttr, "::mlir::kiln::Reduction::mean">:$reduction,
      DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
      OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels (`reduction` `=` `` $reduction^)?
    (`label_smoothing` `=` $label_smoothing^)?
    (`ignore_index` `=` $ignore_index^)? attr-dict
    `:` type($logits) `,` type($labels)
  }];
  let hasVerifier = 1;
}

def Kiln_BinaryCrossEntropyOp : Kiln_Op<"binary_cross_entropy",
    [InferTypeOpAdaptor, AllTypesMatch<["logits", "target"]>,
     Kiln_Reduces]> {
  let summary = "binary cross entropy with logits";
  let description = [{
    Binary cross entropy of `sigmoid(logits)` against `target` (probabilities
    in `[0, 1]`, soft labels allowed), computed from the logits in the
    numerically stable form (PyTorch's `binary_cross_entropy_with_logits`):

    `l = max(x, 0) - x * t + log(1 + exp(-|x|))`

    reduced over all elements by `reduction` (`mean`, the default, or `sum`).
    `logits` and `target` have the same type; the result is a rank-0 tensor
    of their element type. Gradients flow to both operands.

    ```mlir
    %l = kiln.binary_cross_entropy %x, %t : tensor<32x1xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$logits, Kiln_FloatTensor:$target,
      DefaultValuedAttr<Kiln_ReductionAttr, "::mlir::kiln::Reduction::mean">:$reduction);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $target (`reduction` `=` `` $reduction^)? attr-dict
    `:` type($logits)
  }];
}

//===----------------------------------------------------------------------===//
// Recurrence
//===----------------------------------------------------------------------===//

def Kiln_RnnOp : Kiln_Op<"rnn",
    [InferTypeOpAdaptor, Kiln_DedicatedKernel<"rnn">]> {
  let summary = "multi-head recurrent layer: lstm, gru, elman or slstm";
  let description = [{
    Runs a recurrent cell over `T` time steps, with FlashRNN's conventions.
    Operands (all of one floating-point element type):

    - `input` (Wx) `[B, T, Gw, NH, D]`: the input projection, computed
      outside the op, per step, gate and head;
    - `recurrent` (R) `[Gr, NH, D, D]`: per gate a block-diagonal recurrent
      matrix of `NH` heads of `D x D`;
    - `bias` (b) `[Gb, NH, D]`;
    - `states0` `[S, B, NH, D]`: the initial states.

    Results: every state after every step `[S, B, T, NH, D]` and the last
    states `[S, B, NH, D]`, with the operands' element type.

    | function | Gw | Gr | Gb | S | states     |
    |----------|----|----|----|---|------------|
    | `lstm`   | 4  | 4  | 4  | 2 | h, c       |
    | `slstm`  | 4  | 4  | 4  | 4 | h, c, n, m |
    | `gru`    | 3  | 3  | 4  | 1 | h          |
    | `elman`  | 1  | 1  | 1  | 1 | h          |

    Per head `n`, `R_g h` is the product of gate `g`'s `D x D` block with
    the head's previous `h`: `(R_g h)[n, d] = sum_p R[g, n, d, p] * h[n, p]`
    (dim 2 of R indexes the gate output, dim 3 the previous state: FlashRNN's
    `GHDP` layout). State 0 is `h` in every function; the table gives the
    order of the others. The gate pre-activations are
    `g = R·h_prev + Wx_t + b` per gate; σ is the logistic sigmoid.

    - lstm, gates i f z o: `c = σ(f) c + σ(i) tanh(z)`; `h = σ(o) tanh(c)`
    - slstm (gates ĩ f̃ z o, exponential gating with stabiliser m):
      `m' = max(ĩ, log σ(f̃) + m)`; `i = exp(ĩ − m')`;
      `f = exp(log σ(f̃) + m − m')`; `c' = f c + i tanh(z)`;
      `n' = f n + i`; `h' = σ(o) c'/n'`
    - gru: `g0 = R0 h + b0`; `r = σ(Wx0 + R1 h + b1)`;
      `z = σ(Wx1 + R2 h + b2)`; `n = Wx2 + b3`;
      `h' = z h + (1 − z) tanh(n + r g0)`
    - elman: `h' = tanh(g)`

    The backward pass (backpropagation through time) is a fused op of its
    own.

    ```mlir
    %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm
        : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>,
          tensor<2x2x3x16xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$recurrent,
                       Kiln_FloatTensor:$bias, Kiln_FloatTensor:$states0,
                       Kiln_RnnFunctionAttr:$function);
  let results = (outs Kiln_FloatTensor:$states, Kiln_FloatTensor:$last_states);
  let assemblyFormat = [{
    $input `,` $recurrent `,` $bias `,` $states0 `function` `=` `` $function
    attr-dict `:` type($input) `,` type($recurrent) `,` type($bias) `,`
    type($states0)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// (Gw, Gr, Gb, S) of a cell function: gates of the input projection,
    /// of the recurrent matrix and of the bias, and number of states.
    struct Sizes { int64_t gw, gr, gb, s; };
    static Sizes sizesOf(RnnFunction function);
  }];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def Kiln_FusionOp : Kiln_Op<"fusion",
    [IsolatedFromAbove, SingleBlock, Kiln_Structural]> {
  let summary = "a region of kiln ops that becomes one kernel";
  let description = [{
    Produced by `--kiln-fuse`: the ops of the single-block region are
    generated as one kernel (or a fixed short sequence). The region is
    isolated from above; its block arguments are the kernel's inputs and are
    bound to the op's operands in order (same count and types). The block
    ends in `kiln.yield`, whose operand types are the op's result types.
    `kind` tells the code generator which template family applies: one of
    `pointwise`, `reduction`, `gemm`, `attention`, `rnn`, `conv`, `pool`,
    `resize` (the gradient of a resize), `batch_norm`, `embedding` (the
    gradient of an embedding), `optimizer`, `custom`.

    ```mlir
    %r = kiln.fusion "pointwise" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = kiln.add %x, %y : tensor<4xf32>, tensor<4xf32>
      %e = kiln.exp %s : tensor<4xf32>
      kiln.yield %e : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind ` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, results)
    $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The kinds of fusion the code generator knows.
    static ::llvm::ArrayRef<::llvm::StringLiteral> knownKinds();
  }];
}

// Not a Kiln_Op: a terminator has no gradient rule of its own.
def Kiln_YieldOp : Op<Kiln_Dialect, "yield",
    [Pure, HasParent<"FusionOp">, Terminator, Kiln_Structural]> {
  let summary = "returns the values of a kiln.fusion region";
  let description = [{
    Terminates the body of `kiln.fusion`; its operands become the fusion's
    results (same count and types).

    ```mlir
    %s, %c = kiln.fusion "pointwise" (%a, %b)
        : (tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xbf16>) {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4x8xf32>):
      %e = kiln.exp %x : tensor<4xf32>
      %h = kiln.cast %y : tensor<4x8xf32> to tensor<4x8xbf16>
      kiln.yield %e, %h : tensor<4xf32>, tensor<4x8xbf16>
    }
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // KILN_NN_OPS_TD
