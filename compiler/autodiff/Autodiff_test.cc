#include "compiler/autodiff/Autodiff.h"
#include "compiler/autodiff/GradientTestUtils.h"

namespace mlir::kiln {
namespace {

using AutodiffTest = GradientCheckTest;

TEST_F(AutodiffTest, BroadcastAddExpSum) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%a: tensor<3x1x4xf32>, %b: tensor<2x1xf32>) -> tensor<f32> {
      %0 = kiln.add %a, %b : tensor<3x1x4xf32>, tensor<2x1xf32>
      %1 = kiln.exp %0 : tensor<3x2x4xf32>
      %2 = kiln.reduce_sum %1 dims = [0, 1, 2] : tensor<3x2x4xf32>
      return %2 : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(AutodiffTest, FanOutAccumulates) {
  // %a is used twice: its gradient is the sum of both paths.
  expectGradientsMatch(R"mlir(
    func.func @loss(%a: tensor<5xf32>) -> tensor<f32> {
      %0 = kiln.exp %a : tensor<5xf32>
      %1 = kiln.add %0, %a : tensor<5xf32>, tensor<5xf32>
      %2 = kiln.reduce_sum %1 dims = [0] : tensor<5xf32>
      return %2 : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(AutodiffTest, UnusedArgumentGetsZeros) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @loss(%a: tensor<3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "w"},
                    %b: tensor<3xf32> {kiln.param = #kiln.init<zeros>}) -> tensor<f32> {
      %0 = kiln.reduce_sum %a dims = [0] : tensor<3xf32>
      return %0 : tensor<f32>
    })mlir",
                                                             &context);
  ASSERT_TRUE(module) << diagnostics;
  func::FuncOp f = *module->getOps<func::FuncOp>().begin();
  EXPECT_EQ(parameterPositions(f), (SmallVector<unsigned>{0, 1}));
  FailureOr<func::FuncOp> grad = buildGradientFunction(f, {0, 1}, "loss_grad");
  ASSERT_TRUE(succeeded(grad)) << diagnostics;
  EXPECT_TRUE(succeeded(verify(*module))) << diagnostics;
  EXPECT_EQ(grad->getNumResults(), 3u);
  EXPECT_EQ(grad->getResultAttrOfType<StringAttr>(1, "kiln.name").getValue(),
            "grad.w");
  EXPECT_EQ(grad->getResultAttrOfType<StringAttr>(2, "kiln.name").getValue(),
            "grad.arg1");
}

TEST_F(AutodiffTest, RejectsNonScalarLoss) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @loss(%a: tensor<3xf32>) -> tensor<3xf32> {
      return %a : tensor<3xf32>
    })mlir",
                                                             &context);
  ASSERT_TRUE(module);
  func::FuncOp f = *module->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(failed(buildGradientFunction(f, {0}, "g")));
  EXPECT_NE(diagnostics.find("must return a scalar loss"), std::string::npos)
      << diagnostics;
}

TEST_F(AutodiffTest, NonDifferentiableOpsPassNoGradient) {
  // floor has zero gradient: only the direct path contributes.
  expectGradientsMatch(R"mlir(
    func.func @loss(%a: tensor<6xf32>) -> tensor<f32> {
      %0 = kiln.floor %a : tensor<6xf32>
      %1 = kiln.add %0, %a : tensor<6xf32>, tensor<6xf32>
      %2 = kiln.reduce_sum %1 dims = [0] : tensor<6xf32>
      return %2 : tensor<f32>
    })mlir",
                       {0}, InputSpec{0.1, 0.9});
}

} // namespace
} // namespace mlir::kiln
