//===- ScalarEmitter.h - C statements for pointwise kiln ops -----*- C++
//-*-===//
//
// Turns the pointwise ops of a region into CUDA C statements that compute one
// element of each value: the building block of the pointwise and optimizer
// kernels, and of the fused prologues and epilogues of the other emitters.
//
// Index model. The statements run at one element of a *root* shape, given
// as C expressions of its coordinates (and optionally of its row-major flat
// index). Every value is evaluated at the root element projected to its own
// shape by numpy broadcasting (trailing dimensions aligned; a size-1
// dimension reads coordinate 0), so a value of shape [64] inside a root of
// [8, 64] is read at (i1) and a rank-0 value at (). Values must therefore be
// broadcast-compatible with the root.
//
// External values are either buffers (dense row-major device arrays of the
// value's storage type, loaded with kiln_load at the projected flat index)
// or C expressions that already hold the element at the current index (a
// register of an enclosing kernel, e.g. a GEMM accumulator). Index-remapping
// ops (transpose, slice, flip, pad, concat, reshape, rope, embedding,
// resize) read their operands at remapped indices: from buffers, or by
// computing the operand there (a nested emitter over the operand's shape
// evaluates its ops at the remapped coordinates; nothing computed at the
// current index is reused). Where a position may lie outside an operand (pad, the inputs of
// concat, an embedding's rows) the operand is computed in a branch taken
// only at positions inside it, so that every group of pointwise and
// index-remapping ops has a kernel, whatever computes their operands.
//
// Compute types: float for f32/bf16/f16 (an op with a bf16 or f16 result
// rounds its f32 value once to that type, as the reference interpreter
// does), int for i32 (wrapping), bool for i1. Helpers come from
// kiln/prelude.cuh, the ops' device functions from kiln/scalar_ops.cuh
// (kScalarOpsHeader), which kernels using the emitter include.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_SCALAR_SCALAREMITTER_H
#define KILN_CODEGEN_CUDA_SCALAR_SCALAREMITTER_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::kiln::codegen {

/// The header of the device functions the statements call
/// (codegen/cuda/kernels/scalar_ops.cuh): a kernel that holds them includes
/// it after kiln/prelude.cuh.
inline constexpr llvm::StringLiteral kScalarOpsHeader = "kiln/scalar_ops.cuh";

/// C type of an element in memory: float, __nv_bfloat16, __half, int, bool.
llvm::StringRef storageCType(Type elementType);
/// C type an element is computed in: float, int or bool.
llvm::StringRef computeCType(Type elementType);
/// Bytes of one stored element (i1 is one byte).
int64_t storageBytes(Type elementType);
/// C literals that denote exactly `value` (inf and NaN by bit pattern).
std::string floatLiteral(float value);
std::string doubleLiteral(double value);
/// A C integer literal of the index type (LL suffix when large).
std::string indexLiteral(int64_t value);

class ScalarEmitter {
public:
  /// `rootShape` is the index space; `prefix` starts every name the emitter
  /// declares (so several emitters can share a kernel); `indexType` is the C
  /// type of coordinates and flat indices ("int" or "long long").
  ScalarEmitter(llvm::ArrayRef<int64_t> rootShape, std::string prefix,
                std::string indexType = "long long");

  /// Where the statements evaluate: C expressions of the root coordinates
  /// (one per root dimension) and, optionally, of the root's flat index
  /// (derived from the coordinates when empty).
  void setIndex(llvm::ArrayRef<std::string> coords, std::string flat = "");

  /// `value` lives in a dense row-major buffer: `pointer` names a `const T *`
  /// of its storage type. `lane`, when given, is a C expression holding the
  /// element at the root flat index (a register filled by a vector load), used
  /// instead of a load whenever the buffer is read there.
  /// `partner`, when given with `lane`, holds the element of the rotation
  /// partner (the other half of the last dimension) of the root flat index,
  /// which a rope of the buffer reads from there instead of loading it.
  void bindBuffer(Value value, std::string pointer, std::string lane = "",
                  std::string partner = "");
  /// `expr` holds the element of `value` at the current index (compute type).
  void bindValue(Value value, std::string expr);
  bool isBound(Value value) const;

