//===- KilnCudaDialect.h - kernel decisions as attributes -------*- C++ -*-===//
//
// The kiln_cuda dialect (KilnCudaDialect.td) and the names of the
// attributes that hold a fusion's kernel and a module's target.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_DIALECT_KILNCUDADIALECT_H
#define KILN_CODEGEN_DIALECT_KILNCUDADIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "codegen/dialect/KilnCudaDialect.h.inc"
#include "codegen/dialect/KilnCudaEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "codegen/dialect/KilnCudaAttrs.h.inc"

namespace mlir::kiln::cuda {

/// The discardable attribute of a kiln.fusion that holds its kernel.
inline constexpr llvm::StringLiteral kKernelAttrName = "kiln_cuda.kernel";

/// The discardable attribute of the module that holds the target its
/// kernels are chosen for (a #kiln_cuda.target).
inline constexpr llvm::StringLiteral kTargetAttrName = "kiln_cuda.target";

} // namespace mlir::kiln::cuda

#endif // KILN_CODEGEN_DIALECT_KILNCUDADIALECT_H
