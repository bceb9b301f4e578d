// Small training artifacts for the GPU tests, built with ArtifactWriter from
// the hand-written kernels of linreg_kernels.cu (embedded as PTX for
// compute_90 and a cubin for sm_90): linear regression pred = x W + b with a
// mean-squared-error loss and the entries forward, forward_backward,
// apply_update and train_step of compiler/training/TrainStep.h.
#ifndef KILN_TESTS_GPU_LINREG_ARTIFACT_H_
#define KILN_TESTS_GPU_LINREG_ARTIFACT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/artifact/artifact.h"

namespace kiln {
namespace testing {

enum class LinRegOptimizer { kSgd, kAdam };

struct LinRegOptions {
  int32_t batch = 16;
  int32_t in = 5;
  int32_t out = 3;
  LinRegOptimizer optimizer = LinRegOptimizer::kAdam;
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  // Kernel images: PTX always; a cubin for sm_90 unless false.
  bool cubin = true;
  // Marks the images as waiting for their predecessor grid (the kernels do),
  // which lets the runtime launch them with programmatic serialization.
  bool waits_for_predecessor = false;
  // Only an entry "predict" (x -> pred) and the parameters: an inference
  // model.
  bool inference_only = false;
  // Model state as batch norm keeps it: "running_mean.pred" [out], initialised
  // to ones, which forward_backward and train_step update in place with the
  // batch mean of pred (momentum `momentum`), like running statistics.
  bool running_mean = false;
  float momentum = 0.25f;
  // train_step takes an input "inject_fault" (i32 scalar): when nonzero, a
  // kernel launched between the updates of w and b stores to an illegal
  // address (fault_when), as a faulty kernel would.
  bool fault_input = false;
  // Data parallel, as kilnc --data-parallel plans it: forward_backward and
  // train_step average grad.w and grad.b over the ranks, each in a bucket of
  // its own issued as soon as its gradient kernel is issued; train_step's
  // updates wait for both, forward_backward ends with them.
  bool data_parallel = false;
};

// Parameters: w [in, out] (xavier, gain 1, stream 0), b [out] (uniform in
// [-0.1, 0.1], stream 1); gradients grad.w, grad.b; Adam state adam_m.w,
// adam_v.w, adam_m.b, adam_v.b. Entry inputs x [batch, in], y [batch, out]
// (f32), lr (f32) and step (i32); outputs loss (and pred of forward).
artifact::Artifact LinRegArtifact(const LinRegOptions& options = {});
// The serialised file.
absl::StatusOr<std::string> LinRegArtifactBytes(
    const LinRegOptions& options = {});

// A deterministic regression problem: x uniform in [-1, 1], y = x W* + b*
// with fixed W*, b* (no noise), `batches` batches of `batch` rows.
struct LinRegData {
  std::vector<float> x;  // [rows, in]
  std::vector<float> y;  // [rows, out]
};
LinRegData MakeLinRegData(int64_t rows, int32_t in, int32_t out, uint64_t seed);

}  // namespace testing
}  // namespace kiln

#endif  // KILN_TESTS_GPU_LINREG_ARTIFACT_H_
