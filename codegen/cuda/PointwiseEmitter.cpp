//===- PointwiseEmitter.cpp - pointwise and multi-tensor optimizer kernels
//-===//
//
// Kinds "pointwise" and "optimizer".
//
// pointwise: the body holds only pointwise ops (ScalarEmitter's list) and
// index-remapping ops, which read fusion inputs or, when their positions
// stay inside the operand (transpose, slice, flip, reshape, rope), compute
// it at those positions (a chain of layout and element-wise ops is one
// loop). One result (the largest) is
// the root; every other result must broadcast to it. The kernel runs one
// thread per root element in a grid-stride loop; each value is computed at
// the root element projected to its own shape (numpy broadcasting), and a
// result smaller than the root is stored only by the root elements whose
// broadcast coordinates are 0. Values with one element (scalars such as a
// learning rate or a bias correction) are computed once per thread before
// the loop. When every tensor read or written has the root's elements (or
// one element), each thread handles V consecutive elements with 16-byte
// vector loads and stores (V = 16 / the smallest element size, at most 8),
// provided every pointer is aligned at run time; a scalar loop does the
// rest (and everything when a pointer is not aligned).
//
// optimizer: a multi-tensor kernel for bodies made of independent pointwise
// computations over tensors of different shapes (an optimizer's update of
// every parameter). A pointwise fusion whose results share no root (two
// independent computations merged into one launch) is emitted the same way. The
// results are partitioned by shape: group g holds every result of shape S_g,
// and its computation is the pointwise one above with root S_g (shared scalars
// are recomputed per group, once per thread). Group g owns the contiguous block
// range [start_g, start_g+1) of one launch, sized to its element count; the
// ranges are a constant table in the kernel, and a block finds its group by
// binary search in it and runs that group's grid-stride loop over its own
// blocks. Groups whose pointers would exceed the kernel-parameter budget
// (kMaxPointerArgs) go to further kernels (launched one after the other), and a
// group that alone exceeds it is split into groups of fewer results of the same
// shape.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/Nvrtc.h"
#include "codegen/cuda/ScalarEmitter.h"

#include "compiler/transforms/OpClasses.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

