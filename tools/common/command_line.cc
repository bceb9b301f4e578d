#include "tools/common/command_line.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "tools/common/byte_count.h"
#include "tools/common/version.h"

namespace kiln::cli {

bool AbslParseFlag(absl::string_view text, ByteSize* size, std::string* error) {
  std::optional<uint64_t> bytes =
      ParseByteCount(std::string_view(text.data(), text.size()));
  if (!bytes) {
    *error = absl::StrCat("not a byte count (", kByteCountSyntax, ")");
    return false;
  }
  size->bytes = *bytes;
  return true;
}

std::string AbslUnparseFlag(ByteSize size) {
  return FormatByteCount(size.bytes);
}

namespace {

constexpr size_t kDescriptionColumn = 28;
constexpr size_t kWidth = 80;

std::string Dashed(const std::string &name) {
  return absl::StrReplaceAll(name, {{"_", "-"}});
}

bool IsInteger(const absl::CommandLineFlag &flag) {
  return flag.IsOfType<int>() || flag.IsOfType<int64_t>() ||
         flag.IsOfType<uint64_t>() || flag.IsOfType<std::optional<int>>() ||
         flag.IsOfType<std::optional<int64_t>>();
}

bool IsReal(const absl::CommandLineFlag &flag) {
  return flag.IsOfType<double>() || flag.IsOfType<float>() ||
         flag.IsOfType<std::optional<double>>();
}

bool IsByteSize(const absl::CommandLineFlag &flag) {
  return flag.IsOfType<ByteSize>() || flag.IsOfType<std::optional<ByteSize>>();
}

std::string Metavar(const Usage &usage, const absl::CommandLineFlag &flag) {
  if (flag.IsOfType<bool>())
    return "";
  auto it = usage.metavars.find(std::string(flag.Name()));
  if (it != usage.metavars.end())
    return it->second;
  if (IsInteger(flag))
    return "N";
  if (IsReal(flag))
    return "X";
  if (IsByteSize(flag))
    return "BYTES";
  return "VALUE";
}

std::string DefaultOf(const absl::CommandLineFlag &flag) {
  std::string value = flag.DefaultValue();
  return value.empty() ? "none" : value;
}

// `text` wrapped to kWidth, each line but the first indented by `indent`.
std::string Wrap(const std::string &text, size_t column, size_t indent) {
  std::string out;
  bool first = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!first && column + 1 + word.size() > kWidth) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
      column = indent;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    absl::StrAppend(&out, word);
    column += word.size();
    first = false;
  }
  return out;
}

} // namespace

std::vector<std::string> ListedFlags(const Usage &usage) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const Usage::Section &section : usage.sections) {
    for (const std::string &name : section.flags) {
      if (seen.insert(name).second)
        names.push_back(name);
    }
  }
  return names;
}

std::string HelpText(const Usage &usage) {
  std::string out = usage.header;
  if (!out.empty() && out.back() != '\n')
    out += '\n';
  for (const Usage::Section &section : usage.sections) {
    absl::StrAppend(&out, "\n", section.title, "\n");
    for (const std::string &name : section.flags) {
      const absl::CommandLineFlag *flag = absl::FindCommandLineFlag(name);
      if (flag == nullptr) {
        // A listing of a flag that is not defined is a bug of the tool.
        absl::StrAppend(&out, "  --", Dashed(name), "  (undefined flag)\n");
        continue;
      }
      std::string line = absl::StrCat("  --", Dashed(name));
      const std::string metavar = Metavar(usage, *flag);
      if (!metavar.empty())
        absl::StrAppend(&line, " ", metavar);
      if (line.size() + 2 > kDescriptionColumn) {
        absl::StrAppend(&line, "\n", std::string(kDescriptionColumn, ' '));
      } else {
        line.resize(kDescriptionColumn, ' ');
      }
      // The default is kept on one line: its spaces are protected from
      // wrapping.
      const std::string description =
          absl::StrCat(flag->Help(), " (default:\x01", DefaultOf(*flag), ")");
      absl::StrAppend(&out, line,
                      absl::StrReplaceAll(Wrap(description, kDescriptionColumn,
                                               kDescriptionColumn),
                                          {{"\x01", " "}}),
                      "\n");
    }
  }
  if (!usage.footer.empty())
    absl::StrAppend(&out, "\n", usage.footer);
  if (!out.empty() && out.back() != '\n')
    out += '\n';
  return out;
}

