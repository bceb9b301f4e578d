// Trains samples/digits_cnn.mlir (a small CNN on scikit-learn's 8x8
// handwritten digits) on the GPU with the runtime API, then evaluates it on
// the held-out split:
//
//   train_digits --model digits_cnn.kiln --eval-model digits_cnn_eval.kiln
//       --train digits_train.kilndata --heldout digits_heldout.kilndata
//       [--epochs 20] [--lr 3e-3] [--warmup 25] [--seed 1] [--no-shuffle]
//       [--checkpoint FILE] [--expect-accuracy-above 0.98]
//
// --model is the training artifact (kilnc), --eval-model an artifact of the
// same model whose batch is the evaluation's (samples/make_gpu_bundle.sh
// compiles one with the held-out split's 179 records as its batch, so that
// every held-out record is counted once); make_dataset --task digits writes
// the data, records of `images` [1, 8, 8] f32 and `labels` [] i32.
//
// Training: --epochs passes over the memory-mapped training file, each in a
// fresh random order under --seed (file order with --no-shuffle) in whole
// batches of the artifact's batch size, uploaded ahead of the step that uses
// them; the learning rate warms up linearly over --warmup steps, then decays
// along a cosine to 0 at the last step (kiln-run --schedule cosine). --seed
// also draws the initial parameters. Each epoch prints its mean loss.
//
// Evaluation: the trained parameters and batch norm running statistics are
// saved (--checkpoint, else a temporary file) and loaded into a session of
// the evaluation artifact, whose forward entry normalises with the running
// statistics (PyTorch's model.eval()). It runs on every whole batch of the
// held-out file; the mean loss and the accuracy are printed, with the count
// of records classified correctly.

#include <unistd.h>

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
          "artifact of the same model with the evaluation's batch; required");
ABSL_FLAG(std::string, train, "", "training data (KILNDATA); required");
ABSL_FLAG(std::string, heldout, "", "held-out data (KILNDATA); required");
ABSL_FLAG(int, epochs, 20, "passes over the training data (>= 1)");
ABSL_FLAG(double, lr, 3e-3, "peak learning rate");
ABSL_FLAG(int, warmup, 25, "linear warm-up steps (>= 0)");
ABSL_FLAG(int64_t, seed, 1, "seed of the parameters and of the data order");
ABSL_FLAG(bool, no_shuffle, false, "training records in file order");
ABSL_FLAG(std::string, checkpoint, "",
          "where the trained state is saved for the evaluation (none: a "
          "temporary file)");
ABSL_FLAG(double, expect_accuracy_above, -1,
          "fail (status 1) unless the held-out accuracy is above X "
          "(negative: no check)");

