//===- ByteCount.cpp - byte counts as pass options ------------------------===//

#include "compiler/options/ByteCount.h"

#include "tools/common/byte_count.h"

namespace mlir::kiln {

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, ByteCount count) {
  return os << ::kiln::FormatByteCount(count.bytes);
}

} // namespace mlir::kiln

namespace llvm::cl {

bool parser<mlir::kiln::ByteCount>::parse(Option &option, StringRef argName,
                                          StringRef arg,
                                          mlir::kiln::ByteCount &value) {
  std::optional<uint64_t> bytes =
      ::kiln::ParseByteCount(std::string_view(arg.data(), arg.size()));
  if (!bytes)
    return option.error("'" + arg + "' is not " + ::kiln::kByteCountSyntax,
                        argName);
  value = *bytes;
  return false;
}

void parser<mlir::kiln::ByteCount>::printOptionDiff(
    const Option &option, mlir::kiln::ByteCount value,
    const OptionValue<mlir::kiln::ByteCount> &defaultValue,
    size_t globalWidth) const {
  printOptionName(option, globalWidth);
  outs() << "= " << value << "\n";
}

void parser<mlir::kiln::ByteCount>::anchor() {}

} // namespace llvm::cl
