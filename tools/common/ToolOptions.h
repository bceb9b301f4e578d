//===- ToolOptions.h - kiln's command lines on llvm::cl ---------*- C++ -*-===//
//
// The command lines of kiln's LLVM-side tools (kilnc, kiln-opt, kiln-ref,
// train_reference). Every option of libLLVM and libMLIR is registered in each
// of them; parseToolCommandLine shows only the tool's own, in the layout of
// the runtime tools' help (tools/common/command_line.h):
//
//  * -h and --help print the tool's categories, one line per option,
//    "  --name VALUE  description (default: value)"; LLVM's options are
//    hidden there and listed by --help-hidden.
//  * --version prints kiln::VersionLine.
//  * A bad command line prints "<tool>: error: ..." and exits with status 2;
//    an unknown option is answered with where it belongs, or with the
//    closest of the tool's own options when one is close.
//  * usageError() reports the checks a tool makes after parsing, with 2;
//    UsageErrorParser reports a bad value of a typed option the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_COMMON_TOOLOPTIONS_H
#define KILN_TOOLS_COMMON_TOOLOPTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::tools {

struct ToolCommandLine {
  /// The program's name in messages ("kilnc").
  std::string name;
  /// What follows "usage: " ("kilnc [options] <model.mlir|model.onnx>").
  std::string synopsis;
  /// Printed first by --help.
  std::string overview;
  /// The categories --help shows, in this order; every other option is
  /// hidden (still listed by --help-hidden).
  std::vector<llvm::cl::OptionCategory *> categories;
  /// Options of other tools someone may give this one, and where they
  /// belong: {"lr", "the learning rate is a run-time flag of kiln-run"}.
  std::vector<std::pair<std::string, std::string>> elsewhere;
  /// Printed last by --help.
  std::string footer;
};

/// Parses the command line as above; returns only when it is good.
void parseToolCommandLine(int argc, char **argv, const ToolCommandLine &tool);

/// The text -h and --help print.
std::string toolHelpText(const ToolCommandLine &tool);

/// The message for the first option of `args` (args[0] is the program) that
/// names no registered option, or nothing when they all do.
std::optional<std::string>
unknownOptionMessage(llvm::ArrayRef<const char *> args,
                     const ToolCommandLine &tool);

/// Prints "<tool>: error: <message>" and a hint to stderr; returns 2, the
/// exit status of a bad command line.
int usageError(const ToolCommandLine &tool, const llvm::Twine &message);

/// The byte count `option` holds (tools/common/byte_count.h), or nothing
/// after a usage error naming it.
std::optional<uint64_t>
byteCountOption(const ToolCommandLine &tool,
                const llvm::cl::opt<std::string> &option);

/// "--name" of an option as given on the command line ("-o" for one letter).
std::string spelling(const llvm::cl::Option &option);

/// Keeps "<spelling of option> <problem>" for parseToolCommandLine, which
/// reports it as a usage error; returns true, as llvm::cl parsers do on a
/// bad value.
bool reportBadValue(const llvm::cl::Option &option, const llvm::Twine &problem);

/// `Parser` (a parser with a reject() hook, such as mlir::kiln::ChoiceParser)
/// whose bad values are the tool's usage errors: "kilnc: error:
/// --gemm-schedule must be auto, cooperative or pingpong, got 'fast'".
template <typename Parser> class UsageErrorParser : public Parser {
public:
  using Parser::Parser;
  bool reject(llvm::cl::Option &option, llvm::StringRef argName,
              const llvm::Twine &problem) const override {
    return reportBadValue(option, problem);
  }
};

} // namespace kiln::tools

#endif // KILN_TOOLS_COMMON_TOOLOPTIONS_H
