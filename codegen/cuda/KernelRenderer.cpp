//===- KernelRenderer.cpp - kernel specs to CUDA sources ------------------===//

#include "codegen/cuda/KernelRenderer.h"

#include "codegen/cuda/Nvrtc.h"
#include "runtime/artifact/launch_limits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace mlir::kiln::codegen {
namespace {

constexpr llvm::StringLiteral kNamePlaceholder = "KILN_KERNEL_NAME";

void writeIncludes(llvm::raw_ostream &os,
                   const std::set<std::string> &templates) {
  os << "#include \"kiln/prelude.cuh\"\n";
  for (const std::string &name : templates)
    os << "#include \"" << name << "\"\n";
}

/// The parameters of the `__global__` entry (`entry`) or of a part's `run`.
/// A tensor map is a __grid_constant__ of the entry, which the TMA copies
/// address in parameter space, and reaches `run` by reference.
void writeParams(llvm::raw_ostream &os, llvm::ArrayRef<std::string> types,
                 llvm::function_ref<std::string(size_t)> nameOf, bool entry) {
  for (auto [i, type] : llvm::enumerate(types)) {
    os << (i ? ",\n    " : "\n    ");
    if (type == kTensorMapParamType)
      os << (entry ? "const __grid_constant__ " + type
                   : "const " + type + " &");
    else
      os << type;
    os << " " << nameOf(i);
  }
}

uint32_t threadsOf(std::array<uint32_t, 3> block) {
  return block[0] * block[1] * block[2];
}

} // namespace

std::array<uint32_t, 3> launchGridOf(const KernelSpec &spec) {
  namespace limits = ::kiln::launch_limits;
  if (spec.cooperative || spec.cluster != std::array<uint32_t, 3>{1, 1, 1})
    return spec.grid;
  std::array<uint32_t, 3> grid = spec.grid;
  for (int d = 0; d < 3; ++d) {
    uint64_t limit = d == 0 ? limits::kMaxGridX : limits::kMaxGridYZ;
    uint64_t blocks = grid[d];
    if (blocks <= limit)
      continue;
    uint64_t tiles = (blocks + limit - 1) / limit;
    grid[d] = static_cast<uint32_t>((blocks + tiles - 1) / tiles);
  }
  return grid;
}

GeneratedKernel renderKernel(const KernelSpec &spec) {
  GeneratedKernel kernel;
  kernel.archSpecific = spec.archSpecific;
  kernel.templateName = spec.templateName;
  kernel.configuration = spec.configuration;

  KernelPart &part = kernel.part;
  part.templates = spec.templates;
  part.mergeable = spec.mergeable && spec.globalCode.empty();
  std::vector<std::string> names;
  for (const KernelParam &param : spec.params) {
    part.paramTypes.push_back(param.type);
    names.push_back(param.name);
  }
  {
    llvm::raw_string_ostream os(part.code);
    os << spec.functors;
    if (!spec.functors.empty() && spec.functors.back() != '\n')
      os << "\n";
    os << "__device__ __forceinline__ void run(const kiln::launch_ctx &ctx,";
    writeParams(
        os, part.paramTypes, [&](size_t i) { return names[i]; },
        /*entry=*/false);
    os << ") {\n" << spec.body;
    if (!spec.body.empty() && spec.body.back() != '\n')
      os << "\n";
    os << "}\n";
  }

  bool tiled = launchGridOf(spec) != spec.grid;
  std::set<std::string> templates(spec.templates.begin(),
                                  spec.templates.end());
  if (tiled)
    templates.insert("kiln/tiled_grid.cuh");
  std::string source;
  llvm::raw_string_ostream os(source);
  os << spec.header;
  writeIncludes(os, templates);
  if (!spec.globalCode.empty()) {
    os << "\n" << spec.globalCode;
    if (spec.globalCode.back() != '\n')
      os << "\n";
    // The global code may carry #line directives of its own (a user's
    // file): what follows gets its own line numbers back in NVRTC's log.
    os.flush();
    os << "#line " << llvm::count(source, '\n') + 2 << " \"" << kNamePlaceholder
       << ".cu\"\n";
  }
  os << "\nnamespace kiln_kernel {\n" << part.code << "} // namespace "
     << "kiln_kernel\n\n";
  os << "extern \"C\" __global__ void __launch_bounds__("
     << threadsOf(spec.block);
  if (spec.minBlocksPerSm)
    os << ", " << spec.minBlocksPerSm;
  os << ") " << kNamePlaceholder << "(";
  writeParams(
      os, part.paramTypes, [&](size_t i) { return names[i]; },
      /*entry=*/true);
  os << ") {\n";
  if (spec.programmatic)
    os << "  " << kWaitForPredecessor << "\n";
  if (tiled) {
    os << "  // A grid of [" << spec.grid[0] << ", " << spec.grid[1] << ", "
       << spec.grid[2] << "] blocks, past CUDA's limits, in tiles.\n"
       << "  kiln::run_tiled<" << spec.grid[0] << "u, " << spec.grid[1]
       << "u, " << spec.grid[2] << "u>(\n"
       << "      kiln::this_launch(), [&](const kiln::launch_ctx &ctx) {\n"
       << "        kiln_kernel::run(ctx";
    for (const std::string &name : names)
      os << ", " << name;
    os << ");\n      });\n}\n";
  } else {
    os << "  kiln_kernel::run(kiln::this_launch()";
    for (const std::string &name : names)
      os << ", " << name;
    os << ");\n}\n";
  }
  os.flush();

  kernel.name = spec.prefix + "_" +
                llvm::utohexstr(contentHash(source), /*LowerCase=*/true)
                    .substr(0, 12);
  for (size_t at = source.find(kNamePlaceholder); at != std::string::npos;
       at = source.find(kNamePlaceholder, at + kernel.name.size()))
    source.replace(at, kNamePlaceholder.size(), kernel.name);
  kernel.source = std::move(source);
  return kernel;
}

