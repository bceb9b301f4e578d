//===- ComposedReductionKernels.cpp - kernels of composed reductions ------===//
//
// Kernels of reduction fusions that ReductionPlan describes: primitive
// reductions with element-wise prologue and epilogue ops. Element values
// are C statements from ScalarEmitter evaluated at an element of a reduced
// space (flat index `off` or `f`), row values statements evaluated once per
// row (index `o` or `row`), with each reduction's result bound to a
// variable rounded to its element type, as the reference interpreter
// rounds every op's result.
//
// - Generic form (one stage, no element value uses a result): the generic
//   reduction kernel of ReductionKernels.h computes the prologue while
//   loading each element, stores element outputs there, and stores the row
//   outputs from the final accumulators.
// - Row form: a row kernel walks each row once per stage (from registers
//   when the row fits), reduces, computes the row values the next stage or
//   the stores need once per row, and finally stores the row's outputs.
// - Multi-tensor form: the blocks of one kernel are partitioned among the
//   segments (a tensor, or tensors read together; constant tables fixed at
//   compile time); each block reduces a fixed chunk of its segment and
//   writes one partial per reduction; one block then combines each
//   reduction's partials in block order, evaluates the scalar epilogue and
//   stores it. Segments whose code is the same (the statistics of every
//   gradient) share it: their pointers and sizes come from tables, so the
//   kernel does not grow with the number of tensors. Small inputs take a
//   single block and a single launch.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ReductionKernels.h"
#include "codegen/cuda/ScalarEmitter.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "kiln/reduce_layout.cuh"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen::reduction {
namespace {

/// Threads of multi-tensor blocks; up to kSingleBlockElements elements in
/// all, one block does everything (kiln/reduce_layout.cuh).
constexpr int64_t kThreads = ::kiln::reduce::kMultiThreads;
constexpr int64_t kSingleBlockElements =
    ::kiln::reduce::kMultiSingleBlockElements;

llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// Coordinate `d` of the row-major flat index `flat` in `shape`.
std::string coordinate(llvm::ArrayRef<int64_t> shape, size_t d,
                       llvm::StringRef flat) {
  int64_t stride = 1;
  for (size_t k = d + 1; k < shape.size(); ++k)
    stride *= shape[k];
  std::string e = flat.str();
  if (stride != 1)
    e = "(" + e + " / " + indexLiteral(stride) + ")";
  if (d > 0)
    e += " % " + indexLiteral(shape[d]);
  return e;
}

/// A ScalarEmitter over `shape` evaluating at flat index `flat`, whose
/// coordinates are declared from it on demand.
class Scope {
public:
  Scope(llvm::ArrayRef<int64_t> shape, std::string prefix, std::string flat)
      : shape(shape), prefix(prefix), flat(std::move(flat)),
        emitter(shape, prefix, "idx_t") {
    llvm::SmallVector<std::string> names;
    for (size_t d = 0; d < shape.size(); ++d)
      names.push_back(this->prefix + "c" + std::to_string(d));
    emitter.setIndex(names, this->flat);
  }

  /// Starts a new C scope (a loop body): earlier statements are forgotten.
  void reset() {
    emitter.resetScope();
    emitter.clearUsage();
  }
  /// Declarations of the coordinates the statements since reset() used.
  std::string coordinates(int spaces) const {
    std::string s;
    for (size_t d = 0; d < shape.size(); ++d)
      if (emitter.usesCoord(d))
        s += std::string(spaces, ' ') + "const idx_t " + prefix + "c" +
             std::to_string(d) + " = " + coordinate(shape, d, flat) + ";\n";
    return s;
  }

  llvm::SmallVector<int64_t> shape;
  std::string prefix, flat;
  ScalarEmitter emitter;
};

class Composer {
public:
  Composer(FusionOp fusion, const ReductionPlan &plan, const GpuTarget &target)
      : fusion(fusion), plan(plan), body(fusion.getBody().front()),
        kernels(header(fusion), fusion, target) {
    for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands()))
      resultIndices[v].push_back(i);
    findCopies();
  }

  FailureOr<GeneratedFusion> run() {
    LogicalResult result = success();
    if (plan.form == ReductionPlan::Form::MultiTensor)
      result = emitMultiTensor();
    else if (plan.needsRowKernel)
      result = emitRows();
    else
      result = emitGeneric();
    if (failed(result))
      return failure();
    return kernels.builder.take();
  }

