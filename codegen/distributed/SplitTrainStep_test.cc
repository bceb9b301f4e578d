//===- SplitTrainStep_test.cc - train_step as its two halves --------------===//

#include "codegen/distributed/SplitTrainStep.h"

#include "compiler/testing/KilnTestContext.h"

#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

namespace mlir::kiln::codegen {
namespace {

TensorRef ref(const std::string &name, bool resident, uint64_t offset,
              uint64_t size) {
  TensorRef t;
  t.name = name;
  t.slot = SlotRef{resident, resident ? name : "", offset, size};
  return t;
}

CompiledArg arg(LaunchArg::Kind kind, SlotRef slot) {
  CompiledArg a;
  a.kind = kind;
  a.slot = std::move(slot);
  return a;
}

class SplitTrainStepTest : public ::testing::Test {
protected:
  void SetUp() override {
    module = parseSourceString<ModuleOp>("func.func @train_step() { return }",
                                         &test.context);
    ASSERT_TRUE(module);
    CompiledEntry &backward = compiled.entries.emplace_back();
    backward.name = "forward_backward";
    backward.arenaBytes = 1000; // apply_update's arena starts at 1024
    backward.inputs = {ref("w", true, 0, 16), ref("x", false, 0, 64)};
    backward.outputs = {ref("loss", false, 512, 4), ref("grad.w", true, 0, 16)};
    backward.launches.resize(2);
    backward.launches[1].args = {
        arg(LaunchArg::Kind::Operand, backward.inputs[1].slot),
        arg(LaunchArg::Kind::Result, backward.outputs[1].slot)};
    CompiledEntry &update = compiled.entries.emplace_back();
    update.name = "apply_update";
    update.arenaBytes = 300;
    update.inputs = {ref("w", true, 0, 16), ref("grad.w", true, 0, 16),
                     ref("lr", false, 256, 4)};
    update.outputs = {ref("w", true, 0, 16), ref("norm", false, 0, 4)};
    update.launches.resize(1);
    update.launches[0].args = {
        arg(LaunchArg::Kind::Operand, update.inputs[1].slot),
        arg(LaunchArg::Kind::Operand, update.inputs[2].slot),
        arg(LaunchArg::Kind::Scratch, SlotRef{false, "", 288, 0}),
        arg(LaunchArg::Kind::I32, SlotRef{}),
        arg(LaunchArg::Kind::Result, update.outputs[1].slot)};
    CompiledEntry &step = compiled.entries.emplace_back();
    step.name = "train_step";
    step.arenaBytes = 700;
    step.inputs = {ref("w", true, 0, 16), ref("x", false, 100, 64),
                   ref("lr", false, 200, 4)};
    step.outputs = {ref("loss", false, 300, 4), ref("w", true, 0, 16),
                    ref("norm", false, 400, 4)};
    step.launches.resize(1);
  }

  KilnTestContext test;
  OwningOpRef<ModuleOp> module;
  CompiledModule compiled;
};

TEST_F(SplitTrainStepTest, RunsBothHalvesWithTheUpdatesArenaAfterward) {
  ASSERT_TRUE(succeeded(splitTrainStep(compiled, *module))) << test.diagnostics;
  const CompiledEntry &step = compiled.entries[2];
  EXPECT_EQ(step.arenaBytes, 1024u + 300u);
  ASSERT_EQ(step.launches.size(), 3u);
  // forward_backward's launches as they were, then apply_update's shifted.
  EXPECT_EQ(step.launches[1].args[0].slot.offset, 0u);
  const auto &moved = step.launches[2].args;
  EXPECT_TRUE(moved[0].slot.resident);
  EXPECT_EQ(moved[0].slot.offset, 0u);
  EXPECT_EQ(moved[1].slot.offset, 1024u + 256u);
  EXPECT_EQ(moved[2].slot.offset, 1024u + 288u);
  EXPECT_EQ(moved[3].slot.offset, 0u); // a scalar has no slot
  EXPECT_EQ(moved[4].slot.offset, 1024u);
  // The interface stays; the bindings follow the halves.
  ASSERT_EQ(step.inputs.size(), 3u);
  EXPECT_EQ(step.inputs[1].name, "x");
  EXPECT_EQ(step.inputs[1].slot.offset, 0u);
  EXPECT_EQ(step.inputs[2].slot.offset, 1024u + 256u);
  ASSERT_EQ(step.outputs.size(), 3u);
  EXPECT_EQ(step.outputs[0].slot.offset, 512u);
  EXPECT_TRUE(step.outputs[1].slot.resident);
  EXPECT_EQ(step.outputs[2].slot.offset, 1024u);
}

TEST_F(SplitTrainStepTest, AnInputOfNeitherHalfIsAnError) {
  compiled.entries[2].inputs.push_back(ref("y", false, 0, 4));
  EXPECT_TRUE(failed(splitTrainStep(compiled, *module)));
  EXPECT_NE(test.diagnostics.find("data parallel: input 'y' is neither "
                                  "forward_backward's nor apply_update's"),
            std::string::npos)
      << test.diagnostics;
}

TEST_F(SplitTrainStepTest, AnArenaInputOfBothHalvesIsAnError) {
  compiled.entries[1].inputs.push_back(ref("x", false, 0, 64));
  EXPECT_TRUE(failed(splitTrainStep(compiled, *module)));
  EXPECT_NE(test.diagnostics.find("input 'x' is read from the arena by both"),
            std::string::npos)
      << test.diagnostics;
}

} // namespace
} // namespace mlir::kiln::codegen
