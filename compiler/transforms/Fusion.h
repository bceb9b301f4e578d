//===- Fusion.h - grouping ops into kernels ----------------------*- C++
//-*-===//

#ifndef KILN_COMPILER_TRANSFORMS_FUSION_H
#define KILN_COMPILER_TRANSFORMS_FUSION_H

#include "compiler/options/ByteCount.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

/// Groups the ops of `function` into kiln.fusion regions (see --kiln-fuse).
LogicalResult fuseFunction(func::FuncOp function);

#define GEN_PASS_DECL_KILNFUSE
#include "compiler/transforms/Passes.h.inc"

#define GEN_PASS_DECL_KILNPLANMEMORY
#define GEN_PASS_DECL_KILNMIXEDPRECISION
#define GEN_PASS_DECL_KILNASSIGNLAYOUTS
#define GEN_PASS_DECL_KILNRECOMPUTE
#define GEN_PASS_DECL_KILNRESIDENTCONSTANTS
#define GEN_PASS_REGISTRATION
#include "compiler/transforms/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_FUSION_H
