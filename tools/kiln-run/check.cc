#include "tools/kiln-run/check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "kiln/dtype.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

// How far one tensor's elements are from the expected ones.
struct Comparison {
  double max_abs = 0, max_rel = 0;
  int64_t bad = 0, nan = 0, first_bad = -1;
};

// The largest finite |v| of `values` (0 if none).
double LargestMagnitude(const std::vector<double>& values) {
  double largest = 0;
  for (double v : values)
    if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
  return largest;
}

// A training entry's gradient of parameter P is the tensor grad.P.
bool IsGradient(const std::string& name) {
  return absl::StartsWith(name, "grad.");
}

// Whether tensor `name`'s atol is relative to the largest gradient's.
bool SharesGradientScale(const std::string& name,
                         const CheckTolerance& tolerance) {
  return tolerance.scaled_atol && tolerance.shared_gradient_scale &&
         IsGradient(name);
}

// The absolute tolerance of tensor `name`, whose largest |expected| is
// `scale`; `gradient_scale`: the largest of every expected gradient's.
double AbsoluteTolerance(const std::string& name, double scale,
                         double gradient_scale,
                         const CheckTolerance& tolerance) {
  if (SharesGradientScale(name, tolerance)) {
    return tolerance.atol * gradient_scale;
  }
  return tolerance.scaled_atol ? tolerance.atol * scale : tolerance.atol;
}

Comparison Compare(const std::vector<double>& a, const std::vector<double>& x,
                   double rtol, double abs_tol) {
  Comparison c;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - x[i]);
    if (std::isnan(a[i]) && !std::isnan(x[i])) ++c.nan;
    // Equal values match, infinities of one sign included (their difference
    // is NaN).
    const bool fine = a[i] == x[i] || (std::isnan(a[i]) && std::isnan(x[i])) ||
                      d <= abs_tol + rtol * std::fabs(x[i]);
    if (!fine) {
      ++c.bad;
      if (c.first_bad < 0) c.first_bad = static_cast<int64_t>(i);
    }
    if (std::isfinite(d)) {
      c.max_abs = std::max(c.max_abs, d);
      if (x[i] != 0) c.max_rel = std::max(c.max_rel, d / std::fabs(x[i]));
    }
  }
  return c;
}

// Compares one tensor of the same shape and prints its line.
bool CheckTensor(const std::string& name, const io::HostTensor& actual,
                 const io::HostTensor& expected,
                 const CheckTolerance& tolerance, double gradient_scale) {
  const std::vector<double> a = AsDoubles(actual), x = AsDoubles(expected);
  const double scale = LargestMagnitude(x);
  const Comparison c =
      Compare(a, x, tolerance.rtol,
              AbsoluteTolerance(name, scale, gradient_scale, tolerance));
  const double relative_to_scale = scale > 0 ? c.max_abs / scale : 0.0;
  const std::string shared =
      SharesGradientScale(name, tolerance)
          ? absl::StrFormat(
                ", max err / largest |expected gradient| %.3g",
                gradient_scale > 0 ? c.max_abs / gradient_scale : 0.0)
          : "";
  if (c.bad == 0) {
    std::printf(
        "check %s: ok (%zu elements, max abs err %.3g, max rel err %.3g, "
        "max err / max |expected| %.3g%s)\n",
        name.c_str(), a.size(), c.max_abs, c.max_rel, relative_to_scale,
        shared.c_str());
    return true;
  }
  std::printf(
      "check %s: MISMATCH %lld of %zu elements (%lld NaN); first at %lld: "
      "%.9g vs expected %.9g; max abs err %.3g, max rel err %.3g, "
      "max err / max |expected| %.3g%s\n",
      name.c_str(), static_cast<long long>(c.bad), a.size(),
      static_cast<long long>(c.nan), static_cast<long long>(c.first_bad),
      a[c.first_bad], x[c.first_bad], c.max_abs, c.max_rel, relative_to_scale,
      shared.c_str());
  return false;
}

// The largest finite |expected| of every gradient (grad.*) of `expected`.
double GradientScale(const std::map<std::string, io::HostTensor>& expected) {
  double scale = 0;
  for (const auto& [name, e] : expected)
    if (IsGradient(name))
      scale = std::max(scale, LargestMagnitude(AsDoubles(e)));
  return scale;
}

}  // namespace

std::vector<double> AsDoubles(const io::HostTensor& t) {
  const size_t n = t.data.size() / DTypeSize(t.dtype);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = t.data.data() + i * DTypeSize(t.dtype);
    switch (t.dtype) {
      case DType::kF32: {
        float v;
        std::memcpy(&v, p, 4);
        out[i] = v;
        break;
      }
      case DType::kBF16: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        out[i] = Bf16ToF32(v);
        break;
      }
      case DType::kF16: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        out[i] = F16ToF32(v);
        break;
      }
      case DType::kI32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        out[i] = v;
        break;
      }
      case DType::kI1:
        out[i] = *p;
        break;
      case DType::kI64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        out[i] = static_cast<double>(v);
        break;
      }
    }
  }
  return out;
}

bool CheckTensors(const std::map<std::string, io::HostTensor>& actual,
                  const std::map<std::string, io::HostTensor>& expected,
                  const CheckTolerance& tolerance) {
  bool ok = true;
  const double gradient_scale = GradientScale(expected);
  for (const auto& [name, e] : expected) {
    auto it = actual.find(name);
    if (it == actual.end()) {
      std::printf("check %s: MISSING (no output of that name)\n", name.c_str());
      ok = false;
    } else if (it->second.shape != e.shape) {
      std::printf("check %s: SHAPE %s, expected %s\n", name.c_str(),
                  ShapeString(it->second.shape).c_str(),
                  ShapeString(e.shape).c_str());
      ok = false;
    } else if (!CheckTensor(name, it->second, e, tolerance, gradient_scale)) {
      ok = false;
    }
  }
  return ok;
}

absl::StatusOr<bool> CheckAgainstFile(
    const std::map<std::string, io::HostTensor>& actual,
    const std::string& expected_path, const CheckTolerance& tolerance) {
  KILN_ASSIGN_OR_RETURN(io::Safetensors expected,
                        io::ReadSafetensorsFile(expected_path));
  return CheckTensors(actual, expected.tensors, tolerance);
}

}  // namespace kiln
