#include "runtime/session/resident_memory.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/memory/pool.h"

namespace kiln {
namespace session_internal {
namespace {

// `bytes` as the pool allocates it; sizes the pool refuses stay as they are.
uint64_t PoolBytes(uint64_t bytes) {
  return bytes > DevicePool::kMaxBlockBytes ? bytes
                                            : DevicePool::RoundSize(bytes);
}

}  // namespace

absl::Status CheckResidentsFit(
    const std::vector<artifact::ResidentBuffer>& buffers,
    size_t available_bytes, size_t total_bytes, absl::string_view device) {
  uint64_t needed = 0;  // saturates: each size may be up to 2^64 - 1
  for (const artifact::ResidentBuffer& b : buffers) {
    const uint64_t bytes = PoolBytes(b.byte_size);
    needed = bytes > UINT64_MAX - needed ? UINT64_MAX : needed + bytes;
  }
  if (buffers.empty() || needed <= available_bytes) return absl::OkStatus();
  const artifact::ResidentBuffer& largest = *std::max_element(
      buffers.begin(), buffers.end(),
      [](const artifact::ResidentBuffer& x, const artifact::ResidentBuffer& y) {
        return x.byte_size < y.byte_size;
      });
  const std::string buffer = absl::StrCat("resident buffer '", largest.name,
                                          "' (", largest.byte_size, " bytes)");
  if (largest.byte_size > total_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(buffer, " is larger than the whole memory of ", device,
                     " (", total_bytes, " bytes)"));
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "the artifact's resident buffers need ",
      needed == UINT64_MAX ? "more than 2^64" : absl::StrCat(needed),
      " bytes, more than the ", available_bytes, " bytes free on ", device,
      " (", total_bytes, " in all); the largest is ", buffer));
}

}  // namespace session_internal
}  // namespace kiln
