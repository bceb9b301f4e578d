//===- ComposedReduction_test.cc - kernels of composed reduction fusions --===//
//
// Functions written from primitives are fused by --kiln-fuse's grouping
// (fuseFunction) and every resulting "reduction" fusion is emitted: each
// kernel compiles to PTX and an sm_90 cubin, launches match the kernels'
// parameters, emission is deterministic, and every result is written. The
// cases cover the three forms of ReductionPlan (generic with prologue and
// epilogue, row kernels, multi-tensor), f32/bf16/f16/i32, odd row lengths,
// long rows that do not fit registers, and rank-0 inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterTestUtils.h"
#include "compiler/transforms/Fusion.h"
#include "compiler/transforms/ReductionPlan.h"
#include "kiln/reduce_layout.cuh"

#include "llvm/ADT/StringRef.h"

namespace mlir::kiln::codegen {
namespace {

class ComposedReductionTest : public EmitterTest {
protected:
  std::unique_ptr<KernelEmitter> emitter = createReductionEmitter();

  /// Fuses `source` (functions of primitives) and emits every reduction
  /// fusion; returns them in order.
  std::vector<GeneratedFusion> fuseAndEmit(llvm::StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    std::vector<GeneratedFusion> result;
    if (!module)
      return result;
    for (auto function : module->getOps<func::FuncOp>())
      EXPECT_TRUE(succeeded(fuseFunction(function)));
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    lastSource = text;
    module->walk([&](FusionOp fusion) {
      if (fusion.getKind() != "reduction")
        return;
      fusions.push_back(fusion);
      GeneratedFusion g = emitAndCompile(*emitter, fusion);
      expectWritesEveryResult(fusion, g);
      result.push_back(std::move(g));
    });
    return result;
  }

  /// The plan of the i-th reduction fusion of the last fuseAndEmit.
  ReductionPlan planOf(size_t i) {
    FailureOr<ReductionPlan> plan = planReduction(fusions.at(i));
    EXPECT_TRUE(succeeded(plan));
    return succeeded(plan) ? *plan : ReductionPlan();
  }

  static bool contains(const GeneratedFusion &g, llvm::StringRef text) {
    return llvm::any_of(g.kernels, [&](const GeneratedKernel &k) {
      return llvm::StringRef(k.source).contains(text);
    });
  }
  static bool named(const GeneratedFusion &g, llvm::StringRef prefix) {
    return llvm::any_of(g.kernels, [&](const GeneratedKernel &k) {
      return llvm::StringRef(k.name).starts_with(prefix);
    });
  }

