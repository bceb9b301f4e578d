//===- GenericReduction.cpp - planning reductions over any dims -----------===//
//
// The planner of kiln/reduce_dims.cuh: the layout of the reduced shape, the
// split of the reduced range, and the small functors of one reduction (the
// offsets of the collapsed dims, the accumulators, the element step, the
// finish and the partials).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/reduction/ReductionKernels.h"

#include "kiln/reduce_layout.cuh"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln::codegen::reduction {

namespace layout = ::kiln::reduce;

ReduceLayout::ReduceLayout(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<int64_t> dims) {
  int64_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  int lastClass = -1; // 0 kept, 1 reduced
  for (int64_t d = 0; d < rank; ++d) {
    if (shape[d] == 1)
      continue; // size-1 dims belong to either side
    int cls = llvm::is_contained(dims, d) ? 1 : 0;
    std::vector<DimGroup> &groups = cls ? reduced : kept;
    if (cls == lastClass) {
      groups.back().size *= shape[d];
      groups.back().stride = strides[d];
    } else {
      groups.push_back({shape[d], strides[d]});
    }
    lastClass = cls;
  }
  rowMode = lastClass != 0;
  for (const DimGroup &g : kept)
    rows *= g.size;
  for (const DimGroup &g : reduced)
    length *= g.size;
}

namespace {

/// `static idx_t name(idx_t q)`: the offset of linear index `q` over
/// `groups` (row-major, outermost first).
std::string offsetFunction(llvm::StringRef name,
                           llvm::ArrayRef<DimGroup> groups) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "  static __device__ __forceinline__ idx_t " << name << "(idx_t q) {\n";
  if (groups.empty()) {
    os << "    return 0;\n  }\n";
    return s;
  }
  os << "    idx_t off = 0;\n";
  for (int64_t i = groups.size() - 1; i > 0; --i)
    os << "    off += (q % " << groups[i].size << ") * " << groups[i].stride
       << ";\n    q /= " << groups[i].size << ";\n";
  os << "    return off + q * " << groups[0].stride << ";\n  }\n";
  return s;
}

/// `a` followed by the parameters of `b` that `a` does not declare.
Params unite(const Params &a, const Params &b) {
  Params all = a;
  for (size_t i = 0; i < b.decls.size(); ++i)
    if (!llvm::is_contained(all.decls, b.decls[i]))
      all.add(b.decls[i], b.args[i]);
  return all;
}

/// The functors of one reduction (see kiln/reduce_dims.cuh).
class Functors {
public:
  explicit Functors(const ReduceSpec &spec) : spec(spec) {}

  std::string offsets(llvm::ArrayRef<DimGroup> base,
                      llvm::ArrayRef<DimGroup> reduced) const {
    return "struct kiln_offsets {\n" + offsetFunction("base", base) +
           offsetFunction("reduced", reduced) + "};\n";
  }

  std::string accumulators() const {
    std::string members, init, combine, reduce;
    for (auto [k, a] : llvm::enumerate(spec.accs)) {
      std::string acc = spec.accName(k);
      members += "  " + a.type + " " + acc + ";\n";
      init += "    " + acc + " = " + a.identity + ";\n";
      combine += "    " + acc + " = " + a.combiner + "()(" + acc + ", other." +
                 acc + ");\n";
      std::string scratch = "kiln_scratch" + suffix(k);
      reduce += "    __shared__ " + a.type + " " + scratch + "[32];\n    " +
                acc + " = kiln_group_reduce<GROUP>(ctx, " + acc + ", " +
                a.combiner + "(), " + a.identity + ", " + scratch + ");\n";
    }
    return "struct accumulators {\n" + members +
           "  __device__ __forceinline__ void init() {\n" + init + "  }\n" +
           "  __device__ __forceinline__ void combine(const accumulators "
           "&other) {\n" +
           combine + "  }\n" +
           "  template <int GROUP>\n  __device__ __forceinline__ void "
           "group_reduce(const kiln::launch_ctx &ctx) {\n" +
           reduce + "  }\n};\n";
  }

  /// The accumulators as local references (`const` for the finish).
  std::string bindings(bool isConst) const {
    std::string s;
    for (auto [k, a] : llvm::enumerate(spec.accs))
      s += "    " + std::string(isConst ? "const " : "") + a.type + " &" +
           spec.accName(k) + " = kiln_acc." + spec.accName(k) + ";\n";
    return s;
  }

