// Fusion only regroups ops (and moves data through exact layout rewrites):
// the fused functions compute exactly what the unfused ones do, checked in
// the f64 reference on fresh random inputs, for the training entries of both
// samples (f32 and bf16 storage) and for reductions written from primitives.
// Every composed reduction fusion has a plan, so the code generator can emit
// it.

#include "compiler/transforms/Fusion.h"
#include "compiler/transforms/MixedPrecision.h"

#include "compiler/interpreter/Interpreter.h"
#include "compiler/testing/KilnTestContext.h"
#include "compiler/training/TrainStep.h"
#include "compiler/transforms/ReductionPlan.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "runtime/artifact/launch_limits.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace mlir::kiln {
namespace {

class FusionCheck : protected KilnTestContext {
protected:
  /// Runs `entry` of `plain` and of `fused` on the same random inputs (in
  /// [low, high); i32 inputs are 3) and expects identical results.
  void expectSameResults(ModuleOp plain, ModuleOp fused, llvm::StringRef entry,
                         double low, double high) {
    auto a = plain.lookupSymbol<func::FuncOp>(entry);
    auto b = fused.lookupSymbol<func::FuncOp>(entry);
    ASSERT_TRUE(a && b) << entry.str();
    // Every top-level op of a fused function is a fusion, a view or the return.
    for (Operation &op : b.getBody().front())
      EXPECT_TRUE((isa<FusionOp, ReshapeOp, func::ReturnOp>(op)))
          << entry.str() << ": " << op.getName().getStringRef().str();
    std::uniform_real_distribution<double> dist(low, high);
    std::vector<ref::Tensor> inputs;
    for (Type type : a.getArgumentTypes()) {
      ref::Tensor t = ref::Tensor::ofType(cast<RankedTensorType>(type));
      for (double &x : t.data)
        x = t.kind == ref::ElementKind::I32 ? 3 : dist(rng);
      inputs.push_back(std::move(t));
    }
    ref::Interpreter interpreter(ref::Precision::F64);
    auto expected = interpreter.run(a, inputs);
    auto actual = interpreter.run(b, inputs);
    ASSERT_TRUE(succeeded(expected) && succeeded(actual)) << diagnostics;
    ASSERT_EQ(expected->size(), actual->size());
    for (size_t i = 0; i < expected->size(); ++i)
      EXPECT_EQ((*expected)[i].data, (*actual)[i].data)
          << entry.str() << " result " << i;
  }

  /// Fusions of each kind in `function`.
  static std::map<std::string, int> kinds(func::FuncOp function) {
    std::map<std::string, int> count;
    for (auto fusion : function.getOps<FusionOp>())
      ++count[fusion.getKind().str()];
    return count;
  }

  /// Every reduction fusion of more than one op has a plan (but those of a
  /// cross entropy, which has kernels of its own).
  static void expectPlans(ModuleOp module) {
    module.walk([](FusionOp fusion) {
      Block &body = fusion.getBody().front();
      if (fusion.getKind() != "reduction" ||
          std::distance(body.without_terminator().begin(),
                        body.without_terminator().end()) == 1 ||
          llvm::any_of(body, [](Operation &op) {
            return isa<CrossEntropyOp, CrossEntropyBackwardOp>(op);
          }))
        return;
      std::string why;
      EXPECT_TRUE(succeeded(planReduction(fusion, &why))) << why;
    });
  }

  /// Builds the training entries of `plain`, fuses a copy, and checks that
  /// both compute the same and how the gradient norm was fused.
  /// With `multiTensorNorm`, also expects the gradient norm and statistics
  /// as one multi-tensor reduction (with bf16 storage the casts of the
  /// gradients keep them in separate kernels).
  void checkTrainingEntries(ModuleOp plain, const TrainStepOptions &options,
                            bool multiTensorNorm) {
    ASSERT_TRUE(succeeded(buildTrainingEntries(plain, options))) << diagnostics;
    OwningOpRef<ModuleOp> fused = plain.clone();
    for (auto function : fused->getOps<func::FuncOp>())
      ASSERT_TRUE(succeeded(fuseFunction(function)));
    ASSERT_TRUE(succeeded(verify(*fused))) << diagnostics;
    expectPlans(*fused);

    // Positive, so that optimizer state such as Adam's second moment is valid.
    for (llvm::StringRef entry :
         {"forward", "forward_backward", "apply_update", "train_step"})
      expectSameResults(plain, *fused, entry, 0.05, 1.0);

    // The statistics and the clip by global norm over every gradient are one
    // multi-tensor reduction that feeds the one optimizer kernel.
    if (!multiTensorNorm)
      return;
    auto apply = fused->lookupSymbol<func::FuncOp>("apply_update");
    EXPECT_EQ(kinds(apply),
              (std::map<std::string, int>{{"optimizer", 1}, {"reduction", 1}}));
    auto step = fused->lookupSymbol<func::FuncOp>("train_step");
    int multiTensor = 0;
    for (auto fusion : step.getOps<FusionOp>()) {
      if (fusion.getKind() != "reduction")
        continue;
      FailureOr<ReductionPlan> plan = planReduction(fusion);
      multiTensor +=
          succeeded(plan) && plan->form == ReductionPlan::Form::MultiTensor;
    }
    EXPECT_EQ(multiTensor, 1);
  }

