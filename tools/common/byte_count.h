// Byte counts on command lines: "4096", "437MiB", "2GB". One parser for every
// tool (kilnc's --memory-budget and --bucket-bytes, the pipeline's pass
// options, the runtime tools' flags). Dependency-free.
#ifndef KILN_TOOLS_COMMON_BYTE_COUNT_H_
#define KILN_TOOLS_COMMON_BYTE_COUNT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

// What ParseByteCount accepts, for messages: "a number of bytes, optionally
// with B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024)".
extern const char kByteCountSyntax[];

// `text` as a number of bytes: decimal digits, optionally followed by a unit
// (B; KB, MB, GB as powers of 1000; KiB, MiB, GiB as powers of 1024), e.g.
// 437MiB. Nothing when `text` is not one or the count does not fit 64 bits.
std::optional<uint64_t> ParseByteCount(std::string_view text);

// `bytes` in the largest binary unit that divides it ("25MiB", "1000"), so
// that ParseByteCount(FormatByteCount(n)) == n.
std::string FormatByteCount(uint64_t bytes);

} // namespace kiln

#endif // KILN_TOOLS_COMMON_BYTE_COUNT_H_
