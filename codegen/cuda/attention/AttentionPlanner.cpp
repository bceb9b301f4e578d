//===- AttentionPlanner.cpp - attention problems to kernel specs ----------===//

#include "codegen/cuda/attention/AttentionPlanner.h"

#include "kiln/attention_layout.cuh"
#include "kiln/attention_wgmma_layout.cuh"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::attention;

int64_t padded(int64_t d) { return layout::pad16(d); }

/// The strided<> layout of every tensor of `p` that a kernel uses, as
/// `<name>_layout` typedefs of a configuration struct.
void renderLayouts(llvm::raw_ostream &os, const AttentionProblem &p) {
  os << "  // Where each [B, H, T, D] tensor lies: heads, batch, head and row "
        "strides.\n";
  auto tensor = [&](llvm::StringRef name, const AttentionTensor &t) {
    os << "  typedef kiln::attention::strided<idx_t, " << t.heads << ", "
       << t.batchStride << ", " << t.headStride << ", " << t.rowStride << "> "
       << name << "_layout;\n";
  };
  static const char *const forwardOperands[] = {"q", "k", "v"};
  static const char *const backwardOperands[] = {"q", "k", "v", "out", "d_out"};
  static const char *const forwardResults[] = {"out"};
  static const char *const backwardResults[] = {"d_query", "d_key", "d_value"};
  for (auto [i, t] : llvm::enumerate(p.operands))
    tensor(p.backward ? backwardOperands[i] : forwardOperands[i], t);
  for (auto [i, t] : llvm::enumerate(p.results))
    if (t)
      tensor(p.backward ? backwardResults[i] : forwardResults[i], *t);
}

/// The members every configuration starts with: types, sizes, mask, scale.
void renderCommon(llvm::raw_ostream &os, const AttentionProblem &p) {
  os << "  typedef " << p.elem << " elem_t;\n"
     << "  typedef " << (p.wideIndex ? "long long" : "int") << " idx_t;\n"
     << "  static constexpr int tq = " << p.tq << ", tk = " << p.tk
     << ", d = " << p.d << ", dv = " << p.dv << ";\n"
     << "  static constexpr bool causal = " << (p.causal ? "true" : "false")
     << ";\n"
     << "  static constexpr float scale = " << floatLiteral(p.scale) << ";\n"
     << "  static constexpr float qscale = "
     << floatLiteral(p.scale * 1.4426950408889634) << "; // scale * log2(e)\n";
}

/// The configuration struct every SIMT kernel of `p` is instantiated with.
std::string renderConfig(const AttentionProblem &p, int64_t tile) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "struct config {\n";
  renderCommon(os, p);
  os << "  static constexpr int tile = " << tile << ";\n";
  renderLayouts(os, p);
  if (p.backward)
    os << "  // The forward's row log-sum-exp is given: no statistics sweep.\n"
       << "  static constexpr bool has_row_lse = "
       << (p.rowLse ? "true" : "false") << ";\n"
       << "  static constexpr bool has_dq = "
       << (p.results[0] ? "true" : "false")
       << ", has_dk = " << (p.results[1] ? "true" : "false")
       << ", has_dv = " << (p.results[2] ? "true" : "false") << ";\n";
  os << "};\n";
  return text;
}

/// One line of --stats.
std::string describeConfig(const AttentionProblem &p, int64_t tile,
                           int64_t shared) {
  return llvm::formatv("{0} tile {1}x{1} tq {2} tk {3} d {4}/{5} (padded "
                       "{6}/{7}){8}, 256 threads, {9} B shared",
                       p.elem, tile, p.tq, p.tk, p.d, p.dv, padded(p.d),
                       padded(p.dv), p.causal ? " causal" : "", shared)
      .str();
}

KernelSpec baseSpec(const AttentionProblem &p, int64_t tile,
                    llvm::StringRef kernel, int64_t tiles, int64_t shared) {
  KernelSpec spec;
  spec.prefix = ("kiln_" + kernel).str();
  spec.templateName = kernel.str();
  spec.templates = {p.backward ? "kiln/attention_bwd.cuh"
                               : "kiln/attention_fwd.cuh"};
  spec.configuration = describeConfig(p, tile, shared);
  spec.functors = renderConfig(p, tile);
  spec.grid = {uint32_t(tiles * p.batchHeads), 1, 1};
  spec.block = {layout::kThreads, 1, 1};
  spec.dynamicSharedBytes = uint32_t(shared);
  return spec;
}

