//===- ChoiceOption.h - enumerated options parsed by name --------*- C++
//-*-===//
//
// The parser of options whose value is one of a few names (a schedule, an
// on/off/auto choice): the option is typed by an enum, and the enum's names
// are given once, by a function found by argument-dependent lookup:
//
//   llvm::ArrayRef<mlir::kiln::OptionChoice<Schedule>> optionChoices(Schedule);
//
// With `template <> class llvm::cl::parser<Schedule> : public
// mlir::kiln::ChoiceParser<Schedule>` the enum is an option type of llvm::cl
// and of ODS pass options alike (Option<"s", "s", "Schedule", ...>), and a
// pipeline prints its value by name. A bad value is an error naming the
// option and every accepted value, parsed in one place for both.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_OPTIONS_CHOICEOPTION_H
#define KILN_COMPILER_OPTIONS_CHOICEOPTION_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::kiln {

/// One accepted value of an enumerated option: its name and its value.
template <typename Enum> struct OptionChoice {
  llvm::StringLiteral name;
  Enum value;
};

/// The name of `value`.
template <typename Enum> llvm::StringRef choiceName(Enum value) {
  for (const OptionChoice<Enum> &choice : optionChoices(Enum()))
    if (choice.value == value)
      return choice.name;
  llvm_unreachable("a value without a name");
}

/// The value named `name`, if any.
template <typename Enum> std::optional<Enum> parseChoice(llvm::StringRef name) {
  for (const OptionChoice<Enum> &choice : optionChoices(Enum()))
    if (choice.name == name)
      return choice.value;
  return std::nullopt;
}

/// The accepted names, joined with `separator` and `last` before the last
/// one: "auto, cooperative or pingpong".
template <typename Enum>
std::string choiceNames(llvm::StringRef separator = ", ",
                        llvm::StringRef last = " or ") {
  llvm::ArrayRef<OptionChoice<Enum>> choices = optionChoices(Enum());
  std::string names;
  for (size_t i = 0; i < choices.size(); ++i)
    names += (i == 0                    ? ""
              : i + 1 == choices.size() ? last
                                        : separator)
                 .str() +
             choices[i].name.str();
  return names;
}

/// The llvm::cl parser of an enumerated option. A bad value is reported
/// by reject(), as llvm::cl reports any bad value; a command-line tool may
/// report it its own way (tools/common/ToolOptions.h).
template <typename Enum>
class ChoiceParser : public llvm::cl::basic_parser<Enum> {
public:
  ChoiceParser(llvm::cl::Option &option)
      : llvm::cl::basic_parser<Enum>(option) {}
  virtual ~ChoiceParser() = default;

  bool parse(llvm::cl::Option &option, llvm::StringRef argName,
             llvm::StringRef arg, Enum &value) {
    if (std::optional<Enum> parsed = parseChoice<Enum>(arg)) {
      value = *parsed;
      return false;
    }
    return reject(option, argName,
                  "must be " + choiceNames<Enum>() + ", got '" + arg + "'");
  }

  /// Reports `problem` with the value of `option`; returns true (an error),
  /// as parse() does.
  virtual bool reject(llvm::cl::Option &option, llvm::StringRef argName,
                      const llvm::Twine &problem) const {
    return option.error(problem, argName);
  }

  /// --help shows the option as --name=<a|b|c>.
  llvm::StringRef getValueName() const override {
    static const std::string names = choiceNames<Enum>("|", "|");
    return names;
  }

  void printOptionDiff(const llvm::cl::Option &option, Enum value,
                       const llvm::cl::OptionValue<Enum> &defaultValue,
                       size_t globalWidth) const {
    this->printOptionName(option, globalWidth);
    llvm::outs() << "= " << choiceName(value) << " (default: ";
    if (defaultValue.hasValue())
      llvm::outs() << choiceName(defaultValue.getValue());
    else
      llvm::outs() << "*no default*";
    llvm::outs() << ")\n";
  }

  /// How a pass pipeline prints the value: by name.
  static void print(llvm::raw_ostream &os, Enum value) {
    os << choiceName(value);
  }
};

} // namespace mlir::kiln

#endif // KILN_COMPILER_OPTIONS_CHOICEOPTION_H
