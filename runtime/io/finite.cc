#include "runtime/io/finite.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace io {

absl::Status CheckFinite(const HostTensor& t, absl::string_view what) {
  size_t i = 0;
  const char* kind = nullptr;
  const size_t size = std::max<size_t>(1, DTypeSize(t.dtype));
  if (!FindNonFinite(t.dtype, t.data.data(), t.data.size() / size, &i, &kind))
    return absl::OkStatus();
  // The index per dimension, row-major.
  std::vector<int64_t> index(t.shape.size());
  size_t rest = i;
  for (size_t d = t.shape.size(); d-- > 0;) {
    const int64_t extent = t.shape[d] > 0 ? t.shape[d] : 1;
    index[d] = static_cast<int64_t>(rest % extent);
    rest /= extent;
  }
  std::string where =
      t.file_offset > 0
          ? absl::StrCat(" (file offset ", t.file_offset + i * size, ")")
          : "";
  return absl::InvalidArgumentError(absl::StrCat(what, ": element ", i, " [",
                                                 absl::StrJoin(index, ", "),
                                                 "] is ", kind, where));
}

}  // namespace io
}  // namespace kiln
