#include "runtime/io/dtype.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace io {
namespace {

constexpr DType kAll[] = {DType::kF32, DType::kBF16, DType::kF16,
                          DType::kI32, DType::kI1,  DType::kI64};

}  // namespace

bool IsValidDType(DType dtype) {
  return static_cast<uint8_t>(dtype) <= static_cast<uint8_t>(DType::kI64);
}

absl::string_view SafetensorsDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "F32";
    case DType::kBF16:
      return "BF16";
    case DType::kF16:
      return "F16";
    case DType::kI32:
      return "I32";
    case DType::kI1:
      return "BOOL";
    case DType::kI64:
      return "I64";
  }
  return "INVALID";
}

absl::StatusOr<DType> ParseSafetensorsDType(absl::string_view name) {
  for (DType d : kAll) {
    if (name == SafetensorsDTypeName(d)) return d;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported dtype \"", absl::CEscape(name),
                   "\" (expected F32, BF16, F16, I32, BOOL or I64)"));
}

uint8_t DatasetDTypeCode(DType dtype) {
  return IsValidDType(dtype) ? static_cast<uint8_t>(dtype) + 1 : 0;
}

absl::StatusOr<DType> DTypeFromDatasetCode(uint8_t code) {
  if (code < 1 || code > 6) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown dtype code ", static_cast<int>(code),
                     " (expected 1..6: f32, bf16, f16, i32, i1, i64)"));
  }
  return static_cast<DType>(code - 1);
}

absl::StatusOr<uint64_t> TensorBytes(DType dtype,
                                     const std::vector<int64_t>& shape) {
  if (!IsValidDType(dtype)) {
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

bool FindNonFinite(DType dtype, const uint8_t* data, size_t count,
                   size_t* index, const char** kind) {
  // The element's size and its exponent and mantissa masks.
  int bytes = 0;
  uint32_t exponent = 0, mantissa = 0;
  switch (dtype) {
    case DType::kF32:
      bytes = 4, exponent = 0x7f800000u, mantissa = 0x007fffffu;
      break;
    case DType::kBF16:
      bytes = 2, exponent = 0x7f80u, mantissa = 0x007fu;
      break;
    case DType::kF16:
      bytes = 2, exponent = 0x7c00u, mantissa = 0x03ffu;
      break;
    default:
      return false;
  }
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, data + i * bytes, bytes);
    if ((bits & exponent) != exponent) continue;
    *index = i;
    *kind = (bits & mantissa) != 0           ? "NaN"
            : (bits >> (8 * bytes - 1)) != 0 ? "-inf"
                                             : "+inf";
    return true;
  }
  return false;
}

size_t NarrowI64ToI32(const uint8_t* src, uint8_t* dst, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    int64_t wide;
    std::memcpy(&wide, src + 8 * i, 8);
    if (wide < INT32_MIN || wide > INT32_MAX) return i;
    const int32_t narrow = static_cast<int32_t>(wide);
    // Element i's 4 bytes end before element i + 1's 8 start: nothing
    // unread is overwritten.
    std::memcpy(dst + 4 * i, &narrow, 4);
  }
  return count;
}

}  // namespace io
}  // namespace kiln
