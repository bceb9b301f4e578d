//===- ModuleCodegen.cpp - a planned module to kernels and launches -------===//

#include "codegen/cuda/ModuleCodegen.h"

#include "codegen/cuda/KernelCache.h"
#include "codegen/cuda/LaunchMerging.h"
#include "codegen/cuda/PredecessorWait.h"
#include "compiler/transforms/MemoryPlan.h"
#include "dialects/kiln/IR/KilnNaming.h"
#include "runtime/artifact/launch_limits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <optional>

namespace mlir::kiln::codegen {

static SlotRef toRef(const BufferSlot &slot) {
  return SlotRef{slot.resident, slot.name, slot.offset, slot.size};
}

namespace {
class Generator {
public:
  Generator(const CodegenOptions &options, bool compile)
      : options(options), compile(compile) {}

  LogicalResult run(ModuleOp module) {
    result.arch = options.arch;
    for (auto function : module.getOps<func::FuncOp>())
      if (failed(addEntry(function)))
        return failure();
    if (options.mergeLaunches)
      mergeLaunches();
    dropUnlaunchedKernels();
    if (compile && (failed(compileKernels(module.getLoc())) ||
                    failed(checkPredecessorWaits(module.getLoc()))))
      return failure();
    // Parameters and model state start from their initialisers.
    if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
      for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
        auto init = forward.getArgAttrOfType<InitAttr>(
            i, KilnDialect::kParamAttrName);
        if (!init)
          init = forward.getArgAttrOfType<InitAttr>(
              i, KilnDialect::kStateAttrName);
        if (init)
          result.parameters.push_back(
              {stringEntry(forward.getArgAttrDict(i),
                           KilnDialect::kNameAttrName)
                   .str(),
               forward.getArgumentTypes()[i], init, i,
               forward.getArgAttrOfType<DenseElementsAttr>(
                   i, KilnDialect::kValueAttrName)});
      }
    return success();
  }

  CompiledModule take() {
    result.kernelCacheHits = cache.hits();
    result.kernelsCompiled = compile ? result.kernels.size() - cache.hits() : 0;
    return std::move(result);
  }

private:
  void noteResident(const BufferSlot &slot, StringRef role, Type type,
                    DenseElementsAttr value = {}) {
    if (!slot.resident || !residentNames.insert(slot.name).second)
      return;
    result.residents.push_back({slot.name, role.str(), type, value});
  }

