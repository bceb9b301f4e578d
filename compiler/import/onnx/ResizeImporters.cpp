//===- ResizeImporters.cpp - ONNX Resize ----------------------------------===//
//
// Resize in nearest mode, where along every axis it repeats each element a
// whole number of times (nn.Upsample(scale_factor=k, mode='nearest') and
// 'nearest-exact' as PyTorch exports them): a broadcast between reshapes,
// exact with its gradient. The importer computes each axis's index map with
// ONNX's coordinate transformation and rounding and takes the node only when
// that map is the repetition; everything else (linear and cubic modes,
// downsampling, fractional factors, tf_crop_and_resize) is rejected by name.
// The whole mapping is this file, for a dedicated upsample op to replace.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

#include <cmath>
#include <optional>

namespace mlir::kiln::onnx_import {
namespace {

/// Resize's attributes, as the node's version defines them.
struct ResizeAttributes {
  std::string mode, coordinates, nearest, aspectPolicy;
  llvm::SmallVector<int64_t> axes;
};

/// Reads every attribute of the node's version; the ones that only affect
/// modes kiln rejects anyway are read and not used.
ResizeAttributes readAttributes(OnnxNode &node) {
  ResizeAttributes a;
  int version = node.version();
  a.mode = node.stringAttr("mode", "nearest");
  // Resize-10 maps coordinates as Upsample did: asymmetric, floor.
  a.coordinates =
      version >= 11
          ? node.stringAttr("coordinate_transformation_mode", "half_pixel")
          : "asymmetric";
  a.nearest = version >= 11
                  ? node.stringAttr("nearest_mode", "round_prefer_floor")
                  : "floor";
  if (version >= 11) {
    // Cubic mode only; tf_crop_and_resize only; linear and cubic only.
    node.ignoreAttr("cubic_coeff_a");
    node.ignoreAttr("extrapolation_value");
    node.ignoreAttr("exclude_outside");
  }
  a.aspectPolicy = "stretch";
  if (version >= 18) {
    node.ignoreAttr("antialias"); // Linear and cubic downscaling only.
    a.axes = node.intsAttr("axes");
    a.aspectPolicy = node.stringAttr("keep_aspect_ratio_policy", "stretch");
  }
  return a;
}

/// Where output index `o` of an axis reads, per ONNX's coordinate
/// transformation and nearest rounding, or nullopt for an unknown mode.
std::optional<int64_t> sourceIndex(const ResizeAttributes &a, int64_t o,
                                   int64_t in, int64_t out, double scale) {
  double x = 0;
  if (a.coordinates == "half_pixel") {
    x = (o + 0.5) / scale - 0.5;
  } else if (a.coordinates == "pytorch_half_pixel") {
    x = out > 1 ? (o + 0.5) / scale - 0.5 : 0;
  } else if (a.coordinates == "half_pixel_symmetric") {
    double width = in * scale;
    double adjustment = out / width;
    x = in / 2.0 * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  } else if (a.coordinates == "align_corners") {
    x = out > 1 ? o * static_cast<double>(in - 1) / (out - 1) : 0;
  } else if (a.coordinates == "asymmetric") {
    x = o / scale;
  } else {
    return std::nullopt;
  }
  double index = 0;
  bool half = x - std::floor(x) == 0.5;
  if (a.nearest == "round_prefer_floor")
    index = half ? std::floor(x) : std::round(x);
  else if (a.nearest == "round_prefer_ceil")
    index = half ? std::ceil(x) : std::round(x);
  else if (a.nearest == "floor")
    index = std::floor(x);
  else if (a.nearest == "ceil")
    index = std::ceil(x);
  else
    return std::nullopt;
  return std::clamp<int64_t>(static_cast<int64_t>(index), 0, in - 1);
}

LogicalResult importResize(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  auto type = KilnBuilder::typeOf(x);
  int64_t rank = type.getRank();
  ResizeAttributes a = readAttributes(node);
  if (a.mode != "nearest")
    return node.unsupported("mode = '" + a.mode +
                            "' (kiln resizes by nearest neighbour only)");
  if (a.coordinates == "tf_crop_and_resize")
    return node.unsupported("coordinate_transformation_mode = "
                            "'tf_crop_and_resize'");
  if (a.aspectPolicy != "stretch" && a.aspectPolicy != "not_larger" &&
      a.aspectPolicy != "not_smaller")
    return node.unsupported("keep_aspect_ratio_policy = '" + a.aspectPolicy +
                            "'");

  // The resized axes and their scales or sizes.
  llvm::SmallVector<int64_t> axes;
  for (int64_t axis : a.axes) {
    auto d = node.normalizeAxis(axis, rank, "Resize's axis");
    if (failed(d))
      return failure();
    axes.push_back(*d);
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  unsigned scalesInput = node.version() >= 11 ? 2 : 1;
  std::vector<double> scales;
  llvm::SmallVector<int64_t> sizes;
  if (node.hasInput(scalesInput)) {
    auto s = node.constantNumbers(scalesInput, "the scales of Resize");
    if (failed(s))
      return failure();
    scales = *s;
  }
  if (node.version() >= 11 && node.hasInput(3)) {
    auto s = node.constantInts(3, "the sizes of Resize");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  if (scales.empty() == sizes.empty())
    return node.emitError() << "Resize needs either scales or sizes";
  size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != axes.size())
    return node.emitError() << "Resize has " << given << " scales or sizes for "
                            << axes.size() << " axes";
  if (!sizes.empty() && a.aspectPolicy != "stretch") {
    // One scale for every resized axis, the smallest or largest asked for.
    double common = 0;
    for (auto [i, d] : llvm::enumerate(axes)) {
      double s = static_cast<double>(sizes[i]) / type.getDimSize(d);
      common = i == 0                           ? s
               : a.aspectPolicy == "not_larger" ? std::min(common, s)
                                                : std::max(common, s);
    }
    for (auto [i, d] : llvm::enumerate(axes))
      sizes[i] =
          static_cast<int64_t>(std::floor(common * type.getDimSize(d) + 0.5));
  }

  // Each axis's index map must repeat every element `factor` times.
  llvm::SmallVector<int64_t> factors(rank, 1);
  for (auto [i, d] : llvm::enumerate(axes)) {
    int64_t in = type.getDimSize(d);
    double scale = 0;
    int64_t out = 0;
    if (scales.empty()) {
      out = sizes[i];
      scale = in > 0 ? static_cast<double>(out) / in : 0;
    } else {
      scale = scales[i];
      out = static_cast<int64_t>(std::floor(in * scale));
    }
    if (scale <= 0 || out <= 0 || in <= 0)
      return node.emitError() << "Resize's scale " << scale << " of axis " << d
                              << " leaves no elements";
    bool repeats = out % in == 0;
    for (int64_t o = 0; repeats && o < out; ++o) {
      std::optional<int64_t> source = sourceIndex(a, o, in, out, scale);
      if (!source)
        return node.unsupported("coordinate_transformation_mode = '" +
                                a.coordinates + "' with nearest_mode = '" +
                                a.nearest + "'");
      repeats = *source == o / (out / in);
    }
    if (!repeats)
      return node.unsupported(
          "resizing axis " + std::to_string(d) + " from " + std::to_string(in) +
          " to " + std::to_string(out) + " with '" + a.coordinates +
          "' coordinates and '" + a.nearest +
          "' rounding, which is not a repetition of each element (kiln "
          "upsamples by whole factors only)");
    factors[d] = out / in;
  }

  // [.., d, ..] -> [.., d, 1, ..] -> [.., d, k, ..] -> [.., d * k, ..].
  llvm::SmallVector<int64_t> spread, broadcast, result;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = type.getDimSize(d);
    spread.append({size, 1});
    broadcast.append({size, factors[d]});
    result.push_back(size * factors[d]);
  }
  Value y = node.reshape(x, spread);
  y = node.kb().broadcastTo(
      y, RankedTensorType::get(broadcast, type.getElementType()));
  node.setResult(0, node.reshape(y, result));
  return success();
}

} // namespace

void registerResizeImporters(OpImporterRegistry &registry) {
  registry.add("Resize", importResize);
}

} // namespace mlir::kiln::onnx_import
