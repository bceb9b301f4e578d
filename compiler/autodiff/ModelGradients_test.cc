// Whole-model gradient checks: every parameter of miniature versions of the
// samples against central finite differences, so that the rules compose
// correctly through a full transformer block.

#include "compiler/autodiff/Autodiff.h"
#include "compiler/autodiff/GradientTestUtils.h"

namespace mlir::kiln {
namespace {

using ModelGradientsTest = GradientCheckTest;

// samples/sine_block.mlir with B=2, T=6, C=8, 2 heads of 4, MLP width 16.
constexpr const char *kMiniSineBlock = R"mlir(
func.func @loss(
    %w_in: tensor<1x8xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w_in"},
    %b_in: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b_in"},
    %g_attn: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_attn"},
    %w_q: tensor<8x8xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w_q"},
    %w_k: tensor<8x8xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w_k"},
    %w_v: tensor<8x8xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w_v"},
    %w_o: tensor<8x8xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w_o"},
    %g_mlp: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_mlp"},
    %w_up: tensor<8x16xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w_up"},
    %b_up: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b_up"},
    %w_down: tensor<16x8xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w_down"},
    %b_down: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b_down"},
    %g_out: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_out"},
    %w_out: tensor<8x1xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w_out"},
    %b_out: tensor<1xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b_out"},
    %x: tensor<2x6x1xf32> {kiln.name = "x"},
    %y: tensor<2x6x1xf32> {kiln.name = "y"}) -> tensor<f32> {
  // Embed each scalar sample into 64 channels.
  %e0 = kiln.matmul %x, %w_in : tensor<2x6x1xf32>, tensor<1x8xf32>
  %h = kiln.add %e0, %b_in : tensor<2x6x8xf32>, tensor<8xf32>

  // Causal self-attention, 4 heads of 16 channels, rotary positions on q and k.
  %a = kiln.rms_norm %h, %g_attn eps = 1.0e-05 : tensor<2x6x8xf32>, tensor<8xf32>
  %q0 = kiln.matmul %a, %w_q : tensor<2x6x8xf32>, tensor<8x8xf32>
  %k0 = kiln.matmul %a, %w_k : tensor<2x6x8xf32>, tensor<8x8xf32>
  %v0 = kiln.matmul %a, %w_v : tensor<2x6x8xf32>, tensor<8x8xf32>
  %q1 = kiln.reshape %q0 : tensor<2x6x8xf32> -> tensor<2x6x2x4xf32>
  %k1 = kiln.reshape %k0 : tensor<2x6x8xf32> -> tensor<2x6x2x4xf32>
  %v1 = kiln.reshape %v0 : tensor<2x6x8xf32> -> tensor<2x6x2x4xf32>
  %q2 = kiln.rope %q1 : tensor<2x6x2x4xf32>
  %k2 = kiln.rope %k1 : tensor<2x6x2x4xf32>
  %q = kiln.transpose %q2 perm = [0, 2, 1, 3] : tensor<2x6x2x4xf32>
  %k = kiln.transpose %k2 perm = [0, 2, 1, 3] : tensor<2x6x2x4xf32>
  %v = kiln.transpose %v1 perm = [0, 2, 1, 3] : tensor<2x6x2x4xf32>
  %o0 = kiln.attention %q, %k, %v causal
      : tensor<2x2x6x4xf32>, tensor<2x2x6x4xf32>, tensor<2x2x6x4xf32>
  %o1 = kiln.transpose %o0 perm = [0, 2, 1, 3] : tensor<2x2x6x4xf32>
  %o2 = kiln.reshape %o1 : tensor<2x6x2x4xf32> -> tensor<2x6x8xf32>
  %o = kiln.matmul %o2, %w_o : tensor<2x6x8xf32>, tensor<8x8xf32>
  %h1 = kiln.add %h, %o : tensor<2x6x8xf32>, tensor<2x6x8xf32>

  // GELU MLP, 64 -> 256 -> 64.
  %m = kiln.rms_norm %h1, %g_mlp eps = 1.0e-05 : tensor<2x6x8xf32>, tensor<8xf32>
  %u0 = kiln.matmul %m, %w_up : tensor<2x6x8xf32>, tensor<8x16xf32>
  %u1 = kiln.add %u0, %b_up : tensor<2x6x16xf32>, tensor<16xf32>
  %u = kiln.gelu %u1 approximate = tanh : tensor<2x6x16xf32>
  %d0 = kiln.matmul %u, %w_down : tensor<2x6x16xf32>, tensor<16x8xf32>
  %d = kiln.add %d0, %b_down : tensor<2x6x8xf32>, tensor<8xf32>
  %h2 = kiln.add %h1, %d : tensor<2x6x8xf32>, tensor<2x6x8xf32>

  // Read out one value per step and compare with the clean signal.
  %f = kiln.rms_norm %h2, %g_out eps = 1.0e-05 : tensor<2x6x8xf32>, tensor<8xf32>
  %p0 = kiln.matmul %f, %w_out : tensor<2x6x8xf32>, tensor<8x1xf32>
  %p = kiln.add %p0, %b_out : tensor<2x6x1xf32>, tensor<1xf32>
  %loss = kiln.mse_loss %p, %y reduction = mean : tensor<2x6x1xf32>
  return %loss : tensor<f32>
}
)mlir";

TEST_F(ModelGradientsTest, MiniatureSineBlockAllParameters) {
  std::vector<unsigned> params;
  for (unsigned i = 0; i < 15; ++i)
    params.push_back(i);
  InputSpec spec;
  spec.low = -1.0;
  spec.high = 1.0;
  expectGradientsMatch(kMiniSineBlock, params, spec);
}

} // namespace
} // namespace mlir::kiln
