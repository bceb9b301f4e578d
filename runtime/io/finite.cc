#include "runtime/io/finite.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace io {
namespace {

// The size and the exponent and mantissa masks of one element.
struct FloatLayout {
  int bytes;
  uint32_t exponent, mantissa;
};

bool LayoutOf(DType dtype, FloatLayout* layout) {
  switch (dtype) {
    case DType::kF32:
      *layout = {4, 0x7f800000u, 0x007fffffu};
      return true;
    case DType::kBF16:
      *layout = {2, 0x7f80u, 0x007fu};
      return true;
    case DType::kF16:
      *layout = {2, 0x7c00u, 0x03ffu};
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::Status CheckFinite(const HostTensor& t, absl::string_view what) {
  FloatLayout f;
  if (!LayoutOf(t.dtype, &f)) return absl::OkStatus();
  const size_t count = t.data.size() / f.bytes;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, t.data.data() + i * f.bytes, f.bytes);
    if ((bits & f.exponent) != f.exponent) continue;
    // The index per dimension, row-major.
    std::vector<int64_t> index(t.shape.size());
    size_t rest = i;
    for (size_t d = t.shape.size(); d-- > 0;) {
      const int64_t extent = t.shape[d] > 0 ? t.shape[d] : 1;
      index[d] = static_cast<int64_t>(rest % extent);
      rest /= extent;
    }
    const char* kind = (bits & f.mantissa) != 0           ? "NaN"
                       : (bits >> (8 * f.bytes - 1)) != 0 ? "-inf"
                                                          : "+inf";
    std::string where =
        t.file_offset > 0
            ? absl::StrCat(" (file offset ", t.file_offset + i * f.bytes, ")")
            : "";
    return absl::InvalidArgumentError(absl::StrCat(what, ": element ", i, " [",
                                                   absl::StrJoin(index, ", "),
                                                   "] is ", kind, where));
  }
  return absl::OkStatus();
}

}  // namespace io
}  // namespace kiln
