// The data of the sample tasks, shared by the CPU end-to-end tests and the GPU
// host samples so that both train on the same problems.
//
// Sine denoising: each sequence of T steps is
//   a1 * sin(2*pi*3*t + phi1) + a2 * sin(2*pi*7*t + phi2),  t = s / T,
// with amplitudes uniform in [0.5, 1.5] and phases uniform in [0, 2*pi). The
// input adds uniform noise in (-0.5, 0.5), drawn fresh for every batch; the
// target is the clean signal. Predicting the noisy input scores an MSE of
// about 0.083 (the noise variance 1/12).
//
// MLP regression: 8 features uniform in [-1, 1], target
//   sin(2 * <x, u>) + 0.5 * cos(<x, v>)
// for two fixed direction vectors u and v.

#ifndef KILN_SAMPLES_DATA_SINE_TASK_H_
#define KILN_SAMPLES_DATA_SINE_TASK_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kiln::samples {

// Row-major [batch, length, 1] arrays.
struct SineBatch {
  std::vector<float> noisy;
  std::vector<float> clean;
};

SineBatch MakeSineBatch(std::mt19937_64& rng, int batch, int length);

// Row-major x: [batch, 8], y: [batch, 1].
struct RegressionBatch {
  std::vector<float> x;
  std::vector<float> y;
};

inline constexpr int kRegressionFeatures = 8;

RegressionBatch MakeRegressionBatch(std::mt19937_64& rng, int batch);

// The peak learning rate each task's sample is tuned for (AdamW, 1000 steps):
// 3e-3 for the sine block ("sine"), 1e-2 for the MLP ("regression").
double DefaultPeakLearningRate(const std::string& task);

// Linear warm-up to `peak` over `warmup` steps, then cosine decay to `floor`
// at step `total`. `step` counts from 0.
double CosineLearningRate(int step, int total, double peak, double floor,
                          int warmup);

}  // namespace kiln::samples

#endif  // KILN_SAMPLES_DATA_SINE_TASK_H_