/// The forward's row log-sum-exp parameter, or a null pointer where no
/// fusion result takes it.
std::string rowLseOut(KernelSpec &spec, const AttentionProblem &p) {
  if (!p.rowLse)
    return "nullptr";
  spec.addParam("float *__restrict__", "lse_out", *p.rowLse);
  return "lse_out";
}

} // namespace

int64_t attentionForwardSharedBytes(const AttentionProblem &p, int64_t tile) {
  return layout::forward_smem(tile, padded(p.d), padded(p.dv)).bytes();
}
int64_t attentionBackwardDqSharedBytes(const AttentionProblem &p,
                                       int64_t tile) {
  return layout::backward_dq_smem(tile, padded(p.d), padded(p.dv)).bytes();
}
int64_t attentionBackwardDkDvSharedBytes(const AttentionProblem &p,
                                         int64_t tile) {
  return layout::backward_dkdv_smem(tile, padded(p.d), padded(p.dv)).bytes();
}

int64_t attentionSharedBytes(const AttentionProblem &p, int64_t tile) {
  return p.backward ? std::max(attentionBackwardDqSharedBytes(p, tile),
                               attentionBackwardDkDvSharedBytes(p, tile))
                    : attentionForwardSharedBytes(p, tile);
}

FailureOr<int64_t> chooseAttentionTile(const AttentionProblem &p,
                                       const GpuTarget &target) {
  int64_t longest = padded(std::max(p.tq, p.tk));
  for (int64_t tile : kAttentionTiles) {
    if (tile > longest && tile != 16)
      continue;
    if (attentionSharedBytes(p, tile) <= int64_t(target.sharedBytesPerBlock))
      return tile;
  }
  return failure();
}

void planAttention(const AttentionProblem &p, int64_t tile,
                   FusionBuilder &builder) {
  int64_t qTiles = ceilDiv(p.tq, tile), kTiles = ceilDiv(p.tk, tile);
  std::string elem = p.elem;
  auto in = [&](KernelSpec &spec, unsigned i, llvm::StringRef name) {
    spec.addParam("const " + elem + " *__restrict__", name.str(),
                  p.operands[i].arg);
  };
  // A result no fusion result takes is passed as a null pointer.
  auto out = [&](KernelSpec &spec, unsigned i, llvm::StringRef name) {
    if (!p.results[i])
      return std::string("nullptr");
    spec.addParam(elem + " *__restrict__", name.str(), p.results[i]->arg);
    return name.str();
  };

  if (!p.backward) {
    KernelSpec spec = baseSpec(p, tile, "attention_fwd", qTiles,
                               attentionForwardSharedBytes(p, tile));
    in(spec, 0, "q");
    in(spec, 1, "k");
    in(spec, 2, "v");
    std::string result = out(spec, 0, "out");
    spec.body = "  kiln::attention::forward<config>(ctx, q, k, v, " + result +
                ", " + rowLseOut(spec, p) + ");\n";
    builder.kernel(std::move(spec));
    return;
  }

  uint64_t rows = p.batchHeads * p.tq * 4;
  uint64_t lse = builder.scratch(rows), delta = builder.scratch(rows);
  KernelSpec query = baseSpec(p, tile, "attention_bwd_dq", qTiles,
                              attentionBackwardDqSharedBytes(p, tile));
  in(query, 0, "q");
  in(query, 1, "k");
  in(query, 2, "v");
  in(query, 3, "out");
  in(query, 4, "d_out");
  query.addParam("float *__restrict__", "row_lse", LaunchArg::scratch(lse));
  query.addParam("float *__restrict__", "row_delta", LaunchArg::scratch(delta));
  query.body = "  kiln::attention::backward_dq<config>(ctx, q, k, v, out, "
               "d_out, row_lse, row_delta, " +
               out(query, 0, "d_query") + ");\n";
  builder.kernel(std::move(query));

  if ((!p.results[1] && !p.results[2]) || kTiles == 0)
    return;
  KernelSpec key = baseSpec(p, tile, "attention_bwd_dkdv", kTiles,
                            attentionBackwardDkDvSharedBytes(p, tile));
  in(key, 0, "q");
  in(key, 1, "k");
  in(key, 2, "v");
  in(key, 4, "d_out");
  key.addParam("const float *__restrict__", "row_lse", LaunchArg::scratch(lse));
  key.addParam("const float *__restrict__", "row_delta",
               LaunchArg::scratch(delta));
  std::string dk = out(key, 1, "d_key"), dv = out(key, 2, "d_value");
  key.body = "  kiln::attention::backward_dkdv<config>(ctx, q, k, v, d_out, "
             "row_lse, row_delta, " +
             dk + ", " + dv + ");\n";
  builder.kernel(std::move(key));
}

