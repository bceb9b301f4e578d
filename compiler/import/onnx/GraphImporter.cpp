//===- GraphImporter.cpp - ONNX graph walk, arguments and results ---------===//

#include "compiler/import/onnx/GraphImporter.h"
#include "compiler/import/onnx/OnnxTypes.h"
#include "compiler/import/onnx/OpVersions.h"
#include "compiler/import/onnx/TrainableInitializers.h"
#include "compiler/interpreter/Interpreter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"

#include <fstream>
#include <limits>
#include <sstream>

namespace mlir::kiln::onnx_import {

const OpImporterRegistry &OpImporterRegistry::global() {
  static const OpImporterRegistry registry = [] {
    OpImporterRegistry r;
    registerElementwiseImporters(r);
    registerActivationImporters(r);
    registerShapeImporters(r);
    registerReductionImporters(r);
    registerNNImporters(r);
    registerRecurrentImporters(r);
    registerLossImporters(r);
    registerResizeImporters(r);
    registerPadImporters(r);
    registerEinsumImporters(r);
    return r;
  }();
  return registry;
}

std::vector<llvm::StringRef> OpImporterRegistry::opTypes() const {
  std::vector<llvm::StringRef> types;
  for (const auto &entry : importers)
    types.push_back(entry.getKey());
  llvm::sort(types);
  return types;
}

GraphImporter::GraphImporter(const onnx::ModelProto &model,
                             MLIRContext *context,
                             const OnnxImportOptions &options,
                             llvm::StringRef fileName)
    : model(model), context(context), opts(options), fileName(fileName),
      b(context) {}

GraphValue *GraphImporter::lookup(llvm::StringRef name) {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

void GraphImporter::define(llvm::StringRef name, GraphValue value) {
  values[name] = std::move(value);
}

Value GraphImporter::materialize(llvm::StringRef name, Location loc) {
  GraphValue *entry = lookup(name);
  if (!entry) {
    emitError(loc) << "input '" << name
                   << "' is not defined by an earlier node, an initializer "
                      "or a graph input";
    return Value();
  }
  if (entry->value)
    return entry->value;
  auto type = RankedTensorType::get(entry->intsShape, entry->intsType);
  std::vector<double> numbers;
  for (int64_t v : *entry->ints) {
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max()) {
      emitError(loc) << "the value " << v << " of '" << name
                     << "' is beyond kiln's i32 range";
      return Value();
    }
    numbers.push_back(static_cast<double>(v));
  }
  OpBuilder::InsertionGuard guard(b);
  // Materialise at the start of the body, so the constant dominates every
  // later use wherever it was first asked for.
  Block *body = b.getInsertionBlock();
  b.setInsertionPointToStart(body);
  entry->value =
      b.create<ConstantOp>(loc, elementsFromNumbers(type, numbers)).getResult();
  return entry->value;
}

llvm::SmallVector<Value> GraphImporter::foldIfConstant(Operation *op) {
  llvm::SmallVector<Value> results(op->getResults());
  if (llvm::isa<ConstantOp>(op) || op->getNumRegions() != 0 ||
      op->getNumOperands() == 0)
    return results;
  int64_t elements = 0;
  for (Type type : op->getResultTypes())
    elements += llvm::cast<RankedTensorType>(type).getNumElements();
  // Folding is for shape computations and small constant subgraphs.
  if (elements > (1 << 16))
    return results;
  llvm::SmallVector<ref::Tensor> operandTensors;
  for (Value operand : op->getOperands()) {
    auto constant = operand.getDefiningOp<ConstantOp>();
    if (!constant)
      return results;
    auto attr = llvm::cast<DenseElementsAttr>(constant.getValue());
    ref::Tensor tensor =
        ref::Tensor::ofType(llvm::cast<RankedTensorType>(attr.getType()));
    if (llvm::isa<FloatType>(attr.getElementType())) {
      size_t i = 0;
      for (const llvm::APFloat &v : attr.getValues<llvm::APFloat>())
        tensor.data[i++] = v.convertToDouble();
    } else {
      size_t i = 0;
      for (int64_t v : intsOf(attr))
        tensor.data[i++] = static_cast<double>(v);
    }
    operandTensors.push_back(std::move(tensor));
  }
  const ref::Evaluator *evaluator = ref::EvaluatorRegistry::global().lookup(op);
  if (!evaluator)
    return results;
  ref::Interpreter interpreter(ref::Precision::F32);
  ref::EvalContext evalContext{ref::Precision::F32, interpreter};
  llvm::SmallVector<const ref::Tensor *> operandPointers;
  for (const ref::Tensor &tensor : operandTensors)
    operandPointers.push_back(&tensor);
  llvm::SmallVector<ref::Tensor> resultTensors;
  for (Type type : op->getResultTypes())
    resultTensors.push_back(
        ref::Tensor::ofType(llvm::cast<RankedTensorType>(type)));
  // An evaluation error leaves the op to fail at run time with its message.
  ScopedDiagnosticHandler quiet(context,
                                [](Diagnostic &) { return success(); });
  if (failed((*evaluator)(op, operandPointers, resultTensors, evalContext)))
    return results;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  for (auto [i, tensor] : llvm::enumerate(resultTensors)) {
    for (double &element : tensor.data)
      element = ref::roundToStorage(element, tensor.kind, ref::Precision::F32);
    auto type = llvm::cast<RankedTensorType>(op->getResult(i).getType());
    results[i] = b.create<ConstantOp>(op->getLoc(),
                                      elementsFromNumbers(type, tensor.data));
  }
  op->replaceAllUsesWith(results);
  op->erase();
  return results;
}

Location GraphImporter::graphLoc(llvm::StringRef what) {
  return NameLoc::get(StringAttr::get(context, what),
                      FileLineColLoc::get(context, fileName, 0, 0));
}

LogicalResult GraphImporter::importNode(const FlatNode &flat) {
  const onnx::NodeProto &node = *flat.proto;
  Location loc = graphLoc(flat.label);
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return emitError(loc) << "ONNX op '" << node.op_type() << "' of domain '"
                          << node.domain()
                          << "' is not supported (only the default domain "
                             "and the model's own functions)";
  const OpImporter *importer =
      OpImporterRegistry::global().lookup(node.op_type());
  if (!importer || opVersions(node.op_type()).empty())
    return emitError(loc) << "ONNX op '" << node.op_type()
                          << "' is not supported by the kiln importer";
  if (flat.opset > kNewestOpset)
    return emitError(loc) << "the node binds to opset " << flat.opset
                          << " of the default ONNX domain; the importer knows "
                             "the ONNX ops up to opset "
                          << kNewestOpset;
  if (definitionVersion(node.op_type(), flat.opset) == 0)
    return emitError(loc) << "ONNX op '" << node.op_type()
                          << "' is defined from opset "
                          << opVersions(node.op_type()).front()
                          << " on, and the node's default-domain opset is "
                          << flat.opset;
  Block *body = b.getInsertionBlock();
  Operation *before = body->empty() ? nullptr : &body->back();
  OnnxNode onnxNode(node, *this, loc, flat.opset);
  // Every failure must have told why: count the errors on their way out.
  int errors = 0;
  LogicalResult imported = success();
  {
    ScopedDiagnosticHandler counter(context, [&](Diagnostic &diagnostic) {
      if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
        ++errors;
      return failure(); // on to the caller's handler
    });
    imported = succeeded((*importer)(onnxNode)) &&
                       succeeded(onnxNode.checkAllAttributesUsed())
                   ? success()
                   : failure();
  }
  if (failed(imported)) {
    if (errors == 0)
      emitError(loc) << "ONNX " << node.op_type()
                     << ": the node could not be imported";
    return failure();
  }
  // Verify what the node became, so that every error is reported at its node.
  Operation *first = before          ? before->getNextNode()
                     : body->empty() ? nullptr
                                     : &body->front();
  llvm::SmallVector<Operation *> created;
  for (Operation *op = first; op; op = op->getNextNode())
    created.push_back(op);
  for (Operation *op : created)
    if (failed(mlir::verify(op)))
      return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if (!lookup(node.output(i)))
      return emitError(loc) << "ONNX " << node.op_type()
                            << ": kiln does not support the output '"
                            << node.output(i) << "' (output " << i << ")";
  }
  // Fold what became constant (shape computations), in program order.
  for (Operation *op : created) {
    llvm::SmallVector<Value> old(op->getResults());
    llvm::SmallVector<Value> folded = foldIfConstant(op);
    for (auto [from, to] : llvm::zip(old, folded))
      if (from != to)
        for (auto &entry : values)
          if (entry.second.value == from)
            entry.second.value = to;
  }
  return success();
}

