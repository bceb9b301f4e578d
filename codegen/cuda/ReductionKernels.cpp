//===- ReductionKernels.cpp - building blocks of reduction kernels --------===//

#include "codegen/cuda/ReductionKernels.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen::reduction {

namespace {
constexpr const char *kHelpers = R"cuda(
#define KILN_INF __int_as_float(0x7f800000)
#define KILN_NAN __int_as_float(0x7fc00000)

// A value with the index it came from (argmax).
template <class V> struct kiln_arg { V v; int i; };

__device__ __forceinline__ bool kiln_isnan(float x) { return x != x; }
__device__ __forceinline__ bool kiln_isnan(int) { return false; }

__device__ __forceinline__ float kiln_shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ int kiln_shfl_xor(int v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ unsigned kiln_shfl_xor(unsigned v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
template <class V>
__device__ __forceinline__ kiln_arg<V> kiln_shfl_xor(kiln_arg<V> a, int o) {
  return kiln_arg<V>{kiln_shfl_xor(a.v, o), kiln_shfl_xor(a.i, o)};
}

struct kiln_sum_op {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct kiln_max_op {
  __device__ __forceinline__ float operator()(float a, float b) const { return kiln_max(a, b); }
  __device__ __forceinline__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct kiln_min_op {
  __device__ __forceinline__ float operator()(float a, float b) const { return kiln_min(a, b); }
  __device__ __forceinline__ int operator()(int a, int b) const { return a < b ? a : b; }
};
// The first NaN wins, then the larger value, then the smaller index. The
// rule is symmetric and associative, so every combination order gives the
// answer of a sequential scan.
struct kiln_argmax_op {
  template <class V>
  __device__ __forceinline__ kiln_arg<V> operator()(kiln_arg<V> a, kiln_arg<V> b) const {
    bool an = kiln_isnan(a.v), bn = kiln_isnan(b.v);
    if (an != bn) return an ? a : b;
    if (!an && a.v != b.v) return a.v > b.v ? a : b;
    return a.i <= b.i ? a : b;
  }
};

// Combines `v` over the GROUP threads (a power of two) that own one row:
// consecutive lanes when GROUP <= 32, else the whole block (GROUP ==
// blockDim.x). Butterfly shuffles leave the same value, rounded the same
// way, in every thread. `scratch` holds 32 values.
template <int GROUP, class T, class Op>
__device__ __forceinline__ T kiln_group_reduce(T v, Op op, T identity, T *scratch) {
#pragma unroll
  for (int o = (GROUP < 32 ? GROUP : 32) / 2; o > 0; o /= 2)
    v = op(v, kiln_shfl_xor(v, o));
  if constexpr (GROUP > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();  // earlier readers of scratch are done
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < GROUP / 32 ? scratch[lane] : identity;
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
      v = op(v, kiln_shfl_xor(v, o));
  }
  return v;
}

__device__ __forceinline__ float kiln_square(float x) { return x * x; }
// max(x, 0) - x t + log(1 + exp(-|x|)): binary cross entropy with logits.
__device__ __forceinline__ float kiln_bce(float x, float t) {
  return fmaxf(x, 0.f) - x * t + log1pf(expf(-fabsf(x)));
}
)cuda";
} // namespace

llvm::StringRef deviceHelpers() { return kHelpers; }

std::string indent(llvm::StringRef body, int spaces) {
  std::string s, pad(spaces, ' ');
  llvm::SmallVector<llvm::StringRef> lines;
  body.split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines)
    s += pad + line.str() + "\n";
  return s;
}

KernelSet::KernelSet(std::string header, FusionOp fusion)
    : builder(std::move(header)) {
  int64_t largest = 0;
  for (Type t : fusion->getOperandTypes())
    largest = std::max(largest, cast<ShapedType>(t).getNumElements());
  for (Type t : fusion->getResultTypes())
    largest = std::max(largest, cast<ShapedType>(t).getNumElements());
  idx = largest < (int64_t(1) << 31) - (int64_t(1) << 20) ? "int" : "long long";
}

void KernelSet::kernel(llvm::StringRef prefix, llvm::StringRef extraHelpers,
                       const Params &params, llvm::StringRef body,
                       std::array<uint32_t, 3> grid,
                       std::array<uint32_t, 3> block) {
  std::string helpers =
      "typedef " + idx + " idx_t;\n" + kHelpers + extraHelpers.str();
  builder.kernel(prefix, helpers, params, body, grid, block);
}

//===----------------------------------------------------------------------===//
// Row kernels
//===----------------------------------------------------------------------===//

RowKernel::RowKernel(int64_t rows, int64_t m, int64_t width)
    : rows(rows), m(m), width(width) {
  group = std::clamp<int64_t>(nextPowerOf2(ceilDiv(m, 8)), 1, 1024);
  perThread = ceilDiv(ceilDiv(m, width), group);
  cached = perThread * width <= 16;
  rowsPerBlock = group > 32 ? 1 : 128 / group;
  threads = group * rowsPerBlock;
  blocks = ceilDiv(rows, rowsPerBlock);
}

std::string RowKernel::stepLoads(llvm::StringRef suffix, llvm::StringRef at,
                                 int spaces) const {
  std::string s, pad(spaces, ' '), W = str(width);
  s += pad + "if (aligned && j0 + " + W + " <= " + str(m) + ") {\n";
  for (const RowInput &in : rowInputs) {
    s += pad + "  alignas(16) " + in.type + " " + in.value + "_t[" + W + "];\n";
    s += pad + "  kiln_load_vec<" + W + ">(" + in.value + "_t, " + in.value +
         "_row + j0);\n";
    s += pad + "#pragma unroll\n" + pad + "  for (int v = 0; v < " + W +
         "; ++v) " + in.value + suffix.str() + "[" + at.str() +
         "] = kiln_load(" + in.value + "_t[v]);\n";
  }
  s += pad + "} else {\n" + pad + "#pragma unroll\n" + pad +
       "  for (int v = 0; v < " + W + "; ++v) {\n";
  for (const RowInput &in : rowInputs)
    s += pad + "    " + in.value + suffix.str() + "[" + at.str() +
         "] = j0 + v < " + str(m) + " ? kiln_load(" + in.value +
         "_row[j0 + v]) : 0.f;\n";
  s += pad + "  }\n" + pad + "}\n";
  return s;
}

std::string RowKernel::prologue(llvm::ArrayRef<std::string> outputs) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "  __shared__ float kiln_scratch[32];\n"
     << "  const int lid = threadIdx.x % " << group << ";\n"
     << "  idx_t row = (idx_t)blockIdx.x * " << rowsPerBlock
     << " + threadIdx.x / " << group << ";\n"
     << "  const bool active = row < " << rows << ";\n"
     << "  if (!active) row = " << rows - 1
     << ";  // idle threads still take part in shuffles\n";
  for (const RowInput &in : rowInputs)
    os << "  const auto *" << in.value << "_row = " << in.pointer
       << " + row * (idx_t)" << m << ";\n";
  for (const std::string &out : outputs)
    os << "  auto *" << out << "_row = " << out << " + row * (idx_t)" << m
       << ";\n";
  if (width > 1) {
    os << "  const bool aligned = true";
    for (const RowInput &in : rowInputs)
      os << " && kiln_vec_aligned<" << width << ">(" << in.value << "_row)";
    os << ";\n";
  }
  if (!cached)
    return s;
  for (const RowInput &in : rowInputs)
    os << "  float " << in.value << "_v[" << perThread * width << "];\n";
  os << "#pragma unroll\n  for (int k = 0; k < " << perThread << "; ++k) {\n";
  if (width == 1) {
    os << "    const idx_t j = lid + (idx_t)k * " << group << ";\n";
    for (const RowInput &in : rowInputs)
      os << "    " << in.value << "_v[k] = j < " << m << " ? kiln_load("
         << in.value << "_row[j]) : 0.f;\n";
  } else {
    os << "    const idx_t j0 = (lid + (idx_t)k * " << group << ") * " << width
       << ";\n"
       << stepLoads("_v", "k * " + str(width) + " + v", 4);
  }
  os << "  }\n";
  return s;
}

std::string RowKernel::loop(llvm::StringRef body, llvm::StringRef stepBegin,
                            llvm::StringRef stepEnd) const {
  assert((width > 1 || (stepBegin.empty() && stepEnd.empty())) &&
         "steps of one element have no step code");
  std::string s;
  llvm::raw_string_ostream os(s);
  std::string W = str(width);
  if (width == 1 && cached) {
    os << "#pragma unroll\n  for (int k = 0; k < " << perThread << "; ++k) {\n"
       << "    const idx_t j = lid + (idx_t)k * " << group << ";\n"
       << "    if (j < " << m << ") {\n";
    for (const RowInput &in : rowInputs)
      os << "      const float " << in.value << " = " << in.value << "_v[k];\n";
    os << indent(body, 6) << "    }\n  }\n";
  } else if (width == 1) {
    os << "  for (idx_t j = lid; j < " << m << "; j += " << group << ") {\n";
    for (const RowInput &in : rowInputs)
      os << "    const float " << in.value << " = kiln_load(" << in.value
         << "_row[j]);\n";
    os << indent(body, 4) << "  }\n";
  } else {
    if (cached)
      os << "#pragma unroll\n  for (int k = 0; k < " << perThread
         << "; ++k) {\n"
         << "    const idx_t j0 = (lid + (idx_t)k * " << group << ") * " << W
         << ";\n";
    else
      os << "  for (idx_t j0 = (idx_t)lid * " << W << "; j0 < " << m
         << "; j0 += " << group * width << ") {\n";
    if (!cached) {
      for (const RowInput &in : rowInputs)
        os << "    float " << in.value << "_s[" << W << "];\n";
      os << stepLoads("_s", "v", 4);
    }
    os << indent(stepBegin, 4) << "#pragma unroll\n    for (int v = 0; v < "
       << W << "; ++v) {\n      const idx_t j = j0 + v;\n      if (j < " << m
       << ") {\n";
    for (const RowInput &in : rowInputs)
      os << "        const float " << in.value << " = " << in.value
         << (cached ? "_v[k * " + W + " + v]" : "_s[v]") << ";\n";
    os << indent(body, 8) << "      }\n    }\n"
       << indent(stepEnd, 4) << "  }\n";
  }
  return s;
}

std::string RowKernel::reduce(llvm::StringRef var, llvm::StringRef op,
                              llvm::StringRef identity,
                              llvm::StringRef scratch) const {
  return llvm::formatv(
             "  {0} = kiln_group_reduce<{1}>({0}, {2}(), {3}, {4});\n", var,
             group, op, identity, scratch)
      .str();
}

//===----------------------------------------------------------------------===//
// Generic reductions
//===----------------------------------------------------------------------===//

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

/// `idx_t name(idx_t q)`: the offset of linear index `q` over `groups`
/// (row-major, outermost first).
std::string offsetFunction(llvm::StringRef name,
                           llvm::ArrayRef<DimGroup> groups) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "__device__ __forceinline__ idx_t " << name << "(idx_t q) {\n";
  if (groups.empty()) {
    os << "  return 0;\n}\n";
    return s;
  }
  os << "  idx_t off = 0;\n";
  for (int64_t i = groups.size() - 1; i > 0; --i)
    os << "  off += (q % " << groups[i].size << ") * " << groups[i].stride
       << ";\n  q /= " << groups[i].size << ";\n";
  os << "  return off + q * " << groups[0].stride << ";\n}\n";
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

} // namespace

