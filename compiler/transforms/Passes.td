//===- Passes.td - kiln's graph transformations --------------------*- tablegen -*-===//

#ifndef KILN_TRANSFORMS_PASSES_TD
#define KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnFuse : Pass<"kiln-fuse", "mlir::ModuleOp"> {
  let summary = "Groups ops into kiln.fusion regions, one kernel each";
  let description = [{
    In every function, groups the ops into `kiln.fusion` regions:
    - a matmul with the chain of element-wise ops that consume its result
      (bias, activation, residual, cast, a loss gradient) as its epilogue,
      with element-wise side computations and constants that only the
      epilogue needs (`gemm`); ops in between that feed nothing of it (a
      loss reduction) move below it;
    - maximal trees of element-wise ops and index-remapping ops into one
      loop (`pointwise`); a value computed in the tree that is also needed
      later becomes an extra result; what a transpose, slice, flip, reshape
      or rope reads is computed at the remapped positions when nothing else
      needs it (a chain of layout and element-wise ops is one loop);
    - each primitive reduction (reduce_sum/mean/max/min) with its prologue
      (the element-wise ops computing its input; a value also needed later
      becomes an extra result) and epilogue (element-wise ops on its result,
      the ops broadcasting it back over the same rows and the later
      reductions over them: softmax, norms and losses written from
      primitives), and the whole-tensor reductions of several tensors that
      can run together (a global gradient norm and statistics) in one
      multi-tensor kernel (`reduction`);
    - each softmax, norm and loss op (`reduction`), attention, recurrent and
      convolution op (`attention`, `rnn`, `conv`) on its own; attention with
      the transposes of its operands and results that keep the head dim
      innermost (its kernels address memory through strides);
    - in the update of `apply_update` and `train_step`, the element-wise
      update of every parameter and optimizer buffer into one multi-tensor
      kernel (`optimizer`), except an update that must run before another
      (one reads a view of what the other computes);
    - then, horizontally: matmuls of one shape that share an operand into
      one grouped `gemm` launch, independent pointwise kernels into one.
    A matmul operand that a transpose of its last two dimensions defines
    first reads the transpose's input under the matmul's transpose flag
    (the GEMM takes it M- or N-major, no copy). A matmul over K = 1 (an
    outer product) becomes the broadcast multiply
    of its operands first, which computes the same elements with the same
    single rounding, and fuses as one; a matmul with one result row or
    column over K > 1 (a matrix-vector product) becomes the multiply of
    its operands widened to f32, summed over K and rounded once, and fuses
    as one reduction. An attention_backward of an attention op's result
    (same operands, mask and scale) reads the row log-sum-exp that the
    forward op then yields (`with_row_lse`), instead of recomputing it.
    Reshapes stay outside (they are views of a buffer, not kernels), each
    moved down to just before its first reader first, so that a view does
    not stand between ops that could share a kernel; splat and small
    constants are copied into the regions that use them. Fusion
    changes the grouping only, and moves or duplicates ops only where that
    is exact (layout ops, ops that keep their operands), so results are
    unchanged.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def KilnPlanMemory : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Assigns every tensor of every entry a device buffer";
  let description = [{
    After fusion, gives each value of each function a place in memory and
    records it as attributes for the code generator and the runtime:
    - parameters, master weights, optimizer state and constants (role
      `constant`, kiln-resident-constants) are resident buffers named like
      the argument; a result marked `kiln.updates` is written into
      the buffer of the argument it replaces (in place);
    - gradients (results of forward_backward, arguments of apply_update) are
      resident buffers `grad.<param>`, so host code can read and edit them
      between the two entries;
    - every other value (inputs, intermediates, loss, statistics) gets an
      offset in the entry's arena, from liveness intervals over the fused
      program: values whose lifetimes do not overlap share bytes, and a
      pointwise kernel may write its result over an operand of the same size
      that dies there. Reshapes alias their operand's buffer.
    Each fusion gets `kiln.buffers` (one entry per result), each reshape
    `kiln.buffers` (its alias), each argument `kiln.buffer`, and each
    function `kiln.arena_size` and `kiln.peak_live_bytes` (the largest sum
    of live tensor sizes at any point, which the arena never needs to exceed).
    With `reuse-delay=N`, the bytes of a tensor of at most 1 MiB stay
    reserved (and count as live) through the N kernels after its last use,
    so that the next kernel may run beside its last reader (kilnc's launch
    merging uses 1); larger tensors, read by kernels that are not
    launch-bound, are reused at once.
  }];
  let options = [
    Option<"reuseDelay", "reuse-delay", "unsigned", /*default=*/"0",
           "kernels after a tensor's last use before its bytes are reused">,
  ];
}

def KilnResidentConstants : Pass<"kiln-resident-constants", "mlir::ModuleOp"> {
  let summary = "Makes large constants resident buffers that the artifact "
                "holds as data";
  let description = [{
    In every function, each `kiln.constant` of more than
    `max-inline-elements` elements that are not all equal (an inference
    model's weights, a table) becomes an argument with
    `kiln.role = "constant"` and its values as `kiln.value`: a resident
    buffer (role CONSTANT) whose values the artifact carries in its data
    section and the runtime uploads once, read by the kernels like a
    parameter, instead of a table in kernel code or a kernel that fills a
    buffer on every call. The buffer is named by the constant's `kiln.name`
    (the ONNX importer names the constants of initializers) or
    `constant.<k>`, never a name the module already uses; the same values
    under the same name are one buffer for every function. Splats and small
    tables stay in the kernels that evaluate them; so does a constant the
    function returns (its result needs a buffer of its own).
  }];
  let options = [
    Option<"maxInlineElements", "max-inline-elements", "int64_t",
           /*default=*/"16",
           "the most elements of a constant that kernels carry in their "
           "code">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def KilnRecompute : Pass<"kiln-recompute", "mlir::ModuleOp"> {
  let summary = "Recomputes cheap activations in the backward to fit a "
                "memory budget";
  let description = [{
    Before fusion, for each training entry (forward_backward, train_step)
    whose device memory (every resident buffer of the module plus the
    entry's arena, as kiln-plan-memory will plan them; workspaces that code
    generation adds are not counted) exceeds `memory-budget` bytes: a tensor
    computed by a
    pointwise op or a norm and read again much later (in the backward) is
    computed a second time just before that later read, from operands that
    are still live there anyway, instead of being kept across the gap.
    Candidates are tried largest first; each is kept only if the planned
    arena shrinks, until the budget is met. The results are the same: the
    recomputed op is a copy of the first. Each function gets
    `kiln.recomputed`, one entry per copy (the op, its bytes, the arena
    before and after), which kilnc --stats prints; a budget that cannot be
    met is a warning that says how far off the plan is.
  }];
  let options = [
    Option<"memoryBudget", "memory-budget", "::mlir::kiln::ByteCount",
           /*default=*/"0",
           "device bytes a training step may use, e.g. 437MiB (0: no "
           "budget)">,
    Option<"reuseDelay", "reuse-delay", "unsigned", /*default=*/"0",
           "as kiln-plan-memory's, so that the arenas measured are the "
           "ones the plan will have">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def KilnAssignLayouts : Pass<"kiln-assign-layouts", "mlir::ModuleOp"> {
  let summary = "Runs convolutional graphs channels-last inside";
  let description = [{
    Rewrites a loss function (before --kiln-make-train-step, so that the
    backward follows) so that its convolutional regions run channels-last
    (NHWC) whatever layout the source wrote: a region is a set of rank-4
    activations connected through ops that can hold either layout
    (convolutions, pooling, batch norm over channels, resize, pad, concat,
    element-wise ops, reductions that keep their remaining dims in order),
    and one that holds an NCHW convolution runs NHWC end to end. Filters are
    read through a transpose to `[O, KH, KW, C]`; a per-channel operand of an
    element-wise op (a bias `[C, 1, 1]`) is reshaped and transposed along.
    A layout change remains only where a value enters or leaves a region:
    the user's inputs and outputs and ops that must see NCHW (reshape,
    flatten, matmul, group norm, ...), each one transpose, and transposes of
    transposes fold into one. Results are unchanged up to the order of
    floating-point sums.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "Name of the loss function">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def KilnMixedPrecision : Pass<"kiln-mixed-precision", "mlir::ModuleOp"> {
  let summary = "Stores parameters and activations in bf16 or f16";
  let description = [{
    Rewrites a loss function (before --kiln-make-train-step) so that every f32
    tensor it holds, parameters and activations, is stored in `precision`
    (bf16 or f16). Kernels still compute in f32 (they load, compute and round
    once on store), and the training step then keeps f32 master weights and
    f32 optimizer state for the narrow parameters. Data inputs stay f32 for
    the host and are converted on entry; the loss is returned in f32. Model
    state (`kiln.state`, batch norm running statistics) stays f32, and so do
    the updated statistics of kiln.batch_norm: small momentum updates would
    round away in bf16.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "Name of the loss function">,
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "bf16 or f16">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_TRANSFORMS_PASSES_TD