  std::string element() const {
    std::string s = "struct element_fn {\n" + paramMembers(spec.elementParams) +
                    "  __device__ __forceinline__ void operator()(accumulators "
                    "&kiln_acc, idx_t off, idx_t o, idx_t r, bool owner) "
                    "const {\n" +
                    bindings(false) + indent(spec.elementCode, 4);
    if (!spec.elementStores.empty())
      s += "    if (owner) {\n" + indent(spec.elementStores, 6) + "    }\n";
    for (auto [k, a] : llvm::enumerate(spec.accs))
      s += "    " + spec.accName(k) + " = " + a.combiner + "()(" +
           spec.accName(k) + ", " + a.element + ");\n";
    return s + "  }\n};\n";
  }

  std::string finish() const {
    return "struct finish_fn {\n" + paramMembers(spec.finishParams) +
           "  __device__ __forceinline__ void operator()(const accumulators "
           "&kiln_acc, idx_t o) const {\n" +
           bindings(true) + indent(spec.finish, 4) + "  }\n};\n";
  }

  std::string partialStore() const {
    std::string s = "struct partial_store {\n" + paramMembers(partials(false)) +
                    "  __device__ __forceinline__ void store(const "
                    "accumulators &kiln_acc, idx_t at) const {\n";
    for (size_t k = 0; k < spec.accs.size(); ++k)
      s += "    partial" + suffix(k) + "[at] = kiln_acc." + spec.accName(k) +
           ";\n";
    return s + "  }\n};\n";
  }

  std::string partialLoad() const {
    std::string load, combine;
    for (auto [k, a] : llvm::enumerate(spec.accs)) {
      std::string acc = "kiln_acc." + spec.accName(k);
      load += "    " + acc + " = partial" + suffix(k) + "[at];\n";
      combine += "    " + acc + " = " + a.combiner + "()(" + acc + ", partial" +
                 suffix(k) + "[at]);\n";
    }
    return "struct partial_load {\n" + paramMembers(partials(true)) +
           "  __device__ __forceinline__ accumulators load(idx_t at) const "
           "{\n    accumulators kiln_acc;\n" +
           load + "    return kiln_acc;\n  }\n" +
           "  __device__ __forceinline__ void combine(accumulators &kiln_acc, "
           "idx_t at) const {\n" +
           combine + "  }\n};\n";
  }

  /// The partials' parameters (without their launch arguments).
  Params partials(bool isConst) const {
    Params p;
    for (size_t k = 0; k < spec.accs.size(); ++k)
      p.add((isConst ? "const " : "") + spec.accs[k].type +
                " *__restrict__ partial" + suffix(k),
            LaunchArg());
    return p;
  }

  std::string suffix(size_t k) const {
    return spec.accs.size() == 1 ? std::string() : str(k);
  }

private:
  const ReduceSpec &spec;
};

} // namespace

/// The column blocks of column mode: 32 columns of the innermost kept group
/// each, for every index of the outer kept groups.
static int64_t columnBlocks(const ReduceLayout &layout) {
  int64_t inner = layout.kept.back().size;
  return layout::ceil_div(inner, layout::kColumnTile) * (layout.rows / inner);
}

int64_t plannedSplits(const ReduceLayout &layout, int64_t targetBlocks) {
  int64_t chunk;
  if (layout.rowMode) {
    int64_t group = layout::row_group(layout.length, layout::kReduceMaxGroup);
    int64_t blocks =
        layout::ceil_div(layout.rows, layout::rows_in_block(group));
    chunk = layout::split_chunk(blocks, layout.length, layout::kRowMinChunk,
                                targetBlocks);
  } else {
    // As a norm's parameter gradients (norm_param_chunk): each thread reads
    // one element per row, so only several blocks per SM keep enough loads
    // in flight (a bias gradient over 8192 x 1024 bf16 in 288 blocks read
    // at 1.7 TB/s, a norm's in 1024 at 2.3).
    chunk = layout::split_chunk(columnBlocks(layout), layout.length,
                                layout::kColumnMinChunk,
                                layout::kColumnTargetWaves * targetBlocks);
  }
  return layout::split_count(layout.length, chunk);
}

std::string splitsMismatch(const ReduceLayout &layout, int64_t splits) {
  // Each split takes ceil(length / splits) elements: every one must get
  // some (the planner's splits always do).
  if (splits > 1 &&
      layout::split_count(layout.length,
                          layout::ceil_div(layout.length, splits)) != splits)
    return std::to_string(splits) + " splits of " +
           std::to_string(layout.length) +
           " reduced elements leave a split empty";
  return "";
}