namespace {

/// Element bytes of the storage types the Hopper kernels take.
constexpr int64_t kWgmmaElementBytes = 2;

/// Whether TMA can copy `t` (rows of `dim` elements): every stride a whole
/// number of 16-byte units.
bool tmaCopyable(const AttentionTensor &t) {
  auto whole = [](int64_t stride) {
    return stride > 0 && (stride * kWgmmaElementBytes) % 16 == 0 &&
           stride * kWgmmaElementBytes < (int64_t(1) << 40);
  };
  return whole(t.rowStride) && whole(t.headStride) && whole(t.batchStride);
}

/// The tensor map over `t` ([batchHeads / heads][heads][rows][dim]) with
/// boxes of `boxRows` rows of one 64-element panel.
TensorMapLayout panelMap(const AttentionProblem &p, const AttentionTensor &t,
                         int64_t rows, int64_t dim, int64_t boxRows) {
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  TensorMapLayout map;
  map.dims = {u(dim), u(rows), u(t.heads), u(p.batchHeads / t.heads)};
  map.strides = {u(t.rowStride * kWgmmaElementBytes),
                 u(t.headStride * kWgmmaElementBytes),
                 u(t.batchStride * kWgmmaElementBytes)};
  map.box = {static_cast<uint32_t>(layout::kPanel),
             static_cast<uint32_t>(boxRows), 1, 1};
  map.elementStrides = {1, 1, 1, 1};
  map.swizzleBytes = 128;
  return map;
}

/// The most stages (2 to 4) of `kernel` whose shared memory fits `target`,
/// trying each of `fixedRows` in turn; none when nothing fits.
template <class Bytes>
std::optional<AttentionWgmmaKernel>
fitStages(const GpuTarget &target, llvm::ArrayRef<int64_t> fixedRows,
          int64_t streamedRows, Bytes bytes) {
  for (int64_t fixed : fixedRows)
    for (int64_t stages = 4; stages >= 2; --stages) {
      AttentionWgmmaKernel kernel{fixed, streamedRows, stages};
      if (bytes(kernel) <= int64_t(target.sharedBytesPerBlock))
        return kernel;
    }
  return std::nullopt;
}

/// The configuration struct of one Hopper kernel.
std::string renderWgmmaConfig(const AttentionProblem &p,
                              const AttentionWgmmaKernel &k, bool hasDk,
                              bool hasDv, int64_t statsRows,
                              int64_t dqStride = 0, bool pingpong = false) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "struct config {\n";
  renderCommon(os, p);
  os << "  static constexpr int kind = " << (p.elem == "__half" ? 1 : 0)
     << "; // 0 bf16, 1 f16\n"
     << "  static constexpr int bm = " << k.fixedRows
     << ", bn = " << k.streamedRows << ", stages = " << k.stages << ";\n"
     << "  static constexpr int batch_heads = " << p.batchHeads
     << ", stats_rows = " << statsRows << ";\n";
  if (!p.backward)
    os << "  // The consumer warpgroups take turns issuing their products.\n"
       << "  static constexpr bool pingpong = " << (pingpong ? "true" : "false")
       << ";\n";
  if (dqStride > 0)
    os << "  // f32 elements per row of the dQ accumulator.\n"
       << "  static constexpr int dq_stride = " << dqStride << ";\n";
  if (p.backward)
    os << "  // The forward's row log-sum-exp is given: no statistics sweep.\n"
       << "  static constexpr bool has_row_lse = "
       << (p.rowLse ? "true" : "false") << ";\n"
       << "  static constexpr bool has_dq = "
       << (p.results[0] ? "true" : "false")
       << ", has_dk = " << (hasDk ? "true" : "false")
       << ", has_dv = " << (hasDv ? "true" : "false") << ";\n";
  renderLayouts(os, p);
  os << "};\n";
  return text;
}

} // namespace