  LogicalResult addEntry(func::FuncOp function) {
    CompiledEntry entry;
    entry.name = function.getSymName().str();
    if (!function->getAttrOfType<IntegerAttr>("kiln.arena_size"))
      return function.emitOpError(
          "has no memory plan (run --kiln-plan-memory)");

    // Every fusion's kernels first: their scratch is known only once they
    // are generated, and joins the memory plan as the fusion's workspace.
    struct Emitted {
      FusionOp fusion;
      GeneratedFusion generated;
      std::vector<size_t> kernelIds;
    };
    std::vector<Emitted> emitted;
    llvm::DenseMap<Operation *, uint64_t> workspaces;
    for (Operation &op : function.getBody().front()) {
      auto fusion = dyn_cast<FusionOp>(op);
      if (!fusion)
        continue;
      FailureOr<GeneratedFusion> generated = emitFusion(fusion, options);
      if (failed(generated))
        return failure();
      std::vector<size_t> kernelIds;
      for (const GeneratedKernel &kernel : generated->kernels) {
        FailureOr<size_t> id = addKernel(fusion, kernel);
        if (failed(id))
          return failure();
        kernelIds.push_back(*id);
      }
      if (generated->scratchBytes)
        workspaces[fusion] = generated->scratchBytes;
      emitted.push_back({fusion, std::move(*generated), std::move(kernelIds)});
    }
    if (!workspaces.empty() && failed(planWorkspaces(function, workspaces)))
      return failure();
    entry.arenaBytes =
        function->getAttrOfType<IntegerAttr>("kiln.arena_size").getInt();

    for (BlockArgument arg : function.getArguments()) {
      DictionaryAttr attrs = function.getArgAttrDict(arg.getArgNumber());
      FailureOr<BufferSlot> slot = bufferOf(arg);
      if (failed(slot))
        return function.emitOpError("argument ")
                   << arg.getArgNumber() << " has no buffer",
               failure();
      // Functions the training and forward entries did not build keep the
      // naming convention's defaults (KilnNaming.h) for what they leave out.
      StringRef role = stringEntry(attrs, KilnDialect::kRoleAttrName);
      if (role.empty())
        role = "input";
      // A constant is the kernels' business: a buffer, not an input.
      if (role == "constant") {
        noteResident(
            *slot, role, arg.getType(),
            attrs.getAs<DenseElementsAttr>(KilnDialect::kValueAttrName));
        continue;
      }
      noteResident(*slot, role, arg.getType());
      entry.inputs.push_back({argumentName(function, arg.getArgNumber()),
                              role.str(), arg.getType(), toRef(*slot)});
      // The caller's index inputs: what the graph lets them hold.
      if (!slot->resident && role == "input" &&
          getElementTypeOrSelf(arg.getType()).isInteger(32))
        entry.inputs.back().validRange = validRangeOf(arg);
    }
    Operation *terminator = function.getBody().front().getTerminator();
    for (OpOperand &operand : terminator->getOpOperands()) {
      DictionaryAttr attrs =
          function.getResultAttrDict(operand.getOperandNumber());
      FailureOr<BufferSlot> slot = bufferOf(operand.get());
      if (failed(slot))
        return function.emitOpError("result ")
                   << operand.getOperandNumber() << " has no buffer",
               failure();
      StringRef role = stringEntry(attrs, KilnDialect::kRoleAttrName);
      if (role.empty())
        role = "output";
      noteResident(*slot, role, operand.get().getType());
      entry.outputs.push_back(
          {resultName(function, operand.getOperandNumber()), role.str(),
           operand.get().getType(), toRef(*slot)});
    }

    for (Emitted &e : emitted) {
      // A fusion's scratch is its workspace: arena bytes that nothing else
      // holds while its kernels run.
      uint64_t workspace = 0;
      if (e.generated.scratchBytes) {
        std::optional<uint64_t> offset = workspaceOffset(e.fusion);
        if (!offset)
          return emitFusionError(e.fusion)
                     << "its scratch has no place in the memory plan",
                 failure();
        workspace = *offset;
      }
      for (const GeneratedLaunch &launch : e.generated.launches) {
        CompiledLaunch compiled;
        compiled.kernel = e.kernelIds[launch.kernel];
        compiled.grid = launch.grid;
        compiled.block = launch.block;
        compiled.dynamicSharedBytes = launch.dynamicSharedBytes;
        compiled.cluster = launch.cluster;
        compiled.cooperative = launch.cooperative;
        compiled.persistentBlocksPerSm = launch.persistentBlocksPerSm;
        for (const LaunchArg &arg : launch.args) {
          CompiledArg out;
          out.kind = arg.kind;
          out.scalarBits = arg.scalarBits;
          if (arg.kind == LaunchArg::Kind::Operand ||
              arg.kind == LaunchArg::Kind::Result ||
              arg.kind == LaunchArg::Kind::TensorMap) {
            bool result = arg.kind == LaunchArg::Kind::TensorMap
                              ? arg.mapsResult
                              : arg.kind == LaunchArg::Kind::Result;
            Value value = result ? e.fusion.getResult(arg.index)
                                 : e.fusion.getInputs()[arg.index];
            FailureOr<BufferSlot> slot = bufferOf(value);
            if (failed(slot))
              return emitFusionError(e.fusion)
                         << "a kernel argument has no buffer",
                     failure();
            out.slot = toRef(*slot);
            out.tensorMap = arg.tensorMap;
            out.mapsResult = arg.mapsResult;
            out.bufferType = value.getType();
          } else if (arg.kind == LaunchArg::Kind::Scratch) {
            // From its offset to the end of the fusion's workspace.
            out.slot = SlotRef{false, "", workspace + arg.index,
                               e.generated.scratchBytes - arg.index};
          }
          compiled.args.push_back(out);
        }
        if (failed(checkLaunchLimits(e.fusion, compiled)))
          return failure();
        entry.launches.push_back(std::move(compiled));
      }
    }
    result.entries.push_back(std::move(entry));
    return success();
  }

