// Element types of kiln tensors and host-side conversions between them.
#ifndef KILN_DTYPE_H_
#define KILN_DTYPE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {

// The element types the compiler produces, and kI64. kI1 (boolean masks) is
// stored as one byte per element (0 or 1), like a u8. kI64 is never an
// artifact's type: it is what PyTorch and NumPy write for integer tensors, so
// checkpoints and datasets may hold it, and host tools narrow it to kI32.
enum class DType : uint8_t { kF32, kBF16, kF16, kI32, kI1, kI64 };

// Bytes per element: 4, 2, 2, 4, 1, 8.
size_t DTypeSize(DType dtype);

// The dialect's spelling: "f32", "bf16", "f16", "i32", "i1", "i64".
absl::string_view DTypeName(DType dtype);

// Inverse of DTypeName; also accepts "bool" for kI1. Anything else is an
// InvalidArgumentError naming the accepted spellings.
absl::StatusOr<DType> ParseDType(absl::string_view name);

// f32 -> bf16 with round-to-nearest-even. NaN stays NaN (quiet, sign kept);
// values that round past the largest finite bf16 become infinity.
uint16_t F32ToBf16(float value);
// bf16 -> f32, exact.
float Bf16ToF32(uint16_t bits);

// f32 -> IEEE binary16 with round-to-nearest-even, including subnormal
// results; overflow gives infinity, NaN stays NaN (quiet, sign kept).
uint16_t F32ToF16(float value);
// IEEE binary16 -> f32, exact (subnormals, infinities and NaN included).
float F16ToF32(uint16_t bits);

}  // namespace kiln

#endif  // KILN_DTYPE_H_
