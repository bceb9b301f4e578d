//===- PointwiseFunctors.cpp - the device code of one pointwise group -----===//
//
// A group's functor for kernels/pointwise.cuh: the ScalarEmitter's
// statements of every result at one root element (element(), and lane() on
// the vector path, which reads and writes registers instead of memory), the
// values with one element computed once per thread (prologue()), and the
// list of tensors the vector path moves. Each value is computed at the root
// element projected to its own shape (numpy broadcasting); a result smaller
// than the root is stored only by the root elements whose broadcast
// coordinates are 0.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/pointwise/PointwiseEmitter.h"
#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::kiln::codegen::pointwise {
namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }


/// Whether `statements` declare `name` (`const <type> <name> = ...;`).
bool declares(StringRef statements, StringRef name) {
  return statements.contains((" " + name + " = ").str());
}

class FunctorWriter {
public:
  FunctorWriter(FusionOp fusion, const KernelPlan &plan, unsigned index)
      : fusion(fusion), body(fusion.getBody().front()),
        yield(cast<YieldOp>(body.getTerminator())), group(plan.groups[index]),
        emitter(group.shape,
                plan.groups.size() == 1 ? ""
                                        : "g" + std::to_string(index) + "_",
                "kiln_index"),
        indexType(plan.indexType) {}

  FailureOr<std::string> write(const std::string &name, std::string &globals);

private:
  std::string pointers();
  FailureOr<std::string> prologue();
  std::string vectorTensors();
  FailureOr<std::string> elementStatements(bool lanes);
  std::string coordDecls(const SmallVector<bool> &extra);
  SmallVector<Value> laneInputs();

  FusionOp fusion;
  Block &body;
  YieldOp yield;
  const Group &group;
  ScalarEmitter emitter;
  std::string indexType;
};

SmallVector<Value> FunctorWriter::laneInputs() {
  SmallVector<Value> out;
  for (unsigned i : group.inputs)
    if (group.laneInputs.count(body.getArgument(i)))
      out.push_back(body.getArgument(i));
  return out;
}

std::string FunctorWriter::pointers() {
  std::string text;
  for (unsigned i : group.inputs)
    text +=
        "  const " +
        storageCType(tensorType(body.getArgument(i)).getElementType()).str() +
        " *" + paramName(false, i) + ";\n";
  for (unsigned r : group.results)
    text +=
        "  " +
        storageCType(tensorType(fusion.getResult(r)).getElementType()).str() +
        " *" + paramName(true, r) + ";\n";
  return text;
}

/// The values with one element this group needs (its backward slice through
/// evaluated operands), computed once per thread; afterwards the emitter
/// reads them from the `scalars` argument `s`.
FailureOr<std::string> FunctorWriter::prologue() {
  std::string memberDecls, statements, values;
  if (group.elements > 1) {
    SmallVector<Value> scalars;
    for (unsigned i : group.inputs) {
      Value arg = body.getArgument(i);
      if (numElements(shapeOf(arg)) == 1 && !arg.use_empty())
        scalars.push_back(arg);
    }
    for (Operation &op : body.without_terminator())
      if (op.getNumResults() == 1 && numElements(shapeOf(op.getResult(0))) == 1)
        scalars.push_back(op.getResult(0));
    llvm::DenseSet<Value> needed;
    SmallVector<Value> stack;
    for (unsigned r : group.results)
      stack.push_back(yield.getValues()[r]);
    while (!stack.empty()) {
      Value x = stack.pop_back_val();
      if (!needed.insert(x).second)
        continue;
      if (Operation *op = x.getDefiningOp()) {
        SmallVector<Value> remapped = ScalarEmitter::remappedOperands(op);
        for (Value operand : op->getOperands())
          if (!llvm::is_contained(remapped, operand))
            stack.push_back(operand);
      }
    }
    SmallVector<std::pair<Value, std::string>> held;
    for (Value v : scalars) {
      if (!needed.count(v))
        continue;
      FailureOr<std::string> expr = emitter.emit(v, statements, 4);
      if (failed(expr))
        return failure();
      emitter.bindValue(v, *expr);
      held.push_back({v, *expr});
    }
    // Values the statements declare become members of `scalars`; literals
    // stay literals.
    llvm::StringSet<> members;
    for (auto [v, expr] : held) {
      if (!declares(statements, expr))
        continue;
      if (members.insert(expr).second) {
        memberDecls += "    " +
                       computeCType(tensorType(v).getElementType()).str() +
                       " " + expr + ";\n";
        values += (values.empty() ? "" : ", ") + expr;
      }
      emitter.bindValue(v, "s." + expr);
    }
  }
  std::string text;
  if (!memberDecls.empty())
    text += "  // Values with one element, computed once per thread.\n";
  text += memberDecls.empty() ? "  struct scalars {};\n"
                              : "  struct scalars {\n" + memberDecls + "  };\n";
  text += "  __device__ __forceinline__ scalars prologue() const {\n" +
          statements + "    return scalars{" + values + "};\n  }\n";
  return text;
}

