//===- ResizeImporters.cpp - ONNX Resize ----------------------------------===//
//
// Resize onto kiln.resize: nearest (every nearest_mode) and linear modes with
// every coordinate transformation but tf_crop_and_resize, from scales or
// sizes, with the attributes of each version (10: asymmetric coordinates and
// floor rounding, as Upsample; 11 and 13: coordinate_transformation_mode,
// nearest_mode; 18: axes, keep_aspect_ratio_policy, antialias; 19:
// half_pixel_symmetric). Cubic mode, tf_crop_and_resize and antialiased
// linear downsampling are rejected by name.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

#include "dialects/kiln/IR/KilnOpUtils.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <optional>

namespace mlir::kiln::onnx_import {
namespace {

/// Resize's attributes, as the node's version defines them.
struct ResizeAttributes {
  std::string mode, coordinates, nearest, aspectPolicy;
  llvm::SmallVector<int64_t> axes;
  bool antialias = false;
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
    a.antialias = node.intAttr("antialias", 0) != 0;
    a.axes = node.intsAttr("axes");
    a.aspectPolicy = node.stringAttr("keep_aspect_ratio_policy", "stretch");
  }
  return a;
}

std::optional<ResizeCoordinates> coordinatesOf(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ResizeCoordinates>>(name)
      .Case("half_pixel", ResizeCoordinates::half_pixel)
      .Case("pytorch_half_pixel", ResizeCoordinates::pytorch_half_pixel)
      .Case("align_corners", ResizeCoordinates::align_corners)
      .Case("asymmetric", ResizeCoordinates::asymmetric)
      .Case("half_pixel_symmetric", ResizeCoordinates::half_pixel_symmetric)
      .Default(std::nullopt);
}

std::optional<ResizeRounding> roundingOf(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ResizeRounding>>(name)
      .Case("round_prefer_floor", ResizeRounding::round_prefer_floor)
      .Case("round_prefer_ceil", ResizeRounding::round_prefer_ceil)
      .Case("floor", ResizeRounding::floor)
      .Case("ceil", ResizeRounding::ceil)
      .Default(std::nullopt);
}

LogicalResult importResize(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  auto type = KilnBuilder::typeOf(x);
  int64_t rank = type.getRank();
  ResizeAttributes a = readAttributes(node);
  if (!llvm::isa<FloatType>(type.getElementType()))
    return node.unsupported("an integer Resize (kiln resizes floats)");
  if (a.mode != "nearest" && a.mode != "linear")
    return node.unsupported("mode = '" + a.mode +
                            "' (kiln resizes by nearest neighbour or linear "
                            "interpolation)");
  bool linear = a.mode == "linear";
  std::optional<ResizeCoordinates> coordinates = coordinatesOf(a.coordinates);
  if (!coordinates)
    return node.unsupported("coordinate_transformation_mode = '" +
                            a.coordinates + "'");
  std::optional<ResizeRounding> rounding = roundingOf(a.nearest);
  if (!rounding)
    return node.emitError() << "Resize's nearest_mode '" << a.nearest
                            << "' is not one of round_prefer_floor, "
                               "round_prefer_ceil, floor, ceil";
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
  std::vector<double> given;
  llvm::SmallVector<int64_t> sizes;
  if (node.hasInput(scalesInput)) {
    auto s = node.constantNumbers(scalesInput, "the scales of Resize");
    if (failed(s))
      return failure();
    given = *s;
  }
  if (node.version() >= 11 && node.hasInput(3)) {
    auto s = node.constantInts(3, "the sizes of Resize");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  if (given.empty() == sizes.empty())
    return node.emitError() << "Resize needs either scales or sizes";
  size_t count = given.empty() ? sizes.size() : given.size();
  if (count != axes.size())
    return node.emitError() << "Resize has " << count << " scales or sizes for "
                            << axes.size() << " axes";
  // Each axis's scale and output size.
  llvm::SmallVector<double> scales(rank, 1.0);
  llvm::SmallVector<int64_t> shape(type.getShape());
  if (!sizes.empty()) {
    for (auto [i, d] : llvm::enumerate(axes)) {
      if (sizes[i] <= 0 || type.getDimSize(d) <= 0)
        return node.emitError() << "Resize's size " << sizes[i] << " of axis "
                                << d << " leaves no elements";
      scales[d] = static_cast<double>(sizes[i]) / type.getDimSize(d);
    }
    if (a.aspectPolicy != "stretch") {
      // One scale for every resized axis, the smallest or largest asked for.
      double common = scales[axes.front()];
      for (int64_t d : axes)
        common = a.aspectPolicy == "not_larger" ? std::min(common, scales[d])
                                                : std::max(common, scales[d]);
      for (auto [i, d] : llvm::enumerate(axes)) {
        scales[d] = common;
        sizes[i] = static_cast<int64_t>(
            std::floor(common * type.getDimSize(d) + 0.5));
      }
    }
    for (auto [i, d] : llvm::enumerate(axes))
      shape[d] = sizes[i];
  } else {
    for (auto [i, d] : llvm::enumerate(axes)) {
      scales[d] = given[i];
      shape[d] = static_cast<int64_t>(std::floor(type.getDimSize(d) * given[i]));
      if (!(given[i] > 0) || !std::isfinite(given[i]) ||
          (type.getDimSize(d) > 0 && shape[d] <= 0))
        return node.emitError() << "Resize's scale " << given[i] << " of axis "
                                << d << " leaves no elements";
    }
  }
  llvm::SmallVector<int64_t> dims = resizedDims(type.getShape(), shape, scales);
  if (dims.empty()) {
    node.setResult(0, x);
    return success();
  }
  if (static_cast<int64_t>(dims.size()) > kMaxResizedDims)
    return node.unsupported("resizing " + std::to_string(dims.size()) +
                            " axes (kiln resizes at most " +
                            std::to_string(kMaxResizedDims) + ")");
  if (linear && a.antialias &&
      llvm::any_of(dims, [&](int64_t d) { return scales[d] < 1.0; }))
    return node.unsupported("antialias = 1 when downsampling in linear mode");
  auto result = RankedTensorType::get(shape, type.getElementType());
  OpBuilder &b = node.builder();
  node.setResult(
      0, b.create<ResizeOp>(
             node.loc(), result, x,
             linear ? ResizeMode::linear : ResizeMode::nearest, *coordinates,
             linear ? ResizeRounding::round_prefer_floor : *rounding,
             b.getDenseF64ArrayAttr(scales)));
  return success();
}

} // namespace

void registerResizeImporters(OpImporterRegistry &registry) {
  registry.add("Resize", importResize);
}

} // namespace mlir::kiln::onnx_import
