// A FIELD argument of `make_dataset --from`: which values make one field
// of the records, as what dtype and per-record shape (docs/data-formats.md).
//
//   NAME[=SOURCE][:DTYPE][@SHAPE]
//
// SOURCE is a tensor name (tensor files) or a list of CSV columns, single
// names and inclusive ranges `a..b`, comma-separated; DTYPE f32, i32 or
// class; SHAPE extents joined by 'x' (`1x8x8`).

#ifndef KILN_SAMPLES_DATA_IMPORT_FIELD_SPEC_H_
#define KILN_SAMPLES_DATA_IMPORT_FIELD_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::data_import {

enum class FieldDType { kF32, kI32, kClass };

// One CSV column or an inclusive range of them, by header name.
struct ColumnRange {
  std::string first;
  std::string last;  // == first for one column
};

struct FieldSpec {
  std::string name;
  std::string source;                // as written; NAME when left out
  std::vector<ColumnRange> columns;  // SOURCE read as CSV columns
  std::optional<FieldDType> dtype;   // the source's kind decides when absent
  std::optional<std::vector<int64_t>> shape;  // per record
};

// Parses one FIELD argument; InvalidArgument saying what is wrong with it.
absl::StatusOr<FieldSpec> ParseFieldSpec(absl::string_view text);

absl::string_view FieldDTypeName(FieldDType dtype);

}  // namespace kiln::data_import

#endif  // KILN_SAMPLES_DATA_IMPORT_FIELD_SPEC_H_
