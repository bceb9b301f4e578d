//===- RnnTemplateInstances.cpp - recurrent kernels to check --------------===//
//
// The kernels of kiln.rnn and kiln.rnn_backward as the planner configures
// them for sm_90 and sm_80, over shapes that reach each of its choices:
// heads owned by one block, by a cluster and by a cooperative grid group,
// split reductions, batch tiles of several m-tiles, splat and stored
// initial states, the gradient of every state or of the last ones only, in
// bf16, f16 and f32 (tf32 in three products), for all four functions.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/KernelEmitter.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::kiln::codegen {
namespace {

struct Shape {
  const char *label, *function;
  int64_t b, t, nh, d;
  const char *type;
  bool splat0, allStates;
};

const Shape kShapes[] = {
    {"lstm_12x64_bf16", "lstm", 16, 1024, 12, 64, "bf16", true, true},
    {"lstm_1x768_bf16", "lstm", 16, 1024, 1, 768, "bf16", true, true},
    {"lstm_1x256_bf16", "lstm", 16, 256, 1, 256, "bf16", false, false},
    {"lstm_2x48_b40_f16", "lstm", 40, 32, 2, 48, "f16", false, true},
    {"lstm_2x64_f32", "lstm", 5, 100, 2, 64, "f32", false, true},
    {"gru_1x128_f32", "gru", 3, 64, 1, 128, "f32", false, true},
    {"elman_4x16_f32", "elman", 7, 100, 4, 16, "f32", true, false},
    {"slstm_12x64_bf16", "slstm", 16, 1024, 12, 64, "bf16", true, true},
    {"slstm_1x512_f16", "slstm", 8, 64, 1, 512, "f16", false, true},
};

std::string tensor(std::initializer_list<int64_t> shape, const char *type) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + type + ">";
}

/// A function of one kiln.rnn and one kiln.rnn_backward of `c`, which
/// --kiln-fuse turns into the two rnn fusions.
std::string functionSource(const Shape &c) {
  const std::string f = c.function;
  const int64_t gw = f == "elman" ? 1 : f == "gru" ? 3 : 4;
  const int64_t gb = f == "elman" ? 1 : 4;
  const int64_t s = f == "lstm" ? 2 : f == "slstm" ? 4 : 1;
  std::string wx = tensor({c.b, c.t, gw, c.nh, c.d}, c.type);
  std::string r = tensor({gw, c.nh, c.d, c.d}, c.type);
  std::string bias = tensor({gb, c.nh, c.d}, c.type);
  std::string st = tensor({s, c.b, c.nh, c.d}, c.type);
  std::string all = tensor({s, c.b, c.t, c.nh, c.d}, c.type);
  std::string s0 = c.splat0 ? "%z" : "%s0";
  std::string dAll = c.allStates ? "%dall" : "%zall";
  return llvm::formatv(
      R"mlir(func.func @f(%wx: {0}, %r: {1}, %b: {2}, %s0: {3}, %dall: {4}, %dlast: {3})
    -> ({4}, {3}, {0}, {1}, {2}, {3}) {{
  %z = kiln.constant dense<0.0> : {3}
  %zall = kiln.constant dense<0.0> : {4}
  %all, %last = kiln.rnn %wx, %r, %b, {5} function = {6} : {0}, {1}, {2}, {3}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, {5}, %all, {7}, %dlast function = {6} : {0}, {1}, {2}, {3}, {4}
  return %all, %last, %dwx, %dr, %db, %ds0 : {4}, {3}, {0}, {1}, {2}, {3}
}
)mlir",
      wx, r, bias, st, all, s0, f, dAll);
}

std::vector<InstanceCase> cases() {
  std::vector<InstanceCase> all;
  for (const Shape &shape : kShapes)
    all.push_back({shape.label, functionSource(shape), /*fuse=*/true});
  return all;
}

} // namespace

std::vector<TemplateInstance> rnnTemplateInstances() {
  std::unique_ptr<KernelEmitter> emitter = createRnnEmitter();
  return emitTemplateInstances("rnn", "rnn", *emitter, cases());
}

} // namespace mlir::kiln::codegen
