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
// --help lists every option with its default (tools/common/ToolOptions.h).
// A bad command line (an unknown option, a value out of range, options that
// do not go together) exits with status 2 before anything is read; a model
// that does not compile, with 1.
//
//===----------------------------------------------------------------------===//

#include "codegen/artifact/ArtifactEmitter.h"
#include "codegen/cuda/DeviceMemory.h"
#include "codegen/cuda/KernelCache.h"
#include "codegen/cuda/KernelTemplates.h"
#include "codegen/dialect/KilnCudaDialect.h"
#include "codegen/distributed/GradientBuckets.h"
#include "codegen/header/CppNames.h"
#include "codegen/header/HeaderEmitter.h"
#include "codegen/passes/CodegenPass.h"
#include "compiler/import/LoadModel.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/transforms/MemoryPlan.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "runtime/artifact/artifact.h"
#include "tools/common/ToolOptions.h"

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
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::kiln;
namespace cl = llvm::cl;
namespace tools = ::kiln::tools;

// The options by topic; --help shows them in this order (ToolOptions.h).
static cl::OptionCategory outputCategory("Output");
static cl::OptionCategory trainingCategory("Training");
static cl::OptionCategory gradientCategory("Gradients (training only)");
static cl::OptionCategory precisionCategory("Precision and memory");
static cl::OptionCategory kernelCategory("Kernels");
static cl::OptionCategory parallelCategory("Data-parallel training");
static cl::OptionCategory mlirCategory("Pipeline (MLIR's options)");

static cl::opt<std::string> inputPath(cl::Positional,
                                      cl::desc("<model.mlir|model.onnx>"),
                                      cl::Required);

// Output.
static cl::opt<std::string>
    outputPath("o", cl::desc("output file ('-': standard output)"),
               cl::value_desc("path"), cl::init("-"), cl::cat(outputCategory));
static cl::opt<std::string>
    emit("emit",
         cl::desc("what to write: the artifact, the compiled module's IR "
                  "(mlir), its CUDA sources, its PTX, or only the typed C++ "
                  "header"),
         cl::value_desc("artifact|mlir|cuda|ptx|header"), cl::init("artifact"),
         cl::cat(outputCategory));
static cl::opt<bool> emitTemplates(
    "emit-templates",
    cl::desc("with --emit=cuda, also print the kernel templates the kernels "
             "include, so that the output is self-contained"),
    cl::cat(outputCategory));
static cl::opt<std::string>
    headerPath("header",
               cl::desc("also write the typed C++ header of the artifact "
                        "(a class with one method per entry) to this file "
                        "(-H for short)"),
               cl::value_desc("path"), cl::cat(outputCategory));
static cl::alias headerAlias("H", cl::desc("alias for --header"),
                             cl::aliasopt(headerPath));
static cl::opt<std::string> headerClass(
    "header-class",
    cl::desc("the typed header's class, optionally in namespaces "
             "(\"models::Mlp\"; default: the input's file name in CamelCase)"),
    cl::value_desc("name"), cl::cat(outputCategory));
// `--stats` is LLVM's own flag (statistics), moved here in main: kilnc reads
// it after the pipeline and prints its own statistics.
static const char kStatsDescription[] =
    "print to stderr what was compiled: each kernel (template, "
    "configuration, launch shapes), each entry's launches per kernel family "
    "and arena bytes, the resident bytes, what --memory-budget chose to "
    "compute again and the gradient buckets of --data-parallel";

// Training.
static cl::opt<std::string> train("train", cl::desc("the optimizer"),
                                  cl::value_desc("adamw|adam|sgd"),
                                  cl::init("adamw"), cl::cat(trainingCategory));
static cl::opt<bool> inference(
    "inference",
    cl::desc("compile only the forward entry (no gradients, no optimizer)"),
    cl::cat(trainingCategory));
static cl::opt<double> momentum("momentum", cl::desc("SGD momentum, in [0, 1)"),
                                cl::init(0.0), cl::cat(trainingCategory));
static cl::opt<bool>
    nesterov("nesterov",
             cl::desc("SGD Nesterov momentum (needs --momentum > 0)"),
             cl::cat(trainingCategory));
static cl::opt<double> beta1("beta1", cl::desc("Adam(W) beta1, in [0, 1)"),
                             cl::init(0.9), cl::cat(trainingCategory));
static cl::opt<double> beta2("beta2", cl::desc("Adam(W) beta2, in [0, 1)"),
                             cl::init(0.999), cl::cat(trainingCategory));
