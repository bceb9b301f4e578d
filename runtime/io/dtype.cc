#include "runtime/io/dtype.h"

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace io {

int64_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kBF16:
    case DType::kF16:
      return 2;
    case DType::kBool:
      return 1;
  }
  return 0;
}

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "F32";
    case DType::kBF16:
      return "BF16";
    case DType::kF16:
      return "F16";
    case DType::kI32:
      return "I32";
    case DType::kBool:
      return "BOOL";
  }
  return "INVALID";
}

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  for (DType d :
       {DType::kF32, DType::kBF16, DType::kF16, DType::kI32, DType::kBool}) {
    if (name == DTypeName(d)) return d;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported dtype \"", absl::CEscape(name),
                   "\" (expected F32, BF16, F16, I32 or BOOL)"));
}

absl::StatusOr<uint64_t> TensorBytes(DType dtype,
                                     const std::vector<int64_t>& shape) {
  if (DTypeSize(dtype) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown dtype ", static_cast<int>(dtype)));
  }
  uint64_t n = static_cast<uint64_t>(DTypeSize(dtype));
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative extent in shape ", ShapeString(shape)));
    }
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "byte size of shape ", ShapeString(shape), " overflows 64 bits"));
    }
  }
  return n;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

}  // namespace io
}  // namespace kiln
