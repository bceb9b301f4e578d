#include "tools/kiln-run/preflight.h"

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/dataset.h"
#include "runtime/artifact/artifact_writer.h"
#include "runtime/artifact/test_artifacts.h"
#include "runtime/io/safetensors.h"

namespace kiln {
namespace {

using io::HostTensor;
using ::testing::HasSubstr;

std::string Tmp(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

HostTensor I64(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(v.data());
  return HostTensor{DType::kI64, std::move(shape),
                    std::vector<uint8_t>(bytes, bytes + 8 * v.size())};
}

HostTensor F32Zeros(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return HostTensor::F32(std::move(shape), std::vector<float>(n, 0.5f));
}

std::string WriteTensors(const std::string& name,
                         std::map<std::string, HostTensor> tensors,
                         std::map<std::string, std::string> metadata = {}) {
  io::Safetensors st;
  st.tensors = std::move(tensors);
  st.metadata = std::move(metadata);
  const std::string path = Tmp(name);
  EXPECT_TRUE(io::WriteSafetensorsFile(path, st).ok());
  return path;
}

// The classifier's records: tokens i64 [2] and labels i64, label
// `bad_label` in record `bad_record`.
std::string WriteDataset(const std::string& name, int64_t records,
                         int64_t bad_record = -1, int64_t bad_label = 0) {
  const std::string path = Tmp(name);
  auto writer = io::DatasetWriter::Create(
      path, {{"tokens", DType::kI64, {2}}, {"labels", DType::kI64, {}}});
  EXPECT_TRUE(writer.ok()) << writer.status();
  for (int64_t r = 0; r < records; ++r) {
    const int64_t record[3] = {r % 16, (r * 7) % 16,
                               r == bad_record ? bad_label : r % 3};
    EXPECT_TRUE((*writer)->Append(record, sizeof(record)).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return path;
}

class PreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Tmp("cls.kiln");
    ASSERT_TRUE(artifact::WriteArtifactFile(
                    artifact::testing::ClassifierArtifact(), model_)
                    .ok());
    inputs_ = WriteTensors("in.safetensors",
                           {{"tokens", I64({4, 2}, {0, 1, 2, 3, 4, 5, 15, 0})},
                            {"labels", I64({4}, {0, 2, -100, 1})},
                            {"emb", F32Zeros({16, 4})},
                            {"running", F32Zeros({3})}});
  }

  // PlanRun of "kiln-run MODEL args...".
  absl::StatusOr<RunPlan> Plan(std::vector<std::string> args,
                               int world_size = 1) {
    absl::FlagSaver saver;
    args.insert(args.begin(), {"kiln-run", model_});
    absl::StatusOr<Flags> flags = FlagsFromArgs(args);
    EXPECT_TRUE(flags.ok()) << flags.status();
    if (!flags.ok()) return flags.status();
    flags_ = *flags;
    return PlanRun(*flags, world_size);
  }
  std::string ErrorOf(std::vector<std::string> args) {
    absl::StatusOr<RunPlan> plan = Plan(std::move(args));
    return plan.ok() ? "ok" : std::string(plan.status().message());
  }

  std::string model_, inputs_;
  Flags flags_;
};

// kiln-ref --save-inputs writes the parameters too: they set the resident
// buffers; i64 labels and tokens are narrowed to i32.
TEST_F(PreflightTest, InputsWithParametersAndI64) {
  absl::StatusOr<RunPlan> plan = Plan({"--inputs", inputs_});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->entry, "forward");
  ASSERT_EQ(plan->inputs.size(), 2u);
  const HostTensor& labels = plan->inputs.at("labels");
  EXPECT_EQ(labels.dtype, DType::kI32);
  std::vector<int32_t> values(4);
  std::memcpy(values.data(), labels.data.data(), 16);
  EXPECT_EQ(values, (std::vector<int32_t>{0, 2, -100, 1}));
  EXPECT_EQ(plan->resident.size(), 2u);
  EXPECT_EQ(plan->resident.count("emb"), 1u);
  EXPECT_EQ(plan->resident.count("running"), 1u);
  EXPECT_THAT(plan->conversions, ::testing::ElementsAre("labels: i64 to i32",
                                                        "tokens: i64 to i32"));
  const std::string text = DescribeRun(*plan, flags_, 1);
  EXPECT_THAT(text, HasSubstr("dry run: " + model_ + " would run"));
  EXPECT_THAT(text, HasSubstr("\n  inference: forward\n"));
  EXPECT_THAT(text, HasSubstr("\n  sets: emb f32[16,4] from " + inputs_));
  EXPECT_THAT(text, HasSubstr("\n  converts: labels: i64 to i32\n"));
}

TEST_F(PreflightTest, InputValuesAreChecked) {
  EXPECT_EQ(
      ErrorOf({"--inputs",
               WriteTensors("label.safetensors",
                            {{"tokens", I64({4, 2}, {0, 0, 0, 0, 0, 0, 0, 0})},
                             {"labels", I64({4}, {0, 1, 3, 1})}})}),
      Tmp("label.safetensors") +
          ": input 'labels': element 2 [2] is 3, outside [0, 3) or "
          "-100 (labels of kiln.cross_entropy over 3 classes with ignore_index "
          "-100)");
  EXPECT_EQ(ErrorOf({"--inputs",
                     WriteTensors("token.safetensors",
                                  {{"tokens", I64({4, 2}, {0, int64_t{1} << 32,
                                                           0, 0, 0, 0, 0, 0})},
                                   {"labels", I64({4}, {0, 1, 2, 1})}})}),
            Tmp("token.safetensors") +
                ": input 'tokens': element 1 [0, 1] is 4294967296, which does "
                "not fit the i32 the model takes");
  EXPECT_EQ(
      ErrorOf({"--inputs",
               WriteTensors("neg.safetensors",
                            {{"tokens", I64({4, 2}, {0, 0, 0, 0, 0, -1, 0, 0})},
                             {"labels", I64({4}, {0, 1, 2, 1})}})}),
      Tmp("neg.safetensors") +
          ": input 'tokens': element 5 [2, 1] is -1, outside [0, 16) "
          "(indices of kiln.embedding of 16 rows)");
}

TEST_F(PreflightTest, InputTensorsAreNamedWhenWrong) {
  const HostTensor tokens = I64({4, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
  const HostTensor labels = I64({4}, {0, 0, 0, 0});
  EXPECT_EQ(ErrorOf({"--inputs", WriteTensors("extra.safetensors",
                                              {{"tokens", tokens},
                                               {"labels", labels},
                                               {"bogus", F32Zeros({1})}})}),
            Tmp("extra.safetensors") +
                ": tensor 'bogus' is neither an input of entry 'forward' (it "
                "takes tokens i32[4,2], labels i32[4]) nor a parameter or "
                "model state of the model");
  EXPECT_EQ(
      ErrorOf({"--inputs", WriteTensors("moment.safetensors",
                                        {{"tokens", tokens},
                                         {"labels", labels},
                                         {"adam_m.w", F32Zeros({4, 3})}})}),
      Tmp("moment.safetensors") +
          ": tensor 'adam_m.w' is the model's optimizer moment "
          "'adam_m.w', which --inputs cannot set (--resume restores a "
          "training checkpoint)");
  EXPECT_EQ(ErrorOf({"--inputs", WriteTensors("missing.safetensors",
                                              {{"tokens", tokens}})}),
            "entry 'forward' is missing input 'labels' (i32[4]) in " +
                Tmp("missing.safetensors"));
  EXPECT_EQ(ErrorOf({"--inputs",
                     WriteTensors("shape.safetensors",
                                  {{"tokens", tokens},
                                   {"labels", I64({2, 2}, {0, 0, 0, 0})}})}),
            Tmp("shape.safetensors") +
                ": input 'labels' is i64[2,2] but entry 'forward' takes "
                "i32[4]");
  EXPECT_EQ(ErrorOf({"--inputs", WriteTensors("type.safetensors",
                                              {{"tokens", tokens},
                                               {"labels", F32Zeros({4})}})}),
            Tmp("type.safetensors") +
                ": input 'labels' is f32[4] but the model takes i32[4]");
  EXPECT_EQ(ErrorOf({"--inputs", WriteTensors("param.safetensors",
                                              {{"tokens", tokens},
                                               {"labels", labels},
                                               {"w", F32Zeros({3, 4})}})}),
            Tmp("param.safetensors") +
                ": parameter 'w' is f32[3,4] but the model's is f32[4,3]");
  EXPECT_EQ(ErrorOf({}),
            "entry 'forward' is missing input 'tokens' (i32[4,2]): give "
            "--inputs");
  EXPECT_THAT(ErrorOf({"--inputs", Tmp("nope.safetensors")}),
              HasSubstr("nope.safetensors"));
}

TEST_F(PreflightTest, EntriesAndCheckpoints) {
  absl::StatusOr<RunPlan> missing = Plan({"--entry", "predict"});
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_EQ(missing.status().message(),
            model_ +
                ": the artifact has no entry 'predict' (entries: "
                "forward, train_step)");
  const std::string data = WriteDataset("train.kilndata", 40);
  absl::StatusOr<RunPlan> train = Plan(
      {"--steps", "10", "--dataset", data, "--batch-fields", "tokens,labels"});
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->entry, "train_step");

  // A checkpoint of step 12: fine for --steps 20, not for 10.
  std::map<std::string, HostTensor> all;
  for (const artifact::ResidentBuffer& b :
       artifact::testing::ClassifierArtifact().resident_buffers) {
    if (b.role != artifact::BufferRole::kGradient) {
      all[b.name] = F32Zeros(b.shape);
    }
  }
  const std::string ckpt =
      WriteTensors("ckpt.safetensors", all, {{"step", "12"}});
  const std::vector<std::string> train_args = {
      "--dataset", data, "--batch-fields", "tokens,labels", "--resume", ckpt};
  std::vector<std::string> args = train_args;
  args.insert(args.end(), {"--steps", "20"});
  absl::StatusOr<RunPlan> resumed = Plan(args);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->start_step, 12);
  args = train_args;
  args.insert(args.end(), {"--steps", "10"});
  EXPECT_EQ(ErrorOf(args),
            "--steps 10 is below the checkpoint's step 12 (" + ckpt + ")");
  all.erase("adam_v.w");
  args = {"--steps",  "20",
          "--resume", WriteTensors("partial.safetensors", all, {{"step", "1"}}),
          "--inputs", inputs_};
  EXPECT_EQ(ErrorOf(args),
            Tmp("partial.safetensors") + ": no tensor 'adam_v.w'");
  // --params and --inputs both setting a parameter.
  all.erase("adam_m.w");
  EXPECT_EQ(ErrorOf({"--inputs", inputs_, "--params",
                     WriteTensors("params.safetensors", all)}),
            "'emb' is set by both " + inputs_ + " and " +
                Tmp("params.safetensors") + ": give it in one of them");
}

TEST_F(PreflightTest, DatasetFieldsAgainstTheEntry) {
  const std::string data = WriteDataset("eval.kilndata", 10);
  absl::StatusOr<RunPlan> plan =
      Plan({"--dataset", data, "--batch-fields", "tokens,labels"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->loader.batch.batch_size, 4u);
  ASSERT_EQ(plan->fields.size(), 2u);
  EXPECT_EQ(plan->fields[1].dtype, DType::kI32);
  absl::StatusOr<uint64_t> records = CheckEveryRecord(*plan);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(*records, 10u);
  EXPECT_THAT(DescribeRun(*plan, flags_, 1),
              HasSubstr("data: " + data +
                        ", 10 records, batches of 4 (tokens "
                        "i32[2], labels i32[] per record), in file order, 2 "
                        "batches per epoch"));

  EXPECT_EQ(ErrorOf({"--dataset", data, "--batch-fields", "tokens,label"}),
            data + " has no field 'label' (fields: tokens, labels)");
  EXPECT_EQ(ErrorOf({"--dataset", data, "--batch-fields", "tokens"}),
            "entry 'forward' is missing input 'labels' (i32[4]): add a field "
            "of " +
                data + " to --batch-fields");
  const std::string wide = Tmp("wide.kilndata");
  {
    auto writer = io::DatasetWriter::Create(
        wide, {{"tokens", DType::kI32, {3}}, {"labels", DType::kF32, {}}});
    ASSERT_TRUE(writer.ok());
    const int32_t record[4] = {0, 0, 0, 0};
    for (int i = 0; i < 8; ++i) ASSERT_TRUE((*writer)->Append(record, 16).ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  EXPECT_EQ(ErrorOf({"--dataset", wide, "--batch-fields", "tokens,labels"}),
            wide +
                ": field 'tokens' holds i32[3] per record, but entry "
                "'forward' takes tokens i32[4,2] (batches of 4 records of "
                "i32[2])");
  EXPECT_EQ(ErrorOf({"--dataset", WriteDataset("few.kilndata", 3),
                     "--batch-fields", "tokens,labels"}),
            Tmp("few.kilndata") + " has 3 records, fewer than one batch of 4");
  absl::StatusOr<RunPlan> two_ranks =
      Plan({"--steps", "5", "--dataset", WriteDataset("six.kilndata", 6),
            "--batch-fields", "tokens,labels"},
           2);
  EXPECT_EQ(two_ranks.status().message(),
            Tmp("six.kilndata") +
                " has 6 records, fewer than one batch of 8 (2 ranks)");
}

// Every record goes through the checks of the run: a label out of range or
// an i64 past i32 is named with its record.
TEST_F(PreflightTest, DatasetValuesAreCheckedPerRecord) {
  const std::string bad = WriteDataset("bad.kilndata", 12, 9, 7);
  absl::StatusOr<RunPlan> plan =
      Plan({"--dataset", bad, "--batch-fields", "tokens,labels"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(CheckEveryRecord(*plan).status().message(),
            bad +
                ": record 9 field 'labels' is 7, outside [0, 3) or -100 "
                "(labels of kiln.cross_entropy over 3 classes with "
                "ignore_index -100)");
  const std::string huge =
      WriteDataset("huge.kilndata", 12, 5, int64_t{1} << 40);
  plan = Plan({"--dataset", huge, "--batch-fields", "tokens,labels"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(CheckEveryRecord(*plan).status().message(),
            huge +
                ": record 5 field 'labels' is 1099511627776, which does "
                "not fit the i32 the model takes");
  // The ignored label is fine.
  plan = Plan({"--dataset", WriteDataset("ignored.kilndata", 12, 4, -100),
               "--batch-fields", "tokens,labels"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(CheckEveryRecord(*plan).ok());
}

TEST_F(PreflightTest, ChecksOutputsAndMemory) {
  const std::string expected =
      WriteTensors("expected.safetensors",
                   {{"loss", F32Zeros({})}, {"probs", F32Zeros({4})}});
  EXPECT_EQ(ErrorOf({"--inputs", inputs_, "--check", expected}),
            expected +
                ": tensor 'probs' names nothing entry 'forward' writes "
                "(it writes loss f32[], accuracy f32[])");
  EXPECT_EQ(
      ErrorOf({"--inputs", inputs_, "--check",
               WriteTensors("shaped.safetensors", {{"loss", F32Zeros({2})}})}),
      Tmp("shaped.safetensors") +
          ": tensor 'loss' is f32[2] but the run writes f32[]");
  EXPECT_EQ(ErrorOf({"--inputs", inputs_, "--output", Tmp("no/such/out")}),
            "--output " + Tmp("no/such/out") + ": there is no folder " +
                Tmp("no/such"));
  ::mkdir(Tmp("folder").c_str(), 0755);
  EXPECT_EQ(ErrorOf({"--inputs", inputs_, "--output", Tmp("folder")}),
            "--output " + Tmp("folder") + " is a directory");
  EXPECT_EQ(ErrorOf({"--steps", "3", "--inputs", inputs_, "--log-dir",
                     inputs_ + "/logs"}),
            "--log-dir " + inputs_ + "/logs: " + inputs_ + " is not a folder");
  EXPECT_EQ(ErrorOf({"--steps", "3", "--inputs", inputs_, "--log-dir",
                     Tmp("new/logs"), "--checkpoint", Tmp("c.safetensors")}),
            "ok");
  EXPECT_EQ(ErrorOf({"--inputs", inputs_, "--memory-limit", "1KiB"}),
            "--memory-limit 1024 bytes is below what entry 'forward' holds on "
            "the device: 3276 bytes (3.2 KiB) (its arena and the resident "
            "buffers)");
}

}  // namespace
}  // namespace kiln