void emitReduce(KernelSet &kernels, const ReduceSpec &spec,
                const ReduceLayout &layout) {
  int64_t rows = layout.rows, length = layout.length;
  if (rows == 0)
    return;
  Functors functors(spec);
  KernelSpec kernel;
  kernel.prefix = spec.prefix;
  kernel.templates = {"kiln/reduce_dims.cuh"};
  std::string config, entry;
  const int64_t splits = kernels.splits
                             ? *kernels.splits
                             : plannedSplits(layout, kernels.targetBlocks);
  const int64_t chunk = splits == 1 ? std::max<int64_t>(length, 1)
                                    : layout::ceil_div(length, splits);
  if (layout.rowMode) {
    int64_t group = splits > 1
                        ? layout::kReduceMaxGroup
                        : layout::row_group(length, layout::kReduceMaxGroup);
    int64_t rowsPerBlock = layout::rows_in_block(group);
    config = llvm::formatv("kiln::reduce::reduce_rows_config<idx_t, {0}, {1}, "
                           "{2}>",
                           rows, length, chunk);
    entry = "reduce_rows";
    kernel.templateName = "reduce_rows";
    kernel.configuration =
        llvm::formatv("rows={0} length={1} group={2} rows_per_block={3} "
                      "splits={4}",
                      rows, length, group, rowsPerBlock, splits);
    kernel.grid = dim3Of(layout::ceil_div(rows, rowsPerBlock), splits);
    kernel.block = dim3Of(group * rowsPerBlock);
    kernel.functors = functors.offsets(layout.kept, layout.reduced);
  } else {
    int64_t inner = layout.kept.back().size;
    config = llvm::formatv("kiln::reduce::reduce_columns_config<idx_t, {0}, "
                           "{1}, {2}, {3}>",
                           rows, length, inner, chunk);
    entry = "reduce_columns";
    kernel.templateName = "reduce_columns";
    kernel.configuration =
        llvm::formatv("rows={0} length={1} inner={2} splits={3}", rows, length,
                      inner, splits);
    kernel.grid = dim3Of(columnBlocks(layout), splits);
    kernel.block = dim3Of(layout::kColumnTile, layout::kColumnSplit);
    kernel.functors = functors.offsets(llvm::ArrayRef(layout.kept).drop_back(),
                                       layout.reduced);
  }
  kernel.functors += spec.helpers + "using reduce_cfg = " + config + ";\n" +
                     functors.accumulators() + functors.element();

  size_t n = spec.accs.size();
  std::vector<uint64_t> partials;
  Params params = spec.elementParams;
  std::string done;
  if (splits == 1) {
    params = unite(params, spec.finishParams);
    kernel.functors += functors.finish();
    done = "finish_fn" + paramInit(spec.finishParams);
  } else {
    Params store = functors.partials(false);
    for (size_t k = 0; k < n; ++k) {
      partials.push_back(
          kernels.builder.scratch(splits * rows * spec.accs[k].bytes));
      params.add(store.decls[k], LaunchArg::scratch(partials.back()));
    }
    kernel.functors += functors.partialStore();
    done = "partial_store" + paramInit(store);
  }
  kernel.body = "  kiln::reduce::" + entry +
                "<reduce_cfg, kiln_offsets, accumulators>(\n      ctx, "
                "element_fn" +
                paramInit(spec.elementParams) + ", " + done + ");\n";
  kernels.kernel(std::move(kernel), params);
  if (splits == 1)
    return;

  // Second pass: each output combines its partials in split order.
  KernelSpec final;
  final.prefix = spec.prefix + "_final";
  final.templates = {"kiln/reduce_dims.cuh"};
  final.templateName = "reduce_final";
  final.configuration =
      llvm::formatv("rows={0} splits={1}", rows, splits).str();
  Params load = functors.partials(true);
  Params finalParams;
  for (size_t k = 0; k < n; ++k)
    finalParams.add(load.decls[k], LaunchArg::scratch(partials[k]));
  finalParams = unite(finalParams, spec.finishParams);
  final.functors =
      spec.helpers +
      llvm::formatv("using final_cfg = kiln::reduce::reduce_final_config<"
                    "idx_t, {0}, {1}>;\n",
                    rows, splits)
          .str() +
      functors.accumulators() + functors.partialLoad() + functors.finish();
  final.body = "  kiln::reduce::reduce_final<final_cfg, accumulators>(\n"
               "      ctx, partial_load" +
               paramInit(load) + ", finish_fn" + paramInit(spec.finishParams) +
               ");\n";
  final.grid = dim3Of(layout::ceil_div(rows, layout::kFinalThreads));
  final.block = dim3Of(layout::kFinalThreads);
  kernels.kernel(std::move(final), finalParams);
}

} // namespace mlir::kiln::codegen::reduction
