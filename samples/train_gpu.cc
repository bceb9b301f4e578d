// Trains a compiled sample on the GPU with the runtime API and evaluates it on
// held-out data: the host program a user of kiln writes.
//
//   train_gpu --model sine.kiln --task sine [--steps 1000] [--seed 1]
//             [--lr 3e-3|1e-2] [--warmup 50] [--expect-mse-below 0.04]
//
// The model is an artifact from `kilnc samples/sine_block.mlir -o sine.kiln`
// (or samples/mlp.mlir with --task regression); its train_step takes inputs
// "x" and "y". Data and schedule are those of the CPU reference trainer
// (samples/train_reference.cpp), so both runs are comparable.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "kiln/runtime.h"
#include "samples/data/sine_task.h"
#include "tools/common/command_line.h"

ABSL_FLAG(std::string, model, "", "training artifact (kilnc); required");
ABSL_FLAG(std::string, task, "sine", "sine | regression");
ABSL_FLAG(int, steps, 1000, "training steps");
ABSL_FLAG(int64_t, seed, 1, "seed of the parameters and of the data");
ABSL_FLAG(double, lr, 0,
          "peak learning rate (0: the task's, 3e-3 sine, 1e-2 regression)");
ABSL_FLAG(int, warmup, 50, "linear warm-up steps");
ABSL_FLAG(double, final_lr_fraction, 0,
          "the cosine's final learning rate, as a fraction of the peak");
ABSL_FLAG(double, expect_mse_below, -1,
          "fail (status 1) unless the held-out MSE is below X (negative: no "
          "check)");

