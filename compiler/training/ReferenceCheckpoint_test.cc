#include "compiler/training/ReferenceCheckpoint.h"

#include "compiler/testing/KilnTestContext.h"
#include "compiler/training/ReferenceTrainer.h"
#include "compiler/training/TrainStep.h"
#include "compiler/transforms/MixedPrecision.h"
#include "runtime/io/checkpoint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

namespace mlir::kiln {
namespace {

using ::testing::HasSubstr;

// A model with a parameter of each rank and a batch norm's running state.
constexpr const char *kModel = R"mlir(
  func.func @loss(%w: tensor<3x4xf32> {kiln.param = #kiln.init<uniform, low = -0.5, high = 0.5>, kiln.name = "w"},
                  %b: tensor<4xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
                  %x: tensor<2x3xf32> {kiln.name = "x"},
                  %y: tensor<2x4xf32> {kiln.name = "y"}) -> tensor<f32> {
    %0 = kiln.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
    %1 = kiln.add %0, %b : tensor<2x4xf32>, tensor<4xf32>
    %2 = kiln.tanh %1 : tensor<2x4xf32>
    %3 = kiln.sub %2, %y : tensor<2x4xf32>, tensor<2x4xf32>
    %4 = kiln.mul %3, %3 : tensor<2x4xf32>, tensor<2x4xf32>
    %5 = kiln.reduce_sum %4 dims = [0, 1] : tensor<2x4xf32>
    return %5 : tensor<f32>
  })mlir";

std::string tempPath(const std::string &name) {
  const char *dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

class ReferenceCheckpointTest : public ::testing::Test,
                                protected KilnTestContext {
protected:
  /// The model with AdamW entries, its storage narrowed to `storage`.
  ModuleOp build(llvm::StringRef storage) {
    module = parseSourceString<ModuleOp>(kModel, &context);
    EXPECT_TRUE(module) << diagnostics;
    if (storage != "f32") {
      auto loss = module->lookupSymbol<func::FuncOp>("loss");
      FloatType type = storage == "bf16" ? FloatType::getBF16(&context)
                                         : FloatType::getF16(&context);
      EXPECT_TRUE(succeeded(narrowStorage(loss, type))) << diagnostics;
    }
    TrainStepOptions options;
    EXPECT_TRUE(succeeded(buildTrainingEntries(*module, options)))
        << diagnostics;
    return *module;
  }

  std::unique_ptr<ReferenceTrainer> trainer(ModuleOp m, uint64_t seed) {
    auto t = ReferenceTrainer::create(m, seed, ref::Precision::F32);
    EXPECT_TRUE(succeeded(t)) << diagnostics;
    return std::move(*t);
  }

  /// A batch drawn from `rng`, in the storage type of the model's inputs.
  NamedTensors batch(ModuleOp m) {
    auto forward = m.lookupSymbol<func::FuncOp>("forward");
    NamedTensors inputs;
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      auto name =
          forward.getArgAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
      if (forward.getArgAttr(i, KilnDialect::kParamAttrName))
        continue;
      ref::Tensor t = ref::Tensor::ofType(
          cast<RankedTensorType>(forward.getArgumentTypes()[i]));
      for (double &v : t.data)
        v = ref::roundToStorage(dist(rng), t.kind, ref::Precision::F32);
      inputs[name.getValue()] = std::move(t);
    }
    return inputs;
  }

  static void expectSameState(const ReferenceTrainer &a,
                              const ReferenceTrainer &b) {
    ASSERT_EQ(a.state().size(), b.state().size());
    for (const auto &entry : a.state()) {
      auto other = b.state().find(entry.getKey());
      ASSERT_NE(other, b.state().end()) << entry.getKey().str();
      EXPECT_EQ(entry.getValue().data, other->getValue().data)
          << entry.getKey().str();
    }
    EXPECT_EQ(a.stepCount(), b.stepCount());
  }

  OwningOpRef<ModuleOp> module;
  std::mt19937_64 rng{std::random_device{}()};
};

TEST_F(ReferenceCheckpointTest, RestoredTrainerContinuesBitIdentically) {
  for (llvm::StringRef storage : {"f32", "bf16", "f16"}) {
    SCOPED_TRACE(storage.str());
    ModuleOp m = build(storage);
    auto a = trainer(m, 7);
    for (int i = 0; i < 3; ++i)
      ASSERT_TRUE(succeeded(a->step(batch(m), 1e-2)));
    const std::string path = tempPath("ckpt_" + storage.str());
    ASSERT_FALSE(llvm::errorToBool(saveCheckpoint(*a, path)));

    auto b = trainer(m, 8); // other initial values
    ASSERT_FALSE(llvm::errorToBool(restoreCheckpoint(*b, path)));
    expectSameState(*a, *b);
    EXPECT_EQ(b->stepCount(), 3);
    for (int i = 0; i < 2; ++i) {
      NamedTensors inputs = batch(m);
      FailureOr<double> lossA = a->step(inputs, 1e-2),
                        lossB = b->step(inputs, 1e-2);
      ASSERT_TRUE(succeeded(lossA) && succeeded(lossB));
      EXPECT_EQ(*lossA, *lossB);
    }
    expectSameState(*a, *b);
  }
}

TEST_F(ReferenceCheckpointTest, WritesTheTensorsOfTheTrainingStep) {
  ModuleOp m = build("bf16");
  auto a = trainer(m, 7);
  ASSERT_TRUE(succeeded(a->step(batch(m), 1e-2)));
  const std::string path = tempPath("names");
  ASSERT_FALSE(llvm::errorToBool(saveCheckpoint(*a, path)));
  absl::StatusOr<::kiln::io::Safetensors> file =
      ::kiln::io::ReadSafetensorsFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->metadata.at("format"), "kiln");
  EXPECT_EQ(file->metadata.at("step"), "1");
  std::vector<std::string> names;
  for (const auto &[name, tensor] : file->tensors)
    names.push_back(name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre(
                         "w", "b", "master.w", "master.b", "adam_m.w",
                         "adam_v.w", "adam_m.b", "adam_v.b"));
  EXPECT_EQ(file->tensors.at("w").dtype, ::kiln::DType::kBF16);
  EXPECT_EQ(file->tensors.at("master.w").dtype, ::kiln::DType::kF32);
  EXPECT_EQ(file->tensors.at("w").shape, (std::vector<int64_t>{3, 4}));
}

TEST_F(ReferenceCheckpointTest, ACheckpointThatDoesNotFitChangesNothing) {
  ModuleOp m = build("f32");
  auto a = trainer(m, 7);
  ASSERT_TRUE(succeeded(a->step(batch(m), 1e-2)));
  const std::string path = tempPath("good");
  ASSERT_FALSE(llvm::errorToBool(saveCheckpoint(*a, path)));
  absl::StatusOr<::kiln::io::Safetensors> file =
      ::kiln::io::ReadSafetensorsFile(path);
  ASSERT_TRUE(file.ok());

  auto b = trainer(m, 8);
  const NamedTensors before = b->state();
  auto expectRefused = [&](::kiln::io::Checkpoint bad, const char *message) {
    const std::string badPath = tempPath("bad");
    ASSERT_TRUE(::kiln::io::WriteCheckpoint(badPath, bad).ok());
    llvm::Error error = restoreCheckpoint(*b, badPath);
    std::string text = error ? llvm::toString(std::move(error)) : "(none)";
    EXPECT_THAT(text, HasSubstr(badPath + ": " + message));
    for (const auto &entry : before)
      EXPECT_EQ(b->state().lookup(entry.getKey()).data, entry.getValue().data);
    EXPECT_EQ(b->stepCount(), 0);
  };
  ::kiln::io::Checkpoint bad;
  bad.step = 1;
  bad.tensors = file->tensors;
  bad.tensors.erase("adam_v.w");
  expectRefused(bad, "no tensor 'adam_v.w'");
  bad.tensors = file->tensors;
  bad.tensors["b"] = ::kiln::io::HostTensor::F32({5}, std::vector<float>(5));
  expectRefused(bad, "tensor 'b' is f32[5] but the model's is f32[4]");
  bad.tensors = file->tensors;
  bad.tensors["momentum.w"] =
      ::kiln::io::HostTensor::F32({3, 4}, std::vector<float>(12));
  expectRefused(bad, "tensor 'momentum.w' is not a parameter");
}

} // namespace
} // namespace mlir::kiln
