//===- KilnShapeOps.td - shape ops, reductions, matmul -----------*- tablegen -*-===//

#ifndef KILN_SHAPE_OPS_TD
#define KILN_SHAPE_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

//===----------------------------------------------------------------------===//
// Views with an explicit result type: reshape, broadcast_to
//===----------------------------------------------------------------------===//

/// The result shape does not follow from the operand, so the assembly writes
/// it: `kiln.<op> %x : tensor<...> -> tensor<...>`. The verifier checks the
/// shapes and that the element type is kept.
class Kiln_ExplicitShapeOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits> {
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ReshapeOp
    : Kiln_ExplicitShapeOp<"reshape", [Kiln_View,
                                       Kiln_RemapsOperands<>,
                                       Kiln_ScalarForm]> {
  let summary = "reinterprets a tensor with another shape of the same size";
  let description = [{
    Gives the elements of `input`, taken in row-major order, the shape of the
    result type written after `->`: the element at row-major linear index `i`
    of the input is the element at linear index `i` of the result. Both types
    must hold the same number of elements and have the same element type; any
    rank is allowed on either side (rank 0 holds one element).

    It is a zero-copy view: no data moves, only the shape (and the strides of a
    contiguous buffer) change.

    ```mlir
    %y = kiln.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
    ```
  }];
}

def Kiln_BroadcastToOp
    : Kiln_ExplicitShapeOp<"broadcast_to", [Kiln_Pointwise, Kiln_ScalarForm]> {
  let summary = "broadcasts a tensor to a given shape (numpy rule)";
  let description = [{
    Broadcasts `input` to the result shape written after `->`, with numpy's
    rule: the shapes are aligned at their trailing dimensions, the result may
    have more (leading) dimensions than the input, and each input dimension
    must be 1 (its single element is repeated) or equal to the result's
    aligned dimension. So `result[j_0, ..., j_(m-1)] = input[i_0, ..., i_(n-1)]`
    with `i_k = 0` where input dimension `k` is 1 and `i_k = j_(m-n+k)`
    otherwise. The element type is kept.

    It is a zero-copy view: a broadcast dimension gets stride 0.

    ```mlir
    %y = kiln.broadcast_to %x : tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Layout ops with an inferred result: transpose, slice, concat, pad
//===----------------------------------------------------------------------===//

def Kiln_TransposeOp : Kiln_Op<"transpose",
    [InferTypeOpAdaptor, Kiln_Layout<>, Kiln_ScalarForm]> {
  let summary = "permutes the dimensions of a tensor";
  let description = [{
    Result dimension `k` is input dimension `perm[k]` (as `numpy.transpose`):
    the result shape is `[shape[perm[0]], ..., shape[perm[rank-1]]]` and
    `result[j_0, ..., j_(rank-1)] = input[i]` with `i[perm[k]] = j_k`. `perm`
    must be a permutation of `0..rank-1` (one entry per dimension, each once).
    The element type is kept; the result type is inferred.

    It is a zero-copy view: only the strides are permuted.

    ```mlir
    %y = kiln.transpose %x perm = [1, 0, 2] : tensor<4x8x3xf32>  // tensor<8x4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `perm` `=` $perm attr-dict `:` type($input)";
}

def Kiln_SliceOp : Kiln_Op<"slice",
    [InferTypeOpAdaptor, Kiln_Layout<>, Kiln_ScalarForm]> {
  let summary = "strided slice with static bounds";
  let description = [{
    Takes, in every dimension `d`, the indices `start[d], start[d] + step[d],
    ...` below `limit[d]` (exclusive): `result[j_0, ...] = input[start[0] +
    j_0 * step[0], ...]`. Each of `start`, `limit` and `step` has one entry per
    dimension, with `0 <= start[d] <= limit[d] <= size[d]` and `step[d] >= 1`.
    Result dimension `d` has size `ceil((limit[d] - start[d]) / step[d])`
    (0 when `start[d] == limit[d]`). The element type is kept; the result type
    is inferred.

    It is a zero-copy view: an offset plus strides multiplied by the steps.

    ```mlir
    %y = kiln.slice %x start = [0, 2] limit = [4, 8] step = [1, 2] : tensor<4x8xf32>
    // tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$step);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `start` `=` $start `limit` `=` $limit "
                       "`step` `=` $step attr-dict `:` type($input)";
}

def Kiln_ConcatOp : Kiln_Op<"concat",
    [InferTypeOpAdaptor, Kiln_Layout<>, Kiln_ScalarForm]> {
  let summary = "joins tensors along one dimension";
  let description = [{
    Places the `inputs` one after another, in operand order, along dimension
    `dim`. There must be at least one input; all inputs have the same rank,
    the same element type and equal sizes in every dimension other than `dim`
    (`0 <= dim < rank`). The result has their element type, those common sizes
    and, along `dim`, the sum of the inputs' sizes; it is inferred. Input `n`
    occupies indices `[o_n, o_n + size_n)` of `dim`, where `o_n` is the sum of
    the sizes of the inputs before it.

    ```mlir
    %y = kiln.concat %a, %b, %c dim = 1
        : tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x4xf32>  // tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$inputs `dim` `=` $dim attr-dict `:` type($inputs)";
}

def Kiln_PadOp : Kiln_Op<"pad",
    [InferTypeOpAdaptor, Kiln_Layout<>, Kiln_ScalarForm]> {
  let summary = "pads a tensor with a constant";
  let description = [{
    Adds `low[d]` elements before and `high[d]` elements after dimension `d`,
    all equal to `value`: the result has size `low[d] + size[d] + high[d]` in
    dimension `d`, and `result[j] = input[j - low]` where `0 <= j[d] - low[d] <
    size[d]` for every `d`, else `value`. `low` and `high` have one
    non-negative entry per dimension. The element type is kept; the result
    type is inferred.

    `value` (default 0.0) is converted to the element type: rounded to the
    nearest value for f32, bf16 and f16; it must be an integer in the i32
    range for i32, and 0.0 or 1.0 (false or true) for i1.

    ```mlir
    %y = kiln.pad %x low = [0, 1] high = [2, 0] value = -1.0 : tensor<4x5xf32>
    // tensor<6x6xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `low` `=` $low `high` `=` $high "
                       "(`value` `=` $value^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ops that keep the operand's type: flip, triu, tril
//===----------------------------------------------------------------------===//

def Kiln_FlipOp : Kiln_Op<"flip",
    [SameOperandsAndResultType, Kiln_Layout<>, Kiln_ScalarForm]> {
  let summary = "reverses a tensor along the given dimensions";
  let description = [{
    Reverses the order of the elements along each dimension in `dims` (each
    in `[0, rank)`, none repeated; an empty list is the identity):
    `result[..., j_d, ...] = input[..., size[d] - 1 - j_d, ...]` for every `d`
    in `dims`, other indices unchanged. The result has the input's type.

    ```mlir
    %y = kiln.flip %x dims = [0, 2] : tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims attr-dict `:` type($input)";
  let hasVerifier = 1;
}

/// triu and tril: keep one side of a diagonal of the matrices in the last two
/// dimensions, zero the rest.
class Kiln_TriangularOp<string mnemonic, string triangle, string side,
                        string keep>
    : Kiln_Op<mnemonic, [SameOperandsAndResultType, Kiln_Pointwise,
                         Kiln_ScalarForm]> {
  let summary = "keeps the " # triangle # " triangle of the last two dimensions";
  let description = "Treats the last two dimensions of `input` (rank >= 2) as "
    # "matrices, the leading ones as batch dimensions, and keeps the elements "
    # "on and " # side # " the `diagonal`-th diagonal, setting the others to "
    # "zero (false for i1): `result[..., i, j] = input[..., i, j]` if `" # keep
    # "`, else 0. `diagonal` (default 0) counts like torch." # mnemonic
    # ": 0 is the main diagonal, positive values lie above it, negative "
    # "values below. The result has the input's type.\n\n"
    # "```mlir\n%y = kiln." # mnemonic # " %x diagonal = -1 : tensor<2x5x7xf32>\n```";
  let arguments = (ins Kiln_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$diagonal);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat =
      "$input (`diagonal` `=` $diagonal^)? attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Kiln_TriuOp
    : Kiln_TriangularOp<"triu", "upper", "above", "j - i >= diagonal">;
def Kiln_TrilOp
    : Kiln_TriangularOp<"tril", "lower", "below", "j - i <= diagonal">;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, string what, string allName,
                    Type tensor, string detail = "">
    : Kiln_Op<mnemonic, [InferTypeOpAdaptor, Kiln_Reduces]> {
  let summary = what # " over the given dimensions";
  let description = "Reduces the dimensions listed in `dims` (at least one, "
    # "each in [0, rank), no repeats) to their " # what # ". " # detail
    # "With `keepdim` the reduced dimensions stay as size 1, without it they "
    # "are removed; the other dimensions keep their order and sizes. The "
    # "result has the input's element type and is inferred. Reducing every "
    # "dimension without `keepdim` gives a rank-0 tensor, the " # what
    # " over all elements (" # allName # ").\n\n"
    # "```mlir\n%y = kiln." # mnemonic
    # " %x dims = [0, 2] keepdim : tensor<4x8x3xf32>  // tensor<1x8x1xf32>\n```";
  let arguments = (ins tensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim);
  let results = (outs tensor:$result);
  let assemblyFormat =
      "$input `dims` `=` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input)";
}

def Kiln_ReduceSumOp
    : Kiln_ReduceOp<"reduce_sum", "sum", "sum_all", Kiln_NumericTensor>;
def Kiln_ReduceMeanOp
    : Kiln_ReduceOp<"reduce_mean", "mean", "mean_all", Kiln_FloatTensor,
                    "The mean is the sum divided by the number of reduced "
                    "elements; only f32, bf16 and f16 are accepted. ">;
def Kiln_ReduceMaxOp
    : Kiln_ReduceOp<"reduce_max", "maximum", "max_all", Kiln_NumericTensor,
                    "A NaN among the reduced elements makes the result NaN. ">;
def Kiln_ReduceMinOp
    : Kiln_ReduceOp<"reduce_min", "minimum", "min_all", Kiln_NumericTensor,
                    "A NaN among the reduced elements makes the result NaN. ">;

def Kiln_ArgmaxOp
    : Kiln_Op<"argmax", [InferTypeOpAdaptor, Kiln_NonDifferentiable,
                         Kiln_Reduces]> {
  let summary = "index of the largest element along one dimension";
  let description = [{
    For every position of the other dimensions, gives the index along `dim`
    (`0 <= dim < rank`) of the largest element of `input`, as i32. Ties take
    the first (smallest) index; a NaN counts as larger than every number, so
    the first NaN wins (as torch.argmax). With `keepdim` dimension `dim`
    stays as size 1, without it it is removed. The result type is inferred.
    No gradient flows through it.

    ```mlir
    %i = kiln.argmax %x dim = 1 : tensor<4x10xf32>  // tensor<4xi32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$dim,
                       UnitAttr:$keepdim);
  let results = (outs Kiln_IndexTensor:$result);
  let assemblyFormat =
      "$input `dim` `=` $dim (`keepdim` $keepdim^)? attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Kiln_MatmulOp : Kiln_Op<"matmul", [InferTypeOpAdaptor, Kiln_Gemm]> {
  let summary = "batched matrix product with broadcasting batch dimensions";
  let description = [{
    Multiplies the matrices in the last two dimensions of `lhs` and `rhs`
    (both of rank >= 2). Let `A` be `lhs`, or `lhs` with its last two
    dimensions swapped when `transpose_lhs` is set, and `B` likewise `rhs`
    (swapped when `transpose_rhs`), so that `A` is `[..., M, K]` and `B` is
    `[..., K, N]`; the transposes act only on the last two dimensions. Then

      `result[b..., i, j] = sum_k A[b..., i, k] * B[b..., k, j]`

    with result shape `[batch..., M, N]`, where `batch` is the numpy broadcast
    of the leading dimensions of the two operands (aligned at the right; each
    pair equal or one of them 1, missing ones count as 1). Both operands have
    the same element type, f32, bf16 or f16, which the result has too;
    products are accumulated in f32 and rounded once to the element type. The
    result type is inferred. Rank-1 operands are not accepted: reshape them.

    A linear layer `y = x @ W + b` keeps its weight `[in, out]`, the layout
    `#kiln.init<xavier>` and `kaiming` read their fans from. PyTorch's
    `nn.Linear` stores `[out, in]`: multiply by such a weight with
    `transpose_rhs`.

    ```mlir
    %r = kiln.matmul %a, %b transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32>
    // tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? "
                       "(`transpose_rhs` $transpose_rhs^)? attr-dict `:` "
                       "type($lhs) `,` type($rhs)";
}

#endif // KILN_SHAPE_OPS_TD
