// Does not compile: the lit tests check that NVRTC's log reaches the user
// with this file's own line numbers.
#include "kiln/custom_op.cuh"

template <class Args> __device__ void broken(const Args &args) {
  float y = args.in0.no_such_member;
  (void)y;
}