int64_t attentionWgmmaForwardBytes(const AttentionProblem &p,
                                   const AttentionWgmmaKernel &k) {
  return layout::wgmma_forward_smem(k.fixedRows, k.streamedRows, p.d, p.dv,
                                    k.stages)
      .bytes();
}
int64_t attentionWgmmaBackwardBytes(const AttentionProblem &p,
                                    const AttentionWgmmaKernel &k,
                                    bool rowStats) {
  return layout::wgmma_backward_smem(k.fixedRows, k.streamedRows, p.d, p.dv,
                                     k.stages, rowStats)
      .bytes();
}
int64_t attentionWgmmaFusedBackwardBytes(const AttentionProblem &p,
                                         const AttentionWgmmaKernel &k) {
  return layout::wgmma_fused_backward_smem(k.fixedRows, k.streamedRows, p.d,
                                           p.dv, k.stages)
      .bytes();
}

std::string attentionWgmmaMismatch(const AttentionProblem &p, bool allowed) {
  if (!allowed)
    return "the tensor-core attention kernels need sm_90 with TMA";
  if (p.elem != "__nv_bfloat16" && p.elem != "__half")
    return "the tensor-core attention kernels take bf16/f16";
  if (p.d > layout::kMaxWgmmaHeadDim || p.dv > layout::kMaxWgmmaHeadDim ||
      p.d % 8 != 0 || p.dv % 8 != 0)
    return "the tensor-core attention kernels take head dims of at most " +
           std::to_string(layout::kMaxWgmmaHeadDim) + " in 16-byte runs";
  if (p.tk == 0 || p.tq >= (int64_t(1) << 31) || p.tk >= (int64_t(1) << 31))
    return "the tensor-core attention kernels take 1 to 2^31 - 1 keys and "
           "fewer than 2^31 queries";
  // TMA copies the operands; the kernels store the results two elements at
  // a time.
  for (const AttentionTensor &t : p.operands)
    if (!tmaCopyable(t) || p.batchHeads % t.heads != 0)
      return "the tensor-core attention kernels copy operands whose strides "
             "are whole 16-byte units by TMA";
  for (const std::optional<AttentionTensor> &t : p.results)
    if (t && !tmaCopyable(*t))
      return "the tensor-core attention kernels write results whose strides "
             "are whole 16-byte units";
  return "";
}

bool attentionFusedBackwardFits(const AttentionProblem &p) {
  bool everyGradient = llvm::all_of(
      p.results, [](const std::optional<AttentionTensor> &t) { return t; });
  return p.backward && p.rowLse && everyGradient &&
         layout::pad_panel(p.d) <= 128 && layout::pad_panel(p.dv) <= 128;
}

bool attentionNeedsSeparateDkDv(const AttentionProblem &p) {
  return (layout::pad_panel(p.d) + layout::pad_panel(p.dv)) / layout::kPanel >
         4;
}

std::optional<AttentionWgmmaPlan>
chooseAttentionWgmma(const AttentionProblem &p, const GpuTarget &target,
                     bool allowed, bool persistent, bool fused,
                     AttentionSchedule schedule) {
  if (!attentionWgmmaMismatch(p, allowed).empty())
    return std::nullopt;

  AttentionWgmmaPlan plan;
  plan.maxBlocks = persistent ? std::max<int64_t>(1, target.smCount) : 0;
  int64_t dp = layout::pad_panel(p.d);
  if (!p.backward) {
    std::optional<AttentionWgmmaKernel> forward =
        fitStages(target, {128}, dp <= 128 ? 128 : 64,
                  [&](const AttentionWgmmaKernel &k) {
                    return attentionWgmmaForwardBytes(p, k);
                  });
    if (!forward)
      return std::nullopt;
    plan.forward = *forward;
    bool turns = schedule == AttentionSchedule::PingPong ||
                 (schedule == AttentionSchedule::Auto && p.causal);
    plan.pingpong = turns && forward->fixedRows / layout::kWarpgroupRows == 2;
    return plan;
  }
  std::optional<AttentionWgmmaKernel> dq =
      fitStages(target, {128, 64}, 64, [&](const AttentionWgmmaKernel &k) {
        return attentionWgmmaBackwardBytes(p, k, false);
      });
  std::optional<AttentionWgmmaKernel> dkdv =
      fitStages(target, {128, 64}, 64, [&](const AttentionWgmmaKernel &k) {
        return attentionWgmmaBackwardBytes(p, k, true);
      });
  if (!dq || !dkdv)
    return std::nullopt;
  plan.dq = *dq;
  plan.dkdv = *dkdv;
  plan.separateDkDv = attentionNeedsSeparateDkDv(p);
  if (fused && attentionFusedBackwardFits(p))
    if (std::optional<AttentionWgmmaKernel> onePass = fitStages(
            target, {128}, layout::kPanel, [&](const AttentionWgmmaKernel &k) {
              return attentionWgmmaFusedBackwardBytes(p, k);
            })) {
      plan.fused = true;
      plan.dkdv = *onePass;
    }
  return plan;
}