  std::vector<FusionOp> fusions;
};

/// A function of element type `T` (f32, bf16, f16) from a template where
/// `T` stands for it.
std::string withType(llvm::StringRef text, llvm::StringRef type) {
  std::string s = text.str();
  for (size_t at; (at = s.find("xT>")) != std::string::npos;)
    s.replace(at, 3, "x" + type.str() + ">");
  for (size_t at; (at = s.find("<T>")) != std::string::npos;)
    s.replace(at, 3, "<" + type.str() + ">");
  return s;
}

TEST_F(ComposedReductionTest, MseFromPrimitivesEveryFloatType) {
  for (llvm::StringRef type : {"f32", "bf16", "f16"}) {
    std::vector<GeneratedFusion> g = fuseAndEmit(withType(R"mlir(
      func.func @f(%a: tensor<5x37xT>, %b: tensor<5x37xT>) -> tensor<T> {
        %d = kiln.sub %a, %b : tensor<5x37xT>, tensor<5x37xT>
        %s = kiln.mul %d, %d : tensor<5x37xT>, tensor<5x37xT>
        %m = kiln.reduce_mean %s dims = [0, 1] : tensor<5x37xT>
        %h = kiln.constant dense<0.5> : tensor<T>
        %l = kiln.mul %m, %h : tensor<T>, tensor<T>
        return %l : tensor<T>
      })mlir",
                                                          type));
    ASSERT_EQ(g.size(), 1u) << type.str();
    EXPECT_EQ(fusions[0].getBody().front().getOperations().size(), 6u);
    ASSERT_EQ(g[0].launches.size(), 1u);
    EXPECT_TRUE(contains(g[0], "acc / 185.0f"));
    if (type != "f32")
      EXPECT_TRUE(contains(g[0], "kiln_round_"))
          << "reductions round like the reference";
    fusions.clear();
  }
}

TEST_F(ComposedReductionTest, LongWholeTensorReductionIsTwoPassWithEpilogue) {
  std::vector<GeneratedFusion> g = fuseAndEmit(R"mlir(
    func.func @f(%a: tensor<1000x1001xbf16>) -> tensor<bf16> {
      %s = kiln.mul %a, %a : tensor<1000x1001xbf16>, tensor<1000x1001xbf16>
      %t = kiln.reduce_sum %s dims = [0, 1] : tensor<1000x1001xbf16>
      %r = kiln.sqrt %t : tensor<bf16>
      return %r : tensor<bf16>
    })mlir");
  ASSERT_EQ(g.size(), 1u);
  ASSERT_EQ(g[0].launches.size(), 2u);
  EXPECT_GT(g[0].launches[0].grid[1], 100u);
  // The epilogue runs where the partials are combined.
  EXPECT_NE(g[0].kernels[1].source.find("kiln::op::sqrt("), std::string::npos);
  for (const GeneratedKernel &k : g[0].kernels)
    EXPECT_EQ(k.source.find("atomic"), std::string::npos);
}

TEST_F(ComposedReductionTest, MeanOfRowsAndColumnsWithPrologueOutput) {
  std::vector<GeneratedFusion> g = fuseAndEmit(R"mlir(
    func.func @f(%x: tensor<6x37xf16>, %w: tensor<37xf16>)
        -> (tensor<6xf16>, tensor<37xf16>, tensor<6x37xf16>) {
      %p = kiln.mul %x, %w : tensor<6x37xf16>, tensor<37xf16>
      %s = kiln.reduce_sum %p dims = [1] : tensor<6x37xf16>
      %n = kiln.constant dense<37.0> : tensor<f16>
      %m = kiln.div %s, %n : tensor<6xf16>, tensor<f16>
      %c = kiln.reduce_max %x dims = [0] : tensor<6x37xf16>
      %e = kiln.exp %c : tensor<37xf16>
      return %m, %e, %p : tensor<6xf16>, tensor<37xf16>, tensor<6x37xf16>
    })mlir");
  ASSERT_EQ(g.size(), 2u);
  // The product is stored while it is reduced (an element output).
  ReductionPlan rows = planOf(0);
  EXPECT_EQ(rows.spaces.front().elementOutputs.size(), 1u);
  EXPECT_TRUE(contains(g[0], "if (owner)"));
  // The column reduction (innermost dim kept) is coalesced, with its
  // epilogue after the shared-memory combine.
  EXPECT_TRUE(contains(g[1], "kiln::reduce::reduce_columns<"));
  EXPECT_TRUE(contains(g[1], "kiln::op::exp("));
}

TEST_F(ComposedReductionTest, IntegerSumAndMaxWithPrologue) {
  std::vector<GeneratedFusion> g = fuseAndEmit(R"mlir(
    func.func @f(%x: tensor<7x1000xi32>) -> (tensor<7xi32>, tensor<7xi32>) {
      %a = kiln.abs %x : tensor<7x1000xi32>
      %s = kiln.reduce_sum %a dims = [1] : tensor<7x1000xi32>
      %m = kiln.reduce_max %a dims = [1] : tensor<7x1000xi32>
      %one = kiln.constant dense<1> : tensor<i32>
      %t = kiln.add %m, %one : tensor<7xi32>, tensor<i32>
      return %s, %t : tensor<7xi32>, tensor<7xi32>
    })mlir");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(contains(g[0], "unsigned acc0"));
  EXPECT_TRUE(contains(g[0], "(int)acc0"));
  EXPECT_TRUE(contains(g[0], "kiln_scratch1"));
}

TEST_F(ComposedReductionTest, SoftmaxAndLogSoftmaxFromPrimitives) {
  for (llvm::StringRef type : {"f32", "bf16", "f16"}) {
    std::vector<GeneratedFusion> g = fuseAndEmit(withType(R"mlir(
      func.func @f(%x: tensor<6x37xT>) -> (tensor<6x37xT>, tensor<6x37xT>) {
        %m = kiln.reduce_max %x dims = [1] keepdim : tensor<6x37xT>
        %d = kiln.sub %x, %m : tensor<6x37xT>, tensor<6x1xT>
        %e = kiln.exp %d : tensor<6x37xT>
        %s = kiln.reduce_sum %e dims = [1] keepdim : tensor<6x37xT>
        %y = kiln.div %e, %s : tensor<6x37xT>, tensor<6x1xT>
        %l = kiln.log %s : tensor<6x1xT>
        %z = kiln.sub %d, %l : tensor<6x37xT>, tensor<6x1xT>
        return %y, %z : tensor<6x37xT>, tensor<6x37xT>
      })mlir",
                                                          type));
    // Both outputs from one row kernel: max, then the sum, then the stores.
    ASSERT_EQ(g.size(), 1u) << type.str();
    ASSERT_EQ(g[0].launches.size(), 1u);
    EXPECT_TRUE(named(g[0], "kiln_fused_rows"));
    EXPECT_EQ(planOf(0).numStages, 2u);
    // 37 elements per row stay in registers between the passes.
    EXPECT_TRUE(
        ::kiln::reduce::row_cached(37, 1, ::kiln::reduce::row_group(37)));
    EXPECT_TRUE(contains(g[0], "row_config<idx_t, 6, 37, 1>"));
    EXPECT_TRUE(contains(g[0], "x0_in.cache(lid)"));
    fusions.clear();
  }
}

