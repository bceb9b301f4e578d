//===- ComposedMultiTensor.cpp - the multi-tensor form of composed reductions
//===//

#include "codegen/cuda/reduction/ComposedReduction.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen::reduction {

FailureOr<Composer::SegmentCode>
Composer::segmentCode(unsigned s, llvm::StringRef prefix, int64_t chunk) {
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
    step += acc + " = " + a.combiner + "()(" + acc + ", " + a.element + ");\n";
  }
  for (Value v : space.elementOutputs) {
    FailureOr<std::string> expr = element.emitter.emit(v, statements, 0);
    if (failed(expr))
      return failure();
    for (unsigned r : resultIndices.lookup(v)) {
      step += "kiln_store(o" + std::to_string(code.outputs.size()) + " + f, " +
              *expr + ");\n";
      code.outputs.push_back(r);
    }
  }

  // Loads of a step: 16 bytes at once when aligned, else one by one: the
  // same elements in the same order either way, so the result does not
  // depend on alignment.
  std::string loads, aligned = "true";
  for (unsigned k : lanes) {
    std::string a = "a" + std::to_string(k);
    loads += "alignas(16) " + cudaType(body.getArgument(code.inputs[k])) + " " +
             a + "_v[" + V + "];\n";
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
  std::string perElement =
      "const idx_t f = f0 + v;\n" + element.coordinates(0) + statements + step;
  std::string begin = "(idx_t)b * " + str(chunk);
  std::string text =
      declarations + "const idx_t end = min((idx_t)n, " + begin + " + " +
      str(chunk) + ");\n" + "for (idx_t f0 = " + begin + " + ctx.thread.x * " +
      V + "; f0 < end; f0 += " + str(kThreads * width) + ") {\n" +
      indent(loads, 2) + "#pragma unroll\n  for (int v = 0; v < " + V +
      "; ++v) {\n    if (f0 + v >= end) break;\n" + indent(perElement, 4) +
      "  }\n}\n";
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
                str(ofType[a.type]++) + " * blocks + b] = acc" + str(k) + ";\n";
  }
  code.body = text + "if (ctx.thread.x == 0) {\n" + partials + "}\n";
  code.globals = element.emitter.globals();
  return code;
}

FailureOr<std::string> Composer::scalarEpilogue(std::string &globals) {
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

std::string Composer::table(llvm::StringRef name,
                            llvm::ArrayRef<int64_t> values) {
  std::string s = "static __device__ const unsigned " + name.str() + "[" +
                  str(values.size()) + "] = {";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i % 16 == 0 ? "\n    " : " ") + str(v) + ",";
  return s + "\n};\n";
}

LogicalResult Composer::emitMultiTensor() {
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
        finish += "  const " + a.type + " acc" + str(global) + " = " + p + "[" +
                  str(at) + "];\n";
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
        list += (list.empty() ? "" : ", ") + inName(segmentCodes[s].inputs[k]);
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
                  list + "};\n" + type + " *__restrict__ o" + str(k) + " = c" +
                  str(c) + "_o" + str(k) + "[t];\n";
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
    segmentHead += "  const unsigned pbase_" + t + " = kiln_partial_base_" + t +
                   "[kiln_seg.index];\n";
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
      multiKernel("kiln_multi_reduce_partial", "multi_reduce_partial", globals,
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

} // namespace mlir::kiln::codegen::reduction