static cl::opt<double> epsilon("epsilon", cl::desc("Adam(W) epsilon, > 0"),
                               cl::init(1e-8), cl::cat(trainingCategory));
static cl::opt<double> weightDecay(
    "weight-decay",
    cl::desc("weight decay, >= 0: decoupled for adamw, an L2 penalty for "
             "adam and sgd (default: 0.01 for adamw, 0 otherwise)"),
    cl::cat(trainingCategory));

// Gradients.
static cl::opt<double>
    clipNorm("clip-norm",
             cl::desc("clip the global gradient norm to this (0: off)"),
             cl::init(0.0), cl::cat(gradientCategory));
static cl::opt<double>
    clipValue("clip-value",
              cl::desc("clip gradient elements to [-X, X] (0: off)"),
              cl::init(0.0), cl::cat(gradientCategory));
static cl::opt<double>
    gradScale("grad-scale", cl::desc("multiply the gradients by this, > 0"),
              cl::init(1.0), cl::cat(gradientCategory));
static cl::opt<double>
    gradNoise("grad-noise", cl::desc("std of Gaussian gradient noise (0: off)"),
              cl::init(0.0), cl::cat(gradientCategory));
static cl::opt<uint64_t>
    gradNoiseSeed("grad-noise-seed",
                  cl::desc("seed of the gradient noise (with --grad-noise)"),
                  cl::init(0), cl::cat(gradientCategory));
static cl::opt<std::string> nonFiniteGrads(
    "nonfinite-grads",
    cl::desc("when a gradient is NaN or infinite: apply the update anyway, "
             "or skip it (parameters and optimizer state unchanged, the step "
             "counted in grad_stats.skipped_updates)"),
    cl::value_desc("apply|skip"), cl::init("apply"), cl::cat(gradientCategory));
static cl::opt<std::string> lossScale(
    "loss-scale",
    cl::desc("loss scaling for f16: dynamic halves the scale on overflow and "
             "doubles it after --loss-scale-growth-interval good steps "
             "(implies --nonfinite-grads=skip)"),
    cl::value_desc("none|dynamic"), cl::init("none"),
    cl::cat(gradientCategory));
static cl::opt<double> lossScaleInit(
    "loss-scale-init",
    cl::desc("initial dynamic loss scale, a power of two in [2^-64, 2^64]"),
    cl::init(65536.0), cl::cat(gradientCategory));
static cl::opt<int64_t> lossScaleGrowthInterval(
    "loss-scale-growth-interval",
    cl::desc("applied updates in a row before the dynamic loss scale "
             "doubles, >= 1"),
    cl::init(2000), cl::cat(gradientCategory));
static cl::opt<bool> gradStats("grad-stats",
                               cl::desc("emit gradient statistics outputs"),
                               cl::cat(gradientCategory));

// Precision and memory.
static cl::opt<std::string> precision(
    "precision",
    cl::desc("storage of parameters and activations (compute stays f32; "
             "bf16/f16 keep f32 master weights)"),
    cl::value_desc("f32|bf16|f16"), cl::init("f32"),
    cl::cat(precisionCategory));
static cl::opt<std::string> layout(
    "layout",
    cl::desc("activation layout of convolutional graphs: as-written, or "
             "channels-last (NHWC inside whatever the source wrote, as the "
             "convolution kernels read it; a transpose only where the "
             "model's inputs, outputs or other ops need NCHW)"),
    cl::value_desc("as-written|channels-last"), cl::init("as-written"),
    cl::cat(precisionCategory));
static cl::opt<bool> tf32("tf32", cl::desc(codegen::codegenOptionHelp("tf32")),
                          cl::cat(precisionCategory));
static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("device bytes a training step may use, resident buffers plus "
             "its arena (e.g. 437MiB; 0: no budget); above it, cheap "
             "activations (pointwise ops, norms, outer products) are computed "
             "again in the backward instead of kept (--stats shows the "
             "choice)"),
    cl::value_desc("bytes"), cl::init("0"), cl::cat(precisionCategory));
static cl::opt<std::string> deviceMemory(
    "device-memory",
    cl::desc("memory of the GPU the artifact is for; kilnc warns when the "
             "resident buffers and the largest entry's arena need more "
             "(default: the largest part of --arch, 141GiB for sm_90)"),
    cl::value_desc("bytes"), cl::cat(precisionCategory));