  std::mt19937_64 rng{std::random_device{}()};
};

struct Sample {
  const char *path;
  bool bf16;
  /// The gradient norm and statistics become one multi-tensor reduction
  /// (not with bf16 storage, whose casts keep the gradients apart, nor with
  /// batch norm's running statistics beside the parameters).
  bool multiTensorNorm = !bf16;
};

class FusionTest : public ::testing::TestWithParam<Sample>,
                   protected FusionCheck {
protected:
  /// The sample's module, with bf16 storage where the parameter asks for it;
  /// null (with diagnostics) if it does not parse or narrow.
  OwningOpRef<ModuleOp> loadSample() {
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(GetParam().path, &context);
    if (module && GetParam().bf16 &&
        failed(narrowStorage(module->lookupSymbol<func::FuncOp>("loss"),
                             FloatType::getBF16(&context))))
      return nullptr;
    return module;
  }
};

TEST_P(FusionTest, FusedEntriesComputeTheSameResults) {
  OwningOpRef<ModuleOp> plain = loadSample();
  ASSERT_TRUE(plain) << diagnostics;
  TrainStepOptions options;
  options.transforms.statistics = true;
  options.transforms.clipNorm = 1.0;
  checkTrainingEntries(*plain, options, GetParam().multiTensorNorm);
}

TEST_P(FusionTest, FusedEntriesWithEveryGradientTransform) {
  OwningOpRef<ModuleOp> plain = loadSample();
  ASSERT_TRUE(plain) << diagnostics;
  // The norm is taken of scaled and clamped gradients, which the optimizer
  // reads as well.
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::Adam;
  options.optimizer.weightDecay = 0.01;
  options.transforms.statistics = true;
  options.transforms.scale = 0.5;
  options.transforms.clipValue = 0.3;
  options.transforms.clipNorm = 0.8;
  checkTrainingEntries(*plain, options, GetParam().multiTensorNorm);
}

INSTANTIATE_TEST_SUITE_P(
    Samples, FusionTest,
    ::testing::Values(Sample{"samples/sine_block.mlir", false},
                      Sample{"samples/sine_block.mlir", true},
                      Sample{"samples/mlp.mlir", false},
                      Sample{"samples/mlp.mlir", true},
                      Sample{"samples/digits_cnn.mlir", false, false},
                      Sample{"samples/digits_cnn.mlir", true, false}),
    [](const ::testing::TestParamInfo<Sample> &info) {
      std::string name =
          llvm::StringRef(info.param.path).rsplit('/').second.str();
      name = name.substr(0, name.find('.'));
      return name + (info.param.bf16 ? "_bf16" : "_f32");
    });

/// A model whose output is scaled and shifted by `vectors` parameter
/// vectors, one after the other: a kernel of the whole chain would read all
/// of them, and the backward's gradient of each is a reduction over the
/// rows of the chain's gradient at that point.
std::string vectorChain(int vectors) {
  std::string args, body, h = "%x";
  for (int i = 0; i < vectors; ++i) {
    args += "%v" + std::to_string(i) +
            ": tensor<8xf32> {kiln.param = #kiln.init<normal, std = 0.1>, "
            "kiln.name = \"v" + std::to_string(i) + "\"}, ";
    std::string s = "%s" + std::to_string(i);
    body += "  " + s + " = kiln." + (i % 2 ? "add " : "mul ") + h + ", %v" +
            std::to_string(i) + " : tensor<16x8xf32>, tensor<8xf32>\n";
    h = s;
  }
  return "func.func @loss(" + args +
         "%x: tensor<16x8xf32> {kiln.name = \"x\"}, %t: tensor<16x8xf32> "
         "{kiln.name = \"t\"}) -> tensor<f32> {\n" +
         body + "  %l = kiln.mse_loss " + h +
         ", %t reduction = mean : tensor<16x8xf32>\n"
         "  return %l : tensor<f32>\n}\n";
}

class LaunchBudgetTest : public ::testing::Test, protected FusionCheck {};

TEST_F(LaunchBudgetTest, KernelsTakeWhatOneLaunchPasses) {
  // 600 vectors: one element-wise kernel of the chain would take more
  // tensors than a launch passes (launch_limits.h), and one reduction
  // kernel of all the gradients more accumulators than its columns keep in
  // shared memory; fusion forms several kernels, which compute the same.
  OwningOpRef<ModuleOp> plain =
      parseSourceString<ModuleOp>(vectorChain(600), &context);
  ASSERT_TRUE(plain) << diagnostics;
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::SGD;
  checkTrainingEntries(*plain, options, /*multiTensorNorm=*/false);
  OwningOpRef<ModuleOp> fused = plain->clone();
  for (auto function : fused->getOps<func::FuncOp>())
    ASSERT_TRUE(succeeded(fuseFunction(function)));
  fused->walk([](FusionOp fusion) {
    // The optimizer's independent updates go to kernels of whole shape
    // groups in its emitter (PointwiseEmitter_test).
    if (fusion.getKind() == "optimizer")
      return;
    EXPECT_LE(fusion->getNumOperands() + fusion->getNumResults(),
              ::kiln::launch_limits::kMaxKernelParams)
        << fusion.getKind().str();
    int reductions = 0;
    fusion.getBody().walk([&](ReduceSumOp) { ++reductions; });
    if (fusion.getKind() == "reduction")
      EXPECT_LE(reductions, 16);
  });
}

/// Reductions written from primitives, each expected to become one
/// reduction fusion.
constexpr const char *kPrimitives = R"mlir(
func.func @mse(%a: tensor<5x37xf32>, %b: tensor<5x37xf32>) -> tensor<f32> {
  %d = kiln.sub %a, %b : tensor<5x37xf32>, tensor<5x37xf32>
  %s = kiln.mul %d, %d : tensor<5x37xf32>, tensor<5x37xf32>
  %m = kiln.reduce_mean %s dims = [0, 1] : tensor<5x37xf32>
  %h = kiln.constant dense<0.5> : tensor<f32>
  %l = kiln.mul %m, %h : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}
func.func @mean(%x: tensor<6x37xbf16>) -> tensor<6xbf16> {
  %s = kiln.reduce_sum %x dims = [1] : tensor<6x37xbf16>
  %n = kiln.constant dense<37.0> : tensor<bf16>
  %m = kiln.div %s, %n : tensor<6xbf16>, tensor<bf16>
  return %m : tensor<6xbf16>
}
func.func @softmax(%x: tensor<6x37xf32>) -> tensor<6x37xf32> {
  %m = kiln.reduce_max %x dims = [1] keepdim : tensor<6x37xf32>
  %d = kiln.sub %x, %m : tensor<6x37xf32>, tensor<6x1xf32>
  %e = kiln.exp %d : tensor<6x37xf32>
  %s = kiln.reduce_sum %e dims = [1] keepdim : tensor<6x37xf32>
  %y = kiln.div %e, %s : tensor<6x37xf32>, tensor<6x1xf32>
  return %y : tensor<6x37xf32>
}
func.func @log_softmax(%x: tensor<3x2x37xf16>) -> tensor<3x2x37xf16> {
  %m = kiln.reduce_max %x dims = [2] keepdim : tensor<3x2x37xf16>
  %d = kiln.sub %x, %m : tensor<3x2x37xf16>, tensor<3x2x1xf16>
  %e = kiln.exp %d : tensor<3x2x37xf16>
  %s = kiln.reduce_sum %e dims = [2] keepdim : tensor<3x2x37xf16>
  %l = kiln.log %s : tensor<3x2x1xf16>
  %y = kiln.sub %d, %l : tensor<3x2x37xf16>, tensor<3x2x1xf16>
  return %y : tensor<3x2x37xf16>
}
func.func @rms_norm(%x: tensor<4x32x64xf32>, %g: tensor<64xf32>) -> tensor<4x32x64xf32> {
  %sq = kiln.mul %x, %x : tensor<4x32x64xf32>, tensor<4x32x64xf32>
  %ms = kiln.reduce_mean %sq dims = [2] keepdim : tensor<4x32x64xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %t = kiln.add %ms, %eps : tensor<4x32x1xf32>, tensor<f32>
  %r = kiln.rsqrt %t : tensor<4x32x1xf32>
  %xn = kiln.mul %x, %r : tensor<4x32x64xf32>, tensor<4x32x1xf32>
  %y = kiln.mul %xn, %g : tensor<4x32x64xf32>, tensor<64xf32>
  return %y : tensor<4x32x64xf32>
}
func.func @layer_norm(%x: tensor<7x33xf32>, %g: tensor<33xf32>, %b: tensor<33xf32>)
    -> tensor<7x33xf32> {
  %mean = kiln.reduce_mean %x dims = [1] keepdim : tensor<7x33xf32>
  %c = kiln.sub %x, %mean : tensor<7x33xf32>, tensor<7x1xf32>
  %c2 = kiln.mul %c, %c : tensor<7x33xf32>, tensor<7x33xf32>
  %var = kiln.reduce_mean %c2 dims = [1] keepdim : tensor<7x33xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %t = kiln.add %var, %eps : tensor<7x1xf32>, tensor<f32>
  %r = kiln.rsqrt %t : tensor<7x1xf32>
  %n = kiln.mul %c, %r : tensor<7x33xf32>, tensor<7x1xf32>
  %w = kiln.mul %n, %g : tensor<7x33xf32>, tensor<33xf32>
  %y = kiln.add %w, %b : tensor<7x33xf32>, tensor<33xf32>
  return %y : tensor<7x33xf32>
}
func.func @centered_loss(%p: tensor<64x1xf32>, %q: tensor<64x1xf32>) -> tensor<f32> {
  %d = kiln.sub %p, %q : tensor<64x1xf32>, tensor<64x1xf32>
  %m = kiln.reduce_mean %d dims = [0, 1] : tensor<64x1xf32>
  %c = kiln.sub %d, %m : tensor<64x1xf32>, tensor<f32>
  %c2 = kiln.mul %c, %c : tensor<64x1xf32>, tensor<64x1xf32>
  %l = kiln.reduce_mean %c2 dims = [0, 1] : tensor<64x1xf32>
  return %l : tensor<f32>
}
func.func @global_norm(%a: tensor<8x64xf32>, %b: tensor<64xf32>, %c: tensor<f32>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %a2 = kiln.mul %a, %a : tensor<8x64xf32>, tensor<8x64xf32>
  %sa = kiln.reduce_sum %a2 dims = [0, 1] : tensor<8x64xf32>
  %b2 = kiln.mul %b, %b : tensor<64xf32>, tensor<64xf32>
  %sb = kiln.reduce_sum %b2 dims = [0] : tensor<64xf32>
  %c2 = kiln.mul %c, %c : tensor<f32>, tensor<f32>
  %t = kiln.add %sa, %sb : tensor<f32>, tensor<f32>
  %u = kiln.add %t, %c2 : tensor<f32>, tensor<f32>
  %n = kiln.sqrt %u : tensor<f32>
  %ab = kiln.abs %b : tensor<64xf32>
  %mb = kiln.reduce_max %ab dims = [0] : tensor<64xf32>
  %aa = kiln.abs %a : tensor<8x64xf32>
  %ma = kiln.reduce_max %aa dims = [0, 1] : tensor<8x64xf32>
  %m = kiln.max %ma, %mb : tensor<f32>, tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %e = kiln.constant dense<1.0e-6> : tensor<f32>
  %ne = kiln.add %n, %e : tensor<f32>, tensor<f32>
  %f = kiln.div %one, %ne : tensor<f32>, tensor<f32>
  %factor = kiln.min %one, %f : tensor<f32>, tensor<f32>
  return %n, %m, %factor : tensor<f32>, tensor<f32>, tensor<f32>
}
)mlir";