/// The model's file format and default-domain opset must be ones whose
/// meaning the importer knows: each op follows its definition at the
/// model's opset (OpVersions.h), whatever libonnx's own tables know.
LogicalResult GraphImporter::checkVersions(Location fileLoc) {
  if (model.ir_version() > kNewestIrVersion)
    return emitError(fileLoc)
           << "the model has ONNX IR version " << model.ir_version()
           << "; the importer reads IR versions up to " << kNewestIrVersion;
  for (const onnx::OperatorSetIdProto &opsetId : model.opset_import())
    if (opsetId.domain().empty() || opsetId.domain() == "ai.onnx")
      defaultOpset = opsetId.version();
  if (defaultOpset <= 0)
    return emitError(fileLoc) << "the model imports no opset of the default "
                                 "ONNX domain";
  if (defaultOpset > kNewestOpset)
    return emitError(fileLoc)
           << "the model imports opset " << defaultOpset
           << " of the default ONNX domain; the importer knows the ONNX ops "
              "up to opset "
           << kNewestOpset;
  return success();
}

/// Whether every element of the floating-point `values` is finite.
static bool allFinite(DenseElementsAttr values) {
  return llvm::all_of(values.getValues<APFloat>(),
                      [](const APFloat &v) { return v.isFinite(); });
}

