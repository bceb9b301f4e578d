//===- KilnTestContext.h - an MLIR context for kiln tests --------*- C++
//-*-===//

#ifndef KILN_COMPILER_TESTING_KILNTESTCONTEXT_H
#define KILN_COMPILER_TESTING_KILNTESTCONTEXT_H

#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <string>

namespace mlir::kiln {

/// The kiln and func dialects with the gradient rules attached; diagnostics
/// are collected as text for failure messages instead of printed.
class KilnTestContext {
public:
  KilnTestContext() {
    DialectRegistry registry;
    registry.insert<KilnDialect, func::FuncDialect>();
    registerGradientRules(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler([this](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
  }

  MLIRContext context;
  std::string diagnostics;
};

} // namespace mlir::kiln

#endif // KILN_COMPILER_TESTING_KILNTESTCONTEXT_H
