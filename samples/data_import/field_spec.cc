#include "samples/data_import/field_spec.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::data_import {
namespace {

absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("field '", text, "': ", why,
                   " (want NAME[=SOURCE][:f32|i32|class][@SHAPE])"));
}

}  // namespace

absl::string_view FieldDTypeName(FieldDType dtype) {
  switch (dtype) {
    case FieldDType::kF32:
      return "f32";
    case FieldDType::kI32:
      return "i32";
    case FieldDType::kClass:
      return "class";
  }
  return "?";
}

absl::StatusOr<FieldSpec> ParseFieldSpec(absl::string_view text) {
  FieldSpec spec;
  absl::string_view rest = text;
  // The suffixes come off from the right: @SHAPE, then :DTYPE.
  if (size_t at = rest.rfind('@'); at != absl::string_view::npos) {
    absl::string_view shape = rest.substr(at + 1);
    rest = rest.substr(0, at);
    spec.shape.emplace();
    for (absl::string_view extent : absl::StrSplit(shape, 'x')) {
      int64_t value = 0;
      if (!absl::SimpleAtoi(extent, &value) || value < 0) {
        return Bad(text, absl::StrCat("shape '", shape,
                                      "' is not extents joined by 'x'"));
      }
      spec.shape->push_back(value);
    }
  }
  if (size_t colon = rest.rfind(':'); colon != absl::string_view::npos) {
    absl::string_view dtype = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (dtype == "f32") {
      spec.dtype = FieldDType::kF32;
    } else if (dtype == "i32") {
      spec.dtype = FieldDType::kI32;
    } else if (dtype == "class") {
      spec.dtype = FieldDType::kClass;
    } else {
      return Bad(text,
                 absl::StrCat("dtype '", dtype, "' is not f32, i32 or class"));
    }
  }
  const size_t equals = rest.find('=');
  spec.name = std::string(rest.substr(0, equals));
  spec.source = equals == absl::string_view::npos
                    ? spec.name
                    : std::string(rest.substr(equals + 1));
  if (spec.name.empty()) return Bad(text, "the field has no name");
  if (spec.source.empty()) return Bad(text, "the source is empty");
  for (absl::string_view item : absl::StrSplit(spec.source, ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(item, "..");
    if (ends.size() > 2 || ends[0].empty() || ends.back().empty()) {
      return Bad(text,
                 absl::StrCat("'", item, "' is not a column or a range a..b"));
    }
    spec.columns.push_back({std::string(ends[0]), std::string(ends.back())});
  }
  return spec;
}

}  // namespace kiln::data_import
