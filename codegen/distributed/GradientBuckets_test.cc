//===- GradientBuckets_test.cc - bucket sizes, order, issue points --------===//

#include "codegen/distributed/GradientBuckets.h"

#include "compiler/testing/KilnTestContext.h"

#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

namespace mlir::kiln::codegen {
namespace {

constexpr uint64_t MiB = 1ull << 20;

TEST(AssignBucketsTest, FirstBucketIsSmallTheOthersFull) {
  BucketOptions options; // 1 MiB first, 25 MiB then
  // 0.5 + 0.75 MiB pass the first bucket's 1 MiB: it closes after both.
  std::vector<uint64_t> bytes = {MiB / 2,  3 * MiB / 4, 10 * MiB,
                                 10 * MiB, 10 * MiB,    MiB};
  auto buckets = assignBuckets(bytes, options);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(buckets[1], (std::vector<size_t>{2, 3, 4})); // 30 MiB >= 25
  EXPECT_EQ(buckets[2], (std::vector<size_t>{5}));       // the rest
}

TEST(AssignBucketsTest, LargeTensorsGetBucketsOfTheirOwn) {
  BucketOptions options;
  options.bucketBytes = 100;
  options.firstBucketBytes = 10;
  auto buckets = assignBuckets({400, 4, 300, 50, 50}, options);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0], (std::vector<size_t>{0}));
  EXPECT_EQ(buckets[1], (std::vector<size_t>{1, 2}));
  EXPECT_EQ(buckets[2], (std::vector<size_t>{3, 4}));
  EXPECT_TRUE(assignBuckets({}, options).empty());
}

TEST(AssignBucketsTest, MayJoinClosesTheOpenBucket) {
  BucketOptions options;
  options.bucketBytes = 1000;
  options.firstBucketBytes = 1000;
  auto buckets =
      assignBuckets({1, 1, 1, 1}, options, [](size_t i) { return i != 2; });
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(buckets[1], (std::vector<size_t>{2, 3}));
}

// An entry whose gradients g0..g3 (resident, 400 bytes each) are written by
// launches 1, 3, 2, 3 and read by launches 4 (the update) and, for g1, 5.
class PlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    module = parseSourceString<ModuleOp>(R"mlir(
      func.func @forward_backward(%a: tensor<100xf32>, %b: tensor<100xf32>,
                            %c: tensor<100xf32>, %d: tensor<100xf32>)
          -> (tensor<100xf32>, tensor<100xf32>, tensor<100xf32>,
              tensor<100xf32>) {
        return %a, %b, %c, %d : tensor<100xf32>, tensor<100xf32>,
                                tensor<100xf32>, tensor<100xf32>
      })mlir",
                                         &test.context);
    ASSERT_TRUE(module);
    compiled.kernels.resize(1);
    compiled.kernels[0].name = "kiln_k";
    CompiledEntry &entry = compiled.entries.emplace_back();
    entry.name = "forward_backward";
    for (int g = 0; g < 4; ++g) {
      TensorRef t;
      t.name = "grad.p" + std::to_string(g);
      t.role = "gradient";
      t.slot = SlotRef{true, t.name, 0, 400};
      entry.outputs.push_back(t);
    }
    entry.launches.resize(6);
    auto use = [&](size_t launch, int g, LaunchArg::Kind kind) {
      CompiledArg arg;
      arg.kind = kind;
      arg.slot = entry.outputs[g].slot;
      entry.launches[launch].args.push_back(arg);
    };
    use(1, 0, LaunchArg::Kind::Result);
    use(3, 1, LaunchArg::Kind::Operand); // accumulates into g1
    use(3, 1, LaunchArg::Kind::Result);
    use(2, 2, LaunchArg::Kind::Result);
    use(3, 3, LaunchArg::Kind::Result);
    use(1, 1, LaunchArg::Kind::Result); // g1's first contribution
    for (int g = 0; g < 4; ++g)
      use(4, g, LaunchArg::Kind::Operand);
    use(5, 1, LaunchArg::Kind::Operand);
  }

  KilnTestContext test;
  OwningOpRef<ModuleOp> module;
  CompiledModule compiled;
};

TEST_F(PlanTest, BucketsFollowTheOrderGradientsAreFinished) {
  BucketOptions options;
  options.firstBucketBytes = 400;
  options.bucketBytes = 800;
  ASSERT_TRUE(succeeded(planGradientBuckets(compiled, *module, options)))
      << test.diagnostics;
  const auto &collectives = compiled.entries[0].collectives;
  ASSERT_EQ(collectives.size(), 3u);
  // g0 (finished by launch 1) alone fills the first bucket.
  ASSERT_EQ(collectives[0].tensors.size(), 1u);
  EXPECT_EQ(collectives[0].tensors[0].name, "grad.p0");
  EXPECT_EQ(collectives[0].afterLaunches, 2u);
  EXPECT_EQ(collectives[0].waitBefore, 4u);
  // Then g2 (launch 2) and g1 (launch 3, its last write): 800 bytes.
  ASSERT_EQ(collectives[1].tensors.size(), 2u);
  EXPECT_EQ(collectives[1].tensors[0].name, "grad.p2");
  EXPECT_EQ(collectives[1].tensors[1].name, "grad.p1");
  EXPECT_EQ(collectives[1].bytes, 800u);
  EXPECT_EQ(collectives[1].afterLaunches, 4u);
  EXPECT_EQ(collectives[1].waitBefore, 4u);
  EXPECT_EQ(collectives[2].tensors[0].name, "grad.p3");

  std::string text;
  llvm::raw_string_ostream os(text);
  printBucketPlan(compiled, os);
  EXPECT_NE(
      text.find("data parallel: entry forward_backward: 3 gradient buckets, "
                "4 tensors, 1600 bytes averaged over the ranks"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  bucket 1: 800 bytes, 2 tensors (grad.p2, grad.p1), "
                      "all-reduce after launch 3 (kiln_k), waited for by "
                      "launch 4 (kiln_k)"),
            std::string::npos)
      << text;
}

TEST_F(PlanTest, AGradientReadBeforeTheNextIsFinishedClosesItsBucket) {
  // Launch 2 reads g0: g0's bucket must be all-reduced before it, so g2
  // (finished by launch 2) cannot join it.
  CompiledArg read;
  read.kind = LaunchArg::Kind::Operand;
  read.slot = compiled.entries[0].outputs[0].slot;
  compiled.entries[0].launches[2].args.push_back(read);
  BucketOptions options;
  options.firstBucketBytes = 10000;
  options.bucketBytes = 10000;
  ASSERT_TRUE(succeeded(planGradientBuckets(compiled, *module, options)));
  const auto &collectives = compiled.entries[0].collectives;
  ASSERT_EQ(collectives.size(), 2u);
  ASSERT_EQ(collectives[0].tensors.size(), 1u);
  EXPECT_EQ(collectives[0].afterLaunches, 2u);
  EXPECT_EQ(collectives[0].waitBefore, 2u);
  EXPECT_EQ(collectives[1].tensors.size(), 3u);
}

TEST_F(PlanTest, AGradientNoLaunchWritesIsAnError) {
  compiled.entries[0].launches[3].args.clear();
  EXPECT_TRUE(failed(planGradientBuckets(compiled, *module, BucketOptions())));
  EXPECT_NE(
      test.diagnostics.find("no launch of entry 'forward_backward' writes "
                            "gradient 'grad.p3'"),
      std::string::npos)
      << test.diagnostics;
}

} // namespace
} // namespace mlir::kiln::codegen
