// Trains a token-sequence sample on the GPU from KILNDATA files with the
// runtime API, then evaluates it on held-out data:
//
//   train_transformer --model cls.kiln --eval-model cls_eval.kiln
//       --train cls_train.kilndata --heldout cls_heldout.kilndata
//       [--steps 1500] [--lr 1e-3] [--warmup 100] [--seed 1]
//       [--log-every 100] [--expect-accuracy-above 0.9]
//       [--expect-bits-below 2.5]
//
// --model is a training artifact of samples/transformer_classifier.mlir or
// samples/byte_lm.mlir (kilnc); --eval-model an artifact of the same model
// without dropout (its rate set to 0), whose forward entry gives the held-out
// metrics; make_dataset --task order|text writes the data. Every train_step
// input is a dataset field of the same name. Training batches are shuffled
// under --seed (which also draws the initial parameters), uploaded ahead of
// the step that uses them, and the learning rate warms up linearly, then
// decays along a cosine to 0 (kiln-run --schedule cosine does the same).
// After training the parameters are copied into the evaluation session and
// its forward entry runs on every whole held-out batch: the mean loss is
// printed in nats and in bits (per byte, for the language model), with the
// mean of every other scalar output (the classifier's accuracy).

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "kiln/batch_loader.h"
#include "kiln/dataset.h"
#include "kiln/runtime.h"
#include "samples/data/dataset_records.h"
#include "samples/data/sine_task.h"
#include "tools/common/command_line.h"

ABSL_FLAG(std::string, model, "", "training artifact (kilnc); required");
ABSL_FLAG(std::string, eval_model, "",
          "artifact of the same model without dropout, for the held-out "
          "metrics; required");
ABSL_FLAG(std::string, train, "", "training data (KILNDATA); required");
ABSL_FLAG(std::string, heldout, "", "held-out data (KILNDATA); required");
ABSL_FLAG(int, steps, 1500, "training steps (>= 1)");
ABSL_FLAG(double, lr, 1e-3, "peak learning rate");
ABSL_FLAG(int, warmup, 100, "linear warm-up steps");
ABSL_FLAG(int64_t, seed, 1, "seed of the parameters and of the data order");
ABSL_FLAG(int, log_every, 100, "a progress line every N steps (>= 1)");
ABSL_FLAG(double, expect_accuracy_above, -1,
          "fail (status 1) unless the held-out accuracy is above X "
          "(negative: no check)");
ABSL_FLAG(double, expect_bits_below, -1,
          "fail (status 1) unless the held-out loss in bits is below X "
          "(negative: no check)");