namespace mlir::kiln::codegen {
namespace {

constexpr int64_t kMaxThreads = 256;
/// Blocks per group at most: 4 waves of 8 blocks on each of 132 SMs; more
/// work loops inside the grid-stride loop.
constexpr int64_t kMaxBlocks = 4 * 8 * 132;
/// Pointer parameters of one kernel at most. CUDA allows 32764 bytes of
/// parameters (sm_70 and later); the budget is lower so that a huge optimizer
/// update becomes several kernels of bounded size (NVRTC's time grows faster
/// than linearly with the size of one kernel).
constexpr int64_t kMaxPointerArgs = 1024;

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }

SmallVector<int64_t> withoutOnes(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> out;
  for (int64_t d : shape)
    if (d != 1)
      out.push_back(d);
  return out;
}
/// Same elements in the same row-major order.
bool sameElements(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return withoutOnes(a) == withoutOnes(b);
}

/// One pointwise computation: results of one root shape.
struct Group {
  SmallVector<int64_t> shape;
  SmallVector<unsigned> results;
  int64_t elements = 0;
  /// Fusion inputs it reads (block argument numbers, ascending).
  SmallVector<unsigned> inputs;
  /// Inputs read element for element at the root's flat index (vector
  /// candidates), and whether everything is read like that or once.
  llvm::DenseSet<Value> laneInputs;
  bool vectorizable = true;
  int64_t width = 1; // elements per thread step (V)
};

/// Checks that the values `group` computes can be emitted at its root and
/// collects what it reads; `why` says what is wrong otherwise.
bool analyze(FusionOp fusion, Group &group, std::string *why) {
  auto fail = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return false;
  };
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  // (value, whether it is evaluated at remapped positions rather than at
  // the root element: the operand of an index-remapping op computed in the
  // fusion, and everything it is computed from).
  SmallVector<std::pair<Value, bool>> stack;
  for (unsigned r : group.results)
    stack.push_back({yield.getValues()[r], false});
  llvm::DenseSet<Value> seen[2];
  llvm::DenseSet<unsigned> inputs;
  auto isRoot = [&](Value v) { return sameElements(shapeOf(v), group.shape); };
  while (!stack.empty()) {
    auto [v, remappedHere] = stack.pop_back_val();
    if (!seen[remappedHere].insert(v).second)
      continue;
    if (!remappedHere && !isBroadcastableTo(shapeOf(v), group.shape))
      return fail("a value of shape " + formatShape(shapeOf(v)) +
                  " does not broadcast to the root shape " +
                  formatShape(group.shape));
    int64_t count = numElements(shapeOf(v));
    if (auto argument = dyn_cast<BlockArgument>(v)) {
      inputs.insert(argument.getArgNumber());
      if (isRoot(v) && count > 1 && !remappedHere)
        group.laneInputs.insert(v);
      else if (count > 1)
        group.vectorizable = false; // broadcast or remapped read
      continue;
    }
    Operation *op = v.getDefiningOp();
    std::string reason;
    if (!ScalarEmitter::supportsOp(op, &reason))
      return fail(reason);
    SmallVector<Value> remapped = ScalarEmitter::bufferOperands(op);
    bool computedRemapped = false;
    for (Value operand : remapped) {
      if (auto argument = dyn_cast<BlockArgument>(operand)) {
        inputs.insert(argument.getArgNumber());
        continue;
      }
      if (!remapsWithinOperands(op))
        return fail("'" + op->getName().getStringRef().str() +
                    "' reads a value computed inside the fusion; its data "
                    "operands must be fusion inputs");
      computedRemapped = true;
      stack.push_back({operand, true});
    }
    if (!remapped.empty() && count > 1) {
      // A reshape of an input at the root's flat index reads element for
      // element.
      if (isa<ReshapeOp>(op) && isRoot(v) && !remappedHere && !computedRemapped)
        group.laneInputs.insert(op->getOperand(0));
      else
        group.vectorizable = false;
    }
    for (Value operand : op->getOperands())
      if (!llvm::is_contained(remapped, operand))
        stack.push_back({operand, remappedHere});
  }
  for (unsigned r : group.results)
    if (!isRoot(yield.getValues()[r]))
      group.vectorizable = false;
  group.inputs.assign(inputs.begin(), inputs.end());
  llvm::sort(group.inputs);
  group.elements = numElements(group.shape);
  // Vector width: 16 bytes of the narrowest tensor moved at once.
  int64_t narrowest = 16;
  for (Value v : group.laneInputs)
    narrowest =
        std::min(narrowest, storageBytes(tensorType(v).getElementType()));
  for (unsigned r : group.results)
    narrowest = std::min(
        narrowest,
        storageBytes(tensorType(yield.getValues()[r]).getElementType()));
  group.width = group.vectorizable ? std::min<int64_t>(8, 16 / narrowest) : 1;
  if (group.elements < 2 * group.width)
    group.width = 1;
  return true;
}

/// Every op of the body is one the ScalarEmitter knows, and index-remapping
/// ops read fusion inputs unless their positions stay inside the operand
/// (checked for dead ops too, so that the fusion as written is what the
/// kernel computes).
bool bodySupported(FusionOp fusion, std::string *why) {
  for (Operation &op : fusion.getBody().front().without_terminator()) {
    std::string reason;
    if (!ScalarEmitter::supportsOp(&op, &reason)) {
      if (why)
        *why = reason;
      return false;
    }
    if (remapsWithinOperands(&op))
      continue;
    for (Value operand : ScalarEmitter::bufferOperands(&op))
      if (!isa<BlockArgument>(operand)) {
        if (why)
          *why = "'" + op.getName().getStringRef().str() +
                 "' reads a value computed inside the fusion; its data "
                 "operands must be fusion inputs";
        return false;
      }
  }
  return true;
}

/// The results partitioned by shape, in order of first appearance.
SmallVector<Group> groupsByShape(FusionOp fusion) {
  SmallVector<Group> groups;
  for (auto [i, type] : llvm::enumerate(fusion.getResultTypes())) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    auto it = llvm::find_if(groups, [&](const Group &g) {
      return ArrayRef<int64_t>(g.shape) == shape;
    });
    if (it == groups.end()) {
      groups.emplace_back();
      groups.back().shape.assign(shape.begin(), shape.end());
      it = groups.end() - 1;
    }
    it->results.push_back(i);
  }
  return groups;
}

