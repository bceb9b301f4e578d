//===- GemmEmitter.cpp - kiln.fusion "gemm": matmul + elementwise epilogue ===//
//
// A "gemm" fusion is one kiln.matmul whose operands are block arguments,
// followed by an optional epilogue: element-wise ops applied to the product
// element by element, whose other operands are block arguments that
// broadcast to the product's shape (bias [N], residual [..., M, N],
// scalars), constants, or element-wise values computed from those (e.g. an
// activation's derivative). Every yielded value has the product's shape, so
// each of them is one store per output element.
//
// Several matmuls of one shape (operand types and transposes) may share a
// fusion:
//  - each with an epilogue of its own: one grouped launch whose GEMM batches
//    run problem after problem (operand pointers and stores chosen per
//    problem), e.g. the q, k and v projections of one input;
//  - their products added (a tree of kiln.add before any other epilogue
//    op): one product over their concatenated K, tile kt of problem
//    kt / KG_KT, e.g. the gradient of an input that several projections
//    read.
//
// Kernels (the configuration is chosen per problem by a small cost model):
//  - bf16/f16 on sm_90: warpgroup MMA (wgmma.mma_async, sm_90a) on 128-byte
//    swizzled shared tiles filled by cp.async, two warpgroups of 64 x BN
//    (GemmWgmma.cpp). It needs whole 16-byte chunks of both operands; the
//    kernel is compiled for sm_90a, so its code runs on sm_90 devices only.
//  - bf16/f16: tensor cores through mma.sync m16n8k16 (f32 accumulation),
//    tiles copied with cp.async into a STAGES-deep ring of padded (bank
//    conflict free) shared-memory tiles and read with ldmatrix; the shared
//    tiles keep the global layout of each operand, and transposed operands
//    are read with ldmatrix.trans, so transpose_lhs / transpose_rhs need no
//    transposing pass. Tails are zero-filled (cp.async src-size 0). When an
//    operand's contiguous dimension is not a multiple of 8 elements the
//    16-byte copies would be misaligned; that operand is then loaded element
//    by element (slower, same pipeline).
//  - f32 with allowTf32: the same kernel with mma.sync m16n8k8 tf32 (operands
//    rounded with cvt.rna.tf32) and fragments read with scalar shared loads.
//  - f32 by default: exact f32 FMA, a register-blocked SIMT kernel (8x8 or
//    4x4 outputs per thread, double-buffered shared tiles).
//  - Small problems split K across blocks for parallelism: each split writes
//    f32 partial products to scratch and a second kernel adds them in split
//    order (deterministic) and applies the epilogue. The SIMT kernel can
//    also split K within a block (K slices added in shared memory, one
//    launch).
// Tile configurations (chooseConfig): wgmma 128x256x64 (4 stages) and
// 128x128x64 (6 stages), one block per SM; bf16/f16 128x256x32 (8 warps of
// 64x64, 4 stages, 1 block/SM), 128x128x32 (8 warps of 64x32, 4 stages, 2/SM),
// 64x64x32 (4 warps, 4 stages); tf32 128x128, 64x128, 64x64 (3 stages);
// SIMT 128x128 (8x8 per thread), 64x64 and 32x32 (4x4), BK = 8, and 32x32
// in four K slices of 8. Tiles are handed out in groups of 8 tile rows for
// L2 reuse.
// Batch dimensions broadcast through per-batch offset functions baked into
// the source; when the rhs is shared by every batch and the lhs is dense and
// not transposed, the batch is folded into M (one large GEMM).
//
// The epilogue (EpilogueWriter) is written by the ScalarEmitter that the
// pointwise kernels use, evaluating each op at output element (row, col)
// from the product's register: every intermediate rounded to its tensor's
// element type as the reference does.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/GemmWgmma.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/Nvrtc.h"
#include "codegen/cuda/ScalarEmitter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlir::kiln::codegen {
namespace {

//===----------------------------------------------------------------------===//
// Analysis
//===----------------------------------------------------------------------===//

/// One matmul of a gemm fusion and the fusion results of its epilogue.
struct GemmProblem {
  MatmulOp matmul;
  unsigned lhsArg = 0, rhsArg = 0;
  /// Indices of the fusion results it stores (each of the product's shape).
  SmallVector<unsigned> results;
};

/// A gemm fusion taken apart: its matmuls (several of one shape form a
/// grouped launch, e.g. projections of one input, or, when the body adds
/// their products, one product over their concatenated K, e.g. the
/// gradient of an input that several projections read), their sizes, and
/// what their epilogues yield.
struct GemmPlan {
  SmallVector<GemmProblem> problems;
  /// The sum of every problem's product when the products are added (all
  /// results then belong to problem 0's epilogue, which starts from it).
  Value sum;
  bool transposeLhs = false, transposeRhs = false;
  Type elementType;
  /// [batch..., M, N] of each product (and of every yielded value).
  SmallVector<int64_t> outShape;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// Per output batch dim: the operand's batch stride counted in matrices
  /// (0 where it broadcasts).
  SmallVector<int64_t> lhsBatchStrides, rhsBatchStrides;
};

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

bool isFloatElement(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

/// Whether `from` broadcasts (numpy, right-aligned) to `to`.
bool broadcastsTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1)
      return false;
  }
  return true;
}