TEST_F(ComposedReductionTest, RowsTooLongForRegistersAreReRead) {
  std::vector<GeneratedFusion> g = fuseAndEmit(R"mlir(
    func.func @f(%x: tensor<2x50001xf32>) -> tensor<2x50001xf32> {
      %m = kiln.reduce_max %x dims = [1] keepdim : tensor<2x50001xf32>
      %d = kiln.sub %x, %m : tensor<2x50001xf32>, tensor<2x1xf32>
      %e = kiln.exp %d : tensor<2x50001xf32>
      %s = kiln.reduce_sum %e dims = [1] keepdim : tensor<2x50001xf32>
      %y = kiln.div %e, %s : tensor<2x50001xf32>, tensor<2x1xf32>
      return %y : tensor<2x50001xf32>
    })mlir");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].launches[0].block[0], 1024u);
  EXPECT_FALSE(
      ::kiln::reduce::row_cached(50001, 1, ::kiln::reduce::row_group(50001)));
  EXPECT_TRUE(contains(g[0], "row_config<idx_t, 2, 50001, 1>"));
}

TEST_F(ComposedReductionTest, RmsAndLayerNormFromPrimitives) {
  std::vector<GeneratedFusion> g = fuseAndEmit(R"mlir(
    func.func @rms(%x: tensor<4x3x37xbf16>, %g: tensor<37xbf16>) -> tensor<4x3x37xbf16> {
      %sq = kiln.mul %x, %x : tensor<4x3x37xbf16>, tensor<4x3x37xbf16>
      %ms = kiln.reduce_mean %sq dims = [2] keepdim : tensor<4x3x37xbf16>
      %eps = kiln.constant dense<1.0e-5> : tensor<bf16>
      %t = kiln.add %ms, %eps : tensor<4x3x1xbf16>, tensor<bf16>
      %r = kiln.rsqrt %t : tensor<4x3x1xbf16>
      %xn = kiln.mul %x, %r : tensor<4x3x37xbf16>, tensor<4x3x1xbf16>
      %y = kiln.mul %xn, %g : tensor<4x3x37xbf16>, tensor<37xbf16>
      return %y : tensor<4x3x37xbf16>
    }
    func.func @ln(%x: tensor<5x1x3xf16>, %g: tensor<1x3xf16>, %b: tensor<3xf16>)
        -> (tensor<5x1x3xf16>, tensor<5x1x1xf16>) {
      %mean = kiln.reduce_mean %x dims = [1, 2] keepdim : tensor<5x1x3xf16>
      %c = kiln.sub %x, %mean : tensor<5x1x3xf16>, tensor<5x1x1xf16>
      %c2 = kiln.mul %c, %c : tensor<5x1x3xf16>, tensor<5x1x3xf16>
      %var = kiln.reduce_mean %c2 dims = [1, 2] keepdim : tensor<5x1x3xf16>
      %eps = kiln.constant dense<1.0e-5> : tensor<f16>
      %t = kiln.add %var, %eps : tensor<5x1x1xf16>, tensor<f16>
      %r = kiln.rsqrt %t : tensor<5x1x1xf16>
      %n = kiln.mul %c, %r : tensor<5x1x3xf16>, tensor<5x1x1xf16>
      %w = kiln.mul %n, %g : tensor<5x1x3xf16>, tensor<1x3xf16>
      %y = kiln.add %w, %b : tensor<5x1x3xf16>, tensor<3xf16>
      return %y, %r : tensor<5x1x3xf16>, tensor<5x1x1xf16>
    })mlir");
  ASSERT_EQ(g.size(), 2u);
  // rsqrt once per row, not per element.
  EXPECT_TRUE(contains(g[0], "const float w_rsqrt"));
  ReductionPlan ln = planOf(1);
  EXPECT_EQ(ln.numStages, 2u);
  EXPECT_EQ(ln.rowOutputs.size(), 1u);
  EXPECT_TRUE(contains(g[1], "if (active && lid == 0)"));
}

