//===- ToolOptions.cpp - kiln's command lines on llvm::cl -----------------===//

#include "tools/common/ToolOptions.h"

#include "tools/common/byte_count.h"
#include "tools/common/version.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <unistd.h>

namespace kiln::tools {
namespace cl = llvm::cl;
using llvm::StringRef;

namespace {

constexpr size_t kDescriptionColumn = 28;
constexpr size_t kWidth = 80;
/// Separates the options' outputs in one capture.
constexpr char kSeparator[] = "\x1e\n";

/// What `print` writes to llvm::outs(), through a temporary file: LLVM's
/// options print their value names and defaults nowhere else
/// (Option::printOptionInfo, printOptionValue). Only --help pays for it.
std::string captureOuts(llvm::function_ref<void()> print) {
  llvm::outs().flush();
  std::fflush(stdout);
  std::FILE *file = std::tmpfile();
  int saved = ::dup(STDOUT_FILENO);
  if (!file || saved < 0 || ::dup2(::fileno(file), STDOUT_FILENO) < 0) {
    if (file)
      std::fclose(file);
    if (saved >= 0)
      ::close(saved);
    return "";
  }
  print();
  llvm::outs().flush();
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::string text;
  std::rewind(file);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
    text.append(buffer, n);
  std::fclose(file);
  return text;
}

bool inCategory(const cl::Option &option, const cl::OptionCategory *category) {
  return llvm::is_contained(option.Categories, category);
}

/// Whether `option` is in one of the tool's categories.
bool isToolOption(const cl::Option &option, const ToolCommandLine &tool) {
  return llvm::any_of(tool.categories, [&](const cl::OptionCategory *c) {
    return inCategory(option, c);
  });
}

/// The options --help lists per category: each registered option once,
/// under the first of the tool's categories it belongs to, sorted by name.
std::vector<std::vector<cl::Option *>>
shownOptions(const ToolCommandLine &tool) {
  std::vector<std::vector<cl::Option *>> shown(tool.categories.size());
  std::set<cl::Option *> seen;
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.getValue();
    // Pass names are registered as extra names of the pass list option,
    // which has none of its own.
    if (option->getOptionHiddenFlag() != cl::NotHidden ||
        (!option->ArgStr.empty() && entry.getKey() != option->ArgStr) ||
        !seen.insert(option).second)
      continue;
    for (auto [index, category] : llvm::enumerate(tool.categories))
      if (inCategory(*option, category)) {
        shown[index].push_back(option);
        break;
      }
  }
  for (auto &options : shown)
    llvm::sort(options, [](cl::Option *a, cl::Option *b) {
      return a->ArgStr < b->ArgStr;
    });
  return shown;
}

/// Hides (cl::Hidden: --help-hidden still lists them) every option outside
/// the tool's categories: libLLVM's and libMLIR's.
void hideOtherOptions(const ToolCommandLine &tool) {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.getValue();
    if (option->getOptionHiddenFlag() == cl::NotHidden &&
        !isToolOption(*option, tool))
      option->setHiddenFlag(cl::Hidden);
  }
}

/// The placeholder of an option's value in --help, from LLVM's name for it
/// ("<number>", "<path>") or the enumeration's values ("text|json").
std::string placeholder(StringRef info) {
  llvm::SmallVector<StringRef> lines;
  info.split(lines, '\n', -1, false);
  if (lines.empty())
    return "";
  StringRef spec = lines.front().ltrim().split("  ").first;
  size_t open = spec.find('<'), close = spec.rfind('>');
  if (open == StringRef::npos || close < open)
    return "";
  llvm::SmallVector<StringRef> values;
  for (StringRef line : llvm::drop_begin(lines)) {
    StringRef text = line.ltrim();
    if (text.consume_front("="))
      values.push_back(text.split(' ').first);
  }
  if (!values.empty())
    return llvm::join(values, "|");
  StringRef name = spec.slice(open + 1, close);
  if (name == "number")
    return "X";
  if (llvm::is_contained({"int", "uint", "long", "ulong", "ulonglong"}, name))
    return "N";
  if (name == "string" || name == "value")
    return "VALUE";
  if (llvm::all_of(name, [](char c) {
        return llvm::isLower(c) || llvm::isDigit(c) || c == '-';
      }))
    return name.upper();
  return name.str();
}