namespace {

/// The kernel specs of one problem's Hopper plan.
class WgmmaSpecs {
public:
  WgmmaSpecs(const AttentionProblem &p, const AttentionWgmmaPlan &plan)
      : p(p), plan(plan) {}

  /// A warp-specialised kernel `kernel` of template file `file` over
  /// `tiles` work items per batch * head, in the units of work_order: a
  /// block per unit, or persistent, at most one per SM.
  KernelSpec kernel(llvm::StringRef kernel, llvm::StringRef file,
                    const AttentionWgmmaKernel &k, int64_t tiles,
                    int64_t shared, std::string config) const {
    KernelSpec s;
    s.prefix = ("kiln_" + kernel).str();
    s.templateName = kernel.str();
    s.templates = {file.str()};
    s.configuration =
        llvm::formatv("{0} tensor cores: {1} rows kept, {2} streamed by TMA "
                      "in {3} stages{11}; tq {4} tk {5} d {6}/{7}{8}, {9} "
                      "threads, {10} B shared",
                      p.elem, k.fixedRows, k.streamedRows, k.stages, p.tq, p.tk,
                      p.d, p.dv, p.causal ? " causal" : "", k.threads(), shared,
                      plan.pingpong && !p.backward ? ", consumers take turns"
                                                   : "")
            .str();
    s.functors = std::move(config);
    int64_t units =
        layout::work_order{p.batchHeads, int(tiles), p.causal}.units();
    s.grid = {uint32_t(plan.maxBlocks > 0 ? std::min(units, plan.maxBlocks)
                                          : units),
              1, 1};
    // Persistent blocks take the units in turn (work_walk): a device with
    // fewer SMs than the target may run fewer of them.
    s.persistentBlocksPerSm = plan.maxBlocks > 0 ? 1 : 0;
    s.block = {uint32_t(k.threads()), 1, 1};
    s.minBlocksPerSm = 1;
    s.dynamicSharedBytes = uint32_t(shared);
    s.archSpecific = true;
    s.mergeable = false;
    return s;
  }

  /// The map of operand i ([B, H, rows, dim]) in boxes of boxRows rows.
  void map(KernelSpec &s, unsigned i, llvm::StringRef name, int64_t rows,
           int64_t dim, int64_t boxRows) const {
    const AttentionTensor &t = p.operands[i];
    s.addParam(
        kTensorMapParamType.str(), name.str(),
        LaunchArg::tensorMapOf(t.arg, panelMap(p, t, rows, dim, boxRows)));
  }

  /// Operand i as a pointer parameter.
  void in(KernelSpec &s, unsigned i, llvm::StringRef name) const {
    s.addParam("const " + p.elem + " *__restrict__", name.str(),
               p.operands[i].arg);
  }