TEST_F(ComposedReductionTest, RowKernelsMoveRowsIn16ByteSteps) {
  for (llvm::StringRef type : {"f32", "bf16", "f16"}) {
    // Rows of 64 (cached) and of 40000 (re-read), 16-byte aligned.
    for (llvm::StringRef m : {"64", "40000"}) {
      std::string source = withType(R"mlir(
        func.func @f(%x: tensor<8xMxT>, %g: tensor<MxT>) -> tensor<8xMxT> {
          %sq = kiln.mul %x, %x : tensor<8xMxT>, tensor<8xMxT>
          %ms = kiln.reduce_mean %sq dims = [1] keepdim : tensor<8xMxT>
          %eps = kiln.constant dense<1.0e-5> : tensor<T>
          %t = kiln.add %ms, %eps : tensor<8x1xT>, tensor<T>
          %r = kiln.rsqrt %t : tensor<8x1xT>
          %xn = kiln.mul %x, %r : tensor<8xMxT>, tensor<8x1xT>
          %y = kiln.mul %xn, %g : tensor<8xMxT>, tensor<MxT>
          return %y : tensor<8xMxT>
        })mlir",
                                    type);
      for (size_t at; (at = source.find("M")) != std::string::npos;)
        source.replace(at, 1, m.str());
      std::vector<GeneratedFusion> g = fuseAndEmit(source);
      ASSERT_EQ(g.size(), 1u) << type.str() << " " << m.str();
      int width = type == "f32" ? 4 : 8;
      // W elements per step: the row inputs move through row_input's
      // vector steps, the output through store_step.
      EXPECT_TRUE(contains(g[0], "row_config<idx_t, 8, " + m.str() + ", " +
                                     std::to_string(width) + ">"));
      EXPECT_TRUE(contains(g[0], "x0_in.step(j0, aligned)"));
      EXPECT_TRUE(contains(g[0], "kiln::reduce::store_step<row_cfg>"));
      // The row stays in registers only when short.
      int64_t length = std::stoll(m.str());
      EXPECT_EQ(::kiln::reduce::row_cached(length, width,
                                           ::kiln::reduce::row_group(length)),
                m == "64");
      EXPECT_EQ(g[0].kernels[0].configuration.find("cached") !=
                    std::string::npos,
                m == "64");
      fusions.clear();
    }
  }
}

TEST_F(ComposedReductionTest, CenteredWholeTensorLossIsOneRowKernel) {
  std::vector<GeneratedFusion> g = fuseAndEmit(R"mlir(
    func.func @f(%x: tensor<64x1xf32>) -> tensor<f32> {
      %m = kiln.reduce_mean %x dims = [0, 1] : tensor<64x1xf32>
      %c = kiln.sub %x, %m : tensor<64x1xf32>, tensor<f32>
      %q = kiln.mul %c, %c : tensor<64x1xf32>, tensor<64x1xf32>
      %v = kiln.reduce_mean %q dims = [0, 1] : tensor<64x1xf32>
      return %v : tensor<f32>
    })mlir");
  ASSERT_EQ(g.size(), 1u);
  ASSERT_EQ(g[0].launches.size(), 1u);
  EXPECT_EQ(g[0].launches[0].grid[0], 1u);
}