/// Element strides of a row-major `shape` read at the coordinates of `to`
/// (right-aligned; 0 for broadcast or missing dims).
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> to) {
  SmallVector<int64_t> strides(to.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t d = shape.size() - 1 - i, o = to.size() - 1 - i;
    strides[o] = shape[d] == 1 && to[o] != 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// Takes `fusion` apart; on failure says why in `why`.
FailureOr<GemmPlan> analyze(FusionOp fusion, std::string &why) {
  if (fusion.getKind() != "gemm") {
    why = "the fusion's kind is not \"gemm\"";
    return failure();
  }
  Block &body = fusion.getBody().front();
  GemmPlan plan;
  // The matmul each value is computed from (-1: none, e.g. a bias or a
  // constant scaling; the epilogue recomputes such values per element;
  // kSummed: the sum of several products).
  constexpr int kSummed = std::numeric_limits<int>::max();
  llvm::DenseMap<Value, int> owner;
  // Matmul results and sums of them, each to be added exactly once.
  llvm::DenseSet<Value> summands;
  for (Operation &op : body.without_terminator()) {
    if (auto matmul = dyn_cast<MatmulOp>(op)) {
      owner[matmul.getResult()] = plan.problems.size();
      plan.problems.push_back({matmul});
      continue;
    }
    std::string name = op.getName().getStringRef().str();
    if (!ScalarEmitter::supportsOp(&op) ||
        !ScalarEmitter::bufferOperands(&op).empty() ||
        op.getNumResults() != 1) {
      why = "'" + name + "' is not an element-wise epilogue op";
      return failure();
    }
    int from = -1;
    bool combines = false;
    for (Value operand : op.getOperands()) {
      auto found = owner.find(operand);
      int o = found == owner.end() ? -1 : found->second;
      if (isa<BlockArgument>(operand) || o < 0)
        continue;
      combines |= from >= 0 && from != o;
      from = from < 0 ? o : from;
    }
    if (combines) {
      // Only an add of two products (or sums of them), before any other
      // epilogue op: one accumulation over the concatenated K.
      auto isSummand = [&](Value v) {
        return isa_and_nonnull<MatmulOp>(v.getDefiningOp()) ||
               summands.contains(v);
      };
      if (!isa<AddOp>(op) || !isSummand(op.getOperand(0)) ||
          !isSummand(op.getOperand(1)) ||
          op.getOperand(0).getType() != op.getResult(0).getType() ||
          op.getOperand(1).getType() != op.getResult(0).getType()) {
        why = "'" + name + "' combines the products of two matmuls";
        return failure();
      }
      summands.insert(op.getOperand(0));
      summands.insert(op.getOperand(1));
      summands.insert(op.getResult(0));
      from = kSummed;
      plan.sum = op.getResult(0);
    }
    owner[op.getResult(0)] = from;
  }
  if (plan.problems.empty()) {
    why = "no kiln.matmul";
    return failure();
  }
  MatmulOp first = plan.problems.front().matmul;
  for (GemmProblem &problem : plan.problems) {
    auto lhs = dyn_cast<BlockArgument>(problem.matmul.getLhs());
    auto rhs = dyn_cast<BlockArgument>(problem.matmul.getRhs());
    if (!lhs || !rhs || lhs.getOwner() != &body || rhs.getOwner() != &body) {
      why = "the matmul's operands must be arguments of the fusion";
      return failure();
    }
    problem.lhsArg = lhs.getArgNumber();
    problem.rhsArg = rhs.getArgNumber();
    if (lhs.getType() != first.getLhs().getType() ||
        rhs.getType() != first.getRhs().getType() ||
        problem.matmul.getTransposeLhs() != first.getTransposeLhs() ||
        problem.matmul.getTransposeRhs() != first.getTransposeRhs()) {
      why = "the matmuls of one fusion must have the same operand types and "
            "transposes";
      return failure();
    }
  }
  plan.transposeLhs = first.getTransposeLhs();
  plan.transposeRhs = first.getTransposeRhs();
  plan.elementType = elementTypeOf(first.getResult());
  if (!isFloatElement(plan.elementType) ||
      elementTypeOf(first.getLhs()) != plan.elementType ||
      elementTypeOf(first.getRhs()) != plan.elementType) {
    why = "the matmul must be f32, bf16 or f16 throughout";
    return failure();
  }
  ArrayRef<int64_t> out = shapeOf(first.getResult());
  ArrayRef<int64_t> lhsShape = shapeOf(first.getLhs()),
                    rhsShape = shapeOf(first.getRhs());
  if (out.size() < 2 || lhsShape.size() < 2 || rhsShape.size() < 2) {
    why = "the matmul's operands must have rank >= 2";
    return failure();
  }
  plan.outShape.assign(out.begin(), out.end());
  plan.m = out[out.size() - 2];
  plan.n = out[out.size() - 1];
  plan.k = plan.transposeLhs ? lhsShape[lhsShape.size() - 2]
                             : lhsShape[lhsShape.size() - 1];
  ArrayRef<int64_t> outBatch = out.drop_back(2);
  plan.batch = product(outBatch);
  plan.lhsBatchStrides = broadcastStrides(lhsShape.drop_back(2), outBatch);
  plan.rhsBatchStrides = broadcastStrides(rhsShape.drop_back(2), outBatch);

  // Every value is evaluated at an element of the product.
  for (Operation &op : body.without_terminator())
    if (!isa<MatmulOp>(op) && !broadcastsTo(shapeOf(op.getResult(0)), out)) {
      why = "'" + op.getName().getStringRef().str() +
            "' computes a value that does not broadcast to the product";
      return failure();
    }
  if (plan.sum) {
    // One tree of adds over every product, each summand used once, and the
    // epilogue after it.
    for (Value summand : summands)
      if (summand != plan.sum && !summand.hasOneUse()) {
        why = "a summed product is used besides the sum";
        return failure();
      }
    for (const GemmProblem &problem : plan.problems)
      if (!summands.contains(MatmulOp(problem.matmul).getResult())) {
        why = "a matmul whose product is not in the sum of the others";
        return failure();
      }
    for (Value summand : summands)
      if (summand != plan.sum && summand.hasOneUse() &&
          !summands.contains((*summand.getUsers().begin())->getResult(0))) {
        why = "two sums of products";
        return failure();
      }
  }
  for (auto [index, value] :
       llvm::enumerate(body.getTerminator()->getOperands())) {
    auto found = owner.find(value);
    int o = found == owner.end() ? -1 : found->second;
    if (isa<BlockArgument>(value) || o < 0) {
      why = "a yielded value is not computed from a matmul's product";
      return failure();
    }
    if (shapeOf(value) != out || !isFloatElement(elementTypeOf(value))) {
      why = "a yielded value must be a float tensor of the product's shape";
      return failure();
    }
    if (plan.sum && o != kSummed) {
      why = "a yielded value is computed from a product that is also summed";
      return failure();
    }
    plan.problems[plan.sum ? 0 : o].results.push_back(index);
  }
  for (const GemmProblem &problem : plan.problems)
    if (problem.results.empty() && !plan.sum) {
      why = "a matmul whose product no result needs";
      return failure();
    }
  return plan;
}

//===----------------------------------------------------------------------===//
// Source helpers
//===----------------------------------------------------------------------===//

std::string cudaType(Type type) {
  if (type.isBF16())
    return "__nv_bfloat16";
  if (type.isF16())
    return "__half";
  return "float";
}

/// `value` (an f32 expression) rounded to a float element type.
std::string roundTo(Type type, const std::string &value) {
  if (type.isBF16())
    return "kiln_load(__float2bfloat16_rn(" + value + "))";
  if (type.isF16())
    return "kiln_load(__float2half_rn(" + value + "))";
  return value;
}

/// Body of a device function computing an element offset from a row-major
/// coordinate decomposition. `index` is the linear index over `dims`;
/// `strides` (one per dim) weight the coordinates.
std::string offsetBody(ArrayRef<int64_t> dims, ArrayRef<int64_t> strides,
                       const std::string &index) {
  bool any = llvm::any_of(strides, [](int64_t s) { return s != 0; });
  if (!any)
    return "  return 0;\n";
  // Dense row-major strides: the offset is the index itself times the
  // innermost stride.
  SmallVector<int64_t> dense(dims.size());
  int64_t stride = strides.empty() ? 1 : strides.back();
  for (size_t i = 0; i < dims.size(); ++i) {
    dense[dims.size() - 1 - i] = stride;
    stride *= dims[dims.size() - 1 - i];
  }
  if (ArrayRef<int64_t>(dense) == strides)
    return "  return " + index + " * " + std::to_string(strides.back()) + ";\n";
  std::string text = "  kg_idx rest = " + index + ", off = 0;\n";
  for (size_t i = 0; i < dims.size(); ++i) {
    size_t d = dims.size() - 1 - i;
    if (strides[d] != 0)
      text += "  off += (rest % " + std::to_string(dims[d]) + ") * " +
              std::to_string(strides[d]) + ";\n";
    if (i + 1 < dims.size())
      text += "  rest /= " + std::to_string(dims[d]) + ";\n";
  }
  return text + "  return off;\n";
}

//===----------------------------------------------------------------------===//
// Epilogue writer
//===----------------------------------------------------------------------===//

/// Writes the per-element epilogue as device functions, with the shared
/// ScalarEmitter evaluating the element-wise ops at output element (r, c):
///   kg_epilogue<g>(p, r, c, acc, res): the values problem g yields at row
///   r (= batch * M + m) and column c, given its f32 product `acc`;
///   kg_store(p, r, c, acc) / kg_store_pair(p, r, c, acc0, acc1): compute
///   and store (pairs of adjacent columns with one vector store when legal);
///   kg_store_pair_in: the same for a pair known to lie inside the output
///   (no column test, so that a kernel can run many pairs in one block).
/// With several problems, rows are stacked problem after problem (r =
/// g * KG_OUT_ROWS + row of problem g) and the stores dispatch on g.
class EpilogueWriter {
public:
  EpilogueWriter(const GemmPlan &plan, FusionOp fusion)
      : plan(plan), fusion(fusion) {}

  FailureOr<std::string> write() {
    std::string globals, text;
    // One epilogue per problem, or one after the sum of the products.
    size_t problems = plan.sum ? 1 : plan.problems.size();
    for (size_t g = 0; g < problems; ++g) {
      FailureOr<std::string> functions = writeProblem(g, globals);
      if (failed(functions))
        return failure();
      text += *functions;
    }
    if (problems == 1)
      return globals + text;
    // Dispatch on the problem of a stacked row.
    auto dispatch = [&](const char *name, const char *params,
                        const char *args) {
      std::string t = std::string("__device__ __forceinline__ void ") + name +
                      "(const KgParams &p, kg_idx r, kg_idx c, " + params +
                      ") {\n" + "  const kg_idx g = r / KG_OUT_ROWS;\n" +
                      "  r -= g * KG_OUT_ROWS;\n  switch (g) {\n";
      for (size_t g = 0; g < problems; ++g)
        t += "  case " + std::to_string(g) + ": " + name + std::to_string(g) +
             "(p, r, c, " + args + "); break;\n";
      return t + "  }\n}\n";
    };
    text += dispatch("kg_store", "float acc", "acc");
    text += dispatch("kg_store_pair", "float acc0, float acc1", "acc0, acc1");
    text +=
        dispatch("kg_store_pair_in", "float acc0, float acc1", "acc0, acc1");
    return globals + text;
  }

private:
  /// The functions of problem `g` (suffixed with g when there are several);
  /// tables the statements use go to `globals`.
  FailureOr<std::string> writeProblem(size_t g, std::string &globals) {
    const GemmProblem &problem = plan.problems[g];
    Block &body = fusion.getBody().front();
    std::string suffix =
        plan.sum || plan.problems.size() == 1 ? "" : std::to_string(g);
    ScalarEmitter emitter(plan.outShape, "kg_e" + std::to_string(g) + "_",
                          "kg_idx");
    // Coordinates of the element from its row r and column c.
    SmallVector<std::string> coords;
    size_t rank = plan.outShape.size();
    int64_t stride = 1;
    SmallVector<int64_t> rowStrides(rank - 1);
    for (size_t d = rank - 1; d-- > 0;) {
      rowStrides[d] = stride;
      stride *= plan.outShape[d];
    }
    for (size_t d = 0; d + 1 < rank; ++d) {
      std::string c = rowStrides[d] == 1
                          ? std::string("r")
                          : "(r / " + std::to_string(rowStrides[d]) + ")";
      if (d > 0)
        c = "(" + c + " % " + std::to_string(plan.outShape[d]) + ")";
      coords.push_back(c);
    }
    coords.push_back("c");
    emitter.setIndex(coords, "(r * KG_N + c)");
    emitter.bindValue(
        plan.sum ? plan.sum : MatmulOp(problem.matmul).getResult(), "v0");
    for (BlockArgument argument : body.getArguments())
      emitter.bindBuffer(argument,
                         "p.in" + std::to_string(argument.getArgNumber()));

    std::string statements;
    SmallVector<std::string> values;
    Operation *yield = body.getTerminator();
    for (unsigned result : problem.results) {
      FailureOr<std::string> expr =
          emitter.emit(yield->getOperand(result), statements, 2);
      if (failed(expr))
        return failure();
      values.push_back(*expr);
    }
    globals += emitter.globals();

    std::string text;
    llvm::raw_string_ostream os(text);
    size_t count = problem.results.size();
    os << "__device__ __forceinline__ void kg_epilogue" << suffix
       << "(const KgParams &p, kg_idx r, kg_idx c, float acc, float (&res)["
       << count << "]) {\n";
    os << "  // " << (plan.sum ? "the sum of the products" : "kiln.matmul")
       << ", rounded once to its element type\n";
    os << "  const float v0 = " << roundTo(plan.elementType, "acc") << ";\n";
    os << statements;
    for (auto [i, value] : llvm::enumerate(values))
      os << "  res[" << i << "] = " << value << ";\n";
    os << "}\n\n";

    os << "__device__ __forceinline__ void kg_store" << suffix
       << "(const KgParams &p, kg_idx r, kg_idx c, float acc) {\n"
       << "  float res[" << count << "];\n"
       << "  kg_epilogue" << suffix << "(p, r, c, acc, res);\n";
    for (auto [i, result] : llvm::enumerate(problem.results))
      os << "  kiln_store(p.out" << result << " + r * KG_N + c, res[" << i
         << "]);\n";
    os << "}\n\n";
    os << "// Columns c and c + 1 (c even), both inside the output.\n"
       << "__device__ __forceinline__ void kg_store_pair_in" << suffix
       << "(const KgParams &p, kg_idx r, kg_idx c, float acc0, float acc1) {\n"
       << "  float res0[" << count << "], res1[" << count << "];\n"
       << "  kg_epilogue" << suffix << "(p, r, c, acc0, res0);\n"
       << "  kg_epilogue" << suffix << "(p, r, c + 1, acc1, res1);\n";
    for (auto [i, result] : llvm::enumerate(problem.results)) {
      std::string at = "p.out" + std::to_string(result) + " + r * KG_N + c";
      std::string r0 = "res0[" + std::to_string(i) + "]";
      std::string r1 = "res1[" + std::to_string(i) + "]";
      if (plan.n % 2 == 0)
        os << "  kg_store2(" << at << ", " << r0 << ", " << r1 << ");\n";
      else
        os << "  kiln_store(" << at << ", " << r0 << ");\n"
           << "  kiln_store(" << at << " + 1, " << r1 << ");\n";
    }
    os << "}\n\n";
    os << "// Columns c and c + 1 (c even); c + 1 may be past the end.\n"
       << "__device__ __forceinline__ void kg_store_pair" << suffix
       << "(const KgParams &p, kg_idx r, kg_idx c, float acc0, float acc1) {\n"
       << "  if (c + 1 < KG_N)\n"
       << "    kg_store_pair_in" << suffix << "(p, r, c, acc0, acc1);\n"
       << "  else if (c < KG_N)\n"
       << "    kg_store" << suffix << "(p, r, c, acc0);\n"
       << "}\n\n";
    return text;
  }

  const GemmPlan &plan;
  FusionOp fusion;
};

/// Device helpers of the stores.
constexpr const char *kEpilogueHelpers = R"cuda(
// Two adjacent elements with one store (p is aligned to two elements).
__device__ __forceinline__ void kg_store2(float *p, float a, float b) {
  *reinterpret_cast<float2 *>(p) = make_float2(a, b);
}
__device__ __forceinline__ void kg_store2(__nv_bfloat16 *p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void kg_store2(__half *p, float a, float b) {
  *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(a, b);
}
)cuda";

//===----------------------------------------------------------------------===//
// Kernel templates
//===----------------------------------------------------------------------===//

/// Tile mapping, operand shapes and the split-K partial stores shared by
/// every GEMM kernel.
constexpr const char *kCommon = R"cuda(
constexpr kg_idx KG_TILES_M = (KG_ROWS + KG_BM - 1) / KG_BM;
constexpr kg_idx KG_TILES_N = (KG_N + KG_BN - 1) / KG_BN;
// K tiles of one problem, and of the concatenated K of summed problems.
constexpr int KG_KT = (int)((KG_K + KG_BK - 1) / KG_BK);
constexpr int KG_KT_ALL = KG_KSUMS * KG_KT;
// Outputs of every problem, rows stacked problem after problem.
constexpr kg_idx KG_TOTAL = KG_GROUPS * KG_OUT_ROWS * KG_N;
// Global matrices of one batch: A is [rows][K] or [K][rows], B [N][K] or [K][N].
constexpr kg_idx KG_A_GROWS = KG_A_KMAJOR ? KG_ROWS : KG_K;
constexpr kg_idx KG_A_GCOLS = KG_A_KMAJOR ? KG_K : KG_ROWS;
constexpr kg_idx KG_B_GROWS = KG_B_KMAJOR ? KG_N : KG_K;
constexpr kg_idx KG_B_GCOLS = KG_B_KMAJOR ? KG_K : KG_N;

// Block index -> (tile row, tile column), KG_GROUP_M tile rows at a time so
// that concurrently running blocks share A and B tiles in L2.
__device__ __forceinline__ void kg_tile(kg_idx pid, kg_idx &tm, kg_idx &tn) {
  const kg_idx group = pid / (KG_GROUP_M * KG_TILES_N);
  const kg_idx first = group * KG_GROUP_M;
  const kg_idx size = KG_TILES_M - first < KG_GROUP_M ? KG_TILES_M - first : KG_GROUP_M;
  const kg_idx local = pid % (KG_GROUP_M * KG_TILES_N);
  tm = first + local % size;
  tn = local / size;
}

// The operand matrices of K tile kt of GEMM batch b and the tile's first k.
// When the products of several problems are summed (KG_KSUMS > 1), tile kt
// belongs to problem kt / KG_KT: one accumulation over their concatenated K.
__device__ __forceinline__ void kg_tile_operands(const KgParams &p, kg_idx b, int kt,
                                                 const kg_t *&a, const kg_t *&bm, kg_idx &k0) {
  if constexpr (KG_KSUMS == 1) {
    a = kg_lhs(p, b);
    bm = kg_rhs(p, b);
    k0 = (kg_idx)kt * KG_BK;
  } else {
    const int g = kt / (KG_KT > 0 ? KG_KT : 1);
    a = kg_lhs(p, g * KG_GEMM_BATCH + b);
    bm = kg_rhs(p, g * KG_GEMM_BATCH + b);
    k0 = (kg_idx)(kt - g * KG_KT) * KG_BK;
  }
}

// Product values at output row r, columns c and c + 1 (c even): the fused
// epilogue, or the f32 partial product of split `split`. INSIDE: both
// columns are known to lie inside the output (no test).
template <bool INSIDE = false>
__device__ __forceinline__ void kg_emit_pair(const KgParams &p, int split, kg_idx r,
                                             kg_idx c, float v0, float v1) {
  if constexpr (KG_SPLIT == 1) {
    if constexpr (INSIDE)
      kg_store_pair_in(p, r, c, v0, v1);
    else
      kg_store_pair(p, r, c, v0, v1);
  } else {
    float *dst = p.scratch + split * KG_TOTAL + r * KG_N + c;
    if (INSIDE || c + 1 < KG_N) {
      if constexpr (KG_N % 2 == 0) {
        *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1);
      } else {
        dst[0] = v0;
        dst[1] = v1;
      }
    } else if (c < KG_N) {
      dst[0] = v0;
    }
  }
}
)cuda";

