//===- FunctionInliner.h - local ONNX functions inlined at their calls -*- C++
//-*-===//
//
// A model may define functions of its own (ModelProto.functions: what
// PyTorch's dynamo exporter writes for modules and for its op library), each
// called by nodes whose domain and op type name it. The importer reads the
// graph as one list of nodes of standard ops: every call is replaced by the
// function's body, with the body's values renamed apart, the formal inputs
// and outputs bound to the call's, and attribute references (ref_attr_name)
// resolved against the call's attributes or the function's defaults. Each
// node keeps the default-domain opset it binds to (a function imports its
// own) and the name its diagnostics use, which names the calls it came
// through.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_FUNCTIONINLINER_H
#define KILN_COMPILER_IMPORT_ONNX_FUNCTIONINLINER_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <deque>
#include <string>
#include <vector>

namespace mlir::kiln::onnx_import {

/// One node to import.
struct FlatNode {
  /// The node (of the graph, or a rewritten copy of a function's node).
  const onnx::NodeProto *proto = nullptr;
  /// The default-domain opset the node binds to.
  int64_t opset = 0;
  /// What diagnostics call it: "node 'fc1' (Gemm)", or for a node of a
  /// function "node 'n0' (Erf) of function 'gelu' called by node 'g' (gelu)".
  std::string label;
};

/// The graph of `model` with every call of a local function inlined,
/// recursively. `defaultOpset` is the model's default-domain opset;
/// rewritten nodes live in `storage`. Errors (a recursive function, a call
/// with more inputs or outputs than the function, an attribute the
/// function does not declare) are reported at the call's location, which
/// `locate` makes from a label.
FailureOr<std::vector<FlatNode>>
flattenGraph(const onnx::ModelProto &model, int64_t defaultOpset,
             std::deque<onnx::NodeProto> &storage,
             llvm::function_ref<Location(const std::string &label)> locate);

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_FUNCTIONINLINER_H
