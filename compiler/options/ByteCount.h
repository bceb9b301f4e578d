//===- ByteCount.h - byte counts as pass options ----------------*- C++ -*-===//
//
// The type of the passes' byte-count options (memory-budget, bucket-bytes,
// first-bucket-bytes): a uint64_t that llvm::cl parses with units, "437MiB",
// as kilnc's flags are (tools/common/byte_count.h), so that
//   kiln-opt --kiln-pipeline="memory-budget=437MiB"
// means what kilnc --memory-budget=437MiB does. Declared in ODS as
//   Option<"memoryBudget", "memory-budget", "::mlir::kiln::ByteCount", "0",
//          ...>
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_OPTIONS_BYTECOUNT_H
#define KILN_COMPILER_OPTIONS_BYTECOUNT_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mlir::kiln {

/// A number of bytes; converts to and from uint64_t. Not final: llvm::cl
/// derives the storage of class-typed options from it.
struct ByteCount {
  ByteCount(uint64_t bytes = 0) : bytes(bytes) {}
  operator uint64_t() const { return bytes; }
  uint64_t bytes;
};

/// In the largest binary unit that divides it ("25MiB"), as pipelines print.
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, ByteCount count);

} // namespace mlir::kiln

namespace llvm::cl {

template <>
class parser<mlir::kiln::ByteCount>
    : public basic_parser<mlir::kiln::ByteCount> {
public:
  parser(Option &option) : basic_parser(option) {}

  /// A byte count with an optional unit; an error naming the option and
  /// the syntax otherwise.
  bool parse(Option &option, StringRef argName, StringRef arg,
             mlir::kiln::ByteCount &value);
  StringRef getValueName() const override { return "bytes"; }
  void printOptionDiff(const Option &option, mlir::kiln::ByteCount value,
                       const OptionValue<mlir::kiln::ByteCount> &defaultValue,
                       size_t globalWidth) const;
  void anchor() override;
};

} // namespace llvm::cl

#endif // KILN_COMPILER_OPTIONS_BYTECOUNT_H