/// The tensor-core kernel (bf16/f16 m16n8k16, tf32 m16n8k8).
constexpr const char *kTensorCoreKernel = R"cuda(
constexpr int KG_THREADS = KG_WARPS_M * KG_WARPS_N * 32;
constexpr int KG_WM = KG_BM / KG_WARPS_M, KG_WN = KG_BN / KG_WARPS_N;
constexpr int KG_MT = KG_WM / 16, KG_NT = KG_WN / 8;
constexpr int KG_KSTEP = KG_TF32 ? 8 : 16;
constexpr int KG_VEC = 16 / (int)sizeof(kg_t);
// Shared tiles keep each operand's global layout (rows along its contiguous
// dimension), padded by 16 bytes per row (8 words for tf32 tiles read along
// M/N) so that ldmatrix and the fragment loads are free of bank conflicts.
constexpr int KG_PAD_K = KG_TF32 ? 4 : 8;
constexpr int KG_PAD_MN = 8;
constexpr int KG_A_ROWS = KG_A_KMAJOR ? KG_BM : KG_BK;
constexpr int KG_A_COLS = KG_A_KMAJOR ? KG_BK : KG_BM;
constexpr int KG_A_LD = KG_A_COLS + (KG_A_KMAJOR ? KG_PAD_K : KG_PAD_MN);
constexpr int KG_B_ROWS = KG_B_KMAJOR ? KG_BN : KG_BK;
constexpr int KG_B_COLS = KG_B_KMAJOR ? KG_BK : KG_BN;
constexpr int KG_B_LD = KG_B_COLS + (KG_B_KMAJOR ? KG_PAD_K : KG_PAD_MN);
constexpr int KG_A_STAGE = KG_A_ROWS * KG_A_LD;
constexpr int KG_B_STAGE = KG_B_ROWS * KG_B_LD;
static_assert(KG_MT >= 1 && KG_NT % 2 == 0 && KG_BK % KG_KSTEP == 0, "bad warp tile");
static_assert((KG_A_LD * (int)sizeof(kg_t)) % 16 == 0 && (KG_B_LD * (int)sizeof(kg_t)) % 16 == 0,
              "shared rows must stay 16-byte aligned");

