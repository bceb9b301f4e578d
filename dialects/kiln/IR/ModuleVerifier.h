//===- ModuleVerifier.h - checks of a whole kiln module ---------*- C++ -*-===//
//
// What no op's verifier can see, checked on the module after MLIR's
// verifier: a model defines at least one function, and no function reaches
// itself through calls (the reference interpreter runs calls and the
// compiler needs a finite call tree). The tools run it on every model they
// load (compiler/import/LoadModel); kiln-opt runs the pass before the
// passes it is given.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_MODULEVERIFIER_H
#define KILN_DIALECTS_KILN_IR_MODULEVERIFIER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::kiln {

/// Fails, with an error at the module, when it has no func.func, and, with
/// an error at the call that closes it naming every function on it, for a
/// call cycle ("@f -> @g -> @f").
LogicalResult verifyModule(ModuleOp module);

/// verifyModule as a pass (kiln-verify-module), which changes nothing.
std::unique_ptr<Pass> createVerifyModulePass();

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_IR_MODULEVERIFIER_H
