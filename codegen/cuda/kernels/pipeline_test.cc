// pipeline_state (pipeline.cuh) against a count of the stages used: after n
// uses of a ring of S stages a side stands at stage n % S and waits for the
// phase parity of its round, (n / S) % 2, whether it got there one stage at
// a time or by skips of any length.

#include "kiln/pipeline.cuh"

#include <gtest/gtest.h>

namespace {

template <int S> void ExpectAt(const kiln::pipeline_state<S> &state, int n) {
  EXPECT_EQ(state.index, n % S) << "after " << n << " of " << S << " stages";
  EXPECT_EQ(state.phase, unsigned(n / S % 2))
      << "after " << n << " of " << S << " stages";
}

template <int S> void CheckAdvance() {
  kiln::pipeline_state<S> state;
  for (int n = 0; n < 5 * S + 3; ++n) {
    ExpectAt(state, n);
    state.advance();
  }
}

template <int S> void CheckSkips() {
  for (int first = 0; first < 3 * S; ++first)
    for (int steps = 0; steps < 3 * S; ++steps) {
      kiln::pipeline_state<S> state;
      state.skip(first);
      state.skip(steps);
      ExpectAt(state, first + steps);
    }
}

TEST(PipelineState, AdvanceWrapsAndFlipsThePhase) {
  CheckAdvance<1>();
  CheckAdvance<2>();
  CheckAdvance<3>();
  CheckAdvance<7>();
}

TEST(PipelineState, SkipEqualsThatManyAdvances) {
  CheckSkips<1>();
  CheckSkips<2>();
  CheckSkips<4>();
  CheckSkips<5>();
}

} // namespace
