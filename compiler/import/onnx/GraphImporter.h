//===- GraphImporter.h - the state of one ONNX graph import ----*- C++ -*-===//
//
// GraphImporter walks the nodes of an ONNX graph in order, keeps what each
// ONNX value name stands for (a kiln SSA value, plus its static contents where
// they are known: constants, shapes, folded shape computations) and hands
// each node to the importer registered for its op type as an OnnxNode.
//
// OnnxNode is a node being imported: its inputs, its attributes (every
// attribute must be read by the op's importer, so an attribute it does not
// understand is an error rather than silently ignored), its location and its
// results.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_GRAPHIMPORTER_H
#define KILN_COMPILER_IMPORT_ONNX_GRAPHIMPORTER_H

#include "compiler/import/onnx/FunctionInliner.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "dialects/kiln/IR/KilnBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

namespace mlir::kiln::onnx_import {

class GraphImporter;

/// What an ONNX value name stands for.
struct GraphValue {
  Value value;
  /// Exact integer contents of a statically known integer value (kept in
  /// int64, so that e.g. Slice's INT64_MAX bounds survive kiln's i32).
  std::optional<llvm::SmallVector<int64_t>> ints;
  /// Shape of `ints` when `value` has not been materialised yet.
  llvm::SmallVector<int64_t> intsShape;
  /// Element type `ints` materialise as (i32 or i1).
  Type intsType;
};

class OnnxNode {
public:
  OnnxNode(const onnx::NodeProto &node, GraphImporter &graph, Location loc,
           int64_t opset);

  llvm::StringRef opType() const { return node.op_type(); }
  const onnx::NodeProto &proto() const { return node; }
  Location loc() const { return location; }
  /// The default-domain opset the node binds to (the model's, or that of
  /// the local function it was inlined from).
  int64_t opset() const { return nodeOpset; }
  /// The version of the op's definition at that opset (OpVersions.h).
  int version() const;
  const OnnxImportOptions &options() const;

  OpBuilder &builder();
  KilnBuilder kb() { return KilnBuilder(builder(), location); }

  // Inputs. Optional inputs may be absent (missing or named "").
  unsigned numInputs() const { return node.input_size(); }
  bool hasInput(unsigned i) const {
    return i < numInputs() && !node.input(i).empty();
  }
  /// The kiln value of input `i` (null after an error, already reported).
  Value input(unsigned i);
  RankedTensorType inputType(unsigned i);
  /// The statically known integer contents of input `i`, or an error naming
  /// `what` where they are not known at compile time.
  FailureOr<llvm::SmallVector<int64_t>> constantInts(unsigned i,
                                                     llvm::StringRef what);
  /// The statically known contents of input `i` as doubles.
  FailureOr<std::vector<double>> constantNumbers(unsigned i,
                                                 llvm::StringRef what);
  /// Whether input `i`'s contents are known at compile time.
  bool isConstant(unsigned i);

  // Attributes. Each accessor marks the attribute as understood.
  bool hasAttr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue);
  float floatAttr(llvm::StringRef name, float defaultValue);
  std::string stringAttr(llvm::StringRef name, llvm::StringRef defaultValue);
  llvm::SmallVector<int64_t>
  intsAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> defaultValue = {});
  llvm::SmallVector<float> floatsAttr(llvm::StringRef name);
  const onnx::TensorProto *tensorAttr(llvm::StringRef name);
  /// Marks an attribute understood without reading it (e.g. one whose every
  /// value means the same to kiln).
  void ignoreAttr(llvm::StringRef name) { used.insert(name); }
  /// An error for every attribute the importer did not read.
  LogicalResult checkAllAttributesUsed();

  // Outputs. Optional outputs may be absent (missing or named "").
  unsigned numOutputs() const { return node.output_size(); }
  bool hasOutput(unsigned i) const {
    return i < numOutputs() && !node.output(i).empty();
  }
  void setResult(unsigned i, Value value);
  /// A statically known integer result (materialised only when used).
  void setConstantResult(unsigned i, llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<int64_t> ints, Type elementType);

  // Diagnostics at the node.
  InFlightDiagnostic emitError();
  /// "<op> does not support <what>": a located error, returns failure.
  LogicalResult unsupported(const llvm::Twine &what);

  // Helpers for importers.
  /// Normalises an axis in [-rank, rank) to [0, rank), or fails naming it.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   llvm::StringRef what = "axis");
  /// A constant of `type` filled with `value`.
  Value splat(RankedTensorType type, double value);
  /// A rank-0 constant with `like`'s element type.
  Value scalarLike(double value, Value like);
  /// Checks that `values` broadcast together like numpy and (with
  /// `sameElementType`) share one element type: a located error naming
  /// their types otherwise. Kiln's builders infer result types and must
  /// only see operands that have one.
  LogicalResult checkBroadcast(llvm::ArrayRef<Value> values,
                               bool sameElementType = true);
  /// Checks that kiln.matmul accepts these operands.
  LogicalResult checkMatmul(Value lhs, Value rhs, bool transposeLhs,
                            bool transposeRhs);
  /// Reshapes `value` to `shape` (no op when it already has it).
  Value reshape(Value value, llvm::ArrayRef<int64_t> shape);

