//===- AllTemplateInstances.cpp - every family's template instances -------===//
//
// Each family's list (codegen/cuda/<family>/*TemplateInstances.cpp) links
// only the rendering of TemplateInstances.cpp; this file links them all.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::kiln::codegen {

std::vector<TemplateInstance> allTemplateInstances() {
  std::vector<TemplateInstance> all;
  for (auto family : {mergedTemplateInstances, attentionTemplateInstances,
                      batchNormTemplateInstances, convTemplateInstances,
                      embeddingTemplateInstances, gemmTemplateInstances,
                      pointwiseTemplateInstances, poolTemplateInstances,
                      reductionTemplateInstances, resizeTemplateInstances,
                      rnnTemplateInstances})
    llvm::append_range(all, family());
  return all;
}

} // namespace mlir::kiln::codegen
