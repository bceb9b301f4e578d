#include "runtime/io/finite.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace io {

std::string ElementText(const std::vector<int64_t>& shape, size_t i) {
  std::vector<int64_t> index(shape.size());
  size_t rest = i;
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t extent = shape[d] > 0 ? shape[d] : 1;
    index[d] = static_cast<int64_t>(rest % extent);
    rest /= extent;
  }
  return absl::StrCat("element ", i, " [", absl::StrJoin(index, ", "), "]");
}

absl::Status CheckFinite(const HostTensor& t, absl::string_view what) {
  size_t i = 0;
  const char* kind = nullptr;
  const size_t size = std::max<size_t>(1, DTypeSize(t.dtype));
  if (!FindNonFinite(t.dtype, t.data.data(), t.data.size() / size, &i, &kind))
    return absl::OkStatus();
  std::string where =
      t.file_offset > 0
          ? absl::StrCat(" (file offset ", t.file_offset + i * size, ")")
          : "";
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": ", ElementText(t.shape, i), " is ", kind, where));
}

}  // namespace io
}  // namespace kiln
