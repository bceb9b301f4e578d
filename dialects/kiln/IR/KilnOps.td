//===- KilnOps.td - all ops of the kiln dialect ------------------*- tablegen -*-===//
//
// One tablegen unit for every op, split by family into the included files.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"
include "dialects/kiln/IR/KilnElementwiseOps.td"
include "dialects/kiln/IR/KilnShapeOps.td"
include "dialects/kiln/IR/KilnNNOps.td"
include "dialects/kiln/IR/KilnNNBackwardOps.td"
include "dialects/kiln/IR/KilnSequenceBackwardOps.td"
include "dialects/kiln/IR/KilnCustomOps.td"

#endif // KILN_OPS_TD