  /// An error at the user's op of `fusion` when CUDA would refuse
  /// `launch`: more parameters than one launch passes, or a grid or block
  /// past CUDA's limits. Planners keep within them (launch_limits.h); this
  /// names the op where one does not, instead of leaving the artifact's
  /// validator to refuse the file.
  static LogicalResult checkLaunchLimits(FusionOp fusion,
                                         const CompiledLaunch &launch) {
    namespace limits = ::kiln::launch_limits;
    uint64_t bytes = 0;
    for (const CompiledArg &arg : launch.args)
      bytes = limits::WithParam(bytes, arg.kind == LaunchArg::Kind::TensorMap);
    if (launch.args.size() > limits::kMaxKernelParams ||
        bytes > limits::kMaxKernelParamBytes)
      return emitFusionError(fusion)
             << "a kernel of this op would take " << launch.args.size()
             << " parameters (" << bytes << " bytes), more than one launch "
             << "passes (" << limits::kMaxKernelParams << ", "
             << limits::kMaxKernelParamBytes << " bytes)";
    auto [gx, gy, gz] = launch.grid;
    auto [bx, by, bz] = launch.block;
    if (gx > limits::kMaxGridX || gy > limits::kMaxGridYZ ||
        gz > limits::kMaxGridYZ || bx > limits::kMaxBlockXY ||
        by > limits::kMaxBlockXY || bz > limits::kMaxBlockZ ||
        uint64_t{bx} * by * bz > limits::kMaxThreadsPerBlock)
      return emitFusionError(fusion)
             << "a kernel of this op would launch a grid of [" << gx << ", "
             << gy << ", " << gz << "] blocks of [" << bx << ", " << by << ", "
             << bz << "] threads, outside CUDA's limits";
    return success();
  }

  FailureOr<size_t> addKernel(FusionOp fusion, const GeneratedKernel &kernel) {
    uint64_t hash = contentHash(kernel.source);
    auto it = kernelByHash.find(hash);
    if (it != kernelByHash.end())
      return it->second;
    CompiledKernelImage image;
    image.name = kernel.name;
    image.hash = hash;
    image.source = kernel.source;
    image.arch =
        kernel.archSpecific ? archSpecificTarget(options.arch) : options.arch;
    image.waitsForPredecessor = waitsForPredecessor(image.source, image.arch);
    image.templateName = kernel.templateName;
    image.configuration = kernel.configuration;
    image.part = kernel.part;
    size_t id = result.kernels.size();
    result.kernels.push_back(std::move(image));
    kernelByHash[hash] = id;
    fusionByHash[hash] = fusion;
    return id;
  }

  /// Compiles every kernel not compiled yet, in parallel; a diagnostic at
  /// the fusion of the first (in kernel order) that does not compile, or at
  /// `loc` for a merged kernel.
  LogicalResult compileKernels(Location loc) {
    std::vector<KernelCache::Job> jobs;
    std::vector<size_t> kernelOfJob;
    for (auto [i, kernel] : llvm::enumerate(result.kernels)) {
      if (!kernel.binary.ptx.empty())
        continue;
      jobs.push_back({kernel.source, kernel.name, kernel.arch});
      kernelOfJob.push_back(i);
    }
    cache.compileAll(jobs);
    for (auto [job, i] : llvm::zip(jobs, kernelOfJob)) {
      CompiledKernelImage &kernel = result.kernels[i];
      if (job.compiled) {
        kernel.binary = std::move(job.out);
        continue;
      }
      FusionOp fusion = fusionByHash.lookup(kernel.hash);
      InFlightDiagnostic diag =
          fusion ? emitFusionError(fusion) : mlir::emitError(loc);
      diag << "generated kernel '" << kernel.name
           << "' does not compile: " << job.error;
      return failure();
    }
    return success();
  }

  /// Every kernel the runtime may launch while its predecessor still runs
  /// (PredecessorWait.h) waits before it touches memory, as compiled: an
  /// error at the fusion of the first that does not (at `loc` for a merged
  /// kernel).
  LogicalResult checkPredecessorWaits(Location loc) {
    for (const CompiledKernelImage &kernel : result.kernels) {
      if (!kernel.waitsForPredecessor)
        continue;
      std::optional<std::string> early =
          accessBeforeWait(kernel.binary.ptx, kernel.name);
      if (!early)
        continue;
      FusionOp fusion = fusionByHash.lookup(kernel.hash);
      InFlightDiagnostic diag =
          fusion ? emitFusionError(fusion) : mlir::emitError(loc);
      diag << "generated kernel '" << kernel.name
           << "' may start before the kernel launched ahead of it has ended, "
              "but its PTX does not wait for that kernel first ("
           << *early << ")";
      return failure();
    }
    return success();
  }

  /// A merged kernel's source with its name, `kiln_merged_<hash>`, in place.
  static std::pair<std::string, std::string>
  nameMergedKernel(const std::string &source) {
    std::string named = source;
    std::string name = "kiln_merged_" + llvm::utohexstr(contentHash(source),
                                                        /*LowerCase=*/true)
                                            .substr(0, 12);
    named.replace(named.find("KILN_KERNEL_NAME"), strlen("KILN_KERNEL_NAME"),
                  name);
    return {std::move(name), std::move(named)};
  }

