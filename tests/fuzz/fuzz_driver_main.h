//===- fuzz_driver_main.h - the main() of the mutation drivers -------------===//
//
// What ir_fuzz_driver and pipeline_fuzz_driver share: read a seed corpus
// (every file named on the command line), run LLVMFuzzerTestOneInput over
// it, then over --iterations=N mutations (a random corpus input through
// `mutate`) under --seed=S.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTS_FUZZ_FUZZ_DRIVER_MAIN_H
#define KILN_TESTS_FUZZ_FUZZ_DRIVER_MAIN_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace kiln_fuzz {

using Mutator = std::function<std::string(
    const std::string &input, const std::vector<std::string> &corpus,
    std::mt19937_64 &rng)>;

/// Runs the corpus and the mutations; returns the process's exit status
/// (2 for bad arguments).
inline int runDriver(int argc, char **argv, long defaultIterations,
                     const Mutator &mutate) {
  long iterations = defaultIterations;
  uint64_t seed = 1;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--iterations=", 13) == 0) {
      iterations = std::atol(argv[i] + 13);
    } else if (std::strncmp(argv[i], "--seed=", 7) == 0) {
      seed = std::strtoull(argv[i] + 7, nullptr, 10);
    } else {
      std::ifstream file(argv[i], std::ios::binary);
      if (!file) {
        std::fprintf(stderr, "cannot read corpus file %s\n", argv[i]);
        return 2;
      }
      std::stringstream text;
      text << file.rdbuf();
      corpus.push_back(text.str());
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "usage: %s [--iterations=N] [--seed=S] files...\n",
                 argv[0]);
    return 2;
  }
  for (const std::string &input : corpus)
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()),
                           input.size());
  std::mt19937_64 rng(seed);
  for (long i = 0; i < iterations; ++i) {
    const std::string input =
        mutate(corpus[rng() % corpus.size()], corpus, rng);
    if (std::getenv("KILN_FUZZ_ECHO"))
      std::fprintf(stderr, "--- mutation %ld\n%s\n", i, input.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()),
                           input.size());
  }
  std::printf("%zu corpus inputs and %ld mutations ran without a crash\n",
              corpus.size(), iterations);
  return 0;
}

} // namespace kiln_fuzz

#endif // KILN_TESTS_FUZZ_FUZZ_DRIVER_MAIN_H
