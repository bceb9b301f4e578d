//===- KilnNNBackwardOps.td - dedicated backward ops -----------------*- tablegen -*-===//

#ifndef KILN_NNBACKWARD_OPS_TD
#define KILN_NNBACKWARD_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

#endif // KILN_NNBACKWARD_OPS_TD
