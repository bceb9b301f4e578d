#include "samples/data_import/import.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln::data_import {
namespace {

// Why `value` cannot be an f32 of a dataset, or "" when it can.
std::string NotF32(double value) {
  if (std::isnan(value)) return "is NaN";
  if (std::isinf(value)) return value > 0 ? "is +inf" : "is -inf";
  if (std::abs(value) > std::numeric_limits<float>::max()) {
    return absl::StrCat("value ", value, " is outside the f32 range");
  }
  return "";
}

std::string NotI32(absl::int128 value) {
  if (value >= std::numeric_limits<int32_t>::min() &&
      value <= std::numeric_limits<int32_t>::max()) {
    return "";
  }
  std::ostringstream text;
  text << "value " << value << " is outside the i32 range";
  return text.str();
}

// Why a float `value` cannot be an i32, or "".
std::string NotWholeI32(double value) {
  if (!std::isfinite(value) || value != std::floor(value)) {
    return absl::StrCat("value ", value,
                        " is not a whole number (the field is i32)");
  }
  if (value < -0x1p31 || value >= 0x1p31) {
    return absl::StrCat("value ", value, " is outside the i32 range");
  }
  return "";
}

void Put(std::vector<uint8_t>* out, const void* value) {
  const uint8_t* p = static_cast<const uint8_t*>(value);
  out->insert(out->end(), p, p + 4);
}

// The per-record shape of `spec` given the source's, or an error.
absl::StatusOr<std::vector<int64_t>> RecordShape(
    const FieldSpec& spec, const std::vector<int64_t>& source) {
  if (!spec.shape) return source;
  int64_t want = 1, have = 1;
  for (int64_t d : *spec.shape) want *= d;
  for (int64_t d : source) have *= d;
  if (want != have) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field '", spec.name, "': shape @", absl::StrJoin(*spec.shape, "x"),
        " has ", want, " elements, a record of '", spec.source, "' ", have));
  }
  return *spec.shape;
}

//===- tensors ------------------------------------------------------------===//

const SourceTensor* FindTensor(const std::vector<SourceTensor>& tensors,
                               const std::string& name) {
  if (tensors.size() == 1 && tensors[0].name.empty()) return &tensors[0];
  for (const SourceTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::string TensorNames(const std::vector<SourceTensor>& tensors) {
  std::vector<std::string> names;
  for (const SourceTensor& t : tensors) names.push_back("'" + t.name + "'");
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<ImportedField> ImportTensor(const std::string& path,
                                           const SourceTensor& t,
                                           const FieldSpec& spec) {
  if (!t.error.empty()) return absl::InvalidArgumentError(t.error);
  const std::string where = absl::StrCat(
      path, ": tensor '", t.name.empty() ? spec.source : t.name, "'");
  if (t.shape.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, " is a scalar: its first dimension must be the record"));
  }
  ImportedField out;
  out.source = where;
  out.field.name = spec.name;
  const bool is_float = t.kind == ElementKind::kFloat;
  FieldDType dtype =
      spec.dtype.value_or(is_float ? FieldDType::kF32 : FieldDType::kI32);
  if (dtype == FieldDType::kClass) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field '", spec.name, "': class is for CSV columns of names"));
  }
  out.field.dtype = dtype == FieldDType::kF32 ? DType::kF32 : DType::kI32;
  absl::StatusOr<std::vector<int64_t>> shape = RecordShape(
      spec, std::vector<int64_t>(t.shape.begin() + 1, t.shape.end()));
  if (!shape.ok()) return shape.status();
  out.field.shape = *shape;
  const int64_t n = t.elements();
  out.data.reserve(4 * n);
  for (int64_t i = 0; i < n; ++i) {
    std::string problem;
    if (dtype == FieldDType::kF32) {
      const double v =
          is_float ? t.FloatAt(i) : static_cast<double>(t.IntegerAt(i));
      problem = NotF32(v);
      const float f = static_cast<float>(v);
      Put(&out.data, &f);
    } else if (is_float) {
      const double v = t.FloatAt(i);
      problem = NotWholeI32(v);
      const int32_t x = problem.empty() ? static_cast<int32_t>(v) : 0;
      Put(&out.data, &x);
    } else {
      const absl::int128 v = t.IntegerAt(i);
      problem = NotI32(v);
      const int32_t x = problem.empty() ? static_cast<int32_t>(v) : 0;
      Put(&out.data, &x);
    }
    if (!problem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " element ", ElementIndex(t.shape, i), ": ", problem));
    }
  }
  return out;
}

//===- CSV ----------------------------------------------------------------===//

absl::StatusOr<std::vector<size_t>> ResolveColumns(const CsvTable& table,
                                                   const FieldSpec& spec) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < table.header.size(); ++i) index[table.header[i]] = i;
  auto find = [&](const std::string& name) -> absl::StatusOr<size_t> {
    auto it = index.find(name);
    if (it != index.end()) return it->second;
    return absl::InvalidArgumentError(absl::StrCat(
        table.path, ": field '", spec.name, "': no column '", name,
        "' (the columns are ", absl::StrJoin(table.header, ", "), ")"));
  };
  std::vector<size_t> columns;
  for (const ColumnRange& range : spec.columns) {
    absl::StatusOr<size_t> first = find(range.first), last = find(range.last);
    if (!first.ok()) return first.status();
    if (!last.ok()) return last.status();
    if (*last < *first) {
      return absl::InvalidArgumentError(
          absl::StrCat(table.path, ": field '", spec.name, "': column '",
                       range.last, "' comes before '", range.first, "'"));
    }
    for (size_t c = *first; c <= *last; ++c) columns.push_back(c);
  }
  return columns;
}

