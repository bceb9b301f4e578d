#ifndef KILN_RUNTIME_SESSION_RESIDENT_MEMORY_H_
#define KILN_RUNTIME_SESSION_RESIDENT_MEMORY_H_

// Whether an artifact's resident buffers (parameters, optimizer state,
// constants) fit on the device, checked before any of them is allocated or
// initialised: a model too large for the GPU is reported as such, naming
// its largest buffer, instead of failing midway or exhausting host memory.

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/artifact/artifact.h"

namespace kiln {
namespace session_internal {

// OK when `buffers`, each rounded as the device pool rounds it, fit in
// `available_bytes`; otherwise ResourceExhausted naming the largest buffer
// and its bytes, the total and `device` ("H100 (device 0)") with its
// `available_bytes` and `total_bytes`.
absl::Status CheckResidentsFit(
    const std::vector<artifact::ResidentBuffer>& buffers,
    size_t available_bytes, size_t total_bytes, absl::string_view device);

}  // namespace session_internal
}  // namespace kiln

#endif  // KILN_RUNTIME_SESSION_RESIDENT_MEMORY_H_
