#ifndef KILN_RUNTIME_IO_FINITE_H_
#define KILN_RUNTIME_IO_FINITE_H_

// Whether the floating-point elements of a host tensor are all finite: the
// check kiln-run makes on the inputs it reads, so that a NaN or infinity in
// a user's file is reported where it is instead of surfacing as a NaN loss.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "runtime/io/safetensors.h"

namespace kiln {
namespace io {

// "element 17 [3, 2]": the flat index `i` of a tensor of `shape` and its
// index per dimension (row-major), how errors name an element.
std::string ElementText(const std::vector<int64_t>& shape, size_t i);

// OK when every element of `t` is finite (tensors that are not f32, bf16 or
// f16 always are); otherwise InvalidArgument naming `what`, the first NaN or
// infinity, its index (flat and per dimension) and, for a tensor read from a
// file, its byte offset there.
absl::Status CheckFinite(const HostTensor& t, absl::string_view what);

}  // namespace io
}  // namespace kiln

#endif  // KILN_RUNTIME_IO_FINITE_H_
