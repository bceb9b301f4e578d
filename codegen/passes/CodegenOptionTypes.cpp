//===- CodegenOptionTypes.cpp - the enumerated options of code generation -===//

#include "codegen/passes/CodegenOptionTypes.h"

namespace mlir::kiln::codegen {

llvm::ArrayRef<OptionChoice<GemmSchedule>> optionChoices(GemmSchedule) {
  static constexpr OptionChoice<GemmSchedule> choices[] = {
      {"auto", GemmSchedule::Auto},
      {"cooperative", GemmSchedule::Cooperative},
      {"pingpong", GemmSchedule::PingPong},
  };
  return choices;
}

llvm::ArrayRef<OptionChoice<AttentionSchedule>>
optionChoices(AttentionSchedule) {
  static constexpr OptionChoice<AttentionSchedule> choices[] = {
      {"auto", AttentionSchedule::Auto},
      {"cooperative", AttentionSchedule::Cooperative},
      {"pingpong", AttentionSchedule::PingPong},
  };
  return choices;
}

llvm::ArrayRef<OptionChoice<GemmCluster>> optionChoices(GemmCluster) {
  static constexpr OptionChoice<GemmCluster> choices[] = {
      {"auto", GemmCluster::Auto},
      {"1", GemmCluster::One},
      {"2", GemmCluster::Two},
  };
  return choices;
}

} // namespace mlir::kiln::codegen
