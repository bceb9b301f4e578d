// The values kiln-run hands an entry, checked on the host: tensors converted
// to the artifact's storage type (i64 narrowed to i32 with a range check,
// f32 rounded to bf16 or f16), labels and indices checked against the values
// the compiler recorded for them (artifact::ValueRange), each error naming
// where the value is and what it is.
#ifndef KILN_TOOLS_KILN_RUN_INPUT_VALUES_H_
#define KILN_TOOLS_KILN_RUN_INPUT_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "kiln/dataset.h"
#include "runtime/artifact/artifact.h"
#include "runtime/io/safetensors.h"

namespace kiln {

// `t` as `dtype` with the same shape: unchanged when it already is; i64 to
// i32 when every value fits (else InvalidArgument naming `what`, the
// element and the value); f32 to bf16 or f16 rounded to nearest even. Any
// other pair is InvalidArgument naming both types.
absl::StatusOr<io::HostTensor> ConvertTo(DType dtype, io::HostTensor t,
                                         absl::string_view what);

// OK when every value of the i32 tensor `t` lies in `range`; otherwise
// InvalidArgument naming `what`, the element, the value, the range and what
// it indexes.
absl::Status CheckRange(const io::HostTensor& t,
                        const artifact::ValueRange& range,
                        absl::string_view what);

// A dataset field (as the batch loader lays it out, i32) and the values it
// may hold.
struct FieldRange {
  io::DatasetField field;
  artifact::ValueRange range;
};

// OK when every value of the `ranges`' fields in `records` (indices.size()
// records of `record_bytes`, the i-th being record indices[i] of `dataset`)
// lies in its range; otherwise InvalidArgument naming the dataset, the
// record, the field, the element, the value and the range.
absl::Status CheckRecords(const std::string& dataset, uint64_t record_bytes,
                          const std::vector<FieldRange>& ranges,
                          const uint8_t* records,
                          absl::Span<const uint64_t> indices);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_INPUT_VALUES_H_