// The value of a numeric cell for `dtype`, or an error at the cell.
absl::Status ParseCell(const CsvTable& table, const CsvCell& cell,
                       const std::string& column, FieldDType dtype,
                       std::vector<uint8_t>* out) {
  const absl::string_view text = absl::StripAsciiWhitespace(cell.text);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(table.Where(cell), ": column '", column, "': ", why));
  };
  if (text.empty()) return bad("empty cell");
  int64_t integer = 0;
  double value = 0;
  const bool is_integer = absl::SimpleAtoi(text, &integer);
  if (!is_integer && !absl::SimpleAtod(text, &value)) {
    return bad(absl::StrCat("'", text, "' is not a number",
                            dtype == FieldDType::kF32
                                ? " (a column of names is a field of "
                                  "dtype class: NAME=COLUMN:class)"
                                : ""));
  }
  std::string problem;
  if (dtype == FieldDType::kF32) {
    if (is_integer) value = static_cast<double>(integer);
    problem = NotF32(value);
    const float f = static_cast<float>(value);
    Put(out, &f);
  } else {
    problem = is_integer ? NotI32(absl::int128(integer)) : NotWholeI32(value);
    const int32_t x = problem.empty()
                          ? static_cast<int32_t>(is_integer ? integer : value)
                          : 0;
    Put(out, &x);
  }
  return problem.empty() ? absl::OkStatus() : bad(problem);
}

absl::StatusOr<ImportedField> ImportColumns(const CsvTable& table,
                                            const FieldSpec& spec) {
  absl::StatusOr<std::vector<size_t>> columns = ResolveColumns(table, spec);
  if (!columns.ok()) return columns.status();
  ImportedField out;
  out.field.name = spec.name;
  out.source = absl::StrCat(table.path, " columns ", spec.source);
  const FieldDType dtype = spec.dtype.value_or(FieldDType::kF32);
  out.field.dtype = dtype == FieldDType::kF32 ? DType::kF32 : DType::kI32;
  absl::StatusOr<std::vector<int64_t>> shape = RecordShape(
      spec, columns->size() == 1
                ? std::vector<int64_t>{}
                : std::vector<int64_t>{static_cast<int64_t>(columns->size())});
  if (!shape.ok()) return shape.status();
  out.field.shape = *shape;
  if (dtype == FieldDType::kClass) {
    if (columns->size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          table.path, ": field '", spec.name,
          "': a class field is one column of names, not ", columns->size()));
    }
    const size_t c = columns->front();
    std::set<std::string> names;
    for (const auto& row : table.rows) names.insert(row[c].text);
    out.classes.assign(names.begin(), names.end());
    std::map<std::string, int32_t> ids;
    for (size_t i = 0; i < out.classes.size(); ++i)
      ids[out.classes[i]] = static_cast<int32_t>(i);
    for (const auto& row : table.rows) Put(&out.data, &ids[row[c].text]);
    return out;
  }
  out.data.reserve(table.rows.size() * columns->size() * 4);
  for (const auto& row : table.rows)
    for (size_t c : *columns) {
      absl::Status cell =
          ParseCell(table, row[c], table.header[c], dtype, &out.data);
      if (!cell.ok()) return cell;
    }
  return out;
}

absl::Status CheckNames(const std::vector<FieldSpec>& specs) {
  if (specs.empty()) {
    return absl::InvalidArgumentError("--from needs at least one --field");
  }
  std::set<std::string> names;
  for (const FieldSpec& spec : specs)
    if (!names.insert(spec.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two fields are named '", spec.name, "'"));
    }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ImportedData> ImportTensors(
    const std::string& path, const std::vector<SourceTensor>& tensors,
    const std::vector<FieldSpec>& specs) {
  absl::Status names = CheckNames(specs);
  if (!names.ok()) return names;
  ImportedData data;
  const SourceTensor* first = nullptr;
  for (const FieldSpec& spec : specs) {
    const SourceTensor* t = FindTensor(tensors, spec.source);
    if (t == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": no tensor '", spec.source, "' (field '", spec.name,
          "'; the tensors are ", TensorNames(tensors), ")"));
    }
    absl::StatusOr<ImportedField> field = ImportTensor(path, *t, spec);
    if (!field.ok()) return field.status();
    const uint64_t records = static_cast<uint64_t>(t->shape[0]);
    if (first != nullptr && records != data.records) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor '", t->name, "' has ", records,
                       " records (its first dimension), tensor '", first->name,
                       "' ", data.records));
    }
    first = first ? first : t;
    data.records = records;
    data.fields.push_back(*std::move(field));
  }
  return data;
}

absl::StatusOr<ImportedData> ImportCsv(const CsvTable& table,
                                       const std::vector<FieldSpec>& specs) {
  absl::Status names = CheckNames(specs);
  if (!names.ok()) return names;
  ImportedData data;
  data.records = table.rows.size();
  for (const FieldSpec& spec : specs) {
    absl::StatusOr<ImportedField> field = ImportColumns(table, spec);
    if (!field.ok()) return field.status();
    data.fields.push_back(*std::move(field));
  }
  return data;
}

absl::StatusOr<ImportedData> ImportFile(const std::string& path,
                                        const std::vector<FieldSpec>& specs) {
  if (absl::EndsWith(path, ".csv")) {
    absl::StatusOr<CsvTable> table = ReadCsv(path);
    if (!table.ok()) return table.status();
    return ImportCsv(*table, specs);
  }
  absl::StatusOr<std::vector<SourceTensor>> tensors = ReadTensorFile(path);
  if (!tensors.ok()) return tensors.status();
  return ImportTensors(path, *tensors, specs);
}

}  // namespace kiln::data_import
