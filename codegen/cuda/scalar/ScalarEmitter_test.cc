// Over every registered kiln op: the ScalarEmitter has a lowering (an entry
// of its table of device functions or a case of its own) exactly for the ops
// with the ScalarForm trait, and supportsOp follows the trait. An op given a
// scalar form without a lowering, or a lowering left behind for an op that
// lost its scalar form, fails here.

#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <gtest/gtest.h>

#include <string>

namespace mlir::kiln::codegen {
namespace {

TEST(ScalarEmitterTest, LoweringsMatchTheScalarFormTrait) {
  MLIRContext context;
  context.loadDialect<KilnDialect>();
  int scalarOps = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != KilnDialect::getDialectNamespace())
      continue;
    std::string op = name.getStringRef().str();
    bool scalar = name.hasTrait<OpTrait::kiln::ScalarForm>();
    scalarOps += scalar;
    EXPECT_EQ(ScalarEmitter::hasScalarLowering(name), scalar)
        << op
        << (scalar ? " has a scalar form but no entry in the ScalarEmitter's "
                     "table of device functions and no case of its own"
                   : " has a ScalarEmitter lowering but no scalar form");
  }
  // 36 pointwise ops, 7 layout ops and reshape.
  EXPECT_GE(scalarOps, 44);
}

TEST(ScalarEmitterTest, SupportsOpFollowsTheTrait) {
  MLIRContext context;
  context.loadDialect<KilnDialect>();
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  auto f32 = RankedTensorType::get({4}, builder.getF32Type());
  OperationState exp(loc, "kiln.exp");
  exp.addTypes(f32);
  Operation *withForm = Operation::create(exp);
  std::string why;
  EXPECT_TRUE(ScalarEmitter::supportsOp(withForm, &why)) << why;
  OperationState softmax(loc, "kiln.softmax");
  softmax.addTypes(f32);
  Operation *without = Operation::create(softmax);
  EXPECT_FALSE(ScalarEmitter::supportsOp(without, &why));
  EXPECT_NE(why.find("kiln.softmax"), std::string::npos) << why;
  withForm->destroy();
  without->destroy();
}

} // namespace
} // namespace mlir::kiln::codegen
