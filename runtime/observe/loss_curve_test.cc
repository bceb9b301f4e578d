#include "runtime/observe/loss_curve.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::observe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(LossCurveTest, PolylineWithAxesAndEscapedTitle) {
  std::vector<CurvePoint> points = {{1, 2.0}, {2, NAN}, {3, 1.0}, {4, 0.5}};
  const std::string svg = LossCurveSvg(points, "a<b & c");
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("a&lt;b &amp; c"));
  EXPECT_THAT(svg, Not(HasSubstr("a<b")));
  EXPECT_EQ(Count(svg, "<polyline"), 1);
  // Three finite points; the NaN is left out. The first point is at the
  // left edge and the top (the largest loss), the last at the right, bottom.
  EXPECT_THAT(svg, HasSubstr("points=\"70.00,40.00 "));
  EXPECT_THAT(svg, HasSubstr(" 620.00,350.00\"/>"));
  EXPECT_EQ(Count(svg.substr(svg.find("points=")), ","), 3);
  EXPECT_THAT(svg, HasSubstr(">step</text>"));
  EXPECT_THAT(svg, HasSubstr(">loss</text>"));
  EXPECT_THAT(svg, HasSubstr("</svg>\n"));
}

TEST(LossCurveTest, ThinsLongRunsAndKeepsTheLastPoint) {
  std::vector<CurvePoint> points;
  for (int i = 1; i <= 100000; ++i) points.push_back({i, 1.0 / i});
  const std::string svg = LossCurveSvg(points, "long", 1000);
  const std::string polyline = svg.substr(svg.find("points="));
  EXPECT_LE(Count(polyline, ","), 1001);
  EXPECT_GE(Count(polyline, ","), 900);
  EXPECT_THAT(polyline, HasSubstr(" 620.00,350.00\"/>"));
}

TEST(LossCurveTest, EmptyAndFlatCurvesAreStillImages) {
  EXPECT_THAT(LossCurveSvg({}, "none"), HasSubstr("points=\"\"/>"));
  EXPECT_THAT(LossCurveSvg({{5, 3.0}}, "one"), HasSubstr("</svg>"));
}

}  // namespace
}  // namespace kiln::observe
