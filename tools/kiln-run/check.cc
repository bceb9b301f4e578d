#include "tools/kiln-run/check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kiln/dtype.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

// How far one tensor's elements are from the expected ones.
struct Comparison {
  double scale = 0;  // the largest finite |expected|
  double max_abs = 0, max_rel = 0;
  int64_t bad = 0, nan = 0, first_bad = -1;
};

Comparison Compare(const std::vector<double>& a, const std::vector<double>& x,
                   const CheckTolerance& tolerance) {
  Comparison c;
  for (double v : x)
    if (std::isfinite(v)) c.scale = std::max(c.scale, std::fabs(v));
  const double abs_tol =
      tolerance.scaled_atol ? tolerance.atol * c.scale : tolerance.atol;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - x[i]);
    if (std::isnan(a[i]) && !std::isnan(x[i])) ++c.nan;
    // Equal values match, infinities of one sign included (their difference
    // is NaN).
    const bool fine = a[i] == x[i] || (std::isnan(a[i]) && std::isnan(x[i])) ||
                      d <= abs_tol + tolerance.rtol * std::fabs(x[i]);
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
                 const CheckTolerance& tolerance) {
  const std::vector<double> a = AsDoubles(actual), x = AsDoubles(expected);
  const Comparison c = Compare(a, x, tolerance);
  const double relative_to_scale = c.scale > 0 ? c.max_abs / c.scale : 0.0;
  if (c.bad == 0) {
    std::printf(
        "check %s: ok (%zu elements, max abs err %.3g, max rel err %.3g, "
        "max err / max |expected| %.3g)\n",
        name.c_str(), a.size(), c.max_abs, c.max_rel, relative_to_scale);
    return true;
  }
  std::printf(
      "check %s: MISMATCH %lld of %zu elements (%lld NaN); first at %lld: "
      "%.9g vs expected %.9g; max abs err %.3g, max rel err %.3g, "
      "max err / max |expected| %.3g\n",
      name.c_str(), static_cast<long long>(c.bad), a.size(),
      static_cast<long long>(c.nan), static_cast<long long>(c.first_bad),
      a[c.first_bad], x[c.first_bad], c.max_abs, c.max_rel, relative_to_scale);
  return false;
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
    } else if (!CheckTensor(name, it->second, e, tolerance)) {
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