/// The registers of the vector path and the tensors it moves.
std::string FunctorWriter::vectorTensors() {
  std::string regs, inputs, partners, results;
  auto add = [&](std::string &list, const std::string &type,
                 const std::string &name) {
    regs += "    alignas(16) " + type + " " + name + "[V];\n";
    list += "    f(&lanes<V>::" + name + ", " + name + ");\n";
  };
  for (Value arg : laneInputs()) {
    std::string type = storageCType(tensorType(arg).getElementType()).str();
    std::string name = paramName(false, cast<BlockArgument>(arg).getArgNumber());
    add(inputs, type, name);
    auto pair = group.pairInputs.find(arg);
    if (pair == group.pairInputs.end())
      continue;
    regs += "    alignas(16) " + type + " " + name + "_pair[V];\n";
    partners += "    f(&lanes<V>::" + name + "_pair, " + name + ", " +
                indexLiteral(pair->second) + ");\n";
  }
  for (unsigned r : group.results)
    add(results,
        storageCType(tensorType(yield.getValues()[r]).getElementType()).str(),
        paramName(true, r));
  std::string visit = "  template <int V, class F>\n  __device__ "
                      "__forceinline__ void ";
  return "  // V consecutive root elements of every tensor, in registers.\n"
         "  template <int V> struct lanes {\n" +
         regs + "  };\n" + visit + "inputs(F &&f) const {\n" + inputs +
         "  }\n" + visit + "partners(F &&f) const {\n" + partners + "  }\n" +
         visit + "results(F &&f) const {\n" + results + "  }\n";
}