/// ONNX assigns every value once: a node output that names a graph input,
/// an initializer or an earlier output would replace that value silently.
/// The error is at the second writer, naming the first.
static LogicalResult
checkSingleWriters(const onnx::GraphProto &graph,
                   llvm::ArrayRef<FlatNode> nodes,
                   llvm::function_ref<Location(const std::string &)> locate) {
  llvm::StringMap<std::string> writers;
  for (const onnx::TensorProto &tensor : graph.initializer())
    writers.try_emplace(tensor.name(), "initializer '" + tensor.name() + "'");
  for (const onnx::ValueInfoProto &input : graph.input())
    writers.try_emplace(input.name(), "graph input '" + input.name() + "'");
  for (const FlatNode &node : nodes)
    for (const std::string &output : node.proto->output()) {
      if (output.empty())
        continue;
      auto [first, fresh] = writers.try_emplace(output, node.label);
      if (!fresh)
        return emitError(locate(node.label))
               << "ONNX " << node.proto->op_type() << ": output '" << output
               << "' is already written by " << first->second
               << "; every ONNX value has one writer";
    }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  const onnx::GraphProto &graph = model.graph();
  Location fileLoc = FileLineColLoc::get(context, fileName, 0, 0);
  if (failed(checkVersions(fileLoc)))
    return nullptr;
  std::deque<onnx::NodeProto> inlined;
  auto nodes =
      flattenGraph(model, defaultOpset, inlined,
                   [&](const std::string &label) { return graphLoc(label); });
  if (failed(nodes) ||
      failed(checkSingleWriters(graph, *nodes, [&](const std::string &label) {
        return graphLoc(label);
      })))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());

  llvm::StringMap<const onnx::TensorProto *> initializers;
  for (const onnx::TensorProto &tensor : graph.initializer())
    initializers[tensor.name()] = &tensor;
  auto trainable =
      selectTrainable(opts.trainable, graph, *nodes, fileLoc);
  if (failed(trainable))
    return nullptr;
  auto isTrainable = [&](const onnx::TensorProto &tensor) {
    return trainable->contains(tensor.name());
  };

  // Arguments: trainable initializers (parameters), then the graph inputs,
  // then the target of a requested loss.
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<DictionaryAttr> argAttrs;
  llvm::SmallVector<std::string> argNames;
  auto addArgument = [&](llvm::StringRef name, RankedTensorType type,
                         DenseElementsAttr weights) {
    llvm::SmallVector<NamedAttribute> attrs;
    attrs.push_back(
        b.getNamedAttr(KilnDialect::kNameAttrName, b.getStringAttr(name)));
    if (weights) {
      // A parameter starts from the model's own weights; its initialiser
      // is what a fresh initialisation draws (--fresh-params).
      InitKind kind = type.getRank() >= 2 ? InitKind::xavier : InitKind::zeros;
      attrs.push_back(b.getNamedAttr(KilnDialect::kParamAttrName,
                                     InitAttr::get(context, kind)));
      if (!opts.freshParameters)
        attrs.push_back(b.getNamedAttr(KilnDialect::kValueAttrName, weights));
    }
    argTypes.push_back(type);
    argAttrs.push_back(b.getDictionaryAttr(attrs));
    argNames.push_back(name.str());
  };
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    if (!isTrainable(tensor))
      continue;
    Location loc = graphLoc("initializer '" + tensor.name() + "'");
    Type element = kilnElementType(context, tensor.data_type());
    if (!element || !llvm::isa<FloatType>(element))
      return emitError(loc)
                 << "initializer '" << tensor.name() << "' of element type "
                 << onnxTypeName(tensor.data_type())
                 << " cannot be trainable (floating point only)",
             nullptr;
    auto weights =
        toElementsAttr(tensor, loc, "initializer '" + tensor.name() + "'");
    if (failed(weights))
      return nullptr;
    if (opts.trainable == "all" && !allFinite(*weights)) {
      // An infinity is a setting (a mask's fill value), never a weight.
      trainable->erase(tensor.name());
      continue;
    }
    addArgument(tensor.name(), llvm::cast<RankedTensorType>(weights->getType()),
                *weights);
  }
  llvm::StringSet<> staticNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue; // IR < 4 lists initializers as inputs too.
    if (opts.staticInputs.count(input.name())) {
      staticNames.insert(input.name());
      continue;
    }
    Location loc = graphLoc("input '" + input.name() + "'");
    auto type =
        kilnTypeOf(input.type(), loc, "graph input '" + input.name() + "'");
    if (failed(type))
      return nullptr;
    addArgument(input.name(), *type, DenseElementsAttr());
  }
  bool wantsLoss = !opts.loss.empty();
  if (wantsLoss) {
    if (opts.loss != "mse" && opts.loss != "cross_entropy")
      return emitError(fileLoc) << "--loss must be mse or cross_entropy, not '"
                                << opts.loss << "'",
             nullptr;
    if (opts.target.empty())
      return emitError(fileLoc) << "--loss needs --target=NAME, the name of "
                                   "the target input it adds",
             nullptr;
    if (graph.output_size() != 1)
      return emitError(fileLoc) << "--loss needs a graph with one output, not "
                                << graph.output_size(),
             nullptr;
    Location loc = graphLoc("output '" + graph.output(0).name() + "'");
    auto outType = kilnTypeOf(graph.output(0).type(), loc,
                              "graph output '" + graph.output(0).name() + "'");
    if (failed(outType))
      return nullptr;
    RankedTensorType targetType = *outType;
    if (opts.loss == "cross_entropy") {
      if (outType->getRank() != 2)
        return emitError(loc) << "--loss=cross_entropy needs logits [N, C], "
                                 "not "
                              << *outType,
               nullptr;
      targetType =
          RankedTensorType::get({outType->getDimSize(0)}, b.getI32Type());
    }
    addArgument(opts.target, targetType, DenseElementsAttr());
  }

  auto function = b.create<func::FuncOp>(fileLoc, opts.functionName,
                                         b.getFunctionType(argTypes, {}));
  function.setAllArgAttrs(argAttrs);
  Block *body = function.addEntryBlock();
  b.setInsertionPointToEnd(body);
  for (auto [i, name] : llvm::enumerate(argNames))
    define(name, GraphValue{body->getArgument(i), std::nullopt, {}, Type()});

  // Constant initializers and static inputs: integers stay exact (lazily
  // materialised), floats become constants.
  auto defineConstant = [&](const onnx::TensorProto &tensor,
                            llvm::StringRef name) -> LogicalResult {
    Location loc = graphLoc("initializer '" + name.str() + "'");
    Type element = kilnElementType(context, tensor.data_type());
    if (element && element.isIntOrIndex()) {
      auto ints = readInt64s(tensor, loc, "initializer '" + name.str() + "'");
      if (failed(ints))
        return failure();
      GraphValue entry;
      entry.ints = *ints;
      entry.intsShape.assign(tensor.dims().begin(), tensor.dims().end());
      entry.intsType = element;
      define(name, std::move(entry));
      return success();
    }
    auto attr = toElementsAttr(tensor, loc, "initializer '" + name.str() + "'");
    if (failed(attr))
      return failure();
    // Named, so that a resident buffer made of it carries the name.
    auto constant = b.create<ConstantOp>(loc, *attr);
    constant->setAttr(KilnDialect::kNameAttrName, b.getStringAttr(name));
    define(name, GraphValue{constant.getResult(), std::nullopt, {}, Type()});
    return success();
  };
  for (const onnx::TensorProto &tensor : graph.initializer())
    if (!isTrainable(tensor) &&
        failed(defineConstant(tensor, tensor.name())))
      return nullptr;
  for (const auto &[name, tensor] : opts.staticInputs) {
    if (!staticNames.contains(name))
      return emitError(fileLoc) << "a static value is given for '" << name
                                << "', which is not a graph input",
             nullptr;
    if (failed(defineConstant(tensor, name)))
      return nullptr;
  }

  for (const FlatNode &node : *nodes)
    if (failed(importNode(node)))
      return nullptr;

  // Results: the graph outputs, checked against their declared types, or
  // the requested loss.
  llvm::SmallVector<Value> results;
  llvm::SmallVector<DictionaryAttr> resultAttrs;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Location loc = graphLoc("output '" + output.name() + "'");
    Value value = materialize(output.name(), loc);
    if (!value)
      return nullptr;
    auto type = llvm::cast<RankedTensorType>(value.getType());
    if (output.type().has_tensor_type()) {
      const auto &declared = output.type().tensor_type();
      Type element = kilnElementType(context, declared.elem_type());
      if (declared.elem_type() != 0 && element != type.getElementType())
        return emitError(loc)
                   << "graph output '" << output.name() << "' is declared "
                   << onnxTypeName(declared.elem_type())
                   << " but the imported value is " << type,
               nullptr;
      if (declared.has_shape()) {
        bool matches = declared.shape().dim_size() == type.getRank();
        for (int d = 0; matches && d < declared.shape().dim_size(); ++d)
          if (declared.shape().dim(d).has_dim_value() &&
              declared.shape().dim(d).dim_value() != type.getDimSize(d))
            matches = false;
        if (!matches)
          return emitError(loc) << "graph output '" << output.name()
                                << "' has the declared shape of another "
                                   "type than the imported "
                                << type,
                 nullptr;
      }
    }
    results.push_back(value);
    resultAttrs.push_back(b.getDictionaryAttr({b.getNamedAttr(
        KilnDialect::kNameAttrName, b.getStringAttr(output.name()))}));
  }
  if (wantsLoss) {
    Location loc = graphLoc("--loss=" + opts.loss);
    auto loss = buildRequestedLoss(b, loc, opts.loss, results.front(),
                                   body->getArgument(argTypes.size() - 1));
    if (failed(loss))
      return nullptr;
    results.assign({*loss});
    resultAttrs.assign({b.getDictionaryAttr({b.getNamedAttr(
        KilnDialect::kNameAttrName, b.getStringAttr("loss"))})});
  }
  b.create<func::ReturnOp>(fileLoc, results);
  llvm::SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  function.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  function.setAllResultAttrs(resultAttrs);
  fuseGeluPatterns(function);
  fuseGroupNormPatterns(function);
  if (failed(mlir::verify(*module)))
    return nullptr;
  if (!opts.weightsPath.empty()) {
    llvm::SmallVector<const onnx::TensorProto *> params;
    for (const onnx::TensorProto &tensor : graph.initializer())
      if (isTrainable(tensor))
        params.push_back(&tensor);
    if (failed(writeWeights(params, opts.weightsPath, fileLoc)))
      return nullptr;
  }
  return module;
}

} // namespace mlir::kiln::onnx_import

namespace mlir::kiln {

OwningOpRef<ModuleOp> importOnnxModel(const onnx::ModelProto &model,
                                      MLIRContext *context,
                                      const OnnxImportOptions &options,
                                      llvm::StringRef fileName) {
  context->loadDialect<KilnDialect, func::FuncDialect>();
  onnx_import::GraphImporter importer(model, context, options, fileName);
  return importer.run();
}

OwningOpRef<ModuleOp> importOnnxFile(llvm::StringRef path, MLIRContext *context,
                                     const OnnxImportOptions &options) {
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  std::ifstream file(path.str(), std::ios::binary);
  if (!file)
    return emitError(loc) << "cannot open the ONNX model '" << path << "'",
           nullptr;
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&file))
    return emitError(loc) << "'" << path
                          << "' is not an ONNX model (protobuf ModelProto)",
           nullptr;
  if (failed(loadExternalData(model, path, context)))
    return nullptr;
  return importOnnxModel(model, context, options, path);
}

bool parseTensorProto(llvm::StringRef bytes, onnx::TensorProto &tensor) {
  return tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

} // namespace mlir::kiln
