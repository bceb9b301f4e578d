//===- KilnNaming.h - host-visible names of arguments and results -*- C++
//-*-===//
//
// The naming convention of the kiln dialect's functions: an argument or
// result is named by its `kiln.name`, else by its position ("arg3",
// "result0"); `kiln.role` says what it is to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_KILNNAMING_H
#define KILN_DIALECTS_KILN_IR_KILNNAMING_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir::kiln {

/// The string value of `key` in `attrs`, or "" when absent or not a string.
inline llvm::StringRef stringEntry(DictionaryAttr attrs, llvm::StringRef key) {
  auto value = attrs ? attrs.getAs<StringAttr>(key) : StringAttr();
  return value ? value.getValue() : llvm::StringRef();
}

/// The host-visible name of argument `index`: its `kiln.name`, else "arg<i>".
inline std::string argumentName(func::FuncOp function, unsigned index) {
  if (auto name = function.getArgAttrOfType<StringAttr>(
          index, KilnDialect::kNameAttrName))
    return name.str();
  return "arg" + std::to_string(index);
}

/// The host-visible name of result `index`: its `kiln.name`, else
/// "result<i>".
inline std::string resultName(func::FuncOp function, unsigned index) {
  if (auto name = function.getResultAttrOfType<StringAttr>(
          index, KilnDialect::kNameAttrName))
    return name.str();
  return "result" + std::to_string(index);
}

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_IR_KILNNAMING_H
