//===- OptionText.cpp - pass-option text split by option name -------------===//

#include "compiler/options/OptionText.h"

namespace mlir::kiln {

std::pair<std::string, std::string>
partitionOptions(llvm::StringRef text,
                 llvm::function_ref<bool(llvm::StringRef name)> takes) {
  std::string taken, others;
  auto take = [&](llvm::StringRef option) {
    if (option.empty())
      return;
    std::string &into = takes(option.split('=').first) ? taken : others;
    into += (into.empty() ? "" : " ") + option.str();
  };
  size_t start = 0, depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote)
      quote = c == quote ? 0 : quote;
    else if (c == '"' || c == '\'')
      quote = c;
    else if (c == '{')
      ++depth;
    else if (c == '}' && depth)
      --depth;
    else if (c == ' ' && !depth) {
      take(text.slice(start, i));
      start = i + 1;
    }
  }
  take(text.drop_front(start));
  return {taken, others};
}

} // namespace mlir::kiln