// Copies rows [r0, r0 + R) x columns [c0, c0 + C) of a GROWS x GCOLS row-major
// matrix into a shared tile with leading dimension LD; outside the matrix the
// tile is zero. VEC: 16-byte cp.async (GCOLS % KG_VEC == 0, so a chunk is
// either wholly inside or wholly outside); otherwise element by element.
template <int R, int C, int LD, kg_idx GROWS, kg_idx GCOLS, bool VEC>
__device__ __forceinline__ void kg_load_tile(kg_t *s, const kg_t *__restrict__ g, kg_idx r0,
                                             kg_idx c0, int tid) {
  if constexpr (VEC) {
    constexpr int PER_ROW = C / KG_VEC;
    constexpr int CHUNKS = R * PER_ROW;
    static_assert(C % KG_VEC == 0 && CHUNKS % KG_THREADS == 0, "chunks must divide among threads");
#pragma unroll
    for (int i = 0; i < CHUNKS / KG_THREADS; ++i) {
      const int chunk = tid + i * KG_THREADS;
      const int row = chunk / PER_ROW, col = (chunk % PER_ROW) * KG_VEC;
      const kg_idx gr = r0 + row, gc = c0 + col;
      const bool valid = gr < GROWS && gc < GCOLS;
      const kg_t *src = valid ? g + gr * GCOLS + gc : g;
      const unsigned dst = (unsigned)__cvta_generic_to_shared(s + row * LD + col);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                   "r"(valid ? 16 : 0));
    }
  } else {
    constexpr int ELEMS = R * C;
    static_assert(ELEMS % KG_THREADS == 0, "elements must divide among threads");
#pragma unroll 4
    for (int i = 0; i < ELEMS / KG_THREADS; ++i) {
      const int e = tid + i * KG_THREADS;
      const int row = e / C, col = e % C;
      const kg_idx gr = r0 + row, gc = c0 + col;
      s[row * LD + col] = (gr < GROWS && gc < GCOLS) ? g[gr * GCOLS + gc] : kg_t(0.0f);
    }
  }
}

__device__ __forceinline__ void kg_ldmatrix_x4(unsigned (&r)[4], const kg_t *p) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void kg_ldmatrix_x4_trans(unsigned (&r)[4], const kg_t *p) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ unsigned kg_tf32(kg_t x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"((float)x));
  return r;
}
__device__ __forceinline__ void kg_mma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (KG_KIND == 0) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (KG_KIND == 1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// A (16 x KSTEP at rows mBase, k kk) and B (KSTEP x 8 at columns nBase) from
// shared tiles into mma fragments.
__device__ __forceinline__ void kg_fragment_a(unsigned (&a)[4], const kg_t *t, int mBase, int kk,
                                              int lane) {
  if constexpr (KG_TF32) {
    const int g = lane >> 2, q = lane & 3;
    // a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = mBase + g + (i & 1) * 8, k = kk + q + (i >> 1) * 4;
      a[i] = kg_tf32(KG_A_KMAJOR ? t[m * KG_A_LD + k] : t[k * KG_A_LD + m]);
    }
  } else if constexpr (KG_A_KMAJOR) {
    // Matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15) in fragment order.
    kg_ldmatrix_x4(a, t + (mBase + (lane & 15)) * KG_A_LD + kk + (lane >> 4) * 8);
  } else {
    const int q = lane >> 3;
    kg_ldmatrix_x4_trans(a, t + (kk + (q >> 1) * 8 + (lane & 7)) * KG_A_LD + mBase + (q & 1) * 8);
  }
}
// Fragments of two adjacent 8-column B tiles (nBase and nBase + 8).
__device__ __forceinline__ void kg_fragment_b(unsigned (&b0)[2], unsigned (&b1)[2], const kg_t *t,
                                              int nBase, int kk, int lane) {
  if constexpr (KG_TF32) {
    const int g = lane >> 2, q = lane & 3;
    // b0 (k = q, n = g), b1 (k = q + 4, n = g)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int n = nBase + j * 8 + g, k = kk + q + i * 4;
        (j ? b1 : b0)[i] = kg_tf32(KG_B_KMAJOR ? t[n * KG_B_LD + k] : t[k * KG_B_LD + n]);
      }
  } else {
    unsigned r[4];
    const int q = lane >> 3;
    if constexpr (KG_B_KMAJOR)
      kg_ldmatrix_x4(r, t + (nBase + (q >> 1) * 8 + (lane & 7)) * KG_B_LD + kk + (q & 1) * 8);
    else
      kg_ldmatrix_x4_trans(r, t + (kk + (q & 1) * 8 + (lane & 7)) * KG_B_LD + nBase + (q >> 1) * 8);
    b0[0] = r[0];
    b0[1] = r[1];
    b1[0] = r[2];
    b1[1] = r[3];
  }
}

extern "C" __global__ void __launch_bounds__(KG_THREADS, KG_MIN_BLOCKS) KG_NAME(KG_PARAMS) {
  kiln_wait_for_predecessor();
  const KgParams p{KG_PARAM_NAMES};
  extern __shared__ __align__(16) unsigned char kg_smem[];
  kg_t *sA = reinterpret_cast<kg_t *>(kg_smem);
  kg_t *sB = sA + KG_STAGES * KG_A_STAGE;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warpM = warp / KG_WARPS_N, warpN = warp % KG_WARPS_N;
  kg_idx tm, tn;
  kg_tile(blockIdx.x, tm, tn);
  const kg_idx m0 = tm * KG_BM, n0 = tn * KG_BN;

  for (long long z = blockIdx.z; z < (long long)KG_GROUPS * KG_GEMM_BATCH * KG_SPLIT;
       z += gridDim.z) {
    const kg_idx b = (kg_idx)(z / KG_SPLIT);
    const int split = (int)(z % KG_SPLIT);
    const int ktBegin = split * KG_KT_PER_SPLIT;
    const int ktEnd =
        KG_KT_ALL < ktBegin + KG_KT_PER_SPLIT ? KG_KT_ALL : ktBegin + KG_KT_PER_SPLIT;
    const int nk = ktEnd > ktBegin ? ktEnd - ktBegin : 0;
    auto loadStage = [&](int stage, int kt) {
      const kg_t *gA, *gB;
      kg_idx k0;
      kg_tile_operands(p, b, kt, gA, gB, k0);
      kg_t *tA = sA + stage * KG_A_STAGE;
      kg_t *tB = sB + stage * KG_B_STAGE;
      if constexpr (KG_A_KMAJOR)
        kg_load_tile<KG_A_ROWS, KG_A_COLS, KG_A_LD, KG_A_GROWS, KG_A_GCOLS, KG_A_VEC>(tA, gA, m0, k0, tid);
      else
        kg_load_tile<KG_A_ROWS, KG_A_COLS, KG_A_LD, KG_A_GROWS, KG_A_GCOLS, KG_A_VEC>(tA, gA, k0, m0, tid);
      if constexpr (KG_B_KMAJOR)
        kg_load_tile<KG_B_ROWS, KG_B_COLS, KG_B_LD, KG_B_GROWS, KG_B_GCOLS, KG_B_VEC>(tB, gB, n0, k0, tid);
      else
        kg_load_tile<KG_B_ROWS, KG_B_COLS, KG_B_LD, KG_B_GROWS, KG_B_GCOLS, KG_B_VEC>(tB, gB, k0, n0, tid);
    };

    float acc[KG_MT][KG_NT][4];
#pragma unroll
    for (int i = 0; i < KG_MT; ++i)
#pragma unroll
      for (int j = 0; j < KG_NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          acc[i][j][e] = 0.0f;

    // Pipeline: tiles 0 .. STAGES-2 in flight, then per iteration wait for
    // the oldest, refill the stage consumed in the previous iteration, and
    // multiply. One commit group per tile (empty groups at the end).
#pragma unroll
    for (int s = 0; s < KG_STAGES - 1; ++s) {
      if (s < nk)
        loadStage(s, ktBegin + s);
      asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int i = 0; i < nk; ++i) {
      asm volatile("cp.async.wait_group %0;\n" ::"n"(KG_STAGES - 2));
      __syncthreads();
      const int next = i + KG_STAGES - 1;
      if (next < nk)
        loadStage(next % KG_STAGES, ktBegin + next);
      asm volatile("cp.async.commit_group;\n" ::);
      const kg_t *tA = sA + (i % KG_STAGES) * KG_A_STAGE;
      const kg_t *tB = sB + (i % KG_STAGES) * KG_B_STAGE;
#pragma unroll
      for (int kk = 0; kk < KG_BK; kk += KG_KSTEP) {
        unsigned af[KG_MT][4], bf[KG_NT][2];
#pragma unroll
        for (int mt = 0; mt < KG_MT; ++mt)
          kg_fragment_a(af[mt], tA, warpM * KG_WM + mt * 16, kk, lane);
#pragma unroll
        for (int nt = 0; nt < KG_NT; nt += 2)
          kg_fragment_b(bf[nt], bf[nt + 1], tB, warpN * KG_WN + nt * 8, kk, lane);
#pragma unroll
        for (int mt = 0; mt < KG_MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < KG_NT; ++nt)
            kg_mma(acc[mt][nt], af[mt], bf[nt]);
      }
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
    // The next batch iteration refills the stages.
    __syncthreads();

    // Accumulator (g, 2q..2q+1) and (g + 8, 2q..2q+1) of each 16x8 tile.
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int mt = 0; mt < KG_MT; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const kg_idx row = m0 + warpM * KG_WM + mt * 16 + g + half * 8;
        if (row >= KG_ROWS)
          continue;
        const kg_idx r = b * KG_ROWS + row;
#pragma unroll
        for (int nt = 0; nt < KG_NT; ++nt) {
          const kg_idx c = n0 + warpN * KG_WN + nt * 8 + q * 2;
          kg_emit_pair(p, split, r, c, acc[mt][nt][half * 2], acc[mt][nt][half * 2 + 1]);
        }
      }
  }
}
)cuda";

