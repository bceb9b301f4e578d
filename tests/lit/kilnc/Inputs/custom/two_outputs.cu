// Two results, of which custom_emit.mlir's model reads only the first: the
// second still has a buffer to be written (in scratch).
#include "kiln/custom_op.cuh"

template <class Args> __device__ void split_sign(const Args &args) {
  kiln::custom::for_each(args.ctx, args.in0.numel, [&](long long i) {
    const float v = kiln::custom::load(args.in0[i]);
    kiln::custom::store(&args.out0[i], v > 0.0f ? v : 0.0f);
    kiln::custom::store(&args.out1[i], v < 0.0f ? -v : 0.0f);
  });
}
