// The memory plan is checked by running the planned program on a simulated
// device: every tensor is written to and read from its planned bytes, so two
// tensors that share bytes while both alive clobber each other and change the
// results, which must equal the reference run of the same entry.

#include "compiler/transforms/MemoryPlan.h"

#include "compiler/interpreter/Interpreter.h"
#include "compiler/testing/KilnTestContext.h"
#include "compiler/training/TrainStep.h"
#include "compiler/transforms/Fusion.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"

#include <gtest/gtest.h>

#include <random>

namespace mlir::kiln {
namespace {

/// Device memory as one value per byte: an element's value is stored in
/// every one of its bytes and read from its first.
class SimulatedMemory {
public:
  explicit SimulatedMemory(uint64_t arenaBytes) : arena(arenaBytes, NAN) {}

  std::vector<double> &bytesOf(const BufferSlot &slot) {
    if (!slot.resident)
      return arena;
    std::vector<double> &buffer = resident[slot.name];
    if (buffer.size() < slot.offset + slot.size)
      buffer.resize(slot.offset + slot.size, NAN);
    return buffer;
  }
  void write(const BufferSlot &slot, const ref::Tensor &t) {
    std::vector<double> &bytes = bytesOf(slot);
    uint64_t width = slot.size / std::max<size_t>(1, t.data.size());
    ASSERT_LE(slot.offset + slot.size, bytes.size());
    for (size_t i = 0; i < t.data.size(); ++i)
      for (uint64_t b = 0; b < width; ++b)
        bytes[slot.offset + i * width + b] = t.data[i];
  }
  ref::Tensor read(const BufferSlot &slot, Type type) {
    ref::Tensor t = ref::Tensor::ofType(cast<RankedTensorType>(type));
    std::vector<double> &bytes = bytesOf(slot);
    uint64_t width = slot.size / std::max<size_t>(1, t.data.size());
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = bytes[slot.offset + i * width];
    return t;
  }

  std::vector<double> arena;
  llvm::StringMap<std::vector<double>> resident;
};

class MemoryPlanTest : public ::testing::TestWithParam<const char *>,
                       protected KilnTestContext {};

TEST_P(MemoryPlanTest, PlannedProgramComputesTheReferenceResults) {
  OwningOpRef<ModuleOp> plain = parseSourceFile<ModuleOp>(GetParam(), &context);
  ASSERT_TRUE(plain) << diagnostics;
  TrainStepOptions options;
  options.transforms.statistics = true;
  ASSERT_TRUE(succeeded(buildTrainingEntries(*plain, options))) << diagnostics;
  OwningOpRef<ModuleOp> planned = plain->clone();
  for (auto function : planned->getOps<func::FuncOp>()) {
    ASSERT_TRUE(succeeded(fuseFunction(function)));
    ASSERT_TRUE(succeeded(planMemory(function))) << diagnostics;
  }
  ASSERT_TRUE(succeeded(verify(*planned))) << diagnostics;

  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> dist(0.05, 1.0);
  ref::Interpreter interpreter(ref::Precision::F64);
  for (auto function : planned->getOps<func::FuncOp>()) {
    std::string entry = function.getSymName().str();
    auto arena = function->getAttrOfType<IntegerAttr>("kiln.arena_size");
    auto peak = function->getAttrOfType<IntegerAttr>("kiln.peak_live_bytes");
    ASSERT_TRUE(arena && peak);
    EXPECT_LE(arena.getInt(), peak.getInt()) << entry;

    std::vector<ref::Tensor> inputs;
    for (Type type : function.getArgumentTypes()) {
      ref::Tensor t = ref::Tensor::ofType(cast<RankedTensorType>(type));
      for (double &x : t.data)
        x = t.kind == ref::ElementKind::I32 ? 2 : dist(rng);
      inputs.push_back(std::move(t));
    }
    auto expected =
        interpreter.run(plain->lookupSymbol<func::FuncOp>(entry), inputs);
    ASSERT_TRUE(succeeded(expected)) << diagnostics;

    SimulatedMemory memory(arena.getInt());
    for (BlockArgument arg : function.getArguments()) {
      FailureOr<BufferSlot> slot = bufferOf(arg);
      ASSERT_TRUE(succeeded(slot))
          << entry << " argument " << arg.getArgNumber();
      memory.write(*slot, inputs[arg.getArgNumber()]);
    }
    std::vector<ref::Tensor> actual;
    for (Operation &op : function.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands())
          actual.push_back(memory.read(*bufferOf(v), v.getType()));
        break;
      }
      auto fusion = dyn_cast<FusionOp>(op);
      if (!fusion)
        continue; // views
      std::vector<ref::Tensor> operands;
      std::vector<const ref::Tensor *> pointers;
      for (Value v : fusion.getInputs())
        operands.push_back(memory.read(*bufferOf(v), v.getType()));
      for (const ref::Tensor &t : operands)
        pointers.push_back(&t);
      auto results = interpreter.runRegion(fusion.getBody(), pointers);
      ASSERT_TRUE(succeeded(results)) << diagnostics;
      for (auto [value, tensor] : llvm::zip(fusion.getResults(), *results))
        memory.write(*bufferOf(value), tensor);
    }
    ASSERT_EQ(actual.size(), expected->size());
    for (size_t i = 0; i < actual.size(); ++i)
      EXPECT_EQ(actual[i].data, (*expected)[i].data)
          << entry << " result " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, MemoryPlanTest,
                         ::testing::Values("samples/sine_block.mlir",
                                           "samples/mlp.mlir"));

} // namespace
} // namespace mlir::kiln