namespace {

struct Flags {
  std::string model;
  std::string eval_model;
  std::string train;
  std::string heldout;
  int epochs = 20;
  double lr = 3e-3;
  int warmup = 25;
  uint64_t seed = 1;
  bool shuffle = true;
  std::string checkpoint;
  double expect_accuracy_above = -1;
};

kiln::cli::Usage TrainDigitsUsage() {
  kiln::cli::Usage usage;
  usage.program = "train_digits";
  usage.header =
      "usage: train_digits --model FILE.kiln --eval-model FILE.kiln\n"
      "           --train FILE.kilndata --heldout FILE.kilndata [options]\n"
      "\n"
      "Trains samples/digits_cnn.mlir on the GPU and reports its held-out\n"
      "accuracy.";
  usage.sections = {
      {"Options:",
       {"model", "eval_model", "train", "heldout", "epochs", "lr", "warmup",
        "seed", "no_shuffle", "checkpoint", "expect_accuracy_above"}}};
  usage.metavars = {{"model", "FILE.kiln"},
                    {"eval_model", "FILE.kiln"},
                    {"train", "FILE.kilndata"},
                    {"heldout", "FILE.kilndata"},
                    {"seed", "S"},
                    {"lr", "LR"},
                    {"checkpoint", "FILE"}};
  return usage;
}

// The parsed command line; a bad one exits with status 2 and a message.
Flags ParseFlags(int argc, char** argv) {
  const kiln::cli::Usage usage = TrainDigitsUsage();
  const std::vector<std::string> positional =
      kiln::cli::ParseCommandLine(argc, argv, usage);
  auto bad = [&](const std::string& m) { kiln::cli::UsageError(usage, m); };
  if (!positional.empty()) bad("unexpected argument '" + positional[0] + "'");
  Flags flags;
  flags.model = absl::GetFlag(FLAGS_model);
  flags.eval_model = absl::GetFlag(FLAGS_eval_model);
  flags.train = absl::GetFlag(FLAGS_train);
  flags.heldout = absl::GetFlag(FLAGS_heldout);
  flags.epochs = absl::GetFlag(FLAGS_epochs);
  flags.lr = absl::GetFlag(FLAGS_lr);
  flags.warmup = absl::GetFlag(FLAGS_warmup);
  flags.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  flags.shuffle = !absl::GetFlag(FLAGS_no_shuffle);
  flags.checkpoint = absl::GetFlag(FLAGS_checkpoint);
  flags.expect_accuracy_above = absl::GetFlag(FLAGS_expect_accuracy_above);
  if (flags.model.empty()) bad("--model is required");
  if (flags.eval_model.empty()) bad("--eval-model is required");
  if (flags.train.empty()) bad("--train is required");
  if (flags.heldout.empty()) bad("--heldout is required");
  if (flags.epochs < 1) bad("--epochs must be >= 1");
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

// The value of a scalar f32 output.
absl::StatusOr<double> Scalar(kiln::Runtime& runtime,
                              const kiln::Outputs& outputs,
                              const std::string& name) {
  auto it = outputs.find(name);
  if (it == outputs.end())
    return absl::NotFoundError("the forward entry has no output '" + name +
                               "'");
  auto host = runtime.Download(it->second);
  if (!host.ok()) return host.status();
  if (!host->shape.empty() || host->dtype != kiln::DType::kF32)
    return absl::InvalidArgumentError("output '" + name +
                                      "' is not a scalar f32");
  float value;
  std::memcpy(&value, host->data.data(), sizeof value);
  return value;
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
  const uint64_t steps_per_epoch = (*train_data)->record_count() / batch_size;
  if (steps_per_epoch == 0) {
    std::fprintf(stderr, "error: %s holds less than one batch\n",
                 flags.train.c_str());
    return 1;
  }
  const int steps = flags.epochs * static_cast<int>(steps_per_epoch);
  kiln::DeviceBatchLoaderOptions options;
  options.batch = {.batch_size = batch_size,
                   .shuffle = flags.shuffle,
                   .seed = flags.seed,
                   .drop_last = true,
                   .num_epochs = static_cast<uint64_t>(flags.epochs)};
  options.fields = fields;
  auto loader = kiln::DeviceBatchLoader::Create(**runtime, train_data->get(),
                                                options, (*trainer)->stream());
  if (!loader.ok()) return Fail(loader.status());

  std::printf(
      "training %s on the GPU: %d epochs of %llu steps of %llu records of %s "
      "(%s), AdamW, peak lr %g, warm-up %d, cosine schedule\n",
      flags.model.c_str(), flags.epochs,
      static_cast<unsigned long long>(steps_per_epoch),
      static_cast<unsigned long long>(batch_size), flags.train.c_str(),
      flags.shuffle ? "shuffled" : "file order", flags.lr, flags.warmup);
  const auto start = std::chrono::steady_clock::now();
  double epoch_loss = 0;
  for (int step = 0; step < steps; ++step) {
    const double lr = kiln::samples::CosineLearningRate(step, steps, flags.lr,
                                                        0.0, flags.warmup);
    auto batch = (*loader)->Next();
    if (!batch.ok()) return Fail(batch.status());
    auto loss = (*trainer)->Step(batch->inputs(), static_cast<float>(lr));
    if (!loss.ok()) return Fail(loss.status());
    if (!std::isfinite(*loss)) {
      std::fprintf(stderr, "error: the loss is %g at step %d\n", *loss,
                   step + 1);
      return 1;
    }
    epoch_loss += *loss;
    if ((step + 1) % steps_per_epoch == 0) {
      const double elapsed = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      std::printf(
          "epoch %llu/%d  step %d  mean loss %.6g  lr %.3g  %.1f steps/s\n",
          static_cast<unsigned long long>((step + 1) / steps_per_epoch),
          flags.epochs, step + 1,
          epoch_loss / static_cast<double>(steps_per_epoch), lr,
          (step + 1) / elapsed);
      std::fflush(stdout);
      epoch_loss = 0;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("trained %d steps in %.2f s\n", steps, seconds);

  // Parameters and running statistics go to the evaluation session through
  // a checkpoint, which holds both by name.
  std::string checkpoint = flags.checkpoint;
  if (checkpoint.empty()) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") +
                       "/train_digits_XXXXXX.safetensors";
    const int fd = mkstemps(path.data(), 12);
    if (fd < 0) {
      std::fprintf(stderr, "error: cannot create a file in %s\n", path.c_str());
      return 1;
    }
    close(fd);
    checkpoint = path;
  }
  absl::Status saved = (*trainer)->Save(checkpoint);
  if (!saved.ok()) return Fail(saved);
  auto eval_model = (*runtime)->Load(flags.eval_model);
  if (!eval_model.ok()) return Fail(eval_model.status());
  auto session = (*eval_model)->NewSession();
  if (!session.ok()) return Fail(session.status());
  absl::Status loaded = (*session)->LoadParameters(checkpoint);
  if (flags.checkpoint.empty()) std::remove(checkpoint.c_str());
  if (!loaded.ok()) return Fail(loaded);

  auto heldout = kiln::io::MappedDataset::Open(flags.heldout);
  if (!heldout.ok()) return Fail(heldout.status());
  auto eval_bindings = (*session)->InputsOf("forward");
  if (!eval_bindings.ok()) return Fail(eval_bindings.status());
  std::vector<std::string> eval_fields;
  for (const auto& binding : *eval_bindings)
    eval_fields.push_back(binding.name);
  const uint64_t eval_batch =
      static_cast<uint64_t>((*eval_bindings)[0].shape[0]);
  const uint64_t batches = (*heldout)->record_count() / eval_batch;
  if (batches == 0) {
    std::fprintf(stderr, "error: %s holds less than one batch of %llu\n",
                 flags.heldout.c_str(),
                 static_cast<unsigned long long>(eval_batch));
    return 1;
  }
  double loss_sum = 0;
  double correct = 0;
  for (uint64_t b = 0; b < batches; ++b) {
    auto inputs = kiln::samples::ReadRecords(**heldout, eval_fields,
                                             b * eval_batch, eval_batch);
    if (!inputs.ok()) return Fail(inputs.status());
    auto outputs = (*session)->Forward(*inputs);
    if (!outputs.ok()) return Fail(outputs.status());
    auto loss = Scalar(**runtime, *outputs, "loss");
    if (!loss.ok()) return Fail(loss.status());
    auto accuracy = Scalar(**runtime, *outputs, "accuracy");
    if (!accuracy.ok()) return Fail(accuracy.status());
    loss_sum += *loss;
    correct += std::round(*accuracy * static_cast<double>(eval_batch));
  }
  const uint64_t counted = batches * eval_batch;
  const double accuracy = correct / static_cast<double>(counted);
  const double heldout_loss = loss_sum / static_cast<double>(batches);
  std::printf(
      "held-out over %llu of %llu records of %s: loss %.4f, accuracy %.4f "
      "(%.0f correct)\n",
      static_cast<unsigned long long>(counted),
      static_cast<unsigned long long>((*heldout)->record_count()),
      flags.heldout.c_str(), heldout_loss, accuracy, correct);

  bool ok = std::isfinite(heldout_loss);
  if (flags.expect_accuracy_above >= 0) {
    const bool pass = accuracy > flags.expect_accuracy_above;
    std::printf("%s: held-out accuracy %s %g\n", pass ? "PASS" : "FAIL",
                pass ? ">" : "<=", flags.expect_accuracy_above);
    ok = ok && pass;
  }
  return ok ? 0 : 1;
}