// Kernels.
static cl::opt<bool> planned(
    "planned",
    cl::desc("the input is a planned module (kilnc --emit=mlir, kiln-opt "
             "--kiln-pipeline), whose kernel choices may have been edited: "
             "skip the pipeline, select the kernels the module does not "
             "choose (checking those it does) and generate them"),
    cl::cat(kernelCategory));
static cl::opt<std::string> arch("arch",
                                 cl::desc(codegen::codegenOptionHelp("arch")),
                                 cl::value_desc("sm_NN"), cl::init("sm_90"),
                                 cl::cat(kernelCategory));
static cl::opt<std::string> kernelCache(
    "kernel-cache",
    cl::desc("directory of compiled kernels kept between runs (default: "
             "$KILN_KERNEL_CACHE, else $XDG_CACHE_HOME/kiln/kernels, else "
             "~/.cache/kiln/kernels)"),
    cl::value_desc("dir"), cl::cat(kernelCategory));
static cl::opt<bool>
    noKernelCache("no-kernel-cache",
                  cl::desc("compile every kernel, keeping none"),
                  cl::cat(kernelCategory));
static cl::list<std::string> customKernelDirs(
    "I", cl::Prefix,
    cl::desc("directory searched for the CUDA files of kiln.custom ops, "
             "after the model's own (repeatable, in order)"),
    cl::value_desc("dir"), cl::cat(kernelCategory));
static cl::opt<bool>
    noTma("no-tma",
          cl::desc("copy GEMM, convolution and attention operands with the "
                   "threads rather than the tensor memory accelerator (sm_90; "
                   "for comparisons)"),
          cl::cat(kernelCategory));
/// A flag of an enumerated kiln-select-kernels option: its type and parser
/// are the pass option's, a bad value is a usage error.
template <typename Enum>
using ChoiceFlag =
    cl::opt<Enum, false, tools::UsageErrorParser<cl::parser<Enum>>>;

static ChoiceFlag<codegen::GemmSchedule> gemmSchedule(
    "gemm-schedule", cl::desc(codegen::codegenOptionHelp("gemm-schedule")),
    cl::init(codegen::GemmSchedule::Auto), cl::cat(kernelCategory));
static ChoiceFlag<codegen::GemmCluster>
    gemmCluster("gemm-cluster",
                cl::desc(codegen::codegenOptionHelp("gemm-cluster")),
                cl::init(codegen::GemmCluster::One), cl::cat(kernelCategory));
static cl::opt<bool>
    gemmTmaStore("gemm-tma-store",
                 cl::desc(codegen::codegenOptionHelp("gemm-tma-store")),
                 cl::cat(kernelCategory));
static cl::opt<bool> persistentAttention(
    "persistent-attention",
    cl::desc(codegen::codegenOptionHelp("persistent-attention")),
    cl::init(true), cl::cat(kernelCategory));
static ChoiceFlag<codegen::AttentionSchedule> attentionSchedule(
    "attention-schedule",
    cl::desc(codegen::codegenOptionHelp("attention-schedule")),
    cl::init(codegen::AttentionSchedule::Auto), cl::cat(kernelCategory));
static cl::opt<bool> fusedAttentionBackward(
    "fused-attention-backward",
    cl::desc(codegen::codegenOptionHelp("fused-attention-backward")),
    cl::cat(kernelCategory));
static cl::opt<bool> noMergeLaunches(
    "no-merge-launches",
    cl::desc("keep every fusion's launches apart (by default, launches that "
             "may run at once run as one kernel)"),
    cl::cat(kernelCategory));

// Data-parallel training.
static cl::opt<bool>
    dataParallel("data-parallel",
                 cl::desc(codegen::codegenOptionHelp("data-parallel")),
                 cl::cat(parallelCategory));
static cl::opt<std::string> bucketBytes(
    "bucket-bytes", cl::desc(codegen::codegenOptionHelp("bucket-bytes")),
    cl::value_desc("bytes"), cl::init("25MiB"), cl::cat(parallelCategory));
static cl::opt<std::string>
    firstBucketBytes("first-bucket-bytes",
                     cl::desc(codegen::codegenOptionHelp("first-bucket-bytes")),
                     cl::value_desc("bytes"), cl::init("1MiB"),
                     cl::cat(parallelCategory));

// Model: kilnc's function beside the ONNX importer's options (LoadModel.h).
static cl::opt<std::string> lossFunction(
    "function",
    cl::desc("the function to train (or, with --inference, to run); for "
             ".onnx, the name the imported graph gets"),
    cl::value_desc("name"), cl::init("loss"), cl::cat(modelOptionCategory()));

