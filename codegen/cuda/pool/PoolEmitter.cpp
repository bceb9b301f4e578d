//===- PoolEmitter.cpp - kernels of "pool" fusions ------------------------===//
//
// A "pool" fusion holds one op: max_pool2d, avg_pool2d or a gradient of one
// (the fusion pass gives pooling ops groups of their own and adds no
// producers or consumers to them). Each becomes a grid-stride kernel of
// kernels/pool.cuh over the tensor it writes; the gradients gather, so they
// need no atomics and are deterministic. Max pooling's gradient recomputes
// each window's argmax where windows overlap little; otherwise a first
// kernel leaves every window's argmax in scratch and a second gathers from
// it (kiln::pool::recompute_argmax). The plan (channel vector, argmax
// kernel, each launch's block size and grid) is recorded as
// #kiln_cuda.pool and rendered from it.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/RecordedKernel.h"

#include "kiln/pool_layout.cuh"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <optional>

namespace mlir::kiln::codegen {
namespace {

/// One pooling between an input and an output activation, with
/// channels-first names whatever the layout.
struct PoolShape {
  bool nhwc = false;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0, sh = 0, sw = 0, top = 0, left = 0;
  bool includePad = false;
  /// Bytes of one element (every tensor of a pooling op has one type).
  int64_t elementBytes = 4;

  int64_t inputElements() const { return n * c * h * w; }
  int64_t outputElements() const { return n * c * oh * ow; }
};

template <typename OpTy>
PoolShape shapeOf(OpTy op, Value input, Value output, bool includePad) {
  PoolShape s;
  s.nhwc = op.getLayout() == ConvLayout::nhwc;
  auto in = cast<ShapedType>(input.getType()).getShape();
  auto out = cast<ShapedType>(output.getType()).getShape();
  int ch = s.nhwc ? 3 : 1, hd = s.nhwc ? 1 : 2, wd = s.nhwc ? 2 : 3;
  s.n = in[0], s.c = in[ch], s.h = in[hd], s.w = in[wd];
  s.oh = out[hd], s.ow = out[wd];
  s.kh = op.getKernel()[0], s.kw = op.getKernel()[1];
  s.sh = op.getStride()[0], s.sw = op.getStride()[1];
  s.top = op.getPadding()[0], s.left = op.getPadding()[2];
  s.includePad = includePad;
  Type element = cast<ShapedType>(input.getType()).getElementType();
  s.elementBytes = element.getIntOrFloatBitWidth() / 8;
  return s;
}

/// The shape of the pooling `op` computes or differentiates.
PoolShape shapeOf(Operation *op) {
  if (auto pool = dyn_cast<MaxPool2dOp>(op))
    return shapeOf(pool, pool.getInput(), pool.getResult(), false);
  if (auto pool = dyn_cast<AvgPool2dOp>(op))
    return shapeOf(pool, pool.getInput(), pool.getResult(),
                   pool.getCountIncludePad());
  if (auto pool = dyn_cast<MaxPool2dBackwardOp>(op))
    return shapeOf(pool, pool.getInput(), pool.getGrad(), false);
  auto pool = cast<AvgPool2dBackwardOp>(op);
  return shapeOf(pool, pool.getResult(), pool.getGrad(),
                 pool.getCountIncludePad());
}

/// The block size and grid of one launch.
struct PoolLaunch {
  int64_t threads = 0, blocks = 0;
};

/// What the pool planner decides: the channels a thread takes, whether max
/// pooling's gradient gathers from a stored argmax, and each launch.
struct PoolPlan {
  int vec = 1;
  bool argmax = false;
  SmallVector<PoolLaunch> launches;
};

/// The elements of the tensor each launch of `op` writes over, in order,
/// with the argmax kernel when `argmax`.
SmallVector<int64_t> launchElements(Operation *op, const PoolShape &s,
                                    bool argmax) {
  if (isa<MaxPool2dOp, AvgPool2dOp>(op))
    return {s.outputElements()};
  if (argmax)
    return {s.outputElements(), s.inputElements()};
  return {s.inputElements()};
}

/// The launches of kernels over `elements`, `vec` channels per thread
/// (none where a tensor is empty).
SmallVector<PoolLaunch> planLaunches(ArrayRef<int64_t> elements, int vec,
                                     int64_t maxBlocks) {
  SmallVector<PoolLaunch> launches;
  for (int64_t count : elements) {
    int64_t items = count / vec;
    if (items == 0)
      continue;
    int64_t threads = ::kiln::pool::block_threads(items);
    launches.push_back(
        {threads, ::kiln::pool::grid_blocks(items, threads, maxBlocks)});
  }
  return launches;
}

int64_t maxPoolBlocks(const GpuTarget &target) {
  return target.blocksForWaves(4, 8);
}

PoolPlan planPool(Operation *op, const GpuTarget &target) {
  PoolShape s = shapeOf(op);
  PoolPlan plan;
  plan.vec = ::kiln::pool::channel_vector(s.nhwc, s.c, s.elementBytes);
  plan.argmax = isa<MaxPool2dBackwardOp>(op) &&
                !::kiln::pool::recompute_argmax(s.kh, s.kw, s.sh, s.sw);
  plan.launches = planLaunches(launchElements(op, s, plan.argmax), plan.vec,
                               maxPoolBlocks(target));
  return plan;
}

cuda::PoolAttr poolAttrOf(MLIRContext *context, const PoolPlan &plan) {
  SmallVector<int64_t> threads, blocks;
  for (const PoolLaunch &launch : plan.launches) {
    threads.push_back(launch.threads);
    blocks.push_back(launch.blocks);
  }
  return cuda::PoolAttr::get(context, plan.vec, threads, blocks, plan.argmax);
}

/// The plan `attr` records for `fusion`'s `op`, checked against it.
FailureOr<PoolPlan> poolPlanOf(FusionOp fusion, Operation *op,
                               cuda::PoolAttr attr) {
  PoolShape s = shapeOf(op);
  int planned = ::kiln::pool::channel_vector(s.nhwc, s.c, s.elementBytes);
  if (planned % attr.getVector() != 0)
    return emitRecordedKernelError(fusion)
           << "a thread takes " << planned
           << " channels or a power of two fewer, not " << attr.getVector();
  if (attr.getArgmax() && !isa<MaxPool2dBackwardOp>(op))
    return emitRecordedKernelError(fusion)
           << "only max pooling's gradient gathers from a stored argmax";
  PoolPlan plan;
  plan.vec = attr.getVector();
  plan.argmax = attr.getArgmax();
  size_t launches =
      planLaunches(launchElements(op, s, plan.argmax), plan.vec, 1).size();
  if (attr.getThreads().size() != launches)
    return emitRecordedKernelError(fusion)
           << "the kernels take " << launches << " launches, not "
           << attr.getThreads().size();
  for (auto [threads, blocks] : llvm::zip(attr.getThreads(), attr.getBlocks()))
    plan.launches.push_back({threads, blocks});
  return plan;
}

/// The recorded plan of `fusion`, or the planner's where none is recorded.
FailureOr<PoolPlan> poolPlan(FusionOp fusion, Operation *op,
                             const GpuTarget &target) {
  FailureOr<cuda::PoolAttr> recorded = recordedKernel<cuda::PoolAttr>(fusion);
  if (failed(recorded))
    return failure();
  if (!*recorded)
    return planPool(op, target);
  return poolPlanOf(fusion, op, *recorded);
}

/// The kernels of one pool fusion: one configuration, several launches.
class PoolKernels {
public:
  PoolKernels(const SingleOpFusion &single, const PoolPlan &plan,
              const GpuTarget &target)
      : single(single), shape(shapeOf(single.op)),
        builder("// kiln pool fusion of\n" + describeOp(single.op)),
        plan(plan), vec(plan.vec) {
    // 32-bit indices when every offset and the grid-stride loop's last step
    // stay below 2^31.
    int64_t largest = std::max(shape.inputElements(), shape.outputElements());
    int64_t gridThreads =
        maxPoolBlocks(target) * ::kiln::pool::max_block_threads;
    for (const PoolLaunch &launch : plan.launches)
      gridThreads = std::max(gridThreads, launch.threads * launch.blocks);
    idx = largest + gridThreads < (int64_t(1) << 31) ? "int" : "long long";
  }

