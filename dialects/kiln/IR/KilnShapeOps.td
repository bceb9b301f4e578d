//===- KilnShapeOps.td - shape ops, reductions, matmul -----------*- tablegen -*-===//

#ifndef KILN_SHAPE_OPS_TD
#define KILN_SHAPE_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, string what, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor])> {
  let summary = what # " over the given dimensions";
  let description = "Reduces `dims` (each in [0, rank), no repeats) with "
    # what # ". With `keepdim` the reduced dimensions stay as size 1; "
    # "reducing every dimension without it gives a rank-0 tensor, the "
    # "reduction over all elements.";
  let arguments = (ins Kiln_NumericTensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat =
      "$input `dims` `=` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input)";
}

def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", "sum">;

#endif // KILN_SHAPE_OPS_TD