absl::StatusOr<std::vector<std::string>>
ParseArgs(const std::vector<std::string> &args, const Usage &usage,
          std::set<std::string> *given) {
  const std::vector<std::string> listed = ListedFlags(usage);
  const std::set<std::string> known(listed.begin(), listed.end());
  auto bad = [](const std::string &m) { return absl::InvalidArgumentError(m); };
  std::vector<std::string> positional;
  bool flags_done = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (!flags_done && arg == "-h")
      return absl::NotFoundError("help");
    if (!flags_done && arg.size() > 1 && arg[0] == '-' && arg[1] != '-') {
      // A single dash is a typo of a flag more often than a file name.
      return bad(absl::StrCat("unknown option ", arg,
                              " (flags take two dashes: -", arg, ")"));
    }
    if (flags_done || arg.rfind("--", 0) != 0) {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    std::string spelt = arg.substr(2), value;
    bool has_value = false;
    if (size_t eq = spelt.find('='); eq != std::string::npos) {
      value = spelt.substr(eq + 1);
      spelt = spelt.substr(0, eq);
      has_value = true;
    }
    if (spelt == "help" || spelt == "version")
      return absl::NotFoundError(spelt);
    const std::string name = absl::StrReplaceAll(spelt, {{"-", "_"}});
    absl::CommandLineFlag *flag =
        known.count(name) ? absl::FindCommandLineFlag(name) : nullptr;
    if (flag == nullptr)
      return bad(absl::StrCat("unknown flag --", spelt));
    if (flag->IsOfType<bool>()) {
      if (!has_value)
        value = "true";
    } else if (!has_value) {
      if (i + 1 >= args.size()) {
        return bad(absl::StrCat("--", spelt, " needs a value"));
      }
      value = args[++i];
    }
    std::string error;
    bool parsed = flag->ParseFrom(value, &error);
    if (parsed && flag->IsOfType<double>()) {
      parsed = std::isfinite(flag->TryGet<double>().value_or(0));
    }
    if (!parsed) {
      if (IsInteger(*flag)) {
        return bad(
            absl::StrCat("--", spelt, ": '", value, "' is not an integer"));
      }
      if (IsReal(*flag)) {
        return bad(
            absl::StrCat("--", spelt, ": '", value, "' is not a number"));
      }
      if (flag->IsOfType<bool>()) {
        return bad(absl::StrCat(
            "--", spelt, " takes no value (or true|false), not '", value, "'"));
      }
      if (IsByteSize(*flag)) {
        return bad(absl::StrCat("--", spelt, ": '", value,
                                "' is not a byte count (", kByteCountSyntax,
                                ")"));
      }
      return bad(absl::StrCat("--", spelt, ": '", value, "': ", error));
    }
    if (given != nullptr)
      given->insert(name);
  }
  return positional;
}

void UsageError(const Usage &usage, const std::string &message) {
  std::fprintf(stderr, "%s: %s\n(%s --help lists the options)\n",
               usage.program.c_str(), message.c_str(), usage.program.c_str());
  std::exit(2);
}

std::vector<std::string> ParseCommandLine(int argc, char **argv,
                                          const Usage &usage,
                                          std::set<std::string> *given) {
  absl::StatusOr<std::vector<std::string>> positional =
      ParseArgs(std::vector<std::string>(argv, argv + argc), usage, given);
  if (positional.ok())
    return *std::move(positional);
  if (absl::IsNotFound(positional.status())) {
    const std::string text = positional.status().message() == "version"
                                 ? VersionLine(usage.program) + "\n"
                                 : HelpText(usage);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    std::exit(0);
  }
  UsageError(usage, std::string(positional.status().message()));
}

} // namespace kiln::cli
