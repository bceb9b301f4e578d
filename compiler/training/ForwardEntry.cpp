//===- ForwardEntry.cpp - the inference entry -----------------------------===//

#include "compiler/training/ForwardEntry.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnNaming.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNMAKEFORWARD
#include "compiler/training/Passes.h.inc"

StringRef argumentRole(func::FuncOp function, unsigned index) {
  if (function.getArgAttr(index, KilnDialect::kParamAttrName))
    return "param";
  if (function.getArgAttr(index, KilnDialect::kStateAttrName))
    return "state";
  return "input";
}

void useRunningStatistics(func::FuncOp function) {
  function.walk([](BatchNormOp norm) {
    if (norm.hasRunningStats())
      norm.setEval(true);
  });
}

LogicalResult buildForwardEntry(ModuleOp module, StringRef function) {
  auto forward = module.lookupSymbol<func::FuncOp>(function);
  if (!forward)
    return module.emitError("kiln-make-forward: no function named '")
           << function << "'";
  forward.setSymName("forward");
  Builder b(module.getContext());
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    forward.setArgAttr(i, KilnDialect::kRoleAttrName,
                       b.getStringAttr(argumentRole(forward, i)));
    // The host binds tensors by name: unnamed ones get the default names.
    forward.setArgAttr(i, KilnDialect::kNameAttrName,
                       b.getStringAttr(argumentName(forward, i)));
  }
  for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i) {
    forward.setResultAttr(i, KilnDialect::kRoleAttrName,
                          b.getStringAttr("output"));
    forward.setResultAttr(i, KilnDialect::kNameAttrName,
                          b.getStringAttr(resultName(forward, i)));
  }
  useRunningStatistics(forward);
  return success();
}

namespace {
struct MakeForwardPass : public impl::KilnMakeForwardBase<MakeForwardPass> {
  using KilnMakeForwardBase::KilnMakeForwardBase;

  void runOnOperation() override {
    if (failed(buildForwardEntry(getOperation(), function)))
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::kiln
