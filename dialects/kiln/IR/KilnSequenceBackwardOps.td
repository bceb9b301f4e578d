//===- KilnSequenceBackwardOps.td - dedicated backward ops -----------------*- tablegen -*-===//

#ifndef KILN_SEQUENCEBACKWARD_OPS_TD
#define KILN_SEQUENCEBACKWARD_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

#endif // KILN_SEQUENCEBACKWARD_OPS_TD
