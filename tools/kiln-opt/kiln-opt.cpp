//===- kiln-opt.cpp - the kiln pass driver
//---------------------------------===//
//
// mlir-opt for kiln: parses, verifies, runs pass pipelines and prints IR. The
// lit tests drive every pass and diagnostic through it. Every kiln pass and
// the whole compiler, --kiln-pipeline (compiler/pipeline), are registered.
//
//===----------------------------------------------------------------------===//

#include "compiler/pipeline/Pipeline.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::kiln::registerKilnPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  mlir::kiln::registerGradientRules(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
