//===- ComposedReduction.cpp - names, reads and reductions of composed fusions
//===//

#include "codegen/cuda/reduction/ComposedReduction.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen::reduction {

std::string Composer::stores(Value v, llvm::StringRef expr, llvm::StringRef at,
                             int spaces) const {
  std::string s;
  for (unsigned i : resultIndices.lookup(v))
    s += std::string(spaces, ' ') + "kiln_store(" + outName(i) + " + " +
         at.str() + ", " + expr.str() + ");\n";
  return s;
}

llvm::SmallVector<unsigned>
Composer::inputsRead(llvm::ArrayRef<Value> roots,
                     llvm::function_ref<bool(Value)> stop) const {
  llvm::SetVector<unsigned> args;
  llvm::DenseSet<Value> seen;
  llvm::SmallVector<Value> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    Value v = stack.pop_back_val();
    if (!seen.insert(v).second || stop(v))
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      args.insert(arg.getArgNumber());
      continue;
    }
    for (Value operand : v.getDefiningOp()->getOperands())
      stack.push_back(operand);
  }
  llvm::SmallVector<unsigned> sorted(args.begin(), args.end());
  llvm::sort(sorted);
  return sorted;
}

Accumulator Composer::accumulator(Operation *r, const std::string &element) {
  bool i32 = isInt(r);
  if (isa<ReduceSumOp, ReduceMeanOp>(r)) {
    // Unsigned arithmetic wraps (two's complement), as the i32 rule says.
    if (i32)
      return {"unsigned", "0u", "kiln_sum_op", "(unsigned)(" + element + ")",
              4};
    return {"float", "0.f", "kiln_sum_op", element, 4};
  }
  if (isa<ReduceMaxOp>(r))
    return {i32 ? "int" : "float", i32 ? "(-2147483647 - 1)" : "-kiln_inf()",
            "kiln_max_op", element, 4};
  return {i32 ? "int" : "float", i32 ? "2147483647" : "kiln_inf()",
          "kiln_min_op", element, 4};
}

std::string Composer::resultDecl(Operation *r, llvm::StringRef acc,
                                 llvm::StringRef name, int spaces) const {
  std::string value = acc.str();
  if (isa<ReduceMeanOp>(r))
    value = acc.str() + " / " +
            codegen::floatLiteral(double(plan.spaceOf(r).rowLength()));
  if (isInt(r) && isa<ReduceSumOp>(r))
    value = "(int)" + acc.str();
  Type t = elementTypeOf(r->getResult(0));
  if (t.isBF16())
    value = "kiln_round_bf16(" + value + ")";
  else if (t.isF16())
    value = "kiln_round_f16(" + value + ")";
  return std::string(spaces, ' ') + "const " + (isInt(r) ? "int" : "float") +
         " " + name.str() + " = " + value + ";\n";
}

std::string Composer::scratchDecls(llvm::ArrayRef<Accumulator> accs,
                                   bool withFloat) {
  std::string s;
  for (llvm::StringRef type : {"float", "unsigned", "int"}) {
    if (type == "float" && !withFloat)
      continue;
    if (llvm::any_of(accs,
                     [&](const Accumulator &a) { return a.type == type; }))
      s += "  __shared__ " + type.str() + " " + scratchOf(type) + "[32];\n";
  }
  return s;
}

bool Composer::equivalent(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || a.getType() != b.getType() || x->getName() != y->getName() ||
      x->getAttrDictionary() != y->getAttrDictionary() ||
      x->getNumOperands() != y->getNumOperands() || x->getNumResults() != 1)
    return false;
  auto [it, inserted] = equivalence.try_emplace({a, b}, false);
  if (!inserted)
    return it->second;
  bool same = llvm::all_of(
      llvm::zip(x->getOperands(), y->getOperands()), [&](auto pair) {
        return equivalent(std::get<0>(pair), std::get<1>(pair));
      });
  equivalence[{a, b}] = same;
  return same;
}

void Composer::findCopies() {
  for (const ReductionSpace &space : plan.spaces)
    for (auto [i, r] : llvm::enumerate(space.reductions))
      for (Operation *earlier : llvm::ArrayRef(space.reductions).take_front(i))
        if (!sameAs.count(earlier) && r->getName() == earlier->getName() &&
            elementTypeOf(r->getResult(0)) ==
                elementTypeOf(earlier->getResult(0)) &&
            equivalent(r->getOperand(0), earlier->getOperand(0))) {
          sameAs[r] = earlier;
          break;
        }
}

FailureOr<GeneratedFusion>
emitComposedReduction(FusionOp fusion, const ReductionPlan &plan,
                      int64_t targetBlocks, std::optional<int64_t> splits) {
  return Composer(fusion, plan, targetBlocks, splits).run();
}

} // namespace mlir::kiln::codegen::reduction