/// The root of a pointwise fusion: the largest result, to which every other
/// result broadcasts.
std::optional<Group> pointwiseGroup(FusionOp fusion, std::string *why) {
  if (fusion.getNumResults() == 0) {
    if (why)
      *why = "the fusion has no results";
    return std::nullopt;
  }
  if (!bodySupported(fusion, why))
    return std::nullopt;
  Group group;
  int64_t best = -1;
  for (Type type : fusion.getResultTypes()) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    if (numElements(shape) > best ||
        (numElements(shape) == best && shape.size() > group.shape.size())) {
      best = numElements(shape);
      group.shape.assign(shape.begin(), shape.end());
    }
  }
  for (auto [i, type] : llvm::enumerate(fusion.getResultTypes())) {
    if (!isBroadcastableTo(cast<RankedTensorType>(type).getShape(),
                           group.shape)) {
      if (why)
        *why = "result #" + std::to_string(i) +
               " does not broadcast to the root " + formatShape(group.shape);
      return std::nullopt;
    }
    group.results.push_back(i);
  }
  if (!analyze(fusion, group, why))
    return std::nullopt;
  return group;
}

std::optional<SmallVector<Group>> optimizerGroups(FusionOp fusion,
                                                  std::string *why) {
  if (!bodySupported(fusion, why))
    return std::nullopt;
  SmallVector<Group> groups = groupsByShape(fusion);
  if (groups.empty()) {
    if (why)
      *why = "the fusion has no results";
    return std::nullopt;
  }
  for (Group &group : groups)
    if (!analyze(fusion, group, why))
      return std::nullopt;
  return groups;
}

//===----------------------------------------------------------------------===//
// Source generation
//===----------------------------------------------------------------------===//

std::string hex16(uint64_t value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format_hex_no_prefix(value, 16);
  return text;
}

class KernelWriter {
public:
  KernelWriter(FusionOp fusion, ArrayRef<Group> groups, StringRef kind)
      : fusion(fusion), groups(groups), kind(kind) {}

  FailureOr<GeneratedLaunch> write(std::string &source, std::string &name);

private:
  FailureOr<std::string> groupBody(const Group &group, unsigned index,
                                   int indent);
  FailureOr<std::string> loopBody(ScalarEmitter &emitter, const Group &group,
                                  bool lanes, int indent, std::string &coords);
  std::string coordDecls(ScalarEmitter &emitter, const Group &group,
                         const SmallVector<bool> &extra, int indent,
                         const std::string &flatName);

  FusionOp fusion;
  ArrayRef<Group> groups;
  StringRef kind;
  std::string indexType = "int";
  int64_t threads = kMaxThreads;
  std::string globals;
};

std::string paramName(bool result, unsigned i) {
  return (result ? "r" : "a") + std::to_string(i);
}

