#include "samples/data/sine_task.h"

#include <cmath>

namespace kiln::samples {
namespace {
constexpr double kTwoPi = 6.283185307179586;
}  // namespace

SineBatch MakeSineBatch(std::mt19937_64& rng, int batch, int length) {
  std::uniform_real_distribution<double> amplitude(0.5, 1.5);
  std::uniform_real_distribution<double> phase(0.0, kTwoPi);
  std::uniform_real_distribution<double> noise(-0.5, 0.5);
  SineBatch out;
  out.noisy.resize(static_cast<size_t>(batch) * length);
  out.clean.resize(out.noisy.size());
  for (int b = 0; b < batch; ++b) {
    double a1 = amplitude(rng), a2 = amplitude(rng);
    double p1 = phase(rng), p2 = phase(rng);
    for (int s = 0; s < length; ++s) {
      double t = static_cast<double>(s) / length;
      double clean = a1 * std::sin(kTwoPi * 3 * t + p1) +
                     a2 * std::sin(kTwoPi * 7 * t + p2);
      size_t i = static_cast<size_t>(b) * length + s;
      out.clean[i] = static_cast<float>(clean);
      out.noisy[i] = static_cast<float>(clean + noise(rng));
    }
  }
  return out;
}

RegressionBatch MakeRegressionBatch(std::mt19937_64& rng, int batch) {
  static constexpr double kU[kRegressionFeatures] = {0.9,  -0.4, 0.3,  0.7,
                                                     -0.8, 0.2,  -0.5, 0.6};
  static constexpr double kV[kRegressionFeatures] = {-0.3, 0.8,  0.5, -0.6,
                                                     0.4,  -0.9, 0.7, 0.1};
  std::uniform_real_distribution<double> feature(-1.0, 1.0);
  RegressionBatch out;
  out.x.resize(static_cast<size_t>(batch) * kRegressionFeatures);
  out.y.resize(batch);
  for (int b = 0; b < batch; ++b) {
    double u = 0, v = 0;
    for (int f = 0; f < kRegressionFeatures; ++f) {
      double x = feature(rng);
      out.x[static_cast<size_t>(b) * kRegressionFeatures + f] =
          static_cast<float>(x);
      u += x * kU[f];
      v += x * kV[f];
    }
    out.y[b] = static_cast<float>(std::sin(2 * u) + 0.5 * std::cos(v));
  }
  return out;
}

double DefaultPeakLearningRate(const std::string& task) {
  return task == "regression" ? 1e-2 : 3e-3;
}

double CosineLearningRate(int step, int total, double peak, double floor,
                          int warmup) {
  if (step < warmup) return peak * (step + 1) / warmup;
  double progress =
      static_cast<double>(step - warmup) / std::max(1, total - warmup);
  if (progress > 1) progress = 1;
  return floor +
         0.5 * (peak - floor) * (1 + std::cos(3.141592653589793 * progress));
}

}  // namespace kiln::samples
