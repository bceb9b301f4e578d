//===- KilnDialect.h - the kiln dialect --------------------------*- C++
//-*-===//
//
// The one header users of the dialect include: dialect, attributes, enums,
// interfaces and ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_KILNDIALECT_H
#define KILN_DIALECTS_KILN_IR_KILNDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/kiln/IR/KilnTraits.h"

#include "dialects/kiln/IR/KilnDialect.h.inc"
#include "dialects/kiln/IR/KilnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/kiln/IR/KilnAttrs.h.inc"

#include "dialects/kiln/IR/KilnInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/kiln/IR/KilnOps.h.inc"

#endif // KILN_DIALECTS_KILN_IR_KILNDIALECT_H
