//===- KernelBudget.cpp - the tensors one kernel may take -----------------===//

#include "compiler/transforms/KernelBudget.h"

#include "dialects/kiln/IR/KilnDialect.h"
#include "runtime/artifact/launch_limits.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::kiln {

int64_t kernelTensorBudget(llvm::StringRef kind) {
  constexpr int64_t params = ::kiln::launch_limits::kMaxKernelParams;
  return kind == "pointwise" || kind == "optimizer" ? params : params / 2;
}

/// Whether every kernel evaluates `value` in place.
static bool isSplatConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto dense =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  return dense && dense.isSplat();
}

int64_t kernelTensors(const llvm::SetVector<Operation *> &ops,
                      llvm::ArrayRef<Operation *> more) {
  auto member = [&](Operation *op) {
    return op && (ops.contains(op) || llvm::is_contained(more, op));
  };
  llvm::DenseSet<Value> read;
  int64_t written = 0;
  auto count = [&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!member(operand.getDefiningOp()) && !isSplatConstant(operand))
        read.insert(operand);
    for (Value result : op->getResults())
      written += llvm::any_of(result.getUsers(), [&](Operation *user) {
        return !member(user);
      });
  };
  for (Operation *op : ops)
    count(op);
  llvm::SmallPtrSet<Operation *, 8> counted;
  for (Operation *op : more)
    if (!ops.contains(op) && counted.insert(op).second)
      count(op);
  return static_cast<int64_t>(read.size()) + written;
}

} // namespace mlir::kiln
