//===- ExactF64Array.cpp - f64 arrays that print back to the same bits ----===//

#include "dialects/kiln/IR/ExactF64Array.h"

#include <cstdio>
#include <cstdlib>

namespace mlir::kiln {

std::string exactFloatText(double value) {
  char text[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  std::string s = text;
  if (s.find_first_of(".eEn") == std::string::npos) // "2" -> "2.0"
    s += ".0";
  return s;
}

ParseResult parseExactF64Array(OpAsmParser &parser, DenseF64ArrayAttr &attr) {
  SmallVector<double> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        double value;
        if (parser.parseFloat(value))
          return failure();
        values.push_back(value);
        return success();
      }))
    return failure();
  attr = DenseF64ArrayAttr::get(parser.getContext(), values);
  return success();
}

void printExactF64Array(OpAsmPrinter &printer, Operation *,
                        DenseF64ArrayAttr attr) {
  printer << '[';
  llvm::interleaveComma(attr.asArrayRef(), printer.getStream(),
                        [&](double v) { printer << exactFloatText(v); });
  printer << ']';
}

} // namespace mlir::kiln
