//===- KilnNNOps.td - neural-network ops, losses, rnn, fusion ----*- tablegen -*-===//

#ifndef KILN_NN_OPS_TD
#define KILN_NN_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

#endif // KILN_NN_OPS_TD