/// The exact f32 kernel: FMA on CUDA cores, TM x TN outputs per thread.
/// With KG_SLICES > 1 the block's threads form that many K slices: each
/// shared K tile (KG_BK deep) is split into KG_SLICE_K rows per slice, and at
/// the end slice 0 adds the other slices' sums in slice order (split-K
/// within the block: parallelism for small, deep problems in one launch).
constexpr const char *kSimtKernel = R"cuda(
constexpr int KG_TX = KG_BN / KG_TN;
constexpr int KG_SLICE_THREADS = (KG_BM / KG_TM) * KG_TX;
constexpr int KG_THREADS = KG_SLICE_THREADS * KG_SLICES;
constexpr int KG_SLICE_K = KG_BK / KG_SLICES;
static_assert(KG_SLICE_K * KG_SLICES == KG_BK, "slices must divide the K tile");
constexpr int KG_EA = KG_BM * KG_BK / KG_THREADS;
constexpr int KG_EB = KG_BN * KG_BK / KG_THREADS;
static_assert(KG_BM * KG_BK % KG_THREADS == 0 && KG_BN * KG_BK % KG_THREADS == 0, "bad tile");
static_assert(KG_TM % 4 == 0 && KG_TN % 4 == 0, "thread tiles are float4 groups");
// Thread (ty, tx) owns rows ty*4 + {0..3} of each of the TM/4 row groups
// (BM / (TM/4) apart), and the same for columns: float4 shared reads without
// bank conflicts.
__device__ __forceinline__ int kg_m_of(int ty, int i) { return (i / 4) * (KG_BM / (KG_TM / 4)) + ty * 4 + i % 4; }
__device__ __forceinline__ int kg_n_of(int tx, int j) { return (j / 4) * (KG_BN / (KG_TN / 4)) + tx * 4 + j % 4; }

extern "C" __global__ void __launch_bounds__(KG_THREADS, KG_MIN_BLOCKS) KG_NAME(KG_PARAMS) {
  kiln_wait_for_predecessor();
  const KgParams p{KG_PARAM_NAMES};
  // Dynamic shared memory (its size is the launch's), so that kernels
  // merged into one launch share it instead of adding up.
  // [buffer][k][m or n], m/n contiguous; +4 keeps float4 alignment and
  // spreads the transposing stores over the banks.
  extern __shared__ __align__(16) unsigned char kg_smem[];
  typedef float KgTileA[2][KG_BK][KG_BM + 4];
  typedef float KgTileB[2][KG_BK][KG_BN + 4];
  KgTileA &sA = *reinterpret_cast<KgTileA *>(kg_smem);
  KgTileB &sB = *reinterpret_cast<KgTileB *>(kg_smem + sizeof(KgTileA));
  // The other slices' sums, [slice - 1][output of the thread][thread].
  float *sRed = reinterpret_cast<float *>(kg_smem + sizeof(KgTileA) + sizeof(KgTileB));
  const int tid = threadIdx.x, slice = tid / KG_SLICE_THREADS, lt = tid % KG_SLICE_THREADS;
  const int ty = lt / KG_TX, tx = lt % KG_TX;
  kg_idx tm, tn;
  kg_tile(blockIdx.x, tm, tn);
  const kg_idx m0 = tm * KG_BM, n0 = tn * KG_BN;

  for (long long z = blockIdx.z; z < (long long)KG_GROUPS * KG_GEMM_BATCH * KG_SPLIT;
       z += gridDim.z) {
    const kg_idx b = (kg_idx)(z / KG_SPLIT);
    const int split = (int)(z % KG_SPLIT);
    const int ktBegin = split * KG_KT_PER_SPLIT;
    const int ktEnd =
        KG_KT_ALL < ktBegin + KG_KT_PER_SPLIT ? KG_KT_ALL : ktBegin + KG_KT_PER_SPLIT;
    const int nk = ktEnd > ktBegin ? ktEnd - ktBegin : 0;
    // Element e of a tile: consecutive threads walk the global contiguous
    // dimension (coalesced); (ml, kl) / (nl, kl) are its tile coordinates.
    float ra[KG_EA], rb[KG_EB];
    auto fetch = [&](int kt) {
      const float *gA, *gB;
      kg_idx k0;
      kg_tile_operands(p, b, kt, gA, gB, k0);
#pragma unroll
      for (int i = 0; i < KG_EA; ++i) {
        const int e = tid + i * KG_THREADS;
        const int kl = KG_A_KMAJOR ? e % KG_BK : e / KG_BM;
        const int ml = KG_A_KMAJOR ? e / KG_BK : e % KG_BM;
        const kg_idx gm = m0 + ml, gk = k0 + kl;
        ra[i] = (gm < KG_ROWS && gk < KG_K) ? gA[KG_A_KMAJOR ? gm * KG_K + gk : gk * KG_ROWS + gm] : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < KG_EB; ++i) {
        const int e = tid + i * KG_THREADS;
        const int kl = KG_B_KMAJOR ? e % KG_BK : e / KG_BN;
        const int nl = KG_B_KMAJOR ? e / KG_BK : e % KG_BN;
        const kg_idx gn = n0 + nl, gk = k0 + kl;
        rb[i] = (gn < KG_N && gk < KG_K) ? gB[KG_B_KMAJOR ? gn * KG_K + gk : gk * KG_N + gn] : 0.0f;
      }
    };
    auto stash = [&](int buf) {
#pragma unroll
      for (int i = 0; i < KG_EA; ++i) {
        const int e = tid + i * KG_THREADS;
        sA[buf][KG_A_KMAJOR ? e % KG_BK : e / KG_BM][KG_A_KMAJOR ? e / KG_BK : e % KG_BM] = ra[i];
      }
#pragma unroll
      for (int i = 0; i < KG_EB; ++i) {
        const int e = tid + i * KG_THREADS;
        sB[buf][KG_B_KMAJOR ? e % KG_BK : e / KG_BN][KG_B_KMAJOR ? e / KG_BK : e % KG_BN] = rb[i];
      }
    };

    float acc[KG_TM][KG_TN];
#pragma unroll
    for (int i = 0; i < KG_TM; ++i)
#pragma unroll
      for (int j = 0; j < KG_TN; ++j)
        acc[i][j] = 0.0f;
    if (nk > 0) {
      fetch(ktBegin);
      stash(0);
    }
    __syncthreads();
    for (int i = 0; i < nk; ++i) {
      const int buf = i & 1;
      if (i + 1 < nk)
        fetch(ktBegin + i + 1);
#pragma unroll
      for (int kk = slice * KG_SLICE_K; kk < (slice + 1) * KG_SLICE_K; ++kk) {
        float a[KG_TM], bv[KG_TN];
#pragma unroll
        for (int v = 0; v < KG_TM / 4; ++v) {
          const float4 x = *reinterpret_cast<const float4 *>(&sA[buf][kk][kg_m_of(ty, v * 4)]);
          a[v * 4] = x.x, a[v * 4 + 1] = x.y, a[v * 4 + 2] = x.z, a[v * 4 + 3] = x.w;
        }
#pragma unroll
        for (int v = 0; v < KG_TN / 4; ++v) {
          const float4 x = *reinterpret_cast<const float4 *>(&sB[buf][kk][kg_n_of(tx, v * 4)]);
          bv[v * 4] = x.x, bv[v * 4 + 1] = x.y, bv[v * 4 + 2] = x.z, bv[v * 4 + 3] = x.w;
        }
#pragma unroll
        for (int u = 0; u < KG_TM; ++u)
#pragma unroll
          for (int v = 0; v < KG_TN; ++v)
            acc[u][v] = fmaf(a[u], bv[v], acc[u][v]);
      }
      if (i + 1 < nk)
        stash(buf ^ 1);
      __syncthreads();
    }
    if constexpr (KG_SLICES > 1) {
      // sRed is written again only after the next batch iteration's first
      // __syncthreads, which slice 0 reaches after reading it here.
      if (slice > 0) {
#pragma unroll
        for (int u = 0; u < KG_TM; ++u)
#pragma unroll
          for (int v = 0; v < KG_TN; ++v)
            sRed[((slice - 1) * KG_TM * KG_TN + u * KG_TN + v) * KG_SLICE_THREADS + lt] = acc[u][v];
      }
      __syncthreads();
      if (slice > 0)
        continue;
#pragma unroll
      for (int s = 0; s < KG_SLICES - 1; ++s)
#pragma unroll
        for (int u = 0; u < KG_TM; ++u)
#pragma unroll
          for (int v = 0; v < KG_TN; ++v)
            acc[u][v] += sRed[(s * KG_TM * KG_TN + u * KG_TN + v) * KG_SLICE_THREADS + lt];
    }

#pragma unroll
    for (int u = 0; u < KG_TM; ++u) {
      const kg_idx row = m0 + kg_m_of(ty, u);
      if (row >= KG_ROWS)
        continue;
      const kg_idx r = b * KG_ROWS + row;
#pragma unroll
      for (int v = 0; v < KG_TN; v += 2)
        kg_emit_pair(p, split, r, n0 + kg_n_of(tx, v), acc[u][v], acc[u][v + 1]);
    }
  }
}
)cuda";