static const tools::ToolCommandLine &commandLine() {
  static const tools::ToolCommandLine tool{
      "kilnc",
      "kilnc [options] <model.mlir|model.onnx> -o model.kiln",
      "kilnc: the kiln ahead-of-time training compiler. Builds the training "
      "entries of a model (or, with --inference, only its forward), fuses, "
      "plans memory, generates CUDA kernels, compiles them to PTX and a "
      "cubin for --arch, and writes the artifact kiln-run and the runtime "
      "load.\n\nThe optimizer and its settings are fixed at compile time; the "
      "learning rate, its schedule, the steps and the data are kiln-run's.",
      {&outputCategory, &trainingCategory, &gradientCategory,
       &precisionCategory, &kernelCategory, &parallelCategory,
       &modelOptionCategory(), &mlirCategory},
      {{"lr", "the learning rate is a run-time flag of kiln-run and "
              "train_reference (--lr), not of the compiler"},
       {"learning-rate", "the learning rate is a run-time flag of kiln-run "
                         "and train_reference (--lr), not of the compiler"},
       {"steps", "the number of steps is a run-time flag of kiln-run"},
       {"seed", "the seed of the parameters is a run-time flag of kiln-run"},
       {"schedule", "the learning-rate schedule is a run-time flag of "
                    "kiln-run"},
       {"warmup", "the warm-up is a run-time flag of kiln-run"},
       {"dataset", "the training data is a run-time flag of kiln-run"},
       {"checkpoint", "checkpoints are written by kiln-run"},
       {"resume", "checkpoints are read by kiln-run"},
       {"params", "parameter values are read by kiln-run"},
       {"fn", "kilnc names the function with --function"}},
      ""};
  return tool;
}

static int usageError(const llvm::Twine &message) {
  return tools::usageError(commandLine(), message);
}

/// Whether the optimizer setting `option` was given.
static bool given(const cl::Option &option) {
  return option.getNumOccurrences() > 0;
}

/// The first option of `options` given on the command line, or null.
static const cl::Option *
firstGiven(std::initializer_list<const cl::Option *> options) {
  for (const cl::Option *option : options)
    if (given(*option))
      return option;
  return nullptr;
}

/// Whether `value` is one of `choices`.
static bool oneOf(llvm::StringRef value,
                  std::initializer_list<llvm::StringRef> choices) {
  return llvm::is_contained(choices, value);
}

static std::string spelt(const cl::Option &option) {
  return tools::spelling(option);
}

/// Why the optimizer's settings do not go together or are out of range;
/// empty when they are fine. The other check*Options below say it the same
/// way for the gradient, output and kernel flags.
static std::string checkOptimizerOptions() {
  if (!oneOf(train, {"adamw", "adam", "sgd"}))
    return "--train must be adamw, adam or sgd, got '" + train + "'";
  if (inference) {
    if (given(train))
      return "--inference compiles no training entries: drop --train";
    if (const cl::Option *option = firstGiven(
            {&momentum, &nesterov, &beta1, &beta2, &epsilon, &weightDecay,
             &clipNorm, &clipValue, &gradScale, &gradNoise, &gradNoiseSeed,
             &nonFiniteGrads, &lossScale, &lossScaleInit,
             &lossScaleGrowthInterval, &gradStats, &memoryBudget}))
      return spelt(*option) +
             " is a training setting; --inference compiles no training "
             "entries";
    if (dataParallel)
      return "--data-parallel needs training entries, not --inference";
  }
  if (train == "sgd") {
    if (const cl::Option *option = firstGiven({&beta1, &beta2, &epsilon}))
      return spelt(*option) + " is a setting of adam and adamw, not of sgd";
  } else if (const cl::Option *option = firstGiven({&momentum, &nesterov})) {
    return spelt(*option) + " is a setting of sgd, not of " + train;
  }
  for (const cl::opt<double> *real :
       {&momentum, &beta1, &beta2, &epsilon, &weightDecay, &clipNorm,
        &clipValue, &gradScale, &gradNoise, &lossScaleInit})
    if (!std::isfinite(real->getValue()))
      return spelt(*real) + " must be a finite number";
  for (const cl::opt<double> *rate : {&momentum, &beta1, &beta2})
    if (*rate < 0 || *rate >= 1)
      return spelt(*rate) + " must be in [0, 1), got " +
             llvm::formatv("{0}", rate->getValue()).str();
  if (nesterov && momentum <= 0)
    return "--nesterov needs --momentum > 0";
  if (epsilon <= 0)
    return "--epsilon must be > 0";
  if (given(weightDecay) && weightDecay < 0)
    return "--weight-decay must be >= 0";
  return "";
}