FailureOr<GeneratedLaunch> KernelWriter::write(std::string &source,
                                               std::string &name) {
  Block &body = fusion.getBody().front();
  // Index type: int unless some tensor (or a loop bound) needs 64 bits.
  int64_t largest = 0;
  for (Value v : body.getArguments())
    largest = std::max(largest, numElements(shapeOf(v)));
  body.walk([&](Operation *op) {
    for (Value v : op->getResults())
      largest = std::max(largest, numElements(shapeOf(v)));
  });
  if (largest >= (int64_t(1) << 30))
    indexType = "long long";
  int64_t mostUnits = 1;
  for (const Group &g : groups)
    mostUnits = std::max(mostUnits, (g.elements + g.width - 1) / g.width);
  threads = std::min<int64_t>(kMaxThreads, (mostUnits + 31) / 32 * 32);

  // Block ranges.
  SmallVector<int64_t> starts = {0};
  for (const Group &g : groups) {
    int64_t units = (g.elements + g.width - 1) / g.width;
    int64_t blocks =
        std::clamp<int64_t>((units + threads - 1) / threads, 1, kMaxBlocks);
    starts.push_back(starts.back() + blocks);
  }

  // Parameters: the inputs any group reads, then the results.
  llvm::SmallSetVector<unsigned, 16> inputs;
  for (const Group &g : groups)
    inputs.insert(g.inputs.begin(), g.inputs.end());
  SmallVector<unsigned> sortedInputs(inputs.begin(), inputs.end());
  llvm::sort(sortedInputs);
  SmallVector<unsigned> results;
  for (const Group &g : groups)
    results.append(g.results.begin(), g.results.end());
  llvm::sort(results);

  GeneratedLaunch launch;
  std::string params;
  for (unsigned i : sortedInputs) {
    Type t = tensorType(body.getArgument(i)).getElementType();
    params += std::string(params.empty() ? "" : ",\n    ") + "const " +
              storageCType(t).str() + " *" + paramName(false, i);
    launch.args.push_back(LaunchArg::operand(i));
  }
  for (unsigned i : results) {
    Type t =
        cast<RankedTensorType>(fusion.getResult(i).getType()).getElementType();
    params += std::string(params.empty() ? "" : ",\n    ") +
              storageCType(t).str() + " *" + paramName(true, i);
    launch.args.push_back(LaunchArg::result(i));
  }

  // Group bodies.
  std::string kernelBody;
  if (groups.size() == 1) {
    kernelBody += "  const unsigned group_block = blockIdx.x;\n";
    kernelBody += "  const unsigned group_blocks = gridDim.x;\n";
    FailureOr<std::string> text = groupBody(groups[0], 0, 2);
    if (failed(text))
      return failure();
    kernelBody += *text;
  } else {
    globals += "// First block of each group (and the total): group g runs on\n"
               "// blocks [kiln_group_start[g], kiln_group_start[g + 1]).\n";
    globals += "static __device__ const unsigned kiln_group_start[" +
               std::to_string(starts.size()) + "] = {";
    for (auto [i, s] : llvm::enumerate(starts))
      globals += (i ? ", " : "") + std::to_string(s);
    globals += "};\n";
    kernelBody += "  // The group of this block: the last one starting at or "
                  "before it.\n";
    kernelBody +=
        "  unsigned lo = 0, hi = " + std::to_string(groups.size()) + ";\n";
    kernelBody += "  while (hi - lo > 1) {\n"
                  "    const unsigned mid = (lo + hi) / 2;\n"
                  "    if (blockIdx.x >= kiln_group_start[mid])\n"
                  "      lo = mid;\n"
                  "    else\n"
                  "      hi = mid;\n"
                  "  }\n";
    kernelBody +=
        "  const unsigned group_block = blockIdx.x - kiln_group_start[lo];\n";
    kernelBody += "  const unsigned group_blocks = kiln_group_start[lo + 1] - "
                  "kiln_group_start[lo];\n";
    kernelBody += "  switch (lo) {\n";
    for (auto [g, group] : llvm::enumerate(groups)) {
      kernelBody += "  case " + std::to_string(g) + ": { // shape " +
                    formatShape(group.shape) + "\n";
      FailureOr<std::string> text = groupBody(group, g, 4);
      if (failed(text))
        return failure();
      kernelBody += *text + "    break;\n  }\n";
    }
    kernelBody += "  }\n";
  }

  // Header comment: what is fused and how it is partitioned.
  std::string header;
  llvm::raw_string_ostream os(header);
  // The fused ops by name, in order of first appearance, with counts.
  os << "// kiln fusion \"" << kind << "\": ";
  llvm::MapVector<StringRef, unsigned> counts;
  for (Operation &op : body.without_terminator())
    ++counts[op.getName().stripDialect()];
  for (auto [i, entry] : llvm::enumerate(counts))
    os << (i ? ", " : "") << entry.first
       << (entry.second > 1 ? " x" + std::to_string(entry.second) : "");
  if (counts.empty())
    os << "(copies only)";
  os << "\n";
  for (auto [g, group] : llvm::enumerate(groups)) {
    os << "// group " << g << ": shape " << formatShape(group.shape) << ", "
       << group.elements << " elements, results";
    for (unsigned r : group.results)
      os << " #" << r;
    os << "; blocks [" << starts[g] << ", " << starts[g + 1] << ")";
    if (group.width > 1)
      os << "; " << group.width << " elements per thread step when aligned";
    os << "\n";
  }

  std::string text = header + "#include \"kiln/prelude.cuh\"\n#include \"" +
                     kScalarOpsHeader.str() + "\"\n\n";
  text += "typedef " + indexType + " kiln_index;\n\n";
  text += globals;
  if (!globals.empty())
    text += "\n";
  text += "extern \"C\" __global__ void __launch_bounds__(" +
          std::to_string(threads) + ") KILN_KERNEL_NAME(\n    " + params +
          ") {\n  " + kWaitForPredecessor.str() + "\n" + kernelBody + "}\n";
  // Equal fusions give equal sources and names; different ones differ.
  name = "kiln_" + kind.str() + "_" + hex16(contentHash(text));
  for (size_t at; (at = text.find("KILN_KERNEL_NAME")) != std::string::npos;)
    text.replace(at, strlen("KILN_KERNEL_NAME"), name);
  source = std::move(text);

  launch.grid = {static_cast<uint32_t>(starts.back()), 1, 1};
  launch.block = {static_cast<uint32_t>(threads), 1, 1};
  return launch;
}

