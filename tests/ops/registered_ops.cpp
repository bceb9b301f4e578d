//===- registered_ops.cpp - lists the ops of the kiln dialect -------------===//
//
// Prints the name of every op the kiln dialect registers, one per line, so
// that the op-coverage suite follows the dialect: an op added without a model
// that covers it fails the suite.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations())
    if (op.getDialectNamespace() == mlir::kiln::KilnDialect::getDialectNamespace())
      llvm::outs() << op.getStringRef() << "\n";
  return 0;
}