static std::string checkGradientOptions() {
  if (clipNorm < 0 || clipValue < 0 || gradNoise < 0)
    return "--clip-norm, --clip-value and --grad-noise must be >= 0";
  if (gradScale <= 0)
    return "--grad-scale must be > 0";
  if (given(gradNoiseSeed) && gradNoise == 0)
    return "--grad-noise-seed seeds the noise of --grad-noise, which is off";
  if (!oneOf(nonFiniteGrads, {"apply", "skip"}))
    return "--nonfinite-grads must be apply or skip, got '" + nonFiniteGrads +
           "'";
  if (!oneOf(lossScale, {"none", "dynamic"}))
    return "--loss-scale must be none or dynamic, got '" + lossScale + "'";
  if (lossScale == "dynamic" && given(nonFiniteGrads) &&
      nonFiniteGrads == "apply")
    return "--loss-scale=dynamic skips the updates of non-finite gradients; "
           "it cannot go with --nonfinite-grads=apply";
  if (lossScale != "dynamic") {
    if (const cl::Option *option =
            firstGiven({&lossScaleInit, &lossScaleGrowthInterval}))
      return spelt(*option) + " needs --loss-scale=dynamic";
  }
  int lossScaleExponent = 0;
  if (std::frexp(lossScaleInit.getValue(), &lossScaleExponent) != 0.5 ||
      lossScaleExponent - 1 < -64 || lossScaleExponent - 1 > 64)
    return "--loss-scale-init must be a power of two between 2^-64 and 2^64";
  if (lossScaleGrowthInterval < 1)
    return "--loss-scale-growth-interval must be >= 1";
  return "";
}

static std::string checkOutputOptions() {
  if (!oneOf(emit, {"mlir", "cuda", "ptx", "artifact", "header"}))
    return "--emit must be mlir, cuda, ptx, artifact or header, got '" + emit +
           "'";
  if (emitTemplates && emit != "cuda")
    return "--emit-templates needs --emit=cuda";
  if (!headerPath.empty() && emit != "artifact")
    return "--header writes the header beside the artifact; with --emit=" +
           emit + " there is none (--emit=header writes only a header)";
  if (given(headerClass) && headerPath.empty() && emit != "header")
    return "--header-class names the class of the typed header: give "
           "--header or --emit=header";
  return "";
}

static std::string checkKernelOptions() {
  if (!oneOf(precision, {"f32", "bf16", "f16"}))
    return "--precision must be f32, bf16 or f16, got '" + precision + "'";
  if (!oneOf(layout, {"as-written", "channels-last"}))
    return "--layout must be as-written or channels-last, got '" + layout +
           "'";
  llvm::StringRef archName = arch;
  unsigned archNumber;
  if (!archName.consume_front("sm_") ||
      archName.drop_back(archName.ends_with("a")).getAsInteger(10, archNumber))
    return "--arch must be an SM architecture such as sm_90 or sm_90a, got '" +
           arch + "'";
  if (given(kernelCache) && noKernelCache)
    return "--kernel-cache and --no-kernel-cache contradict each other";
  if ((given(bucketBytes) || given(firstBucketBytes)) && !dataParallel)
    return "--bucket-bytes and --first-bucket-bytes need --data-parallel";
  if (planned)
    if (const cl::Option *option =
            firstGiven({&train, &inference, &precision, &layout,
                        &memoryBudget}))
      return spelt(*option) +
             " sets the pipeline, which --planned skips: the module is "
             "already planned";
  return "";
}

/// Why the options do not go together or are out of range; empty when they
/// are fine. Checked before anything is read.
static std::string checkOptions() {
  for (std::string (*check)() : {checkOptimizerOptions, checkGradientOptions,
                                 checkOutputOptions, checkKernelOptions})
    if (std::string problem = check(); !problem.empty())
      return problem;
  return checkModelOptions(inputPath);
}

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

