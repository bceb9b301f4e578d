//===- RnnEmitter.cpp - kernels of "rnn" fusions --------------------------===//
//
// kiln.rnn and kiln.rnn_backward onto the persistent kernels of
// kernels/rnn.cuh, configured by planRnn (RnnPlan.h) or as the fusion's
// #kiln_cuda.rnn records (RnnSelection.cpp):
//
//   forward    [zero_counters]  rnn_forward (one launch per wave of grid
//              groups; clustered or cooperative as the plan says)
//   backward   [zero_counters]  rnn_backward, then for dR: weight_gradient
//              and sum_partials, for db: bias_partials and sum_partials
//
// A splat constant the fusion holds (a zero initial state, the zero
// gradient of a result the loss does not use) is passed as a value, not
// read from memory. Results the fusion does not yield that the kernels need
// anyway (the states for the exchange, d(Wx) for dR and db) live in scratch.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/rnn/RnnEmitter.h"

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"

#include "kiln/rnn_layout.cuh"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::rnn;

std::array<uint32_t, 3> dim3Of(int64_t x, int64_t y = 1, int64_t z = 1) {
  return {uint32_t(x), uint32_t(y), uint32_t(z)};
}

/// An operand of the rnn op: a fusion operand, or a splat constant of the
/// fusion's body.
struct Input {
  int64_t operand = -1;
  std::optional<double> splat;
};

/// The body of an rnn fusion: splat constants and one kiln.rnn or
/// kiln.rnn_backward, with the fusion operand or splat behind each op
/// operand and the fusion result (or -1) behind each op result.
struct RnnFusion {
  Operation *op = nullptr;
  std::vector<Input> inputs;
  std::vector<int64_t> resultOf;

  static FailureOr<RnnFusion> get(FusionOp fusion) {
    Block &body = fusion.getBody().front();
    RnnFusion f;
    for (Operation &op : body.without_terminator()) {
      if (isa<ConstantOp>(op))
        continue;
      if (f.op || !isa<RnnOp, RnnBackwardOp>(op))
        return failure();
      f.op = &op;
    }
    if (!f.op)
      return failure();
    for (Value operand : f.op->getOperands()) {
      Input in;
      if (auto argument = dyn_cast<BlockArgument>(operand)) {
        in.operand = argument.getArgNumber();
      } else if (auto constant = operand.getDefiningOp<ConstantOp>()) {
        auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
        if (!value || !value.isSplat() ||
            !isa<FloatType>(value.getElementType()))
          return failure();
        in.splat = value.getSplatValue<APFloat>().convertToDouble();
      } else {
        return failure();
      }
      f.inputs.push_back(in);
    }
    f.resultOf.assign(f.op->getNumResults(), -1);
    for (auto [index, value] :
         llvm::enumerate(body.getTerminator()->getOperands())) {
      auto result = dyn_cast<OpResult>(value);
      if (!result || result.getOwner() != f.op)
        return failure();
      f.resultOf[result.getResultNumber()] = index;
    }
    return f;
  }
};

int functionKind(RnnFunction function) {
  switch (function) {
  case RnnFunction::lstm:
    return layout::kLstm;
  case RnnFunction::gru:
    return layout::kGru;
  case RnnFunction::elman:
    return layout::kElman;
  case RnnFunction::slstm:
    return layout::kSlstm;
  }
  return layout::kLstm;
}

/// The rnn problem, its plan and the pieces every kernel of it shares.
struct Emission {
  RnnProblem problem;
  RnnPlan plan;
  std::string type; // CUDA element type
  std::string config;
  std::string ptr, cptr; // "T *__restrict__", "const T *__restrict__"
  int smCount = 0;

  /// A kernel of the template; `configured` ones see the layer's
  /// configuration as `cfg` (the others, sums and counters, share one
  /// source across layers).
  KernelSpec kernel(llvm::StringRef prefix, llvm::StringRef name,
                    std::string configuration, bool configured = true) const {
    KernelSpec spec;
    spec.prefix = prefix.str();
    spec.templates = {"kiln/rnn.cuh"};
    spec.templateName = name.str();
    spec.configuration = std::move(configuration);
    if (configured)
      spec.functors = "using cfg = " + config + ";\n";
    return spec;
  }
};

