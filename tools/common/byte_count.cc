#include "tools/common/byte_count.h"

#include <cctype>
#include <limits>
#include <utility>

namespace kiln {
namespace {

constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
    {"", 1},
    {"B", 1},
    {"KB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"KiB", uint64_t{1} << 10},
    {"MiB", uint64_t{1} << 20},
    {"GiB", uint64_t{1} << 30},
};

} // namespace

const char kByteCountSyntax[] =
    "a number of bytes, optionally with B, KB, MB, GB (powers of 1000) or "
    "KiB, MiB, GiB (powers of 1024)";

std::optional<uint64_t> ParseByteCount(std::string_view text) {
  size_t digits = 0;
  uint64_t count = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (; digits < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[digits]));
       ++digits) {
    const uint64_t digit = text[digits] - '0';
    if (count > (kMax - digit) / 10)
      return std::nullopt;
    count = count * 10 + digit;
  }
  if (digits == 0)
    return std::nullopt;
  const std::string_view unit = text.substr(digits);
  for (const auto &[suffix, scale] : kUnits) {
    if (unit == suffix) {
      if (count > kMax / scale)
        return std::nullopt;
      return count * scale;
    }
  }
  return std::nullopt;
}

std::string FormatByteCount(uint64_t bytes) {
  static constexpr std::pair<const char *, int> kBinary[] = {
      {"GiB", 30}, {"MiB", 20}, {"KiB", 10}};
  if (bytes != 0) {
    for (const auto &[suffix, shift] : kBinary) {
      const uint64_t unit = uint64_t{1} << shift;
      if (bytes % unit == 0)
        return std::to_string(bytes / unit) + suffix;
    }
  }
  return std::to_string(bytes);
}

} // namespace kiln
