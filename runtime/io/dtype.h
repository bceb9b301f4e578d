#ifndef KILN_RUNTIME_IO_DTYPE_H_
#define KILN_RUNTIME_IO_DTYPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {
namespace io {

// Element types of checkpoints and datasets (the kiln IR's f32, bf16, f16, i32
// and i1; a bool is one byte, 0 or 1).
enum class DType : uint8_t {
  kF32 = 1,
  kBF16 = 2,
  kF16 = 3,
  kI32 = 4,
  kBool = 5
};

// Bytes per element; 0 for a value outside the enum.
int64_t DTypeSize(DType dtype);
// safetensors' names: "F32", "BF16", "F16", "I32", "BOOL".
absl::string_view DTypeName(DType dtype);
absl::StatusOr<DType> ParseDType(absl::string_view name);

// Product of the extents times the element size; an error for negative extents
// or overflow.
absl::StatusOr<uint64_t> TensorBytes(DType dtype,
                                     const std::vector<int64_t>& shape);
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace io
}  // namespace kiln

#endif  // KILN_RUNTIME_IO_DTYPE_H_
