//===- ReductionKernels.cpp - planning reduction kernels ------------------===//

#include "codegen/cuda/reduction/ReductionKernels.h"

#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "kiln/reduce_layout.cuh"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen::reduction {

std::string indent(llvm::StringRef body, int spaces) {
  std::string s, pad(spaces, ' ');
  llvm::SmallVector<llvm::StringRef> lines;
  body.split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines)
    s += pad + line.str() + "\n";
  return s;
}

std::pair<std::string, std::string> splitDecl(llvm::StringRef decl) {
  size_t at = decl.rfind(' ');
  return {decl.substr(0, at).str(), decl.substr(at + 1).str()};
}

std::string paramMembers(const Params &params) {
  std::string s;
  for (const std::string &decl : params.decls)
    s += "  " + decl + ";\n";
  return s;
}

std::string paramInit(const Params &params) {
  std::string s = "{";
  for (auto [i, decl] : llvm::enumerate(params.decls))
    s += (i ? ", " : "") + splitDecl(decl).second;
  return s + "}";
}

KernelSet::KernelSet(std::string header, FusionOp fusion,
                     int64_t targetBlocks)
    : builder(std::move(header)), targetBlocks(targetBlocks) {
  int64_t largest = 0;
  for (Type t : fusion->getOperandTypes())
    largest = std::max(largest, cast<ShapedType>(t).getNumElements());
  for (Type t : fusion->getResultTypes())
    largest = std::max(largest, cast<ShapedType>(t).getNumElements());
  idx = largest < (int64_t(1) << 31) - (int64_t(1) << 20) ? "int" : "long long";
}

void KernelSet::kernel(KernelSpec spec, const Params &params) {
  spec.functors = "typedef " + idx + " idx_t;\n" + spec.functors;
  if (!llvm::is_contained(spec.templates, "kiln/reduce_common.cuh"))
    spec.templates.insert(spec.templates.begin(), "kiln/reduce_common.cuh");
  // Prologues and epilogues of the ScalarEmitter call kiln/scalar_ops.cuh.
  if (!llvm::is_contained(spec.templates, kScalarOpsHeader))
    spec.templates.push_back(kScalarOpsHeader.str());
  for (auto [decl, arg] : llvm::zip(params.decls, params.args)) {
    auto [type, name] = splitDecl(decl);
    spec.addParam(type, name, arg);
  }
  builder.kernel(std::move(spec));
}

//===----------------------------------------------------------------------===//
// Row kernels
//===----------------------------------------------------------------------===//

RowKernel::RowKernel(int64_t rows, int64_t m, int64_t width)
    : rows(rows), m(m), width(width) {
  namespace layout = ::kiln::reduce;
  group = layout::row_group(m);
  perThread = layout::row_steps(m, width, group);
  cached = layout::row_cached(m, width, group);
  rowsPerBlock = layout::rows_in_block(group);
  threads = group * rowsPerBlock;
  blocks = layout::ceil_div(rows, rowsPerBlock);
}

std::string RowKernel::config() const {
  return llvm::formatv("kiln::reduce::row_config<idx_t, {0}, {1}, {2}>", rows,
                       m, width)
      .str();
}

std::string RowKernel::configuration() const {
  return llvm::formatv("rows={0} m={1} group={2} rows_per_block={3} width={4} "
                       "steps={5}{6}",
                       rows, m, group, rowsPerBlock, width, perThread,
                       cached ? " cached" : "")
      .str();
}

std::string RowKernel::prologue(llvm::ArrayRef<std::string> outputs) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "  __shared__ float kiln_scratch[32];\n"
     << "  const kiln::reduce::row_position<row_cfg> kiln_pos(ctx);\n"
     << "  const int lid = kiln_pos.lid;\n"
     << "  const idx_t row = kiln_pos.row;\n"
     << "  const bool active = kiln_pos.active;\n";
  for (const RowInput &in : rowInputs)
    os << "  kiln::reduce::row_input<row_cfg, " << in.type << "> " << in.value
       << "_in(" << in.pointer << ", row);\n";
  for (const std::string &out : outputs)
    os << "  auto *" << out << "_row = " << out << " + row * (idx_t)" << m
       << ";\n";
  if (width > 1) {
    os << "  const bool aligned = kiln::reduce::all_aligned(";
    for (auto [i, in] : llvm::enumerate(rowInputs))
      os << (i ? ", " : "") << in.value << "_in";
    os << ");\n";
  }
  for (const RowInput &in : rowInputs)
    os << "  " << in.value << "_in.cache(lid" << (width > 1 ? ", aligned" : "")
       << ");\n";
  return s;
}

std::string RowKernel::loop(llvm::StringRef body,
                            llvm::StringRef stepEnd) const {
  assert((width > 1 || stepEnd.empty()) && "steps of one element have no code");
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "  kiln::reduce::row_loop<row_cfg>(\n"
     << "      lid,\n      [&](int k, int e, idx_t j) {\n";
  for (const RowInput &in : rowInputs)
    os << "        const float " << in.value << " = " << in.value
       << "_in.at(k, e, j);\n";
  os << indent(body, 8) << "      }";
  if (width > 1) {
    os << ",\n      [&](idx_t j0) {\n";
    for (const RowInput &in : rowInputs)
      os << "        " << in.value << "_in.step(j0, aligned);\n";
    os << "      },\n      [&](idx_t j0) {\n"
       << indent(stepEnd, 8) << "      }";
  }
  os << ");\n";
  return s;
}

std::string RowKernel::reduce(llvm::StringRef var, llvm::StringRef op,
                              llvm::StringRef identity,
                              llvm::StringRef scratch) const {
  return llvm::formatv("  {0} = kiln::reduce::row_reduce<row_cfg>(ctx, {0}, "
                       "{1}(), {2}, {3});\n",
                       var, op, identity, scratch)
      .str();
}

} // namespace mlir::kiln::codegen::reduction
