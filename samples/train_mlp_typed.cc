// Trains samples/mlp.mlir on the GPU through its typed header: the class
// kiln_samples::Mlp that `kilnc samples/mlp.mlir -o mlp.kiln -H mlp_typed.h`
// writes (built by //samples:mlp_typed). Inputs are fields of a struct
// (Mlp::TrainStepInputs::x is a TypedInput<f32, 64, 8>), parameters are
// methods (w1(), grad_w1(), adam_m_w1(), ...); a misspelt name or a batch
// of the wrong size does not compile.
//
//   train_mlp_typed [--model mlp.kiln] [--steps 1000] [--seed 1] [--lr 1e-2]
//                   [--warmup 50] [--expect-mse-below 0.05]
//
// Without --model it trains the artifact built beside the header (embedded
// in the binary); a --model file must be that artifact, or one with the same
// interface under --any-build (the header checks it before it touches the
// GPU). Data and schedule are those of train_gpu --task regression.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "kiln/runtime.h"
#include "kiln/typed.h"
#include "samples/data/sine_task.h"
#include "samples/mlp_typed.h"
#include "tools/common/command_line.h"

namespace kiln {
namespace embedded {
extern const unsigned char kMlpTypedArtifact[];
extern const size_t kMlpTypedArtifact_size;
}  // namespace embedded
}  // namespace kiln

ABSL_FLAG(std::string, model, "",
          "artifact to train; none: the one built beside the header, "
          "embedded in the binary");
ABSL_FLAG(bool, any_build, false,
          "accept a --model with the header's interface from another build");
ABSL_FLAG(int, steps, 1000, "training steps");
ABSL_FLAG(int64_t, seed, 1, "seed of the parameters and of the data");
ABSL_FLAG(double, lr, 0, "peak learning rate (0: the regression task's, 1e-2)");
ABSL_FLAG(int, warmup, 50, "linear warm-up steps");
ABSL_FLAG(double, expect_mse_below, -1,
          "fail (status 1) unless the held-out MSE is below X (negative: no "
          "check)");

namespace {

using kiln_samples::Mlp;
using XInput = decltype(Mlp::TrainStepInputs::x);
using YInput = decltype(Mlp::TrainStepInputs::y);
constexpr int kBatch = static_cast<int>(XInput::kShape[0]);
static_assert(XInput::kShape[1] == kiln::samples::kRegressionFeatures,
              "mlp.mlir takes 8 features");
static_assert(YInput::kShape[0] == kBatch && YInput::kShape[1] == 1);

struct Flags {
  std::string model;
  bool any_build = false;
  int steps = 1000;
  uint64_t seed = 1;
  double lr = 0;
  int warmup = 50;
  double expect_below = -1;
};

// The parsed command line; a bad one exits with status 2 and a message.
Flags ParseFlags(int argc, char** argv) {
  kiln::cli::Usage usage;
  usage.program = "train_mlp_typed";
  usage.header =
      "usage: train_mlp_typed [options]\n"
      "\n"
      "Trains samples/mlp.mlir on the GPU through its typed header.";
  usage.sections = {{"Options:",
                     {"model", "any_build", "steps", "seed", "lr", "warmup",
                      "expect_mse_below"}}};
  usage.metavars = {{"model", "FILE.kiln"}, {"seed", "S"}, {"lr", "LR"}};
  const std::vector<std::string> positional =
      kiln::cli::ParseCommandLine(argc, argv, usage);
  if (!positional.empty()) {
    kiln::cli::UsageError(usage, "unexpected argument '" + positional[0] + "'");
  }
  Flags flags;
  flags.model = absl::GetFlag(FLAGS_model);
  flags.any_build = absl::GetFlag(FLAGS_any_build);
  flags.steps = absl::GetFlag(FLAGS_steps);
  flags.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  flags.lr = absl::GetFlag(FLAGS_lr);
  flags.warmup = absl::GetFlag(FLAGS_warmup);
  flags.expect_below = absl::GetFlag(FLAGS_expect_mse_below);
  auto bad = [&](const std::string& m) { kiln::cli::UsageError(usage, m); };
  if (flags.steps < 1) bad("--steps must be >= 1");
  if (absl::GetFlag(FLAGS_seed) < 0) bad("--seed must be >= 0");
  if (flags.lr < 0) bad("--lr must be >= 0 (0: the task's)");
  if (flags.warmup < 0) bad("--warmup must be >= 0");
  if (flags.lr == 0)
    flags.lr = kiln::samples::DefaultPeakLearningRate("regression");
  return flags;
}

// A batch of the regression task as typed inputs: the arrays have the
// static sizes of x and y, so a batch of another size does not compile.
template <typename Inputs>
Inputs MakeBatch(std::mt19937_64& rng) {
  kiln::samples::RegressionBatch b =
      kiln::samples::MakeRegressionBatch(rng, kBatch);
  std::array<float, XInput::kNumElements> x;
  std::array<float, YInput::kNumElements> y;
  std::copy(b.x.begin(), b.x.end(), x.begin());
  std::copy(b.y.begin(), b.y.end(), y.begin());
  Inputs inputs;
  inputs.x = x;
  inputs.y = y;
  return inputs;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);

