// The kernel of custom.mlir: y[r, c] = x[r, c] * w[c] + x[r, c]^3 / 3, and
// its backward dx = dy * (w + x^2), dw[c] = sum_r dy[r, c] * x[r, c].
#include "kiln/custom_op.cuh"

template <class Args> __device__ void cubic_gate(const Args &args) {
  const long long cols = args.in0.cols();
  kiln::custom::for_each(args.ctx, args.out0.numel, [&](long long i) {
    const float x = kiln::custom::load(args.in0[i]);
    const float w = kiln::custom::load(args.in1[i % cols]);
    kiln::custom::store(&args.out0[i], x * w + x * x * x / 3.0f);
  });
}

template <class Args> __device__ void cubic_gate_grad(const Args &args) {
  const long long rows = args.in0.rows(), cols = args.in0.cols();
  kiln::custom::for_each(args.ctx, args.in0.numel, [&](long long i) {
    const float x = kiln::custom::load(args.in0[i]);
    const float w = kiln::custom::load(args.in1[i % cols]);
    kiln::custom::store(&args.grad_in0[i],
                        kiln::custom::load(args.grad_out0[i]) * (w + x * x));
  });
  kiln::custom::for_each(args.ctx, cols, [&](long long c) {
    float sum = 0.0f;
    for (long long r = 0; r < rows; ++r)
      sum += kiln::custom::load(args.grad_out0[r * cols + c]) *
             kiln::custom::load(args.in0[r * cols + c]);
    kiln::custom::store(&args.grad_in1[c], sum);
  });
}
