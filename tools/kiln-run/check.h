// kiln-run --check: compares tensors with those of a safetensors file, one
// line per expected tensor, within --rtol and --atol.
#ifndef KILN_TOOLS_KILN_RUN_CHECK_H_
#define KILN_TOOLS_KILN_RUN_CHECK_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/io/safetensors.h"

namespace kiln {

// An element matches when |actual - expected| <= atol' + rtol * |expected|,
// atol' being atol, or with `scaled_atol` atol times the largest finite
// |expected| of the tensor; with `shared_gradient_scale` too, a gradient's
// (a tensor named grad.*) atol is times the largest of all the gradients'.
// A gradient of cancelling terms (zero in f64 up to 1e-17) carries the
// rounding of its terms, of the size of the model's other gradients, which
// its own small values do not measure.
struct CheckTolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
  bool scaled_atol = false;
  bool shared_gradient_scale = false;
};

// Elements of a host tensor as doubles.
std::vector<double> AsDoubles(const io::HostTensor& t);

// Compares `actual` with every tensor of `expected`; prints one line per
// expected tensor (ok, MISSING, SHAPE or MISMATCH with the errors). False on
// any mismatch, NaN where a number was expected included.
bool CheckTensors(const std::map<std::string, io::HostTensor>& actual,
                  const std::map<std::string, io::HostTensor>& expected,
                  const CheckTolerance& tolerance);

// CheckTensors against the tensors of the file `expected_path`.
absl::StatusOr<bool> CheckAgainstFile(
    const std::map<std::string, io::HostTensor>& actual,
    const std::string& expected_path, const CheckTolerance& tolerance);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_CHECK_H_