TEST_F(ComposedReductionTest, MultiTensorNormIsOneKernelWhenSmall) {
  std::vector<GeneratedFusion> g = fuseAndEmit(R"mlir(
    func.func @f(%a: tensor<8x64xf32>, %b: tensor<64xbf16>, %c: tensor<f32>, %d: tensor<3x1xf16>)
        -> (tensor<f32>, tensor<f32>) {
      %a2 = kiln.mul %a, %a : tensor<8x64xf32>, tensor<8x64xf32>
      %sa = kiln.reduce_sum %a2 dims = [0, 1] : tensor<8x64xf32>
      %bf = kiln.cast %b : tensor<64xbf16> to tensor<64xf32>
      %b2 = kiln.mul %bf, %bf : tensor<64xf32>, tensor<64xf32>
      %sb = kiln.reduce_sum %b2 dims = [0] : tensor<64xf32>
      %t1 = kiln.add %sa, %sb : tensor<f32>, tensor<f32>
      %c2 = kiln.mul %c, %c : tensor<f32>, tensor<f32>
      %t2 = kiln.add %t1, %c2 : tensor<f32>, tensor<f32>
      %df = kiln.cast %d : tensor<3x1xf16> to tensor<3x1xf32>
      %dd = kiln.abs %df : tensor<3x1xf32>
      %md = kiln.reduce_max %dd dims = [0, 1] : tensor<3x1xf32>
      %n = kiln.sqrt %t2 : tensor<f32>
      return %n, %md : tensor<f32>, tensor<f32>
    })mlir");
  ASSERT_EQ(g.size(), 1u);
  ReductionPlan plan = planOf(0);
  EXPECT_EQ(plan.form, ReductionPlan::Form::MultiTensor);
  EXPECT_EQ(plan.spaces.size(), 3u);
  ASSERT_EQ(g[0].launches.size(), 1u);
  EXPECT_EQ(g[0].launches[0].grid[0], 1u);
  EXPECT_TRUE(named(g[0], "kiln_multi_reduce"));
}

TEST_F(ComposedReductionTest, MultiTensorPartialsThenFinalInFixedOrder) {
  std::vector<GeneratedFusion> g = fuseAndEmit(R"mlir(
    func.func @f(%a: tensor<256x1000xf32>, %b: tensor<3001xf32>, %c: tensor<77x5xbf16>,
                 %k: tensor<300xi32>)
        -> (tensor<f32>, tensor<f32>, tensor<3001xf32>, tensor<i32>) {
      %a2 = kiln.mul %a, %a : tensor<256x1000xf32>, tensor<256x1000xf32>
      %sa = kiln.reduce_sum %a2 dims = [0, 1] : tensor<256x1000xf32>
      %sa2 = kiln.reduce_sum %a2 dims = [1, 0] : tensor<256x1000xf32>
      %e = kiln.exp %b : tensor<3001xf32>
      %sb = kiln.reduce_sum %e dims = [0] : tensor<3001xf32>
      %mc = kiln.reduce_min %c dims = [0, 1] : tensor<77x5xbf16>
      %mcf = kiln.cast %mc : tensor<bf16> to tensor<f32>
      %t = kiln.add %sa, %sb : tensor<f32>, tensor<f32>
      %u = kiln.add %t, %mcf : tensor<f32>, tensor<f32>
      %w = kiln.sub %sa2, %sa : tensor<f32>, tensor<f32>
      %sk = kiln.reduce_sum %k dims = [0] : tensor<300xi32>
      return %u, %w, %e, %sk : tensor<f32>, tensor<f32>, tensor<3001xf32>, tensor<i32>
    })mlir");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(planOf(0).form, ReductionPlan::Form::MultiTensor);
  ASSERT_EQ(g[0].launches.size(), 2u);
  EXPECT_GT(g[0].launches[0].grid[0], 100u);
  EXPECT_EQ(g[0].launches[1].grid[0], 1u);
  EXPECT_TRUE(named(g[0], "kiln_multi_reduce_partial"));
  EXPECT_TRUE(named(g[0], "kiln_multi_reduce_final"));
  // 16-byte loads of the f32 tensors; i32 partials in their own scratch.
  EXPECT_TRUE(contains(g[0], "kiln_load_vec<4>"));
  EXPECT_TRUE(contains(g[0], "partial_u"));
  // The two sums of the squares of %a are one accumulator.
  EXPECT_EQ(llvm::StringRef(g[0].kernels[0].source).count("kiln_sum_op()(acc"),
            3u);
  for (const GeneratedKernel &k : g[0].kernels)
    EXPECT_EQ(k.source.find("atomic"), std::string::npos);
}

