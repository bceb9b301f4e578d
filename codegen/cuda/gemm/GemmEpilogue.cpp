//===- GemmEpilogue.cpp - the fused epilogue functor of gemm kernels ------===//

#include "codegen/cuda/gemm/GemmEpilogue.h"

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln::codegen {
namespace {

constexpr const char *kFn = "  static __device__ __forceinline__ void ";

class EpilogueWriter {
public:
  EpilogueWriter(const GemmPlan &plan, FusionOp fusion, bool runs,
                 bool prefetch, bool tmaStore)
      : plan(plan), fusion(fusion), runs(runs), prefetch(prefetch),
        tmaStore(tmaStore) {}

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
    if (problems > 1) {
      // Dispatch on the problem of a stacked row.
      auto dispatch = [&](const char *name, const char *params,
                          const char *args) {
        std::string t = std::string(kFn) + name +
                        "(const Params &p, idx r, idx c, " + params + ") {\n" +
                        "    const idx g = r / Config::OUT_ROWS;\n" +
                        "    r -= g * Config::OUT_ROWS;\n    switch (g) {\n";
        for (size_t g = 0; g < problems; ++g)
          t += "    case " + std::to_string(g) + ": " + name +
               std::to_string(g) + "(p, r, c, " + args + "); break;\n";
        return t + "    }\n  }\n";
      };
      text += dispatch("store", "float acc", "acc");
      text += dispatch("store_pair", "float acc0, float acc1", "acc0, acc1");
      text += dispatch("store_pair_in", "float acc0, float acc1", "acc0, acc1");
      if (runs)
        text += dispatch("store_run_in", "const float (&acc)[kRun]", "acc");
      if (prefetched)
        text += dispatch("prefetch_row", "idx n", "n");
    }
    std::string head = "struct Epilogue {\n";
    if (runs)
      head += "  static constexpr int kRun = kiln::gemm::wgmma_staged_run;\n";
    head += std::string("  static constexpr bool kPrefetch = ") +
            (prefetched ? "true" : "false") + ";\n";
    return globals + head + text + "};\n";
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
                          "idx");
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
    emitter.setIndex(coords, "(r * Config::N + c)");
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
          emitter.emit(yield->getOperand(result), statements, 4);
      if (failed(expr))
        return failure();
      values.push_back(*expr);
    }
    globals += emitter.globals();

    std::string text;
    llvm::raw_string_ostream os(text);
    size_t count = problem.results.size();
    os << kFn << "values" << suffix
       << "(const Params &p, idx r, idx c, float acc, float (&res)[" << count
       << "]) {\n";
    os << "    // " << (plan.sum ? "the sum of the products" : "kiln.matmul")
       << ", rounded once to its element type\n";
    os << "    const float v0 = " << roundedToElement(plan.elementType, "acc") << ";\n";
    os << statements;
    for (auto [i, value] : llvm::enumerate(values))
      os << "    res[" << i << "] = " << value << ";\n";
    os << "  }\n";

    os << kFn << "store" << suffix
       << "(const Params &p, idx r, idx c, float acc) {\n"
       << "    float res[" << count << "];\n"
       << "    values" << suffix << "(p, r, c, acc, res);\n";
    for (auto [i, result] : llvm::enumerate(problem.results))
      os << "    kiln_store(p.out" << result << " + r * Config::N + c, res["
         << i << "]);\n";
    os << "  }\n";
    os << "  // Columns c and c + 1 (c even), both inside the output.\n"
       << kFn << "store_pair_in" << suffix
       << "(const Params &p, idx r, idx c, float acc0, float acc1) {\n"
       << "    float res0[" << count << "], res1[" << count << "];\n"
       << "    values" << suffix << "(p, r, c, acc0, res0);\n"
       << "    values" << suffix << "(p, r, c + 1, acc1, res1);\n";
    for (auto [i, result] : llvm::enumerate(problem.results)) {
      std::string at =
          "p.out" + std::to_string(result) + " + r * Config::N + c";
      std::string r0 = "res0[" + std::to_string(i) + "]";
      std::string r1 = "res1[" + std::to_string(i) + "]";
      if (plan.n % 2 == 0)
        os << "    kiln::gemm::store2(" << at << ", " << r0 << ", " << r1
           << ");\n";
      else
        os << "    kiln_store(" << at << ", " << r0 << ");\n"
           << "    kiln_store(" << at << " + 1, " << r1 << ");\n";
    }
    os << "  }\n";
    // The runs' functions: the results of columns c .. c + kRun - 1, then
    // each stored as a run, or the first one (`staged`) to shared address
    // `slot`.
    auto runFunction = [&](const char *name, bool staged) {
      os << "  // Columns c .. c + kRun - 1 (c a multiple of kRun), inside the "
            "output"
         << (staged ? ": the first result to shared address `slot`, which "
                      "the kernel stores by TMA"
                    : "")
         << ".\n"
         << kFn << name << suffix
         << "(const Params &p, idx r, idx c, const float (&acc)[kRun]"
         << (staged ? ", unsigned slot" : "") << ") {\n"
         << "    float res[kRun][" << count << "];\n"
         << "#pragma unroll\n"
         << "    for (int e = 0; e < kRun; ++e)\n"
         << "      values" << suffix << "(p, r, c + e, acc[e], res[e]);\n";
      if (staged)
        os << "    kiln::gemm::stage_run<0, Config::element>(slot, res);\n";
      for (auto [i, result] : llvm::enumerate(problem.results))
        if (!staged || i > 0)
          os << "    kiln::gemm::store_run<" << i << ">(p.out" << result
             << " + r * Config::N + c, res);\n";
      os << "  }\n";
    };
    if (runs)
      runFunction("store_run_in", /*staged=*/false);
    if (tmaStore)
      runFunction("store_run_staged", /*staged=*/true);
    if (prefetch) {
      SmallVector<BlockArgument> inputs = productShapedInputs(problem);
      prefetched |= !inputs.empty();
      os << "  // Columns c .. c + n - 1 of row r of the tensors of the "
            "product's shape it reads, into the L2.\n"
         << kFn << "prefetch_row" << suffix
         << "(const Params &p, idx r, idx c, idx n) {\n";
      for (BlockArgument input : inputs)
        os << "    kiln::gemm::prefetch_l2(p.in" << input.getArgNumber()
           << " + r * Config::N + c, (unsigned)n);\n";
      os << "  }\n";
    }
    os << "  // Columns c and c + 1 (c even); c + 1 may be past the end.\n"
       << kFn << "store_pair" << suffix
       << "(const Params &p, idx r, idx c, float acc0, float acc1) {\n"
       << "    if (c + 1 < Config::N)\n"
       << "      store_pair_in" << suffix << "(p, r, c, acc0, acc1);\n"
       << "    else if (c < Config::N)\n"
       << "      store" << suffix << "(p, r, c, acc0);\n"
       << "  }\n";
    return text;
  }

  /// The fusion inputs of the product's shape (read element for element at
  /// the output's flat index) that problem `problem`'s results are computed
  /// from, other than the products' operands.
  SmallVector<BlockArgument> productShapedInputs(const GemmProblem &problem) {
    Block &body = fusion.getBody().front();
    llvm::SetVector<Value> seen;
    SmallVector<Value> stack;
    for (unsigned result : problem.results)
      stack.push_back(body.getTerminator()->getOperand(result));
    while (!stack.empty()) {
      Value v = stack.pop_back_val();
      if (!seen.insert(v))
        continue;
      if (Operation *op = v.getDefiningOp()) {
        if (!isa<MatmulOp>(op))
          llvm::append_range(stack, op->getOperands());
      }
    }
    SmallVector<BlockArgument> inputs;
    for (Value v : seen) {
      auto argument = dyn_cast<BlockArgument>(v);
      if (argument &&
          sameElements(cast<ShapedType>(argument.getType()).getShape(),
                       plan.outShape))
        inputs.push_back(argument);
    }
    llvm::sort(inputs, [](BlockArgument a, BlockArgument b) {
      return a.getArgNumber() < b.getArgNumber();
    });
    return inputs;
  }

  const GemmPlan &plan;
  FusionOp fusion;
  bool runs, prefetch, tmaStore;
  bool prefetched = false; // some problem's epilogue reads such a tensor
};

} // namespace

FailureOr<std::string> writeGemmEpilogue(const GemmPlan &plan,
                                         FusionOp fusion, bool runs,
                                         bool prefetch, bool tmaStore) {
  return EpilogueWriter(plan, fusion, runs, prefetch, tmaStore).write();
}

} // namespace mlir::kiln::codegen
