#include "tools/kiln-run/flags.h"

#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

// The error of `args` after "kiln-run model.kiln", or "ok".
std::string ErrorOf(std::vector<std::string> args) {
  absl::FlagSaver saver;
  args.insert(args.begin(), {"kiln-run", "model.kiln"});
  absl::StatusOr<Flags> flags = FlagsFromArgs(args);
  return flags.ok() ? "ok" : std::string(flags.status().message());
}

const std::vector<std::string> kTrain = {"--steps", "100", "--inputs",
                                         "b.safetensors"};

std::vector<std::string> Train(std::vector<std::string> more) {
  std::vector<std::string> args = kTrain;
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Flags of `args`, parsed from the defaults.
absl::StatusOr<Flags> Parse(std::vector<std::string> args) {
  absl::FlagSaver saver;
  args.insert(args.begin(), "kiln-run");
  return FlagsFromArgs(args);
}

TEST(KilnRunFlagsTest, ModesAndDefaults) {
  absl::StatusOr<Flags> f = Parse({"m.kiln", "--memory-limit", "1GiB"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->mode, RunMode::kInference);
  EXPECT_EQ(f->entry, "forward");
  EXPECT_EQ(f->memory_limit, uint64_t{1} << 30);
  f = Parse({"m.kiln", "--describe"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->mode, RunMode::kDescribe);
  f = Parse({"m.kiln", "--dataset=d", "--batch-fields=x,y", "--dry-run"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->mode, RunMode::kEvaluation);
  EXPECT_TRUE(f->dry_run);
  f = Parse({"m.kiln", "--steps=5", "--inputs=b"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->mode, RunMode::kTraining);
  EXPECT_EQ(f->given, (std::set<std::string>{"steps", "inputs"}));
}

TEST(KilnRunFlagsTest, GoodCommandLines) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"--entry", "predict", "--inputs", "i", "--check", "c", "--rtol",
            "0", "--atol", "1e-3", "--bench", "--iters", "5", "--warmup", "0"},
           {"--memory-limit", "437MiB", "--inputs", "i"},
           // An untrained checkpoint; a warm-up longer than a short run.
           {"--steps", "0", "--inputs", "i", "--checkpoint", "c"},
           Train({"--warmup", "500"}),
           Train({"--schedule", "cosine", "--schedule-steps", "200", "--warmup",
                  "200", "--checkpoint", "c", "--checkpoint-every", "10",
                  "--log-every", "5", "--log-dir", "d", "--lr", "0"}),
           {"--steps", "5", "--dataset", "d", "--batch-fields", "x,y",
            "--no-shuffle", "--nproc", "2", "--dry-run"},
           {"--dataset", "d", "--batch-fields", "x", "--params", "p", "--entry",
            "eval"},
       }) {
    EXPECT_EQ(ErrorOf(args), "ok") << args[0];
  }
}

TEST(KilnRunFlagsTest, OutOfRange) {
  EXPECT_EQ(ErrorOf({"--device", "-1"}), "--device must be >= 0");
  EXPECT_EQ(ErrorOf({"--memory-limit", "0"}),
            "--memory-limit must be at least 1 byte");
  EXPECT_THAT(ErrorOf({"--memory-limit", "1TiB"}),
              HasSubstr("--memory-limit: '1TiB' is not a byte count"));
  EXPECT_EQ(ErrorOf({"--seed", "-3"}), "--seed must be >= 0");
  EXPECT_EQ(ErrorOf({"--check", "c", "--rtol", "-1e-5"}),
            "--rtol and --atol must be >= 0");
  EXPECT_EQ(ErrorOf({"--bench", "--iters", "0"}), "--iters must be >= 1");
  EXPECT_EQ(ErrorOf({"--bench", "--warmup", "-1"}), "--warmup must be >= 0");
  EXPECT_EQ(ErrorOf({"--steps", "-1", "--inputs", "b"}),
            "--steps must be >= 0");
  EXPECT_EQ(ErrorOf(Train({"--lr", "-0.1"})), "--lr must be >= 0");
  EXPECT_EQ(ErrorOf(Train({"--checkpoint", "c", "--checkpoint-every", "0"})),
            "--checkpoint-every must be >= 1");
  EXPECT_EQ(ErrorOf(Train({"--log-every", "-2"})), "--log-every must be >= 0");
  EXPECT_EQ(ErrorOf({"--distributed", "mpi"}),
            "--distributed: 'mpi' is not auto, nccl or off");
  EXPECT_EQ(
      ErrorOf({"--steps", "5", "--dataset", "d", "--batch-fields", "x,y,x"}),
      "--batch-fields names 'x' twice");
}

TEST(KilnRunFlagsTest, Conflicts) {
  EXPECT_EQ(ErrorOf({"--inputs", "i", "--atol", "1"}),
            "--atol: tolerances of --check, which is not given");
  EXPECT_EQ(ErrorOf({"--check", "c", "--shared-gradient-scale"}),
            "--shared-gradient-scale needs --scaled-atol");
  EXPECT_EQ(ErrorOf({"--iters", "5"}), "--iters needs --bench");
  EXPECT_EQ(ErrorOf({"--warmup", "5"}),
            "--warmup is the warm-up of --bench (or, with --steps, of the "
            "learning rate)");
  EXPECT_EQ(ErrorOf({"--batch-fields", "x"}), "--batch-fields needs --dataset");
  EXPECT_EQ(ErrorOf({"--allow-nonfinite-inputs"}),
            "--allow-nonfinite-inputs needs --inputs or --dataset");
  EXPECT_EQ(ErrorOf({"--checkpoint-every", "10"}),
            "--checkpoint-every: training flags; they need --steps");
  EXPECT_EQ(ErrorOf({"--lr", "1", "--schedule", "cosine"}),
            "--lr, --schedule: training flags; they need --steps");
  EXPECT_EQ(ErrorOf({"--nproc", "2"}), "--nproc trains: it needs --steps");
  EXPECT_EQ(ErrorOf({"--distributed", "nccl"}),
            "--distributed=nccl trains: it needs --steps");
  EXPECT_EQ(ErrorOf(Train({"--bench"})),
            "--bench: inference flags; training (--steps) uses train_step "
            "(start from a checkpoint with --resume)");
  EXPECT_EQ(ErrorOf(Train({"--params", "p"})),
            "--params: inference flags; training (--steps) uses train_step "
            "(start from a checkpoint with --resume)");
  EXPECT_EQ(ErrorOf({"--steps", "5"}),
            "training needs either --dataset (with --batch-fields) or "
            "--inputs (one fixed batch)");
  EXPECT_EQ(ErrorOf(Train({"--checkpoint-every", "10"})),
            "--checkpoint-every needs --checkpoint");
  EXPECT_EQ(ErrorOf(Train({"--no-shuffle"})),
            "--no-shuffle orders the records of --dataset, which is not given");
  EXPECT_EQ(ErrorOf(Train({"--schedule-steps", "300"})),
            "--schedule-steps is the length of --schedule cosine");
  EXPECT_EQ(ErrorOf(Train({"--schedule", "cosine", "--schedule-steps", "50"})),
            "--schedule-steps 50 is shorter than --steps 100: the learning "
            "rate would be 0 after it");
  EXPECT_EQ(ErrorOf({"--steps", "5", "--dataset", "d", "--batch-fields", "x",
                     "--nproc", "2", "--distributed", "off"}),
            "--nproc starts data-parallel ranks; it does not go with "
            "--distributed=off");
  EXPECT_EQ(ErrorOf({"--dataset", "d"}),
            "--dataset and --batch-fields go together");
  EXPECT_EQ(ErrorOf({"--dataset", "d", "--batch-fields", "x", "--bench"}),
            "--dataset evaluates the entry batch by batch; it does not go "
            "with --bench");
  EXPECT_EQ(ErrorOf({"--describe", "--inputs", "x"}),
            "--describe takes no other flags (got --inputs)");
  EXPECT_EQ(ErrorOf({"--describe", "--dry-run"}),
            "--describe takes no other flags (got --dry-run)");
}

TEST(KilnRunFlagsTest, Positional) {
  EXPECT_EQ(Parse({}).status().message(), "no model given");
  EXPECT_EQ(Parse({"a", "b"}).status().message(),
            "one model expected, got 2 arguments");
  EXPECT_TRUE(absl::IsNotFound(Parse({"-h"}).status()));
  EXPECT_EQ(Parse({"--version"}).status().message(), "version");
}

}  // namespace
}  // namespace kiln