void emitReduce(KernelSet &kernels, const ReduceSpec &spec,
                const ReduceLayout &layout) {
  int64_t rows = layout.rows, length = layout.length;
  if (rows == 0)
    return;
  size_t n = spec.accs.size();
  auto acc = [&](size_t k) { return spec.accName(k); };
  auto suffix = [&](size_t k) { return n == 1 ? std::string() : str(k); };
  int64_t splits = 1, chunk = std::max<int64_t>(length, 1);
  std::string body;
  llvm::raw_string_ostream os(body);
  std::array<uint32_t, 3> grid, block;

  auto chooseSplits = [&](int64_t blocks, int64_t minChunk) {
    if (blocks >= kTargetBlocks || length <= minChunk)
      return;
    splits = std::clamp<int64_t>(
        std::min(ceilDiv(kTargetBlocks, blocks), ceilDiv(length, minChunk)), 1,
        1024);
    chunk = ceilDiv(length, splits);
    splits = ceilDiv(length, chunk);
  };
  // The accumulation of one element at `off`; `stores` only for the owner.
  auto accumulate = [&](int spaces, llvm::StringRef guard) {
    std::string s = indent(spec.elementCode, spaces);
    if (!spec.elementStores.empty())
      s += guard.empty()
               ? indent(spec.elementStores, spaces)
               : std::string(spaces, ' ') + "if (" + guard.str() + ") {\n" +
                     indent(spec.elementStores, spaces + 2) +
                     std::string(spaces, ' ') + "}\n";
    for (size_t k = 0; k < n; ++k)
      s += std::string(spaces, ' ') + acc(k) + " = " + spec.accs[k].combiner +
           "()(" + acc(k) + ", " + spec.accs[k].element + ");\n";
    return s;
  };

  std::string offsets;
  if (layout.rowMode) {
    int64_t group =
        std::clamp<int64_t>(nextPowerOf2(ceilDiv(length, 8)), 1, 512);
    int64_t rowsPerBlock = group > 32 ? 1 : 128 / group;
    int64_t blocks = ceilDiv(rows, rowsPerBlock);
    chooseSplits(blocks, 4096);
    if (splits > 1)
      group = 512, rowsPerBlock = 1, blocks = rows;
    offsets = offsetFunction("kiln_base", layout.kept) +
              offsetFunction("kiln_reduced", layout.reduced);
    for (size_t k = 0; k < n; ++k)
      os << "  __shared__ " << spec.accs[k].type << " kiln_scratch" << suffix(k)
         << "[32];\n";
    os << "  const int lid = threadIdx.x % " << group << ";\n"
       << "  idx_t o = (idx_t)blockIdx.x * " << rowsPerBlock
       << " + threadIdx.x / " << group << ";\n"
       << "  const bool active = o < " << rows << ";\n"
       << "  if (!active) o = " << rows - 1
       << ";  // idle threads still take part in shuffles\n"
       << "  const idx_t base = kiln_base(o);\n"
       << "  const idx_t r0 = (idx_t)blockIdx.y * " << chunk << ";\n"
       << "  const idx_t r1 = min((idx_t)" << length << ", r0 + " << chunk
       << ");\n";
    for (size_t k = 0; k < n; ++k)
      os << "  " << spec.accs[k].type << " " << acc(k) << " = "
         << spec.accs[k].identity << ";\n";
    os << "  for (idx_t r = r0 + lid; r < r1; r += " << group << ") {\n"
       << "    const idx_t off = base + kiln_reduced(r);\n"
       << accumulate(4, "active") << "  }\n";
    for (size_t k = 0; k < n; ++k)
      os << "  " << acc(k) << " = kiln_group_reduce<" << group << ">(" << acc(k)
         << ", " << spec.accs[k].combiner << "(), " << spec.accs[k].identity
         << ", kiln_scratch" << suffix(k) << ");\n";
    os << "  if (!active || lid != 0) return;\n";
    grid = dim3Of(blocks, splits);
    block = dim3Of(group * rowsPerBlock);
  } else {
    // Column mode: the innermost kept group is contiguous; threadIdx.y
    // splits the reduced index 8 ways.
    int64_t inner = layout.kept.back().size;
    int64_t columnTiles = ceilDiv(inner, 32);
    int64_t blocks = columnTiles * (rows / inner);
    chooseSplits(blocks, 256);
    offsets =
        offsetFunction("kiln_base", llvm::ArrayRef(layout.kept).drop_back()) +
        offsetFunction("kiln_reduced", layout.reduced);
    for (size_t k = 0; k < n; ++k)
      os << "  __shared__ " << spec.accs[k].type << " kiln_tile" << suffix(k)
         << "[8][33];\n";
    os << "  const idx_t outer = blockIdx.x / " << columnTiles << ";\n"
       << "  const idx_t c = (idx_t)(blockIdx.x % " << columnTiles
       << ") * 32 + threadIdx.x;\n"
       << "  const bool active = c < " << inner << ";\n"
       << "  const idx_t o = outer * " << inner << " + c;\n"
       << "  const idx_t base = kiln_base(outer) + c;\n"
       << "  const idx_t r0 = (idx_t)blockIdx.y * " << chunk << ";\n"
       << "  const idx_t r1 = min((idx_t)" << length << ", r0 + " << chunk
       << ");\n";
    for (size_t k = 0; k < n; ++k)
      os << "  " << spec.accs[k].type << " " << acc(k) << " = "
         << spec.accs[k].identity << ";\n";
    os << "  if (active)\n"
       << "    for (idx_t r = r0 + threadIdx.y; r < r1; r += 8) {\n"
       << "      const idx_t off = base + kiln_reduced(r);\n"
       << accumulate(6, "") << "    }\n";
    for (size_t k = 0; k < n; ++k)
      os << "  kiln_tile" << suffix(k)
         << "[threadIdx.y][threadIdx.x] = " << acc(k) << ";\n";
    os << "  __syncthreads();\n"
       << "  if (threadIdx.y != 0 || !active) return;\n"
       << "#pragma unroll\n"
       << "  for (int t = 1; t < 8; ++t) {\n";
    for (size_t k = 0; k < n; ++k)
      os << "    " << acc(k) << " = " << spec.accs[k].combiner << "()("
         << acc(k) << ", kiln_tile" << suffix(k) << "[t][threadIdx.x]);\n";
    os << "  }\n";
    grid = dim3Of(blocks, splits);
    block = dim3Of(32, 8);
  }

  std::vector<uint64_t> partials;
  Params params = spec.elementParams;
  if (splits == 1) {
    params = unite(params, spec.finishParams);
    os << indent(spec.finish, 2);
  } else {
    for (size_t k = 0; k < n; ++k) {
      partials.push_back(
          kernels.builder.scratch(splits * rows * spec.accs[k].bytes));
      params.add(spec.accs[k].type + " *__restrict__ partial" + suffix(k),
                 LaunchArg::scratch(partials.back()));
      os << "  partial" << suffix(k) << "[(idx_t)blockIdx.y * " << rows
         << " + o] = " << acc(k) << ";\n";
    }
  }
  os.flush();
  kernels.kernel(spec.prefix, offsets + spec.helpers, params, body, grid,
                 block);
  if (splits == 1)
    return;

  // Second pass: each output combines its partials in split order.
  Params final;
  for (size_t k = 0; k < n; ++k)
    final.add("const " + spec.accs[k].type + " *__restrict__ partial" +
                  suffix(k),
              LaunchArg::scratch(partials[k]));
  final = unite(final, spec.finishParams);
  std::string finalBody =
      "  const idx_t o = (idx_t)blockIdx.x * 256 + threadIdx.x;\n"
      "  if (o >= " +
      str(rows) + ") return;\n";
  for (size_t k = 0; k < n; ++k)
    finalBody +=
        llvm::formatv("  {0} {1} = partial{2}[o];\n"
                      "  for (int s = 1; s < {3}; ++s)\n"
                      "    {1} = {4}()({1}, partial{2}[(idx_t)s * {5} + o]);\n",
                      spec.accs[k].type, acc(k), suffix(k), splits,
                      spec.accs[k].combiner, rows)
            .str();
  finalBody += indent(spec.finish, 2);
  kernels.kernel(spec.prefix + "_final", spec.helpers, final, finalBody,
                 dim3Of(ceilDiv(rows, 256)), dim3Of(256));
}

} // namespace mlir::kiln::codegen::reduction