class PrimitiveReductionTest : public ::testing::Test, protected FusionCheck {
protected:
  /// `source` parsed into `plain`, and a copy with every function fused
  /// and verified into `fused`.
  void parseAndFuse(const char *source) {
    plain = parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(plain) << diagnostics;
    fused = plain->clone();
    for (auto function : fused->getOps<func::FuncOp>())
      ASSERT_TRUE(succeeded(fuseFunction(function)));
    ASSERT_TRUE(succeeded(verify(*fused))) << diagnostics;
  }

  OwningOpRef<ModuleOp> plain, fused;
};

TEST_F(PrimitiveReductionTest, EachPatternIsOneKernelComputingTheSame) {
  ASSERT_NO_FATAL_FAILURE(parseAndFuse(kPrimitives));
  expectPlans(*fused);
  for (auto function : fused->getOps<func::FuncOp>()) {
    EXPECT_EQ(kinds(function), (std::map<std::string, int>{{"reduction", 1}}))
        << function.getSymName().str();
    // Both signs, and values near zero where rounding matters most.
    expectSameResults(*plain, *fused, function.getSymName(), -2.0, 2.0);
  }
}

/// Products over K = 1 (outer products), plain, transposed and batched:
/// each becomes a broadcast multiply in one pointwise kernel with its
/// consumers.
constexpr const char *kOuterProducts = R"mlir(
func.func @linear_of_a_scalar(%x: tensor<2x64x1xf32>, %w: tensor<1x48xf32>,
    %b: tensor<48xf32>) -> tensor<2x64x48xf32> {
  %m = kiln.matmul %x, %w : tensor<2x64x1xf32>, tensor<1x48xf32>
  %y = kiln.add %m, %b : tensor<2x64x48xf32>, tensor<48xf32>
  return %y : tensor<2x64x48xf32>
}
func.func @transposed(%g: tensor<1x64xf32>, %w: tensor<48x1xf32>) -> tensor<64x48xf32> {
  %m = kiln.matmul %g, %w transpose_lhs transpose_rhs : tensor<1x64xf32>, tensor<48x1xf32>
  %t = kiln.tanh %m : tensor<64x48xf32>
  return %t : tensor<64x48xf32>
}
func.func @batches(%a: tensor<3x1x5x1xf32>, %b: tensor<4x1x7xf32>) -> tensor<3x4x5x7xf32> {
  %m = kiln.matmul %a, %b : tensor<3x1x5x1xf32>, tensor<4x1x7xf32>
  return %m : tensor<3x4x5x7xf32>
}
)mlir";

