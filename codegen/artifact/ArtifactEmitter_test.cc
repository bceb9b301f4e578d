//===- ArtifactEmitter_test.cc - launch shapes reach the artifact ---------===//

#include "codegen/artifact/ArtifactEmitter.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "runtime/artifact/artifact.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
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

/// The artifact file of `module`, or "" with `error` set.
std::string written(const CompiledModule &module, std::string &error) {
  FailureOr<art::ArtifactFile> file = writeArtifact(module, error);
  return succeeded(file) ? file->Join() : std::string();
}

TEST(ArtifactEmitter, LaunchesKeepTheirClusterAndCooperativeFlags) {
  std::string error;
  const std::string bytes = written(shapedModule("sm_90"), error);
  ASSERT_FALSE(bytes.empty()) << error;
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
  std::string error;
  EXPECT_TRUE(failed(writeArtifact(shapedModule("sm_80"), error)));
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
  std::string error;
  const std::string bytes = written(module, error);
  ASSERT_FALSE(bytes.empty()) << error;
  absl::StatusOr<art::Artifact> loaded = art::LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->producer.rfind("kilnc 0.", 0), 0u) << loaded->producer;
  const std::vector<art::TensorBinding> &inputs = loaded->entries[0].inputs;
  ASSERT_TRUE(inputs[0].valid_range.has_value());
  EXPECT_EQ(*inputs[0].valid_range,
            (art::ValueRange{0, 10, -100, "labels of kiln.cross_entropy"}));
  EXPECT_FALSE(inputs[1].valid_range.has_value());
}

/// The bytes of `values` as `T`s.
template <typename T> std::string bytesOf(const std::vector<T> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(T));
}

// Values reach the buffers as the runtime stores them: a constant's and an
// i1 table's (one byte per element), a bf16 parameter's rounded to nearest
// even with its f32 master weight exact and no initialiser, a splat value
// spelled out; a parameter without a value keeps its initialiser.
TEST(ArtifactEmitter, StartingValues) {
  MLIRContext context;
  context.loadDialect<KilnDialect>();
  Builder b(&context);
  CompiledModule module = shapedModule("sm_90");
  auto f32 = [&](std::vector<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  };
  // 1 + 2^-8 (a tie: even is 1), 1 + 3 * 2^-8 (a tie: up), -2.5, 0.1.
  const std::vector<float> weights = {1.00390625f, 1.01171875f, -2.5f, 0.1f};
  const std::vector<uint16_t> rounded = {0x3f80, 0x3f82, 0xc020, 0x3dcd};
  auto bf16 = RankedTensorType::get({2, 2}, b.getBF16Type());
  auto mask = RankedTensorType::get({3}, b.getI1Type());
  module.residents = {
      {"w", "param", bf16, {}},
      {"master.w", "master_weight", f32({2, 2}), {}},
      {"b", "param", f32({2}), {}},
      {"z", "param", f32({3}), {}},
      {"table", "constant", f32({2, 2}),
       DenseElementsAttr::get(f32({2, 2}), llvm::ArrayRef<float>(weights))},
      {"mask", "constant", mask,
       DenseElementsAttr::get(mask, llvm::ArrayRef<bool>{true, false, true})},
  };
  module.parameters = {
      {"w", bf16, InitAttr::get(&context, InitKind::xavier), 0,
       DenseElementsAttr::get(f32({2, 2}), llvm::ArrayRef<float>(weights))},
      {"b", f32({2}), InitAttr::get(&context, InitKind::zeros), 1, {}},
      {"z", f32({3}), InitAttr::get(&context, InitKind::zeros), 2,
       DenseElementsAttr::get(f32({3}), 0.75f)},
  };
  std::string error;
  const std::string bytes = written(module, error);
  ASSERT_FALSE(bytes.empty()) << error;
  absl::StatusOr<art::Artifact> loaded = art::LoadArtifact(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto value = [&](size_t buffer) {
    const std::optional<art::InitialValue> &v =
        loaded->resident_buffers[buffer].initial_value;
    return v ? std::string(v->bytes) : std::string("none");
  };
  EXPECT_EQ(value(0), bytesOf(rounded));
  EXPECT_EQ(value(1), bytesOf(weights));
  EXPECT_EQ(value(2), "none");
  EXPECT_EQ(value(3), bytesOf(std::vector<float>(3, 0.75f)));
  EXPECT_EQ(value(4), bytesOf(weights));
  EXPECT_EQ(value(5), std::string("\1\0\1", 3));
  EXPECT_EQ(loaded->resident_buffers[4].role, art::BufferRole::kConstant);
  ASSERT_EQ(loaded->parameters.size(), 1u);
  EXPECT_EQ(loaded->parameters[0].name, "b");
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
