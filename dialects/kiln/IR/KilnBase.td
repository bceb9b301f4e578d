//===- KilnBase.td - kiln dialect definition and type constraints -*- tablegen -*-===//
//
// The dialect, the element and tensor type constraints every op uses, and the
// base class of all kiln ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BASE_TD
#define KILN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "dialects/kiln/IR/KilnInterfaces.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::mlir::kiln";
  let summary = "Tensor IR of the kiln training compiler";
  let description = [{
    Ops on builtin ranked tensors with static shapes. Element types are f32,
    bf16, f16 (floating point), i32 (indices, labels, integer arithmetic) and
    i1 (masks, from `kiln.compare`); nothing converts implicitly between
    them (`kiln.cast` does). Every op verifies its operands' shapes and types
    and infers its result type: the types after `:` are the operands', and
    where the result's type does not follow from them it is written after
    `->` (`to` for `kiln.cast`).

    A model is a `func.func` (usually `@loss`) whose result 0 is the rank-0
    float loss that training minimises; further results are outputs for the
    host (an accuracy, predictions). Its arguments are

    - parameters: `kiln.param = #kiln.init<...>` (the initialiser, see
      `InitAttr` below), trained by the optimizer;
    - model state: `kiln.state = #kiln.init<...>`, initialised the same way
      but never differentiated (batch norm running statistics, which
      `kiln.batch_norm ... running` updates);
    - inputs: every other argument, supplied by the caller at each step.

    `kiln.name = "..."` names an argument or result for the host: the
    runtime's inputs and outputs, dataset fields and checkpoint tensors go
    by these names.

    `kiln.value = dense<...>` on a parameter or model state argument gives
    the values it starts from instead of a draw from its initialiser (an
    imported model's weights): an elements attribute of the argument's
    shape, of its element type or a float type that rounds to it (a bf16
    parameter's f32 value is also its f32 master weight's). The training
    and inference entries carry it to the artifact, whose buffer starts
    with those values. `--kiln-resident-constants` also turns large
    constants into arguments of role `constant` with their `kiln.value`.

    Conventions every op follows:

    - Binary elementwise ops (`add`, `sub`, `mul`, `div`, `pow`, `max`,
      `min`, `compare`, `select`) broadcast like numpy: shapes aligned at
      their trailing dimensions, each pair equal or one of them 1.
    - `kiln.matmul %x, %w` is `x @ W`: a linear layer's weight is
      `[in, out]`. (PyTorch's `nn.Linear.weight` is `[out, in]`: pass
      `transpose_rhs`.)
    - `kiln.conv2d`, `kiln.max_pool2d`, `kiln.avg_pool2d` and their
      backward ops require `layout = nchw` or `layout = nhwc` (there is no
      default); the filter follows the activations: `[O, C/groups, KH, KW]`
      for NCHW, `[O, KH, KW, C/groups]` for NHWC.
    - `kiln.attention` takes `[B, H, T, D]`, `kiln.rope` `[B, T, H, D]`,
      `kiln.embedding` a table `[V, D]`, `kiln.rnn` FlashRNN's layouts.
    - Random numbers (`random_uniform`, `random_normal`, `dropout`) are
      counter based (Philox): a pure function of seed, stream and offset, the
      same on the CPU reference and the GPU.

    The guide to writing a model: [writing-models.md](writing-models.md).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the function-argument attribute that marks a parameter.
    static constexpr ::llvm::StringLiteral kParamAttrName = "kiln.param";
    /// Name of the function-argument attribute that marks non-trainable
    /// state (batch norm running statistics): an initialiser, like
    /// kiln.param, but no gradient and no optimizer update.
    static constexpr ::llvm::StringLiteral kStateAttrName = "kiln.state";
    /// Name of the argument/result attribute that gives it a host-visible name.
    static constexpr ::llvm::StringLiteral kNameAttrName = "kiln.name";
    /// What an argument or result is to the runtime (param, state,
    /// optimizer_state, master_weight, constant, input, gradient,
    /// learning_rate, step, loss, statistic, output).
    static constexpr ::llvm::StringLiteral kRoleAttrName = "kiln.role";
    /// On a parameter, state or constant argument: the values it starts
    /// from (a DenseElementsAttr of its shape).
    static constexpr ::llvm::StringLiteral kValueAttrName = "kiln.value";
    /// On a result: the index of the argument it replaces, so the runtime can
    /// update that buffer in place.
    static constexpr ::llvm::StringLiteral kUpdatesAttrName = "kiln.updates";

  private:
    void registerAttributes();
    void registerOps();
  public:
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Kiln_FloatElement : AnyTypeOf<[F32, BF16, F16], "f32, bf16 or f16">;
def Kiln_AnyElement : AnyTypeOf<[F32, BF16, F16, I32, I1],
                                "f32, bf16, f16, i32 or i1">;

def Kiln_Tensor : StaticShapeTensorOf<[F32, BF16, F16, I32, I1]>;
def Kiln_FloatTensor : StaticShapeTensorOf<[F32, BF16, F16]>;
def Kiln_NumericTensor : StaticShapeTensorOf<[F32, BF16, F16, I32]>;
def Kiln_IndexTensor : StaticShapeTensorOf<[I32]>;
def Kiln_MaskTensor : StaticShapeTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

/// The op has no gradient: autodiff treats the gradient through it as zero
/// (compare, floor, ceil, round, sign, argmax, integer ops, ...).
def Kiln_NonDifferentiable : NativeOpTrait<"kiln::NonDifferentiable">;

//===----------------------------------------------------------------------===//
// Op classes
//===----------------------------------------------------------------------===//
//
// How an op maps onto kernels, read by the fusion pass and the code
// generator (compiler/transforms/OpClasses.h). Every kiln op has exactly one
// class; OpClasses_test checks that over the registered dialect.

/// Element i of the result reads only element i (numpy-broadcast) of each
/// operand, and possibly its own position (iota, random ops, dropout, triu,
/// tril): such ops fuse into one loop.
def Kiln_Pointwise : NativeOpTrait<"kiln::Pointwise">;

/// Reads its operands at positions computed from the result element's,
/// `readsPerElement` positions of an operand per result element.
class Kiln_RemapsOperands<int readsPerElement = 1>
    : TraitList<[
        NativeOpTrait<"kiln::RemapsOperands", [],
          "static int64_t getRemappedReadsPerElement() { return "
          # readsPerElement # "; }">,
        Kiln_RemapsOperandsOpInterface]>;

/// Layout op: pointwise over the result, but its operands are read at
/// remapped positions (transpose, slice, flip, pad, concat, rope,
/// embedding): a kernel loads them there, or computes them there.
class Kiln_Layout<int readsPerElement = 1>
    : TraitList<[NativeOpTrait<"kiln::Layout">,
                 Kiln_RemapsOperands<readsPerElement>]>;

/// Changes only the shape of a contiguous buffer: an alias, no kernel.
def Kiln_View : NativeOpTrait<"kiln::View">;

/// Reduces over dims or rows: reductions, softmax, norms, losses.
def Kiln_Reduces : NativeOpTrait<"kiln::Reduces">;

/// A matrix product: its element-wise consumers fuse as an epilogue.
def Kiln_Gemm : NativeOpTrait<"kiln::Gemm">;

/// Has a kernel family of its own: the op alone becomes a `kiln.fusion` of
/// kind `kind`.
class Kiln_DedicatedKernel<string kind>
    : TraitList<[
        NativeOpTrait<"kiln::DedicatedKernel", [],
          "static ::llvm::StringRef getFusionKind() { return \""
          # kind # "\"; }">,
        Kiln_DedicatedKernelOpInterface]>;

/// No computation of its own: kiln.fusion and its terminator.
def Kiln_Structural : NativeOpTrait<"kiln::Structural">;

/// Not a class but a capability: the ScalarEmitter computes one element of
/// the result from elements of the operands (every pointwise and layout op,
/// and reshape), so the op can live in pointwise kernels and in the fused
/// prologues and epilogues of the others.
def Kiln_ScalarForm : NativeOpTrait<"kiln::ScalarForm">;

//===----------------------------------------------------------------------===//
// Base op
//===----------------------------------------------------------------------===//

/// Every kiln op is free of side effects: randomness is counter based and a
/// pure function of its seed, stream and offset. Gradient rules are attached
/// to the ops as external models of GradientOpInterface
/// (dialects/kiln/Gradients), one file per op family.
/// Their tensors fit a device buffer (KilnTraits.h's kMaxTensorBytes), which
/// the verifier checks at the user's op before any pass sizes a buffer.
def Kiln_BoundedTensorSizes : NativeOpTrait<"kiln::BoundedTensorSizes">;
class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic,
         !listconcat(traits, [Pure, Kiln_BoundedTensorSizes])>;

#endif // KILN_BASE_TD
