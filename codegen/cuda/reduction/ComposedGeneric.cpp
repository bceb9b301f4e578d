//===- ComposedGeneric.cpp - the generic form of composed reductions
//--------===//

#include "codegen/cuda/reduction/ComposedReduction.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen::reduction {

LogicalResult Composer::emitGeneric() {
  const ReductionSpace &space = plan.spaces.front();
  ReduceSpec spec;
  spec.prefix =
      "kiln_fused_" + space.reductions.front()->getName().stripDialect().str();
  Scope element(space.shape, "e_", "off");
  bindInputs(element);
  std::string code;
  llvm::SmallVector<Value> elementRoots;
  llvm::SmallVector<Operation *> reductions = distinct(space);
  for (Operation *r : reductions) {
    FailureOr<std::string> expr =
        element.emitter.emit(r->getOperand(0), code, 0);
    if (failed(expr))
      return failure();
    spec.accs.push_back(accumulator(r, *expr));
    elementRoots.push_back(r->getOperand(0));
  }
  for (Value v : space.elementOutputs) {
    FailureOr<std::string> expr = element.emitter.emit(v, code, 0);
    if (failed(expr))
      return failure();
    spec.elementStores += stores(v, *expr, "off", 0);
    elementRoots.push_back(v);
  }
  spec.elementCode = element.coordinates(0) + code;
  for (unsigned i : inputsRead(elementRoots, [](Value) { return false; }))
    addInput(spec.elementParams, i);
  for (Value v : space.elementOutputs)
    addOutputs(spec.elementParams, v);

  Scope row(space.rowShape(), "w_", "o");
  bindInputs(row);
  std::string reds, rowCode, rowStores;
  for (auto [k, r] : llvm::enumerate(reductions)) {
    std::string name = "red" + std::to_string(k);
    reds += resultDecl(r, spec.accName(k), name, 0);
    for (Operation *same : copiesOf(r))
      row.emitter.bindValue(same->getResult(0), name);
  }
  for (Value v : plan.rowOutputs) {
    FailureOr<std::string> expr = row.emitter.emit(v, rowCode, 0);
    if (failed(expr))
      return failure();
    rowStores += stores(v, *expr, "o", 0);
  }
  spec.finish = row.coordinates(0) + reds + rowCode + rowStores;
  for (unsigned i : inputsRead(plan.rowOutputs,
                               [&](Value v) { return isReductionResult(v); }))
    addInput(spec.finishParams, i);
  for (Value v : plan.rowOutputs)
    addOutputs(spec.finishParams, v);
  spec.helpers = element.emitter.globals() + row.emitter.globals();
  emitReduce(kernels, spec, ReduceLayout(space.shape, space.dims));
  return success();
}

} // namespace mlir::kiln::codegen::reduction
