//===- ResizeEmitter.cpp - kernels of "resize" fusions --------------------===//
//
// A "resize" fusion holds one kiln.resize_backward (the fusion pass gives it
// a group of its own). It becomes one grid-stride kernel of
// kernels/resize.cuh over the input gradient, which views the tensor as
// [A, R0, B, R1, C, R2, D] around its resized dims. The forward kiln.resize
// is a layout op of the element-wise kernels (ScalarEmitter).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/RecordedKernel.h"
#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "kiln/pool_layout.cuh"

#include "llvm/Support/FormatVariadic.h"

#include <utility>

namespace mlir::kiln::codegen {
namespace {

/// The [A, R0, B, R1, C, R2, D] view of one resize: `segments` the products
/// of the dims around the resized ones, `in`/`out`/`scale` per resized axis
/// (one element and scale 1 past the op's resized dims).
struct ResizeView {
  int64_t segments[4] = {1, 1, 1, 1};
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  double scale[3] = {1.0, 1.0, 1.0};

  int64_t inputElements() const {
    return segments[0] * in[0] * segments[1] * in[1] * segments[2] * in[2] *
           segments[3];
  }
};

ResizeView viewOf(ResizeBackwardOp op) {
  ArrayRef<int64_t> input =
      cast<RankedTensorType>(op.getResult().getType()).getShape();
  ArrayRef<int64_t> output =
      cast<RankedTensorType>(op.getGrad().getType()).getShape();
  SmallVector<int64_t> dims = op.getResizedDims();
  ResizeView v;
  // The dims before the first resized one, between them, and after the
  // last go to A, B, C and D; D takes everything after the last.
  size_t k = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(input.size()); ++d) {
    if (k < dims.size() && dims[k] == d) {
      v.in[k] = input[d];
      v.out[k] = output[d];
      v.scale[k] = op.getScales()[d];
      ++k;
      continue;
    }
    v.segments[k == dims.size() ? 3 : k] *= input[d];
  }
  return v;
}

class ResizeEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    return succeeded(resizeFusion(fusion));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<SingleOpFusion> single = resizeFusion(fusion);
    if (failed(single))
      return (emitFusionError(fusion)
              << "is not a fusion of one kiln.resize_backward");
    auto op = cast<ResizeBackwardOp>(single->op);
    ResizeView v = viewOf(op);
    FusionBuilder builder("// kiln resize fusion of\n" + describeOp(op));
    int64_t items = v.inputElements();
    if (items == 0)
      return builder.take();
    FailureOr<cuda::ResizeAttr> recorded =
        recordedKernel<cuda::ResizeAttr>(fusion);
    if (failed(recorded))
      return failure();
    auto [threads, blocks] =
        *recorded ? std::make_pair(recorded->getThreads(), recorded->getBlocks())
                  : plan(fusion, options.target());
    int64_t gradElements =
        cast<RankedTensorType>(op.getGrad().getType()).getNumElements();
    // 32-bit indices when every offset and the loop's last step fit.
    bool wide = std::max(items, gradElements) + blocks * threads >=
                (int64_t(1) << 31);

    KernelSpec spec;
    spec.prefix = "kiln_resize_backward";
    spec.templateName = "resize_backward";
    spec.templates = {"kiln/resize.cuh"};
    spec.configuration = configuration(op, v) +
                         " blocks=" + std::to_string(blocks) +
                         (wide ? " i64" : "");
    spec.functors =
        llvm::formatv(
            "struct cfg : kiln::resize::config<{0}, {1}, {2}, {3}, {4}, {5}, "
            "{6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}> {{\n"
            "  static constexpr double scale0 = {14}, scale1 = {15}, "
            "scale2 = {16};\n};\n",
            wide ? "long long" : "int", static_cast<int>(op.getMode()),
            static_cast<int>(op.getCoordinates()),
            static_cast<int>(op.getRounding()), v.segments[0], v.in[0],
            v.out[0], v.segments[1], v.in[1], v.out[1], v.segments[2], v.in[2],
            v.out[2], v.segments[3], doubleLiteral(v.scale[0]),
            doubleLiteral(v.scale[1]), doubleLiteral(v.scale[2]))
            .str();
    spec.addParam("const " + cudaType(op.getGrad()) + " *__restrict__",
                  "grad", LaunchArg::operand(single->operandOf[0]));
    spec.addParam(cudaType(op.getResult()) + " *__restrict__", "dx",
                  LaunchArg::result(single->resultOf[0]));
    spec.body = "  kiln::resize::backward<cfg>(ctx, grad, dx);\n";
    spec.grid = {uint32_t(blocks), 1, 1};
    spec.block = {uint32_t(threads), 1, 1};
    builder.kernel(std::move(spec));
    return builder.take();
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    auto [threads, blocks] = plan(fusion, options.target());
    return Attribute(
        cuda::ResizeAttr::get(fusion.getContext(), threads, blocks));
  }

  /// Any block size of whole warps and grid (the attribute's own checks)
  /// runs the grid-stride loop.
  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &) const override {
    return failure(failed(recordedKernel<cuda::ResizeAttr>(fusion)));
  }

private:
  /// The planner's block size and grid: one thread per element of the
  /// gradient it writes.
  static std::pair<int64_t, int64_t> plan(FusionOp fusion,
                                          const GpuTarget &target) {
    auto op = cast<ResizeBackwardOp>(resizeFusion(fusion)->op);
    int64_t items = std::max<int64_t>(viewOf(op).inputElements(), 1);
    int64_t threads = ::kiln::pool::block_threads(items);
    return {threads, ::kiln::pool::grid_blocks(items, threads,
                                               target.blocksForWaves(4, 8))};
  }

  static FailureOr<SingleOpFusion> resizeFusion(FusionOp fusion) {
    if (fusion.getKind() != "resize")
      return failure();
    FailureOr<SingleOpFusion> single = SingleOpFusion::get(fusion);
    if (failed(single) || !isa<ResizeBackwardOp>(single->op) ||
        single->resultOf[0] < 0)
      return failure();
    return single;
  }

  /// The line of --stats.
  static std::string configuration(ResizeBackwardOp op, const ResizeView &v) {
    std::string text = stringifyResizeMode(op.getMode()).str() + " " +
                       stringifyResizeCoordinates(op.getCoordinates()).str();
    if (op.getMode() == ResizeMode::nearest)
      text += " " + stringifyResizeRounding(op.getRounding()).str();
    text += llvm::formatv(" view={0}x[{1}->{2}]x{3}x[{4}->{5}]x{6}x[{7}->{8}]x{9}",
                          v.segments[0], v.in[0], v.out[0], v.segments[1],
                          v.in[1], v.out[1], v.segments[2], v.in[2], v.out[2],
                          v.segments[3])
                .str();
    return text;
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createResizeEmitter() {
  return std::make_unique<ResizeEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Resize,
                                              createResizeEmitter);

} // namespace mlir::kiln::codegen