/// Warns when the artifact needs more device memory than `deviceBytes`
/// (`device` names it), which kiln-run would refuse before allocating.
static void warnPastDeviceMemory(const codegen::CompiledModule &module,
                                 uint64_t deviceBytes, llvm::StringRef device) {
  uint64_t resident = 0, arena = 0;
  const codegen::ResidentInfo *largest = nullptr;
  for (const codegen::ResidentInfo &info : module.residents) {
    uint64_t bytes = tensorBytes(info.type);
    resident += bytes;
    if (!largest || bytes > tensorBytes(largest->type))
      largest = &info;
  }
  for (const codegen::CompiledEntry &entry : module.entries)
    arena = std::max<uint64_t>(arena, entry.arenaBytes);
  if (resident + arena <= deviceBytes)
    return;
  llvm::errs() << "kilnc: warning: the artifact needs " << resident + arena
               << " bytes of device memory, more than the " << deviceBytes
               << " bytes of " << device << ": resident buffers " << resident;
  if (largest)
    llvm::errs() << " (the largest '" << largest->name << "', "
                 << tensorBytes(largest->type) << ")";
  llvm::errs() << ", the largest entry's arena " << arena
               << "; kiln-run will refuse it there\n";
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
        llvm::errs() << " (with " << ops - 1 << " op(s) it is computed from)";
      llvm::errs() << ": arena " << integer("arena_before") << " -> "
                   << integer("arena_after")
                   << " bytes, one more pointwise or norm pass\n";
    }
  }
}

/// MLIR's printing, context, pass-manager and timing flags, as mlir-opt
/// has them, and the passes: --mlir-print-ir-after=PASS and the like accept
/// the passes registered when they are. Then the command line.
static void parseCommandLine(int argc, char **argv) {
  registerKilnPasses();
  registerCodegenPasses();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  for (auto &option : cl::getRegisteredOptions())
    if (option.getKey().starts_with("mlir-"))
      option.getValue()->addCategory(mlirCategory);
  if (cl::Option *stats = cl::getRegisteredOptions().lookup("stats")) {
    stats->setDescription(kStatsDescription);
    stats->setHiddenFlag(cl::NotHidden);
    stats->addCategory(outputCategory);
  }
  tools::parseToolCommandLine(argc, argv, commandLine());
}

/// The flags that take a number of bytes, parsed.
struct ByteFlags {
  uint64_t memoryBudget = 0, bucket = 0, firstBucket = 0;
  /// Of the GPU the artifact is for (--device-memory, or the largest part
  /// of --arch).
  uint64_t device = 0;
};

/// Checks that the options go together and parses the byte counts; the
/// exit status of a usage error (2), or 0.
static int validateOptions(ByteFlags &bytes) {
  if (std::string problem = checkOptions(); !problem.empty())
    return usageError(problem);
  std::optional<uint64_t> budget =
      tools::byteCountOption(commandLine(), memoryBudget);
  std::optional<uint64_t> bucket =
      tools::byteCountOption(commandLine(), bucketBytes);
  std::optional<uint64_t> firstBucket =
      tools::byteCountOption(commandLine(), firstBucketBytes);
  std::optional<uint64_t> device =
      given(deviceMemory)
          ? tools::byteCountOption(commandLine(), deviceMemory)
          : std::optional<uint64_t>(codegen::largestDeviceMemory(arch).bytes);
  if (!budget || !bucket || !firstBucket || !device)
    return 2;
  if (*bucket == 0 || *firstBucket == 0)
    return usageError(
        "--bucket-bytes and --first-bucket-bytes must be positive");
  // The artifact is binary: not for a terminal.
  if (emit == "artifact" && outputPath == "-" &&
      llvm::sys::Process::StandardOutIsDisplayed())
    return usageError("the artifact is binary and standard output is a "
                      "terminal: give -o model.kiln (or redirect the output)");
  bytes = {*budget, *bucket, *firstBucket, *device};
  return 0;
}

/// The compiler's stages, from kilnc's flags.
static void setPipelineOptions(PipelineOptions &options,
                               const ByteFlags &bytes) {
  options.function = lossFunction.getValue();
  options.train = inference ? std::string("none") : train.getValue();
  options.momentum = momentum.getValue();
  options.nesterov = nesterov.getValue();
  options.beta1 = beta1.getValue();
  options.beta2 = beta2.getValue();
  options.epsilon = epsilon.getValue();
  // Negative: the optimizer's default (TrainStep.h).
  options.weightDecay = given(weightDecay) ? weightDecay.getValue() : -1.0;
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
  options.layout = layout.getValue();
  // Launch merging runs a kernel beside its predecessor only when it does
  // not write over what the predecessor reads: keep freed bytes one kernel.
  options.reuseDelay = noMergeLaunches ? 0u : 1u;
  options.memoryBudget = bytes.memoryBudget;
}

