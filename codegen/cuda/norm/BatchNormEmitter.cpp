//===- BatchNormEmitter.cpp - kernels of "batch_norm" fusions -------------===//
//
// A "batch_norm" fusion holds one kiln.batch_norm or kiln.batch_norm_backward
// (compiler/transforms/OpClasses.cpp gives them kernels of their own; a conv
// fusion that ends in a batch norm runs the same kernels,
// BatchNormKernels.h). The
// input is seen as [outer, C, inner] around the channel dim; the templates
// are kernels/batch_norm.cuh, their layout kernels/batch_norm_layout.cuh:
//
//   batch_norm (batch statistics):  stats_partial -> stats_final -> normalize
//   batch_norm eval:                eval_final -> normalize
//   batch_norm_backward:            grad_partial -> grad_final -> input_grad
//
// The partial kernels write per-block partials (Welford triples, with the
// sums of grad and grad * x for the backward op) to scratch and one warp per
// channel combines them in a fixed order, so results are
// deterministic and no atomics are used. The per-channel kernels also write the
// mean and variance results and the updated running statistics, in place over
// the running ones when the memory plan makes them share a buffer.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/norm/BatchNormKernels.h"

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/RecordedKernel.h"

#include "kiln/batch_norm_layout.cuh"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::bn;

std::string str(int64_t v) { return std::to_string(v); }
std::array<uint32_t, 3> dim3Of(int64_t x, int64_t y = 1) {
  return {uint32_t(x), uint32_t(y), 1};
}

