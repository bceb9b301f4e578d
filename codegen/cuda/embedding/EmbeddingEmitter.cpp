//===- EmbeddingEmitter.cpp - kernels of "embedding" fusions --------------===//
//
// kiln.embedding_backward (the gradient of an embedding table) as a short,
// fixed sequence of kernels of kernels/embedding.cuh, deterministic without
// floating-point atomics:
//
//   for each 8-bit digit of the row keys (two passes up to 65535 rows):
//     radix_histogram   digit counts per tile of lookups (the first pass
//                       also empties every row's run)
//     radix_scatter     stable scatter of (key, lookup) by that digit
//   segment_heads       each row's run [start, end) in the sorted lookups,
//                       and f32 partial sums of runs that cross a chunk
//   table_rows          each row summed in lookup order, zero when no
//                       lookup names it
//
// Launch arithmetic and scratch sizes are kernels/embedding_layout.cuh's.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/RecordedKernel.h"

#include "kiln/embedding_layout.cuh"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::embedding;

std::array<uint32_t, 3> dim3Of(int64_t x) { return {uint32_t(x), 1, 1}; }

/// The shapes of one embedding gradient and the kernels' shared pieces.
struct EmbeddingProblem {
  int64_t lookups = 0, rows = 0, width = 0;
  int vector = 1;
  std::string elementType, idx, config;
  int64_t gradOperand = 0, indicesOperand = 0, result = 0;

  /// A kernel of the template: `cfg` is the configuration, the body calls
  /// `call` with the context and the parameters in order.
  KernelSpec kernel(llvm::StringRef prefix, llvm::StringRef name,
                    std::string configuration) const {
    KernelSpec spec;
    spec.prefix = prefix.str();
    spec.templates = {"kiln/embedding.cuh"};
    spec.templateName = name.str();
    spec.configuration = std::move(configuration);
    spec.functors = "typedef " + idx + " idx_t;\nusing cfg = " + config + ";\n";
    return spec;
  }
};

/// Sets the body of `spec` to `kiln::embedding::<call>(ctx, <args>)`: its
/// parameters' names and typed null pointers for the ones a launch lacks.
void callWith(KernelSpec &spec, llvm::StringRef call,
              llvm::ArrayRef<std::string> args) {
  std::string list;
  for (const std::string &arg : args)
    list += ", " + arg;
  spec.body = "  kiln::embedding::" + call.str() + "(ctx" + list + ");\n";
}