  Operation *op() const { return single.op; }

  /// Pointer parameter declarations of op operand `i` and op result `i`.
  KernelParam input(unsigned i, llvm::StringRef name) const {
    return {"const " + cudaType(op()->getOperand(i)) + " *__restrict__",
            name.str(), LaunchArg::operand(single.operandOf[i])};
  }
  KernelParam output(unsigned i, llvm::StringRef name) const {
    return {cudaType(op()->getResult(i)) + " *__restrict__", name.str(),
            LaunchArg::result(single.resultOf[i])};
  }

  /// A launch of kiln::pool::<function> with `params`, one thread per work
  /// item of a tensor of `elements` elements.
  void kernel(llvm::StringRef prefix, llvm::StringRef function,
              std::vector<KernelParam> params, int64_t elements) {
    if (elements / vec == 0)
      return;
    auto [threads, blocks] = plan.launches[launched++];
    KernelSpec spec;
    spec.prefix = prefix.str();
    spec.templateName = function.str();
    spec.templates = {"kiln/pool.cuh"};
    spec.configuration = configuration() + " blocks=" + std::to_string(blocks);
    spec.functors = "typedef " + idx + " idx_t;\nusing cfg = " + config() +
                    ";\n";
    spec.body = "  kiln::pool::" + function.str() + "<cfg>(ctx";
    for (const KernelParam &param : params)
      spec.body += ", " + param.name;
    spec.body += ");\n";
    spec.params = std::move(params);
    spec.grid = {uint32_t(blocks), 1, 1};
    spec.block = {uint32_t(threads), 1, 1};
    builder.kernel(std::move(spec));
  }

