//===- ComposedRows.cpp - the row form of composed reductions
//---------------===//

#include "codegen/cuda/reduction/ComposedReduction.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen::reduction {

LogicalResult Composer::bindRowValues(llvm::ArrayRef<Value> roots, Scope &row,
                                      Scope &element, std::string &out) {
  llvm::DenseSet<Value> seen;
  llvm::SmallVector<Value> stack(roots.begin(), roots.end());
  llvm::SmallVector<Value> needed;
  while (!stack.empty()) {
    Value v = stack.pop_back_val();
    if (!seen.insert(v).second || isa<BlockArgument>(v))
      continue;
    if (isBoundRowValue(v)) {
      if (!element.emitter.isBound(v))
        needed.push_back(v);
      continue;
    }
    for (Value operand : v.getDefiningOp()->getOperands())
      stack.push_back(operand);
  }
  llvm::sort(needed, [](Value a, Value b) {
    return a.getDefiningOp()->isBeforeInBlock(b.getDefiningOp());
  });
  for (Value v : needed) {
    FailureOr<std::string> expr = row.emitter.emit(v, out, 2);
    if (failed(expr))
      return failure();
    element.emitter.bindValue(v, *expr);
  }
  return success();
}

LogicalResult Composer::emitRows() {
  const ReductionSpace &space = plan.spaces.front();
  int64_t m = space.rowLength();
  std::string flat = "f";
  Scope element(space.shape, "e_", flat);
  Scope row(space.rowShape(), "w_", "row");
  bindInputs(row);

  // Element roots of every loop, to know which inputs the loops read. The
  // float inputs with the elements of the space are rows of the kernel
  // (cached in registers when they fit).
  llvm::SmallVector<Value> elementRoots(space.elementOutputs);
  for (Operation *r : space.reductions)
    elementRoots.push_back(r->getOperand(0));
  llvm::SmallVector<unsigned> elementInputs =
      inputsRead(elementRoots, [&](Value v) { return isBoundRowValue(v); });
  llvm::SmallVector<BlockArgument> rowInputs;
  for (BlockArgument arg : body.getArguments())
    if (llvm::is_contained(elementInputs, arg.getArgNumber()) &&
        sameElements(shapeOf(arg), space.shape) &&
        isa<FloatType>(elementTypeOf(arg)))
      rowInputs.push_back(arg);
  // W elements per step with 16-byte accesses, when every row of the
  // narrowest tensor moved starts aligned.
  int64_t narrowest = 16;
  for (BlockArgument arg : rowInputs)
    narrowest = std::min(narrowest, storageBytes(elementTypeOf(arg)));
  for (Value v : space.elementOutputs)
    narrowest = std::min(narrowest, storageBytes(elementTypeOf(v)));
  int64_t width = std::min<int64_t>(8, 16 / narrowest);
  bool widthFits =
      rowInputs.size() + space.elementOutputs.size() > 0 && m >= width;
  for (BlockArgument arg : rowInputs)
    widthFits &= m * storageBytes(elementTypeOf(arg)) % 16 == 0;
  for (Value v : space.elementOutputs)
    widthFits &= m * storageBytes(elementTypeOf(v)) % 16 == 0;
  if (!widthFits)
    width = 1;
  RowKernel rowKernel(space.rows(), m, width);
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (llvm::is_contained(rowInputs, arg)) {
      std::string value = "x" + std::to_string(i);
      rowKernel.addRowInput(value, inName(i), cudaType(arg));
      element.emitter.bindBuffer(arg, inName(i), value);
    } else {
      element.emitter.bindBuffer(arg, inName(i));
    }
  }

  // One kernel: every input something reads (row values at the elements
  // read theirs once per row).
  Params params;
  for (BlockArgument arg : body.getArguments())
    if (!arg.use_empty())
      addInput(params, arg.getArgNumber());
  for (Value v : space.elementOutputs)
    addOutputs(params, v);
  for (Value v : plan.rowOutputs)
    addOutputs(params, v);

  std::vector<Accumulator> allAccs;
  std::string text;
  std::string loopHead =
      "const idx_t " + flat + " = row * (idx_t)" + str(m) + " + j;\n";
  unsigned counter = 0;
  for (unsigned stage = 0; stage < plan.numStages; ++stage) {
    llvm::SmallVector<Operation *> reds;
    for (Operation *r : distinct(space))
      if (plan.stageOf.lookup(r) == stage)
        reds.push_back(r);
    llvm::SmallVector<Value> roots;
    for (Operation *r : reds)
      roots.push_back(r->getOperand(0));
    if (failed(bindRowValues(roots, row, element, text)))
      return failure();
    element.reset();
    std::string code, combines;
    std::vector<Accumulator> accs;
    for (auto [k, r] : llvm::enumerate(reds)) {
      FailureOr<std::string> expr =
          element.emitter.emit(r->getOperand(0), code, 0);
      if (failed(expr))
        return failure();
      accs.push_back(accumulator(r, *expr));
      std::string acc = "acc" + std::to_string(counter + k);
      text += "  " + accs.back().type + " " + acc + " = " +
              accs.back().identity + ";\n";
      combines += acc + " = " + accs.back().combiner + "()(" + acc + ", " +
                  accs.back().element + ");\n";
    }
    text += rowKernel.loop(loopHead + element.coordinates(0) + code + combines);
    for (auto [k, r] : llvm::enumerate(reds)) {
      std::string acc = "acc" + std::to_string(counter + k);
      std::string name = "red" + std::to_string(counter + k);
      text += rowKernel.reduce(acc, accs[k].combiner, accs[k].identity,
                               scratchOf(accs[k].type));
      text += resultDecl(r, acc, name, 2);
      for (Operation *same : copiesOf(r)) {
        element.emitter.bindValue(same->getResult(0), name);
        row.emitter.bindValue(same->getResult(0), name);
      }
    }
    counter += reds.size();
    allAccs.insert(allAccs.end(), accs.begin(), accs.end());
  }

  std::string rowStores;
  for (Value v : plan.rowOutputs) {
    FailureOr<std::string> expr = row.emitter.emit(v, text, 2);
    if (failed(expr))
      return failure();
    rowStores += stores(v, *expr, "row", 4);
  }
  if (!rowStores.empty())
    text += "  if (active && lid == 0) {\n" + rowStores + "  }\n";
  if (!space.elementOutputs.empty()) {
    if (failed(bindRowValues(space.elementOutputs, row, element, text)))
      return failure();
    text += "  if (!active) return;\n";
    element.reset();
    std::string code, elementStores, lanesDecls, stepEnd;
    for (auto [n, v] : llvm::enumerate(space.elementOutputs)) {
      FailureOr<std::string> expr = element.emitter.emit(v, code, 0);
      if (failed(expr))
        return failure();
      if (width == 1) {
        elementStores += stores(v, *expr, flat, 0);
        continue;
      }
      // Collected per step, then stored like the rows were loaded.
      std::string lanes = "o" + std::to_string(n);
      std::string W = str(width);
      lanesDecls +=
          "  alignas(16) " + cudaType(v) + " " + lanes + "[" + W + "];\n";
      elementStores += "kiln_store(&" + lanes + "[e], " + *expr + ");\n";
      for (unsigned r : resultIndices.lookup(v))
        stepEnd += "kiln::reduce::store_step<row_cfg>(" + outName(r) +
                   ", row, j0, " + lanes + ");\n";
    }
    text += lanesDecls + rowKernel.loop(loopHead + element.coordinates(0) +
                                            code + elementStores,
                                        stepEnd);
  }
  // The row's coordinates (for the row values) come right after the row
  // index is known.
  std::string bodyText = scratchDecls(allAccs, /*withFloat=*/false) +
                         rowKernel.prologue() + row.coordinates(2) + text;
  KernelSpec spec;
  spec.prefix = "kiln_fused_rows";
  spec.templates = {"kiln/reduce_row.cuh"};
  spec.templateName = "fused_rows";
  spec.configuration =
      rowKernel.configuration() + " stages=" + std::to_string(plan.numStages);
  spec.functors = element.emitter.globals() + row.emitter.globals() +
                  "using row_cfg = " + rowKernel.config() + ";\n";
  spec.body = std::move(bodyText);
  spec.grid = rowKernel.grid();
  spec.block = rowKernel.block();
  kernels.kernel(std::move(spec), params);
  return success();
}

} // namespace mlir::kiln::codegen::reduction
