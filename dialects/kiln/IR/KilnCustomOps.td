//===- KilnCustomOps.td - user kernels: kiln.custom and its backward -*- tablegen -*-===//
//
// The seam through which a team adds an op of its own to kiln: a CUDA C++
// file of the user's, compiled ahead of time with the built-in kernels.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CUSTOM_OPS_TD
#define KILN_CUSTOM_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "mlir/IR/OpBase.td"

/// The tensors a user kernel reads and writes: float storage types and i32.
def Kiln_CustomTensor : StaticShapeTensorOf<[F32, BF16, F16, I32]>;

def Kiln_CustomOp : Kiln_Op<"custom", [Kiln_DedicatedKernel<"custom">]> {
  let summary = "an op computed by a CUDA kernel of the user's";
  let description = [{
    Runs the device function template `forward` of the user's CUDA C++ file
    `source` as a kernel of its own. The result shapes and element types are
    the op's result types: the IR states them, kiln trusts them, and the
    kernel must write every element of every output.

    `source` is resolved, when kilnc generates code, against the directory
    of the IR file the op comes from, then against the directories given
    with `kilnc -I DIR` (in order); an absolute path is used as it is. The
    file's text becomes part of the kernel's source, so editing it misses
    the kernel cache. It includes `"kiln/custom_op.cuh"`, which defines the
    ABI (codegen/cuda/kernels/custom_op.cuh):

    ```c++
    #include "kiln/custom_op.cuh"
    template <class Args> __device__ void my_forward(const Args &args);
    ```

    `Args` is a struct kilnc generates for the op: `args.ctx` (the launch
    context: block and thread position, grid and block sizes),
    `args.in0`, `args.in1`, ... (`kiln::custom::tensor<const T>`, one per
    input) and `args.out0`, ... (`kiln::custom::tensor<T>`, one per
    result), each with `data`, `numel`, `rank` and `shape[]` of a dense
    row-major buffer; `Args::params` holds `params` as `static constexpr`
    members (an integer as `long long`, an f32 as `float`, an f64 as
    `double`), `Args::num_inputs` and `Args::num_outputs` count the tensors.
    The kernel is launched one-dimensionally with `block_size` threads per
    block (default 256, a multiple of 32 up to 1024) and a grid sized by the
    largest output but capped at a few waves of the GPU, so the kernel must
    cover its work with grid-stride loops (`kiln::custom::for_each`) and
    must not depend on the number of blocks.

    `backward` names a second function template (in the file
    `backward_from` names, by default the same one) that computes the gradients: see
    `kiln.custom_backward`. Without `backward` the op is not
    differentiable, and autodiff reports an error at the op when a gradient
    must flow through it.

    Element types: f32, bf16, f16 and i32, each tensor its own; kiln inserts
    no casts. `--precision=bf16|f16` stores the op's f32 tensors in the
    narrow type like every op's, and the kernel is then instantiated for
    those types (`kiln::custom::load` and `store` convert to and from f32);
    a kernel that supports only some types says so with a `static_assert`.
    i32 inputs receive no gradient.

    The kernel must be a pure function of its inputs (like every kiln op)
    and reads no memory but its inputs. The CPU reference (kiln-ref) cannot
    run it and reports an error at the op. Fusion fuses nothing into it.

    ```mlir
    %y = kiln.custom "scaled_sq_relu" from "scaled_sq_relu.cu" (%x, %s)
        backward "scaled_sq_relu_grad" params {slope = 5.0e-01 : f32}
        block_size = 128 : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_CustomTensor>:$inputs,
                       StrAttr:$forward, StrAttr:$source,
                       OptionalAttr<StrAttr>:$backward,
                       OptionalAttr<StrAttr>:$backward_source,
                       OptionalAttr<DictionaryAttr>:$params,
                       DefaultValuedAttr<I64Attr, "256">:$block_size);
  let results = (outs Variadic<Kiln_CustomTensor>:$outputs);
  let assemblyFormat = [{
    $forward `from` $source ` ` `(` $inputs `)`
    (`backward` $backward^)? (`backward_from` $backward_source^)?
    (`params` $params^)? (`block_size` `=` $block_size^)?
    attr-dict `:` functional-type($inputs, $outputs)
  }];
  let extraClassDeclaration = [{
    /// The rank limit of the ABI's tensors (kiln::custom::max_rank of
    /// codegen/cuda/kernels/custom_abi.cuh).
    static constexpr int64_t kMaxRank = 8;
    /// The inputs that have a gradient (the floating-point ones), by index.
    static ::llvm::SmallVector<unsigned>
    differentiableInputs(::mlir::TypeRange inputTypes);
    /// The file of the backward function: `backward_source`, else `source`.
    ::llvm::StringRef getBackwardSourceOrDefault() {
      return getBackwardSource() ? *getBackwardSource() : getSource();
    }
  }];
  let hasVerifier = 1;
}

def Kiln_CustomBackwardOp : Kiln_Op<"custom_backward",
    [AttrSizedOperandSegments, Kiln_DedicatedKernel<"custom">]> {
  let summary = "the gradients of a kiln.custom, by a CUDA kernel of the user's";
  let description = [{
    What autodiff makes of a `kiln.custom` with a `backward`: runs the
    device function template `backward` of `source` (resolved like the
    forward's) with the forward op's inputs, its outputs and the gradients
    of its outputs, and writes the gradients of its floating-point inputs.

    ```c++
    template <class Args> __device__ void my_backward(const Args &args);
    ```

    `Args` has `ctx`, `in0`, ... (the forward inputs), `out0`, ... (the
    forward outputs, read-only here), `grad_out0`, ... (the gradient of
    each output, read-only, shaped like it) and `grad_in<i>` for every
    floating-point input `i` (written; shaped and typed like input `i`;
    an i32 input has none), plus `params`, `num_inputs` and `num_outputs`
    as in the forward. Launch and grid-stride contract as for
    `kiln.custom`: the grid is sized by the largest gradient written.

    The results are the input gradients, one per floating-point input, in
    input order. A forward output whose gradient does not reach the loss
    gets a zero gradient. The op itself has no gradient.

    ```mlir
    %dx, %ds = kiln.custom_backward "scaled_sq_relu_grad" from "scaled_sq_relu.cu"
        inputs (%x, %s) outputs (%y) output_grads (%dy)
        params {slope = 5.0e-01 : f32} block_size = 128
        : (tensor<64x32xf32>, tensor<32xf32>, tensor<64x32xf32>,
           tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins Variadic<Kiln_CustomTensor>:$inputs,
                       Variadic<Kiln_CustomTensor>:$outputs,
                       Variadic<Kiln_CustomTensor>:$output_grads,
                       StrAttr:$backward, StrAttr:$source,
                       OptionalAttr<DictionaryAttr>:$params,
                       DefaultValuedAttr<I64Attr, "256">:$block_size);
  let results = (outs Variadic<Kiln_CustomTensor>:$input_grads);
  let assemblyFormat = [{
    $backward `from` $source `inputs` `(` $inputs `)` `outputs` `(` $outputs `)`
    `output_grads` `(` $output_grads `)`
    (`params` $params^)? (`block_size` `=` $block_size^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // KILN_CUSTOM_OPS_TD
