//===- ValueRanges.h - the values an entry's index inputs may hold -*- C++
//-*-===//
//
// An entry input used as the labels of kiln.cross_entropy over C classes may
// hold [0, C) and the op's ignore_index, if it has one; one used as the
// indices of
// kiln.embedding with V rows [0, V): outside that range the kernels' results
// are unspecified. The artifact records the range (ValueRange in
// runtime/artifact) so that the runtime's tools check inputs against it
// before they reach the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_ARTIFACT_VALUERANGES_H
#define KILN_CODEGEN_ARTIFACT_VALUERANGES_H

#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::kiln::codegen {

struct IndexRange {
  int64_t low = 0;
  int64_t high = 0; // one past the largest valid value
  std::optional<int64_t> ignoreIndex;
  /// What the values index, for messages: "labels of kiln.cross_entropy over
  /// 10 classes".
  std::string use;
};

/// The values `input` may hold, from every op that reads them as labels or
/// indices (following them through kiln.fusion regions and through the ops
/// that move values without changing them: reshape, transpose, slice,
/// broadcast_to, flip, concat). Several such uses give the values all of
/// them allow. Nothing when no use constrains the values.
std::optional<IndexRange> validRangeOf(Value input);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_ARTIFACT_VALUERANGES_H