/// Split-K: adds the partial products in split order and applies the
/// epilogue.
constexpr const char *kSplitReduceKernel = R"cuda(
extern "C" __global__ void __launch_bounds__(256) KG_NAME(KG_PARAMS) {
  kiln_wait_for_predecessor();
  const KgParams p{KG_PARAM_NAMES};
  if constexpr (KG_N % 4 == 0) {
    // Four columns of one row per thread: 16-byte partial loads, paired stores.
    for (kg_idx i = (kg_idx)blockIdx.x * 256 + threadIdx.x; i < KG_TOTAL / 4;
         i += (kg_idx)gridDim.x * 256) {
      float4 acc = reinterpret_cast<const float4 *>(p.scratch)[i];
#pragma unroll
      for (int s = 1; s < KG_SPLIT; ++s) {
        const float4 x = reinterpret_cast<const float4 *>(p.scratch + s * KG_TOTAL)[i];
        acc.x += x.x;
        acc.y += x.y;
        acc.z += x.z;
        acc.w += x.w;
      }
      const kg_idx r = (4 * i) / KG_N, c = (4 * i) % KG_N;
      kg_store_pair(p, r, c, acc.x, acc.y);
      kg_store_pair(p, r, c + 2, acc.z, acc.w);
    }
  } else {
    for (kg_idx i = (kg_idx)blockIdx.x * 256 + threadIdx.x; i < KG_TOTAL;
         i += (kg_idx)gridDim.x * 256) {
      float acc = p.scratch[i];
#pragma unroll
      for (int s = 1; s < KG_SPLIT; ++s)
        acc += p.scratch[s * KG_TOTAL + i];
      kg_store(p, i / KG_N, i % KG_N, acc);
    }
  }
}
)cuda";

//===----------------------------------------------------------------------===//
// Tile configurations
//===----------------------------------------------------------------------===//

/// The kernels a configuration runs on.
enum class Path { Wgmma, MmaSync, Tf32, Simt };

/// One tile configuration: block tile BM x BN x BK; mma.sync/tf32: warps
/// WARPS_M x WARPS_N; wgmma: BM / 64 warpgroups; tensor cores: STAGES shared
/// stages; SIMT: TM x TN outputs per thread. `occupancy` is the blocks per SM
/// the shared memory and registers allow; `efficiency` the fraction of the
/// path's peak a saturated SM reaches with this tile (larger tiles reuse more
/// operands per load).
struct TileConfig {
  Path path;
  int bm, bn, bk;
  int warpsM, warpsN, stages; // tensor cores
  int tm, tn;                 // SIMT
  int occupancy;
  double efficiency;
  int slices = 1; // SIMT: K slices of the block (bk is their total depth)
  int threads() const {
    if (path == Path::Wgmma)
      return bm / 64 * 128;
    return tm ? (bm / tm) * (bn / tn) * slices : warpsM * warpsN * 32;
  }
};

// Two consumer warpgroups of 64 x BN each; four (128x256) or six (128x128)
// stages of 64-deep swizzled tiles fill the shared memory of one block.
const TileConfig kWgmmaConfigs[] = {
    {Path::Wgmma, 128, 256, kWgmmaBlockK, 0, 0, 4, 0, 0, 1, 1.00},
    {Path::Wgmma, 128, 128, kWgmmaBlockK, 0, 0, 6, 0, 0, 1, 0.90},
};
// BK = 32 with four stages: BK = 64 (three stages) makes ptxas spill the
// 128x256 tile's 64x64 warp tiles (255 registers); BK = 32 fits without.
const TileConfig kTensorCoreConfigs[] = {
    {Path::MmaSync, 128, 256, 32, 2, 4, 4, 0, 0, 1, 1.00},
    {Path::MmaSync, 128, 128, 32, 2, 4, 4, 0, 0, 2, 0.90},
    {Path::MmaSync, 64, 64, 32, 2, 2, 4, 0, 0, 4, 0.55},
};
const TileConfig kTf32Configs[] = {
    {Path::Tf32, 128, 128, 32, 2, 4, 3, 0, 0, 1, 1.00},
    {Path::Tf32, 64, 128, 32, 2, 2, 3, 0, 0, 2, 0.80},
    {Path::Tf32, 64, 64, 32, 2, 2, 3, 0, 0, 3, 0.60},
};
const TileConfig kSimtConfigs[] = {
    // ~150 registers (64 accumulators, the staged next tile, the epilogue):
    // capping at 128 for two blocks per SM spills.
    {Path::Simt, 128, 128, 8, 0, 0, 0, 8, 8, 1, 1.00},
    {Path::Simt, 64, 64, 8, 0, 0, 0, 4, 4, 2, 0.60},
    {Path::Simt, 32, 32, 8, 0, 0, 0, 4, 4, 8, 0.35},
    // Four K slices of 8 (256 threads): a small, deep problem (a weight
    // gradient over all rows of a batch) gets 8 warps per tile in one launch
    // instead of a split-K pair of launches. Last, so that ties keep the
    // plain tile.
    {Path::Simt, 32, 32, 32, 0, 0, 0, 4, 4, 2, 0.35, 4},
};

/// Dense peak rates of the paths on an H100/H200 SXM (FLOP/s of the chip).
double pathRate(Path path) {
  switch (path) {
  case Path::Wgmma:
    return 660e12;
  case Path::MmaSync:
    return 450e12;
  case Path::Tf32:
    return 200e12;
  case Path::Simt:
    return 51e12;
  }
  return 51e12;
}

constexpr int kNumSMs = 132; // H100/H200 SXM

struct Choice {
  TileConfig config;
  int split = 1;
  int ktPerSplit = 0;
};