  auto runtime = kiln::Runtime::Open(0);
  if (!runtime.ok()) return Fail(runtime.status());
  const kiln::typed::Match match = flags.any_build
                                       ? kiln::typed::Match::kInterface
                                       : kiln::typed::Match::kArtifact;
  absl::StatusOr<std::unique_ptr<Mlp>> mlp =
      flags.model.empty()
          ? Mlp::LoadFromMemory(
                **runtime,
                absl::string_view(reinterpret_cast<const char*>(
                                      kiln::embedded::kMlpTypedArtifact),
                                  kiln::embedded::kMlpTypedArtifact_size),
                {.seed = flags.seed}, match)
          : Mlp::Load(**runtime, flags.model, {.seed = flags.seed}, match);
  if (!mlp.ok()) return Fail(mlp.status());

  std::mt19937_64 train_rng(flags.seed * 7919 + 1),
      eval_rng(flags.seed * 104729 + 2);
  std::printf("training mlp (typed header %s) on the GPU, %d steps\n",
              Mlp::kHeader, flags.steps);
  float loss = NAN;
  for (int step = 0; step < flags.steps; ++step) {
    double lr = kiln::samples::CosineLearningRate(step, flags.steps, flags.lr,
                                                  0.0, flags.warmup);
    absl::StatusOr<float> result = (*mlp)->TrainStep(
        MakeBatch<Mlp::TrainStepInputs>(train_rng), static_cast<float>(lr));
    if (!result.ok()) return Fail(result.status());
    loss = *result;
    if ((step + 1) % 100 == 0 || step + 1 == flags.steps)
      std::printf("step %5d/%d  loss %.5f  lr %.2e\n", step + 1, flags.steps,
                  loss, lr);
  }

  // The gradients of the last step, through the typed accessors.
  absl::StatusOr<Mlp::BufferTypes::grad_w1> grad = (*mlp)->grad_w1();
  if (!grad.ok()) return Fail(grad.status());
  absl::StatusOr<kiln::HostTensor> grad_host = (*runtime)->Download(*grad);
  if (!grad_host.ok()) return Fail(grad_host.status());
  double sum_squares = 0;
  for (int64_t i = 0; i < Mlp::BufferTypes::grad_w1::kNumElements; ++i) {
    float g;
    std::memcpy(&g, grad_host->data.data() + 4 * i, 4);
    sum_squares += double{g} * g;
  }
  std::printf("|grad.w1| after the last step: %.3e\n", std::sqrt(sum_squares));

  // Held-out loss (the forward entry's typed output).
  double sum = 0;
  constexpr int kHeldOutBatches = 4;
  for (int i = 0; i < kHeldOutBatches; ++i) {
    absl::StatusOr<Mlp::ForwardOutputs> outputs =
        (*mlp)->Forward(MakeBatch<Mlp::ForwardInputs>(eval_rng));
    if (!outputs.ok()) return Fail(outputs.status());
    absl::StatusOr<kiln::HostTensor> host = (*runtime)->Download(outputs->loss);
    if (!host.ok()) return Fail(host.status());
    float value;
    std::memcpy(&value, host->data.data(), sizeof value);
    sum += value;
  }
  double mse = sum / kHeldOutBatches;
  std::printf("held-out MSE over %d samples: %.5f\n", kHeldOutBatches * kBatch,
              mse);
  if (flags.expect_below > 0) {
    bool ok = mse < flags.expect_below;
    std::printf("%s: held-out MSE %s %g\n", ok ? "PASS" : "FAIL",
                ok ? "<" : ">=", flags.expect_below);
    return ok ? 0 : 1;
  }
  return std::isfinite(mse) ? 0 : 1;
}
