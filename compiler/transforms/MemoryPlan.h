//===- MemoryPlan.h - device buffers of an entry -----------------*- C++
//-*-===//

#ifndef KILN_COMPILER_TRANSFORMS_MEMORYPLAN_H
#define KILN_COMPILER_TRANSFORMS_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <cstdint>
#include <string>

namespace mlir::kiln {

/// Where a tensor lives: `size` bytes at `offset` of the entry's arena, or
/// of the resident buffer `name`.
struct BufferSlot {
  bool resident = false;
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// Arena offsets are multiples of this.
inline constexpr uint64_t kArenaAlignment = 256;

struct MemoryPlanOptions {
  /// Kernels after a tensor's last read during which its bytes are not yet
  /// reused. With 1, the kernel after the last reader never writes over what
  /// that reader reads, so the two may run as one merged launch
  /// (codegen/cuda/LaunchMerging.h), at the cost of a larger arena.
  unsigned reuseDelay = 0;
};

/// Plans `function` (fused) and records the plan as attributes.
LogicalResult planMemory(func::FuncOp function,
                         const MemoryPlanOptions &options = {});

/// Reads the slot the plan gave `value` (a function argument, a fusion
/// result or a reshape result).
FailureOr<BufferSlot> bufferOf(Value value);

/// Bytes of a static tensor type (i1 takes one byte per element).
uint64_t tensorBytes(Type type);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_MEMORYPLAN_H
