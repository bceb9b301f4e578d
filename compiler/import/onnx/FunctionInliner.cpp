//===- FunctionInliner.cpp - local ONNX functions inlined at their calls --===//

#include "compiler/import/onnx/FunctionInliner.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <google/protobuf/unknown_field_set.h>

namespace mlir::kiln::onnx_import {
namespace {

// Fields of newer IR versions that libonnx 1.12's generated classes keep as
// unknown fields.
constexpr int kNodeOverloadField = 8;            // NodeProto.overload, IR 10
constexpr int kFunctionAttributeProtoField = 11; // FunctionProto defaults, IR 9
constexpr int kFunctionOverloadField = 13; // FunctionProto.overload, IR 10

/// The length-delimited unknown fields numbered `number` of `message`.
template <typename Message>
std::vector<std::string> unknownBytes(const Message &message, int number) {
  const google::protobuf::UnknownFieldSet &fields = message.unknown_fields();
  std::vector<std::string> values;
  for (int i = 0; i < fields.field_count(); ++i)
    if (fields.field(i).number() == number &&
        fields.field(i).type() ==
            google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      values.push_back(fields.field(i).length_delimited());
  return values;
}

template <typename Message> std::string overloadOf(const Message &message) {
  int field = std::is_same_v<Message, onnx::NodeProto> ? kNodeOverloadField
                                                       : kFunctionOverloadField;
  std::vector<std::string> values = unknownBytes(message, field);
  return values.empty() ? std::string() : values.back();
}

std::string functionKey(const std::string &domain, const std::string &name,
                        const std::string &overload) {
  return domain + '\0' + name + '\0' + overload;
}

std::string nodeLabel(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty() ? "node " + std::to_string(index)
                                         : "node '" + node.name() + "'";
  return name + " (" + node.op_type() + ")";
}

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

class Inliner {
public:
  Inliner(const onnx::ModelProto &model, int64_t defaultOpset,
          std::deque<onnx::NodeProto> &storage,
          llvm::function_ref<Location(const std::string &)> locate)
      : model(model), defaultOpset(defaultOpset), storage(storage),
        locate(locate) {}

  FailureOr<std::vector<FlatNode>> run() {
    for (const onnx::FunctionProto &function : model.functions()) {
      std::string key =
          functionKey(function.domain(), function.name(), overloadOf(function));
      if (!functions.try_emplace(key, &function).second)
        return emitError(locate("function '" + function.name() + "'"))
               << "the model defines the function '" << function.name()
               << "' of domain '" << function.domain() << "' twice";
    }
    const onnx::GraphProto &graph = model.graph();
    for (const auto &value : graph.input())
      used.insert(value.name());
    for (const auto &tensor : graph.initializer())
      used.insert(tensor.name());
    for (const auto &node : graph.node())
      for (const std::string &name : node.output())
        used.insert(name);
    for (auto [index, node] : llvm::enumerate(graph.node()))
      if (failed(add(node, defaultOpset,
                     nodeLabel(node, static_cast<int>(index)))))
        return failure();
    return std::move(nodes);
  }

private:
  const onnx::ModelProto &model;
  int64_t defaultOpset;
  std::deque<onnx::NodeProto> &storage;
  llvm::function_ref<Location(const std::string &)> locate;
  llvm::StringMap<const onnx::FunctionProto *> functions;
  llvm::StringSet<> used;
  std::vector<const onnx::FunctionProto *> active;
  std::vector<FlatNode> nodes;
  int calls = 0;

  const onnx::FunctionProto *functionOf(const onnx::NodeProto &node) const {
    auto it = functions.find(
        functionKey(node.domain(), node.op_type(), overloadOf(node)));
    return it == functions.end() ? nullptr : it->second;
  }

  LogicalResult add(const onnx::NodeProto &node, int64_t opset,
                    const std::string &label) {
    const onnx::FunctionProto *function = functionOf(node);
    if (!function) {
      nodes.push_back(FlatNode{&node, opset, label});
      return success();
    }
    return inlineCall(node, *function, label);
  }

  /// A value name of the call numbered `call` that no graph value has.
  std::string freshName(const std::string &prefix, const std::string &name) {
    std::string fresh = prefix + name;
    while (used.contains(fresh))
      fresh += "'";
    used.insert(fresh);
    return fresh;
  }

  /// The function's default-domain opset: its own import, else the model's.
  int64_t opsetOf(const onnx::FunctionProto &function) const {
    for (const auto &opset : function.opset_import())
      if (isDefaultDomain(opset.domain()))
        return opset.version();
    return defaultOpset;
  }

  LogicalResult inlineCall(const onnx::NodeProto &call,
                           const onnx::FunctionProto &function,
                           const std::string &callLabel) {
    Location loc = locate(callLabel);
    std::string name = function.name();
    if (llvm::is_contained(active, &function))
      return emitError(loc) << "the function '" << name
                            << "' calls itself, which cannot be inlined";
    if (call.input_size() > function.input_size() ||
        call.output_size() > function.output_size())
      return emitError(loc)
             << "the call gives " << call.input_size() << " inputs and "
             << call.output_size() << " outputs; the function '" << name
             << "' has " << function.input_size() << " and "
             << function.output_size();

    // Attributes: the call's, else the function's defaults.
    std::vector<onnx::AttributeProto> defaults;
    for (const std::string &bytes :
         unknownBytes(function, kFunctionAttributeProtoField))
      if (!defaults.emplace_back().ParseFromString(bytes))
        return emitError(loc) << "the function '" << name
                              << "' has an unreadable attribute default";
    llvm::StringMap<const onnx::AttributeProto *> attributes;
    for (const onnx::AttributeProto &attr : defaults)
      attributes[attr.name()] = &attr;
    for (const onnx::AttributeProto &attr : call.attribute()) {
      if (!llvm::is_contained(function.attribute(), attr.name()) &&
          !attributes.count(attr.name()))
        return emitError(loc) << "the function '" << name
                              << "' has no attribute '" << attr.name() << "'";
      attributes[attr.name()] = &attr;
    }

    // Values: formal inputs and outputs bound to the call's, the others
    // renamed apart.
    std::string prefix = name + "#" + std::to_string(calls++) + "/";
    llvm::StringMap<std::string> rename;
    for (auto [i, formal] : llvm::enumerate(function.input()))
      rename[formal] = static_cast<int>(i) < call.input_size()
                           ? call.input(static_cast<int>(i))
                           : std::string();
    // An output that is also an input is copied by an Identity.
    std::vector<std::pair<std::string, std::string>> passThrough;
    for (auto [i, formal] : llvm::enumerate(function.output())) {
      int index = static_cast<int>(i);
      bool given = index < call.output_size() && !call.output(index).empty();
      std::string actual =
          given ? call.output(index) : freshName(prefix, formal);
      if (rename.count(formal))
        passThrough.emplace_back(rename[formal], actual);
      else
        rename[formal] = actual;
    }
    auto bound = [&](const std::string &formal) -> std::string {
      if (formal.empty())
        return formal;
      auto it = rename.find(formal);
      if (it != rename.end())
        return it->second;
      return rename[formal] = freshName(prefix, formal);
    };

    active.push_back(&function);
    int64_t opset = opsetOf(function);
    for (auto [index, body] : llvm::enumerate(function.node())) {
      onnx::NodeProto &node = storage.emplace_back(body);
      for (int i = 0; i < node.input_size(); ++i)
        node.set_input(i, bound(node.input(i)));
      for (int i = 0; i < node.output_size(); ++i)
        node.set_output(i, bound(node.output(i)));
      std::string label = nodeLabel(body, static_cast<int>(index)) +
                          " of function '" + name + "' called by " + callLabel;
      if (failed(resolveAttributes(node, attributes, locate(label))) ||
          failed(add(node, opset, label)))
        return failure();
    }
    for (auto [from, to] : passThrough) {
      onnx::NodeProto &copy = storage.emplace_back();
      copy.set_op_type("Identity");
      copy.add_input(from);
      copy.add_output(to);
      nodes.push_back(FlatNode{&copy, opset, callLabel});
    }
    active.pop_back();
    return success();
  }

  /// Replaces each attribute that refers to one of the call's by its value
  /// under the referring name; one that refers to an attribute neither the
  /// call nor the defaults give is left out, as ONNX specifies.
  static LogicalResult resolveAttributes(
      onnx::NodeProto &node,
      const llvm::StringMap<const onnx::AttributeProto *> &attributes,
      Location loc) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> resolved;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.ref_attr_name().empty()) {
        *resolved.Add() = attr;
        continue;
      }
      auto it = attributes.find(attr.ref_attr_name());
      if (it == attributes.end())
        continue;
      const onnx::AttributeProto &value = *it->second;
      if (attr.type() != onnx::AttributeProto::UNDEFINED &&
          value.type() != attr.type())
        return emitError(loc)
               << "the attribute '" << attr.name() << "' refers to '"
               << attr.ref_attr_name() << "' of type "
               << onnx::AttributeProto::AttributeType_Name(value.type())
               << ", not "
               << onnx::AttributeProto::AttributeType_Name(attr.type());
      onnx::AttributeProto *copy = resolved.Add();
      *copy = value;
      copy->set_name(attr.name());
    }
    node.mutable_attribute()->Swap(&resolved);
    return success();
  }
};

} // namespace

FailureOr<std::vector<FlatNode>>
flattenGraph(const onnx::ModelProto &model, int64_t defaultOpset,
             std::deque<onnx::NodeProto> &storage,
             llvm::function_ref<Location(const std::string &label)> locate) {
  return Inliner(model, defaultOpset, storage, locate).run();
}

} // namespace mlir::kiln::onnx_import