  /// Scratch for the argmax of every window: one int per output element.
  KernelParam argmaxScratch(bool writes) {
    if (!argmaxOffset)
      argmaxOffset = builder.scratch(shape.outputElements() * 4);
    return {writes ? "int *__restrict__" : "const int *__restrict__", "argmax",
            LaunchArg::scratch(*argmaxOffset)};
  }

  const SingleOpFusion &single;
  PoolShape shape;
  FusionBuilder builder;
  const PoolPlan &plan;
  int vec = 1;
  std::string idx;

private:
  std::string config() const {
    const PoolShape &s = shape;
    return llvm::formatv("kiln::pool::config<idx_t, {0}, {1}, {2}, {3}, {4}, "
                         "{5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, "
                         "{14}>",
                         s.nhwc ? "true" : "false", s.n, s.c, s.h, s.w, s.oh,
                         s.ow, s.kh, s.kw, s.sh, s.sw, s.top, s.left, vec,
                         s.includePad ? "true" : "false")
        .str();
  }

  /// The line of --stats.
  std::string configuration() const {
    const PoolShape &s = shape;
    return llvm::formatv("{0} n={1} c={2} {3}x{4}->{5}x{6} kernel={7}x{8} "
                         "stride={9}x{10} pad={11},{12} vec={13}{14}",
                         s.nhwc ? "nhwc" : "nchw", s.n, s.c, s.h, s.w, s.oh,
                         s.ow, s.kh, s.kw, s.sh, s.sw, s.top, s.left, vec,
                         s.includePad ? " include_pad" : "")
        .str();
  }

  std::optional<uint64_t> argmaxOffset;
  /// The launches of the plan added so far.
  size_t launched = 0;
};

void emitPool(PoolKernels &k) {
  Operation *op = k.op();
  const PoolShape &s = k.shape;
  if (isa<MaxPool2dOp>(op)) {
    k.kernel("kiln_max_pool2d", "max_pool_forward",
             {k.input(0, "x"), k.output(0, "y")}, s.outputElements());
  } else if (isa<AvgPool2dOp>(op)) {
    k.kernel("kiln_avg_pool2d", "avg_pool_forward",
             {k.input(0, "x"), k.output(0, "y")}, s.outputElements());
  } else if (isa<AvgPool2dBackwardOp>(op)) {
    k.kernel("kiln_avg_pool2d_backward", "avg_pool_backward",
             {k.input(0, "grad"), k.output(0, "dx")}, s.inputElements());
  } else if (!k.plan.argmax) {
    k.kernel("kiln_max_pool2d_backward", "max_pool_backward",
             {k.input(0, "grad"), k.input(1, "x"), k.output(0, "dx")},
             s.inputElements());
  } else {
    k.kernel("kiln_max_pool2d_argmax", "max_pool_argmax",
             {k.input(1, "x"), k.argmaxScratch(/*writes=*/true)},
             s.outputElements());
    k.kernel("kiln_max_pool2d_backward", "max_pool_backward_indexed",
             {k.input(0, "grad"), k.argmaxScratch(/*writes=*/false),
              k.output(0, "dx")},
             s.inputElements());
  }
}

/// A fusion of one pooling op reading fusion operands and yielding its
/// result.
FailureOr<SingleOpFusion> poolFusion(FusionOp fusion) {
  if (fusion.getKind() != "pool")
    return failure();
  FailureOr<SingleOpFusion> single = SingleOpFusion::get(fusion);
  if (failed(single) ||
      !isa<MaxPool2dOp, AvgPool2dOp, MaxPool2dBackwardOp, AvgPool2dBackwardOp>(
          single->op) ||
      single->resultOf[0] < 0)
    return failure();
  return single;
}

class PoolEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    return succeeded(poolFusion(fusion));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<SingleOpFusion> single = poolFusion(fusion);
    if (failed(single))
      return (emitFusionError(fusion) << "is not a fusion of one pooling op");
    FailureOr<PoolPlan> plan = poolPlan(fusion, single->op, options.target());
    if (failed(plan))
      return failure();
    PoolKernels kernels(*single, *plan, options.target());
    emitPool(kernels);
    return kernels.builder.take();
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    return Attribute(poolAttrOf(
        fusion.getContext(),
        planPool(poolFusion(fusion)->op, options.target())));
  }

  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &options) const override {
    return failure(
        failed(poolPlan(fusion, poolFusion(fusion)->op, options.target())));
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createPoolEmitter() {
  return std::make_unique<PoolEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Pool,
                                              createPoolEmitter);

} // namespace mlir::kiln::codegen
