//===- ir_fuzz_driver.cpp - deterministic mutation driver for the fuzz entry ===//
//
// Runs LLVMFuzzerTestOneInput over a seed corpus (every file named on the
// command line) and over deterministic mutations of it. Most mutations keep
// the input parsing so that the verifiers are what they reach: a token
// replaced by another of its class from the dictionary (--dict, generated
// from the dialect by ir_fuzz_dictionary: an op by one of the same form, an
// element type, an attribute name, an enum case, a keyword, a number). The
// rest damage the text: dictionary tokens and MLIR punctuation inserted,
// byte flips, deleted and duplicated spans, spliced lines from other
// inputs, truncation. It is not coverage guided (that is run_ir_fuzzer.sh's
// job); it keeps the suite honest about crashes on malformed IR on every
// build.
//
// Usage: ir_fuzz_driver --dict=FILE [--iterations=N] [--seed=S]
//                       [--min-parsed=PERCENT] files...
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/fuzz_driver_main.h"

#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

// MLIR's own punctuation and literals, which no dialect registers.
const char *const kSyntax[] = {
    "tensor<", ">",  "x",  "%0", "%arg0", ":",      ",",    "(",  ")",
    "{",       "}",  "[",  "]",  "=",     "->",     "dense<", "\"", "^bb0",
    "\n",      "0x", "?",  "1.0e+400",   "999999999999"};

/// One change that damages the text rather than swapping a token.
void damage(std::string &out, const std::vector<std::string> &corpus,
            std::mt19937_64 &rng) {
  size_t pos = out.empty() ? 0 : rng() % (out.size() + 1);
  switch (rng() % 6) {
  case 0: // flip a byte
    if (!out.empty())
      out[pos % out.size()] ^= static_cast<char>(1 + rng() % 255);
    break;
  case 1: // delete a span
    if (pos < out.size())
      out.erase(pos, rng() % 16);
    break;
  case 2: // duplicate a span
    if (pos < out.size())
      out.insert(pos, out.substr(pos, rng() % 32));
    break;
  case 3: // insert punctuation
    out.insert(pos, kSyntax[rng() % (sizeof(kSyntax) / sizeof(*kSyntax))]);
    break;
  case 4: { // splice a line from another input
    const std::string &other = corpus[rng() % corpus.size()];
    if (!other.empty()) {
      size_t start = rng() % other.size();
      size_t end = other.find('\n', start);
      out.insert(pos, other.substr(start, end == std::string::npos
                                              ? std::string::npos
                                              : end - start + 1));
    }
    break;
  }
  case 5: // truncate
    out.resize(pos);
    break;
  }
}

std::string mutate(const std::string &input,
                   const std::vector<std::string> &corpus,
                   const kiln_fuzz::Dictionary &dictionary,
                   std::mt19937_64 &rng) {
  std::string out = input;
  // The classes a swap takes, each as likely; types and numbers change
  // everywhere they stand (MLIR's text repeats a value's type at its uses).
  static const std::pair<const char *, bool> kSwaps[] = {
      {"op_", false},    {"attr", false}, {"keyword", false},
      {"enum_", false},  {"type", true},  {"number", true}};
  const int steps = 1 + rng() % 2;
  for (int i = 0; i < steps; ++i) {
    const unsigned choice = rng() % 16;
    if (choice < 14) {
      const auto &[kind, everywhere] = kSwaps[rng() % std::size(kSwaps)];
      if (!kiln_fuzz::swapToken(out, dictionary, rng, kind, everywhere))
        kiln_fuzz::swapToken(out, dictionary, rng);
    } else if (choice == 14) {
      kiln_fuzz::insertToken(out, dictionary, rng);
    } else {
      damage(out, corpus, rng);
    }
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  return kiln_fuzz::runDriver(argc, argv, 2000, mutate);
}