/// The kernels of one batch norm op being emitted: the layout of its input
/// and the kernels' shared configuration.
class Emission {
public:
  Emission(FusionBuilder &builder, Operation *op, BatchNormBindings bindings,
           FusionOp fusion, Value input, int64_t dim, int64_t blocks,
           std::optional<BatchNormPartials> given)
      : op_(op), bindings(std::move(bindings)), builder(builder), given(given) {
    auto type = cast<RankedTensorType>(input.getType());
    llvm::ArrayRef<int64_t> shape = type.getShape();
    channels = shape[dim];
    for (int64_t d = 0; d < dim; ++d)
      outer *= shape[d];
    for (int64_t d = dim + 1; d < type.getRank(); ++d)
      inner *= shape[d];
    count = outer * inner;
    elements = count * channels;
    // 16-byte accesses: every operand and result of the op has the input's
    // element type or is per channel.
    vec = 16 / std::max<int64_t>(
                   1, (type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
    columnVec = layout::column_mode(inner)
                    ? layout::column_vec(channels, inner, vec)
                    : 1;
    elementVec = layout::element_vec(elements, vec);
    chunk = given ? given->rowsPerSplit
                  : layout::chunk_of(outer, channels, inner, blocks,
                                     columnVec);
    splits = layout::splits_of(outer, channels, inner, chunk);
    partials = std::max<int64_t>(
        splits * layout::partials_per_split(channels, inner), 1);
    elementBlocks = ::kiln::reduce::element_blocks(
        std::max<int64_t>(elements / elementVec, 1), blocks);
    int64_t largest = 0;
    for (Type t : fusion->getOperandTypes())
      largest = std::max(largest, cast<ShapedType>(t).getNumElements());
    for (Type t : fusion->getResultTypes())
      largest = std::max(largest, cast<ShapedType>(t).getNumElements());
    idx =
        largest < (int64_t(1) << 31) - (int64_t(1) << 20) ? "int" : "long long";
  }

  Operation *op() const { return op_; }
  bool yields(unsigned result) const {
    return bindings.results[result].has_value();
  }

  /// The configuration struct `cfg` every kernel of the fusion uses.
  void setConstants(double eps, double momentum) {
    double unbias = count > 1 ? double(count) / double(count - 1) : 1.0;
    functors =
        llvm::formatv("typedef {0} idx_t;\n"
                      "struct cfg : kiln::bn::config<idx_t, {1}, {2}, "
                      "{3}, {4}, {8}> {\n"
                      "  static constexpr float eps = {5};\n"
                      "  static constexpr float momentum = {6};\n"
                      "  static constexpr float unbias = {7};\n"
                      "{9}"
                      "};\n",
                      idx, outer, channels, inner, chunk, floatLiteral(eps),
                      floatLiteral(momentum), floatLiteral(unbias), vec,
                      given ? "  // Partials of the values as they are.\n"
                              "  static constexpr bool shifted = false;\n"
                            : "")
            .str();
  }

  std::string configuration() const {
    return llvm::formatv(
               "outer={0} c={1} inner={2} {3} splits={4} vector={5}", outer,
               channels, inner,
               layout::column_mode(inner)
                   ? "columns=" +
                         str(layout::column_tile(channels * inner, columnVec)) +
                         "x" + str(columnVec)
                   : std::string("segments"),
               splits, elementVec)
        .str();
  }

  /// A kernel's parameters and the arguments of its template call.
  struct Call {
    std::vector<KernelParam> params;
    std::vector<std::string> args;

    void add(std::string type, std::string name, LaunchArg arg) {
      args.push_back(name);
      params.push_back({std::move(type), std::move(name), arg});
    }
    /// A null pointer of `type` in the call.
    void null(llvm::StringRef type) {
      args.push_back("(" + type.str() + " *)nullptr");
    }
  };

  std::string storage(Value v) const { return cudaType(v); }
  /// Operand `i` as a read-only pointer (restrict unless it may alias a
  /// result).
  void input(Call &call, unsigned i, llvm::StringRef name,
             bool restrict = true) const {
    call.add("const " + storage(op()->getOperand(i)) +
                 (restrict ? " *__restrict__" : " *"),
             name.str(), bindings.operands[i]);
  }
  /// Result `i` when yielded, else a null pointer.
  void output(Call &call, unsigned i, llvm::StringRef name,
              bool restrict = true) const {
    std::string type = storage(op()->getResult(i));
    if (!yields(i))
      return call.null(type);
    call.add(type + (restrict ? " *__restrict__" : " *"), name.str(),
             *bindings.results[i]);
  }
  void scratch(Call &call, llvm::StringRef type, llvm::StringRef name,
               uint64_t offset, bool write) const {
    call.add((write ? "" : "const ") + type.str() + " *__restrict__",
             name.str(), LaunchArg::scratch(offset));
  }

  /// Adds a launch of `kiln::bn::<function><cfg>(ctx, args...)`.
  void launch(llvm::StringRef prefix, llvm::StringRef function,
              const Call &call, std::array<uint32_t, 3> grid,
              unsigned minBlocksPerSm = 0, int64_t threads = layout::kThreads) {
    KernelSpec spec;
    spec.minBlocksPerSm = minBlocksPerSm;
    spec.prefix = prefix.str();
    spec.templates = {"kiln/batch_norm.cuh"};
    spec.templateName = ("bn_" + function).str();
    spec.configuration = configuration();
    spec.functors = functors;
    spec.params = call.params;
    spec.body = "  kiln::bn::" + function.str() + "<cfg>(ctx";
    for (const std::string &arg : call.args)
      spec.body += ", " + arg;
    spec.body += ");\n";
    spec.grid = grid;
    spec.block = dim3Of(threads);
    builder.kernel(std::move(spec));
  }

  /// Adds a launch of a per-channel kernel: a block of one warp per
  /// channel.
  void launchPerChannel(llvm::StringRef prefix, llvm::StringRef function,
                        const Call &call) {
    launch(prefix, function, call, channelGrid(), 0, layout::kChannelThreads);
  }

  /// The Welford partials of operand `input` (skipped without elements),
  /// unless they were given.
  uint64_t statsPartial(unsigned input) {
    if (given)
      return given->offset;
    uint64_t partial = builder.scratch(partials * 12);
    if (count == 0)
      return partial;
    Call call;
    this->input(call, input, "in");
    scratch(call, "kiln::bn::welford", "partial", partial, true);
    launch("kiln_batch_norm_stats", "stats_partial", call, partialGrid());
    return partial;
  }

  std::array<uint32_t, 3> partialGrid() const {
    return dim3Of(layout::tiles_of(channels, inner, columnVec), splits);
  }
  std::array<uint32_t, 3> channelGrid() const {
    return dim3Of(layout::channel_blocks(channels));
  }

  Operation *op_;
  BatchNormBindings bindings;
  FusionBuilder &builder;
  std::optional<BatchNormPartials> given;
  int64_t outer = 1, channels = 1, inner = 1, count = 0, elements = 0;
  int64_t chunk = 1, splits = 0, partials = 1, elementBlocks = 1;
  /// Elements of a 16-byte access; columns per access of the statistics
  /// kernels and elements per access of the element-wise ones.
  int64_t vec = 1, columnVec = 1, elementVec = 1;
  std::string idx, functors;
};

void emitForward(Emission &e, BatchNormOp norm) {
  e.setConstants(norm.getEps().convertToDouble(), norm.getMomentumValue());
  bool running = norm.hasRunningStats();
  uint64_t coef = e.builder.scratch(e.channels * 4 * layout::kNormFields);

  Emission::Call stats;
  if (!norm.getEval()) {
    uint64_t partial = e.statsPartial(0);
    e.input(stats, 0, "in");
    e.scratch(stats, "kiln::bn::welford", "partial", partial, false);
  }
  e.input(stats, 1, "gamma");
  e.scratch(stats, "float", "coef", coef, true);
  e.output(stats, 1, "mean_out");
  e.output(stats, 2, "var_out");
  // The updated statistics may overwrite the running ones in place.
  if (running) {
    e.input(stats, 3, "running_mean", /*restrict=*/false);
    e.input(stats, 4, "running_var", /*restrict=*/false);
    e.output(stats, 3, "new_mean", /*restrict=*/false);
    e.output(stats, 4, "new_var", /*restrict=*/false);
  } else {
    stats.null("const float");
    stats.null("const float");
    stats.null("float");
    stats.null("float");
  }
  if (norm.getEval())
    e.launchPerChannel("kiln_batch_norm_eval", "eval_final", stats);
  else
    e.launchPerChannel("kiln_batch_norm_final", "stats_final", stats);

  if (!e.yields(0) || e.elements == 0)
    return;
  Emission::Call apply;
  e.input(apply, 0, "in");
  e.scratch(apply, "float", "coef", coef, false);
  e.input(apply, 2, "beta");
  e.output(apply, 0, "out");
  e.launch("kiln_batch_norm_normalize", "normalize", apply,
           dim3Of(e.elementBlocks));
}

void emitBackward(Emission &e, BatchNormBackwardOp norm) {
  e.setConstants(norm.getEps().convertToDouble(), 0.0);
  bool dx = e.yields(0);
  // The input's statistics and the gradient sums in one pass.
  uint64_t sums = e.builder.scratch(e.partials * 20);
  if (e.count > 0) {
    Emission::Call call;
    e.input(call, 0, "grad");
    e.input(call, 1, "in");
    e.scratch(call, "kiln::bn::grad_sums", "partial", sums, true);
    // Two blocks per SM keep enough loads in flight (ptxas fits the
    // accumulators of 16-byte columns in 128 registers).
    e.launch("kiln_batch_norm_backward_sums", "grad_partial", call,
             e.partialGrid(), /*minBlocksPerSm=*/2);
  }
  uint64_t coef = e.builder.scratch(e.channels * 4 * layout::kDxFields);
  Emission::Call grads;
  e.input(grads, 1, "in");
  e.scratch(grads, "kiln::bn::grad_sums", "partial", sums, false);
  e.input(grads, 2, "gamma");
  e.output(grads, 1, "gamma_grad");
  e.output(grads, 2, "beta_grad");
  if (dx)
    e.scratch(grads, "float", "coef", coef, true);
  else
    grads.null("float");
  e.launchPerChannel("kiln_batch_norm_backward_params", "grad_final", grads);

  if (!dx || e.elements == 0)
    return;
  Emission::Call input;
  e.input(input, 0, "grad");
  e.input(input, 1, "in");
  e.scratch(input, "float", "coef", coef, false);
  e.output(input, 0, "out");
  e.launch("kiln_batch_norm_backward_input", "input_grad", input,
           dim3Of(e.elementBlocks));
}

class BatchNormEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    if (fusion.getKind() != "batch_norm")
      return false;
    FailureOr<SingleOpFusion> single = SingleOpFusion::get(fusion);
    return succeeded(single) &&
           isa<BatchNormOp, BatchNormBackwardOp>(single->op);
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    if (!matches(fusion))
      return (
          emitFusionError(fusion)
          << "batch_norm codegen: expected a fusion of one kiln.batch_norm or "
             "kiln.batch_norm_backward reading the fusion's operands");
    FailureOr<cuda::BatchNormAttr> recorded =
        recordedKernel<cuda::BatchNormAttr>(fusion);
    if (failed(recorded))
      return failure();
    SingleOpFusion single = *SingleOpFusion::get(fusion);
    FusionBuilder builder("// kiln batch_norm fusion of\n" +
                          describeOp(single.op));
    emitBatchNormKernels(builder, single.op, fusion,
                         BatchNormBindings::of(single),
                         *recorded ? recorded->getBlocks()
                                   : batchNormBlocks(options.target()));
    return builder.take();
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    return Attribute(cuda::BatchNormAttr::get(
        fusion.getContext(), batchNormBlocks(options.target())));
  }

