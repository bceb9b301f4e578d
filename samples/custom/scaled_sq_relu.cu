// A user kernel for kiln.custom: the "scaled squared ReLU" activation with a
// learned scale per feature and a leaky linear part below zero,
//
//   y[r, c] = s[c] * f(x[r, c]),   f(x) = x * x (x > 0), slope * x (x <= 0)
//
// for x of shape [R, C] and s of shape [C]; `slope` is the op's parameter.
// The backward gives
//
//   dx[r, c] = dy[r, c] * s[c] * f'(x[r, c]),  f'(x) = 2x (x > 0), slope
//   ds[c]    = sum_r dy[r, c] * f(x[r, c])
//
// ds is a reduction over rows: one block per feature c, its threads stride
// over the rows and kiln::custom::block_sum adds their partial sums (in a
// fixed order, so the result does not depend on scheduling). Values are
// computed in f32 whatever the storage type (f32, bf16 or f16).
#include "kiln/custom_op.cuh"

template <class Args> __device__ float scaled_sq_relu_f(float x) {
  return x > 0.0f ? x * x : Args::params::slope * x;
}

template <class Args>
__device__ void scaled_sq_relu(const Args &args) {
  static_assert(Args::num_inputs == 2 && Args::num_outputs == 1,
                "scaled_sq_relu takes (x, s) and returns y");
  const auto &x = args.in0;
  const auto &s = args.in1;
  const long long cols = x.cols();
  kiln::custom::for_each(args.ctx, x.numel, [&](long long i) {
    const float v = kiln::custom::load(x[i]);
    const float scale = kiln::custom::load(s[i % cols]);
    kiln::custom::store(&args.out0[i], scale * scaled_sq_relu_f<Args>(v));
  });
}

template <class Args>
__device__ void scaled_sq_relu_grad(const Args &args) {
  const auto &x = args.in0;
  const auto &s = args.in1;
  const auto &dy = args.grad_out0;
  const long long rows = x.rows(), cols = x.cols();
  // dx: one element per thread.
  kiln::custom::for_each(args.ctx, x.numel, [&](long long i) {
    const float v = kiln::custom::load(x[i]);
    const float scale = kiln::custom::load(s[i % cols]);
    const float slope = v > 0.0f ? 2.0f * v : float(Args::params::slope);
    kiln::custom::store(&args.grad_in0[i],
                        kiln::custom::load(dy[i]) * scale * slope);
  });
  // ds: one block per feature.
  kiln::custom::for_each_block(args.ctx, cols, [&](long long c) {
    float partial = 0.0f;
    for (long long r = args.ctx.thread.x; r < rows; r += args.ctx.block_dim.x) {
      const long long i = r * cols + c;
      partial += kiln::custom::load(dy[i]) *
                 scaled_sq_relu_f<Args>(kiln::custom::load(x[i]));
    }
    const float total = kiln::custom::block_sum(args.ctx, partial);
    if (args.ctx.thread.x == 0)
      kiln::custom::store(&args.grad_in1[c], total);
  });
}