TEST_F(ComposedReductionTest, MultiTensorSegmentsOfTheSameCodeShareIt) {
  // The squares of 24 tensors of two shapes: one segment each, all with the
  // same code (pointers and sizes come from tables), whatever their number.
  std::string args, body, sum;
  for (int i = 0; i < 24; ++i) {
    std::string type = i % 2 ? "tensor<300x40xf32>" : "tensor<77xf32>";
    std::string n = std::to_string(i);
    args += (i ? ", %t" : "%t") + n + ": " + type;
    body += "  %q" + n + " = kiln.mul %t" + n + ", %t" + n + " : " + type +
            ", " + type + "\n  %s" + n + " = kiln.reduce_sum %q" + n +
            " dims = [" + (i % 2 ? "0, 1" : "0") + "] : " + type + "\n";
    if (i > 0)
      body += "  %a" + n + " = kiln.add " +
              (i > 1 ? "%a" + std::to_string(i - 1) : "%s0") + ", %s" + n +
              " : tensor<f32>, tensor<f32>\n";
  }
  std::vector<GeneratedFusion> g = fuseAndEmit(
      "func.func @f(" + args + ") -> tensor<f32> {\n" + body +
      "  %n = kiln.sqrt %a23 : tensor<f32>\n  return %n : tensor<f32>\n}\n");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(planOf(0).spaces.size(), 24u);
  ASSERT_EQ(g[0].launches.size(), 2u);
  const std::string &partial = g[0].kernels[0].source;
  EXPECT_NE(partial.find("case 0:"), std::string::npos);
  EXPECT_EQ(partial.find("case 1:"), std::string::npos);
  EXPECT_NE(partial.find("kiln_segment_elements[24]"), std::string::npos);
  EXPECT_EQ(llvm::StringRef(partial).count("kiln_sum_op()(acc"), 1u);
}

TEST_F(ComposedReductionTest, RejectsBodiesWithoutAPlan) {
  // Yielding a block argument.
  FusionOp passThrough = parseFusion(R"mlir(
    func.func @f(%x: tensor<4x8xf32>) {
      %r:2 = kiln.fusion "reduction" (%x) : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
      ^bb0(%a: tensor<4x8xf32>):
        %e = kiln.exp %a : tensor<4x8xf32>
        %s = kiln.reduce_sum %e dims = [1] : tensor<4x8xf32>
        kiln.yield %s, %a : tensor<4xf32>, tensor<4x8xf32>
      }
      return
    })mlir");
  ASSERT_TRUE(passThrough);
  EXPECT_FALSE(emitter->matches(passThrough));
  EXPECT_TRUE(failed(emitter->emit(passThrough, CodegenOptions())));
  EXPECT_NE(diagnostics.find("reduction codegen"), std::string::npos);
  // Row values broadcast back over a dim that is not reduced.
  FusionOp wrongRows = parseFusion(R"mlir(
    func.func @f(%x: tensor<8x8xf32>) {
      %r = kiln.fusion "reduction" (%x) : (tensor<8x8xf32>) -> tensor<8x8xf32> {
      ^bb0(%a: tensor<8x8xf32>):
        %s = kiln.reduce_sum %a dims = [1] : tensor<8x8xf32>
        %y = kiln.sub %a, %s : tensor<8x8xf32>, tensor<8xf32>
        kiln.yield %y : tensor<8x8xf32>
      }
      return
    })mlir");
  ASSERT_TRUE(wrongRows);
  EXPECT_FALSE(emitter->matches(wrongRows));
  // Different non-whole reductions in one fusion.
  FusionOp mixed = parseFusion(R"mlir(
    func.func @f(%x: tensor<8x4xf32>) {
      %r:2 = kiln.fusion "reduction" (%x) : (tensor<8x4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
      ^bb0(%a: tensor<8x4xf32>):
        %s = kiln.reduce_sum %a dims = [1] : tensor<8x4xf32>
        %t = kiln.reduce_sum %a dims = [0] : tensor<8x4xf32>
        kiln.yield %s, %t : tensor<8xf32>, tensor<4xf32>
      }
      return
    })mlir");
  ASSERT_TRUE(mixed);
  EXPECT_FALSE(emitter->matches(mixed));
}

} // namespace
} // namespace mlir::kiln::codegen
