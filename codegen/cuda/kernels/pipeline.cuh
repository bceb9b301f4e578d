//===- pipeline.cuh - where a loop stands in a ring of pipeline stages ----===//
//
// A producer fills STAGES shared-memory stages in turn and its consumers
// empty them in the same order; each stage has mbarriers whose phase
// completes once per round of the ring. A pipeline_state is one side's
// position: the stage it uses next and the parity of the barrier phase it
// waits for there, which flips each time the ring wraps. The producer waits
// for `empty` with the opposite parity: a barrier starts in phase 0, so its
// first round passes at once (tma::wait).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {

template <int STAGES> struct pipeline_state {
  static_assert(STAGES >= 1, "a ring has stages");
  int index = 0;
  unsigned phase = 0;

  // The next stage.
  __host__ __device__ __forceinline__ void advance() {
    if (++index == STAGES) {
      index = 0;
      phase ^= 1u;
    }
  }
  // `steps` stages on (steps >= 0), as many wraps as that makes: the stages
  // another consumer's work items use in between.
  __host__ __device__ __forceinline__ void skip(int steps) {
    index += steps;
    phase ^= (unsigned)(index / STAGES) & 1u;
    index %= STAGES;
  }
};

} // namespace kiln
