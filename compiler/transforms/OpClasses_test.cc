// The op classes come from the ops' traits: over every registered kiln op,
// each has exactly one class, the remapping interface goes with the classes
// that remap, every dedicated op names a fusion kind the verifier knows,
// and the ops the fusion pass may put into pointwise kernels (pointwise and
// layout ops, reshape) have a scalar form. An op added without its marks
// fails here.

#include "compiler/transforms/OpClasses.h"

#include "compiler/testing/KilnTestContext.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mlir::kiln {
namespace {

namespace traits = OpTrait::kiln;

class OpClassesTest : public ::testing::Test, protected KilnTestContext {
protected:
  std::vector<RegisteredOperationName> kilnOps() {
    std::vector<RegisteredOperationName> ops;
    for (RegisteredOperationName name : context.getRegisteredOperations())
      if (name.getDialectNamespace() == KilnDialect::getDialectNamespace())
        ops.push_back(name);
    return ops;
  }

  /// The class traits `name` carries.
  static std::vector<std::string> classesOf(RegisteredOperationName name) {
    std::vector<std::string> classes;
    if (name.hasTrait<traits::Pointwise>())
      classes.push_back("Pointwise");
    if (name.hasTrait<traits::Layout>())
      classes.push_back("Layout");
    if (name.hasTrait<traits::View>())
      classes.push_back("View");
    if (name.hasTrait<traits::Reduces>())
      classes.push_back("Reduces");
    if (name.hasTrait<traits::Gemm>())
      classes.push_back("Gemm");
    if (name.hasTrait<traits::DedicatedKernel>())
      classes.push_back("DedicatedKernel");
    if (name.hasTrait<traits::Structural>())
      classes.push_back("Structural");
    return classes;
  }