/// Declarations of the root coordinates the statements used, from the flat
/// index `flatName`.
std::string KernelWriter::coordDecls(ScalarEmitter &emitter, const Group &group,
                                     const SmallVector<bool> &extra, int indent,
                                     const std::string &flatName) {
  std::string text, pad(indent, ' ');
  SmallVector<int64_t> strides(group.shape.size(), 1);
  for (size_t d = group.shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * group.shape[d];
  for (size_t d = 0; d < group.shape.size(); ++d) {
    int64_t stride = strides[d];
    if (!emitter.usesCoord(d) && !extra[d])
      continue;
    std::string expr = flatName;
    if (stride != 1)
      expr = "(" + expr + " / " + indexLiteral(stride) + ")";
    if (d > 0)
      expr += " % " + indexLiteral(group.shape[d]);
    text +=
        pad + "const kiln_index i" + std::to_string(d) + " = " + expr + ";\n";
  }
  return text;
}

/// The statements of one element at flat index `idx`: values and stores.
/// With `lanes`, results go to the register arrays of the vector path.
FailureOr<std::string> KernelWriter::loopBody(ScalarEmitter &emitter,
                                              const Group &group, bool lanes,
                                              int indent, std::string &coords) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  std::string pad(indent, ' ');
  std::string statements, stores;
  emitter.clearUsage();
  emitter.resetScope();
  SmallVector<bool> extra(group.shape.size(), false);
  for (unsigned r : group.results) {
    Value value = yield.getValues()[r];
    FailureOr<std::string> expr = emitter.emit(value, statements, indent);
    if (failed(expr))
      return failure();
    std::string out = paramName(true, r);
    if (lanes) {
      stores += pad + "kiln_store(&" + out + "_v[v], " + *expr + ");\n";
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
  coords = coordDecls(emitter, group, extra, indent, "idx");
  return statements + stores;
}

FailureOr<std::string> KernelWriter::groupBody(const Group &group,
                                               unsigned index, int indent) {
  Block &body = fusion.getBody().front();
  std::string pad(indent, ' ');
  std::string prefix =
      groups.size() == 1 ? "" : "g" + std::to_string(index) + "_";
  ScalarEmitter emitter(group.shape, prefix, "kiln_index");
  SmallVector<std::string> coordNames;
  for (size_t d = 0; d < group.shape.size(); ++d)
    coordNames.push_back("i" + std::to_string(d));
  emitter.setIndex(coordNames, "idx");
  for (unsigned i : group.inputs)
    emitter.bindBuffer(body.getArgument(i), paramName(false, i));

  std::string text;
  // Values with one element: once per thread, before the loop.
  if (group.elements > 1) {
    std::string hoisted;
    SmallVector<Value> scalars;
    for (unsigned i : group.inputs) {
      Value arg = body.getArgument(i);
      if (numElements(shapeOf(arg)) == 1 && !arg.use_empty())
        scalars.push_back(arg);
    }
    for (Operation &op : body.without_terminator())
      if (op.getNumResults() == 1 && numElements(shapeOf(op.getResult(0))) == 1)
        scalars.push_back(op.getResult(0));
    // Only those this group needs (its backward slice through evaluated
    // operands).
    auto yield = cast<YieldOp>(body.getTerminator());
    llvm::DenseSet<Value> needed;
    SmallVector<Value> stack;
    for (unsigned r : group.results)
      stack.push_back(yield.getValues()[r]);
    while (!stack.empty()) {
      Value x = stack.pop_back_val();
      if (!needed.insert(x).second)
        continue;
      if (Operation *op = x.getDefiningOp()) {
        SmallVector<Value> remapped = ScalarEmitter::bufferOperands(op);
        for (Value operand : op->getOperands())
          if (!llvm::is_contained(remapped, operand))
            stack.push_back(operand);
      }
    }
    for (Value v : scalars) {
      if (!needed.count(v))
        continue;
      FailureOr<std::string> expr = emitter.emit(v, hoisted, indent);
      if (failed(expr))
        return failure();
      emitter.bindValue(v, *expr);
    }
    if (!hoisted.empty())
      text += pad + "// Scalars, once per thread.\n" + hoisted;
  }

  text += pad + "const kiln_index n = " + indexLiteral(group.elements) + ";\n";
  text += pad +
          "const kiln_index first = (kiln_index)group_block * blockDim.x + "
          "threadIdx.x;\n";
  text += pad +
          "const kiln_index stride = (kiln_index)group_blocks * blockDim.x;\n";
  auto yield = cast<YieldOp>(body.getTerminator());
  std::string scalarStart = "first";
  if (group.width > 1) {
    int64_t v = group.width;
    std::string V = std::to_string(v);
    // Every vector-accessed pointer aligned to its chunk.
    SmallVector<std::string> checks;
    SmallVector<Value> laneInputs;
    for (unsigned i : group.inputs)
      if (group.laneInputs.count(body.getArgument(i)))
        laneInputs.push_back(body.getArgument(i));
    for (Value arg : laneInputs)
      checks.push_back(
          "kiln_vec_aligned<" + V + ">(" +
          paramName(false, cast<BlockArgument>(arg).getArgNumber()) + ")");
    for (unsigned r : group.results)
      checks.push_back("kiln_vec_aligned<" + V + ">(" + paramName(true, r) +
                       ")");
    text += pad + "// " + V +
            " elements per step with 16-byte accesses when aligned.\n";
    text += pad + "const bool aligned = ";
    for (auto [k, c] : llvm::enumerate(checks))
      text += (k ? " &&\n" + pad + "    " : "") + c;
    text += ";\n";
    text += pad + "const kiln_index vectors = aligned ? n / " + V + " : 0;\n";
    text += pad + "for (kiln_index c = first; c < vectors; c += stride) {\n";
    std::string in = pad + "  ";
    text += in + "const kiln_index base = c * " + V + ";\n";
    for (Value arg : laneInputs) {
      unsigned i = cast<BlockArgument>(arg).getArgNumber();
      std::string p = paramName(false, i);
      text += in + "alignas(16) " +
              storageCType(tensorType(arg).getElementType()).str() + " " + p +
              "_v[" + V + "];\n";
      text += in + "kiln_load_vec<" + V + ">(" + p + "_v, " + p + " + base);\n";
      emitter.bindBuffer(arg, p, "kiln_load(" + p + "_v[v])");
    }
    for (unsigned r : group.results) {
      Type t = cast<RankedTensorType>(yield.getValues()[r].getType())
                   .getElementType();
      text += in + "alignas(16) " + storageCType(t).str() + " " +
              paramName(true, r) + "_v[" + V + "];\n";
    }
    text += in + "#pragma unroll\n";
    text += in + "for (int v = 0; v < " + V + "; ++v) {\n";
    std::string coords;
    FailureOr<std::string> lane =
        loopBody(emitter, group, true, indent + 4, coords);
    if (failed(lane))
      return failure();
    bool needsIndex = emitter.usesFlat() || !coords.empty();
    text += (needsIndex ? in + "  const kiln_index idx = base + v;\n" : "") +
            coords + *lane;
    text += in + "}\n";
    for (unsigned r : group.results)
      text += in + "kiln_store_vec<" + V + ">(" + paramName(true, r) +
              " + base, " + paramName(true, r) + "_v);\n";
    text += pad + "}\n";
    for (Value arg : laneInputs)
      emitter.bindBuffer(
          arg, paramName(false, cast<BlockArgument>(arg).getArgNumber()));
    scalarStart = "vectors * " + V + " + first";
  }
  text += pad + "for (kiln_index idx = " + scalarStart +
          "; idx < n; idx += stride) {\n";
  std::string coords;
  FailureOr<std::string> element =
      loopBody(emitter, group, false, indent + 2, coords);
  if (failed(element))
    return failure();
  text += coords + *element + pad + "}\n";
  globals += emitter.globals();
  return text;
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

/// Whether every result broadcasts to the largest one (one loop suffices).
bool haveCommonRoot(FusionOp fusion) {
  ArrayRef<int64_t> largest;
  int64_t most = -1;
  for (Type type : fusion.getResultTypes()) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    if (numElements(shape) > most ||
        (numElements(shape) == most && shape.size() > largest.size())) {
      most = numElements(shape);
      largest = shape;
    }
  }
  return llvm::all_of(fusion.getResultTypes(), [&](Type type) {
    return isBroadcastableTo(cast<RankedTensorType>(type).getShape(), largest);
  });
}

/// The groups of a fusion: one root when its results share one, else (a
/// horizontally merged pointwise fusion, or an optimizer) one per shape.
std::optional<SmallVector<Group>> groupsOf(FusionOp fusion, std::string *why) {
  if (fusion.getKind() == "pointwise" && haveCommonRoot(fusion)) {
    std::optional<Group> group = pointwiseGroup(fusion, why);
    if (!group)
      return std::nullopt;
    return SmallVector<Group>{std::move(*group)};
  }
  if (fusion.getKind() == "pointwise" || fusion.getKind() == "optimizer")
    return optimizerGroups(fusion, why);
  if (why)
    *why =
        "kind \"" + fusion.getKind().str() + "\" is not pointwise or optimizer";
  return std::nullopt;
}

class PointwiseEmitter final : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    return groupsOf(fusion, nullptr).has_value();
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    std::string why;
    SmallVector<Group> groups;
    if (std::optional<SmallVector<Group>> found = groupsOf(fusion, &why))
      groups = std::move(*found);
    if (groups.empty())
      return fusion.emitOpError("pointwise codegen: ") << why;

    // A group that alone needs too many pointers is split by its results
    // (same shape, fewer tensors each).
    SmallVector<Group> fitted;
    std::function<LogicalResult(Group &)> fit =
        [&](Group &group) -> LogicalResult {
      if (int64_t(group.inputs.size() + group.results.size()) <=
          kMaxPointerArgs) {
        fitted.push_back(std::move(group));
        return success();
      }
      if (group.results.size() == 1)
        return fusion.emitOpError("pointwise codegen: result #")
               << group.results[0] << " reads more than " << kMaxPointerArgs
               << " inputs";
      size_t half = group.results.size() / 2;
      for (auto part : {ArrayRef<unsigned>(group.results).take_front(half),
                        ArrayRef<unsigned>(group.results).drop_front(half)}) {
        Group piece;
        piece.shape = group.shape;
        piece.results.assign(part.begin(), part.end());
        if (!analyze(fusion, piece, &why))
          return fusion.emitOpError("pointwise codegen: ") << why;
        if (failed(fit(piece)))
          return failure();
      }
      return success();
    };
    for (Group &group : groups)
      if (failed(fit(group)))
        return failure();

    // Groups in kernels of at most kMaxPointerArgs parameters each.
    SmallVector<SmallVector<Group>> kernels(1);
    llvm::DenseSet<unsigned> inputs, results;
    for (Group &group : fitted) {
      llvm::DenseSet<unsigned> moreInputs = inputs;
      moreInputs.insert(group.inputs.begin(), group.inputs.end());
      size_t pointers =
          moreInputs.size() + results.size() + group.results.size();
      if (pointers > kMaxPointerArgs && !kernels.back().empty()) {
        kernels.emplace_back();
        inputs.clear();
        results.clear();
        moreInputs =
            llvm::DenseSet<unsigned>(group.inputs.begin(), group.inputs.end());
      }
      inputs = std::move(moreInputs);
      results.insert(group.results.begin(), group.results.end());
      kernels.back().push_back(std::move(group));
    }

    GeneratedFusion generated;
    for (SmallVector<Group> &kernelGroups : kernels) {
      KernelWriter writer(fusion, kernelGroups, fusion.getKind());
      GeneratedKernel kernel;
      FailureOr<GeneratedLaunch> launch =
          writer.write(kernel.source, kernel.name);
      if (failed(launch))
        return failure();
      launch->kernel = generated.kernels.size();
      generated.kernels.push_back(std::move(kernel));
      generated.launches.push_back(std::move(*launch));
    }
    return generated;
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createPointwiseEmitter() {
  return std::make_unique<PointwiseEmitter>();
}

} // namespace mlir::kiln::codegen
