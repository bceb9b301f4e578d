//===- OnnxNode.cpp - one ONNX node during import -------------------------===//

#include "compiler/import/onnx/GraphImporter.h"
#include "compiler/import/onnx/OnnxTypes.h"
#include "compiler/import/onnx/OpVersions.h"
#include "dialects/kiln/Utils/ShapeInference.h"

#include "mlir/IR/Diagnostics.h"

namespace mlir::kiln::onnx_import {

OnnxNode::OnnxNode(const onnx::NodeProto &node, GraphImporter &graph,
                   Location loc, int64_t opset)
    : node(node), graph(graph), location(loc), nodeOpset(opset) {}

int OnnxNode::version() const {
  return definitionVersion(node.op_type(), nodeOpset);
}
const OnnxImportOptions &OnnxNode::options() const { return graph.options(); }
OpBuilder &OnnxNode::builder() { return graph.builder(); }

Value OnnxNode::input(unsigned i) {
  if (!hasInput(i)) {
    emitError() << "ONNX " << opType() << " needs input " << i
                << ", which the node does not give";
    return Value();
  }
  return graph.materialize(node.input(i), location);
}

RankedTensorType OnnxNode::inputType(unsigned i) {
  Value value = input(i);
  return value ? llvm::cast<RankedTensorType>(value.getType())
               : RankedTensorType();
}

bool OnnxNode::isConstant(unsigned i) {
  if (!hasInput(i))
    return false;
  GraphValue *entry = graph.lookup(node.input(i));
  return entry && (entry->ints ||
                   (entry->value && entry->value.getDefiningOp<ConstantOp>()));
}

FailureOr<llvm::SmallVector<int64_t>>
OnnxNode::constantInts(unsigned i, llvm::StringRef what) {
  GraphValue *entry = hasInput(i) ? graph.lookup(node.input(i)) : nullptr;
  if (entry && entry->ints)
    return *entry->ints;
  if (entry && entry->value)
    if (auto constant = entry->value.getDefiningOp<ConstantOp>()) {
      auto attr = llvm::cast<DenseElementsAttr>(constant.getValue());
      if (!attr.getElementType().isIntOrIndex())
        return emitError() << what << " must be an integer tensor", failure();
      return intsOf(attr);
    }
  return emitError() << what
                     << " must be known at compile time (a constant, an "
                        "initializer or computed from static shapes): kiln "
                        "compiles static shapes only",
         failure();
}

FailureOr<std::vector<double>> OnnxNode::constantNumbers(unsigned i,
                                                         llvm::StringRef what) {
  GraphValue *entry = hasInput(i) ? graph.lookup(node.input(i)) : nullptr;
  if (entry && entry->ints)
    return std::vector<double>(entry->ints->begin(), entry->ints->end());
  if (entry && entry->value)
    if (auto constant = entry->value.getDefiningOp<ConstantOp>()) {
      auto attr = llvm::cast<DenseElementsAttr>(constant.getValue());
      std::vector<double> numbers;
      if (llvm::isa<FloatType>(attr.getElementType())) {
        for (const llvm::APFloat &v : attr.getValues<llvm::APFloat>())
          numbers.push_back(v.convertToDouble());
      } else {
        for (int64_t v : intsOf(attr))
          numbers.push_back(static_cast<double>(v));
      }
      return numbers;
    }
  return emitError() << what << " must be known at compile time", failure();
}

const onnx::AttributeProto *OnnxNode::findAttr(llvm::StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

bool OnnxNode::hasAttr(llvm::StringRef name) const {
  return findAttr(name) != nullptr;
}

int64_t OnnxNode::intAttr(llvm::StringRef name, int64_t defaultValue) {
  used.insert(name);
  const onnx::AttributeProto *attr = findAttr(name);
  return attr ? attr->i() : defaultValue;
}

float OnnxNode::floatAttr(llvm::StringRef name, float defaultValue) {
  used.insert(name);
  const onnx::AttributeProto *attr = findAttr(name);
  return attr ? attr->f() : defaultValue;
}

std::string OnnxNode::stringAttr(llvm::StringRef name,
                                 llvm::StringRef defaultValue) {
  used.insert(name);
  const onnx::AttributeProto *attr = findAttr(name);
  return attr ? attr->s() : defaultValue.str();
}

llvm::SmallVector<int64_t>
OnnxNode::intsAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> defaultValue) {
  used.insert(name);
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return llvm::SmallVector<int64_t>(defaultValue);
  return llvm::SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

llvm::SmallVector<float> OnnxNode::floatsAttr(llvm::StringRef name) {
  used.insert(name);
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return {};
  return llvm::SmallVector<float>(attr->floats().begin(), attr->floats().end());
}

const onnx::TensorProto *OnnxNode::tensorAttr(llvm::StringRef name) {
  used.insert(name);
  const onnx::AttributeProto *attr = findAttr(name);
  return attr && attr->has_t() ? &attr->t() : nullptr;
}

LogicalResult OnnxNode::checkAllAttributesUsed() {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (!used.contains(attr.name()))
      return unsupported("the attribute '" + attr.name() + "'");
  return success();
}

void OnnxNode::setResult(unsigned i, Value value) {
  if (hasOutput(i))
    graph.define(node.output(i), GraphValue{value, std::nullopt, {}, Type()});
}

void OnnxNode::setConstantResult(unsigned i, llvm::ArrayRef<int64_t> shape,
                                 llvm::ArrayRef<int64_t> ints,
                                 Type elementType) {
  if (!hasOutput(i))
    return;
  GraphValue entry;
  entry.ints = llvm::SmallVector<int64_t>(ints);
  entry.intsShape.assign(shape.begin(), shape.end());
  entry.intsType = elementType;
  graph.define(node.output(i), std::move(entry));
}

InFlightDiagnostic OnnxNode::emitError() { return mlir::emitError(location); }

LogicalResult OnnxNode::unsupported(const llvm::Twine &what) {
  return mlir::emitError(location)
         << "ONNX " << opType() << "-" << version() << " (opset " << opset()
         << "): kiln does not support " << what;
}

FailureOr<int64_t> OnnxNode::normalizeAxis(int64_t axis, int64_t rank,
                                           llvm::StringRef what) {
  if (axis < -rank || axis >= rank)
    return emitError() << what << " " << axis << " is out of range for rank "
                       << rank,
           failure();
  return axis < 0 ? axis + rank : axis;
}

LogicalResult OnnxNode::checkBroadcast(llvm::ArrayRef<Value> values,
                                       bool sameElementType) {
  if (values.empty())
    return success();
  auto first = llvm::cast<RankedTensorType>(values.front().getType());
  Shape shape(first.getShape());
  for (Value v : values.drop_front()) {
    auto type = llvm::cast<RankedTensorType>(v.getType());
    if (sameElementType && type.getElementType() != first.getElementType())
      return emitError() << "ONNX " << opType()
                         << " operands have different element types: " << first
                         << " and " << type;
    ShapeOrError joined = broadcastShapes(shape, type.getShape());
    if (!joined.ok())
      return emitError() << "ONNX " << opType() << " operands " << first
                         << " and " << type
                         << " do not broadcast (numpy rule): "
                         << joined.message();
    shape = joined.shape();
  }
  return success();
}

LogicalResult OnnxNode::checkMatmul(Value lhs, Value rhs, bool transposeLhs,
                                    bool transposeRhs) {
  auto a = llvm::cast<RankedTensorType>(lhs.getType());
  auto b = llvm::cast<RankedTensorType>(rhs.getType());
  if (a.getElementType() != b.getElementType())
    return emitError() << "ONNX " << opType()
                       << " operands have different element types: " << a
                       << " and " << b;
  ShapeOrError shape =
      matmulShape(a.getShape(), b.getShape(), transposeLhs, transposeRhs);
  if (!shape.ok())
    return emitError() << "ONNX " << opType() << " cannot multiply " << a
                       << " and " << b << ": " << shape.message();
  return success();
}

Value OnnxNode::splat(RankedTensorType type, double value) {
  return kb().splat(type, value);
}

Value OnnxNode::scalarLike(double value, Value like) {
  return kb().scalarLike(value, like);
}

Value OnnxNode::reshape(Value value, llvm::ArrayRef<int64_t> shape) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return builder().create<ReshapeOp>(
      location, RankedTensorType::get(shape, type.getElementType()), value);
}

} // namespace mlir::kiln::onnx_import