void emitEmbeddingBackward(const EmbeddingProblem &p, FusionBuilder &builder) {
  const int64_t n = p.lookups;
  const std::string in = "const int *__restrict__", type = p.elementType;
  auto sortStats = [&](int pass) {
    return llvm::formatv("n={0} v={1} pass={2}/{3} tiles={4} items={5}", n,
                         p.rows, pass + 1, layout::radix_passes(p.rows),
                         layout::sort_tiles(n), layout::sort_items(n))
        .str();
  };
  KernelSpec rows = p.kernel(
      "kiln_embedding_rows", "embedding_table_rows",
      llvm::formatv("v={0} d={1} w={2} group={3} steps={4}{5}", p.rows,
                    p.width, p.vector, layout::row_group(p.width, p.vector),
                    layout::row_steps(p.width, p.vector),
                    layout::row_cached(p.width, p.vector) ? " cached" : "")
          .str());
  rows.grid = dim3Of(layout::row_blocks(p.rows, p.width, p.vector));
  rows.block = dim3Of(layout::row_threads(p.width, p.vector));
  if (n == 0) {
    // No lookups: every row is zero.
    rows.addParam(type + " *__restrict__", "out", LaunchArg::result(p.result));
    callWith(rows, "table_rows<cfg>",
             {"(const int *)nullptr", "(const " + type + " *)nullptr",
              "(const int2 *)nullptr", "(const float *)nullptr", "out"});
    builder.kernel(std::move(rows));
    return;
  }

  const uint64_t histogram = builder.scratch(layout::histogram_bytes(n));
  const uint64_t keys[2] = {builder.scratch(layout::sorted_bytes(n)),
                            builder.scratch(layout::sorted_bytes(n))};
  const uint64_t lookups[2] = {builder.scratch(layout::sorted_bytes(n)),
                               builder.scratch(layout::sorted_bytes(n))};
  const uint64_t bounds = builder.scratch(layout::bounds_bytes(p.rows));
  const uint64_t partial = builder.scratch(layout::partial_bytes(n, p.width));

  // Pass k reads what pass k - 1 wrote (the indices for the first) and
  // writes buffer k % 2.
  const int passes = layout::radix_passes(p.rows);
  for (int pass = 0; pass < passes; ++pass) {
    const std::string call = "<cfg, " + std::to_string(pass) + ">";
    const LaunchArg keysIn = pass == 0 ? LaunchArg::operand(p.indicesOperand)
                                       : LaunchArg::scratch(keys[(pass + 1) % 2]);
    KernelSpec count = p.kernel("kiln_embedding_histogram",
                                "embedding_radix_histogram", sortStats(pass));
    count.addParam(in, "keys", keysIn);
    count.addParam("unsigned *__restrict__", "histogram",
                   LaunchArg::scratch(histogram));
    if (pass == 0)
      count.addParam("int2 *__restrict__", "bounds", LaunchArg::scratch(bounds));
    callWith(count, "radix_histogram" + call,
             {"keys", "histogram", pass == 0 ? "bounds" : "(int2 *)nullptr"});
    count.grid = dim3Of(layout::sort_tiles(n));
    count.block = dim3Of(layout::kSortThreads);
    builder.kernel(std::move(count));

    KernelSpec scatter = p.kernel("kiln_embedding_scatter",
                                  "embedding_radix_scatter", sortStats(pass));
    scatter.addParam(in, "keys_in", keysIn);
    if (pass > 0)
      scatter.addParam(in, "lookups_in",
                       LaunchArg::scratch(lookups[(pass + 1) % 2]));
    scatter.addParam("const unsigned *__restrict__", "histogram",
                     LaunchArg::scratch(histogram));
    scatter.addParam("int *__restrict__", "keys_out",
                     LaunchArg::scratch(keys[pass % 2]));
    scatter.addParam("int *__restrict__", "lookups_out",
                     LaunchArg::scratch(lookups[pass % 2]));
    callWith(scatter, "radix_scatter" + call,
             {"keys_in", pass > 0 ? "lookups_in" : "(const int *)nullptr",
              "histogram", "keys_out", "lookups_out"});
    scatter.grid = dim3Of(layout::sort_tiles(n));
    scatter.block = dim3Of(layout::kSortThreads);
    builder.kernel(std::move(scatter));
  }

  const int sorted = (passes - 1) % 2;
  KernelSpec heads = p.kernel(
      "kiln_embedding_runs", "embedding_segment_heads",
      llvm::formatv("n={0} d={1} w={2} chunks={3}", n, p.width, p.vector,
                    layout::chunks(n))
          .str());
  heads.addParam(in, "keys", LaunchArg::scratch(keys[sorted]));
  heads.addParam(in, "lookups", LaunchArg::scratch(lookups[sorted]));
  heads.addParam("const " + type + " *__restrict__", "grad",
                 LaunchArg::operand(p.gradOperand));
  heads.addParam("int2 *__restrict__", "bounds", LaunchArg::scratch(bounds));
  heads.addParam("float *__restrict__", "partial", LaunchArg::scratch(partial));
  callWith(heads, "segment_heads<cfg>",
           {"keys", "lookups", "grad", "bounds", "partial"});
  heads.grid = dim3Of(layout::chunk_blocks(n));
  heads.block = dim3Of(layout::kChunkThreads);
  builder.kernel(std::move(heads));

  rows.addParam(in, "lookups", LaunchArg::scratch(lookups[sorted]));
  rows.addParam("const " + type + " *__restrict__", "grad",
                LaunchArg::operand(p.gradOperand));
  rows.addParam("const int2 *__restrict__", "bounds",
                LaunchArg::scratch(bounds));
  rows.addParam("const float *__restrict__", "partial",
                LaunchArg::scratch(partial));
  rows.addParam(type + " *__restrict__", "out", LaunchArg::result(p.result));
  callWith(rows, "table_rows<cfg>",
           {"lookups", "grad", "bounds", "partial", "out"});
  builder.kernel(std::move(rows));
}