/// Kernel selection's options, from kilnc's flags.
static KilnSelectKernelsOptions selectionOptions() {
  KilnSelectKernelsOptions options;
  options.arch = arch.getValue();
  options.tf32 = tf32.getValue();
  options.tma = !noTma;
  options.gemmSchedule = gemmSchedule.getValue();
  options.gemmCluster = gemmCluster.getValue();
  options.persistentAttention = persistentAttention.getValue();
  options.fusedAttentionBackward = fusedAttentionBackward.getValue();
  options.attentionSchedule = attentionSchedule.getValue();
  options.gemmTmaStore = gemmTmaStore.getValue();
  return options;
}

/// Emission's options, from kilnc's flags.
static KilnEmitCudaOptions emissionOptions(const ByteFlags &bytes) {
  KilnEmitCudaOptions options;
  options.mergeLaunches = !noMergeLaunches;
  if (!noKernelCache)
    options.kernelCache = given(kernelCache)
                              ? std::string(kernelCache)
                              : codegen::KernelCache::defaultDirectory();
  options.compile = emit != "cuda";
  options.customKernelDirs = customKernelDirs;
  options.dataParallel = dataParallel.getValue();
  options.bucketBytes = bytes.bucket;
  options.firstBucketBytes = bytes.firstBucket;
  return options;
}

/// A context with the dialects of a model. Diagnostics point into the
/// user's file; the generic form of the op they are about (compiler-internal
/// IR) only with --mlir-print-op-on-diagnostic.
static void configureContext(MLIRContext &context) {
  DialectRegistry registry;
  registry.insert<KilnDialect, cuda::KilnCudaDialect, func::FuncDialect>();
  registerGradientRules(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  if (!given(*cl::getRegisteredOptions()["mlir-print-op-on-diagnostic"]))
    context.printOpOnDiagnostic(false);
}

/// Reads the model (a .onnx one through the ONNX importer); null after an
/// error, with `status` set.
static OwningOpRef<ModuleOp>
parseInput(MLIRContext &context, llvm::SourceMgr &sourceMgr, int &status) {
  std::string openError;
  OwningOpRef<ModuleOp> module =
      loadModel(inputPath, sourceMgr, &context,
                onnxImportOptionsFromCommandLine(lossFunction), openError);
  if (!module) {
    status = openError.empty() ? 1 : fail(openError);
    return nullptr;
  }
  // With --precision or --inference a missing function is kilnc's error
  // (for training, kiln-make-train-step reports it).
  if ((precision != "f32" || inference) &&
      !module->lookupSymbol<func::FuncOp>(lossFunction)) {
    status = fail("no function named '" + lossFunction + "'");
    return nullptr;
  }
  return module;
}

/// Runs the pipeline on `module`, code generation included unless
/// --emit=mlir; the generated module goes into `compiled`.
static LogicalResult runPipeline(ModuleOp module, const ByteFlags &bytes,
                                 TimingScope &timing,
                                 codegen::CompiledModule &compiled) {
  MLIRContext &context = *module.getContext();
  // A local reproducer needs a single-threaded pass manager; the pipeline
  // runs module passes only, so that costs nothing but parallel verification.
  if (given(*cl::getRegisteredOptions().lookup(
          "mlir-pass-pipeline-local-reproducer")))
    context.disableMultithreading();
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timing);
  if (!planned) {
    PipelineOptions options;
    setPipelineOptions(options, bytes);
    buildKilnPipeline(pm, options);
  }
  if (emit != "mlir") {
    pm.addPass(codegen::createKilnSelectKernelsPass(selectionOptions()));
    pm.addPass(
        codegen::createKilnEmitCudaPass(emissionOptions(bytes), &compiled));
  }
  return pm.run(module);
}

/// Prints the generated kernels' CUDA sources (with --emit-templates, and
/// the templates they include) or their PTX.
static void emitKernels(const codegen::CompiledModule &compiled,
                        llvm::raw_ostream &os) {
  for (const codegen::CompiledKernelImage &kernel : compiled.kernels)
    os << "// ===== " << kernel.name << " =====\n"
       << (emit == "cuda" ? kernel.source : kernel.binary.ptx) << "\n";
  if (emit != "cuda" || !emitTemplates)
    return;
  std::string sources;
  for (const codegen::CompiledKernelImage &kernel : compiled.kernels)
    sources += kernel.source;
  for (llvm::StringRef name : codegen::includedTemplates(sources))
    os << "// ===== template " << name << " =====\n"
       << codegen::kernelTemplate(name) << "\n";
}

