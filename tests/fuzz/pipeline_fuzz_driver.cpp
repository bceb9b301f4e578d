//===- pipeline_fuzz_driver.cpp - structure-aware mutations of models ----===//
//
// Runs LLVMFuzzerTestOneInput (pipeline_fuzz_target.cpp: kilnc's whole
// pipeline) over a seed corpus of valid models and over mutations that keep
// them parseable often enough to reach the passes: a dimension of the
// tensor types replaced everywhere it stands (by 0, 1, a prime, a large
// power of two or the largest 64-bit values), an element type swapped
// everywhere, an op replaced by another of the same form (all three from
// the dictionary that ir_fuzz_dictionary generates from the dialect,
// --dict), a number in an attribute changed, two operands of an op
// swapped, an operand or argument duplicated in place of another.
// Not coverage guided; deterministic under --seed.
//
// Usage: pipeline_fuzz_driver --dict=FILE [--iterations=N] [--seed=S]
//                             files...
// (KILN_FUZZ_ECHO=1 prints each mutation before it runs.)
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/fuzz_driver_main.h"

#include <random>
#include <regex>
#include <string>
#include <vector>

extern "C" void PipelineFuzzReport();

namespace {

const char *const kNumbers[] = {"0", "1", "-1", "2", "1.0e+39", "-0.0",
                                "1.0e-45", "3", "1000000000000"};

template <class T, size_t N> const T &pick(const T (&list)[N], std::mt19937_64 &rng) {
  return list[rng() % N];
}

/// The positions of every match of `pattern` in `text`.
std::vector<std::smatch> matches(const std::string &text, const std::regex &pattern) {
  std::vector<std::smatch> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
       it != std::sregex_iterator(); ++it)
    found.push_back(*it);
  return found;
}

/// Replaces sub-match `group` of a random match of `pattern` by `with`
/// (chosen per match); leaves `text` as it is without a match.
template <class Choose>
void replaceOne(std::string &text, const std::regex &pattern, int group,
                std::mt19937_64 &rng, Choose choose) {
  std::vector<std::smatch> found = matches(text, pattern);
  if (found.empty())
    return;
  const std::smatch &m = found[rng() % found.size()];
  const size_t at = m.position(group);
  const std::string old = m.str(group);
  text.replace(at, old.size(), choose(old));
}

std::string mutate(const std::string &input,
                   const kiln_fuzz::Dictionary &dictionary,
                   std::mt19937_64 &rng) {
  static const std::regex number("(?:= |\\[|, )(-?[0-9][0-9.e+-]*)");
  static const std::regex operands("(%[A-Za-z0-9_#]+), (%[A-Za-z0-9_#]+)");
  static const std::regex value("(%[A-Za-z0-9_#]+)");
  std::string out = input;
  const int steps = 1 + rng() % 2;
  for (int i = 0; i < steps; ++i) {
    switch (rng() % 6) {
    case 0: // a dimension, everywhere it stands (the types stay consistent)
      kiln_fuzz::swapToken(out, dictionary, rng, "number_dim", true);
      break;
    case 1: // an element type, everywhere
      kiln_fuzz::swapToken(out, dictionary, rng, "type", true);
      break;
    case 2:
      kiln_fuzz::swapToken(out, dictionary, rng, "op_");
      break;
    case 3:
      replaceOne(out, number, 1, rng,
                 [&](const std::string &) { return std::string(pick(kNumbers, rng)); });
      break;
    case 4: { // swap two operands of an op
      std::vector<std::smatch> found = matches(out, operands);
      if (found.empty())
        break;
      const std::smatch &m = found[rng() % found.size()];
      out.replace(m.position(0), m.length(0), m.str(2) + ", " + m.str(1));
      break;
    }
    case 5: { // one value used in place of another
      std::vector<std::smatch> found = matches(out, value);
      if (found.size() < 2)
        break;
      const std::smatch &from = found[rng() % found.size()];
      const std::string with = from.str(1);
      const std::smatch &to = found[rng() % found.size()];
      out.replace(to.position(1), to.length(1), with);
      break;
    }
    }
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  const int status = kiln_fuzz::runDriver(
      argc, argv, 200,
      [](const std::string &input, const std::vector<std::string> &,
         const kiln_fuzz::Dictionary &dictionary,
         std::mt19937_64 &rng) { return mutate(input, dictionary, rng); });
  if (status == 0)
    PipelineFuzzReport();
  return status;
}
