//===- MemoryPlan.h - device buffers of an entry -----------------*- C++
//-*-===//

#ifndef KILN_COMPILER_TRANSFORMS_MEMORYPLAN_H
#define KILN_COMPILER_TRANSFORMS_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <optional>
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
  /// (codegen/cuda/LaunchMerging.h), at the cost of a larger arena. Only
  /// tensors of at most kMaxDelayedBytes are delayed.
  unsigned reuseDelay = 0;
  /// Workspaces: bytes that a fusion's kernels use while they run and no
  /// other (code generation's scratch: a split-K GEMM's f32 partials,
  /// attention's row statistics), by fusion op. Each is planned in the
  /// arena like a tensor that lives for its fusion alone.
  llvm::DenseMap<Operation *, uint64_t> workspaces;
};

/// The largest tensor whose bytes the reuse delay keeps. Merging pays for
/// launch-bound kernels, which touch little memory; a kernel that reads a
/// larger tensor runs long enough that its successor gains little beside
/// it, while keeping such tensors one kernel longer grows the arena by
/// their size wherever they die at its peak (a transformer block's 64 MiB
/// MLP activations: 40 MiB more arena, for no merged launch).
inline constexpr uint64_t kMaxDelayedBytes = 1 << 20;

/// Plans `function` (fused) and records the plan as attributes (the reuse
/// delay too, for planWorkspaces).
LogicalResult planMemory(func::FuncOp function,
                         const MemoryPlanOptions &options = MemoryPlanOptions());

/// Plans `function` again, with the reuse delay of its recorded plan, now
/// with `workspaces` (MemoryPlanOptions): what code generation does once it
/// knows each fusion's scratch.
LogicalResult
planWorkspaces(func::FuncOp function,
               const llvm::DenseMap<Operation *, uint64_t> &workspaces);

/// The arena offset of `fusion`'s workspace, when the plan has one.
std::optional<uint64_t> workspaceOffset(Operation *fusion);

/// Reads the slot the plan gave `value` (a function argument, a fusion
/// result or a reshape result).
FailureOr<BufferSlot> bufferOf(Value value);

/// Bytes of a static tensor type (i1 takes one byte per element).
uint64_t tensorBytes(Type type);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_MEMORYPLAN_H
