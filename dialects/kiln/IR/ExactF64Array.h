//===- ExactF64Array.h - f64 arrays that print back to the same bits ------===//
//
// MLIR prints a DenseF64ArrayAttr with six significant digits, so a scale
// of 4/3 comes back from text as 1.333333 and picks other elements: the
// printed module is another function. Ops whose f64 arrays are exact
// values (kiln.resize's scales) use `custom<ExactF64Array>($attr)`, which
// writes each value with the fewest digits that parse back to the same
// double and reads the same `[a, b, ...]` form.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_EXACTF64ARRAY_H
#define KILN_DIALECTS_KILN_IR_EXACTF64ARRAY_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include <string>

namespace mlir::kiln {

/// The shortest decimal text of `value` (finite) that parses back to it,
/// always with a '.' or an exponent, so that it reads as a float.
std::string exactFloatText(double value);

ParseResult parseExactF64Array(OpAsmParser &parser, DenseF64ArrayAttr &attr);
void printExactF64Array(OpAsmPrinter &printer, Operation *op,
                        DenseF64ArrayAttr attr);

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_IR_EXACTF64ARRAY_H
