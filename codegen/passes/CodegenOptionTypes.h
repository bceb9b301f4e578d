//===- CodegenOptionTypes.h - the enumerated options of code generation -*- C++
//-*-===//
//
// The names of the enumerated kiln-select-kernels options (Passes.td), given
// once:
// the pass options and kilnc's flags parse them with the same parser
// (compiler/options/ChoiceOption.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_PASSES_CODEGENOPTIONTYPES_H
#define KILN_CODEGEN_PASSES_CODEGENOPTIONTYPES_H

#include "codegen/cuda/KernelEmitter.h"
#include "compiler/options/ChoiceOption.h"

namespace mlir::kiln::codegen {

/// Blocks per thread-block cluster of the TMA GEMM kernel; the value is
/// CodegenOptions::gemmCluster's (0: the kernel planner picks).
enum class GemmCluster { Auto = 0, One = 1, Two = 2 };

llvm::ArrayRef<OptionChoice<GemmSchedule>> optionChoices(GemmSchedule);
llvm::ArrayRef<OptionChoice<AttentionSchedule>>
    optionChoices(AttentionSchedule);
llvm::ArrayRef<OptionChoice<GemmCluster>> optionChoices(GemmCluster);

} // namespace mlir::kiln::codegen

namespace llvm::cl {

template <>
class parser<mlir::kiln::codegen::GemmSchedule>
    : public mlir::kiln::ChoiceParser<mlir::kiln::codegen::GemmSchedule> {
public:
  using ChoiceParser::ChoiceParser;
};

template <>
class parser<mlir::kiln::codegen::AttentionSchedule>
    : public mlir::kiln::ChoiceParser<mlir::kiln::codegen::AttentionSchedule> {
public:
  using ChoiceParser::ChoiceParser;
};

template <>
class parser<mlir::kiln::codegen::GemmCluster>
    : public mlir::kiln::ChoiceParser<mlir::kiln::codegen::GemmCluster> {
public:
  using ChoiceParser::ChoiceParser;
};

} // namespace llvm::cl

#endif // KILN_CODEGEN_PASSES_CODEGENOPTIONTYPES_H