TEST_F(PrimitiveReductionTest, OuterProductsArePointwiseMultiplies) {
  ASSERT_NO_FATAL_FAILURE(parseAndFuse(kOuterProducts));
  for (auto function : fused->getOps<func::FuncOp>()) {
    EXPECT_EQ(kinds(function), (std::map<std::string, int>{{"pointwise", 1}}))
        << function.getSymName().str();
    bool matmul = false;
    function.walk([&](MatmulOp) { matmul = true; });
    EXPECT_FALSE(matmul) << function.getSymName().str();
    expectSameResults(*plain, *fused, function.getSymName(), -2.0, 2.0);
  }
}

/// Convolutions with element-wise consumers: each becomes one conv fusion
/// that applies them as its epilogue.
constexpr const char *kConvEpilogues = R"mlir(
func.func @bias_residual_relu(%x: tensor<2x6x6x8xf32>, %w: tensor<16x3x3x8xf32>,
    %b: tensor<16xf32>, %r: tensor<2x6x6x16xf32>) -> tensor<2x6x6x16xf32> {
  %c = kiln.conv2d %x, %w, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<2x6x6x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>
  %s = kiln.add %c, %r : tensor<2x6x6x16xf32>, tensor<2x6x6x16xf32>
  %y = kiln.relu %s : tensor<2x6x6x16xf32>
  return %y : tensor<2x6x6x16xf32>
}
func.func @input_grad_scaled(%g: tensor<2x8x3x3xf32>, %w: tensor<8x4x3x3xf32>,
    %k: tensor<f32>) -> tensor<2x4x6x6xf32> {
  %d = kiln.conv2d_backward_input %g, %w layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x8x3x3xf32>, tensor<8x4x3x3xf32> -> tensor<2x4x6x6xf32>
  %y = kiln.mul %d, %k : tensor<2x4x6x6xf32>, tensor<f32>
  return %y : tensor<2x4x6x6xf32>
}
)mlir";