  /// Whether the emitter knows `op` (an op with a scalar form, and its
  /// element types), ignoring where its operands come from; `why` gets a
  /// reason when not.
  static bool supportsOp(Operation *op, std::string *why = nullptr);
  /// Whether emit() has a lowering for the ops named `name`: an entry of
  /// the table of device functions (kernels/scalar_ops.cuh) or a case of
  /// its own. Every op with the ScalarForm trait has one.
  static bool hasScalarLowering(OperationName name);
  /// The operands of `op` it reads at remapped indices (the operands of
  /// index-remapping ops): buffers, or values computed there; all others are
  /// evaluated at the projected index.
  static llvm::SmallVector<Value> remappedOperands(Operation *op);

  /// Appends to `out` (each line indented by `indent` spaces) the statements
  /// that compute `value` at the current index, and the ops it depends on
  /// that this scope has not computed yet; returns the C expression (a name
  /// or a literal) of the element in compute type. Fails with a diagnostic
  /// on the op it cannot emit.
  FailureOr<std::string> emit(Value value, std::string &out, int indent);

  /// Forgets what emit() computed (bindings stay): the next statements go
  /// into a new C scope.
  void resetScope();

  /// File-scope definitions the statements use (tables of dense constants
  /// and rope frequencies); place them before the kernel.
  const std::string &globals() const { return globalText; }
  /// Which root coordinates the statements used since the last
  /// clearUsage(), so the caller declares only those; likewise the flat index.
  bool usesCoord(size_t dim) const { return coordUsed[dim]; }
  bool usesFlat() const { return flatUsed; }
  void clearUsage();

private:
  friend struct ScalarCases;
  struct OpEmission;
  struct Index {
    llvm::SmallVector<std::string> coords;
    std::string flat; // empty: from coords
  };
  SmallVector<std::string> projectedCoords(Value value);
  std::string projectedFlat(Value value);
  std::string flatOf(llvm::ArrayRef<int64_t> shape, const Index &index);
  std::string load(Value buffer, const Index &index);
  /// `buffer`'s element at the position `position` (a value of the same
  /// element count) is evaluated at.
  std::string loadProjected(Value buffer, Value position);
  std::string loadAtFlat(Value buffer, const std::string &flat);
  /// The element of `operand` (a data operand of a remapping op) at
  /// `index`: a load from its buffer, or its computation there (statements
  /// appended to `out`).
  FailureOr<std::string> valueAt(Value operand, const Index &index,
                                 std::string &out, int indent);
  FailureOr<std::string> expression(Operation *op, const std::string &name,
                                    std::string &out, int indent);
  std::string operandExpr(Value v) { return names.lookup(v); }
  std::string freshName(Operation *op);
  std::string rootCoord(size_t dim);
  std::string rootFlat();

  llvm::SmallVector<int64_t> rootShape;
  std::string prefix, indexType;
  llvm::SmallVector<std::string> coords;
  std::string flat;
  llvm::SmallVector<bool> coordUsed;
  bool flatUsed = false;

  struct Buffer {
    std::string pointer, lane, partner;
  };
  llvm::DenseMap<Value, Buffer> buffers;
  llvm::DenseMap<Value, std::string> bound;
  llvm::DenseMap<Value, std::string> names; // bound + this scope
  std::string globalText;
  unsigned counter = 0, globalCounter = 0, nestedCounter = 0;
  llvm::DenseMap<Operation *, std::string> globalNames;
  /// Tables by their initializer: ops of equal tables share one.
  llvm::StringMap<std::string> tablesByContents;
  /// Rope angles computed in this scope (table, position and pair index) and
  /// the name prefix of their sine and cosine: ropes of the same positions
  /// (q and k, or a rope and its gradient) compute each angle once.
  llvm::StringMap<std::string> ropeAngles;
};

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_SCALAR_SCALAREMITTER_H