/// The planner's vector width: as many elements as one 16-byte access of
/// a row holds.
int plannedVector(FusionOp fusion) {
  auto op = cast<EmbeddingBackwardOp>(SingleOpFusion::get(fusion)->op);
  auto table = cast<RankedTensorType>(op.getResult().getType());
  return layout::vector_width(table.getDimSize(1),
                              table.getElementType().getIntOrFloatBitWidth() /
                                  8);
}

/// The vector width `fusion` records (checked: the planner's or a power of
/// two fewer, which divides the row as it does), else the planner's.
FailureOr<int> vectorOf(FusionOp fusion) {
  FailureOr<cuda::EmbeddingAttr> recorded =
      recordedKernel<cuda::EmbeddingAttr>(fusion);
  if (failed(recorded))
    return failure();
  int planned = plannedVector(fusion);
  if (!*recorded)
    return planned;
  if (planned % recorded->getVector() != 0)
    return emitRecordedKernelError(fusion)
           << "a thread moves " << planned
           << " elements of a row or a power of two fewer, not "
           << recorded->getVector();
  return int(recorded->getVector());
}

class EmbeddingEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    if (fusion.getKind() != "embedding")
      return false;
    FailureOr<SingleOpFusion> single = SingleOpFusion::get(fusion);
    return succeeded(single) && isa<EmbeddingBackwardOp>(single->op) &&
           single->resultOf[0] >= 0;
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &) const override {
    if (!matches(fusion))
      return (emitFusionError(fusion)
              << "is not a fusion of one kiln.embedding_backward");
    SingleOpFusion single = *SingleOpFusion::get(fusion);
    auto op = cast<EmbeddingBackwardOp>(single.op);
    auto table = cast<RankedTensorType>(op.getResult().getType());
    EmbeddingProblem p;
    p.lookups = numElementsOf(op.getIndices());
    p.rows = table.getDimSize(0);
    p.width = table.getDimSize(1);
    // Keys, lookups and run bounds are 32-bit; V itself is the key of
    // every out-of-range index.
    constexpr int64_t kMax32 = (int64_t(1) << 31) - 1;
    if (p.lookups >= kMax32 || p.rows >= kMax32)
      return (emitFusionError(fusion) << "embedding gradient of ")
             << p.lookups << " lookups into " << p.rows
             << " rows: both must stay below 2^31 - 1";
    p.elementType = cudaType(op.getResult());
    FailureOr<int> vector = vectorOf(fusion);
    if (failed(vector))
      return failure();
    p.vector = *vector;
    int64_t largest = std::max(p.lookups, p.rows) * p.width;
    p.idx = largest < (int64_t(1) << 31) - (int64_t(1) << 20) ? "int"
                                                               : "long long";
    p.config = llvm::formatv("kiln::embedding::embedding_config<idx_t, {0}, "
                             "{1}, {2}, {3}>",
                             p.lookups, p.rows, p.width, p.vector)
                   .str();
    p.gradOperand = single.operandOf[0];
    p.indicesOperand = single.operandOf[1];
    p.result = single.resultOf[0];

    FusionBuilder builder("// kiln embedding fusion of\n" + describeOp(op));
    if (p.rows * p.width > 0)
      emitEmbeddingBackward(p, builder);
    return builder.take();
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &) const override {
    return Attribute(
        cuda::EmbeddingAttr::get(fusion.getContext(), plannedVector(fusion)));
  }

  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &) const override {
    return failure(failed(vectorOf(fusion)));
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createEmbeddingEmitter() {
  return std::make_unique<EmbeddingEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Embedding,
                                              createEmbeddingEmitter);

} // namespace mlir::kiln::codegen
