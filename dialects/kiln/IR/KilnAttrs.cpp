//===- KilnAttrs.cpp - attributes and enums of the kiln dialect -----------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

#include "dialects/kiln/IR/KilnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/kiln/IR/KilnAttrs.cpp.inc"

void KilnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/kiln/IR/KilnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// InitAttr
//===----------------------------------------------------------------------===//

std::pair<StringRef, StringRef> InitAttr::keyNames(InitKind kind) {
  switch (kind) {
  case InitKind::zeros:
  case InitKind::ones:
    return {"", ""};
  case InitKind::constant:
    return {"value", ""};
  case InitKind::normal:
    return {"mean", "std"};
  case InitKind::uniform:
    return {"low", "high"};
  case InitKind::xavier:
  case InitKind::kaiming:
    return {"gain", ""};
  }
  llvm_unreachable("unknown initialiser kind");
}

std::pair<double, double> InitAttr::defaults(InitKind kind) {
  switch (kind) {
  case InitKind::normal:
    return {0.0, 1.0};
  case InitKind::uniform:
    return {0.0, 1.0};
  case InitKind::xavier:
    return {1.0, 0.0};
  case InitKind::kaiming:
    return {std::sqrt(2.0), 0.0};
  default:
    return {0.0, 0.0};
  }
}

InitAttr InitAttr::get(MLIRContext *context, InitKind kind) {
  auto [first, second] = defaults(kind);
  return get(context, kind, first, second);
}

InitAttr InitAttr::get(MLIRContext *context, InitKind kind, double first,
                       double second) {
  return get(context, kind, llvm::APFloat(first), llvm::APFloat(second));
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, llvm::APFloat firstValue,
                               llvm::APFloat secondValue) {
  double first = firstValue.convertToDouble();
  double second = secondValue.convertToDouble();
  // The runtime draws the values in f32: each bound must be a finite f32.
  auto [firstName, secondName] = keyNames(kind);
  for (auto [name, value] :
       {std::make_pair(firstName, first), std::make_pair(secondName, second)}) {
    if (!std::isfinite(value) ||
        std::fabs(value) > std::numeric_limits<float>::max())
      return emitError() << stringifyInitKind(kind) << " initialiser's "
                         << (name.empty() ? StringRef("value") : name) << " = "
                         << value << " is not a finite f32 (at most "
                         << std::numeric_limits<float>::max()
                         << " in magnitude)";
  }
  switch (kind) {
  case InitKind::normal:
    if (second < 0)
      return emitError() << "normal initialiser needs std >= 0, got " << second;
    break;
  case InitKind::uniform:
    if (!(first < second))
      return emitError() << "uniform initialiser needs low < high, got low = "
                         << first << ", high = " << second;
    break;
  case InitKind::xavier:
  case InitKind::kaiming:
    if (!(first > 0))
      return emitError() << stringifyInitKind(kind)
                         << " initialiser needs gain > 0, got " << first;
    break;
  default:
    break;
  }
  return success();
}

/// Parses `<kind (, key = number)*>`.
Attribute InitAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  SMLoc kindLoc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseKeyword(&kindName))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(kindName);
  if (!kind) {
    parser.emitError(kindLoc) << "unknown initialiser '" << kindName
                              << "'; expected zeros, ones, constant, normal, "
                                 "uniform, xavier or kaiming";
    return {};
  }
  auto [firstKey, secondKey] = keyNames(*kind);
  auto [first, second] = defaults(*kind);
  bool sawFirst = false, sawSecond = false;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    double value;
    if (parser.parseKeyword(&key) || parser.parseEqual() ||
        parser.parseFloat(value))
      return {};
    bool &seen = key == firstKey ? sawFirst : sawSecond;
    if (key.empty() || (key != firstKey && key != secondKey)) {
      InFlightDiagnostic diag = parser.emitError(keyLoc)
                                << "unknown key '" << key << "' for the '"
                                << kindName << "' initialiser";
      if (firstKey.empty())
        diag << "; it takes no values";
      else
        diag << "; expected " << firstKey << (secondKey.empty() ? "" : " or ")
             << secondKey;
      return {};
    }
    if (seen) {
      parser.emitError(keyLoc) << "key '" << key << "' given twice";
      return {};
    }
    seen = true;
    (key == firstKey ? first : second) = value;
  }
  if (*kind == InitKind::constant && !sawFirst) {
    parser.emitError(kindLoc)
        << "the 'constant' initialiser needs 'value = ...'";
    return {};
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(kindLoc); },
                    parser.getContext(), *kind, llvm::APFloat(first),
                    llvm::APFloat(second));
}

static void printValue(AsmPrinter &printer, StringRef key, double value) {
  printer << ", " << key << " = ";
  printer.printFloat(llvm::APFloat(value));
}

void InitAttr::print(AsmPrinter &printer) const {
  auto [firstKey, secondKey] = keyNames(getKind());
  printer << '<' << stringifyInitKind(getKind());
  if (!firstKey.empty())
    printValue(printer, firstKey, getFirstValue());
  if (!secondKey.empty())
    printValue(printer, secondKey, getSecondValue());
  printer << '>';
}