TEST_F(PrimitiveReductionTest, ConvolutionsTakeTheirEpilogues) {
  ASSERT_NO_FATAL_FAILURE(parseAndFuse(kConvEpilogues));
  for (auto function : fused->getOps<func::FuncOp>()) {
    EXPECT_EQ(kinds(function), (std::map<std::string, int>{{"conv", 1}}))
        << function.getSymName().str();
    expectSameResults(*plain, *fused, function.getSymName(), -2.0, 2.0);
  }
}

/// A forward convolution followed by a training batch norm of its result:
/// one conv fusion when something else reads the result too (the batch
/// norm's gradient); batch norm alone otherwise, and in eval form.
constexpr const char *kConvBatchNorm = R"mlir(
func.func @with_gradient(%x: tensor<2x6x6x8xf32>, %w: tensor<16x3x3x8xf32>,
    %g: tensor<16xf32>, %b: tensor<16xf32>, %dy: tensor<2x6x6x16xf32>)
    -> (tensor<2x6x6x16xf32>, tensor<16xf32>, tensor<2x6x6x16xf32>) {
  %c = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<2x6x6x8xf32>, tensor<16x3x3x8xf32>
  %r = kiln.relu %c : tensor<2x6x6x16xf32>
  %y, %m, %v = kiln.batch_norm %r, %g, %b dim = 3 : tensor<2x6x6x16xf32>, tensor<16xf32>, tensor<16xf32>
  %dx, %dg, %db = kiln.batch_norm_backward %dy, %r, %g dim = 3 : tensor<2x6x6x16xf32>, tensor<16xf32>
  return %y, %v, %dx : tensor<2x6x6x16xf32>, tensor<16xf32>, tensor<2x6x6x16xf32>
}
func.func @scale_from_result(%x: tensor<2x6x6x8xf32>, %w: tensor<16x3x3x8xf32>,
    %b: tensor<16xf32>, %dy: tensor<2x6x6x16xf32>)
    -> (tensor<2x6x6x16xf32>, tensor<2x6x6x16xf32>) {
  %c = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<2x6x6x8xf32>, tensor<16x3x3x8xf32>
  %g = kiln.reduce_mean %c dims = [0, 1, 2] : tensor<2x6x6x16xf32>
  %y, %m, %v = kiln.batch_norm %c, %g, %b dim = 3 : tensor<2x6x6x16xf32>, tensor<16xf32>, tensor<16xf32>
  %dx, %dg, %db = kiln.batch_norm_backward %dy, %c, %g dim = 3 : tensor<2x6x6x16xf32>, tensor<16xf32>
  return %y, %dx : tensor<2x6x6x16xf32>, tensor<2x6x6x16xf32>
}
func.func @alone(%x: tensor<2x8x6x6xf32>, %w: tensor<16x8x3x3xf32>,
    %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x16x6x6xf32> {
  %c = kiln.conv2d %x, %w layout = nchw padding = [1, 1, 1, 1] : tensor<2x8x6x6xf32>, tensor<16x8x3x3xf32>
  %y, %m, %v = kiln.batch_norm %c, %g, %b : tensor<2x16x6x6xf32>, tensor<16xf32>, tensor<16xf32>
  return %y : tensor<2x16x6x6xf32>
}
)mlir";

