//===- ir_fuzz_driver.cpp - deterministic mutation driver for the fuzz entry ===//
//
// Runs LLVMFuzzerTestOneInput over a seed corpus (every file named on the
// command line) and over deterministic mutations of it: byte flips, deleted
// and duplicated spans, spliced lines from other inputs, and inserted IR
// tokens. It is not coverage guided (that is run_ir_fuzzer.sh's job); it keeps
// the suite honest about crashes on malformed IR on every build.
//
// Usage: ir_fuzz_driver [--iterations=N] [--seed=S] files...
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/fuzz_driver_main.h"

#include <random>
#include <string>
#include <vector>

namespace {

const char *const kTokens[] = {
    "tensor<",  ">",       "x",       "f32",     "bf16",   "i1",     "i32",
    "%0",       "%arg0",   ":",       ",",       "(",      ")",      "{",
    "}",        "[",       "]",       "=",       "->",     "dense<", "0",
    "-1",       "999999999999", "1.0e+400", "\"", "kiln.", "func.func", "return",
    "dims",     "keepdim", "#kiln.init<", "^bb0",  "\n",     "0x",     "?",
};

std::string mutate(const std::string &input, const std::vector<std::string> &corpus,
                   std::mt19937_64 &rng) {
  std::string out = input;
  int steps = 1 + rng() % 4;
  for (int i = 0; i < steps; ++i) {
    size_t pos = out.empty() ? 0 : rng() % (out.size() + 1);
    switch (rng() % 6) {
    case 0: // flip a byte
      if (!out.empty())
        out[pos % out.size()] ^= static_cast<char>(1 + rng() % 255);
      break;
    case 1: { // delete a span
      size_t len = rng() % 16;
      if (pos < out.size())
        out.erase(pos, len);
      break;
    }
    case 2: { // duplicate a span
      size_t len = rng() % 32;
      if (pos < out.size())
        out.insert(pos, out.substr(pos, len));
      break;
    }
    case 3: // insert a token
      out.insert(pos, kTokens[rng() % (sizeof(kTokens) / sizeof(*kTokens))]);
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
  return out;
}

} // namespace

int main(int argc, char **argv) {
  return kiln_fuzz::runDriver(argc, argv, 2000, mutate);
}