/// The default LLVM prints for an option ("... (default: 0.9)"), as a user
/// would type it; "none" where there is none (a flag without a value is
/// false unless set).
std::string defaultOf(StringRef value, bool takesValue) {
  size_t at = value.rfind("(default: ");
  StringRef text =
      at == StringRef::npos ? "" : value.drop_front(at + strlen("(default: "));
  text = text.rtrim();
  text.consume_back(")");
  if (text.empty() || text == "*no default*")
    return takesValue ? "none" : "false";
  if (!takesValue && (text == "0" || text == "1"))
    return text == "1" ? "true" : "false";
  // Reals print as 9.000000e-01.
  double real;
  if (text.contains('e') && !text.getAsDouble(real)) {
    char shortest[32];
    std::snprintf(shortest, sizeof shortest, "%g", real);
    return shortest;
  }
  return text.str();
}

/// `text` wrapped to kWidth from `column`, later lines indented to `indent`;
/// \x01 holds words together.
std::string wrap(StringRef text, size_t column, size_t indent) {
  std::string out;
  llvm::SmallVector<StringRef> words;
  text.split(words, ' ', -1, false);
  for (auto [index, word] : llvm::enumerate(words)) {
    if (index && column + 1 + word.size() > kWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (index) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  std::replace(out.begin(), out.end(), '\x01', ' ');
  return out;
}

/// `left` padded to the description column, or on a line of its own when
/// longer.
std::string padToDescription(std::string left) {
  if (left.size() + 2 > kDescriptionColumn)
    return left + "\n" + std::string(kDescriptionColumn, ' ');
  left.resize(kDescriptionColumn, ' ');
  return left;
}

/// "  --name VALUE", padded.
std::string flagColumn(StringRef flag) {
  return padToDescription("  " + flag.str());
}

/// One line (or more, wrapped) per option: flag, description and default.
void printOption(llvm::raw_ostream &os, const cl::Option &option,
                 StringRef info, StringRef value) {
  std::string valueName = placeholder(info);
  std::string flag = spelling(option);
  if (!valueName.empty())
    flag += option.getValueExpectedFlag() == cl::ValueOptional
                ? "[=" + valueName + "]"
                : " " + valueName;
  std::string description = option.HelpStr.trim().str();
  if (option.getNumOccurrencesFlag() == cl::Required)
    description += " (required)";
  else if (!StringRef(description).contains("default:"))
    description +=
        " (default:\x01" + defaultOf(value, !valueName.empty()) + ")";
  os << flagColumn(flag)
     << wrap(description, kDescriptionColumn, kDescriptionColumn) << "\n";
}

/// The pass list of an MLIR tool (an option without a name whose values
/// are the passes): "Passes:" and "Pass Pipelines:" with one entry per pass
/// and its options indented below it.
void printPassList(llvm::raw_ostream &os, StringRef info) {
  llvm::SmallVector<StringRef> lines;
  info.split(lines, '\n', -1, false);
  for (StringRef line : llvm::drop_begin(lines)) {
    size_t indent = line.size() - line.ltrim().size();
    StringRef text = line.trim();
    if (text.ends_with(":")) {
      os << "\n" << text << "\n";
      continue;
    }
    auto [spec, description] = text.split(" - ");
    spec = spec.trim();
    description = description.trim();
    if (indent <= 6 && !spec.starts_with("=")) {
      os << flagColumn(spec)
         << wrap(description, kDescriptionColumn, kDescriptionColumn) << "\n";
      continue;
    }
    // A pass option, given inside the pass's flag (--pass="name=value"), or
    // one value of such an option ("=value").
    std::string entry;
    if (spec.starts_with("=")) {
      entry = "      " + spec.str();
    } else {
      spec = spec.ltrim('-');
      std::string valueName = placeholder(spec);
      entry = "    " + spec.split('=').first.str() +
              (valueName.empty() ? "" : "=" + valueName);
    }
    os << padToDescription(entry)
       << wrap(description, kDescriptionColumn, kDescriptionColumn) << "\n";
  }
}

std::string programName(StringRef argv0) {
  return llvm::sys::path::filename(argv0).str();
}

} // namespace

std::string spelling(const cl::Option &option) {
  return (option.ArgStr.size() == 1 ? "-" : "--") + option.ArgStr.str();
}

std::string toolHelpText(const ToolCommandLine &tool) {
  std::vector<std::vector<cl::Option *>> shown = shownOptions(tool);
  // One capture for all options: their value names and defaults.
  size_t width = 0;
  for (const auto &options : shown)
    for (cl::Option *option : options)
      width = std::max(width, option->getOptionWidth());
  std::string captured = captureOuts([&] {
    for (const auto &options : shown)
      for (cl::Option *option : options) {
        option->printOptionInfo(width);
        llvm::outs() << kSeparator;
        option->printOptionValue(width, /*Force=*/true);
        llvm::outs() << kSeparator;
      }
  });
  llvm::SmallVector<StringRef> parts;
  StringRef(captured).split(parts, kSeparator);

  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::SmallVector<StringRef> paragraphs;
  StringRef(tool.overview).split(paragraphs, "\n\n", -1, false);
  for (auto [index, paragraph] : llvm::enumerate(paragraphs))
    os << (index ? "\n" : "") << wrap(paragraph.trim(), 0, 0) << "\n";
  os << "\n" << wrap("usage: " + tool.synopsis, 0, 6) << "\n";
  size_t part = 0;
  for (auto [index, options] : llvm::enumerate(shown)) {
    if (options.empty())
      continue;
    // A pass list titles its own parts ("Passes:", "Pass Pipelines:").
    StringRef title = tool.categories[index]->getName();
    if (llvm::any_of(options, [](cl::Option *o) { return !o->ArgStr.empty(); }))
      os << "\n"
         << wrap((title + (title.ends_with(":") ? "" : ":")).str(), 0, 2)
         << "\n";
    for (cl::Option *option : options) {
      StringRef info = part < parts.size() ? parts[part] : "";
      StringRef value = part + 1 < parts.size() ? parts[part + 1] : "";
      part += 2;
      if (option->ArgStr.empty())
        printPassList(os, info);
      else
        printOption(os, *option, info, value);
    }
  }
  os << "\nGeneric options:\n"
     << flagColumn("-h, --help") << "print this help and exit\n"
     << flagColumn("--help-hidden")
     << wrap("also list LLVM's and MLIR's own options", kDescriptionColumn,
             kDescriptionColumn)
     << "\n"
     << flagColumn("--version")
     << wrap("print kiln's version and the commit the tool was built from, "
             "and exit",
             kDescriptionColumn, kDescriptionColumn)
     << "\n";
  if (!tool.footer.empty())
    os << "\n" << tool.footer;
  if (!text.empty() && text.back() != '\n')
    os << "\n";
  return text;
}

std::optional<std::string>
unknownOptionMessage(llvm::ArrayRef<const char *> args,
                     const ToolCommandLine &tool) {
  llvm::StringMap<cl::Option *> &options = cl::getRegisteredOptions();
  for (size_t i = 1; i < args.size(); ++i) {
    StringRef arg = args[i];
    if (arg == "--")
      break;
    if (!arg.starts_with("-") || arg == "-")
      continue;
    StringRef name = arg.ltrim('-');
    StringRef key = name.split('=').first;
    if (cl::Option *option = options.lookup(key)) {
      // "--name value": the value is the next argument.
      if (!name.contains('=') &&
          option->getValueExpectedFlag() == cl::ValueRequired)
        ++i;
      continue;
    }
    // "-Idir": an option that takes its value as a suffix.
    if (llvm::any_of(options, [&](const auto &entry) {
          cl::FormattingFlags format = entry.getValue()->getFormattingFlag();
          return (format == cl::Prefix || format == cl::AlwaysPrefix) &&
                 key.starts_with(entry.getKey()) && !entry.getKey().empty();
        }))
      continue;

    std::string message = "unknown option '" + arg.split('=').first.str() + "'";
    for (const auto &[flag, where] : tool.elsewhere)
      if (key == flag)
        return message + ": " + where;
    // A suggestion only among the tool's own options, and only when close.
    // Names, not options: a pass list answers to every pass's name.
    std::string best;
    unsigned bestDistance = std::max<unsigned>(1, (key.size() + 1) / 3) + 1;
    for (const auto &entry : options) {
      const cl::Option &option = *entry.getValue();
      if (option.getOptionHiddenFlag() != cl::NotHidden ||
          !isToolOption(option, tool))
        continue;
      unsigned distance = key.edit_distance(entry.getKey(), true);
      if (distance < bestDistance) {
        bestDistance = distance;
        best = (entry.getKey().size() == 1 ? "-" : "--") + entry.getKey().str();
      }
    }
    if (!best.empty())
      message += "; did you mean '" + best + "'?";
    return message;
  }
  return std::nullopt;
}

int usageError(const ToolCommandLine &tool, const llvm::Twine &message) {
  llvm::errs() << tool.name << ": error: " << message << "\n(" << tool.name
               << " --help lists the options)\n";
  return 2;
}

std::optional<uint64_t> byteCountOption(const ToolCommandLine &tool,
                                        const cl::opt<std::string> &option) {
  if (std::optional<uint64_t> bytes = ParseByteCount(option.getValue()))
    return bytes;
  usageError(tool, spelling(option) + " must be " + kByteCountSyntax +
                       ", got '" + option.getValue() + "'");
  return std::nullopt;
}

/// The first bad value reportBadValue() was told of.
static std::string &badValueMessage() {
  static std::string message;
  return message;
}

bool reportBadValue(const cl::Option &option, const llvm::Twine &problem) {
  if (badValueMessage().empty())
    badValueMessage() = spelling(option) + " " + problem.str();
  return true;
}

void parseToolCommandLine(int argc, char **argv, const ToolCommandLine &tool) {
  static std::string versionName;
  versionName = tool.name;
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << VersionLine(versionName) << "\n"; });
  hideOtherOptions(tool);
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      llvm::outs() << toolHelpText(tool);
      llvm::outs().flush();
      std::exit(0);
    }
  }
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (cl::ParseCommandLineOptions(argc, argv, tool.overview, &errorStream))
    return;
  if (std::optional<std::string> unknown =
          unknownOptionMessage(llvm::ArrayRef(argv, argc), tool))
    std::exit(usageError(tool, *unknown));
  if (!badValueMessage().empty())
    std::exit(usageError(tool, badValueMessage()));
  // A bad value has been reported by its option, straight to stderr.
  if (StringRef(errors).trim().empty()) {
    llvm::errs() << "(" << tool.name << " --help lists the options)\n";
    std::exit(2);
  }
  // LLVM's messages start with the program's name: keep only the message.
  std::string program = programName(argv[0]) + ": ";
  llvm::SmallVector<StringRef> lines;
  StringRef(errors).trim().split(lines, '\n');
  std::string message;
  for (StringRef line : lines) {
    line.consume_front(program);
    message += (message.empty() ? "" : "\n") + line.trim().str();
  }
  std::exit(usageError(tool, message));
}

} // namespace kiln::tools