private:
  const onnx::NodeProto &node;
  GraphImporter &graph;
  Location location;
  int64_t nodeOpset;
  llvm::StringSet<> used;
  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
};

/// An op importer: builds kiln IR for one node. Returns failure after
/// emitting a diagnostic at the node.
using OpImporter = std::function<LogicalResult(OnnxNode &node)>;

class OpImporterRegistry {
public:
  void add(llvm::StringRef opType, OpImporter importer) {
    importers[opType] = std::move(importer);
  }
  const OpImporter *lookup(llvm::StringRef opType) const {
    auto it = importers.find(opType);
    return it == importers.end() ? nullptr : &it->second;
  }
  /// The registry with every op family's importers.
  static const OpImporterRegistry &global();
  /// The op types with an importer, sorted.
  std::vector<llvm::StringRef> opTypes() const;

private:
  llvm::StringMap<OpImporter> importers;
};

// Registration hooks of the op families (one file each).
void registerElementwiseImporters(OpImporterRegistry &registry);
void registerActivationImporters(OpImporterRegistry &registry);
void registerShapeImporters(OpImporterRegistry &registry);
void registerReductionImporters(OpImporterRegistry &registry);
void registerNNImporters(OpImporterRegistry &registry);
void registerRecurrentImporters(OpImporterRegistry &registry);
void registerLossImporters(OpImporterRegistry &registry);
void registerResizeImporters(OpImporterRegistry &registry);
void registerPadImporters(OpImporterRegistry &registry);
void registerEinsumImporters(OpImporterRegistry &registry);

class GraphImporter {
public:
  GraphImporter(const onnx::ModelProto &model, MLIRContext *context,
                const OnnxImportOptions &options, llvm::StringRef fileName);

  /// Builds the module; null after errors (reported through the context).
  OwningOpRef<ModuleOp> run();

  MLIRContext *getContext() { return context; }
  OpBuilder &builder() { return b; }
  const OnnxImportOptions &options() const { return opts; }

  GraphValue *lookup(llvm::StringRef name);
  void define(llvm::StringRef name, GraphValue value);
  /// The kiln value of `name`, materialising a static integer value as a
  /// constant (an error at `loc` if it does not fit i32).
  Value materialize(llvm::StringRef name, Location loc);
  /// Replaces an op whose operands are all constants by the constants its
  /// CPU reference evaluation gives, so that shape computations stay
  /// static. Returns the (possibly new) results.
  llvm::SmallVector<Value> foldIfConstant(Operation *op);

private:
  const onnx::ModelProto &model;
  MLIRContext *context;
  const OnnxImportOptions &opts;
  std::string fileName;
  OpBuilder b;
  int64_t defaultOpset = 0;
  llvm::StringMap<GraphValue> values;

  Location graphLoc(llvm::StringRef what);
  LogicalResult checkVersions(Location fileLoc);
  LogicalResult importNode(const FlatNode &node);
};

/// Writes the values of `tensors` (floating-point initializers) to the
/// safetensors file `path`, by name (Weights.cpp).
LogicalResult writeWeights(llvm::ArrayRef<const onnx::TensorProto *> tensors,
                           llvm::StringRef path, Location loc);

/// Replaces GELU written out in element-wise ops (the forms exporters write
/// below opset 20) by kiln.gelu (GeluPatterns.cpp).
void fuseGeluPatterns(func::FuncOp function);

/// Replaces PyTorch's nn.GroupNorm as its TorchScript exporter writes it (an
/// instance norm between reshapes, then a per-channel Mul and Add) by one
/// kiln.group_norm (GroupNormPatterns.cpp).
void fuseGroupNormPatterns(func::FuncOp function);

/// Builds the loss that --loss asks for on the graph's output
/// (LossImporters.cpp).
FailureOr<Value> buildRequestedLoss(OpBuilder &b, Location loc,
                                    llvm::StringRef kind, Value prediction,
                                    Value target);

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_GRAPHIMPORTER_H
