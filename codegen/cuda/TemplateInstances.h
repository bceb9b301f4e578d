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

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::kiln::codegen {

class KernelEmitter;

struct TemplateInstance {
  /// A file stem naming the template and configuration, unique over all
  /// instances ("gemm_mma_bf16_128x256x32_s4").
  std::string name;
  /// A complete CUDA source (a rendered kernel).
  std::string source;
  /// Architectures to compile it for ("sm_90a", "sm_90", "sm_80").
  std::vector<std::string> arches;
};

/// One planner input of a family's instances: a module with kiln.fusion ops
/// (or, with `fuse`, functions of primitives that --kiln-fuse groups first).
struct InstanceCase {
  std::string label;
  std::string source;
  bool fuse = false;
};

/// Plans every fusion of each case that `emitter` matches, for sm_90 and
/// sm_80, exactly as kilnc does, keeping one instance per distinct source
/// (named "<prefix>_<label>_<template>", numbered when a case yields a
/// template twice) with every architecture that produces it. A case that
/// does not parse, has no fusion of the family or does not emit is reported
/// on stderr, naming `family`.
std::vector<TemplateInstance>
emitTemplateInstances(llvm::StringRef prefix, llvm::StringRef family,
                      const KernelEmitter &emitter,
                      llvm::ArrayRef<InstanceCase> cases);

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

/// The pooling kernels (PoolTemplateInstances.cpp).
std::vector<TemplateInstance> poolTemplateInstances();

/// The resize gradient's kernels (ResizeTemplateInstances.cpp).
std::vector<TemplateInstance> resizeTemplateInstances();

/// The reduction kernels (ReductionTemplateInstances.cpp).
std::vector<TemplateInstance> reductionTemplateInstances();

/// The convolution kernels (ConvTemplateInstances.cpp).
std::vector<TemplateInstance> convTemplateInstances();

/// The batch norm kernels (BatchNormTemplateInstances.cpp).
std::vector<TemplateInstance> batchNormTemplateInstances();

/// The recurrent kernels (RnnTemplateInstances.cpp).
std::vector<TemplateInstance> rnnTemplateInstances();

/// Every family's instances.
std::vector<TemplateInstance> allTemplateInstances();

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_TEMPLATEINSTANCES_H
