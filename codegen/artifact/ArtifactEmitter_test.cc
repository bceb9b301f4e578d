//===- ArtifactEmitter_test.cc - launch shapes reach the artifact ---------===//

#include "codegen/artifact/ArtifactEmitter.h"

#include "runtime/artifact/artifact.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <string>

namespace mlir::kiln::codegen {
namespace {

namespace art = ::kiln::artifact;

/// One kernel without parameters, launched four times by entry "forward":
/// plainly, in clusters of 2 x 2 x 1, cooperatively and persistent.
CompiledModule shapedModule(const std::string &arch) {
  CompiledModule module;
  module.arch = arch;
  CompiledKernelImage kernel;
  kernel.name = "shaped_0";
  kernel.arch = arch;
  kernel.binary.ptx = ".version 8.0\n.target sm_90\n";
  module.kernels.push_back(kernel);
  CompiledEntry entry;
  entry.name = "forward";
  CompiledLaunch plain;
  plain.grid = {8, 4, 1};
  plain.block = {128, 1, 1};
  CompiledLaunch clustered = plain;
  clustered.cluster = {2, 2, 1};
  CompiledLaunch cooperative = plain;
  cooperative.cooperative = true;
  CompiledLaunch persistent = plain;
  persistent.grid = {132, 1, 1};
  persistent.persistentBlocksPerSm = 1;
  entry.launches = {plain, clustered, cooperative, persistent};
  module.entries.push_back(entry);
  return module;
}

TEST(ArtifactEmitter, LaunchesKeepTheirClusterAndCooperativeFlags) {
  std::string bytes, error;
  ASSERT_TRUE(writeArtifact(shapedModule("sm_90"), bytes, error)) << error;
  absl::StatusOr<art::Artifact> loaded = art::LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::vector<art::Launch> &launches = loaded->entries[0].launches;
  ASSERT_EQ(launches.size(), 4u);
  EXPECT_FALSE(launches[0].clustered());
  EXPECT_FALSE(launches[0].cooperative);
  EXPECT_EQ(launches[1].cluster, (art::Dim3{2, 2, 1}));
  EXPECT_FALSE(launches[1].cooperative);
  EXPECT_FALSE(launches[2].clustered());
  EXPECT_TRUE(launches[2].cooperative);
  EXPECT_EQ(launches[2].persistent_blocks_per_sm, 0u);
  EXPECT_EQ(launches[3].persistent_blocks_per_sm, 1u);
}

TEST(ArtifactEmitter, ClustersBeforeSm90AreRefusedByName) {
  std::string bytes, error;
  EXPECT_FALSE(writeArtifact(shapedModule("sm_80"), bytes, error));
  EXPECT_EQ(error, "entries[0].launches[1].cluster: (2, 2, 1) for target "
                   "architecture sm_80, which has no thread-block clusters "
                   "(sm_90 and newer)");
}

// An i32 input's value range and kilnc's version reach the artifact.
TEST(ArtifactEmitter, RangesAndProducer) {
  MLIRContext context;
  CompiledModule module = shapedModule("sm_90");
  CompiledEntry &entry = module.entries[0];
  TensorRef labels;
  labels.name = "labels";
  labels.role = "input";
  labels.type = RankedTensorType::get({4}, IntegerType::get(&context, 32));
  labels.slot = SlotRef{false, "", 0, 16};
  labels.validRange = IndexRange{0, 10, -100, "labels of kiln.cross_entropy"};
  TensorRef tokens = labels;
  tokens.name = "tokens";
  tokens.slot.offset = 256;
  tokens.validRange.reset();
  entry.inputs = {labels, tokens};
  entry.arenaBytes = 512;
  std::string bytes, error;
  ASSERT_TRUE(writeArtifact(module, bytes, error)) << error;
  absl::StatusOr<art::Artifact> loaded = art::LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->producer.rfind("kilnc 0.", 0), 0u) << loaded->producer;
  const std::vector<art::TensorBinding> &inputs = loaded->entries[0].inputs;
  ASSERT_TRUE(inputs[0].valid_range.has_value());
  EXPECT_EQ(*inputs[0].valid_range,
            (art::ValueRange{0, 10, -100, "labels of kiln.cross_entropy"}));
  EXPECT_FALSE(inputs[1].valid_range.has_value());
}

TEST(ArtifactEmitter, LaunchShapesForStats) {
  CompiledLaunch launch;
  EXPECT_EQ(describeLaunchShape(launch), "");
  launch.cluster = {4, 1, 2};
  EXPECT_EQ(describeLaunchShape(launch), "cluster 4x1x2");
  launch.cluster = {1, 1, 1};
  launch.cooperative = true;
  EXPECT_EQ(describeLaunchShape(launch), "cooperative");
}

} // namespace
} // namespace mlir::kiln::codegen
