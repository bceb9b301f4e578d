//===- ForwardEntry.cpp - the inference entry -----------------------------===//

#include "compiler/training/ForwardEntry.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnNaming.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNMAKEFORWARD
#include "compiler/training/Passes.h.inc"

LogicalResult buildForwardEntry(ModuleOp module, StringRef function) {
  auto forward = module.lookupSymbol<func::FuncOp>(function);
  if (!forward)
    return module.emitError("kiln-make-forward: no function named '")
           << function << "'";
  forward.setSymName("forward");
  Builder b(module.getContext());
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    bool isParam =
        static_cast<bool>(forward.getArgAttr(i, KilnDialect::kParamAttrName));
    forward.setArgAttr(i, KilnDialect::kRoleAttrName,
                       b.getStringAttr(isParam ? "param" : "input"));
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
