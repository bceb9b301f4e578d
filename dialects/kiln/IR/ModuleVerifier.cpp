//===- ModuleVerifier.cpp - checks of a whole kiln module -----------------===//

#include "dialects/kiln/IR/ModuleVerifier.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::kiln {
namespace {

/// A function and the calls in its body to functions of the module.
struct CallNode {
  func::FuncOp function;
  llvm::SmallVector<std::pair<func::CallOp, unsigned>> calls; // call, callee
};

llvm::SmallVector<CallNode> buildCallGraph(ModuleOp module) {
  llvm::SmallVector<CallNode> nodes;
  llvm::DenseMap<Operation *, unsigned> index;
  for (func::FuncOp function : module.getOps<func::FuncOp>()) {
    index[function] = nodes.size();
    nodes.push_back({function, {}});
  }
  SymbolTable symbols(module);
  for (CallNode &node : nodes)
    node.function.walk([&](func::CallOp call) {
      // An unknown callee is func.call's own verifier's error.
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        node.calls.push_back({call, index.lookup(callee)});
    });
  return nodes;
}

/// Depth-first search with an explicit stack (a chain of many functions
/// must not exhaust the native one); reports the first back edge.
LogicalResult checkAcyclic(llvm::ArrayRef<CallNode> nodes) {
  enum class State { Unvisited, OnPath, Done };
  llvm::SmallVector<State> state(nodes.size(), State::Unvisited);
  llvm::SmallVector<std::pair<unsigned, unsigned>> path; // node, next call
  for (unsigned root = 0; root < nodes.size(); ++root) {
    if (state[root] != State::Unvisited)
      continue;
    state[root] = State::OnPath;
    path.push_back({root, 0});
    while (!path.empty()) {
      auto &[node, next] = path.back();
      if (next == nodes[node].calls.size()) {
        state[node] = State::Done;
        path.pop_back();
        continue;
      }
      auto [call, callee] = nodes[node].calls[next++];
      if (state[callee] == State::Unvisited) {
        state[callee] = State::OnPath;
        path.push_back({callee, 0});
        continue;
      }
      if (state[callee] == State::Done)
        continue;
      auto name = [&](unsigned i) {
        func::FuncOp function = nodes[i].function; // a copy, not const
        return "@" + function.getSymName().str();
      };
      std::string cycle;
      auto start = llvm::find_if(
          path, [&](const auto &entry) { return entry.first == callee; });
      for (auto it = start; it != path.end(); ++it)
        cycle += name(it->first) + " -> ";
      cycle += name(callee);
      return call.emitOpError("closes the call cycle ")
             << cycle
             << ": a kiln function may call others but not itself, directly "
                "or through others";
    }
  }
  return success();
}

struct VerifyModulePass
    : public PassWrapper<VerifyModulePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyModulePass)
  StringRef getArgument() const final { return "kiln-verify-module"; }
  StringRef getDescription() const final {
    return "Checks that the module defines functions and no call cycle";
  }
  void runOnOperation() final {
    if (failed(verifyModule(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace

LogicalResult verifyModule(ModuleOp module) {
  if (module.getOps<func::FuncOp>().empty())
    return module.emitError("no functions: a kiln model defines at least one "
                            "func.func");
  return checkAcyclic(buildCallGraph(module));
}

std::unique_ptr<Pass> createVerifyModulePass() {
  return std::make_unique<VerifyModulePass>();
}

} // namespace mlir::kiln
