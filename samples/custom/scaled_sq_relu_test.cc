// The sample's user kernels (scaled_sq_relu.cu) run thread for thread on the
// CPU (codegen/cuda/kernels/emulation), through the ABI of custom_op.cuh
// with an Args struct shaped as kilnc generates it: the forward against its
// formula, the backward against central differences of the emulated
// forward, on fresh random inputs, with a grid smaller than the work (so the
// grid-stride loops and block_sum's block loop are exercised), and the same
// kernels instantiated for bf16 storage.

#include "samples/custom/scaled_sq_relu.cu"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kiln/custom_op.cuh"

namespace {

namespace emu = ::kiln::emulation;
using kiln::custom::tensor;

constexpr int kRows = 37, kCols = 19, kBlock = 64, kGrid = 3;
constexpr float kSlope = 0.1f;

struct Params {
  static constexpr float slope = kSlope;
};

template <class T>
struct ForwardArgs {
  static constexpr int num_inputs = 2, num_outputs = 1, block_size = kBlock;
  using params = Params;
  kiln::launch_ctx ctx;
  tensor<const T> in0, in1;
  tensor<T> out0;
};

template <class T>
struct BackwardArgs {
  static constexpr int num_inputs = 2, num_outputs = 1, block_size = kBlock;
  using params = Params;
  kiln::launch_ctx ctx;
  tensor<const T> in0, in1, out0, grad_out0;
  tensor<T> grad_in0, grad_in1;
};

template <class T>
tensor<T> matrix(T *data) {
  return {data, kRows * kCols, 2, {kRows, kCols}};
}
template <class T>
tensor<T> vector(T *data) {
  return {data, kCols, 1, {kCols}};
}

template <class T>
T fromFloat(float v) {
  T t;
  kiln_store(&t, v);
  return t;
}
template <class T>
std::vector<T> stored(const std::vector<float> &values) {
  std::vector<T> out;
  for (float v : values) out.push_back(fromFloat<T>(v));
  return out;
}
template <class T>
std::vector<float> loaded(const std::vector<T> &values) {
  std::vector<float> out;
  for (T v : values) out.push_back(kiln_load(v));
  return out;
}

template <class T>
std::vector<float> forward(const std::vector<float> &x,
                           const std::vector<float> &s) {
  std::vector<T> xs = stored<T>(x), ss = stored<T>(s), y(x.size());
  emu::launch(kGrid, kBlock, [&] {
    ForwardArgs<T> args{kiln::this_launch(), matrix<const T>(xs.data()),
                        vector<const T>(ss.data()), matrix<T>(y.data())};
    scaled_sq_relu(args);
  });
  return loaded(y);
}

template <class T>
void backward(const std::vector<float> &x, const std::vector<float> &s,
              const std::vector<float> &y, const std::vector<float> &dy,
              std::vector<float> &dx, std::vector<float> &ds) {
  std::vector<T> xs = stored<T>(x), ss = stored<T>(s), ys = stored<T>(y),
                 dys = stored<T>(dy), dxs(x.size()), dss(s.size());
  emu::launch(kGrid, kBlock, [&] {
    BackwardArgs<T> args{
        kiln::this_launch(),         matrix<const T>(xs.data()),
        vector<const T>(ss.data()),  matrix<const T>(ys.data()),
        matrix<const T>(dys.data()), matrix<T>(dxs.data()),
        vector<T>(dss.data())};
    scaled_sq_relu_grad(args);
  });
  dx = loaded(dxs);
  ds = loaded(dss);
}

class ScaledSqRelu : public ::testing::Test {
 protected:
  void SetUp() override {
    unsigned seed = std::random_device()();
    SCOPED_TRACE(seed);
    std::printf("inputs drawn with seed %u\n", seed);
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    // Away from the kink at 0, so that central differences of step 1e-2
    // see one smooth piece.
    for (int i = 0; i < kRows * kCols; ++i) {
      float v = normal(rng);
      x.push_back(std::fabs(v) < 0.05f ? std::copysign(0.05f, v) + v : v);
      dy.push_back(normal(rng));
    }
    for (int c = 0; c < kCols; ++c) s.push_back(normal(rng));
    this->rng.seed(seed + 1);
  }

  /// sum(dy * forward(x, s)) in f64.
  double objective(const std::vector<float> &xv,
                   const std::vector<float> &sv) const {
    std::vector<float> y = forward<float>(xv, sv);
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += double(dy[i]) * y[i];
    return sum;
  }

  std::vector<float> x, s, dy;
  std::mt19937 rng;
};

TEST_F(ScaledSqRelu, ForwardIsTheFormula) {
  std::vector<float> y = forward<float>(x, s);
  for (int i = 0; i < kRows * kCols; ++i) {
    float v = x[i];
    float expected = s[i % kCols] * (v > 0 ? v * v : kSlope * v);
    ASSERT_FLOAT_EQ(y[i], expected) << "element " << i;
  }
}

TEST_F(ScaledSqRelu, BackwardMatchesCentralDifferencesOfTheForward) {
  std::vector<float> y = forward<float>(x, s), dx, ds;
  backward<float>(x, s, y, dy, dx, ds);
  constexpr float h = 1e-2f;
  auto expectNear = [](double analytic, double difference, const char *what,
                       int index) {
    EXPECT_NEAR(analytic, difference, 2e-3 * std::fabs(analytic) + 2e-3)
        << what << "[" << index << "]";
  };
  // Every feature's scale, and a sample of the activations.
  for (int c = 0; c < kCols; ++c) {
    std::vector<float> plus = s, minus = s;
    plus[c] += h;
    minus[c] -= h;
    expectNear(ds[c], (objective(x, plus) - objective(x, minus)) / (2 * h),
               "ds", c);
  }
  std::uniform_int_distribution<int> element(0, kRows * kCols - 1);
  for (int k = 0; k < 24; ++k) {
    int i = element(rng);
    std::vector<float> plus = x, minus = x;
    plus[i] += h;
    minus[i] -= h;
    expectNear(dx[i], (objective(plus, s) - objective(minus, s)) / (2 * h),
               "dx", i);
  }
  // The gradients are not trivially zero.
  double norm = 0;
  for (float g : dx) norm += g * g;
  EXPECT_GT(norm, 1.0);
}

TEST_F(ScaledSqRelu, Bf16StorageComputesTheSameInF32) {
  // Inputs representable in bf16, so both runs see the same values.
  std::vector<float> xb = loaded(stored<__nv_bfloat16>(x)),
                     sb = loaded(stored<__nv_bfloat16>(s)),
                     dyb = loaded(stored<__nv_bfloat16>(dy));
  std::vector<float> y32 = forward<float>(xb, sb),
                     y16 = forward<__nv_bfloat16>(xb, sb);
  for (size_t i = 0; i < y32.size(); ++i)
    ASSERT_EQ(y16[i], loaded(stored<__nv_bfloat16>({y32[i]}))[0]) << i;
  std::vector<float> dx32, ds32, dx16, ds16;
  backward<float>(xb, sb, y32, dyb, dx32, ds32);
  backward<__nv_bfloat16>(xb, sb, y32, dyb, dx16, ds16);
  for (size_t i = 0; i < dx32.size(); ++i)
    ASSERT_NEAR(dx16[i], dx32[i], 1e-2 * std::fabs(dx32[i]) + 1e-6) << i;
  for (int c = 0; c < kCols; ++c)
    ASSERT_NEAR(ds16[c], ds32[c], 1e-2 * std::fabs(ds32[c]) + 1e-6) << c;
}

}  // namespace
