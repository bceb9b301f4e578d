//===- Passes.td - kiln's graph transformations --------------------*- tablegen -*-===//

#ifndef KILN_TRANSFORMS_PASSES_TD
#define KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnFuse : Pass<"kiln-fuse", "mlir::ModuleOp"> {
  let summary = "Groups ops into kiln.fusion regions, one kernel each";
  let description = [{
    In every function, groups the ops into `kiln.fusion` regions:
    - a matmul with the chain of element-wise ops that consume its result
      (bias, activation, residual, cast) as its epilogue (`gemm`);
    - maximal trees of element-wise ops (and index-remapping ops reading
      materialised buffers) into one loop (`pointwise`); a value computed in
      the tree that is also needed later becomes an extra result;
    - each reduction, softmax, norm and loss (`reduction`), attention,
      recurrent and convolution op (`attention`, `rnn`, `conv`) on its own;
    - in the update of `apply_update` and `train_step`, the element-wise
      update of every parameter and optimizer buffer into one multi-tensor
      kernel (`optimizer`).
    Reshapes stay outside (they are views of a buffer, not kernels); splat
    and small constants are copied into the regions that use them. Fusion
    changes the grouping only, never the ops, so results are unchanged.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_TRANSFORMS_PASSES_TD