namespace {

struct Flags {
  std::string model;
  std::string eval_model;
  std::string train;
  std::string heldout;
  int steps = 1500;
  double lr = 1e-3;
  int warmup = 100;
  uint64_t seed = 1;
  int log_every = 100;
  double expect_accuracy_above = -1;
  double expect_bits_below = -1;
};

kiln::cli::Usage TrainTransformerUsage() {
  kiln::cli::Usage usage;
  usage.program = "train_transformer";
  usage.header =
      "usage: train_transformer --model FILE.kiln --eval-model FILE.kiln\n"
      "           --train FILE.kilndata --heldout FILE.kilndata [options]\n"
      "\n"
      "Trains a token-sequence sample on the GPU from KILNDATA files, then\n"
      "evaluates it on the held-out data.";
  usage.sections = {
      {"Options:",
       {"model", "eval_model", "train", "heldout", "steps", "lr", "warmup",
        "seed", "log_every", "expect_accuracy_above", "expect_bits_below"}}};
  usage.metavars = {{"model", "FILE.kiln"},
                    {"eval_model", "FILE.kiln"},
                    {"train", "FILE.kilndata"},
                    {"heldout", "FILE.kilndata"},
                    {"seed", "S"},
                    {"lr", "LR"}};
  return usage;
}

// The parsed command line; a bad one exits with status 2 and a message.
Flags ParseFlags(int argc, char** argv) {
  const kiln::cli::Usage usage = TrainTransformerUsage();
  const std::vector<std::string> positional =
      kiln::cli::ParseCommandLine(argc, argv, usage);
  auto bad = [&](const std::string& m) { kiln::cli::UsageError(usage, m); };
  if (!positional.empty()) bad("unexpected argument '" + positional[0] + "'");
  Flags flags;
  flags.model = absl::GetFlag(FLAGS_model);
  flags.eval_model = absl::GetFlag(FLAGS_eval_model);
  flags.train = absl::GetFlag(FLAGS_train);
  flags.heldout = absl::GetFlag(FLAGS_heldout);
  flags.steps = absl::GetFlag(FLAGS_steps);
  flags.lr = absl::GetFlag(FLAGS_lr);
  flags.warmup = absl::GetFlag(FLAGS_warmup);
  flags.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  flags.log_every = absl::GetFlag(FLAGS_log_every);
  flags.expect_accuracy_above = absl::GetFlag(FLAGS_expect_accuracy_above);
  flags.expect_bits_below = absl::GetFlag(FLAGS_expect_bits_below);
  if (flags.model.empty()) bad("--model is required");
  if (flags.eval_model.empty()) bad("--eval-model is required");
  if (flags.train.empty()) bad("--train is required");
  if (flags.heldout.empty()) bad("--heldout is required");
  if (flags.steps < 1) bad("--steps must be >= 1");
  if (flags.log_every < 1) bad("--log-every must be >= 1");
  if (flags.warmup < 0) bad("--warmup must be >= 0");
  if (!(flags.lr > 0)) bad("--lr must be > 0");
  if (absl::GetFlag(FLAGS_seed) < 0) bad("--seed must be >= 0");
  if (flags.expect_accuracy_above >= 1) {
    bad("--expect-accuracy-above must be below 1");
  }
  return flags;
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
  std::vector<std::string> fields;
  for (const auto& binding : *bindings) fields.push_back(binding.name);
  const uint64_t batch_size = static_cast<uint64_t>((*bindings)[0].shape[0]);

  auto train_data = kiln::io::MappedDataset::Open(flags.train);
  if (!train_data.ok()) return Fail(train_data.status());
  kiln::DeviceBatchLoaderOptions options;
  options.batch = {.batch_size = batch_size,
                   .shuffle = true,
                   .seed = flags.seed,
                   .drop_last = true};
  options.fields = fields;
  auto loader = kiln::DeviceBatchLoader::Create(**runtime, train_data->get(),
                                                options, (*trainer)->stream());
  if (!loader.ok()) return Fail(loader.status());

  std::printf(
      "training %s on the GPU: %d steps of %llu records of %s, "
      "AdamW, peak lr %g, warm-up %d, cosine schedule\n",
      flags.model.c_str(), flags.steps,
      static_cast<unsigned long long>(batch_size), flags.train.c_str(),
      flags.lr, flags.warmup);
  const auto start = std::chrono::steady_clock::now();
  float loss = NAN;
  for (int step = 0; step < flags.steps; ++step) {
    const double lr = kiln::samples::CosineLearningRate(
        step, flags.steps, flags.lr, 0.0, flags.warmup);
    auto batch = (*loader)->Next();
    if (!batch.ok()) return Fail(batch.status());
    auto result = (*trainer)->Step(batch->inputs(), static_cast<float>(lr));
    if (!result.ok()) return Fail(result.status());
    loss = *result;
    if (!std::isfinite(loss)) {
      std::fprintf(stderr, "error: the loss is %g at step %d\n", loss,
                   step + 1);
      return 1;
    }
    if ((step + 1) % flags.log_every == 0 || step + 1 == flags.steps) {
      const double elapsed = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      std::printf("step %d/%d  loss %.6g  lr %.3g  %.1f steps/s\n", step + 1,
                  flags.steps, loss, lr, (step + 1) / elapsed);
      std::fflush(stdout);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("trained %d steps in %.1f s\n", flags.steps, seconds);

  // The evaluation model has the same parameters without dropout: copy them
  // over by name.
  auto eval_model = (*runtime)->Load(flags.eval_model);
  if (!eval_model.ok()) return Fail(eval_model.status());
  auto session = (*eval_model)->NewSession();
  if (!session.ok()) return Fail(session.status());
  for (const std::string& name : (*trainer)->parameter_names()) {
    auto trained = (*trainer)->Parameter(name);
    if (!trained.ok()) return Fail(trained.status());
    auto host = (*runtime)->Download(*trained);
    if (!host.ok()) return Fail(host.status());
    auto target = (*session)->Parameter(name);
    if (!target.ok()) return Fail(target.status());
    absl::Status copied = (*runtime)->CopyInto(*target, *host);
    if (!copied.ok()) return Fail(copied);
  }

  auto heldout = kiln::io::MappedDataset::Open(flags.heldout);
  if (!heldout.ok()) return Fail(heldout.status());
  auto eval_bindings = (*session)->InputsOf("forward");
  if (!eval_bindings.ok()) return Fail(eval_bindings.status());
  std::vector<std::string> eval_fields;
  for (const auto& binding : *eval_bindings)
    eval_fields.push_back(binding.name);
  const uint64_t batches = (*heldout)->record_count() / batch_size;
  if (batches == 0) {
    std::fprintf(stderr, "error: %s holds less than one batch\n",
                 flags.heldout.c_str());
    return 1;
  }
  std::map<std::string, double> means;
  for (uint64_t b = 0; b < batches; ++b) {
    auto inputs = kiln::samples::ReadRecords(**heldout, eval_fields,
                                             b * batch_size, batch_size);
    if (!inputs.ok()) return Fail(inputs.status());
    auto outputs = (*session)->Forward(*inputs);
    if (!outputs.ok()) return Fail(outputs.status());
    for (const auto& [name, tensor] : *outputs) {
      auto host = (*runtime)->Download(tensor);
      if (!host.ok()) return Fail(host.status());
      if (!host->shape.empty() || host->dtype != kiln::DType::kF32) continue;
      float value;
      std::memcpy(&value, host->data.data(), sizeof value);
      means[name] += value / static_cast<double>(batches);
    }
  }
  const double heldout_loss = means["loss"];
  const double bits = heldout_loss / std::log(2.0);
  std::printf("held-out over %llu records of %s: loss %.4f nats = %.4f bits",
              static_cast<unsigned long long>(batches * batch_size),
              flags.heldout.c_str(), heldout_loss, bits);
  for (const auto& [name, mean] : means)
    if (name != "loss") std::printf(", %s %.4f", name.c_str(), mean);
  std::printf("\n");

  bool ok = std::isfinite(heldout_loss);
  if (flags.expect_accuracy_above >= 0) {
    const bool pass = means.count("accuracy") &&
                      means["accuracy"] > flags.expect_accuracy_above;
    std::printf("%s: held-out accuracy %s %g\n", pass ? "PASS" : "FAIL",
                pass ? ">" : "<=", flags.expect_accuracy_above);
    ok = ok && pass;
  }
  if (flags.expect_bits_below >= 0) {
    const bool pass = bits < flags.expect_bits_below;
    std::printf("%s: held-out bits %s %g\n", pass ? "PASS" : "FAIL",
                pass ? "<" : ">=", flags.expect_bits_below);
    ok = ok && pass;
  }
  return ok ? 0 : 1;
}
