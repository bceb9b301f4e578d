//===- TemplateInstances.h - every kernel the planners may choose -*- C++ -*-===//
//
// The kernel templates are checked before any model uses them: each family
// lists the instantiations its planner can choose (every entry of its tile
// and configuration tables, with representative functors), rendered exactly
// as the planner renders a kernel, and a build-time test compiles each one
// with nvcc for the architectures it supports, failing on any error and on
// register spills on sm_90 (tools/kiln-template-instances,
// codegen/cuda/kernels/check_templates.sh).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_TEMPLATEINSTANCES_H
#define KILN_CODEGEN_CUDA_TEMPLATEINSTANCES_H

#include <string>
#include <vector>

namespace mlir::kiln::codegen {

struct TemplateInstance {
  /// A file stem naming the template and configuration, unique over all
  /// instances ("gemm_mma_bf16_128x256x32_s4").
  std::string name;
  /// A complete CUDA source (a rendered kernel).
  std::string source;
  /// Architectures to compile it for ("sm_90a", "sm_90", "sm_80").
  std::vector<std::string> arches;
};

/// The merged-launch dispatcher over parts of different block shapes.
std::vector<TemplateInstance> mergedTemplateInstances();

/// The flash-attention forward and backward kernels
/// (AttentionTemplateInstances.cpp).
std::vector<TemplateInstance> attentionTemplateInstances();

/// The embedding gradient's kernels (EmbeddingTemplateInstances.cpp).
std::vector<TemplateInstance> embeddingTemplateInstances();

/// Every GEMM tile configuration (GemmTemplateInstances.cpp).
std::vector<TemplateInstance> gemmTemplateInstances();

/// Pointwise and multi-tensor optimizer kernels
/// (PointwiseTemplateInstances.cpp).
std::vector<TemplateInstance> pointwiseTemplateInstances();

/// The reduction kernels (ReductionTemplateInstances.cpp).
std::vector<TemplateInstance> reductionTemplateInstances();

/// Every family's instances.
std::vector<TemplateInstance> allTemplateInstances();

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_TEMPLATEINSTANCES_H
