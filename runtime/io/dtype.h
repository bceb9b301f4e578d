#ifndef KILN_RUNTIME_IO_DTYPE_H_
#define KILN_RUNTIME_IO_DTYPE_H_

// Element types of checkpoints and datasets: the runtime's kiln::DType
// (kiln/dtype.h), with the spellings and codes the two file formats use.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kiln/dtype.h"

namespace kiln {
namespace io {

using ::kiln::DType;

// True for the enumerators of DType (a value cast from a file may be
// anything), kI64 included: files may hold it.
bool IsValidDType(DType dtype);

// safetensors' names: "F32", "BF16", "F16", "I32", "BOOL", "I64"; "INVALID"
// for a value outside the enum.
absl::string_view SafetensorsDTypeName(DType dtype);
// Inverse of SafetensorsDTypeName; InvalidArgument naming the accepted names.
absl::StatusOr<DType> ParseSafetensorsDType(absl::string_view name);

// The byte a KILNDATA layout stores for a field's dtype: f32 1, bf16 2, f16 3,
// i32 4, i1 5, i64 6 (0 is never valid).
uint8_t DatasetDTypeCode(DType dtype);
// Inverse of DatasetDTypeCode; InvalidArgument for any other byte.
absl::StatusOr<DType> DTypeFromDatasetCode(uint8_t code);

// Product of the extents times the element size; an error for an invalid
// dtype, negative extents or overflow.
absl::StatusOr<uint64_t> TensorBytes(DType dtype,
                                     const std::vector<int64_t>& shape);
// "[2,3]"
std::string ShapeString(const std::vector<int64_t>& shape);

// The first of `count` elements of `dtype` at `data` that is a NaN or an
// infinity: true with its index and "NaN", "+inf" or "-inf"; false when all
// are finite or `dtype` is not f32, bf16 or f16.
bool FindNonFinite(DType dtype, const uint8_t* data, size_t count,
                   size_t* index, const char** kind);

// Narrows `count` i64 values at `src` to i32 at `dst`, front to back, so
// `dst` may be `src` (in place). Returns the index of the first value outside
// the i32 range (what follows it is left unspecified), or `count` when all
// fit.
size_t NarrowI64ToI32(const uint8_t* src, uint8_t* dst, size_t count);

}  // namespace io
}  // namespace kiln

#endif  // KILN_RUNTIME_IO_DTYPE_H_