namespace {

struct Flags {
  std::string model;
  std::string task = "sine";
  int steps = 1000;
  uint64_t seed = 1;
  double lr = 0;  // 0: the task's default
  int warmup = 50;
  double final_fraction = 0.0;
  double expect_below = -1;
};

kiln::cli::Usage TrainGpuUsage() {
  kiln::cli::Usage usage;
  usage.program = "train_gpu";
  usage.header =
      "usage: train_gpu --model FILE.kiln --task sine|regression [options]\n"
      "\n"
      "Trains a compiled sample on the GPU with the runtime API (cosine\n"
      "schedule) and evaluates it on held-out data.";
  usage.sections = {{"Options:",
                     {"model", "task", "steps", "seed", "lr", "warmup",
                      "final_lr_fraction", "expect_mse_below"}}};
  usage.metavars = {
      {"model", "FILE.kiln"}, {"task", "NAME"}, {"seed", "S"}, {"lr", "LR"}};
  return usage;
}

// The parsed command line; a bad one exits with status 2 and a message.
Flags ParseFlags(int argc, char** argv) {
  const kiln::cli::Usage usage = TrainGpuUsage();
  const std::vector<std::string> positional =
      kiln::cli::ParseCommandLine(argc, argv, usage);
  if (!positional.empty()) {
    kiln::cli::UsageError(usage, "unexpected argument '" + positional[0] + "'");
  }
  Flags flags;
  flags.model = absl::GetFlag(FLAGS_model);
  flags.task = absl::GetFlag(FLAGS_task);
  flags.steps = absl::GetFlag(FLAGS_steps);
  flags.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  flags.lr = absl::GetFlag(FLAGS_lr);
  flags.warmup = absl::GetFlag(FLAGS_warmup);
  flags.final_fraction = absl::GetFlag(FLAGS_final_lr_fraction);
  flags.expect_below = absl::GetFlag(FLAGS_expect_mse_below);
  if (flags.model.empty()) kiln::cli::UsageError(usage, "--model is required");
  if (flags.task != "sine" && flags.task != "regression") {
    kiln::cli::UsageError(
        usage, "--task: '" + flags.task + "' is not sine or regression");
  }
  auto bad = [&](const std::string& m) { kiln::cli::UsageError(usage, m); };
  if (flags.steps < 1) bad("--steps must be >= 1");
  if (absl::GetFlag(FLAGS_seed) < 0) bad("--seed must be >= 0");
  if (flags.lr < 0) bad("--lr must be >= 0 (0: the task's)");
  if (flags.warmup < 0) bad("--warmup must be >= 0");
  if (flags.final_fraction < 0 || flags.final_fraction > 1) {
    bad("--final-lr-fraction must be in [0, 1]");
  }
  if (flags.lr == 0)
    flags.lr = kiln::samples::DefaultPeakLearningRate(flags.task);
  return flags;
}

// One batch shaped like the entry's inputs x and y.
kiln::Inputs MakeBatch(std::mt19937_64& rng, const std::string& task,
                       const kiln::Shape& x_shape, const kiln::Shape& y_shape) {
  std::vector<float> x, y;
  if (task == "sine") {
    kiln::samples::SineBatch b = kiln::samples::MakeSineBatch(
        rng, static_cast<int>(x_shape[0]), static_cast<int>(x_shape[1]));
    x = std::move(b.noisy);
    y = std::move(b.clean);
  } else {
    kiln::samples::RegressionBatch b =
        kiln::samples::MakeRegressionBatch(rng, static_cast<int>(x_shape[0]));
    x = std::move(b.x);
    y = std::move(b.y);
  }
  kiln::Inputs inputs;
  inputs.emplace("x", kiln::Input::F32(x_shape, x));
  inputs.emplace("y", kiln::Input::F32(y_shape, y));
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
  auto model = (*runtime)->Load(flags.model);
  if (!model.ok()) return Fail(model.status());
  auto trainer = (*model)->NewTrainer({.seed = flags.seed});
  if (!trainer.ok()) return Fail(trainer.status());

  auto bindings = (*trainer)->InputsOf("train_step");
  if (!bindings.ok()) return Fail(bindings.status());
  kiln::Shape x_shape, y_shape;
  for (const auto& binding : *bindings) {
    if (binding.name == "x") x_shape = binding.shape;
    if (binding.name == "y") y_shape = binding.shape;
  }
  if (x_shape.empty() || y_shape.empty()) {
    std::fprintf(stderr,
                 "error: the model's train_step needs inputs x and y\n");
    return 1;
  }

  std::mt19937_64 train_rng(flags.seed * 7919 + 1),
      eval_rng(flags.seed * 104729 + 2);
  std::vector<kiln::Inputs> held_out;
  for (int64_t n = 0; n < 64; n += x_shape[0])
    held_out.push_back(MakeBatch(eval_rng, flags.task, x_shape, y_shape));

  std::printf("training %s (%s) on the GPU, %d steps, cosine schedule\n",
              flags.model.c_str(), flags.task.c_str(), flags.steps);
  auto start = std::chrono::steady_clock::now();
  float loss = NAN;
  for (int step = 0; step < flags.steps; ++step) {
    double lr = kiln::samples::CosineLearningRate(
        step, flags.steps, flags.lr, flags.lr * flags.final_fraction,
        flags.warmup);
    auto result =
        (*trainer)->Step(MakeBatch(train_rng, flags.task, x_shape, y_shape),
                         static_cast<float>(lr));
    if (!result.ok()) return Fail(result.status());
    loss = *result;
    if ((step + 1) % 50 == 0 || step + 1 == flags.steps) {
      double elapsed = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      double rate = (step + 1) / elapsed;
      std::printf("\rstep %5d/%d  loss %.5f  lr %.2e  %.0f steps/s  ETA %.1fs",
                  step + 1, flags.steps, loss, lr, rate,
                  (flags.steps - step - 1) / rate);
      std::fflush(stdout);
    }
  }
  double sum = 0;
  for (const kiln::Inputs& batch : held_out) {
    auto outputs = (*trainer)->Forward(batch);
    if (!outputs.ok()) return Fail(outputs.status());
    auto host = (*runtime)->Download(outputs->at("loss"));
    if (!host.ok()) return Fail(host.status());
    float value;
    std::memcpy(&value, host->data.data(), sizeof value);
    sum += value;
  }
  double mse = sum / held_out.size();
  std::printf("\nheld-out MSE over 64 samples: %.5f\n", mse);
  if (flags.expect_below > 0) {
    bool ok = mse < flags.expect_below;
    std::printf("%s: held-out MSE %s %g\n", ok ? "PASS" : "FAIL",
                ok ? "<" : ">=", flags.expect_below);
    return ok ? 0 : 1;
  }
  return std::isfinite(mse) ? 0 : 1;
}