  /// Any block count (the attribute's own check) sizes a valid split.
  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &) const override {
    return failure(failed(recordedKernel<cuda::BatchNormAttr>(fusion)));
  }
};

} // namespace

BatchNormBindings BatchNormBindings::of(const SingleOpFusion &single) {
  BatchNormBindings b;
  for (int64_t i : single.operandOf)
    b.operands.push_back(LaunchArg::operand(i));
  for (int64_t i : single.resultOf)
    b.results.push_back(i >= 0 ? std::optional<LaunchArg>(LaunchArg::result(i))
                               : std::nullopt);
  return b;
}

void emitBatchNormKernels(FusionBuilder &builder, Operation *op,
                          FusionOp fusion, const BatchNormBindings &bindings,
                          int64_t blocks,
                          std::optional<BatchNormPartials> partials) {
  if (auto norm = dyn_cast<BatchNormOp>(op)) {
    Emission e(builder, op, bindings, fusion, norm.getInput(),
               norm.getDimAttr().getInt(), blocks, partials);
    if (e.channels > 0)
      emitForward(e, norm);
    return;
  }
  auto norm = cast<BatchNormBackwardOp>(op);
  Emission e(builder, op, bindings, fusion, norm.getInput(),
             norm.getDimAttr().getInt(), blocks, std::nullopt);
  if (e.channels > 0)
    emitBackward(e, norm);
}

std::unique_ptr<KernelEmitter> createBatchNormEmitter() {
  return std::make_unique<BatchNormEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::BatchNorm,
                                              createBatchNormEmitter);

} // namespace mlir::kiln::codegen
