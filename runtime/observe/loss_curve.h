// The loss curve of a training run as a small SVG image: a polyline of the
// loss over the steps, with axes, ticks and their labels. Hand-written SVG
// text, viewable in any browser.
#ifndef KILN_RUNTIME_OBSERVE_LOSS_CURVE_H_
#define KILN_RUNTIME_OBSERVE_LOSS_CURVE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace kiln::observe {

struct CurvePoint {
  int64_t step = 0;
  double value = 0;
};

// The SVG text. Non-finite values are left out; more than `max_points`
// points are thinned to every k-th (the last point is always kept).
// `title` is escaped.
std::string LossCurveSvg(const std::vector<CurvePoint>& points,
                         const std::string& title, size_t max_points = 2000);

// Writes LossCurveSvg to `path` (atomically: a temporary file renamed).
absl::Status WriteLossCurveSvg(const std::string& path,
                               const std::vector<CurvePoint>& points,
                               const std::string& title);

}  // namespace kiln::observe

#endif  // KILN_RUNTIME_OBSERVE_LOSS_CURVE_H_
