//===- EmbeddingTemplateInstances.cpp - embedding gradient kernels to check ===//
//
// The kernels of kiln.embedding_backward, rendered by the embedding emitter
// for sm_90 and sm_80, over shapes that reach each choice the planner
// makes: one, two and three radix passes (the pass is a template argument),
// 4 and 16 lookups per sort thread, 16-byte, narrower and element-wise
// steps, row groups from 1 to 256 threads with the sums in registers or
// the run walked per step, no lookups, in f32, bf16 and f16.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/KernelEmitter.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::kiln::codegen {
namespace {

struct Shape {
  const char *label;
  const char *indices; // the shape of the indices, "" for rank 0
  int64_t rows, width;
  const char *type;
};

// label, indices, V, D, element type.
const Shape kShapes[] = {
    {"small_f32", "5x7", 4, 24, "f32"},
    {"bench_bf16", "16384", 32768, 1024, "bf16"},
    {"three_passes_f16", "4x300", 70000, 64, "f16"},
    {"many_lookups_bf16", "1048576", 1000, 8, "bf16"},
    {"scalar_bf16", "", 10, 33, "bf16"},
    {"narrow_f32", "600", 300, 3, "f32"},
    {"half_vectors_f16", "77", 50, 12, "f16"},
    {"wide_f32", "100", 5, 9000, "f32"},
    {"wide_bf16", "2x64", 900, 4096, "bf16"},
    {"no_lookups_f32", "0x3", 6, 16, "f32"},
};

std::string fusionSource(const Shape &c) {
  std::string indices =
      llvm::formatv("tensor<{0}{1}i32>", c.indices, *c.indices ? "x" : "");
  std::string grad = llvm::formatv("tensor<{0}{1}{2}x{3}>", c.indices,
                                   *c.indices ? "x" : "", c.width, c.type);
  std::string table =
      llvm::formatv("tensor<{0}x{1}x{2}>", c.rows, c.width, c.type);
  return llvm::formatv(R"mlir(func.func @f(%g: {0}, %i: {1}) {{
  %r = kiln.fusion "embedding" (%g, %i) : ({0}, {1}) -> {2} {{
  ^bb0(%a: {0}, %b: {1}):
    %t = kiln.embedding_backward %a, %b : {0}, {1} -> {2}
    kiln.yield %t : {2}
  }
  return
}
)mlir",
                       grad, indices, table);
}

std::vector<InstanceCase> cases() {
  std::vector<InstanceCase> all;
  for (const Shape &shape : kShapes)
    all.push_back({shape.label, fusionSource(shape)});
  return all;
}

} // namespace

std::vector<TemplateInstance> embeddingTemplateInstances() {
  std::unique_ptr<KernelEmitter> emitter = createEmbeddingEmitter();
  return emitTemplateInstances("embedding", "embedding", *emitter, cases());
}

} // namespace mlir::kiln::codegen
