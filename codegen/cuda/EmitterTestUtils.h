//===- EmitterTestUtils.h - fixture for kernel emitter tests -----*- C++
//-*-===//
//
// Parses a function holding one kiln.fusion, runs an emitter on it,
// compiles every generated kernel to PTX and an sm_90 (sm_90a for
// arch-specific kernels) cubin, and checks the
// launches against the kernels' parameter lists.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_EMITTERTESTUTILS_H
#define KILN_CODEGEN_CUDA_EMITTERTESTUTILS_H

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/Nvrtc.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace mlir::kiln::codegen {

/// The tensor-map arguments of `launch`, in order.
inline std::vector<const TensorMapLayout *>
tensorMapsOf(const GeneratedLaunch &launch) {
  std::vector<const TensorMapLayout *> maps;
  for (const LaunchArg &arg : launch.args)
    if (arg.kind == LaunchArg::Kind::TensorMap)
      maps.push_back(arg.tensorMap.get());
  return maps;
}

class EmitterTest : public ::testing::Test {
protected:
  EmitterTest() {
    DialectRegistry registry;
    registry.insert<KilnDialect, func::FuncDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  /// Parses `source` (a module or a bare func) and returns its first fusion.
  FusionOp parseFusion(llvm::StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return nullptr;
    FusionOp fusion;
    module->walk([&](FusionOp f) {
      if (!fusion)
        fusion = f;
    });
    EXPECT_TRUE(fusion) << "no kiln.fusion in the source";
    return fusion;
  }

  /// Wraps a single op (written with %arg0.. operands) into a fusion of
  /// `kind` inside a function and parses it. `operandTypes` and
  /// `resultTypes` are comma-separated type lists.
  FusionOp fusionOf(llvm::StringRef kind, llvm::StringRef opText,
                    llvm::StringRef operandTypes, llvm::StringRef resultTypes) {
    llvm::SmallVector<llvm::StringRef> types;
    splitTypes(operandTypes, types);
    std::string args, argNames, results;
    for (size_t i = 0; i < types.size(); ++i) {
      args += (i ? ", %a" : "%a") + std::to_string(i) + ": " + types[i].str();
      argNames += (i ? ", %a" : "%a") + std::to_string(i);
    }
    llvm::SmallVector<llvm::StringRef> resultList;
    splitTypes(resultTypes, resultList);
    std::string yieldNames;
    for (size_t i = 0; i < resultList.size(); ++i)
      yieldNames += (i ? ", %r#" : "%r#") + std::to_string(i);
    if (resultList.size() == 1)
      yieldNames = "%r";
    std::string fusionArgs;
    for (size_t i = 0; i < types.size(); ++i)
      fusionArgs +=
          (i ? ", %arg" : "%arg") + std::to_string(i) + ": " + types[i].str();
    std::string resultDecl = resultList.size() == 1
                                 ? "%r"
                                 : "%r:" + std::to_string(resultList.size());
    std::string source =
        "func.func @f(" + args +
        ") {\n  %f:" + std::to_string(resultList.size()) + " = kiln.fusion \"" +
        kind.str() + "\" (" + argNames + ") : (" + operandTypes.str() +
        ") -> (" + resultTypes.str() + ") {\n  ^bb0(" + fusionArgs +
        "):\n    " + resultDecl + " = " + opText.str() + "\n    kiln.yield " +
        yieldNames + " : " + resultTypes.str() + "\n  }\n  return\n}\n";
    lastSource = source;
    return parseFusion(source);
  }

  /// Emits `fusion` with `emitter` (and `options`), compiles every kernel
  /// for sm_90 (PTX and cubin) and checks each launch's geometry and
  /// arguments. Returns the generated fusion (empty on failure, with test
  /// failures recorded).
  GeneratedFusion emitAndCompile(const KernelEmitter &emitter, FusionOp fusion,
                                 const CodegenOptions &options = {}) {
    GeneratedFusion empty;
    if (!fusion)
      return empty;
    EXPECT_TRUE(emitter.matches(fusion)) << lastSource;
    FailureOr<GeneratedFusion> generated = emitter.emit(fusion, options);
    EXPECT_TRUE(succeeded(generated)) << diagnostics << lastSource;
    if (failed(generated))
      return empty;
    // Deterministic: a second emission gives byte-identical kernels.
    FailureOr<GeneratedFusion> again = emitter.emit(fusion, options);
    EXPECT_TRUE(succeeded(again));
    if (succeeded(again)) {
      EXPECT_EQ(again->kernels.size(), generated->kernels.size());
      for (size_t i = 0;
           i < std::min(again->kernels.size(), generated->kernels.size());
           ++i) {
        EXPECT_EQ(again->kernels[i].name, generated->kernels[i].name);
        EXPECT_EQ(again->kernels[i].source, generated->kernels[i].source);
      }
    }
    for (const GeneratedKernel &kernel : generated->kernels) {
      if (const char *dir = std::getenv("KILN_DUMP_KERNELS")) {
        std::error_code ec;
        llvm::raw_fd_ostream file(std::string(dir) + "/" + kernel.name + ".cu",
                                  ec);
        file << kernel.source;
      }
      CompiledKernel compiled;
      std::string error;
      std::string arch =
          kernel.archSpecific ? archSpecificTarget("sm_90") : "sm_90";
      bool ok =
          compileCuda(kernel.source, kernel.name, arch, true, compiled, error);
      EXPECT_TRUE(ok) << error << "\n" << kernel.source;
      if (!ok)
        continue;
      EXPECT_NE(compiled.ptx.find(".entry " + kernel.name), std::string::npos);
      EXPECT_GT(compiled.cubin.size(), 4u);
      EXPECT_EQ(kernel.source.find("kiln/prelude.cuh") != std::string::npos,
                true);
    }
    for (const GeneratedLaunch &launch : generated->launches) {
      EXPECT_LT(launch.kernel, generated->kernels.size());
      if (launch.kernel >= generated->kernels.size())
        continue;
      const GeneratedKernel &kernel = generated->kernels[launch.kernel];
      uint64_t threads =
          uint64_t(launch.block[0]) * launch.block[1] * launch.block[2];
      EXPECT_GE(threads, 1u);
      EXPECT_LE(threads, 1024u);
      EXPECT_GE(launch.grid[0], 1u);
      EXPECT_LE(launch.grid[1], 65535u);
      EXPECT_LE(launch.grid[2], 65535u);
      EXPECT_LE(launch.dynamicSharedBytes, 227u * 1024);
      // One parameter per argument: count the top-level commas of the
      // kernel's parameter list.
      size_t open = kernel.source.find(kernel.name + "(");
      size_t close = kernel.source.find(") {", open);
      std::string list = kernel.source.substr(open, close - open);
      size_t params = list.find_first_not_of(" \n(", kernel.name.size()) ==
                              std::string::npos
                          ? 0
                          : 1 + std::count(list.begin(), list.end(), ',');
      EXPECT_EQ(params, launch.args.size()) << kernel.source;
      for (const LaunchArg &arg : launch.args) {
        if (arg.kind == LaunchArg::Kind::Operand) {
          EXPECT_LT(arg.index, int64_t(fusion->getNumOperands()));
        } else if (arg.kind == LaunchArg::Kind::Result) {
          EXPECT_LT(arg.index, int64_t(fusion->getNumResults()));
        } else if (arg.kind == LaunchArg::Kind::Scratch) {
          EXPECT_LT(uint64_t(arg.index), generated->scratchBytes);
        }
      }
    }
    return *generated;
  }

  /// Every result of the fusion is written by some launch.
  static void expectWritesEveryResult(FusionOp fusion,
                                      const GeneratedFusion &g) {
    for (unsigned r = 0; r < fusion->getNumResults(); ++r) {
      bool written = false;
      for (const GeneratedLaunch &launch : g.launches)
        for (const LaunchArg &arg : launch.args)
          written |= arg.kind == LaunchArg::Kind::Result && arg.index == r;
      EXPECT_TRUE(written) << "result " << r << " is never written";
    }
  }

  static void splitTypes(llvm::StringRef text,
                         llvm::SmallVectorImpl<llvm::StringRef> &out) {
    // Split at commas outside <...>.
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); ++i) {
      if (i == text.size() || (text[i] == ',' && depth == 0)) {
        llvm::StringRef piece = text.slice(start, i).trim();
        if (!piece.empty())
          out.push_back(piece);
        start = i + 1;
      } else if (text[i] == '<') {
        ++depth;
      } else if (text[i] == '>') {
        --depth;
      }
    }
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics, lastSource;
};

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_EMITTERTESTUTILS_H