/// Picks the configuration and split-K factor with the lowest modelled
/// time: waves of blocks at the config's per-SM rate (a lone block with few
/// warps does not saturate an SM), plus for split-K the f32 partials'
/// traffic and a second launch. Deterministic (first best wins). The
/// mma.sync, tf32 and SIMT configurations take any shape.
Choice chooseConfig(ArrayRef<TileConfig> configs, int64_t gemmBatch,
                    int64_t rows, int64_t n, int64_t k, int64_t ksums,
                    int64_t outElements) {
  Choice best;
  double bestTime = std::numeric_limits<double>::infinity();
  for (const TileConfig &config : configs) {
    // wgmma tiles only for products that fill one: below that the small
    // mma.sync tiles waste less and start sooner.
    if (config.path == Path::Wgmma && (rows < config.bm || n < config.bn))
      continue;
    int64_t tiles = ((rows + config.bm - 1) / config.bm) *
                    ((n + config.bn - 1) / config.bn) * gemmBatch;
    // K tiles of every summed problem (a tile never spans two).
    int64_t kTiles = ksums * ((k + config.bk - 1) / config.bk);
    for (int split : {1, 2, 3, 4, 6, 8, 12, 16}) {
      if (split > 1 && kTiles / split < 4)
        break;
      int64_t perSplit = kTiles ? (kTiles + split - 1) / split : 0;
      int64_t splits = perSplit ? (kTiles + perSplit - 1) / perSplit : 1;
      if (splits != split)
        continue;
      int64_t blocks = tiles * splits;
      int64_t perSM = (blocks + kNumSMs - 1) / kNumSMs;
      int64_t together = std::min<int64_t>(config.occupancy, perSM);
      int64_t rounds = (perSM + together - 1) / together;
      double warps = config.threads() / 32.0;
      double saturation = std::min(1.0, together * warps / 8.0);
      double work = 2.0 * config.bm * config.bn * config.bk *
                    std::max<int64_t>(perSplit, 1);
      double smRate = pathRate(config.path) / kNumSMs;
      double time =
          rounds * together * work / (smRate * config.efficiency * saturation);
      if (splits > 1)
        time += 8.0 * splits * outElements / 4.0e12 + 2.0e-6;
      if (time < bestTime * 0.999) {
        bestTime = time;
        best = {config, static_cast<int>(splits), static_cast<int>(perSplit)};
      }
    }
  }
  return best;
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

void replaceAll(std::string &text, llvm::StringRef from, llvm::StringRef to) {
  size_t at = 0;
  while ((at = text.find(from.str(), at)) != std::string::npos) {
    text.replace(at, from.size(), to.str());
    at += to.size();
  }
}

/// Names the kernel after a hash of its source (with the name left out), so
/// that identical fusions give identical kernels and distinct ones distinct
/// names.
GeneratedKernel finishKernel(std::string source, llvm::StringRef prefix) {
  std::string name =
      (prefix + "_" + llvm::utohexstr(contentHash(source), /*LowerCase=*/true))
          .str();
  replaceAll(source, "KG_NAME", name);
  return {name, std::move(source)};
}

class GemmEmitter final : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    std::string why;
    return succeeded(analyze(fusion, why));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    std::string why;
    FailureOr<GemmPlan> analyzed = analyze(fusion, why);
    if (failed(analyzed))
      return fusion.emitOpError(
                 "the gemm emitter cannot generate this fusion: ")
             << why;
    const GemmPlan &plan = *analyzed;
    if (archNumber(options.arch) < 80)
      return fusion.emitOpError("the gemm kernels need sm_80 or newer, got '")
             << options.arch << "'";

    GeneratedFusion generated;
    // Problems with outputs of their own (stacked), or summed into one.
    int64_t ksums = plan.sum ? plan.problems.size() : 1;
    int64_t groups = plan.sum ? 1 : plan.problems.size();
    // Of every problem together.
    int64_t outElements = groups * plan.batch * plan.m * plan.n;
    if (outElements == 0)
      return generated; // nothing to compute

    bool isF32 = plan.elementType.isF32();
    bool tensorCores = !isF32 || options.allowTf32;
    bool simt = !tensorCores;
    // Fold the batch into M when every batch shares the rhs and the lhs is
    // dense [batch..., M, K].
    bool fold =
        plan.batch > 1 && !plan.transposeLhs &&
        llvm::all_of(plan.rhsBatchStrides, [](int64_t s) { return s == 0; }) &&
        plan.lhsBatchStrides ==
            broadcastStrides(ArrayRef<int64_t>(plan.outShape).drop_back(2),
                             ArrayRef<int64_t>(plan.outShape).drop_back(2));
    int64_t gemmBatch = fold ? 1 : plan.batch;
    int64_t rows = fold ? plan.batch * plan.m : plan.m;

    // 16-byte copies need the contiguous dimension of an operand to be a
    // multiple of 16 bytes (base pointers are at least 256-byte aligned).
    int vecElements = isF32 ? 4 : 8;
    bool aKMajor = !plan.transposeLhs, bKMajor = plan.transposeRhs;
    bool aVec = (aKMajor ? plan.k : plan.m) % vecElements == 0;
    bool bVec = (bKMajor ? plan.k : plan.n) % vecElements == 0;

    // bf16/f16 on sm_90 may also take the wgmma kernel (sm_90a), which
    // copies whole 16-byte chunks only; the cost model picks per shape.
    SmallVector<TileConfig> configs;
    if (simt)
      configs.append(std::begin(kSimtConfigs), std::end(kSimtConfigs));
    else if (isF32)
      configs.append(std::begin(kTf32Configs), std::end(kTf32Configs));
    else {
      // The wgmma kernel runs one problem (no grouped or summed products).
      if (archNumber(options.arch) == 90 && aVec && bVec && groups == 1 &&
          ksums == 1)
        configs.append(std::begin(kWgmmaConfigs), std::end(kWgmmaConfigs));
      configs.append(std::begin(kTensorCoreConfigs),
                     std::end(kTensorCoreConfigs));
    }
    Choice choice = chooseConfig(configs, groups * gemmBatch, rows, plan.n,
                                 plan.k, ksums, outElements);
    const TileConfig &config = choice.config;
    bool wgmma = config.path == Path::Wgmma;

    // ---- the shared part of every kernel source ----
    Block &body = fusion.getBody().front();
    std::string common;
    llvm::raw_string_ostream os(common);
    os << "// kiln gemm fusion: ";
    if (groups > 1)
      os << groups << " x ";
    os << "kiln.matmul";
    if (plan.transposeLhs)
      os << " transpose_lhs";
    if (plan.transposeRhs)
      os << " transpose_rhs";
    MatmulOp first = plan.problems.front().matmul;
    os << " " << first.getLhs().getType() << ", " << first.getRhs().getType();
    for (Operation &op : body.without_terminator())
      if (!isa<MatmulOp>(op))
        os << "; " << op.getName().getStringRef();
    os << "\n// yields:";
    for (Value value : body.getTerminator()->getOperands())
      os << " " << value.getType();
    os << "\n#include \"kiln/prelude.cuh\"\n#include \"" << kScalarOpsHeader
       << "\"\n";
    os << "// Not every size below is used by every kernel.\n"
          "#pragma nv_diag_suppress 177\n\n";
    os << "typedef " << cudaType(plan.elementType) << " kg_t;\n";
    // 32-bit index math (fewer registers) when every buffer, the scratch
    // and the tile overhang stay far below 2^31 elements.
    int64_t largest = static_cast<int64_t>(choice.split) * outElements;
    for (Value value : fusion.getInputs())
      largest = std::max(largest, product(shapeOf(value)));
    for (Value value : fusion.getResults())
      largest = std::max(largest, product(shapeOf(value)));
    bool narrow = largest <= (int64_t(1) << 30);
    os << "typedef " << (narrow ? "int" : "long long")
       << " kg_idx; // element offsets and indices\n";
    os << "constexpr int KG_KIND = "
       << (plan.elementType.isBF16()  ? 0
           : plan.elementType.isF16() ? 1
                                      : 2)
       << "; // 0 bf16, 1 f16, 2 tf32/f32\n";
    os << "constexpr bool KG_TF32 = "
       << (tensorCores && isF32 ? "true" : "false") << ";\n";
    os << "constexpr kg_idx KG_M = " << plan.m << ";\n";
    os << "constexpr kg_idx KG_N = " << plan.n << ";\n";
    os << "constexpr kg_idx KG_K = " << plan.k << ";\n";
    os << "constexpr kg_idx KG_BATCH = " << plan.batch << ";\n";
    os << "// The GEMM's batch and rows (the batch is folded into the rows "
          "when the rhs is shared).\n";
    os << "constexpr kg_idx KG_GEMM_BATCH = " << gemmBatch << ";\n";
    os << "constexpr kg_idx KG_ROWS = " << rows << ";\n";
    os << "constexpr kg_idx KG_OUT_ROWS = " << plan.batch * plan.m
       << "; // rows of every output, r = batch * M + m\n";
    os << "constexpr kg_idx KG_GROUPS = " << groups
       << "; // problems of one shape in this launch, outputs stacked\n";
    os << "constexpr int KG_KSUMS = " << ksums
       << "; // problems whose products are summed over their concatenated K\n";
    os << "constexpr bool KG_A_KMAJOR = " << (aKMajor ? "true" : "false")
       << "; // lhs stored [M][K]\n";
    os << "constexpr bool KG_B_KMAJOR = " << (bKMajor ? "true" : "false")
       << "; // rhs stored [N][K]\n";
    os << "constexpr bool KG_A_VEC = " << (aVec ? "true" : "false") << ";\n";
    os << "constexpr bool KG_B_VEC = " << (bVec ? "true" : "false") << ";\n";
    os << "constexpr int KG_BM = " << config.bm << ", KG_BN = " << config.bn
       << ", KG_BK = " << config.bk << ";\n";
    if (simt)
      os << "constexpr int KG_TM = " << config.tm << ", KG_TN = " << config.tn
         << ", KG_SLICES = " << config.slices << ";\n";
    else if (wgmma)
      os << "constexpr int KG_STAGES = " << config.stages << ";\n";
    else
      os << "constexpr int KG_WARPS_M = " << config.warpsM
         << ", KG_WARPS_N = " << config.warpsN
         << ", KG_STAGES = " << config.stages << ";\n";
    os << "constexpr int KG_MIN_BLOCKS = " << config.occupancy << ";\n";
    os << "constexpr int KG_SPLIT = " << choice.split
       << ", KG_KT_PER_SPLIT = " << choice.ktPerSplit << ";\n";
    os << "constexpr int KG_GROUP_M = 8;\n\n";

    // Parameters: every operand, every result, then the split-K scratch.
    std::string params, paramNames, structFields;
    for (auto [i, input] : llvm::enumerate(fusion.getInputs())) {
      std::string type = cudaType(elementTypeOf(input));
      if (!isFloatElement(elementTypeOf(input)))
        type = elementTypeOf(input).isInteger(1) ? "bool" : "int";
      params +=
          "const " + type + " *__restrict__ in" + std::to_string(i) + ", ";
      paramNames += "in" + std::to_string(i) + ", ";
      structFields += "  const " + type + " *in" + std::to_string(i) + ";\n";
    }
    for (auto [i, result] : llvm::enumerate(fusion.getResults())) {
      std::string type = cudaType(elementTypeOf(result));
      params += type + " *__restrict__ out" + std::to_string(i) + ", ";
      paramNames += "out" + std::to_string(i) + ", ";
      structFields += "  " + type + " *out" + std::to_string(i) + ";\n";
    }
    // The f32 partial products of split-K (absent without a split).
    if (choice.split > 1) {
      params += "float *__restrict__ scratch";
      paramNames += "scratch";
    } else {
      params.resize(params.size() - 2);
      paramNames += "nullptr";
    }
    structFields += "  float *scratch;\n";
    os << "struct KgParams {\n" << structFields << "};\n";
    os << "#define KG_PARAMS " << params << "\n";
    os << "#define KG_PARAM_NAMES " << paramNames << "\n";

    // Batch offsets (elements) of the operand matrices for GEMM batch b.
    ArrayRef<int64_t> outBatch = ArrayRef<int64_t>(plan.outShape).drop_back(2);
    auto batchOffset = [&](ArrayRef<int64_t> strides, int64_t matrix) {
      SmallVector<int64_t> scaled;
      for (int64_t s : strides)
        scaled.push_back(s * matrix);
      if (fold)
        return std::string("  return 0;\n");
      return offsetBody(outBatch, scaled, "b");
    };
    os << "__device__ __forceinline__ kg_idx kg_lhs_batch(kg_idx b) {\n"
       << batchOffset(plan.lhsBatchStrides, plan.m * plan.k) << "}\n";
    os << "__device__ __forceinline__ kg_idx kg_rhs_batch(kg_idx b) {\n"
       << batchOffset(plan.rhsBatchStrides, plan.k * plan.n) << "}\n";
    // The operand matrices of GEMM batch b (batches of problem g follow
    // those of problem g - 1, whether the problems are stacked or summed).
    auto operandOf = [&](const char *name, bool lhs) {
      std::string text =
          std::string("__device__ __forceinline__ const kg_t *") + name +
          "(const KgParams &p, kg_idx b) {\n";
      const char *offset = lhs ? "kg_lhs_batch" : "kg_rhs_batch";
      auto arg = [&](const GemmProblem &problem) {
        return "p.in" + std::to_string(lhs ? problem.lhsArg : problem.rhsArg);
      };
      if (plan.problems.size() == 1)
        return text + "  return " + arg(plan.problems.front()) + " + " +
               offset + "(b);\n}\n";
      text += "  const kg_idx g = b / KG_GEMM_BATCH;\n"
              "  b -= g * KG_GEMM_BATCH;\n  switch (g) {\n";
      for (auto [g, problem] : llvm::enumerate(plan.problems))
        text +=
            (g + 1 < plan.problems.size() ? "  case " + std::to_string(g) + ": "
                                          : std::string("  default: ")) +
            "return " + arg(problem) + " + " + offset + "(b);\n";
      return text + "  }\n}\n";
    };
    os << operandOf("kg_lhs", true) << operandOf("kg_rhs", false);
    os << kEpilogueHelpers << "\n";
    FailureOr<std::string> epilogue = EpilogueWriter(plan, fusion).write();
    if (failed(epilogue))
      return failure();
    os << *epilogue << "\n";
    os << kCommon;

    std::string gemmSource =
        common + (simt ? std::string(kSimtKernel)
                  : wgmma
                      ? wgmmaKernelSource(config.bn, plan.elementType.isF16(),
                                          !aKMajor, !bKMajor)
                      : std::string(kTensorCoreKernel));
    generated.kernels.push_back(finishKernel(gemmSource, "kiln_gemm"));
    generated.kernels.back().archSpecific = wgmma;

    GeneratedLaunch launch;
    launch.kernel = 0;
    int64_t tiles = ((rows + config.bm - 1) / config.bm) *
                    ((plan.n + config.bn - 1) / config.bn);
    if (tiles > std::numeric_limits<int32_t>::max())
      return fusion.emitOpError("the gemm has too many tiles (")
             << tiles << ") for one launch";
    launch.grid = {static_cast<uint32_t>(tiles), 1,
                   static_cast<uint32_t>(std::min<int64_t>(
                       groups * gemmBatch * choice.split, 65535))};
    launch.block = {static_cast<uint32_t>(config.threads()), 1, 1};
    if (wgmma) {
      // Persistent: one block per SM walks every (tile, batch, split).
      launch.grid = {static_cast<uint32_t>(std::min<int64_t>(
                         tiles * gemmBatch * choice.split, kNumSMs)),
                     1, 1};
      launch.dynamicSharedBytes =
          wgmmaSharedBytes(config.bm, config.bn, config.stages);
    } else if (simt) {
      // sA and sB (two buffers of BK x (BM + 4) and BK x (BN + 4) floats),
      // then the other K slices' sums.
      int64_t sliceThreads = (config.bm / config.tm) * (config.bn / config.tn);
      int64_t floats =
          2 * config.bk * (config.bm + 4) + 2 * config.bk * (config.bn + 4) +
          (config.slices - 1) * config.tm * config.tn * sliceThreads;
      launch.dynamicSharedBytes = static_cast<uint32_t>(floats * 4);
    } else {
      int elementBytes = isF32 ? 4 : 2;
      int padK = isF32 ? 4 : 8, padMN = 8;
      int64_t aStage = aKMajor ? config.bm * (config.bk + padK)
                               : config.bk * (config.bm + padMN);
      int64_t bStage = bKMajor ? config.bn * (config.bk + padK)
                               : config.bk * (config.bn + padMN);
      launch.dynamicSharedBytes = static_cast<uint32_t>(
          (aStage + bStage) * config.stages * elementBytes);
    }
    for (size_t i = 0; i < fusion.getInputs().size(); ++i)
      launch.args.push_back(LaunchArg::operand(i));
    for (size_t i = 0; i < fusion.getNumResults(); ++i)
      launch.args.push_back(LaunchArg::result(i));
    if (choice.split > 1)
      launch.args.push_back(LaunchArg::scratch(0));
    generated.launches.push_back(launch);

    if (choice.split > 1) {
      generated.scratchBytes = 4ull * choice.split * outElements;
      std::string reduceSource = common + kSplitReduceKernel;
      generated.kernels.push_back(
          finishKernel(reduceSource, "kiln_gemm_splitk"));
      GeneratedLaunch reduce;
      reduce.kernel = 1;
      int64_t perThread = plan.n % 4 == 0 ? 4 : 1;
      reduce.grid = {static_cast<uint32_t>(std::min<int64_t>(
                         (outElements / perThread + 255) / 256, kNumSMs * 16)),
                     1, 1};
      reduce.block = {256, 1, 1};
      reduce.args = launch.args;
      generated.launches.push_back(reduce);
    }
    return generated;
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createGemmEmitter() {
  return std::make_unique<GemmEmitter>();
}

} // namespace mlir::kiln::codegen
