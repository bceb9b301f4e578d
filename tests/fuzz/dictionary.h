//===- dictionary.h - the IR fuzzers' dictionary, by class ------*- C++ -*-===//
//
// The mutation drivers' side of the dictionary that ir_fuzz_dictionary
// generates (libFuzzer's format, name="value" per line, the name a class):
// reading it, and the mutation that keeps most inputs parsing, a token of
// the input replaced by another of its class (an element type by another,
// an op by one of the same form, a number by a number worth trying).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTS_FUZZ_DICTIONARY_H
#define KILN_TESTS_FUZZ_DICTIONARY_H

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln_fuzz {

struct Dictionary {
  /// Tokens by class ("op_3", "type", "number", ...).
  std::map<std::string, std::vector<std::string>> classes;
  /// The class of each token (the first, for a token in several).
  std::unordered_map<std::string, std::string> classOf;
  /// Every token, for insertions.
  std::vector<std::string> tokens;

  bool empty() const { return tokens.empty(); }
};

/// Reads the dictionary at `path`; false with `error` set when it cannot be
/// read or a line is not `name="value"` (values hold no quote or escape).
inline bool readDictionary(const std::string &path, Dictionary &dictionary,
                           std::string &error) {
  std::ifstream file(path);
  if (!file) {
    error = "cannot read dictionary " + path;
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (line.empty() || line[0] == '#')
      continue;
    const size_t equals = line.find("=\"");
    if (equals == std::string::npos || line.back() != '"' ||
        line.size() < equals + 3) {
      error = path + ":" + std::to_string(number) + ": not name=\"value\"";
      return false;
    }
    const std::string name = line.substr(0, equals);
    const std::string value = line.substr(equals + 2, line.size() - equals - 3);
    dictionary.classes[name].push_back(value);
    dictionary.classOf.emplace(value, name);
    dictionary.tokens.push_back(value);
  }
  if (dictionary.empty()) {
    error = "dictionary " + path + " is empty";
    return false;
  }
  return true;
}

namespace detail {

inline bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '#';
}

inline bool isDigit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

/// A token of the input that the dictionary knows: where, how long, and
/// its class ("number_dim" for a number followed by a shape's 'x',
/// "number" for any other).
struct Occurrence {
  size_t at, size;
  const std::string *kind;
};

/// Every known token of `text`: words (an element type after a shape's
/// `x` counts as one) and numbers, optionally signed.
inline std::vector<Occurrence> occurrences(const std::string &text,
                                           const Dictionary &dictionary) {
  static const std::string number = "number", dim = "number_dim";
  std::vector<Occurrence> found;
  for (size_t i = 0; i < text.size();) {
    const bool afterShapeX = i >= 2 && text[i - 1] == 'x' &&
                             (isDigit(text[i - 2]) || text[i - 2] == '?');
    const bool starts = isWordChar(text[i]) &&
                        (i == 0 || !isWordChar(text[i - 1]) || afterShapeX);
    // Value, block and symbol names are the input's own.
    const bool named = i > 0 && (text[i - 1] == '%' || text[i - 1] == '^' ||
                                 text[i - 1] == '@');
    if (!starts || named) {
      ++i;
      while (named && i < text.size() && isWordChar(text[i]))
        ++i;
      continue;
    }
    if (isDigit(text[i])) {
      size_t begin = i > 0 && text[i - 1] == '-' ? i - 1 : i;
      size_t end = i;
      while (
          end < text.size() &&
          (isDigit(text[end]) || text[end] == '.' ||
           ((text[end] == 'e' || text[end] == 'E') && end + 1 < text.size() &&
            (isDigit(text[end + 1]) || text[end + 1] == '-' ||
             text[end + 1] == '+'))))
        end += text[end] == 'e' || text[end] == 'E' ? 2 : 1;
      const bool inShape = end < text.size() && text[end] == 'x';
      found.push_back({begin, end - begin, inShape ? &dim : &number});
      i = end;
      continue;
    }
    size_t end = i;
    while (end < text.size() && isWordChar(text[end]))
      ++end;
    auto known = dictionary.classOf.find(text.substr(i, end - i));
    if (known != dictionary.classOf.end())
      found.push_back({i, end - i, &known->second});
    i = end;
  }
  return found;
}

} // namespace detail

/// Replaces a token of `text` that the dictionary knows, of a class that
/// starts with `kind` (all classes when empty), by another token of its
/// class: at one place, or `everywhere` it stands (the same replacement
/// throughout, which keeps the types that MLIR's text repeats at every use
/// of a value consistent). False when `text` holds no such token.
inline bool swapToken(std::string &text, const Dictionary &dictionary,
                      std::mt19937_64 &rng, const std::string &kind = "",
                      bool everywhere = false) {
  std::vector<detail::Occurrence> found = detail::occurrences(text, dictionary);
  if (!kind.empty())
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const detail::Occurrence &o) {
                                 return o.kind->compare(0, kind.size(), kind) !=
                                        0;
                               }),
                found.end());
  if (found.empty())
    return false;
  const detail::Occurrence chosen = found[rng() % found.size()];
  auto choices = dictionary.classes.find(*chosen.kind);
  if (choices == dictionary.classes.end())
    return false;
  const std::vector<std::string> &tokens = choices->second;
  const std::string old = text.substr(chosen.at, chosen.size);
  const std::string &with = tokens[rng() % tokens.size()];
  // Back to front, so that the earlier places stay where they were found.
  for (auto it = found.rbegin(); it != found.rend(); ++it)
    if (it->at == chosen.at ||
        (everywhere && it->kind == chosen.kind &&
         text.compare(it->at, it->size, old) == 0))
      text.replace(it->at, it->size, with);
  return true;
}

/// Inserts a random token of the dictionary at a random word boundary of
/// `text`, with a space on either side.
inline void insertToken(std::string &text, const Dictionary &dictionary,
                        std::mt19937_64 &rng) {
  size_t at = text.empty() ? 0 : rng() % (text.size() + 1);
  while (at < text.size() && detail::isWordChar(text[at]))
    ++at;
  text.insert(at,
              " " + dictionary.tokens[rng() % dictionary.tokens.size()] + " ");
}

} // namespace kiln_fuzz

#endif // KILN_TESTS_FUZZ_DICTIONARY_H