  /// Result i as a pointer parameter; a null pointer where no fusion result
  /// takes it.
  std::string out(KernelSpec &s, unsigned i, llvm::StringRef name) const {
    if (!p.results[i])
      return std::string("nullptr");
    s.addParam(p.elem + " *__restrict__", name.str(), p.results[i]->arg);
    return name.str();
  }

private:
  const AttentionProblem &p;
  const AttentionWgmmaPlan &plan;
};

/// A kernel of kernels/attention_dq_accum.cuh with a warp per query row,
/// `rows` rows.
KernelSpec rowKernel(const AttentionProblem &p, llvm::StringRef kernel,
                     int64_t rows, std::string config) {
  constexpr int64_t kRowsPerBlock = 8;
  KernelSpec s;
  s.prefix = ("kiln_" + kernel).str();
  s.templateName = kernel.str();
  s.templates = {"kiln/attention_dq_accum.cuh"};
  s.configuration = llvm::formatv("{0} rows of {1}/{2}, a warp each, {3} "
                                  "per block",
                                  rows, p.d, p.dv, kRowsPerBlock)
                        .str();
  s.functors = std::move(config);
  s.grid = {uint32_t(ceilDiv(rows, kRowsPerBlock)), 1, 1};
  s.block = {uint32_t(32 * kRowsPerBlock), 1, 1};
  return s;
}

/// The one-pass backward: rows prepared (delta, log2-domain log-sum-exp, a
/// zeroed dQ accumulator), every gradient over the key tiles, dQ converted.
void planFusedBackward(const AttentionProblem &p,
                       const AttentionWgmmaPlan &plan,
                       FusionBuilder &builder) {
  const WgmmaSpecs specs(p, plan);
  const AttentionWgmmaKernel &k = plan.dkdv;
  int64_t statsRows = layout::stats_rows(p.tq, k.streamedRows);
  int64_t dqStride = layout::dq_accum_stride(p.d);
  uint64_t rows = p.batchHeads * statsRows * 4;
  uint64_t lse = builder.scratch(rows), delta = builder.scratch(rows);
  uint64_t accum = builder.scratch(rows * dqStride);
  std::string config = renderWgmmaConfig(p, k, true, true, statsRows, dqStride);

  KernelSpec prep =
      rowKernel(p, "attention_bwd_prep", p.batchHeads * statsRows, config);
  specs.in(prep, 3, "out");
  specs.in(prep, 4, "d_out");
  prep.addParam("const float *__restrict__", "given_lse", *p.rowLse);
  prep.addParam("float *__restrict__", "row_lse", LaunchArg::scratch(lse));
  prep.addParam("float *__restrict__", "row_delta", LaunchArg::scratch(delta));
  prep.addParam("float *__restrict__", "dq_accum", LaunchArg::scratch(accum));
  prep.body = "  kiln::attention::backward_prep<config>(ctx, out, d_out, "
              "given_lse, row_lse, row_delta, dq_accum);\n";
  builder.kernel(std::move(prep));

  KernelSpec all = specs.kernel("attention_wgmma_bwd_fused",
                                "kiln/attention_wgmma_bwd_fused.cuh", k,
                                ceilDiv(p.tk, k.fixedRows),
                                attentionWgmmaFusedBackwardBytes(p, k), config);
  specs.map(all, 0, "q_map", p.tq, p.d, k.streamedRows);
  specs.map(all, 1, "k_map", p.tk, p.d, k.fixedRows);
  specs.map(all, 2, "v_map", p.tk, p.dv, k.fixedRows);
  specs.map(all, 4, "d_out_map", p.tq, p.dv, k.streamedRows);
  all.addParam("const float *__restrict__", "row_lse", LaunchArg::scratch(lse));
  all.addParam("const float *__restrict__", "row_delta",
               LaunchArg::scratch(delta));
  all.addParam("float *__restrict__", "dq_accum", LaunchArg::scratch(accum));
  std::string dk = specs.out(all, 1, "d_key"), dv = specs.out(all, 2, "d_value");
  all.body = "  kiln::attention::backward_fused_wgmma<config>(ctx, q_map, "
             "k_map, v_map, d_out_map, row_lse, row_delta, dq_accum, " +
             dk + ", " + dv + ");\n";
  builder.kernel(std::move(all));

  KernelSpec finish =
      rowKernel(p, "attention_bwd_dq_finish", p.batchHeads * p.tq, config);
  finish.addParam("const float *__restrict__", "dq_accum",
                  LaunchArg::scratch(accum));
  finish.body = "  kiln::attention::backward_dq_finish<config>(ctx, "
                "dq_accum, " +
                specs.out(finish, 0, "d_query") + ");\n";
  builder.kernel(std::move(finish));
}

} // namespace

