//===- KilnElementwiseOps.td - constants, randomness, elementwise -*- tablegen -*-===//
//
// Constants, iota, counter-based random numbers, unary and binary elementwise
// ops (binary ones broadcast like numpy), compare and select.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ELEMENTWISE_OPS_TD
#define KILN_ELEMENTWISE_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

//===----------------------------------------------------------------------===//
// Constants and randomness
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp
    : Kiln_Op<"constant", [InferTypeOpAdaptor, Kiln_NonDifferentiable,
                           Kiln_Pointwise, Kiln_ScalarForm]> {
  let summary = "a constant tensor";
  let description = [{
    Materialises `value`, an elements attribute (`dense<...>`; written as a
    splat `dense<0.5>` when every element is equal). The result type is the
    attribute's type, which must be a statically shaped tensor of a kiln
    element type (f32, bf16, f16, i32 or i1). It has no operands, so no
    gradient flows through it.

    ```mlir
    %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %z = kiln.constant dense<0> : tensor<4x8xi32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
}

def Kiln_IotaOp : Kiln_Op<"iota", [Kiln_NonDifferentiable, Kiln_Pointwise,
                                   Kiln_ScalarForm]> {
  let summary = "indices counting along one dimension";
  let description = [{
    Each element is its own index along `dim`: for a result of shape
    `[d0, ..., dn-1]`, `result[i0, ..., in-1] = i_dim` (converted to the
    element type; bf16 and f16 round to nearest even once the index exceeds
    their exact integer range, 256 and 2048). `dim` must be in `[0, rank)`;
    the element type is f32, bf16, f16 or i32. Not differentiable.

    ```mlir
    %i = kiln.iota dim = 1 : tensor<4x8xi32>   // every row is 0, 1, ..., 7
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "`dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

/// The optional per-step counter of the random ops: a rank-0 i32 tensor.
def Kiln_CounterTensor
    : 0DTensorOf<[I32]>,
      BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI32Type())">;

/// Shared by random_uniform and random_normal: seed, stream and the optional
/// offset select the Philox stream; the two distribution parameters follow.
class Kiln_RandomOp<string mnemonic, string firstName, string firstDefault,
                    string secondName, string secondDefault>
    : Kiln_Op<mnemonic, [Kiln_NonDifferentiable, Kiln_Pointwise,
                         Kiln_ScalarForm]> {
  let arguments = !con(
      (ins I64Attr:$seed, I64Attr:$stream, Optional<Kiln_CounterTensor>:$offset),
      !dag(ins, [DefaultValuedAttr<F64Attr, firstDefault>,
                 DefaultValuedAttr<F64Attr, secondDefault>],
           [firstName, secondName]));
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "`seed` `=` $seed `stream` `=` $stream "
    # "(`offset` `=` $offset^)? "
    # "(`" # firstName # "` `=` $" # firstName # "^)? "
    # "(`" # secondName # "` `=` $" # secondName # "^)? "
    # "attr-dict `:` type($result)";
  let hasVerifier = 1;

  /// The counter scheme, shared verbatim by both descriptions.
  string philox = [{
    **Random stream.** Numbers come from Philox4x32-10 (Salmon et al., "Parallel
    random numbers: as easy as 1, 2, 3", SC 2011; the generator of Random123
    and cuRAND), used counter-based so the CPU reference and a GPU kernel
    reproduce every element without shared state. All arithmetic below is on
    unsigned 32-bit words modulo 2^32.

    - Key: `k0 = seed & 0xFFFFFFFF`, `k1 = (seed >> 32) & 0xFFFFFFFF`, with
      `seed` read as an unsigned 64-bit integer (two's complement).
    - Counter for the element with flat row-major index `i`
      (`0 <= i < N`, N the number of elements):
      `(c0, c1, c2, c3) = (i / 4, stream, offset, 0)`, where `offset` is the
      value of the optional `offset` operand (a rank-0 i32 tensor read as an
      unsigned word; 0 when absent). `stream` must be in `[0, 2^32)` and N at
      most 2^34, so every counter word fits in 32 bits.
    - One round, with `M0 = 0xD2511F53`, `M1 = 0xCD9E8D57` and `hi:lo` the
      64-bit product split in halves: `hi0:lo0 = M0 * c0`,
      `hi1:lo1 = M1 * c2`, then
      `(c0, c1, c2, c3) <- (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)`.
    - Ten rounds; between consecutive rounds (nine times) the key is bumped:
      `k0 += 0x9E3779B9`, `k1 += 0xBB67AE85`. The final counter is the block
      `(x0, x1, x2, x3)`.
    - Element `i` uses lane `i % 4` of block `i / 4`, so one Philox call
      serves four consecutive elements and `(seed, stream, offset)` selects
      an independent sequence. Feeding the step number as `offset` gives
      fresh numbers every training step from one compiled graph.
    - Known answer (the Random123 test vector): key `(0, 0)` and counter
      `(0, 0, 0, 0)` give the block
      `(0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)`.

    Ops with equal seed, stream, offset, parameters and type produce equal
    tensors (the op is pure). Not differentiable.
  }];
}

def Kiln_RandomUniformOp
    : Kiln_RandomOp<"random_uniform", "low", "0.0", "high", "1.0"> {
  let summary = "uniform random numbers in [low, high)";
  let description = [{
    Fills the result with numbers uniformly distributed in `[low, high)`
    (defaults 0 and 1; `low < high` is required).

    ```mlir
    %r = kiln.random_uniform seed = 42 stream = 3 offset = %step
           low = -1.0 high = 1.0 : tensor<4x8xf32>
    ```

    **Mapping.** With `u` the 32-bit word of element `i` (see below):
    `f = float(u >> 8) * 2^-24`, exactly representable in f32 and in
    `[0, 1 - 2^-24]`. Then in f32 arithmetic, each operation rounded to
    nearest even and never fused into an FMA:
    `lo = f32(low)`, `hi = f32(high)`, `r = lo + (hi - lo) * f`; if rounding
    made `r >= hi`, `r` becomes the largest f32 below `hi`. An f32 result is
    `r`; a bf16 or f16 result is `r` rounded to nearest even (which can
    reach `high` itself when it lies within half an ulp of it).
    Example: with `seed = 0`, `stream = 0`, no offset and the default bounds,
    the first four f32 elements are 6694888, 14772677, 12343212 and 10158299
    times 2^-24 (about 0.39905, 0.88052, 0.73571, 0.60548).
  }] # philox;
}

def Kiln_RandomNormalOp
    : Kiln_RandomOp<"random_normal", "mean", "0.0", "std", "1.0"> {
  let summary = "normally distributed random numbers";
  let description = [{
    Fills the result with numbers drawn from N(mean, std^2) (defaults 0 and
    1; `std >= 0` is required, `std = 0` gives `mean` everywhere).

    ```mlir
    %w = kiln.random_normal seed = 42 stream = 0 std = 0.02 : tensor<64x128xbf16>
    ```

    **Mapping (Box-Muller).** Element `i` takes the lane pair
    `(a, b) = (x0, x1)` of block `i / 4` when `i % 4` is 0 or 1, and
    `(x2, x3)` when it is 2 or 3 (see below). In f64 arithmetic, each
    operation rounded to nearest even and never fused:
    `u1 = ((a >> 8) + 1) * 2^-24` (in `(0, 1]`, so the log is finite),
    `u2 = (b >> 8) * 2^-24`, `r = sqrt(-2 * log(u1))`,
    `t = 6.283185307179586 * u2` (2*pi rounded to f64),
    `z = r * cos(t)` for even `i` and `z = r * sin(t)` for odd `i`,
    `v = mean + std * z`. The result is `v` rounded once to the element type
    (nearest even). Integer steps and `+ - * sqrt` are exact IEEE
    operations; `log`, `cos` and `sin` are the f64 library functions, which
    are accurate to about 1 ulp of f64, so an f32 (or narrower) result
    matches across implementations except in the very rare case that the
    f64 value falls within an ulp or two of an f32 rounding boundary.
  }] # philox;
}

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

/// Shared by the unary classes: `formula` names the result element for input
/// element `x`; `notes` adds op-specific semantics.
class Kiln_UnaryOpBase<string mnemonic, string formula, string notes,
                       TypeConstraint tensor, string kind,
                       string exampleElement, list<Trait> traits>
    : Kiln_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType,
                                             Elementwise, Kiln_Pointwise,
                                             Kiln_ScalarForm])> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` for every element `x` of "
    # kind # " tensor; the result has the operand's type. " # notes
    # "\n\n```mlir\n%y = kiln." # mnemonic # " %x : tensor<4x8x"
    # exampleElement # ">\n```\n";
  let arguments = (ins tensor:$input);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Unary op on f32, bf16 or f16. bf16 and f16 compute in f32 and round the
/// result once, the precision contract of the whole dialect.
class Kiln_UnaryFloatOp<string mnemonic, string formula, string notes = "",
                        list<Trait> traits = []>
    : Kiln_UnaryOpBase<mnemonic, formula,
        !if(!empty(notes), "", notes # " ") # "bf16 and f16 inputs are "
        # "computed in f32 and the result rounded to nearest even.",
        Kiln_FloatTensor, "a floating-point", "bf16", traits>;

/// Unary op on f32, bf16, f16 or i32.
class Kiln_UnaryNumericOp<string mnemonic, string formula, string notes = "",
                          list<Trait> traits = []>
    : Kiln_UnaryOpBase<mnemonic, formula, notes, Kiln_NumericTensor,
                       "an f32, bf16, f16 or i32", "f32", traits>;

def Kiln_NegOp : Kiln_UnaryNumericOp<"neg", "-x",
    "For i32 it wraps (`-(-2^31) = -2^31`).">;
def Kiln_AbsOp : Kiln_UnaryNumericOp<"abs", "|x|",
    "For i32 it wraps (`|-2^31| = -2^31`); for floats it clears the sign bit.">;
def Kiln_SignOp : Kiln_UnaryNumericOp<"sign", "sign(x)",
    "-1 where `x < 0`, 1 where `x > 0`, and `x` itself otherwise (zeros of "
    # "either sign and NaN pass through). Not differentiable.",
    [Kiln_NonDifferentiable]>;
def Kiln_ReluOp : Kiln_UnaryNumericOp<"relu", "max(x, 0)",
    "NaN propagates. The derivative is taken as 0 at `x = 0`.">;

def Kiln_ExpOp : Kiln_UnaryFloatOp<"exp", "exp(x)">;
def Kiln_LogOp : Kiln_UnaryFloatOp<"log", "log(x)",
    "Natural logarithm: `log(0) = -inf`, negative `x` gives NaN.">;
def Kiln_SqrtOp : Kiln_UnaryFloatOp<"sqrt", "sqrt(x)",
    "Negative `x` gives NaN.">;
def Kiln_RsqrtOp : Kiln_UnaryFloatOp<"rsqrt", "1 / sqrt(x)",
    "`rsqrt(0) = +inf`, negative `x` gives NaN.">;
def Kiln_SinOp : Kiln_UnaryFloatOp<"sin", "sin(x)", "`x` in radians.">;
def Kiln_CosOp : Kiln_UnaryFloatOp<"cos", "cos(x)", "`x` in radians.">;
def Kiln_TanhOp : Kiln_UnaryFloatOp<"tanh", "tanh(x)">;
def Kiln_ErfOp : Kiln_UnaryFloatOp<"erf", "erf(x)",
    "The Gauss error function, `2 / sqrt(pi)` times the integral of "
    # "`exp(-t^2)` from 0 to `x`; its derivative is "
    # "`2 / sqrt(pi) * exp(-x^2)`.">;
def Kiln_SigmoidOp : Kiln_UnaryFloatOp<"sigmoid", "1 / (1 + exp(-x))">;
def Kiln_SiluOp : Kiln_UnaryFloatOp<"silu", "x / (1 + exp(-x))",
    "Also called swish: `x * sigmoid(x)`.">;

// Enum attributes print their own leading space, so the op formats below put
// an empty literal (``) before them to avoid a double space.
def Kiln_GeluOp : Kiln_UnaryFloatOp<"gelu", "gelu(x)",
    "With `approximate = none` (the default, omitted in the assembly) the "
    # "exact `0.5 * x * (1 + erf(x / sqrt(2)))`; with `approximate = tanh` "
    # "`0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.">
{
  let arguments = (ins Kiln_FloatTensor:$input,
      DefaultValuedAttr<Kiln_GeluApproximationAttr,
                        "::mlir::kiln::GeluApproximation::none">:$approximate);
  let assemblyFormat =
      "$input (`approximate` `=` `` $approximate^)? attr-dict `:` type($input)";
}

def Kiln_LeakyReluOp : Kiln_UnaryFloatOp<"leaky_relu", "x > 0 ? x : alpha * x",
    "`alpha` (an f64 attribute, default 0.01, omitted in the assembly when "
    # "default) is rounded to f32 before use. NaN propagates.">
{
  let arguments = (ins Kiln_FloatTensor:$input,
                       DefaultValuedAttr<F64Attr, "0.01">:$alpha);
  let assemblyFormat =
      "$input (`alpha` `=` $alpha^)? attr-dict `:` type($input)";
}

def Kiln_FloorOp : Kiln_UnaryFloatOp<"floor", "floor(x)",
    "Largest integer not above `x`. Not differentiable.",
    [Kiln_NonDifferentiable]>;
def Kiln_CeilOp : Kiln_UnaryFloatOp<"ceil", "ceil(x)",
    "Smallest integer not below `x`. Not differentiable.",
    [Kiln_NonDifferentiable]>;
def Kiln_RoundOp : Kiln_UnaryFloatOp<"round", "round(x)",
    "Nearest integer, ties to even (round-half-to-even, as IEEE 754 "
    # "roundToIntegralTiesToEven and numpy.round): 0.5 -> 0, 1.5 -> 2, "
    # "2.5 -> 2, -0.5 -> -0. Not differentiable.", [Kiln_NonDifferentiable]>;

def Kiln_CastOp : Kiln_Op<"cast", [Kiln_Pointwise, Kiln_ScalarForm]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts every element to the result's element type; the shapes must be
    equal. Any kiln element type converts to any other (or to itself):

    - float -> float: round to nearest even (overflow gives inf, NaN stays
      NaN);
    - float -> i32: truncate toward zero; NaN gives 0 and values beyond the
      i32 range saturate to -2^31 or 2^31 - 1;
    - i32 -> float: round to nearest even;
    - anything -> i1: 1 where the value is nonzero (NaN is nonzero), else 0;
    - i1 -> anything: 0 or 1.

    Differentiable only from a float type to a float type (the gradient is
    cast back to the input type); every cast involving i32 or i1 passes no
    gradient.

    ```mlir
    %y = kiln.cast %x : tensor<4xf32> to tensor<4xbf16>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Binary elementwise with numpy broadcasting
//===----------------------------------------------------------------------===//

class Kiln_BinaryOp<string mnemonic, string formula, string notes = "",
                    list<Trait> traits = [],
                    TypeConstraint tensor = Kiln_NumericTensor>
    : Kiln_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor,
                                             Kiln_Pointwise,
                                             Kiln_ScalarForm])> {
  let summary = "elementwise " # formula # " with numpy broadcasting";
  let description = "Computes `" # formula # "` elementwise. The operands "
    # "must have the same element type; their shapes broadcast like numpy "
    # "(trailing dimensions aligned, each pair equal or one of them 1), and "
    # "the result has the broadcast shape and the operands' element type. "
    # notes # "\n\n```mlir\n%z = kiln." # mnemonic
    # " %a, %b : tensor<4x1x8xf32>, tensor<3x1xf32>  // tensor<4x3x8xf32>\n```\n";
  let arguments = (ins tensor:$lhs, tensor:$rhs);
  let results = (outs tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "lhs + rhs",
    "i32 wraps around.", [Commutative]>;
def Kiln_SubOp : Kiln_BinaryOp<"sub", "lhs - rhs", "i32 wraps around.">;
def Kiln_MulOp : Kiln_BinaryOp<"mul", "lhs * rhs",
    "i32 wraps around.", [Commutative]>;
def Kiln_DivOp : Kiln_BinaryOp<"div", "lhs / rhs",
    "Floats follow IEEE 754 (`x / 0` is inf or NaN). i32 truncates toward "
    # "zero, with `x / 0 = 0` and `-2^31 / -1 = -2^31` defined so that every "
    # "backend agrees.">;
def Kiln_PowOp : Kiln_BinaryOp<"pow", "lhs ^ rhs",
    "Floating point only, with the special cases of C's `powf` (a negative "
    # "base with a non-integer exponent gives NaN, `pow(x, 0) = 1`).",
    [], Kiln_FloatTensor>;
def Kiln_MaxOp : Kiln_BinaryOp<"max", "max(lhs, rhs)",
    "A NaN in either operand gives NaN.", [Commutative]>;
def Kiln_MinOp : Kiln_BinaryOp<"min", "min(lhs, rhs)",
    "A NaN in either operand gives NaN.", [Commutative]>;

def Kiln_CompareOp
    : Kiln_Op<"compare", [InferTypeOpAdaptor, Kiln_NonDifferentiable,
                          Kiln_Pointwise, Kiln_ScalarForm]> {
  let summary = "elementwise comparison with numpy broadcasting";
  let description = [{
    Compares `lhs` with `rhs` elementwise under `predicate` (eq, ne, lt, le,
    gt, ge) and gives an i1 mask of the broadcast shape. The operands have the
    same element type (f32, bf16, f16 or i32) and broadcast like numpy.
    Float comparisons are IEEE ordered: any comparison with NaN is false
    except `ne`, which is true. Not differentiable.

    ```mlir
    %m = kiln.compare lt, %a, %b : tensor<4x8xf32>, tensor<8xf32>  // tensor<4x8xi1>
    ```
  }];
  let arguments = (ins Kiln_CmpPredicateAttr:$predicate,
                       Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_MaskTensor:$result);
  let assemblyFormat = "`` $predicate `,` $lhs `,` $rhs attr-dict `:` "
                       "type($lhs) `,` type($rhs)";
}

def Kiln_SelectOp
    : Kiln_Op<"select", [InferTypeOpAdaptor, Kiln_Pointwise, Kiln_ScalarForm]> {
  let summary = "elementwise choice between two tensors by a mask";
  let description = [{
    `result = condition ? true_value : false_value` elementwise. `condition`
    is an i1 mask; `true_value` and `false_value` have the same element type,
    which the result takes. All three shapes broadcast together like numpy
    and the result has the broadcast shape. Differentiable in `true_value`
    and `false_value` (each receives the gradient where it was chosen), not
    in `condition`.

    ```mlir
    %r = kiln.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Kiln_MaskTensor:$condition, Kiln_Tensor:$true_value,
                       Kiln_Tensor:$false_value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$condition `,` $true_value `,` $false_value attr-dict "
    "`:` type($condition) `,` type($true_value) `,` type($false_value)";
}

#endif // KILN_ELEMENTWISE_OPS_TD
