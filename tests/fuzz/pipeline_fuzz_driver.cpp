//===- pipeline_fuzz_driver.cpp - structure-aware mutations of models ----===//
//
// Runs LLVMFuzzerTestOneInput (pipeline_fuzz_target.cpp: kilnc's whole
// pipeline) over a seed corpus of valid models and over mutations that keep
// them parseable often enough to reach the passes: a dimension of a tensor
// type replaced (by 0, 1, a prime, a large power of two or the largest
// 64-bit values), an element type swapped, an op replaced by another of the
// same form, a number in an attribute changed, two operands of an op
// swapped, an operand or argument duplicated in place of another. Not
// coverage guided; deterministic under --seed.
//
// Usage: pipeline_fuzz_driver [--iterations=N] [--seed=S] files...
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

const char *const kDims[] = {"0",  "1",     "2",        "3",
                             "7",  "64",    "65537",    "2147483648",
                             "4611686018427387904",     "9223372036854775807"};
const char *const kTypes[] = {"f32", "bf16", "f16", "i32", "i1"};
// Ops of one form each: binary element-wise, unary element-wise,
// reductions.
const std::vector<std::vector<std::string>> kOpFamilies = {
    {"kiln.add", "kiln.sub", "kiln.mul", "kiln.div", "kiln.max", "kiln.min",
     "kiln.pow"},
    {"kiln.exp", "kiln.log", "kiln.tanh", "kiln.relu", "kiln.sigmoid",
     "kiln.neg", "kiln.abs", "kiln.sqrt", "kiln.rsqrt", "kiln.sin",
     "kiln.cos", "kiln.gelu", "kiln.silu", "kiln.erf"},
    {"kiln.reduce_sum", "kiln.reduce_mean", "kiln.reduce_max",
     "kiln.reduce_min"},
};
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

std::string mutate(const std::string &input, std::mt19937_64 &rng) {
  static const std::regex dim("(?:tensor<|x)([0-9]+)(?=x)");
  static const std::regex type("\\b(f32|bf16|f16|i32|i1)\\b");
  static const std::regex op("\\b(kiln\\.[a-z_0-9]+)\\b");
  static const std::regex number("(?:= |\\[|, )(-?[0-9][0-9.e+-]*)");
  static const std::regex operands("(%[A-Za-z0-9_#]+), (%[A-Za-z0-9_#]+)");
  static const std::regex value("(%[A-Za-z0-9_#]+)");
  std::string out = input;
  const int steps = 1 + rng() % 3;
  for (int i = 0; i < steps; ++i) {
    switch (rng() % 6) {
    case 0:
      replaceOne(out, dim, 1, rng,
                 [&](const std::string &) { return std::string(pick(kDims, rng)); });
      break;
    case 1:
      replaceOne(out, type, 1, rng,
                 [&](const std::string &) { return std::string(pick(kTypes, rng)); });
      break;
    case 2:
      replaceOne(out, op, 1, rng, [&](const std::string &old) {
        for (const std::vector<std::string> &family : kOpFamilies)
          for (const std::string &name : family)
            if (name == old)
              return family[rng() % family.size()];
        return old;
      });
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
         std::mt19937_64 &rng) { return mutate(input, rng); });
  if (status == 0)
    PipelineFuzzReport();
  return status;
}
