//===- kilnc.cpp - the kiln compiler
//----------------------------------------===//
//
//   kilnc model.mlir|model.onnx -o model.kiln [--train=adamw|adam|sgd]
//         [options]
//
// Parses and verifies the model, then runs the kiln pass pipeline
// (compiler/pipeline): builds the training entries (or, with --inference,
// only `forward`), fuses, plans memory, generates CUDA kernels and compiles
// them with NVRTC to PTX and a cubin for --arch; writes the artifact. --emit
// stops early and prints the IR, the CUDA sources or the PTX. MLIR's
// pass-manager flags (--mlir-print-ir-after-all, --mlir-timing,
// --mlir-pass-pipeline-crash-reproducer, ...) apply to the pipeline.
//
//===----------------------------------------------------------------------===//

#include "codegen/artifact/ArtifactEmitter.h"
#include "codegen/cuda/KernelCache.h"
#include "codegen/cuda/KernelTemplates.h"
#include "codegen/cuda/ModuleCodegen.h"
#include "codegen/distributed/GradientBuckets.h"
#include "codegen/header/CppNames.h"
#include "codegen/header/HeaderEmitter.h"
#include "compiler/import/LoadModel.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/transforms/MemoryPlan.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "runtime/artifact/artifact.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::kiln;
namespace cl = llvm::cl;


/// A byte count of the command line: a number of bytes, optionally with a
/// unit (B, KB, MB, GB as powers of 1000; KiB, MiB, GiB as powers of 1024),
/// e.g. 437MiB; nothing when `text` is not one.
static std::optional<uint64_t> parseByteCount(llvm::StringRef text) {
  llvm::StringRef digits = text.take_while(llvm::isDigit);
  llvm::StringRef unit = text.drop_front(digits.size());
  static const std::pair<llvm::StringRef, uint64_t> kUnits[] = {
      {"", 1},         {"B", 1},           {"KB", 1000},
      {"MB", 1000000}, {"GB", 1000000000}, {"KiB", uint64_t(1) << 10},
      {"MiB", uint64_t(1) << 20}, {"GiB", uint64_t(1) << 30}};
  uint64_t count = 0;
  if (digits.empty() || digits.getAsInteger(10, count))
    return std::nullopt;
  for (auto [suffix, scale] : kUnits)
    if (unit == suffix && count <= std::numeric_limits<uint64_t>::max() / scale)
      return count * scale;
  return std::nullopt;
}