/// A launch argument for an op operand: its buffer, or a typed null pointer
/// (with the splat passed separately) when it is a splat.
void addInput(KernelSpec &spec, const Emission &e, llvm::StringRef name,
              const Input &in, std::vector<std::string> &call) {
  if (in.splat) {
    call.push_back("(const " + e.type + " *)nullptr");
    return;
  }
  spec.addParam(e.cptr, name.str(), LaunchArg::operand(in.operand));
  call.push_back(name.str());
}

/// The operands both passes read first: Wx, R, the bias, the initial states
/// and their splat value.
void addLayerInputs(KernelSpec &spec, const Emission &e, const RnnFusion &f,
                    std::vector<std::string> &call) {
  addInput(spec, e, "wx", f.inputs[0], call);
  addInput(spec, e, "r", f.inputs[1], call);
  addInput(spec, e, "bias", f.inputs[2], call);
  addInput(spec, e, "s0", f.inputs[3], call);
  spec.addParam("float", "s0_splat",
                LaunchArg::f32(float(f.inputs[3].splat.value_or(0.0))));
  call.push_back("s0_splat");
}

/// A pointer parameter bound to `arg`, or, without one, a typed null pointer
/// in the call (`type` names the pointee).
void addOptional(KernelSpec &spec, llvm::StringRef type, llvm::StringRef name,
                 std::optional<LaunchArg> arg, std::vector<std::string> &call) {
  if (!arg) {
    call.push_back("(" + type.str() + " *)nullptr");
    return;
  }
  spec.addParam(type.str() + " *__restrict__", name.str(), *arg);
  call.push_back(name.str());
}

/// The launch argument of op result `i`, if the fusion yields it.
std::optional<LaunchArg> resultArg(const RnnFusion &f, int i) {
  if (f.resultOf[i] < 0)
    return std::nullopt;
  return LaunchArg::result(f.resultOf[i]);
}

std::string callOf(llvm::StringRef function, llvm::ArrayRef<std::string> args) {
  std::string list = "  kiln::rnn::" + function.str() + "(ctx";
  for (const std::string &arg : args)
    list += ", " + arg;
  return list + ");\n";
}

/// The zeroing of the grid groups' counters, when the plan has grid groups.
std::optional<LaunchArg> emitCounters(const Emission &e,
                                      FusionBuilder &builder) {
  if (e.plan.sync != layout::kSyncGrid)
    return std::nullopt;
  const uint64_t counters =
      builder.scratch(layout::counter_bytes(e.plan.groups));
  KernelSpec zero = e.kernel("kiln_rnn_zero", "rnn_zero_counters",
                             llvm::formatv("n={0}", e.plan.groups).str(),
                             /*configured=*/false);
  zero.addParam("unsigned *__restrict__", "counters",
                LaunchArg::scratch(counters));
  zero.body = callOf("zero_counters",
                     {"counters", std::to_string(e.plan.groups) + "LL"});
  zero.grid = dim3Of(::kiln::ceil_div(e.plan.groups, layout::kSumThreads));
  zero.block = dim3Of(layout::kSumThreads);
  builder.kernel(std::move(zero));
  return LaunchArg::scratch(counters);
}

/// The persistent launches of `spec`, one per wave of groups.
void emitPersistent(const Emission &e, KernelSpec spec,
                    FusionBuilder &builder) {
  spec.block = dim3Of(e.plan.threads);
  spec.dynamicSharedBytes = uint32_t(e.plan.sharedBytes);
  if (e.plan.sync == layout::kSyncCluster)
    spec.cluster = dim3Of(e.plan.blocksPerGroup);
  spec.cooperative = e.plan.sync == layout::kSyncGrid;
  const int64_t perLaunch = e.plan.groupsPerLaunch;
  for (int64_t first = 0; first < e.plan.groups; first += perLaunch) {
    KernelSpec launch = spec;
    launch.grid = dim3Of(e.plan.blocksPerGroup,
                         std::min(perLaunch, e.plan.groups - first));
    launch.addParam("int", "group_offset", LaunchArg::i32(int32_t(first)));
    builder.kernel(std::move(launch));
  }
}

