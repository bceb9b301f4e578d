//===- KilnOps.cpp - op class definitions of the kiln dialect -------------===//
//
// Instantiates the tablegen'd op classes. The hand-written parts of each op
// family (inference, verifiers, custom syntax) live in the family's own file.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/ExactF64Array.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::kiln;

#include "dialects/kiln/IR/KilnInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/kiln/IR/KilnOps.cpp.inc"

void KilnDialect::registerOps() {
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/IR/KilnOps.cpp.inc"
      >();
}
