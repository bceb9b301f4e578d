//===- IndexInputs.h - inputs that index classes or table rows --*- C++ -*-===//
//
// The arguments of a function whose values are labels of a kiln.cross_entropy
// or indices of a kiln.embedding (directly or through kiln.reshape, which
// keeps the element order), so that tools can check the values they feed in
// and name the element of the input (and the record of a dataset) that is
// out of range, before the interpreter meets it inside the op.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_INTERPRETER_INDEXINPUTS_H
#define KILN_COMPILER_INTERPRETER_INDEXINPUTS_H

#include "compiler/interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::kiln::ref {

struct IndexInput {
  unsigned argument = 0;
  /// Valid values are [0, bound) and `ignore`.
  int64_t bound = 0;
  std::optional<int64_t> ignore;
  /// The cross_entropy or embedding that reads them.
  Operation *user = nullptr;
};

/// The index inputs of `function`, in the order their users appear.
llvm::SmallVector<IndexInput> findIndexInputs(func::FuncOp function);

/// The flat position of the first value of `values` that `input` does not
/// accept, if any.
std::optional<int64_t> firstBadIndex(const IndexInput &input,
                                     const Tensor &values);

/// "label 12 is outside the 10 classes [0, 10) of kiln.cross_entropy at
/// model.mlir:7:9" for the value `value` of `input`.
std::string describeBadIndex(const IndexInput &input, double value);

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_INDEXINPUTS_H