private:
  static std::string header(FusionOp fusion) {
    llvm::MapVector<llvm::StringRef, unsigned> counts;
    for (Operation &op : fusion.getBody().front().without_terminator())
      ++counts[op.getName().stripDialect()];
    std::string text = "// kiln reduction fusion of ";
    for (auto [i, entry] : llvm::enumerate(counts))
      text += (i ? ", " : "") + entry.first.str() +
              (entry.second > 1 ? " x" + std::to_string(entry.second) : "");
    return text + "\n";
  }

  //===--------------------------------------------------------------------===//
  // Names, parameters, reads
  //===--------------------------------------------------------------------===//

  static std::string inName(unsigned i) { return "in" + std::to_string(i); }
  static std::string outName(unsigned i) { return "out" + std::to_string(i); }

  void addInput(Params &params, unsigned i) const {
    params.add("const " + cudaType(body.getArgument(i)) + " *__restrict__ " +
                   inName(i),
               LaunchArg::operand(i));
  }
  void addOutputs(Params &params, Value v) const {
    for (unsigned i : resultIndices.lookup(v))
      params.add(cudaType(v) + " *__restrict__ " + outName(i),
                 LaunchArg::result(i));
  }
  /// Stores of `expr` into every result that yields `v`, at index `at`.
  std::string stores(Value v, llvm::StringRef expr, llvm::StringRef at,
                     int spaces) const {
    std::string s;
    for (unsigned i : resultIndices.lookup(v))
      s += std::string(spaces, ' ') + "kiln_store(" + outName(i) + " + " +
           at.str() + ", " + expr.str() + ");\n";
    return s;
  }

  /// The block arguments evaluating `roots` reads, not looking through the
  /// values `stop` accepts.
  llvm::SmallVector<unsigned>
  inputsRead(llvm::ArrayRef<Value> roots,
             llvm::function_ref<bool(Value)> stop) const {
    llvm::SetVector<unsigned> args;
    llvm::DenseSet<Value> seen;
    llvm::SmallVector<Value> stack(roots.begin(), roots.end());
    while (!stack.empty()) {
      Value v = stack.pop_back_val();
      if (!seen.insert(v).second || stop(v))
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        args.insert(arg.getArgNumber());
        continue;
      }
      for (Value operand : v.getDefiningOp()->getOperands())
        stack.push_back(operand);
    }
    llvm::SmallVector<unsigned> sorted(args.begin(), args.end());
    llvm::sort(sorted);
    return sorted;
  }

  bool isReductionResult(Value v) const {
    Operation *op = v.getDefiningOp();
    return op && isPrimitiveReduction(op);
  }
  /// Values read once per row at the elements: bound, not evaluated there.
  bool isBoundRowValue(Value v) const {
    return isReductionResult(v) || plan.isRowValue(v);
  }

  void bindInputs(Scope &scope) const {
    for (BlockArgument arg : body.getArguments())
      scope.emitter.bindBuffer(arg, inName(arg.getArgNumber()));
  }

  //===--------------------------------------------------------------------===//
  // Reductions
  //===--------------------------------------------------------------------===//

  static bool isInt(Operation *r) {
    return elementTypeOf(r->getOperand(0)).isInteger(32);
  }

  /// The accumulator of reduction `r` taking `element` (a compute value).
  static Accumulator accumulator(Operation *r, const std::string &element) {
    bool i32 = isInt(r);
    if (isa<ReduceSumOp, ReduceMeanOp>(r)) {
      // Unsigned arithmetic wraps (two's complement), as the i32 rule says.
      if (i32)
        return {"unsigned", "0u", "kiln_sum_op", "(unsigned)(" + element + ")",
                4};
      return {"float", "0.f", "kiln_sum_op", element, 4};
    }
    if (isa<ReduceMaxOp>(r))
      return {i32 ? "int" : "float", i32 ? "(-2147483647 - 1)" : "-kiln_inf()",
              "kiln_max_op", element, 4};
    return {i32 ? "int" : "float", i32 ? "2147483647" : "kiln_inf()",
            "kiln_min_op", element, 4};
  }

  /// The declaration of reduction `r`'s result `name` from its final
  /// accumulator: the mean divides, i32 sums convert back, and a bf16/f16
  /// result is rounded once (as the reference rounds the reduction).
  std::string resultDecl(Operation *r, llvm::StringRef acc,
                         llvm::StringRef name, int spaces) const {
    std::string value = acc.str();
    if (isa<ReduceMeanOp>(r))
      value = acc.str() + " / " +
              codegen::floatLiteral(double(plan.spaceOf(r).rowLength()));
    if (isInt(r) && isa<ReduceSumOp>(r))
      value = "(int)" + acc.str();
    Type t = elementTypeOf(r->getResult(0));
    if (t.isBF16())
      value = "kiln_round_bf16(" + value + ")";
    else if (t.isF16())
      value = "kiln_round_f16(" + value + ")";
    return std::string(spaces, ' ') + "const " + (isInt(r) ? "int" : "float") +
           " " + name.str() + " = " + value + ";\n";
  }

  /// The 32-entry shared scratch of accumulators of `type` (float's comes
  /// with the row kernel's prologue).
  static std::string scratchOf(llvm::StringRef type) {
    if (type == "float")
      return "kiln_scratch";
    return type == "unsigned" ? "kiln_scratch_u" : "kiln_scratch_i";
  }
  static std::string scratchDecls(llvm::ArrayRef<Accumulator> accs,
                                  bool withFloat) {
    std::string s;
    for (llvm::StringRef type : {"float", "unsigned", "int"}) {
      if (type == "float" && !withFloat)
        continue;
      if (llvm::any_of(accs,
                       [&](const Accumulator &a) { return a.type == type; }))
        s += "  __shared__ " + type.str() + " " + scratchOf(type) + "[32];\n";
    }
    return s;
  }

  //===--------------------------------------------------------------------===//
  // Reductions computed twice
  //===--------------------------------------------------------------------===//

  /// Whether `a` and `b` hold the same values: the same value, or results of
  /// the same op (name, attributes, type) on operands that do.
  bool equivalent(Value a, Value b) {
    if (a == b)
      return true;
    Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
    if (!x || !y || a.getType() != b.getType() ||
        x->getName() != y->getName() ||
        x->getAttrDictionary() != y->getAttrDictionary() ||
        x->getNumOperands() != y->getNumOperands() || x->getNumResults() != 1)
      return false;
    auto [it, inserted] = equivalence.try_emplace({a, b}, false);
    if (!inserted)
      return it->second;
    bool same = llvm::all_of(
        llvm::zip(x->getOperands(), y->getOperands()), [&](auto pair) {
          return equivalent(std::get<0>(pair), std::get<1>(pair));
        });
    equivalence[{a, b}] = same;
    return same;
  }

  /// Maps every reduction that computes the same as an earlier one of its
  /// space (the same kind over the same dims, so only keepdim may differ, of
  /// equivalent inputs: the statistics and a clip by global norm both sum
  /// the squares of every gradient) to that one: it is accumulated once.
  void findCopies() {
    for (const ReductionSpace &space : plan.spaces)
      for (auto [i, r] : llvm::enumerate(space.reductions))
        for (Operation *earlier :
             llvm::ArrayRef(space.reductions).take_front(i))
          if (!sameAs.count(earlier) && r->getName() == earlier->getName() &&
              elementTypeOf(r->getResult(0)) ==
                  elementTypeOf(earlier->getResult(0)) &&
              equivalent(r->getOperand(0), earlier->getOperand(0))) {
            sameAs[r] = earlier;
            break;
          }
  }
  /// The reductions of `space` that are accumulated, in block order.
  llvm::SmallVector<Operation *> distinct(const ReductionSpace &space) const {
    llvm::SmallVector<Operation *> out;
    for (Operation *r : space.reductions)
      if (!sameAs.count(r))
        out.push_back(r);
    return out;
  }
  /// `r` and the reductions that compute the same.
  llvm::SmallVector<Operation *> copiesOf(Operation *r) const {
    llvm::SmallVector<Operation *> out = {r};
    for (auto [copy, original] : sameAs)
      if (original == r)
        out.push_back(copy);
    return out;
  }

  //===--------------------------------------------------------------------===//
  // Generic form
  //===--------------------------------------------------------------------===//

  LogicalResult emitGeneric() {
    const ReductionSpace &space = plan.spaces.front();
    ReduceSpec spec;
    spec.prefix = "kiln_fused_" +
                  space.reductions.front()->getName().stripDialect().str();
    Scope element(space.shape, "e_", "off");
    bindInputs(element);
    std::string code;
    llvm::SmallVector<Value> elementRoots;
    llvm::SmallVector<Operation *> reductions = distinct(space);
    for (Operation *r : reductions) {
      FailureOr<std::string> expr =
          element.emitter.emit(r->getOperand(0), code, 0);
      if (failed(expr))
        return failure();
      spec.accs.push_back(accumulator(r, *expr));
      elementRoots.push_back(r->getOperand(0));
    }
    for (Value v : space.elementOutputs) {
      FailureOr<std::string> expr = element.emitter.emit(v, code, 0);
      if (failed(expr))
        return failure();
      spec.elementStores += stores(v, *expr, "off", 0);
      elementRoots.push_back(v);
    }
    spec.elementCode = element.coordinates(0) + code;
    for (unsigned i : inputsRead(elementRoots, [](Value) { return false; }))
      addInput(spec.elementParams, i);
    for (Value v : space.elementOutputs)
      addOutputs(spec.elementParams, v);

    Scope row(space.rowShape(), "w_", "o");
    bindInputs(row);
    std::string reds, rowCode, rowStores;
    for (auto [k, r] : llvm::enumerate(reductions)) {
      std::string name = "red" + std::to_string(k);
      reds += resultDecl(r, spec.accName(k), name, 0);
      for (Operation *same : copiesOf(r))
        row.emitter.bindValue(same->getResult(0), name);
    }
    for (Value v : plan.rowOutputs) {
      FailureOr<std::string> expr = row.emitter.emit(v, rowCode, 0);
      if (failed(expr))
        return failure();
      rowStores += stores(v, *expr, "o", 0);
    }
    spec.finish = row.coordinates(0) + reds + rowCode + rowStores;
    for (unsigned i : inputsRead(plan.rowOutputs,
                                 [&](Value v) { return isReductionResult(v); }))
      addInput(spec.finishParams, i);
    for (Value v : plan.rowOutputs)
      addOutputs(spec.finishParams, v);
    spec.helpers = element.emitter.globals() + row.emitter.globals();
    emitReduce(kernels, spec, ReduceLayout(space.shape, space.dims));
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Row form
  //===--------------------------------------------------------------------===//

  /// Computes, once per row into `out`, the row values that evaluating
  /// `roots` at the elements reads, and binds them in `element`.
  LogicalResult bindRowValues(llvm::ArrayRef<Value> roots, Scope &row,
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

  LogicalResult emitRows() {
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
      text +=
          rowKernel.loop(loopHead + element.coordinates(0) + code + combines);
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

  //===--------------------------------------------------------------------===//
  // Multi-tensor form
  //===--------------------------------------------------------------------===//

  /// The code of one segment (space) of a multi-tensor reduction, written
  /// with names local to it: its inputs a<k> and outputs o<k> (pointers the
  /// kernel picks per segment), its accumulators acc<k>, the segment's
  /// element count `n`, block `b` of `blocks`, and the offsets `pbase_<t>` of
  /// its partials of type t. Segments whose code is the same text share it.
  struct SegmentCode {
    std::string globals, body;
    llvm::SmallVector<unsigned> inputs;  // fusion operand of a<k>
    llvm::SmallVector<unsigned> outputs; // fusion result of o<k>
    std::vector<Accumulator> accs;
  };

  static std::string typeLetter(llvm::StringRef type) {
    return type == "float" ? "f" : type == "unsigned" ? "u" : "i";
  }

  FailureOr<SegmentCode> segmentCode(unsigned s, llvm::StringRef prefix,
                                     int64_t chunk) {
    const ReductionSpace &space = plan.spaces[s];
    SegmentCode code;
    Scope element(space.shape, prefix.str(), "f");
    llvm::SmallVector<Value> roots(space.elementOutputs);
    for (Operation *r : distinct(space))
      roots.push_back(r->getOperand(0));
    code.inputs = inputsRead(roots, [](Value) { return false; });

    // Inputs read at the element's own index go through registers, W
    // consecutive elements per thread and step.
    llvm::SmallVector<unsigned> lanes;
    int64_t narrowest = 16;
    for (auto [k, i] : llvm::enumerate(code.inputs)) {
      BlockArgument arg = body.getArgument(i);
      std::string a = "a" + std::to_string(k);
      if (!sameElements(shapeOf(arg), space.shape)) {
        element.emitter.bindBuffer(arg, a);
        continue;
      }
      lanes.push_back(k);
      narrowest = std::min(narrowest, storageBytes(elementTypeOf(arg)));
      element.emitter.bindBuffer(arg, a, "kiln_load(" + a + "_v[v])");
    }
    for (Value v : space.elementOutputs)
      narrowest = std::min(narrowest, storageBytes(elementTypeOf(v)));
    int64_t width = lanes.empty() ? 1 : std::min<int64_t>(8, 16 / narrowest);
    std::string V = str(width);

    std::string declarations, statements, step, stores;
    for (Operation *r : distinct(space)) {
      FailureOr<std::string> expr =
          element.emitter.emit(r->getOperand(0), statements, 0);
      if (failed(expr))
        return failure();
      code.accs.push_back(accumulator(r, *expr));
      const Accumulator &a = code.accs.back();
      std::string acc = "acc" + std::to_string(code.accs.size() - 1);
      declarations += a.type + " " + acc + " = " + a.identity + ";\n";
      step +=
          acc + " = " + a.combiner + "()(" + acc + ", " + a.element + ");\n";
    }
    for (Value v : space.elementOutputs) {
      FailureOr<std::string> expr = element.emitter.emit(v, statements, 0);
      if (failed(expr))
        return failure();
      for (unsigned r : resultIndices.lookup(v)) {
        step += "kiln_store(o" + std::to_string(code.outputs.size()) +
                " + f, " + *expr + ");\n";
        code.outputs.push_back(r);
      }
    }

    // Loads of a step: 16 bytes at once when aligned, else one by one: the
    // same elements in the same order either way, so the result does not
    // depend on alignment.
    std::string loads, aligned = "true";
    for (unsigned k : lanes) {
      std::string a = "a" + std::to_string(k);
      loads += "alignas(16) " + cudaType(body.getArgument(code.inputs[k])) +
               " " + a + "_v[" + V + "];\n";
      aligned += " && kiln_vec_aligned<" + V + ">(" + a + ")";
    }
    if (width > 1) {
      loads += "if (aligned && f0 + " + V + " <= end) {\n";
      for (unsigned k : lanes)
        loads += "  kiln_load_vec<" + V + ">(a" + str(k) + "_v, a" + str(k) +
                 " + f0);\n";
      loads +=
          "} else {\n#pragma unroll\n  for (int v = 0; v < " + V + "; ++v) {\n";
      for (unsigned k : lanes)
        loads += "    if (f0 + v < end) a" + str(k) + "_v[v] = a" + str(k) +
                 "[f0 + v];\n";
      loads += "  }\n}\n";
      declarations += "const bool aligned = " + aligned + ";\n";
    } else {
      for (unsigned k : lanes)
        loads += "a" + str(k) + "_v[0] = a" + str(k) + "[f0];\n";
    }
    std::string perElement = "const idx_t f = f0 + v;\n" +
                             element.coordinates(0) + statements + step;
    std::string begin = "(idx_t)b * " + str(chunk);
    std::string text = declarations + "const idx_t end = min((idx_t)n, " +
                       begin + " + " + str(chunk) + ");\n" +
                       "for (idx_t f0 = " + begin + " + ctx.thread.x * " + V +
                       "; f0 < end; f0 += " + str(kThreads * width) + ") {\n" +
                       indent(loads, 2) +
                       "#pragma unroll\n  for (int v = 0; v < " + V +
                       "; ++v) {\n    if (f0 + v >= end) break;\n" +
                       indent(perElement, 4) + "  }\n}\n";
    // The block's accumulators, then its partials (thread 0).
    llvm::StringMap<unsigned> ofType;
    std::string partials;
    for (auto [k, a] : llvm::enumerate(code.accs)) {
      text += llvm::formatv(
                  "acc{0} = kiln_group_reduce<{1}>(ctx, acc{0}, {2}(), {3}, "
                  "{4});\n",
                  k, kThreads, a.combiner, a.identity, scratchOf(a.type))
                  .str();
      std::string t = typeLetter(a.type);
      partials += "  partial_" + t + "[pbase_" + t + " + " +
                  str(ofType[a.type]++) + " * blocks + b] = acc" + str(k) +
                  ";\n";
    }
    code.body = text + "if (ctx.thread.x == 0) {\n" + partials + "}\n";
    code.globals = element.emitter.globals();
    return code;
  }

  /// The row values (scalars) from the final accumulators acc<k> of the
  /// distinct reductions, stored by thread 0.
  FailureOr<std::string> scalarEpilogue(std::string &globals) {
    Scope row({}, "w_", "0");
    bindInputs(row);
    std::string text, rowStores;
    unsigned k = 0;
    for (const ReductionSpace &space : plan.spaces)
      for (Operation *r : distinct(space)) {
        std::string name = "red" + std::to_string(k);
        text += resultDecl(r, "acc" + std::to_string(k), name, 2);
        ++k;
        for (Operation *same : copiesOf(r))
          row.emitter.bindValue(same->getResult(0), name);
      }
    for (Value v : plan.rowOutputs) {
      FailureOr<std::string> expr = row.emitter.emit(v, text, 2);
      if (failed(expr))
        return failure();
      rowStores += stores(v, *expr, "0", 4);
    }
    globals += row.emitter.globals();
    return text + "  if (ctx.thread.x == 0) {\n" + rowStores + "  }\n";
  }

  /// A table `static __device__ const unsigned name[] = {...};`.
  static std::string table(llvm::StringRef name,
                           llvm::ArrayRef<int64_t> values) {
    std::string s = "static __device__ const unsigned " + name.str() + "[" +
                    str(values.size()) + "] = {";
    for (auto [i, v] : llvm::enumerate(values))
      s += (i % 16 == 0 ? "\n    " : " ") + str(v) + ",";
    return s + "\n};\n";
  }

  LogicalResult emitMultiTensor() {
    size_t segments = plan.spaces.size();
    int64_t total = 0;
    for (const ReductionSpace &space : plan.spaces)
      total += space.elements();
    // Blocks of a fixed chunk each, the same for every segment; one block
    // for everything when the tensors are small.
    bool single = total <= kSingleBlockElements;
    int64_t chunk = ::kiln::reduce::multi_chunk(total, kernels.targetBlocks);
    if (single)
      for (const ReductionSpace &space : plan.spaces)
        chunk = std::max(chunk, space.elements());
    llvm::SmallVector<int64_t> starts = {0};
    for (const ReductionSpace &space : plan.spaces)
      starts.push_back(starts.back() + ceilDiv(space.elements(), chunk));

    // Segment code by class: segments with the same code share it.
    std::vector<SegmentCode> segmentCodes, codes;
    llvm::StringMap<unsigned> classOf;
    llvm::SmallVector<int64_t> segmentClass, segmentSlot, elements;
    std::vector<llvm::SmallVector<unsigned>> members; // segments of each class
    for (unsigned s = 0; s < segments; ++s) {
      FailureOr<SegmentCode> code = segmentCode(s, "e_", chunk);
      if (failed(code))
        return failure();
      std::string key = code->globals + code->body;
      for (const Accumulator &a : code->accs)
        key += "|" + a.type;
      for (unsigned i : code->inputs)
        key += "|" + cudaType(body.getArgument(i));
      for (unsigned r : code->outputs)
        key += "|" + cudaType(fusion.getResult(r));
      auto [it, inserted] = classOf.try_emplace(key, codes.size());
      if (inserted) {
        // Its own names for file-scope tables.
        FailureOr<SegmentCode> named =
            segmentCode(s, "c" + std::to_string(codes.size()) + "_", chunk);
        if (failed(named))
          return failure();
        codes.push_back(std::move(*named));
        members.emplace_back();
      }
      segmentClass.push_back(it->second);
      segmentSlot.push_back(members[it->second].size());
      members[it->second].push_back(s);
      elements.push_back(plan.spaces[s].elements());
      segmentCodes.push_back(std::move(*code));
    }

    // Partials: per type, each segment's accumulators one after the other,
    // a block's partial at [base + accumulator * blocks + block].
    llvm::StringMap<llvm::SmallVector<int64_t>> base;
    llvm::StringMap<int64_t> used;
    std::string finish;
    unsigned global = 0;
    for (unsigned s = 0; s < segments; ++s) {
      const SegmentCode &code = codes[segmentClass[s]];
      int64_t blocks = starts[s + 1] - starts[s];
      llvm::StringMap<unsigned> ofType;
      for (llvm::StringRef type : {"float", "unsigned", "int"})
        base[type].push_back(used[type]);
      for (const Accumulator &a : code.accs) {
        std::string p = "partial_" + typeLetter(a.type);
        int64_t at = base[a.type][s] + ofType[a.type]++ * blocks;
        if (blocks == 1)
          finish += "  const " + a.type + " acc" + str(global) + " = " + p +
                    "[" + str(at) + "];\n";
        else
          finish +=
              llvm::formatv("  const {0} acc{1} = "
                            "kiln::reduce::combine_partials<{4}>(\n"
                            "      ctx, {6} + {7}, {3}, {5}(), {2}, {8});\n",
                            a.type, global, a.identity, blocks, kThreads,
                            a.combiner, p, at, scratchOf(a.type))
                  .str();
        ++global;
      }
      for (auto &entry : ofType)
        used[entry.first()] += entry.second * blocks;
    }

    std::string globals =
        "// Segment t (a tensor, or tensors read together) is "
        "reduced by blocks\n// [kiln_space_start[t], "
        "kiln_space_start[t + 1]) with the code of class\n"
        "// kiln_segment_class[t], as its kiln_segment_slot[t]-th "
        "segment.\n" +
        table("kiln_space_start", starts) +
        table("kiln_segment_class", segmentClass) +
        table("kiln_segment_slot", segmentSlot) +
        table("kiln_segment_elements", elements);
    Params elementParams, rowParams;
    llvm::SmallVector<unsigned> inputs;
    for (const SegmentCode &code : segmentCodes)
      llvm::append_range(inputs, code.inputs);
    llvm::sort(inputs);
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (unsigned i : inputs)
      addInput(elementParams, i);
    for (const ReductionSpace &space : plan.spaces)
      for (Value v : space.elementOutputs)
        addOutputs(elementParams, v);
    std::string text = "  switch (kiln_segment_class[kiln_seg.index]) {\n";
    for (auto [c, code] : llvm::enumerate(codes)) {
      text += "  case " + str(c) + ": {\n";
      // The segment's pointers, from the kernel's parameters.
      std::string pointers;
      for (auto [k, i] : llvm::enumerate(code.inputs)) {
        std::string list, type = cudaType(body.getArgument(i));
        for (unsigned s : members[c])
          list +=
              (list.empty() ? "" : ", ") + inName(segmentCodes[s].inputs[k]);
        pointers += "const " + type + " *const c" + str(c) + "_a" + str(k) +
                    "[] = {" + list + "};\nconst " + type + " *__restrict__ a" +
                    str(k) + " = c" + str(c) + "_a" + str(k) + "[t];\n";
      }
      for (auto [k, r] : llvm::enumerate(code.outputs)) {
        std::string list, type = cudaType(fusion.getResult(r));
        for (unsigned s : members[c])
          list +=
              (list.empty() ? "" : ", ") + outName(segmentCodes[s].outputs[k]);
        pointers += type + " *const c" + str(c) + "_o" + str(k) + "[] = {" +
                    list + "};\n" + type + " *__restrict__ o" + str(k) +
                    " = c" + str(c) + "_o" + str(k) + "[t];\n";
      }
      text += indent(pointers + code.body, 4) + "    break;\n  }\n";
      globals += code.globals;
    }
    text += "  }\n";
    Params partials;
    std::string segmentHead = "  const unsigned t = kiln_seg.slot;\n"
                              "  const idx_t n = kiln_seg.elements;\n"
                              "  const unsigned blocks = kiln_seg.blocks;\n"
                              "  const unsigned b = kiln_seg.block;\n";
    for (llvm::StringRef type : {"float", "unsigned", "int"}) {
      if (!used.count(type) || used[type] == 0)
        continue;
      std::string t = typeLetter(type);
      globals += table("kiln_partial_base_" + t, base[type]);
      segmentHead += "  const unsigned pbase_" + t + " = kiln_partial_base_" +
                     t + "[kiln_seg.index];\n";
      uint64_t offset = kernels.builder.scratch(used[type] * 4);
      partials.add(type.str() + " *__restrict__ partial_" + t,
                   LaunchArg::scratch(offset));
    }
    std::vector<Accumulator> all;
    for (unsigned s = 0; s < segments; ++s)
      llvm::append_range(all, codes[segmentClass[s]].accs);
    std::string scratch = scratchDecls(all, true);

    std::string finalGlobals;
    FailureOr<std::string> epilogue = scalarEpilogue(finalGlobals);
    if (failed(epilogue))
      return failure();
    for (unsigned i : inputsRead(plan.rowOutputs,
                                 [&](Value v) { return isReductionResult(v); }))
      addInput(rowParams, i);
    for (Value v : plan.rowOutputs)
      addOutputs(rowParams, v);

    // The kernel(s): the element loop's parameters, the partials, what the
    // finish reads and writes.
    Params final = partials;
    for (size_t i = 0; i < rowParams.decls.size(); ++i)
      final.add(rowParams.decls[i], rowParams.args[i]);
    for (size_t i = 0; i < partials.decls.size(); ++i)
      elementParams.add(partials.decls[i], partials.args[i]);
    // The segments' tables for the template, the segment step and the
    // finish as functors over the kernel's parameters.
    globals += "struct segment_tables {\n  static constexpr unsigned count = " +
               str(segments) +
               ";\n"
               "  static __device__ __forceinline__ unsigned start(unsigned t) "
               "{ return kiln_space_start[t]; }\n"
               "  static __device__ __forceinline__ unsigned slot(unsigned t) "
               "{ return kiln_segment_slot[t]; }\n"
               "  static __device__ __forceinline__ unsigned elements(unsigned "
               "t) { return kiln_segment_elements[t]; }\n};\n";
    globals +=
        "struct segments_fn {\n" + paramMembers(elementParams) +
        "  __device__ __forceinline__ void operator()(const "
        "kiln::launch_ctx &ctx, const kiln::reduce::segment &kiln_seg) const "
        "{\n" +
        indent(scratch + segmentHead + text, 2) + "  }\n};\n";
    finalGlobals += "struct final_fn {\n" + paramMembers(final) +
                    "  __device__ __forceinline__ void operator()(const "
                    "kiln::launch_ctx &ctx) const {\n" +
                    indent(scratch + finish + *epilogue, 2) + "  }\n};\n";
    std::string configuration = "segments=" + str(segments) +
                                " classes=" + str(codes.size()) +
                                " chunk=" + str(chunk);
    auto multiKernel = [&](llvm::StringRef prefix, llvm::StringRef name,
                           std::string functors, std::string body,
                           int64_t blocks) {
      KernelSpec spec;
      spec.prefix = prefix.str();
      spec.templates = {"kiln/reduce_multi_tensor.cuh"};
      spec.templateName = name.str();
      spec.configuration = configuration;
      spec.functors = std::move(functors);
      spec.body = std::move(body);
      spec.grid = dim3Of(blocks);
      spec.block = dim3Of(kThreads);
      return spec;
    };
    if (single) {
      Params params = elementParams;
      for (size_t i = 0; i < rowParams.decls.size(); ++i)
        if (!llvm::is_contained(params.decls, rowParams.decls[i]))
          params.add(rowParams.decls[i], rowParams.args[i]);
      kernels.kernel(
          multiKernel("kiln_multi_reduce", "multi_reduce_single",
                      globals + finalGlobals,
                      "  kiln::reduce::multi_reduce_single<segment_tables>(\n"
                      "      ctx, segments_fn" +
                          paramInit(elementParams) + ", final_fn" +
                          paramInit(final) + ");\n",
                      1),
          params);
      return success();
    }
    kernels.kernel(
        multiKernel("kiln_multi_reduce_partial", "multi_reduce_partial",
                    globals,
                    "  kiln::reduce::multi_reduce_partial<segment_tables>(\n"
                    "      ctx, segments_fn" +
                        paramInit(elementParams) + ");\n",
                    starts.back()),
        elementParams);
    kernels.kernel(multiKernel("kiln_multi_reduce_final", "multi_reduce_final",
                               finalGlobals,
                               "  kiln::reduce::multi_reduce_final(ctx, "
                               "final_fn" +
                                   paramInit(final) + ");\n",
                               1),
                   final);
    return success();
  }

  FusionOp fusion;
  const ReductionPlan &plan;
  Block &body;
  KernelSet kernels;
  llvm::DenseMap<Value, llvm::SmallVector<unsigned>> resultIndices;
  llvm::DenseMap<std::pair<Value, Value>, bool> equivalence;
  llvm::DenseMap<Operation *, Operation *> sameAs;
};

} // namespace

FailureOr<GeneratedFusion> emitComposedReduction(FusionOp fusion,
                                                 const ReductionPlan &plan,
                                                 const GpuTarget &target) {
  return Composer(fusion, plan, target).run();
}

} // namespace mlir::kiln::codegen::reduction