void emitForward(const Emission &e, const RnnFusion &f,
                 FusionBuilder &builder) {
  const RnnProblem &p = e.problem;
  const int s = layout::num_states(p.function);
  std::optional<LaunchArg> counters = emitCounters(e, builder);
  KernelSpec spec =
      e.kernel("kiln_rnn_forward", "rnn_forward", e.plan.describe());
  std::vector<std::string> call;
  addLayerInputs(spec, e, f, call);
  LaunchArg states = f.resultOf[0] >= 0
                         ? LaunchArg::result(f.resultOf[0])
                         : LaunchArg::scratch(builder.scratch(
                               uint64_t(s) * p.batch * p.steps * p.heads *
                               p.units * layout::element_bytes(p.kind)));
  spec.addParam(e.ptr, "states", states);
  call.push_back("states");
  addOptional(spec, e.type, "last", resultArg(f, 1), call);
  addOptional(spec, "unsigned", "counters", counters, call);
  call.push_back("group_offset");
  spec.body = callOf("forward<cfg>", call);
  emitPersistent(e, std::move(spec), builder);
}

void emitBackward(const Emission &e, const RnnFusion &f,
                  FusionBuilder &builder) {
  const RnnProblem &p = e.problem;
  const int64_t elementBytes = layout::element_bytes(p.kind);
  const int g = layout::gates_r(p.function), gb = layout::gates_b(p.function),
            gw = layout::gates_w(p.function);
  const int64_t rows = p.batch * p.steps, hd = p.heads * p.units;
  std::optional<LaunchArg> counters = emitCounters(e, builder);

  // d(Wx) in its result or in scratch; gru's gradient of R_0 h in scratch.
  const bool needWeights = f.resultOf[1] >= 0 || f.resultOf[2] >= 0;
  LaunchArg dInput = f.resultOf[0] >= 0
                         ? LaunchArg::result(f.resultOf[0])
                         : LaunchArg::scratch(builder.scratch(
                               uint64_t(rows) * gw * hd * elementBytes));
  std::optional<LaunchArg> dRh0;
  if (p.function == layout::kGru)
    dRh0 =
        LaunchArg::scratch(builder.scratch(uint64_t(rows) * hd * elementBytes));
  std::optional<LaunchArg> partials;
  if (e.plan.sync == layout::kSyncGrid)
    partials = LaunchArg::scratch(builder.scratch(layout::partial_bytes(
        e.plan.groups, e.plan.blocksPerGroup,
        layout::transposed_groups(p.function, p.units, e.plan.unitsPerBlock,
                                  e.plan.splits, p.kind),
        e.plan.batchTile, p.units)));

  KernelSpec spec =
      e.kernel("kiln_rnn_backward", "rnn_backward", e.plan.describe());
  std::vector<std::string> call;
  addLayerInputs(spec, e, f, call);
  addInput(spec, e, "states", f.inputs[4], call);
  addInput(spec, e, "d_states", f.inputs[5], call);
  addInput(spec, e, "d_last", f.inputs[6], call);
  spec.addParam(e.ptr, "d_input", dInput);
  call.push_back("d_input");
  addOptional(spec, e.type, "d_rh0", dRh0, call);
  addOptional(spec, e.type, "d_states0", resultArg(f, 3), call);
  addOptional(spec, "float", "partials", partials, call);
  addOptional(spec, "unsigned", "counters", counters, call);
  call.push_back("group_offset");
  spec.body = callOf("backward<cfg>", call);
  emitPersistent(e, std::move(spec), builder);
  if (!needWeights)
    return;

  auto sumInto = [&](uint64_t partial, int64_t n, int64_t parts, int64_t result,
                     llvm::StringRef what) {
    KernelSpec sum =
        e.kernel("kiln_rnn_sum", "rnn_sum_partials",
                 llvm::formatv("{0}: n={1} parts={2}", what, n, parts).str(),
                 /*configured=*/false);
    sum.addParam("const float *__restrict__", "partial",
                 LaunchArg::scratch(partial));
    sum.addParam(e.ptr, "out", LaunchArg::result(result));
    sum.body = callOf("sum_partials", {"partial", std::to_string(n) + "LL",
                                       std::to_string(parts), "out"});
    sum.grid = dim3Of(::kiln::ceil_div(n, layout::kSumThreads));
    sum.block = dim3Of(layout::kSumThreads);
    builder.kernel(std::move(sum));
  };
  auto addGradients = [&](KernelSpec &spec, std::vector<std::string> &call) {
    addOptional(spec, "const " + e.type, "d_input", dInput, call);
    addOptional(spec, "const " + e.type, "d_rh0", dRh0, call);
  };

  if (f.resultOf[1] >= 0) {
    const int64_t tiles = layout::weight_tiles(p.units);
    const int64_t blocks = tiles * tiles * g * p.heads;
    const int splits = layout::weight_splits(rows, blocks, e.smCount);
    const int64_t splitRows = layout::weight_split_rows(rows, splits);
    const int64_t used = ::kiln::ceil_div(rows, splitRows);
    const int64_t n = int64_t(g) * p.heads * p.units * p.units;
    const uint64_t partial = builder.scratch(uint64_t(used) * n * 4);
    KernelSpec weights = e.kernel(
        "kiln_rnn_weights", "rnn_weight_gradient",
        llvm::formatv("tiles={0}x{0} gates*heads={1} splits={2} rows={3}",
                      tiles, g * p.heads, used, splitRows)
            .str());
    std::vector<std::string> wcall;
    addGradients(weights, wcall);
    addInput(weights, e, "states", f.inputs[4], wcall);
    addInput(weights, e, "s0", f.inputs[3], wcall);
    weights.addParam("float", "s0_splat",
                     LaunchArg::f32(float(f.inputs[3].splat.value_or(0.0))));
    wcall.push_back("s0_splat");
    weights.addParam("float *__restrict__", "partial",
                     LaunchArg::scratch(partial));
    wcall.push_back("partial");
    wcall.push_back(std::to_string(splitRows) + "LL");
    weights.body = callOf("weight_gradient<cfg>", wcall);
    weights.grid = dim3Of(tiles * tiles, g * p.heads, used);
    weights.block = dim3Of(layout::kWeightThreads);
    builder.kernel(std::move(weights));
    sumInto(partial, n, used, f.resultOf[1], "d_recurrent");
  }
  if (f.resultOf[2] >= 0) {
    const int64_t columns = int64_t(gb) * hd;
    const int64_t chunks = layout::bias_chunks(rows);
    const uint64_t partial = builder.scratch(uint64_t(chunks) * columns * 4);
    KernelSpec bias = e.kernel(
        "kiln_rnn_bias", "rnn_bias_partials",
        llvm::formatv("columns={0} chunks={1}", columns, chunks).str());
    std::vector<std::string> bcall;
    addGradients(bias, bcall);
    bias.addParam("float *__restrict__", "partial",
                  LaunchArg::scratch(partial));
    bcall.push_back("partial");
    bias.body = callOf("bias_partials<cfg>", bcall);
    bias.grid = dim3Of(::kiln::ceil_div(columns, layout::kBiasThreads), chunks);
    bias.block = dim3Of(layout::kBiasThreads);
    builder.kernel(std::move(bias));
    sumInto(partial, columns, chunks, f.resultOf[2], "d_bias");
  }
}