static cl::OptionCategory category("kilnc options");
static cl::opt<std::string> inputPath(cl::Positional,
                                      cl::desc("<model.mlir|model.onnx>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> outputPath("o", cl::desc("output file"),
                                       cl::value_desc("path"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<std::string> train("train",
                                  cl::desc("optimizer: adamw, adam or sgd"),
                                  cl::init("adamw"), cl::cat(category));
static cl::opt<bool> inference("inference",
                               cl::desc("compile only the forward entry"),
                               cl::cat(category));
static cl::opt<std::string> lossFunction("function",
                                         cl::desc("loss function name"),
                                         cl::init("loss"), cl::cat(category));
static cl::opt<double> momentum("momentum", cl::desc("SGD momentum"),
                                cl::init(0.0), cl::cat(category));
static cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                              cl::cat(category));
static cl::opt<double> beta1("beta1", cl::init(0.9), cl::desc("Adam(W) beta1"),
                             cl::cat(category));
static cl::opt<double> beta2("beta2", cl::init(0.999),
                             cl::desc("Adam(W) beta2"), cl::cat(category));
static cl::opt<double> epsilon("epsilon", cl::init(1e-8),
                               cl::desc("Adam(W) epsilon"), cl::cat(category));
static cl::opt<double>
    weightDecay("weight-decay", cl::init(-1.0),
                cl::desc("weight decay (default 0.01 for adamw, 0 otherwise)"),
                cl::cat(category));
static cl::opt<double>
    clipNorm("clip-norm", cl::init(0.0),
             cl::desc("clip the global gradient norm (0: off)"),
             cl::cat(category));
static cl::opt<double> clipValue("clip-value", cl::init(0.0),
                                 cl::desc("clip gradient elements (0: off)"),
                                 cl::cat(category));
static cl::opt<double> gradScale("grad-scale", cl::init(1.0),
                                 cl::desc("scale gradients"),
                                 cl::cat(category));
static cl::opt<double>
    gradNoise("grad-noise", cl::init(0.0),
              cl::desc("std of Gaussian gradient noise (0: off)"),
              cl::cat(category));
static cl::opt<uint64_t> gradNoiseSeed("grad-noise-seed", cl::init(0),
                                       cl::desc("seed of the gradient noise"),
                                       cl::cat(category));
static cl::opt<std::string> nonFiniteGrads(
    "nonfinite-grads", cl::init("apply"),
    cl::desc("apply, or skip: leave parameters and optimizer state unchanged "
             "when a gradient is NaN or infinite and count the step in "
             "grad_stats.skipped_updates"),
    cl::cat(category));
static cl::opt<std::string> lossScale(
    "loss-scale", cl::init("none"),
    cl::desc("none or dynamic: loss scaling for f16 (halved on overflow, "
             "doubled after --loss-scale-growth-interval good steps; implies "
             "--nonfinite-grads=skip)"),
    cl::cat(category));
static cl::opt<double>
    lossScaleInit("loss-scale-init", cl::init(65536.0),
                  cl::desc("initial dynamic loss scale (a power of two)"),
                  cl::cat(category));
static cl::opt<int64_t> lossScaleGrowthInterval(
    "loss-scale-growth-interval", cl::init(2000),
    cl::desc("applied updates in a row before the loss scale doubles"),
    cl::cat(category));
static cl::opt<bool> gradStats("grad-stats",
                               cl::desc("emit gradient statistics outputs"),
                               cl::cat(category));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("storage of parameters and activations: f32, bf16 or f16 "
             "(compute stays f32; bf16/f16 keep f32 master weights)"),
    cl::init("f32"), cl::cat(category));
static cl::opt<std::string> arch("arch", cl::desc("target architecture"),
                                 cl::init("sm_90"), cl::cat(category));
static cl::opt<std::string> kernelCache(
    "kernel-cache",
    cl::desc("directory of compiled kernels kept between runs (default: "
             "$KILN_KERNEL_CACHE, else $XDG_CACHE_HOME/kiln/kernels, else "
             "~/.cache/kiln/kernels)"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool>
    noTma("no-tma",
          cl::desc("copy GEMM, convolution and attention operands with the "
                   "threads rather than the tensor memory accelerator (sm_90; "
                   "for comparisons)"),
          cl::cat(category));
static cl::opt<std::string> gemmSchedule(
    "gemm-schedule",
    cl::desc("how the TMA GEMM kernel's consumer warpgroups share the work "
             "(sm_90): auto (the cost model picks per product, the default), "
             "cooperative (one tile among them) or pingpong (whole tiles in "
             "turn, one's epilogue under the other's products)"),
    cl::init("auto"), cl::cat(category));
static cl::opt<std::string> gemmCluster(
    "gemm-cluster",
    cl::desc("blocks per thread-block cluster of the TMA GEMM kernel "
             "(sm_90), which share the rhs tile by TMA multicast: 1 (the "
             "default), 2, or auto (two where the product has two tile rows "
             "to pair)"),
    cl::init("1"), cl::cat(category));
static cl::opt<bool> persistentAttention(
    "persistent-attention",
    cl::desc("run the Hopper attention kernels persistent (sm_90, the "
             "default): one block per SM takes the (batch * head, tile) "
             "work items in turn, copying the next item's tiles under the "
             "last one's products; =false launches one block per work item "
             "(causal: per pair of a long and a short item)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> attentionSchedule(
    "attention-schedule",
    cl::desc("the Hopper attention forward's schedule (sm_90): auto (the "
             "default: pingpong where the attention is causal), cooperative "
             "(the two consumer warpgroups issue their matrix products as "
             "they come) or pingpong (they take turns, so that one "
             "warpgroup's softmax runs while the tensor cores multiply the "
             "other's)"),
    cl::init("auto"), cl::cat(category));
static cl::opt<bool> fusedAttentionBackward(
    "fused-attention-backward",
    cl::desc("run the Hopper attention backward in one pass over the key "
             "tiles (sm_90, head dims of at most 128, the forward's row "
             "log-sum-exp at hand): dQ is added in f32 by bulk reductions "
             "whose order varies, so its last bits may differ run to run "
             "(by default the backward is two deterministic kernels)"),
    cl::cat(category));
static cl::opt<bool> gemmTmaStore(
    "gemm-tma-store",
    cl::desc("the TMA GEMM kernel (sm_90) stores its first result by TMA "
             "from the staged epilogue's shared memory, where one problem's "
             "result has the operands' element type (by default each lane "
             "stores its 16-byte runs)"),
    cl::cat(category));
static cl::opt<bool> noMergeLaunches(
    "no-merge-launches",
    cl::desc("keep every fusion's launches apart (by default, launches that "
             "may run at once run as one kernel)"),
    cl::cat(category));
static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("device bytes a training step may use, resident buffers plus "
             "its arena (e.g. 437MiB); above it, cheap activations "
             "(pointwise ops, norms, outer products) are computed again in "
             "the backward instead of kept (--stats shows the choice)"),
    cl::init("0"), cl::cat(category));
static cl::list<std::string> customKernelDirs(
    "I", cl::Prefix,
    cl::desc("directory searched for the CUDA files of kiln.custom ops, "
             "after the model's own (repeatable, in order)"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool> noKernelCache("no-kernel-cache",
                                   cl::desc("compile every kernel"),
                                   cl::cat(category));
static cl::opt<bool> tf32("tf32", cl::desc("f32 matmuls on TF32 tensor cores"),
                          cl::cat(category));
static cl::opt<std::string>
    emit("emit", cl::desc("mlir, cuda, ptx, artifact (default) or header"),
         cl::init("artifact"), cl::cat(category));
static cl::opt<std::string>
    headerPath("header",
               cl::desc("also write the typed C++ header of the artifact "
                        "(a class with one method per entry) to this file"),
               cl::value_desc("path"), cl::cat(category));
static cl::alias headerAlias("H", cl::desc("alias for --header"),
                             cl::aliasopt(headerPath), cl::cat(category));
static cl::opt<std::string> headerClass(
    "header-class",
    cl::desc("the typed header's class, optionally in namespaces "
             "(\"models::Mlp\"; default: the input's file name in CamelCase)"),
    cl::value_desc("name"), cl::cat(category));
static cl::opt<bool> emitTemplates(
    "emit-templates",
    cl::desc("with --emit=cuda, also print the kernel templates the kernels "
             "include, so that the output is self-contained"),
    cl::cat(category));
static cl::opt<bool> dataParallel(
    "data-parallel",
    cl::desc("data-parallel training: the gradients are averaged over the "
             "ranks (NCCL all-reduce), in buckets each issued as soon as the "
             "backward has finished it, on a second stream; with one rank "
             "the artifact trains as without"),
    cl::cat(category));
static cl::opt<std::string> bucketBytes(
    "bucket-bytes", cl::init("25MiB"),
    cl::desc("bytes of a gradient bucket (--data-parallel; 25 MiB as "
             "PyTorch's DistributedDataParallel)"),
    cl::cat(category));
static cl::opt<std::string> firstBucketBytes(
    "first-bucket-bytes", cl::init("1MiB"),
    cl::desc("bytes of the first gradient bucket, smaller so that "
             "communication starts early (--data-parallel; 1 MiB)"),
    cl::cat(category));
// `--stats` is LLVM's own flag (statistics); kilnc reads it after parsing
// and prints its kernels, launches (per kernel family) and memory per entry.

static int fail(llvm::Twine message) {
  llvm::errs() << "kilnc: error: " << message << "\n";
  return 1;
}

static void printStats(const codegen::CompiledModule &module) {
  uint64_t residentBytes = 0;
  for (const codegen::ResidentInfo &resident : module.residents)
    residentBytes += tensorBytes(resident.type);
  size_t waiting = llvm::count_if(
      module.kernels, [](const codegen::CompiledKernelImage &kernel) {
        return kernel.waitsForPredecessor;
      });
  llvm::errs() << "kernels: " << module.kernels.size() << " distinct ("
               << module.kernelsCompiled << " compiled, "
               << module.kernelCacheHits << " from the kernel cache; "
               << waiting << " may launch before their predecessor ends)\n";
  if (module.mergesKeptApart)
    llvm::errs() << "launch groups kept apart (merged kernel did not compile): "
                 << module.mergesKeptApart << "\n";
  llvm::errs() << "resident bytes: " << residentBytes << " in "
               << module.residents.size() << " buffers\n";
  // Clusters and cooperative launches belong to the launches, not to the
  // code: each kernel lists the shapes its launches use.
  std::vector<std::set<std::string>> shapes(module.kernels.size());
  for (const codegen::CompiledEntry &entry : module.entries)
    for (const codegen::CompiledLaunch &launch : entry.launches)
      if (std::string shape = codegen::describeLaunchShape(launch);
          !shape.empty())
        shapes[launch.kernel].insert(shape);
  for (auto [index, kernel] : llvm::enumerate(module.kernels)) {
    llvm::errs() << "kernel " << kernel.name << " (" << kernel.arch << "): ";
    if (kernel.templateName.empty())
      llvm::errs() << "no template";
    else
      llvm::errs() << kernel.templateName;
    if (!kernel.configuration.empty())
      llvm::errs() << " [" << kernel.configuration << "]";
    for (const std::string &shape : shapes[index])
      llvm::errs() << ", " << shape;
    llvm::errs() << "\n";
  }
  for (const codegen::CompiledEntry &entry : module.entries) {
    llvm::errs() << "entry " << entry.name << ": " << entry.launches.size()
                 << " launches, arena " << entry.arenaBytes << " bytes\n";
    // Launches per kernel family: the kernel name without its content hash.
    std::map<std::string, int> families;
    for (const codegen::CompiledLaunch &launch : entry.launches)
      ++families[llvm::StringRef(module.kernels[launch.kernel].name)
                     .rsplit('_')
                     .first.str()];
    llvm::errs() << "  ";
    for (auto [index, family] : llvm::enumerate(families))
      llvm::errs() << (index ? ", " : "") << family.first << " "
                   << family.second;
    llvm::errs() << "\n";
  }
}

/// What --memory-budget chose to compute again (kiln-recompute).
static void printRecomputed(ModuleOp module) {
  for (auto function : module.getOps<func::FuncOp>()) {
    auto choices = function->getAttrOfType<ArrayAttr>("kiln.recomputed");
    if (!choices)
      continue;
    for (auto choice : choices.getAsRange<DictionaryAttr>()) {
      auto integer = [&](StringRef key) {
        return choice.getAs<IntegerAttr>(key).getValue().getZExtValue();
      };
      uint64_t ops = choice.getAs<IntegerAttr>("ops")
                         ? integer("ops")
                         : 1; // artifacts' IR from before the count
      llvm::errs() << "recompute in " << function.getSymName() << ": "
                   << choice.getAs<StringAttr>("op").getValue() << " ("
                   << integer("bytes") << " bytes) computed again where the "
                   << "backward reads it";
      if (ops > 1)
        llvm::errs() << " (with " << ops - 1
                     << " op(s) it is computed from)";
      llvm::errs() << ": arena " << integer("arena_before") << " -> "
                   << integer("arena_after")
                   << " bytes, one more pointwise or norm pass\n";
    }
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // MLIR's printing, context, pass-manager and timing flags, as mlir-opt
  // has them. The passes come first: --mlir-print-ir-after=PASS and the
  // like accept the passes registered when they are.
  registerKilnPasses();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  static cl::OptionCategory mlirCategory("pipeline options (MLIR)");
  for (auto &option : cl::getRegisteredOptions())
    if (option.getKey().starts_with("mlir-"))
      option.getValue()->addCategory(mlirCategory);
  cl::HideUnrelatedOptions({&category, &mlirCategory});
  // Keep LLVM's --stats visible: it asks for kilnc's statistics too.
  if (auto *option = cl::getRegisteredOptions().lookup("stats"))
    option->setHiddenFlag(cl::NotHidden), option->addCategory(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "kiln ahead-of-time training compiler\n");

  if (train != "sgd" && train != "adam" && train != "adamw")
    return fail("--train must be adamw, adam or sgd, got '" + train + "'");
  if (emitTemplates && emit != "cuda")
    return fail("--emit-templates needs --emit=cuda");
  if (emit != "mlir" && emit != "cuda" && emit != "ptx" && emit != "artifact" &&
      emit != "header")
    return fail("--emit must be mlir, cuda, ptx, artifact or header, got '" +
                emit + "'");
  if (!headerPath.empty() && emit != "artifact")
    return fail("--header writes the header beside the artifact; with --emit=" +
                emit + " there is none (--emit=header writes only a header)");
  if (precision != "f32" && precision != "bf16" && precision != "f16")
    return fail("--precision must be f32, bf16 or f16, got '" + precision +
                "'");
  if (nesterov && momentum <= 0)
    return fail("--nesterov needs --momentum > 0");
  for (const cl::opt<std::string> *schedule :
       {&gemmSchedule, &attentionSchedule}) {
    const std::string &value = schedule->getValue();
    if (value != "auto" && value != "cooperative" && value != "pingpong")
      return fail("--" + schedule->ArgStr.str() +
                  " must be auto, cooperative or pingpong, got '" + value +
                  "'");
  }
  if (gemmCluster != "auto" && gemmCluster != "1" && gemmCluster != "2")
    return fail("--gemm-cluster must be auto, 1 or 2, got '" + gemmCluster +
                "'");
  if (dataParallel && inference)
    return fail("--data-parallel needs training entries, not --inference");
  if ((bucketBytes.getNumOccurrences() ||
       firstBucketBytes.getNumOccurrences()) &&
      !dataParallel)
    return fail("--bucket-bytes and --first-bucket-bytes need --data-parallel");
  std::optional<uint64_t> budgetBytes = parseByteCount(memoryBudget),
                          bucket = parseByteCount(bucketBytes),
                          firstBucket = parseByteCount(firstBucketBytes);
  for (auto [flag, text, bytes] :
       {std::make_tuple("--memory-budget", &memoryBudget, budgetBytes),
        std::make_tuple("--bucket-bytes", &bucketBytes, bucket),
        std::make_tuple("--first-bucket-bytes", &firstBucketBytes,
                        firstBucket)})
    if (!bytes)
      return fail(llvm::Twine(flag) + " must be a byte count (a number, " +
                  "optionally with B, KB, MB, GB, KiB, MiB or GiB), got '" +
                  text->getValue() + "'");
  if (*bucket == 0 || *firstBucket == 0)
    return fail("--bucket-bytes and --first-bucket-bytes must be positive");
  if (clipNorm < 0 || clipValue < 0 || gradNoise < 0)
    return fail("--clip-norm, --clip-value and --grad-noise must be >= 0");

  if (nonFiniteGrads != "apply" && nonFiniteGrads != "skip")
    return fail("--nonfinite-grads must be apply or skip, got '" +
                nonFiniteGrads + "'");
  if (lossScale != "none" && lossScale != "dynamic")
    return fail("--loss-scale must be none or dynamic, got '" + lossScale +
                "'");
  int lossScaleExponent = 0;
  if (std::frexp(lossScaleInit.getValue(), &lossScaleExponent) != 0.5 ||
      lossScaleExponent - 1 < -64 || lossScaleExponent - 1 > 64)
    return fail("--loss-scale-init must be a power of two between 2^-64 and "
                "2^64");
  if (lossScaleGrowthInterval < 1)
    return fail("--loss-scale-growth-interval must be >= 1");

  PipelineOptions options;
  options.function = lossFunction.getValue();
  options.train = inference ? std::string("none") : train.getValue();
  options.momentum = momentum.getValue();
  options.nesterov = nesterov.getValue();
  options.beta1 = beta1.getValue();
  options.beta2 = beta2.getValue();
  options.epsilon = epsilon.getValue();
  options.weightDecay = weightDecay.getValue();
  options.gradStats = gradStats.getValue();
  options.gradScale = gradScale.getValue();
  options.clipNorm = clipNorm.getValue();
  options.clipValue = clipValue.getValue();
  options.gradNoise = gradNoise.getValue();
  options.gradNoiseSeed = gradNoiseSeed.getValue();
  options.nonFiniteGrads = nonFiniteGrads.getValue();
  options.lossScale = lossScale.getValue();
  options.lossScaleInit = lossScaleInit.getValue();
  options.lossScaleGrowthInterval = lossScaleGrowthInterval.getValue();
  options.precision = precision.getValue();
  // Launch merging runs a kernel beside its predecessor only when it does
  // not write over what the predecessor reads: keep freed bytes one kernel.
  options.reuseDelay = noMergeLaunches ? 0u : 1u;
  options.memoryBudget = *budgetBytes;
  options.codegen = emit != "mlir";
  options.arch = arch.getValue();
  options.tf32 = tf32.getValue();
  options.mergeLaunches = !noMergeLaunches;
  options.tma = !noTma;
  options.gemmSchedule = gemmSchedule.getValue();
  options.gemmCluster = gemmCluster.getValue();
  options.persistentAttention = persistentAttention.getValue();
  options.fusedAttentionBackward = fusedAttentionBackward.getValue();
  options.attentionSchedule = attentionSchedule.getValue();
  options.gemmTmaStore = gemmTmaStore.getValue();
  if (!noKernelCache)
    options.kernelCache = kernelCache.getNumOccurrences()
                              ? std::string(kernelCache)
                              : codegen::KernelCache::defaultDirectory();
  options.compile = emit != "cuda";
  for (const std::string &dir : customKernelDirs)
    options.customKernelDirs.push_back(dir);
  options.dataParallel = dataParallel.getValue();
  options.bucketBytes = *bucket;
  options.firstBucketBytes = *firstBucket;

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();

  DialectRegistry registry;
  registry.insert<KilnDialect, func::FuncDialect>();
  registerGradientRules(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point into the user's file; the generic form of the op they
  // are about (compiler-internal IR) only with --mlir-print-op-on-diagnostic.
  if (cl::getRegisteredOptions()["mlir-print-op-on-diagnostic"]
          ->getNumOccurrences() == 0)
    context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  std::string openError;
  TimingScope parserTiming = timing.nest("Parser");
  // A .onnx model goes through the ONNX importer (compiler/import).
  auto onnxDiagnostics = makeOnnxDiagnosticHandler(&context);
  OwningOpRef<ModuleOp> module =
      loadModel(inputPath, sourceMgr, &context,
                onnxImportOptionsFromCommandLine(lossFunction), openError);
  if (!module)
    return openError.empty() ? 1 : fail(openError);
  parserTiming.stop();

  // With --precision or --inference a missing function is kilnc's error
  // (for training, kiln-make-train-step reports it).
  if ((precision != "f32" || inference) &&
      !module->lookupSymbol<func::FuncOp>(lossFunction))
    return fail("no function named '" + lossFunction + "'");

  // A local reproducer needs a single-threaded pass manager; the pipeline
  // runs module passes only, so that costs nothing but parallel verification.
  if (cl::getRegisteredOptions()
          .lookup("mlir-pass-pipeline-local-reproducer")
          ->getNumOccurrences())
    context.disableMultithreading();
  codegen::CompiledModule compiled;
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  pm.enableTiming(timing);
  buildKilnPipeline(pm, options, &compiled);
  if (failed(pm.run(*module)))
    return 1;

  TimingScope outputTiming = timing.nest("Output");
  std::string error;
  auto output = openOutputFile(outputPath, &error);
  if (!output)
    return fail(error);
  if (emit == "mlir") {
    module->print(output->os());
    output->keep();
    return 0;
  }

  if (llvm::AreStatisticsEnabled()) {
    printStats(compiled);
    printRecomputed(*module);
    codegen::printBucketPlan(compiled, llvm::errs());
  }
  if (emit == "cuda" || emit == "ptx") {
    for (const codegen::CompiledKernelImage &kernel : compiled.kernels)
      output->os() << "// ===== " << kernel.name << " =====\n"
                   << (emit == "cuda" ? kernel.source : kernel.binary.ptx)
                   << "\n";
    if (emit == "cuda" && emitTemplates) {
      std::string sources;
      for (const codegen::CompiledKernelImage &kernel : compiled.kernels)
        sources += kernel.source;
      for (llvm::StringRef name : codegen::includedTemplates(sources))
        output->os() << "// ===== template " << name << " =====\n"
                     << codegen::kernelTemplate(name) << "\n";
    }
    output->keep();
    return 0;
  }
  std::string bytes;
  if (!codegen::writeArtifact(compiled, bytes, error))
    return fail("invalid artifact: " + error);
  if (emit == "artifact" && headerPath.empty()) {
    output->os() << bytes;
    output->keep();
    return 0;
  }

  // The typed header, from the artifact as the runtime reads it.
  absl::StatusOr<::kiln::artifact::Artifact> loaded =
      ::kiln::artifact::LoadArtifact(bytes);
  if (!loaded.ok())
    return fail("invalid artifact: " + std::string(loaded.status().message()));
  codegen::HeaderOptions headerOptions;
  llvm::StringRef headerFile = emit == "header" ? outputPath : headerPath;
  headerOptions.className =
      headerClass.empty()
          ? codegen::cppCamelCase(llvm::sys::path::stem(inputPath))
          : headerClass.getValue();
  headerOptions.headerName = headerFile == "-"
                                 ? headerOptions.className + ".h"
                                 : llvm::sys::path::filename(headerFile).str();
  headerOptions.source = llvm::sys::path::filename(inputPath).str();
  headerOptions.pinChecksum = emit == "artifact";
  std::string header;
  if (!codegen::emitHeader(*loaded, headerOptions, header, error))
    return fail("typed header: " + error);
  if (emit == "header") {
    output->os() << header;
    output->keep();
    return 0;
  }
  auto headerOutput = openOutputFile(headerPath, &error);
  if (!headerOutput)
    return fail(error);
  output->os() << bytes;
  headerOutput->os() << header;
  output->keep();
  headerOutput->keep();
  return 0;
}
