#include "runtime/observe/loss_curve.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/io/atomic_file.h"

namespace kiln::observe {
namespace {

constexpr double kWidth = 640, kHeight = 400;
constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Number(double v) { return absl::StrFormat("%.4g", v); }

}  // namespace

std::string LossCurveSvg(const std::vector<CurvePoint>& points,
                         const std::string& title, size_t max_points) {
  std::vector<CurvePoint> finite;
  for (const CurvePoint& p : points) {
    if (std::isfinite(p.value)) finite.push_back(p);
  }
  if (max_points < 2) max_points = 2;
  if (finite.size() > max_points) {
    const size_t stride = (finite.size() + max_points - 1) / max_points;
    std::vector<CurvePoint> thinned;
    for (size_t i = 0; i < finite.size(); i += stride) {
      thinned.push_back(finite[i]);
    }
    if (thinned.back().step != finite.back().step) {
      thinned.push_back(finite.back());
    }
    finite = std::move(thinned);
  }
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (!finite.empty()) {
    x0 = x1 = static_cast<double>(finite.front().step);
    y0 = y1 = finite.front().value;
    for (const CurvePoint& p : finite) {
      x0 = std::min(x0, static_cast<double>(p.step));
      x1 = std::max(x1, static_cast<double>(p.step));
      y0 = std::min(y0, p.value);
      y1 = std::max(y1, p.value);
    }
  }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) {
    const double pad = y0 == 0 ? 1 : std::abs(y0) * 0.1;
    y0 -= pad;
    y1 += pad;
  }
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * plot_w; };
  auto py = [&](double y) { return kTop + (y1 - y) / (y1 - y0) * plot_h; };

  std::string svg = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" "
      "font-size=\"14\">%s</text>\n",
      kWidth, kHeight, kWidth, kHeight, kWidth / 2, Escape(title));
  // Axes.
  absl::StrAppendFormat(
      &svg,
      "<g stroke=\"black\" stroke-width=\"1\">\n"
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
      kLeft, kTop + plot_h, kLeft + plot_w, kTop + plot_h, kLeft, kTop, kLeft,
      kTop + plot_h);
  constexpr int kTicks = 5;
  std::string labels;
  for (int i = 0; i <= kTicks; ++i) {
    const double fx = x0 + (x1 - x0) * i / kTicks;
    const double fy = y0 + (y1 - y0) * i / kTicks;
    absl::StrAppendFormat(
        &svg,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
        px(fx), kTop + plot_h, px(fx), kTop + plot_h + 5, kLeft - 5, py(fy),
        kLeft, py(fy));
    absl::StrAppendFormat(
        &labels,
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n"
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
        px(fx), kTop + plot_h + 18, Number(std::round(fx)), kLeft - 8,
        py(fy) + 4, Number(fy));
  }
  svg += "</g>\n";
  svg += labels;
  absl::StrAppendFormat(
      &svg,
      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">step</text>\n"
      "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 14 %.1f)\">loss</text>\n",
      kLeft + plot_w / 2, kHeight - 10, kTop + plot_h / 2, kTop + plot_h / 2);
  svg +=
      "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" "
      "points=\"";
  for (size_t i = 0; i < finite.size(); ++i) {
    absl::StrAppendFormat(&svg, "%s%.2f,%.2f", i ? " " : "",
                          px(static_cast<double>(finite[i].step)),
                          py(finite[i].value));
  }
  svg += "\"/>\n</svg>\n";
  return svg;
}

absl::Status WriteLossCurveSvg(const std::string& path,
                               const std::vector<CurvePoint>& points,
                               const std::string& title) {
  return io::WriteFileAtomically(path, LossCurveSvg(points, title));
}

}  // namespace kiln::observe
