//===- AttentionPlanner.cpp - attention problems to kernel specs ----------===//

#include "codegen/cuda/AttentionPlanner.h"

#include "kiln/attention_layout.cuh"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::attention;

int64_t padded(int64_t d) { return layout::pad16(d); }

/// The configuration struct every kernel of `p` is instantiated with.
std::string renderConfig(const AttentionProblem &p, int64_t tile) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "struct config {\n"
     << "  typedef " << p.elem << " elem_t;\n"
     << "  typedef " << (p.wideIndex ? "long long" : "int") << " idx_t;\n"
     << "  static constexpr int tq = " << p.tq << ", tk = " << p.tk
     << ", d = " << p.d << ", dv = " << p.dv << ";\n"
     << "  static constexpr int tile = " << tile << ";\n"
     << "  static constexpr bool causal = " << (p.causal ? "true" : "false")
     << ";\n"
     << "  static constexpr float scale = " << floatLiteral(p.scale) << ";\n"
     << "  static constexpr float qscale = "
     << floatLiteral(p.scale * 1.4426950408889634) << "; // scale * log2(e)\n"
     << "  // Where each [B, H, T, D] tensor lies: heads, batch, head and row "
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
  if (p.backward)
    os << "  static constexpr bool has_dq = "
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

FailureOr<int64_t> chooseAttentionTile(const AttentionProblem &p,
                                       const GpuTarget &target) {
  int64_t longest = padded(std::max(p.tq, p.tk));
  for (int64_t tile : kAttentionTiles) {
    if (tile > longest && tile != 16)
      continue;
    int64_t need = p.backward
                       ? std::max(attentionBackwardDqSharedBytes(p, tile),
                                  attentionBackwardDkDvSharedBytes(p, tile))
                       : attentionForwardSharedBytes(p, tile);
    if (need <= int64_t(target.sharedBytesPerBlock))
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
    out(spec, 0, "out");
    spec.body = "  kiln::attention::forward<config>(ctx, q, k, v, out);\n";
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

} // namespace mlir::kiln::codegen