/// An rnn fusion taken apart: its op and the problem its kernels solve.
struct RnnSetup {
  RnnFusion fusion;
  RnnProblem problem;
};

/// `fusion`'s rnn op and problem (f32 on TF32 tensor cores as `options`
/// allow); an error where the kernels cannot take it.
FailureOr<RnnSetup> setUp(FusionOp fusion, const CodegenOptions &options) {
  FailureOr<RnnFusion> parsed = RnnFusion::get(fusion);
  if (failed(parsed))
    return (emitFusionError(fusion) << "is not a fusion of one kiln.rnn or "
                                       "kiln.rnn_backward");
  RnnSetup setup{*parsed, {}};
  Operation *op = parsed->op;
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  RnnProblem &p = setup.problem;
  p.backward = isa<RnnBackwardOp>(op);
  RnnFunction function = p.backward ? cast<RnnBackwardOp>(op).getFunction()
                                    : cast<RnnOp>(op).getFunction();
  p.function = functionKind(function);
  p.batch = input.getDimSize(0);
  p.steps = input.getDimSize(1);
  p.heads = input.getDimSize(3);
  p.units = input.getDimSize(4);
  Type elementType = input.getElementType();
  p.kind = elementType.isBF16()  ? layout::kBf16
           : elementType.isF16() ? layout::kF16
           : options.allowTf32   ? layout::kTf32
                                 : layout::kTf32x3;
  if (p.backward) {
    for (int i : {5, 6})
      if (parsed->inputs[i].splat && *parsed->inputs[i].splat != 0.0)
        return op->emitError("a splat gradient other than zero in ")
               << op->getName() << " is not supported on the GPU";
  }
  if (p.batch * p.steps * p.heads * p.units == 0)
    return op->emitError("an empty recurrence has no GPU kernel");
  return setup;
}

class RnnEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    return fusion.getKind() == "rnn" && succeeded(RnnFusion::get(fusion));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<RnnSetup> setup = setUp(fusion, options);
    if (failed(setup))
      return failure();
    const RnnFusion &f = setup->fusion;
    Operation *op = f.op;
    Emission e;
    e.problem = setup->problem;
    const RnnProblem &p = e.problem;
    FailureOr<RnnPlan> plan = rnnPlanOf(fusion, op, p, options);
    if (failed(plan))
      return failure();
    e.plan = *plan;
    e.smCount = int(options.target().smCount);
    e.type = cudaType(
        cast<RankedTensorType>(op->getOperand(0).getType()).getElementType());
    e.ptr = e.type + " *__restrict__";
    e.cptr = "const " + e.type + " *__restrict__";
    const bool dStates = p.backward && !f.inputs[5].splat;
    const bool dLast = p.backward && !f.inputs[6].splat;
    e.config =
        llvm::formatv("kiln::rnn::rnn_config<{0}, {1}, {2}, {3}LL, {4}LL, {5}, "
                      "{6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}>",
                      p.function, e.type, p.kind, p.batch, p.steps, p.heads,
                      p.units, e.plan.batchTile, e.plan.unitsPerBlock,
                      e.plan.blocksPerGroup, e.plan.splits, e.plan.sync,
                      f.inputs[3].splat ? "true" : "false",
                      dStates ? "true" : "false", dLast ? "true" : "false")
            .str();
    FusionBuilder builder("// kiln rnn fusion of\n" + describeOp(op));
    if (p.backward)
      emitBackward(e, f, builder);
    else
      emitForward(e, f, builder);
    return builder.take();
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<RnnSetup> setup = setUp(fusion, options);
    if (failed(setup))
      return failure();
    FailureOr<RnnPlan> plan =
        selectRnn(setup->fusion.op, setup->problem, options);
    if (failed(plan))
      return failure();
    return Attribute(rnnKernelAttr(fusion.getContext(), *plan));
  }

  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &options) const override {
    FailureOr<RnnSetup> setup = setUp(fusion, options);
    return failure(failed(setup) || failed(rnnPlanOf(fusion, setup->fusion.op,
                                                     setup->problem, options)));
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createRnnEmitter() {
  return std::make_unique<RnnEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Rnn,
                                              createRnnEmitter);

} // namespace mlir::kiln::codegen
