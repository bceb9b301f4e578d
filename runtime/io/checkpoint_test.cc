#include "runtime/io/checkpoint.h"

#include <cstdio>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/io/safetensors.h"

namespace kiln {
namespace io {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::vector<float> RandomValues(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(rng);
  return values;
}

// A model with a parameter, its AdamW state and a scalar counter.
std::vector<TensorSpec> Specs() {
  return {{"w", DType::kF32, {3, 4}},
          {"adam_m.w", DType::kF32, {3, 4}},
          {"adam_v.w", DType::kF32, {3, 4}},
          {"skipped_updates", DType::kF32, {}}};
}

Checkpoint RandomCheckpoint(uint32_t seed, int64_t step) {
  std::mt19937 rng(seed);
  Checkpoint checkpoint;
  checkpoint.step = step;
  for (const TensorSpec& spec : Specs()) {
    size_t n = 1;
    for (int64_t extent : spec.shape) n *= extent;
    checkpoint.tensors[spec.name] =
        HostTensor::F32(spec.shape, RandomValues(rng, n));
  }
  return checkpoint;
}

TEST(CheckpointTest, RoundTripsTensorsAndStep) {
  const Checkpoint written = RandomCheckpoint(7, 1234);
  const std::string path = TempPath("roundtrip.safetensors");
  ASSERT_TRUE(WriteCheckpoint(path, written).ok());
  absl::StatusOr<Checkpoint> read = ReadCheckpoint(path, Specs());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->step, 1234);
  EXPECT_EQ(read->tensors, written.tensors);
  // The file is plain safetensors with the step and format in its metadata.
  absl::StatusOr<Safetensors> file = ReadSafetensorsFile(path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->metadata.at("format"), "kiln");
  EXPECT_EQ(file->metadata.at("step"), "1234");
  EXPECT_EQ(file->tensors, written.tensors);
}

TEST(CheckpointTest, RefusesACheckpointThatDoesNotFitNamingTheTensor) {
  const std::string path = TempPath("misfit.safetensors");
  Checkpoint checkpoint = RandomCheckpoint(8, 5);
  checkpoint.tensors.erase("adam_v.w");
  ASSERT_TRUE(WriteCheckpoint(path, checkpoint).ok());
  absl::Status missing = ReadCheckpoint(path, Specs()).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.message()),
              HasSubstr(path + ": no tensor 'adam_v.w'"));

  checkpoint = RandomCheckpoint(8, 5);
  checkpoint.tensors["w"] = HostTensor::F32({4, 3}, std::vector<float>(12));
  ASSERT_TRUE(WriteCheckpoint(path, checkpoint).ok());
  absl::Status shape = ReadCheckpoint(path, Specs()).status();
  EXPECT_THAT(std::string(shape.message()),
              HasSubstr("tensor 'w' is f32[4,3] but the model's is f32[3,4]"));

  checkpoint = RandomCheckpoint(8, 5);
  checkpoint.tensors["w"] = HostTensor::I32({3, 4}, std::vector<int32_t>(12));
  ASSERT_TRUE(WriteCheckpoint(path, checkpoint).ok());
  absl::Status dtype = ReadCheckpoint(path, Specs()).status();
  EXPECT_THAT(std::string(dtype.message()),
              HasSubstr("tensor 'w' is i32[3,4] but the model's is f32[3,4]"));

  checkpoint = RandomCheckpoint(8, 5);
  checkpoint.tensors["momentum.w"] =
      HostTensor::F32({3, 4}, std::vector<float>(12));
  ASSERT_TRUE(WriteCheckpoint(path, checkpoint).ok());
  absl::Status extra = ReadCheckpoint(path, Specs()).status();
  EXPECT_THAT(std::string(extra.message()),
              HasSubstr("tensor 'momentum.w' is not a parameter"));
}

TEST(CheckpointTest, NeedsAValidStep) {
  const std::string path = TempPath("nostep.safetensors");
  for (const char* step : {"", "-1", "five", "12x"}) {
    Safetensors st;
    st.tensors = RandomCheckpoint(9, 0).tensors;
    if (*step) st.metadata["step"] = step;
    ASSERT_TRUE(WriteSafetensorsFile(path, st).ok());
    absl::Status status = ReadCheckpoint(path, Specs()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << step;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("has no valid \"step\""));
  }
  EXPECT_EQ(
      ReadCheckpoint(TempPath("absent.safetensors"), Specs()).status().code(),
      absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace io
}  // namespace kiln