void planAttentionWgmma(const AttentionProblem &p,
                        const AttentionWgmmaPlan &plan,
                        FusionBuilder &builder) {
  const WgmmaSpecs specs(p, plan);
  auto spec = [&](llvm::StringRef kernel, const AttentionWgmmaKernel &k,
                  int64_t tiles, int64_t shared, std::string config) {
    return specs.kernel(kernel,
                        p.backward ? "kiln/attention_wgmma_bwd.cuh"
                                   : "kiln/attention_wgmma_fwd.cuh",
                        k, tiles, shared, std::move(config));
  };

  if (!p.backward) {
    const AttentionWgmmaKernel &k = plan.forward;
    KernelSpec s =
        spec("attention_wgmma_fwd", k, ceilDiv(p.tq, k.fixedRows),
             attentionWgmmaForwardBytes(p, k),
             renderWgmmaConfig(p, k, false, false, 0, 0, plan.pingpong));
    specs.map(s, 0, "q_map", p.tq, p.d, k.fixedRows);
    specs.map(s, 1, "k_map", p.tk, p.d, k.streamedRows);
    specs.map(s, 2, "v_map", p.tk, p.dv, k.streamedRows);
    std::string result = specs.out(s, 0, "out");
    s.body = "  kiln::attention::forward_wgmma<config>(ctx, q_map, k_map, "
             "v_map, " +
             result + ", " + rowLseOut(s, p) + ");\n";
    builder.kernel(std::move(s));
    return;
  }

  if (plan.fused) {
    planFusedBackward(p, plan, builder);
    return;
  }
  int64_t statsRows = layout::stats_rows(p.tq, plan.dq.fixedRows);
  uint64_t rows = p.batchHeads * statsRows * 4;
  uint64_t lse = builder.scratch(rows), delta = builder.scratch(rows);
  const AttentionWgmmaKernel &dq = plan.dq;
  KernelSpec query =
      spec("attention_wgmma_bwd_dq", dq, ceilDiv(p.tq, dq.fixedRows),
           attentionWgmmaBackwardBytes(p, dq, false),
           renderWgmmaConfig(p, dq, false, false, statsRows));
  specs.map(query, 0, "q_map", p.tq, p.d, dq.fixedRows);
  specs.map(query, 1, "k_map", p.tk, p.d, dq.streamedRows);
  specs.map(query, 2, "v_map", p.tk, p.dv, dq.streamedRows);
  specs.map(query, 4, "d_out_map", p.tq, p.dv, dq.fixedRows);
  specs.in(query, 3, "out");
  specs.in(query, 4, "d_out");
  query.addParam("float *__restrict__", "row_lse", LaunchArg::scratch(lse));
  query.addParam("float *__restrict__", "row_delta", LaunchArg::scratch(delta));
  std::string given = "nullptr";
  if (p.rowLse) {
    query.addParam("const float *__restrict__", "given_lse", *p.rowLse);
    given = "given_lse";
  }
  std::string dQuery = specs.out(query, 0, "d_query");
  query.body = "  kiln::attention::backward_dq_wgmma<config>(ctx, q_map, "
               "k_map, v_map, d_out_map, out, d_out, " +
               given + ", row_lse, row_delta, " + dQuery + ");\n";
  builder.kernel(std::move(query));

  const AttentionWgmmaKernel &kv = plan.dkdv;
  auto keyKernel = [&](bool hasDk, bool hasDv) {
    KernelSpec key = spec(hasDk && hasDv ? "attention_wgmma_bwd_dkdv"
                          : hasDk        ? "attention_wgmma_bwd_dk"
                                         : "attention_wgmma_bwd_dv",
                          kv, ceilDiv(p.tk, kv.fixedRows),
                          attentionWgmmaBackwardBytes(p, kv, true),
                          renderWgmmaConfig(p, kv, hasDk, hasDv, statsRows));
    specs.map(key, 0, "q_map", p.tq, p.d, kv.streamedRows);
    specs.map(key, 1, "k_map", p.tk, p.d, kv.fixedRows);
    specs.map(key, 2, "v_map", p.tk, p.dv, kv.fixedRows);
    specs.map(key, 4, "d_out_map", p.tq, p.dv, kv.streamedRows);
    key.addParam("const float *__restrict__", "row_lse",
                 LaunchArg::scratch(lse));
    key.addParam("const float *__restrict__", "row_delta",
                 LaunchArg::scratch(delta));
    std::string dk = hasDk ? specs.out(key, 1, "d_key") : "nullptr";
    std::string dv = hasDv ? specs.out(key, 2, "d_value") : "nullptr";
    key.body = "  kiln::attention::backward_dkdv_wgmma<config>(ctx, q_map, "
               "k_map, v_map, d_out_map, row_lse, row_delta, " +
               dk + ", " + dv + ");\n";
    builder.kernel(std::move(key));
  };
  bool hasDk = p.results[1].has_value(), hasDv = p.results[2].has_value();
  if (!hasDk && !hasDv)
    return;
  if (plan.separateDkDv && hasDk && hasDv) {
    keyKernel(true, false);
    keyKernel(false, true);
  } else {
    keyKernel(hasDk, hasDv);
  }
}

} // namespace mlir::kiln::codegen