/// The typed header of `file`, from the artifact as the runtime reads it;
/// empty after an error, with `status` set.
static std::string typedHeader(const ::kiln::artifact::ArtifactFile &file,
                               int &status) {
  absl::StatusOr<::kiln::artifact::Artifact> loaded =
      ::kiln::artifact::LoadArtifact(file.Join());
  if (!loaded.ok()) {
    status =
        fail("invalid artifact: " + std::string(loaded.status().message()));
    return "";
  }
  codegen::HeaderOptions options;
  llvm::StringRef headerFile = emit == "header" ? outputPath : headerPath;
  options.className =
      headerClass.empty()
          ? codegen::cppCamelCase(llvm::sys::path::stem(inputPath))
          : headerClass.getValue();
  options.headerName = headerFile == "-"
                           ? options.className + ".h"
                           : llvm::sys::path::filename(headerFile).str();
  options.source = llvm::sys::path::filename(inputPath).str();
  options.pinChecksum = emit == "artifact";
  std::string header, error;
  if (!codegen::emitHeader(*loaded, options, header, error))
    status = fail("typed header: " + error);
  return header;
}

/// Writes the artifact to `output` and, with --header or --emit=header, its
/// typed header; the exit status.
static int emitArtifact(const codegen::CompiledModule &compiled,
                        llvm::ToolOutputFile &output) {
  std::string error;
  FailureOr<::kiln::artifact::ArtifactFile> file =
      codegen::writeArtifact(compiled, error);
  if (failed(file))
    return fail("invalid artifact: " + error);
  // Piece by piece: the weights go from the module's attributes to the file.
  auto writeFile = [&](llvm::raw_ostream &os) {
    os << file->head;
    for (absl::string_view piece : file->data)
      os.write(piece.data(), piece.size());
  };
  if (emit == "artifact" && headerPath.empty()) {
    writeFile(output.os());
    output.keep();
    return 0;
  }
  int status = 0;
  std::string header = typedHeader(*file, status);
  if (status)
    return status;
  if (emit == "header") {
    output.os() << header;
    output.keep();
    return 0;
  }
  auto headerOutput = openOutputFile(headerPath, &error);
  if (!headerOutput)
    return fail(error);
  writeFile(output.os());
  headerOutput->os() << header;
  output.keep();
  headerOutput->keep();
  return 0;
}

/// What --stats and the device memory check say about the generated module.
static void report(ModuleOp module, const codegen::CompiledModule &compiled,
                   const ByteFlags &bytes) {
  if (bytes.device)
    warnPastDeviceMemory(
        compiled, bytes.device,
        given(deviceMemory)
            ? std::string("--device-memory")
            : "the largest " + arch.getValue() + " GPU (" +
                  codegen::largestDeviceMemory(arch).part.str() + ")");
  if (!llvm::AreStatisticsEnabled())
    return;
  printStats(compiled);
  printRecomputed(module);
  codegen::printBucketPlan(compiled, llvm::errs());
}

/// Writes what --emit asks for; the exit status.
static int emitOutput(ModuleOp module, const codegen::CompiledModule &compiled,
                      const ByteFlags &bytes) {
  std::string error;
  auto output = openOutputFile(outputPath, &error);
  if (!output)
    return fail(error);
  if (emit == "mlir") {
    module->print(output->os());
    output->keep();
    return 0;
  }
  report(module, compiled, bytes);
  if (emit == "cuda" || emit == "ptx") {
    emitKernels(compiled, output->os());
    output->keep();
    return 0;
  }
  return emitArtifact(compiled, *output);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  parseCommandLine(argc, argv);
  ByteFlags bytes;
  if (int status = validateOptions(bytes))
    return status;

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  MLIRContext context;
  configureContext(context);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // Models imported from ONNX: diagnostics name the node, while compiling too.
  auto onnxDiagnostics = makeOnnxDiagnosticHandler(&context);

  TimingScope parserTiming = timing.nest("Parser");
  int status = 0;
  OwningOpRef<ModuleOp> module = parseInput(context, sourceMgr, status);
  if (!module)
    return status;
  parserTiming.stop();

  codegen::CompiledModule compiled;
  if (failed(runPipeline(*module, bytes, timing, compiled)))
    return 1;
  TimingScope outputTiming = timing.nest("Output");
  return emitOutput(*module, compiled, bytes);
}
