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

#include "kiln/runtime.h"
#include "samples/data/sine_task.h"

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

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--model")
      flags.model = value();
    else if (arg == "--task")
      flags.task = value();
    else if (arg == "--steps")
      flags.steps = std::atoi(value());
    else if (arg == "--seed")
      flags.seed = std::strtoull(value(), nullptr, 10);
    else if (arg == "--lr")
      flags.lr = std::atof(value());
    else if (arg == "--warmup")
      flags.warmup = std::atoi(value());
    else if (arg == "--final-lr-fraction")
      flags.final_fraction = std::atof(value());
    else if (arg == "--expect-mse-below")
      flags.expect_below = std::atof(value());
    else {
      std::fprintf(stderr, "error: unknown flag %s\n", arg.c_str());
      return false;
    }
  }
  if (flags.model.empty() ||
      (flags.task != "sine" && flags.task != "regression")) {
    std::fprintf(stderr,
                 "usage: train_gpu --model FILE.kiln --task sine|regression "
                 "[--steps N] [--seed S] [--lr LR] [--warmup N] "
                 "[--expect-mse-below X]\n");
    return false;
  }
  if (flags.lr <= 0)
    flags.lr = kiln::samples::DefaultPeakLearningRate(flags.task);
  return true;
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
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;

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