/// Declarations of the root coordinates the statements used, from the flat
/// index `idx`.
std::string FunctorWriter::coordDecls(const SmallVector<bool> &extra) {
  std::string text;
  SmallVector<int64_t> strides(group.shape.size(), 1);
  for (size_t d = group.shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * group.shape[d];
  for (size_t d = 0; d < group.shape.size(); ++d) {
    if (!emitter.usesCoord(d) && !extra[d])
      continue;
    std::string expr = "idx";
    if (strides[d] != 1)
      expr = "(" + expr + " / " + indexLiteral(strides[d]) + ")";
    if (d > 0)
      expr += " % " + indexLiteral(group.shape[d]);
    text += "    const kiln_index i" + std::to_string(d) + " = " + expr + ";\n";
  }
  return text;
}

/// The statements of one root element at flat index `idx`: values and
/// stores. With `lanes`, results go to the registers of lane v.
FailureOr<std::string> FunctorWriter::elementStatements(bool lanes) {
  std::string pad(4, ' ');
  std::string statements, stores;
  emitter.clearUsage();
  emitter.resetScope();
  SmallVector<bool> extra(group.shape.size(), false);
  for (unsigned r : group.results) {
    Value value = yield.getValues()[r];
    FailureOr<std::string> expr = emitter.emit(value, statements, 4);
    if (failed(expr))
      return failure();
    std::string out = paramName(true, r);
    if (lanes) {
      stores += pad + "kiln_store(&l." + out + "[v], " + *expr + ");\n";
      continue;
    }
    ArrayRef<int64_t> shape = shapeOf(value);
    if (sameElements(shape, group.shape)) {
      stores += pad + "kiln_store(" + out + " + idx, " + *expr + ");\n";
      continue;
    }
    // A broadcast result: stored by the root elements whose broadcast
    // coordinates are 0, at its own flat index.
    size_t offset = group.shape.size() - shape.size();
    std::string guard, at;
    int64_t stride = 1;
    for (size_t d = 0; d < group.shape.size(); ++d) {
      if (group.shape[d] == 1)
        continue;
      extra[d] = true;
      if (d < offset || shape[d - offset] == 1)
        guard +=
            (guard.empty() ? "" : " && ") + ("i" + std::to_string(d)) + " == 0";
    }
    for (size_t d = shape.size(); d-- > 0;) {
      if (shape[d] != 1) {
        std::string term = "i" + std::to_string(d + offset);
        if (stride != 1)
          term += " * " + indexLiteral(stride);
        at = at.empty() ? term : term + " + " + at;
      }
      stride *= shape[d];
    }
    if (at.empty())
      at = "0";
    stores += pad + (guard.empty() ? "" : "if (" + guard + ") ") +
              "kiln_store(" + out + " + " + at + ", " + *expr + ");\n";
  }
  return coordDecls(extra) + statements + stores;
}

FailureOr<std::string> FunctorWriter::write(const std::string &name,
                                            std::string &globals) {
  SmallVector<std::string> coordNames;
  for (size_t d = 0; d < group.shape.size(); ++d)
    coordNames.push_back("i" + std::to_string(d));
  emitter.setIndex(coordNames, "idx");
  for (unsigned i : group.inputs)
    emitter.bindBuffer(body.getArgument(i), paramName(false, i));

  std::string text = "struct " + name + " {\n";
  text += "  typedef kiln::pointwise::config<kiln_index, " +
          indexLiteral(group.elements) + ", " + std::to_string(group.width) +
          "> config;\n";
  text += pointers();
  FailureOr<std::string> scalars = prologue();
  if (failed(scalars))
    return failure();
  text += *scalars;
  if (group.width > 1) {
    text += vectorTensors();
    for (Value arg : laneInputs()) {
      std::string p = paramName(false, cast<BlockArgument>(arg).getArgNumber());
      emitter.bindBuffer(arg, p, "kiln_load(l." + p + "[v])",
                         group.pairInputs.count(arg)
                             ? "kiln_load(l." + p + "_pair[v])"
                             : "");
    }
    FailureOr<std::string> lane = elementStatements(/*lanes=*/true);
    if (failed(lane))
      return failure();
    text += "  template <int V>\n  __device__ __forceinline__ void lane(const "
            "scalars &s, lanes<V> &l, int v,\n                                "
            "       kiln_index idx) const {\n" +
            *lane + "  }\n";
    for (Value arg : laneInputs())
      emitter.bindBuffer(
          arg, paramName(false, cast<BlockArgument>(arg).getArgNumber()));
  }
  FailureOr<std::string> element = elementStatements(/*lanes=*/false);
  if (failed(element))
    return failure();
  text +=
      "  __device__ __forceinline__ void element(const scalars &s,\n"
      "                                          kiln_index idx) const {\n" +
      *element + "  }\n};\n\n";
  globals += emitter.globals();
  return text;
}

} // namespace

std::string paramName(bool result, unsigned i) {
  return (result ? "r" : "a") + std::to_string(i);
}

FailureOr<std::string> groupFunctor(FusionOp fusion, const KernelPlan &plan,
                                    unsigned index, const std::string &name,
                                    std::string &globals) {
  return FunctorWriter(fusion, plan, index).write(name, globals);
}

} // namespace mlir::kiln::codegen::pointwise
