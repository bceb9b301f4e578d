// y = a * x + b with `a` and `b` the op's parameters; its backward
// dx = a * dy. Used by the custom-op lit tests.
#include "kiln/custom_op.cuh"

namespace lit {

template <class Args> __device__ void axpb(const Args &args) {
  kiln::custom::for_each(args.ctx, args.out0.numel, [&](long long i) {
    kiln::custom::store(&args.out0[i],
                        float(Args::params::a) *
                                kiln::custom::load(args.in0[i]) +
                            float(Args::params::b));
  });
}

template <class Args> __device__ void axpb_grad(const Args &args) {
  kiln::custom::for_each(args.ctx, args.grad_in0.numel, [&](long long i) {
    kiln::custom::store(&args.grad_in0[i],
                        float(Args::params::a) *
                            kiln::custom::load(args.grad_out0[i]));
  });
}

} // namespace lit