  /// An instance of `name` without operands, results, attributes or
  /// regions (never verified): enough for the queries of OpClasses.h, which
  /// read only traits and interfaces.
  Operation *bare(RegisteredOperationName name) {
    OperationState state(UnknownLoc::get(&context), name);
    return Operation::create(state);
  }
};

TEST_F(OpClassesTest, DialectHasOps) {
  // The dialect as of this test: 77 ops. More is fine (the other tests
  // check them); far fewer means the lookup above went wrong.
  EXPECT_GE(kilnOps().size(), 77u);
}

TEST_F(OpClassesTest, EveryOpHasExactlyOneClass) {
  for (RegisteredOperationName name : kilnOps()) {
    std::vector<std::string> classes = classesOf(name);
    std::string list;
    for (const std::string &c : classes)
      list += " " + c;
    EXPECT_EQ(classes.size(), 1u)
        << name.getStringRef().str() << " has the op classes:" << list;
  }
}

TEST_F(OpClassesTest, RemappingGoesWithLayoutAndView) {
  for (RegisteredOperationName name : kilnOps()) {
    std::string op = name.getStringRef().str();
    bool remaps = name.hasInterface<RemapsOperandsOpInterface>();
    EXPECT_EQ(remaps, name.hasTrait<traits::RemapsOperands>()) << op;
    // Every layout op remaps; a view may (reshape reads its operand at the
    // same flat index, which is a remapping of coordinates).
    if (name.hasTrait<traits::Layout>()) {
      EXPECT_TRUE(remaps) << op << " is a layout op without remapping";
    }
    if (remaps) {
      EXPECT_TRUE(name.hasTrait<traits::Layout>() ||
                  name.hasTrait<traits::View>())
          << op << " remaps its operands but is not a layout op or a view";
    }
  }
}

TEST_F(OpClassesTest, DedicatedOpsNameAKnownKind) {
  for (RegisteredOperationName name : kilnOps()) {
    std::string op = name.getStringRef().str();
    bool dedicated = name.hasTrait<traits::DedicatedKernel>();
    EXPECT_EQ(dedicated, name.hasInterface<DedicatedKernelOpInterface>()) << op;
    if (!dedicated)
      continue;
    Operation *instance = bare(name);
    llvm::StringRef kind = fusionKindOf(instance);
    EXPECT_TRUE(llvm::is_contained(FusionOp::knownKinds(), kind))
        << op << ": fusion kind \"" << kind.str() << "\"";
    // Dedicated kernels are families of their own, not the generic ones.
    EXPECT_NE(kind, "pointwise") << op;
    EXPECT_NE(kind, "reduction") << op;
    EXPECT_NE(kind, "optimizer") << op;
    instance->destroy();
  }
}

TEST_F(OpClassesTest, ScalarFormCoversWhatPointwiseKernelsHold) {
  for (RegisteredOperationName name : kilnOps()) {
    std::string op = name.getStringRef().str();
    bool scalar = name.hasTrait<traits::ScalarForm>();
    bool fusesPointwise = name.hasTrait<traits::Pointwise>() ||
                          name.hasTrait<traits::Layout>() ||
                          name.hasTrait<traits::View>();
    EXPECT_EQ(scalar, fusesPointwise)
        << op
        << (scalar ? " has a scalar form but is not pointwise, a layout "
                     "op or a view"
                   : " is fused into pointwise kernels but has no "
                     "scalar form");
  }
}

TEST_F(OpClassesTest, QueriesFollowTheMarks) {
  for (RegisteredOperationName name : kilnOps()) {
    std::string op = name.getStringRef().str();
    Operation *instance = bare(name);
    OpClass expected = name.hasTrait<traits::Pointwise>() ? OpClass::Pointwise
                       : name.hasTrait<traits::Layout>()  ? OpClass::Gather
                       : name.hasTrait<traits::View>()    ? OpClass::View
                       : name.hasTrait<traits::Reduces>() ? OpClass::Reduction
                       : name.hasTrait<traits::Gemm>()    ? OpClass::Gemm
                       : name.hasTrait<traits::DedicatedKernel>()
                           ? OpClass::Dedicated
                           : OpClass::Other;
    EXPECT_EQ(classify(instance), expected) << op;
    EXPECT_EQ(remapsOperands(instance),
              name.hasInterface<RemapsOperandsOpInterface>())
        << op;
    instance->destroy();
  }
}

/// The marks of particular ops, as the fusion pass relies on them.
TEST_F(OpClassesTest, SpotChecks) {
  auto instance = [&](llvm::StringRef opName) {
    std::optional<RegisteredOperationName> name =
        RegisteredOperationName::lookup(opName, &context);
    EXPECT_TRUE(name.has_value()) << opName.str();
    return bare(*name);
  };
  struct Expected {
    const char *op;
    OpClass opClass;
    const char *kind;
    bool remaps;
    int64_t reads;
  };
  const Expected expected[] = {
      {"kiln.add", OpClass::Pointwise, "pointwise", false, 1},
      {"kiln.triu", OpClass::Pointwise, "pointwise", false, 1},
      {"kiln.dropout", OpClass::Pointwise, "pointwise", false, 1},
      {"kiln.broadcast_to", OpClass::Pointwise, "pointwise", false, 1},
      {"kiln.transpose", OpClass::Gather, "pointwise", true, 1},
      {"kiln.rope", OpClass::Gather, "pointwise", true, 2},
      {"kiln.pad", OpClass::Gather, "pointwise", true, 1},
      {"kiln.concat", OpClass::Gather, "pointwise", true, 1},
      {"kiln.embedding", OpClass::Gather, "pointwise", true, 1},
      {"kiln.resize", OpClass::Gather, "pointwise", true, 8},
      {"kiln.reshape", OpClass::View, "pointwise", true, 1},
      {"kiln.softmax", OpClass::Reduction, "reduction", false, 1},
      {"kiln.matmul", OpClass::Gemm, "gemm", false, 1},
      {"kiln.attention_backward", OpClass::Dedicated, "attention", false,
       1},
      {"kiln.rnn", OpClass::Dedicated, "rnn", false, 1},
      {"kiln.conv2d_backward_filter", OpClass::Dedicated, "conv", false,
       1},
      {"kiln.max_pool2d", OpClass::Dedicated, "pool", false, 1},
      {"kiln.avg_pool2d_backward", OpClass::Dedicated, "pool", false, 1},
      {"kiln.resize_backward", OpClass::Dedicated, "resize", false, 1},
      {"kiln.batch_norm_backward", OpClass::Dedicated, "batch_norm", false,
       1},
      {"kiln.embedding_backward", OpClass::Dedicated, "embedding", false,
       1},
      {"kiln.fusion", OpClass::Other, "pointwise", false, 1},
  };
  for (const Expected &e : expected) {
    Operation *op = instance(e.op);
    EXPECT_EQ(classify(op), e.opClass) << e.op;
    if (e.opClass != OpClass::Other) {
      EXPECT_EQ(fusionKindOf(op), e.kind) << e.op;
    }
    EXPECT_EQ(remapsOperands(op), e.remaps) << e.op;
    EXPECT_EQ(remappedReadsPerElement(op), e.reads) << e.op;
    op->destroy();
  }
}

} // namespace
} // namespace mlir::kiln
