#include "tools/kiln-run/input_values.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kiln/dtype.h"
#include "runtime/io/dtype.h"
#include "runtime/io/finite.h"

namespace kiln {
namespace {

std::string TypeText(DType dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(DTypeName(dtype), io::ShapeString(shape));
}

// The index of the first of `count` i32 values at `data` outside `range`,
// or `count`.
size_t FindOutside(const uint8_t* data, size_t count,
                   const artifact::ValueRange& range, int32_t* value) {
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(value, data + 4 * i, 4);
    if (!range.Contains(*value)) return i;
  }
  return count;
}

std::string OutsideText(int32_t value, const artifact::ValueRange& range) {
  return absl::StrCat(value, ", outside ", range.ToString(), " (", range.use,
                      ")");
}

io::HostTensor Rounded(DType dtype, const io::HostTensor& t) {
  const size_t n = t.data.size() / 4;
  io::HostTensor out{dtype, t.shape, std::vector<uint8_t>(2 * n)};
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, t.data.data() + 4 * i, 4);
    const uint16_t h = dtype == DType::kBF16 ? F32ToBf16(f) : F32ToF16(f);
    std::memcpy(out.data.data() + 2 * i, &h, 2);
  }
  return out;
}

}  // namespace

absl::StatusOr<io::HostTensor> ConvertTo(DType dtype, io::HostTensor t,
                                         absl::string_view what) {
  if (t.dtype == dtype) return t;
  if (t.dtype == DType::kI64 && dtype == DType::kI32) {
    const size_t n = t.data.size() / 8;
    const size_t bad = io::NarrowI64ToI32(t.data.data(), t.data.data(), n);
    if (bad < n) {
      int64_t value;  // not overwritten yet
      std::memcpy(&value, t.data.data() + 8 * bad, 8);
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", io::ElementText(t.shape, bad), " is ", value,
                       ", which does not fit the i32 the model takes"));
    }
    t.data.resize(4 * n);
    t.dtype = DType::kI32;
    t.file_offset = 0;  // the data is no longer the file's
    return t;
  }
  if (t.dtype == DType::kF32 &&
      (dtype == DType::kBF16 || dtype == DType::kF16)) {
    return Rounded(dtype, t);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, " is ", TypeText(t.dtype, t.shape),
                   " but the model takes ", TypeText(dtype, t.shape)));
}

absl::Status CheckRange(const io::HostTensor& t,
                        const artifact::ValueRange& range,
                        absl::string_view what) {
  int32_t value = 0;
  const size_t n = t.data.size() / 4;
  const size_t bad = FindOutside(t.data.data(), n, range, &value);
  if (bad == n) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": ", io::ElementText(t.shape, bad), " is ",
                   OutsideText(value, range)));
}

absl::Status CheckRecords(const std::string& dataset, uint64_t record_bytes,
                          const std::vector<FieldRange>& ranges,
                          const uint8_t* records,
                          absl::Span<const uint64_t> indices) {
  for (size_t r = 0; r < indices.size(); ++r) {
    for (const FieldRange& f : ranges) {
      int32_t value = 0;
      const size_t n = f.field.bytes / 4;
      const size_t bad = FindOutside(
          records + r * record_bytes + f.field.offset, n, f.range, &value);
      if (bad == n) continue;
      // A scalar field is one value: no element to name.
      const std::string element =
          f.field.shape.empty() ? ""
                                : " " + io::ElementText(f.field.shape, bad);
      return absl::InvalidArgumentError(absl::StrCat(
          dataset, ": record ", indices[r], " field '", f.field.name, "'",
          element, " is ", OutsideText(value, f.range)));
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