TEST_F(PrimitiveReductionTest, ConvolutionsTakeTheBatchNormOfTheirResult) {
  ASSERT_NO_FATAL_FAILURE(parseAndFuse(kConvBatchNorm));
  auto with = fused->lookupSymbol<func::FuncOp>("with_gradient");
  EXPECT_EQ(kinds(with),
            (std::map<std::string, int>{{"conv", 1}, {"batch_norm", 1}}));
  with.walk([](FusionOp fusion) {
    if (fusion.getKind() != "conv")
      return;
    Block &body = fusion.getBody().front();
    EXPECT_TRUE(isa<BatchNormOp>(body.getTerminator()->getPrevNode()));
  });
  // A scale computed from the result cannot feed its own fusion.
  auto scaled = fused->lookupSymbol<func::FuncOp>("scale_from_result");
  scaled.walk([](FusionOp fusion) {
    if (fusion.getKind() == "conv")
      EXPECT_FALSE(isa<BatchNormOp>(
          fusion.getBody().front().getTerminator()->getPrevNode()));
  });
  auto alone = fused->lookupSymbol<func::FuncOp>("alone");
  EXPECT_EQ(kinds(alone),
            (std::map<std::string, int>{{"conv", 1}, {"batch_norm", 1}}));
  for (auto function : fused->getOps<func::FuncOp>())
    expectSameResults(*plain, *fused, function.getSymName(), -2.0, 2.0);
}

} // namespace
} // namespace mlir::kiln