std::string renderMergedKernel(llvm::ArrayRef<MergedPart> parts,
                               std::array<uint32_t, 3> mergedBlock,
                               llvm::StringRef name) {
  std::set<std::string> templates = {"kiln/merged.cuh"};
  for (const MergedPart &merged : parts)
    templates.insert(merged.part->templates.begin(),
                     merged.part->templates.end());
  auto paramName = [](size_t part, size_t index) {
    return "p" + std::to_string(part) + "_" + std::to_string(index);
  };

  std::string source;
  llvm::raw_string_ostream os(source);
  os << "// " << parts.size() << " launches merged into one kernel\n";
  writeIncludes(os, templates);
  // Parameter types may name the part's own types: the signature names them
  // through aliases in the part's namespace.
  for (auto [i, merged] : llvm::enumerate(parts)) {
    os << "\nnamespace kiln_part" << i << " {\n" << merged.part->code;
    for (auto [j, type] : llvm::enumerate(merged.part->paramTypes))
      os << "using param" << j << " = " << type << ";\n";
    os << "} // namespace kiln_part" << i << "\n";
  }

  os << "\nextern \"C\" __global__ void __launch_bounds__("
     << threadsOf(mergedBlock) << ") " << name << "(";
  for (auto [i, merged] : llvm::enumerate(parts))
    for (size_t j = 0; j < merged.part->paramTypes.size(); ++j)
      os << (i || j ? ",\n    " : "\n    ") << "kiln_part" << i << "::param"
         << j << " " << paramName(i, j);
  os << ") {\n  " << kWaitForPredecessor << "\n"
     << "  const kiln::launch_ctx merged = kiln::this_launch();\n"
     << "  kiln::launch_ctx ctx;\n";
  uint64_t first = 0;
  for (auto [i, merged] : llvm::enumerate(parts)) {
    os << "  using part" << i << " = kiln::part<" << first;
    for (uint32_t g : merged.grid)
      os << ", " << g;
    for (uint32_t b : merged.block)
      os << ", " << b;
    os << ">;\n  if (part" << i << "::holds(merged.block.x)) {\n"
       << "    if (part" << i << "::enter(merged, ctx))\n"
       << "      kiln_part" << i << "::run(ctx";
    for (size_t j = 0; j < merged.part->paramTypes.size(); ++j)
      os << ", " << paramName(i, j);
    os << ");\n    return;\n  }\n";
    first += uint64_t{merged.grid[0]} * merged.grid[1] * merged.grid[2];
  }
  os << "}\n";
  return source;
}

} // namespace mlir::kiln::codegen
