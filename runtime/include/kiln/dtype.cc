#include "kiln/dtype.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kBF16:
    case DType::kF16:
      return 2;
    case DType::kI1:
      return 1;
    case DType::kI64:
      return 8;
  }
  return 0;
}

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kBF16:
      return "bf16";
    case DType::kF16:
      return "f16";
    case DType::kI32:
      return "i32";
    case DType::kI1:
      return "i1";
    case DType::kI64:
      return "i64";
  }
  return "invalid";
}

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16, DType::kI32,
                      DType::kI1, DType::kI64}) {
    if (name == DTypeName(dtype)) return dtype;
  }
  if (name == "bool") return DType::kI1;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name,
                   "': expected one of f32, bf16, f16, i32, i1 (or bool), i64"));
}

uint16_t F32ToBf16(float value) {
  uint32_t bits = FloatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    // NaN: keep the sign and the top payload bits, force the quiet bit so the
    // truncated payload cannot become zero (which would read as infinity).
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // Round to nearest, ties to even: add 0x7fff plus the lowest kept bit.
  // A carry out of the mantissa correctly bumps the exponent (up to inf).
  uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;
  return static_cast<uint16_t>(bits >> 16);
}

float Bf16ToF32(uint16_t bits) {
  return BitsFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t F32ToF16(float value) {
  uint32_t bits = FloatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    if (abs == 0x7f800000u) return sign | 0x7c00u;
    return sign | 0x7e00u | static_cast<uint16_t>((abs >> 13) & 0x3ffu);
  }
  int32_t exponent = static_cast<int32_t>(abs >> 23) - 127;  // unbiased
  if (exponent > 15) return sign | 0x7c00u;  // overflow even before rounding
  uint32_t mantissa = abs & 0x7fffffu;
  if (exponent >= -14) {
    // Normal f16 range: 10 mantissa bits kept, 13 dropped.
    uint32_t half =
        (static_cast<uint32_t>(exponent + 15) << 10) | (mantissa >> 13);
    uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) {
      ++half;  // may carry into the exponent, up to 0x7c00 (infinity)
    }
    return sign | static_cast<uint16_t>(half);
  }
  if (exponent < -25) return sign;  // below half the smallest subnormal
  // Subnormal f16: the value is full * 2^(e-23) with the 24-bit mantissa
  // `full`, and an f16 subnormal is m * 2^-24, so m = full >> (-e - 1).
  uint32_t full = mantissa | 0x800000u;
  int shift = -exponent - 1;  // 14..24: bits dropped from `full`
  uint32_t half = full >> shift;
  uint32_t rest = full & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (half & 1u))) {
    ++half;  // may become the smallest normal (0x0400): still correct
  }
  return sign | static_cast<uint16_t>(half);
}

float F16ToF32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1fu) {
    return BitsFloat(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {
    if (mantissa == 0) return BitsFloat(sign);
    // Subnormal: normalise the mantissa into an f32 normal.
    int e = -1;
    do {
      mantissa <<= 1;
      ++e;
    } while ((mantissa & 0x400u) == 0);
    mantissa &= 0x3ffu;
    return BitsFloat(sign | (static_cast<uint32_t>(127 - 15 - e) << 23) |
                     (mantissa << 13));
  }
  return BitsFloat(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

}  // namespace kiln
