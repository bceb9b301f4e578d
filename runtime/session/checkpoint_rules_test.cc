#include "runtime/session/checkpoint_rules.h"

#include "gtest/gtest.h"
#include "runtime/artifact/test_artifacts.h"

namespace kiln {
namespace {

using io::HostTensor;

// Every checkpointed buffer of the classifier (parameters, model state,
// Adam moments), zeros of its shape.
io::Safetensors FullCheckpoint(const artifact::Artifact& a) {
  io::Safetensors st;
  for (const artifact::ResidentBuffer& b : a.resident_buffers) {
    if (IsCheckpointed(b.role)) {
      st.tensors[b.name] = HostTensor{b.dtype, b.shape,
                                      std::vector<uint8_t>(b.byte_size, 0)};
    }
  }
  return st;
}

TEST(CheckpointRulesTest, TrainingCheckpointsHoldEveryCheckpointedBuffer) {
  const artifact::Artifact a = artifact::testing::ClassifierArtifact();
  std::vector<std::string> names;
  for (const io::TensorSpec& spec : CheckpointSpecs(a)) {
    names.push_back(spec.name);
  }
  // Parameters, model state and Adam moments; not the gradients.
  EXPECT_EQ(names, (std::vector<std::string>{"emb", "w", "running",
                                             "adam_m.emb", "adam_v.emb",
                                             "adam_m.w", "adam_v.w"}));
}

TEST(CheckpointRulesTest, ParametersAndStateOnly) {
  const artifact::Artifact a = artifact::testing::ClassifierArtifact();
  io::Safetensors st = FullCheckpoint(a);
  st.tensors["unrelated"] = HostTensor::F32({1}, {1.0f});
  absl::StatusOr<std::vector<BufferLoad>> loads =
      ParameterLoads(a, st, "p.safetensors");
  ASSERT_TRUE(loads.ok()) << loads.status();
  EXPECT_EQ(loads->size(), 3u);  // emb, w, running
  st.tensors.erase("running");
  EXPECT_EQ(ParameterLoads(a, st, "p.safetensors").status().message(),
            "p.safetensors: no tensor for state 'running'");
}

}  // namespace
}  // namespace kiln
