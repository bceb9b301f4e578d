//===- EmitterUtils.h - helpers shared by the CUDA kernel emitters -*- C++
//-*-===//
//
// Small pieces the emitters share: CUDA spellings of element types, float
// literals, the mapping between a single-op fusion's block arguments/yield
// and the fusion's operands/results, and the FusionBuilder that adds each
// rendered KernelSpec (KernelRenderer.h) and its launch to a fusion.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_EMITTERUTILS_H
#define KILN_CODEGEN_CUDA_EMITTERUTILS_H

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/KernelRenderer.h"

#include <string>
#include <vector>

namespace mlir::kiln::codegen {

/// The CUDA type of a kiln element type: float, __nv_bfloat16, __half, int,
/// bool.
std::string cudaType(Type elementType);
inline std::string cudaType(Value v) {
  return cudaType(cast<ShapedType>(v.getType()).getElementType());
}

/// A float literal that reproduces `value` rounded to f32 (e.g. `1e-05f`).
std::string floatLiteral(double value);

/// `value`, an f32 C expression, rounded to a float element type (bf16 and
/// f16 round to nearest even and back to f32).
std::string roundedToElement(Type type, const std::string &value);

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t nextPowerOf2(int64_t v) {
  int64_t p = 1;
  while (p < v)
    p *= 2;
  return p;
}
inline int64_t numElementsOf(Value v) {
  return cast<ShapedType>(v.getType()).getNumElements();
}

/// Whether two shapes hold the same elements in the same row-major order
/// (equal but for dimensions of size 1).
bool sameElements(ArrayRef<int64_t> a, ArrayRef<int64_t> b);

/// The one op of a single-op fusion, with the fusion operand behind each op
/// operand and the fusion result (or -1) behind each op result.
struct SingleOpFusion {
  Operation *op = nullptr;
  std::vector<int64_t> operandOf; // per op operand
  std::vector<int64_t> resultOf;  // per op result, -1 when not yielded

  /// Fails when the body is not exactly one op whose operands are block
  /// arguments and whose yielded values are distinct results of it.
  static FailureOr<SingleOpFusion> get(FusionOp fusion);
};

/// Builds the kernels and launches of one fusion.
class FusionBuilder {
public:
  explicit FusionBuilder(std::string header) : header(std::move(header)) {}

  /// A kernel's parameters, each with the launch argument bound to it.
  struct Params {
    std::vector<std::string> decls;
    std::vector<LaunchArg> args;
    void add(std::string decl, LaunchArg arg) {
      decls.push_back(std::move(decl));
      args.push_back(arg);
    }
  };

  /// Reserves `bytes` of scratch (256-byte aligned); returns the offset.
  uint64_t scratch(uint64_t bytes);

  /// Adds the kernel of `spec` (headed by this builder's header unless the
  /// spec has its own) and one launch of it.
  void kernel(KernelSpec spec);

  GeneratedFusion take() { return std::move(generated); }

private:
  /// Adds `kernel` unless the fusion has it already (a second launch of the
  /// same source), and a launch of it.
  void addLaunch(GeneratedKernel kernel, std::array<uint32_t, 3> grid,
                 std::array<uint32_t, 3> block, uint32_t dynamicSharedBytes,
                 std::vector<LaunchArg> args);

  std::string header;
  GeneratedFusion generated;
};

/// A comment naming `op` with its attributes and operand types, for the
/// header of generated sources.
std::string describeOp(Operation *op);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_EMITTERUTILS_H