  /// Merges the launches of every entry that may run at once. A merge whose
  /// kernel does not compile (e.g. more static shared memory than a block
  /// may have) leaves its launches apart, so merged kernels are compiled
  /// while merging; which launches form a group does not depend on that
  /// outcome, so a first pass collects every group's kernel and compiles them
  /// all at once, in parallel.
  void mergeLaunches() {
    if (compile) {
      std::vector<KernelCache::Job> jobs;
      for (const CompiledEntry &entry : result.entries) {
        CompiledEntry trial = entry;
        mergeIndependentLaunches(
            trial, result.kernels, options.arch,
            [&](const std::string &source) -> std::optional<size_t> {
              auto [name, named] = nameMergedKernel(source);
              if (!mergedJobs.count(named)) {
                mergedJobs[named] = jobs.size();
                jobs.push_back({named, name, options.arch});
              }
              return std::nullopt;
            });
      }
      cache.compileAll(jobs);
      mergedResults = std::move(jobs);
    }
    for (CompiledEntry &entry : result.entries)
      mergeIndependentLaunches(
          entry, result.kernels, options.arch,
          [&](const std::string &source) { return addMergedKernel(source); });
  }

  /// The kernel of merged launches, compiled by mergeLaunches; nothing when
  /// it did not compile.
  std::optional<size_t> addMergedKernel(const std::string &source) {
    auto [name, named] = nameMergedKernel(source);
    uint64_t hash = contentHash(named);
    if (auto it = kernelByHash.find(hash); it != kernelByHash.end())
      return it->second;
    CompiledKernelImage image;
    if (compile) {
      KernelCache::Job &job = mergedResults[mergedJobs.at(named)];
      if (!job.compiled) {
        ++result.mergesKeptApart;
        return std::nullopt;
      }
      image.binary = job.out;
    }
    image.name = name;
    image.hash = hash;
    image.source = std::move(named);
    image.arch = options.arch;
    image.waitsForPredecessor = waitsForPredecessor(image.source, image.arch);
    image.templateName = "merged";
    size_t id = result.kernels.size();
    result.kernels.push_back(std::move(image));
    kernelByHash[hash] = id;
    return id;
  }

  /// Removes kernels no launch uses any more (merged into others) and
  /// renumbers the launches'.
  void dropUnlaunchedKernels() {
    std::vector<bool> used(result.kernels.size(), false);
    for (const CompiledEntry &entry : result.entries)
      for (const CompiledLaunch &launch : entry.launches)
        used[launch.kernel] = true;
    std::vector<size_t> renumbered(result.kernels.size());
    std::vector<CompiledKernelImage> kept;
    for (size_t i = 0; i < result.kernels.size(); ++i) {
      renumbered[i] = kept.size();
      if (used[i])
        kept.push_back(std::move(result.kernels[i]));
    }
    result.kernels = std::move(kept);
    for (CompiledEntry &entry : result.entries)
      for (CompiledLaunch &launch : entry.launches)
        launch.kernel = renumbered[launch.kernel];
    kernelByHash.clear();
    for (size_t i = 0; i < result.kernels.size(); ++i)
      kernelByHash[result.kernels[i].hash] = i;
  }

  const CodegenOptions &options;
  bool compile;
  KernelCache cache{options.kernelCacheDirectory};
  CompiledModule result;
  std::map<uint64_t, size_t> kernelByHash;
  /// The fusion each kernel was generated for (none for merged kernels).
  llvm::DenseMap<uint64_t, FusionOp> fusionByHash;
  llvm::StringSet<> residentNames;
  /// Merged kernels compiled by mergeLaunches, by source.
  std::map<std::string, size_t> mergedJobs;
  std::vector<KernelCache::Job> mergedResults;
};
} // namespace

FailureOr<CompiledModule>
generateModule(ModuleOp module, const CodegenOptions &options, bool compile) {
  Generator generator(options, compile);
  if (failed(generator.run(module)))
    return failure();
  CompiledModule compiled = generator.take();
  // Kernel parameter kinds come from the first launch of each kernel.
  for (const CompiledEntry &entry : compiled.entries)
    for (const CompiledLaunch &launch : entry.launches) {
      CompiledKernelImage &kernel = compiled.kernels[launch.kernel];
      if (!kernel.params.empty() || launch.args.empty())
        continue;
      for (const CompiledArg &arg : launch.args)
        kernel.params.push_back(arg.kind);
    }
  return compiled;
}

std::string describeLaunchShape(const CompiledLaunch &launch) {
  if (launch.cooperative)
    return "cooperative";
  if (!launch.clustered())
    return "";
  return llvm::formatv("cluster {0}x{1}x{2}", launch.cluster[0],
                       launch.cluster[1], launch.cluster[2])
      .str();
}

} // namespace mlir::kiln::codegen
