// Command lines of kiln's tools and samples, on Abseil flags.
//
// Flags are defined with ABSL_FLAG (underscores: memory_limit) and spelt with
// dashes on the command line (--memory-limit). ParseCommandLine takes
// `--name value`, `--name=value` and, for bool flags, `--name`, parses each
// value with Abseil's flag marshalling and returns the positional arguments.
//
// Unlike absl::ParseCommandLine (which, in the Abseil kiln builds with, exits
// with status 1 on any error and on --help, and accepts no dashes in names),
// a bad command line exits with status 2, -h and --help print the help and
// --version kiln's version line (tools/common/version.h), both with status 0,
// and only the flags the usage lists are accepted (not Abseil's --flagfile,
// --fromenv).
//
// Byte counts are flags of type ByteSize, spelt as kilnc's --memory-budget:
// "4096", "437MiB", "1GiB" (tools/common/byte_count.h).
#ifndef KILN_TOOLS_COMMON_COMMAND_LINE_H_
#define KILN_TOOLS_COMMON_COMMAND_LINE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::cli {

// A number of bytes on the command line:
//   ABSL_FLAG(std::optional<kiln::cli::ByteSize>, memory_limit, ...)
// takes "4096", "64KiB", "437MiB", "2GB" and shows its default as
// FormatByteCount does ("25MiB").
struct ByteSize {
  uint64_t bytes = 0;
};
bool AbslParseFlag(absl::string_view text, ByteSize* size, std::string* error);
std::string AbslUnparseFlag(ByteSize size);

struct Usage {
  // The program's name in messages ("kiln-run").
  std::string program;
  // Printed first by --help: the synopsis and any prose.
  std::string header;
  struct Section {
    std::string title;              // "Training (given --steps):"
    std::vector<std::string> flags; // ABSL_FLAG names, in help order
  };
  std::vector<Section> sections;
  // Placeholders for flag values in --help ("inputs" -> "FILE"); otherwise
  // N for integers, X for reals, BYTES for byte counts, VALUE for the rest.
  std::map<std::string, std::string> metavars;
  // Printed last by --help.
  std::string footer;
};

// The flag names the usage lists (every flag must be listed, or
// ParseCommandLine refuses it as unknown).
std::vector<std::string> ListedFlags(const Usage &usage);

// The text --help prints: the header, then per section one line per flag
// (`--name METAVAR  description (default: value)`), then the footer.
std::string HelpText(const Usage &usage);

// Parses `args` (args[0] is the program) into the flags the usage lists.
// Returns the positional arguments (without args[0]), or InvalidArgument with
// a message such as "unknown flag --nope", "--steps: 'five' is not an
// integer" or "--steps needs a value". "-h" and "--help" give
// NotFound("help"), "--version" NotFound("version"). The names (with
// underscores) of the flags given are added to `given`, when not null.
absl::StatusOr<std::vector<std::string>>
ParseArgs(const std::vector<std::string> &args, const Usage &usage,
          std::set<std::string> *given = nullptr);

// ParseArgs on argv: on -h or --help prints HelpText to stdout, on --version
// VersionLine(usage.program), and exits 0; on an error prints
// "<program>: <message>" and a hint to stderr and exits 2.
std::vector<std::string> ParseCommandLine(int argc, char **argv,
                                          const Usage &usage,
                                          std::set<std::string> *given = nullptr);

// Prints "<program>: <message>" and a hint to stderr and exits with status 2:
// for the checks a tool makes after parsing (missing or incompatible flags).
[[noreturn]] void UsageError(const Usage &usage, const std::string &message);

} // namespace kiln::cli

#endif // KILN_TOOLS_COMMON_COMMAND_LINE_H_
