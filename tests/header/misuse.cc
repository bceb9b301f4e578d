// Uses of the typed header of samples/mlp.mlir (//samples:mlp_typed), one
// per CASE: 0 is right and compiles, every other one must not compile
// (misuse_does_not_compile_test.sh).
#include <array>
#include <cstdint>

#include "samples/mlp_typed.h"

using kiln_samples::Mlp;

void Use(Mlp &mlp) {
  Mlp::TrainStepInputs inputs;
  std::array<float, 64 * 8> x{};
  std::array<float, 64> y{};
#if CASE == 0
  inputs.x = x;
  inputs.y = y;
  (void)mlp.TrainStep(inputs, 0.1f);
  (void)mlp.w1();
  (void)mlp.grad_w1();
  (void)mlp.adam_m_w1();
#elif CASE == 1 // a misspelt input
  inputs.X = x;
#elif CASE == 2 // a value of another static shape: y is f32[64, 1]
  inputs.y = x;
#elif CASE == 3 // a value of another dtype: x is f32[64, 8]
  inputs.x = std::array<int32_t, 64 * 8>{};
#elif CASE == 4 // a misspelt parameter
  (void)mlp.W1();
#elif CASE == 5 // a device tensor of another shape: w1 is f32[8, 64]
  inputs.x = *mlp.w1();
#elif CASE == 6 // an entry the artifact does not have
  (void)mlp.Evaluate(inputs);
#elif CASE == 7 // one entry's inputs for another's
  Mlp::ForwardInputs forward;
  (void)mlp.TrainStep(forward, 0.1f);
#endif
}
