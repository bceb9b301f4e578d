//===- KilnElementwiseOps.td - constants, randomness, elementwise -*- tablegen -*-===//

#ifndef KILN_ELEMENTWISE_OPS_TD
#define KILN_ELEMENTWISE_OPS_TD

include "dialects/kiln/IR/KilnBase.td"
include "dialects/kiln/IR/KilnAttrs.td"

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

class Kiln_UnaryFloatOp<string mnemonic, string formula, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType])> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` for every element of a "
                    # "floating-point tensor; the result has the operand's type.";
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Kiln_ExpOp : Kiln_UnaryFloatOp<"exp", "exp(x)">;

//===----------------------------------------------------------------------===//
// Binary elementwise with numpy broadcasting
//===----------------------------------------------------------------------===//

class Kiln_BinaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor])> {
  let summary = "elementwise " # formula # " with numpy broadcasting";
  let description = "Computes `" # formula # "` elementwise. The operands "
    # "must have the same element type; their shapes broadcast like numpy "
    # "(trailing dimensions aligned, each pair equal or one of them 1).";
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "lhs + rhs", [Commutative]>;

#endif // KILN_ELEMENTWISE_OPS_TD
