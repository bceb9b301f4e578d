//===- train_reference.cpp - train a sample on the CPU reference ----------===//
//
// Builds the training step of a sample model (AdamW, cosine schedule) and
// trains it with the reference interpreter, printing a progress line, then
// evaluates on held-out data. This is what the quick start runs where there
// is no GPU, and the end-to-end tests assert its final error.
//
//   train_reference --model samples/sine_block.mlir --task sine --steps 1000
//                   [--seed 1] [--lr 3e-3|1e-2] [--beta1 0.9] [--beta2 0.99]
//                   [--epsilon 1e-8] [--weight-decay 0] [--clip-norm 1]
//                   [--warmup steps/20] [--schedule-steps N]
//                   [--final-lr-fraction 0]
//                   [--precision f32|f64|bf16|f16] [--eval-every N]
//                   [--eval-samples 64] [--expect-mse-below 0.04]
//                   [--checkpoint out.safetensors] [--checkpoint-every N]
//                   [--resume in.safetensors]
//   train_reference --model samples/byte_lm.mlir --dataset train.kilndata
//                   [--heldout heldout.kilndata] [--eval-every N]
//                   [--log-every 1] [...]
//
// The defaults are the settings the end-to-end tests train with (tuned on the
// sine-denoising block, see tests/e2e/BUILD): AdamW with beta2 0.99 and no
// weight decay, gradients clipped to global norm 1, linear warm-up over the
// first 5% of the steps, then cosine decay to 0. The seed draws the
// parameters (Philox, from their initialisers) and, through two
// std::mt19937_64 streams derived from it, the training batches and the
// held-out samples (64 by default; a larger --eval-samples keeps those 64 as
// its first ones).
//
// With --dataset the batches are records of a KILNDATA file instead (the
// token samples' data from make_dataset --task order|text): every input of
// the model is the field of its name, batch k holds records k*B ... k*B+B-1,
// and whole batches are taken in file order, starting again at the end, so a
// file of one batch trains on that batch at every step (parameters and model
// state such as batch norm running statistics are the trainer's, not
// fields; samples/data/reference_batch.h: i64 fields feed i32 inputs, and a
// label or index out of its op's range is an error naming the record).
// --heldout evaluates the forward entry (batch norm on its running
// statistics) on every whole batch of a second file at the end, and every
// --eval-every steps: the mean of each scalar result (the loss in nats and
// bits, a classifier's accuracy).
//
// --checkpoint writes the trainer's parameters, model state, optimizer state
// and step at the end (and every --checkpoint-every steps) in kiln-run's
// checkpoint format (runtime/io/checkpoint.h, through
// compiler/training/ReferenceCheckpoint.h), which kiln-run --resume and
// --params read; --resume continues from one, with the batches and the
// learning-rate schedule where it left them, bit for bit as the run that
// wrote it would have (--steps counts the checkpoint's steps; a run stopped
// early takes --schedule-steps of the whole). --help lists every option with
// its default; a bad command line exits with status 2.
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/training/ReferenceCheckpoint.h"
#include "compiler/training/ReferenceTrainer.h"
#include "compiler/training/TrainStep.h"
#include "compiler/transforms/MixedPrecision.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "kiln/dataset.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "samples/data/reference_batch.h"
#include "samples/data/sine_task.h"
#include "tools/common/ToolOptions.h"

using namespace mlir;
using namespace mlir::kiln;
namespace cl = llvm::cl;

static cl::OptionCategory dataCategory("Model and data");
static cl::OptionCategory scheduleCategory("Steps and learning rate");
static cl::OptionCategory optimizerCategory("Optimizer (AdamW)");
static cl::OptionCategory evalCategory("Evaluation and progress");
static cl::OptionCategory checkpointCategory(
    "Checkpoints (kiln-run's format: kiln-run --resume and --params read "
    "them)");

static cl::opt<std::string> modelPath("model", cl::desc("the model"),
                                      cl::value_desc("model.mlir"),
                                      cl::Required, cl::cat(dataCategory));
static cl::opt<std::string> task(
    "task", cl::desc("the task whose batches are drawn (without --dataset)"),
    cl::value_desc("sine|regression"), cl::init("sine"), cl::cat(dataCategory));
static cl::opt<std::string> datasetPath(
    "dataset",
    cl::desc("train on the records of this KILNDATA file (fields named as "
             "the model's inputs) instead of --task"),
    cl::value_desc("path"), cl::init(""), cl::cat(dataCategory));
static cl::opt<std::string> heldoutPath(
    "heldout",
    cl::desc("with --dataset: evaluate the loss on this KILNDATA file"),
    cl::value_desc("path"), cl::init(""), cl::cat(dataCategory));
static cl::opt<uint64_t> seed(
    "seed",
    cl::desc("draws the parameters and the task's batches and held-out "
             "samples"),
    cl::init(1), cl::cat(dataCategory));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("f32 or f64 arithmetic, or bf16/f16 storage with f32 arithmetic "
             "(what kilnc --precision=bf16|f16 compiles for the GPU)"),
    cl::value_desc("f32|f64|bf16|f16"), cl::init("f32"), cl::cat(dataCategory));

static cl::opt<int> steps("steps",
                          cl::desc("train until step N, counting the steps "
                                   "of a --resume checkpoint; >= 1"),
                          cl::init(1000), cl::cat(scheduleCategory));
static cl::opt<double> peakLrFlag(
    "lr",
    cl::desc("peak learning rate, > 0 (default: 3e-3 for sine, 1e-2 for "
             "regression, 1e-3 with --dataset)"),
    cl::cat(scheduleCategory));
static cl::opt<int> warmup("warmup",
                           cl::desc("linear warm-up steps, >= 0 (default: "
                                    "the schedule's steps / 20)"),
                           cl::cat(scheduleCategory));
static cl::opt<int> scheduleSteps(
    "schedule-steps",
    cl::desc("the length of the cosine schedule, >= --steps (default: "
             "--steps), so that a run stopped early and resumed follows the "
             "schedule of the whole"),
    cl::cat(scheduleCategory));
static cl::opt<double> finalLrFraction(
    "final-lr-fraction",
    cl::desc("the cosine schedule ends at this fraction of the peak rate, "
             "in [0, 1]"),
    cl::init(0.0), cl::cat(scheduleCategory));

static cl::opt<double> beta1("beta1", cl::desc("AdamW beta1, in [0, 1)"),
                             cl::init(0.9), cl::cat(optimizerCategory));
static cl::opt<double> beta2("beta2", cl::desc("AdamW beta2, in [0, 1)"),
                             cl::init(0.99), cl::cat(optimizerCategory));
static cl::opt<double> epsilon("epsilon", cl::desc("AdamW epsilon, > 0"),
                               cl::init(1e-8), cl::cat(optimizerCategory));
static cl::opt<double> weightDecay("weight-decay",
                                   cl::desc("AdamW weight decay, >= 0"),
                                   cl::init(0.0), cl::cat(optimizerCategory));
static cl::opt<double> clipNorm(
    "clip-norm", cl::desc("clip gradients to this global norm, >= 0 (0: off)"),
    cl::init(1.0), cl::cat(optimizerCategory));

static cl::opt<int> evalSamples(
    "eval-samples",
    cl::desc("held-out samples (sequences for the sine task) to evaluate on, "
             ">= 1 (without --dataset)"),
    cl::init(64), cl::cat(evalCategory));
static cl::opt<int> evalEvery(
    "eval-every",
    cl::desc("print the held-out MSE (with --dataset: the --heldout metrics) "
             "every N steps (0: only at the end)"),
    cl::init(0), cl::cat(evalCategory));
static cl::opt<int> logEvery(
    "log-every",
    cl::desc("with --dataset: print the loss of every N-th step on a line of "
             "its own (0: a progress line every 50 steps)"),
    cl::init(0), cl::cat(evalCategory));
static cl::opt<double> expectBelow(
    "expect-mse-below",
    cl::desc("exit with status 1 unless the held-out MSE ends below this "
             "(without --dataset; default: no check)"),
    cl::cat(evalCategory));

static cl::opt<std::string> checkpointPath(
    "checkpoint",
    cl::desc("write the parameters, model state, optimizer state and step "
             "to this file at the end (and every --checkpoint-every steps)"),
    cl::value_desc("path"), cl::init(""), cl::cat(checkpointCategory));
static cl::opt<int> checkpointEvery(
    "checkpoint-every",
    cl::desc("also write --checkpoint every N steps (0: only at the end)"),
    cl::init(0), cl::cat(checkpointCategory));
static cl::opt<std::string> resumePath(
    "resume",
    cl::desc("start from this checkpoint, at its step (the data and the "
             "schedule continue where it left them)"),
    cl::value_desc("path"), cl::init(""), cl::cat(checkpointCategory));

static const ::kiln::tools::ToolCommandLine &commandLine() {
  static const ::kiln::tools::ToolCommandLine tool{
      "train_reference",
      "train_reference --model model.mlir [--dataset train.kilndata] "
      "[options]",
      "train_reference: trains a model on the CPU reference interpreter "
      "(AdamW, linear warm-up then cosine decay), printing its progress, then "
      "evaluates it on held-out data. What the quick start runs where there "
      "is no GPU; the end-to-end tests assert its final error.",
      {&dataCategory, &scheduleCategory, &optimizerCategory, &evalCategory,
       &checkpointCategory},
      {{"train", "train_reference always trains with AdamW"},
       {"params", "start from a checkpoint with --resume"},
       {"inputs",
        "train_reference draws its batches (--task) or reads a "
        "KILNDATA file (--dataset)"},
       {"fn", "train_reference trains the model's function 'loss'"},
       {"function", "train_reference trains the model's function 'loss'"}},
      ""};
  return tool;
}

/// Why the options do not go together or are out of range; empty when they
/// are fine.
static std::string checkOptions() {
  auto given = [](const cl::Option &option) {
    return option.getNumOccurrences() > 0;
  };
  bool dataset = !datasetPath.empty();
  if (dataset && given(task))
    return "--task draws batches; --dataset reads them: give one";
  if (!dataset && task != "sine" && task != "regression")
    return "--task must be sine or regression, got '" + task + "'";
  if (!dataset) {
    for (const cl::Option *option :
         {static_cast<const cl::Option *>(&heldoutPath),
          static_cast<const cl::Option *>(&logEvery)})
      if (given(*option))
        return ::kiln::tools::spelling(*option) + " needs --dataset";
  } else {
    for (const cl::Option *option :
         {static_cast<const cl::Option *>(&evalSamples),
          static_cast<const cl::Option *>(&expectBelow)})
      if (given(*option))
        return ::kiln::tools::spelling(*option) +
               " is for --task, not --dataset (--heldout evaluates a dataset)";
  }
  if (precision != "f32" && precision != "f64" && precision != "bf16" &&
      precision != "f16")
    return "--precision must be f32, f64, bf16 or f16, got '" + precision + "'";
  if (steps < 1) return "--steps must be >= 1";
  if (given(scheduleSteps) && scheduleSteps < steps)
    return "--schedule-steps must be >= --steps";
  if (given(warmup) && warmup < 0) return "--warmup must be >= 0";
  for (const cl::opt<double> *real :
       {&peakLrFlag, &finalLrFraction, &beta1, &beta2, &epsilon, &weightDecay,
        &clipNorm, &expectBelow})
    if (!std::isfinite(real->getValue()))
      return ::kiln::tools::spelling(*real) + " must be a finite number";
  if (given(peakLrFlag) && peakLrFlag <= 0) return "--lr must be > 0";
  if (finalLrFraction < 0 || finalLrFraction > 1)
    return "--final-lr-fraction must be in [0, 1]";
  for (const cl::opt<double> *beta : {&beta1, &beta2})
    if (*beta < 0 || *beta >= 1)
      return ::kiln::tools::spelling(*beta) + " must be in [0, 1)";
  if (epsilon <= 0) return "--epsilon must be > 0";
  if (weightDecay < 0 || clipNorm < 0)
    return "--weight-decay and --clip-norm must be >= 0";
  if (evalSamples < 1) return "--eval-samples must be >= 1";
  if (evalEvery < 0 || logEvery < 0 || checkpointEvery < 0)
    return "--eval-every, --log-every and --checkpoint-every must be >= 0";
  if (given(expectBelow) && expectBelow <= 0)
    return "--expect-mse-below must be > 0";
  if (checkpointEvery > 0 && checkpointPath.empty())
    return "--checkpoint-every needs --checkpoint";
  if (precision == "f64" && (!checkpointPath.empty() || !resumePath.empty()))
    return "checkpoints hold the model's storage types, which --precision=f64 "
           "does not round to: train in f32, bf16 or f16 to checkpoint";
  return "";
}

namespace {

/// One batch of the task as named tensors, and its batch size.
NamedTensors makeBatch(std::mt19937_64 &rng, llvm::ArrayRef<int64_t> xShape,
                       llvm::ArrayRef<int64_t> yShape) {
  NamedTensors batch;
  ref::Tensor x(xShape, ref::ElementKind::F32),
      y(yShape, ref::ElementKind::F32);
  if (task == "sine") {
    ::kiln::samples::SineBatch data =
        ::kiln::samples::MakeSineBatch(rng, xShape[0], xShape[1]);
    x.data.assign(data.noisy.begin(), data.noisy.end());
    y.data.assign(data.clean.begin(), data.clean.end());
  } else {
    ::kiln::samples::RegressionBatch data =
        ::kiln::samples::MakeRegressionBatch(rng, xShape[0]);
    x.data.assign(data.x.begin(), data.x.end());
    y.data.assign(data.y.begin(), data.y.end());
  }
  batch["x"] = std::move(x);
  batch["y"] = std::move(y);
  return batch;
}

llvm::SmallVector<int64_t> shapeOf(func::FuncOp function,
                                   llvm::StringRef name) {
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    if (auto n = function.getArgAttrOfType<StringAttr>(
            i, KilnDialect::kNameAttrName))
      if (n.getValue() == name)
        return llvm::SmallVector<int64_t>(
            cast<RankedTensorType>(function.getArgumentTypes()[i]).getShape());
  return {};
}

using ::kiln::samples::HeldByTrainer;

/// Batch `index` of `data` as the inputs of `forward`
/// (samples/data/reference_batch.h); errors are printed.
FailureOr<NamedTensors> datasetBatch(::kiln::io::MappedDataset &data,
                                     func::FuncOp forward, uint64_t index) {
  llvm::Expected<NamedTensors> batch =
      ::kiln::samples::ReadReferenceBatch(data, forward, index);
  if (!batch) {
    llvm::errs() << "error: " << llvm::toString(batch.takeError()) << "\n";
    return failure();
  }
  return std::move(*batch);
}

/// The number of whole batches of `forward`'s batch size in `data`.
uint64_t wholeBatches(::kiln::io::MappedDataset &data, func::FuncOp forward) {
  uint64_t size = ::kiln::samples::BatchRecords(forward);
  return size ? data.record_count() / size : 0;
}

/// The means of the forward entry's scalar results over whole batches.
struct HeldOut {
  uint64_t batches = 0;
  std::vector<std::string> names;  // in result order, "loss" first
  llvm::StringMap<double> means;
};

/// Runs `forward` (batch norm on its running statistics, as the GPU's forward
/// entry) with the trainer's parameters and model state on every whole batch
/// of `data` and averages each scalar result (the loss, a classifier's
/// accuracy).
FailureOr<HeldOut> evaluateHeldOut(ReferenceTrainer &trainer,
                                   ::kiln::io::MappedDataset &data,
                                   func::FuncOp forward) {
  HeldOut out;
  out.batches = wholeBatches(data, forward);
  ref::Interpreter interpreter(precision == "f64" ? ref::Precision::F64
                                                  : ref::Precision::F32);
  for (uint64_t b = 0; b < out.batches; ++b) {
    FailureOr<NamedTensors> batch = datasetBatch(data, forward, b);
    if (failed(batch)) return failure();
    std::vector<ref::Tensor> arguments;
    for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
      auto name =
          forward.getArgAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
      const NamedTensors &source =
          HeldByTrainer(forward, i) ? trainer.state() : *batch;
      auto it = name ? source.find(name.getValue()) : source.end();
      if (it == source.end()) {
        llvm::errs() << "error: no value for argument " << i << " of forward\n";
        return failure();
      }
      arguments.push_back(it->second);
    }
    FailureOr<std::vector<ref::Tensor>> results =
        interpreter.run(forward, arguments);
    if (failed(results)) {
      llvm::errs() << "note: on "
                   << ::kiln::samples::DescribeBatch(data, forward, b) << "\n";
      return failure();
    }
    for (unsigned j = 0, e = forward.getNumResults(); j < e; ++j) {
      if ((*results)[j].size() != 1) continue;
      auto name = forward.getResultAttrOfType<StringAttr>(
          j, KilnDialect::kNameAttrName);
      std::string key = name ? name.getValue().str() : "result" + std::to_string(j);
      if (b == 0) out.names.push_back(key);
      out.means[key] += (*results)[j].data[0] / double(out.batches);
    }
  }
  return out;
}

/// "held-out loss over N batches: L nats = B bits, accuracy A".
void printHeldOut(const HeldOut &result) {
  double loss = result.means.lookup("loss");
  llvm::outs() << llvm::format(
      "held-out loss over %llu batches: %.5f nats = %.5f bits",
      static_cast<unsigned long long>(result.batches), loss,
      loss / std::log(2.0));
  for (const std::string &name : result.names)
    if (name != "loss")
      llvm::outs() << llvm::format(", %s %.5f", name.c_str(),
                                   result.means.lookup(name));
  llvm::outs() << "\n";
}

/// The learning rate of step `step` (from 0) of the cosine schedule.
double learningRate(int step, double peakLr) {
  const int length = scheduleSteps.getNumOccurrences() ? scheduleSteps : steps;
  return ::kiln::samples::CosineLearningRate(
      step, length, peakLr, peakLr * finalLrFraction,
      warmup.getNumOccurrences() ? int(warmup) : length / 20);
}

/// Restores --resume into `trainer`: the step to continue from (0 without
/// one), or nothing after an error, printed.
std::optional<int> resume(ReferenceTrainer &trainer) {
  if (resumePath.empty()) return 0;
  if (llvm::Error error = restoreCheckpoint(trainer, resumePath)) {
    llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
    return std::nullopt;
  }
  if (trainer.stepCount() > steps) {
    llvm::errs() << "error: --steps " << steps
                 << " is below the checkpoint's step " << trainer.stepCount()
                 << "\n";
    return std::nullopt;
  }
  llvm::outs() << "resumed from " << resumePath << " at step "
               << trainer.stepCount() << "\n";
  return int(trainer.stepCount());
}

/// Writes --checkpoint; false after an error, printed.
bool writeCheckpoint(const ReferenceTrainer &trainer) {
  if (llvm::Error error = saveCheckpoint(trainer, checkpointPath)) {
    llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
    return false;
  }
  return true;
}

/// "wrote checkpoint PATH (step N)".
void reportCheckpoint(const ReferenceTrainer &trainer) {
  llvm::outs() << "wrote checkpoint " << checkpointPath << " (step "
               << trainer.stepCount() << ")\n";
}

/// After `done` steps: writes --checkpoint if --checkpoint-every asks for it
/// now (the last step's is written after the loop) and says so after
/// `separator`. False after an error.
bool checkpointIfDue(const ReferenceTrainer &trainer, int done,
                     llvm::StringRef separator = "") {
  if (checkpointEvery <= 0 || done % checkpointEvery != 0 || done == steps)
    return true;
  if (!writeCheckpoint(trainer)) return false;
  llvm::outs() << separator;
  reportCheckpoint(trainer);
  return true;
}

/// The last checkpoint, after training: nothing to do without --checkpoint.
bool finalCheckpoint(const ReferenceTrainer &trainer) {
  return checkpointPath.empty() || writeCheckpoint(trainer);
}

/// Trains on the records of --dataset; see the file comment.
int trainOnDataset(ReferenceTrainer &trainer, func::FuncOp forward,
                   double peakLr) {
  auto open = [](const std::string &path)
      -> std::unique_ptr<::kiln::io::MappedDataset> {
    auto data = ::kiln::io::MappedDataset::Open(path);
    if (!data.ok()) {
      llvm::errs() << "error: " << std::string(data.status().message()) << "\n";
      return nullptr;
    }
    return std::move(*data);
  };
  std::unique_ptr<::kiln::io::MappedDataset> data = open(datasetPath);
  if (!data) return 1;
  const uint64_t batches = wholeBatches(*data, forward);
  if (batches == 0) {
    llvm::errs() << "error: " << datasetPath << " holds less than one batch\n";
    return 1;
  }
  std::unique_ptr<::kiln::io::MappedDataset> heldout;
  if (!heldoutPath.empty() && !(heldout = open(heldoutPath))) return 1;
  llvm::outs() << "training " << modelPath << " on the CPU reference, " << steps
               << " steps on " << datasetPath << " (" << batches
               << " batches, in file order), AdamW, cosine schedule\n";
  const std::optional<int> first = resume(trainer);
  if (!first) return 1;
  auto start = std::chrono::steady_clock::now();
  for (int step = *first; step < steps; ++step) {
    double lr = learningRate(step, peakLr);
    FailureOr<NamedTensors> batch =
        datasetBatch(*data, forward, step % batches);
    if (failed(batch)) return 1;
    FailureOr<double> loss = trainer.step(*batch, lr);
    if (failed(loss)) {
      llvm::errs() << "note: on "
                   << ::kiln::samples::DescribeBatch(*data, forward,
                                                     step % batches)
                   << "\n";
      return 1;
    }
    if (!std::isfinite(*loss)) {
      llvm::errs() << "error: the loss is " << *loss << " at step " << step + 1
                   << "\n";
      return 1;
    }
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (logEvery > 0 ? (step + 1) % logEvery == 0 || step + 1 == steps
                     : (step + 1) % 50 == 0 || step + 1 == steps)
      llvm::outs() << llvm::format(
          "step %d/%d  loss %.6g  lr %.3g  %.2f s/step\n", step + 1, int(steps),
          *loss, lr, elapsed / (step + 1 - *first));
    if (!checkpointIfDue(trainer, step + 1)) return 1;
    if (heldout && evalEvery > 0 && (step + 1) % evalEvery == 0 &&
        step + 1 != steps) {
      FailureOr<HeldOut> result = evaluateHeldOut(trainer, *heldout, forward);
      if (failed(result)) return 1;
      llvm::outs() << "step " << step + 1 << ": ";
      printHeldOut(*result);
    }
  }
  if (!finalCheckpoint(trainer)) return 1;
  if (heldout) {
    FailureOr<HeldOut> result = evaluateHeldOut(trainer, *heldout, forward);
    if (failed(result)) return 1;
    printHeldOut(*result);
    if (!std::isfinite(result->means.lookup("loss"))) return 1;
  }
  if (!checkpointPath.empty()) reportCheckpoint(trainer);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  ::kiln::tools::parseToolCommandLine(argc, argv, commandLine());
  if (std::string problem = checkOptions(); !problem.empty())
    return ::kiln::tools::usageError(commandLine(), problem);

  const double peakLr = peakLrFlag > 0 ? double(peakLrFlag)
                        : datasetPath.empty()
                            ? ::kiln::samples::DefaultPeakLearningRate(task)
                            : 1e-3;

  DialectRegistry registry;
  registry.insert<KilnDialect, func::FuncDialect>();
  registerGradientRules(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(modelPath, sourceMgr, &context);
  if (!module) return 1;
  if (precision == "bf16" || precision == "f16") {
    auto loss = module->lookupSymbol<func::FuncOp>("loss");
    if (!loss) {
      llvm::errs() << "error: the model needs a function named 'loss'\n";
      return 1;
    }
    FloatType storage = precision == "bf16" ? FloatType::getBF16(&context)
                                            : FloatType::getF16(&context);
    if (failed(narrowStorage(loss, storage))) return 1;
  }
  TrainStepOptions options;  // AdamW
  options.optimizer.beta1 = beta1;
  options.optimizer.beta2 = beta2;
  options.optimizer.weightDecay = weightDecay;
  options.optimizer.epsilon = epsilon;
  options.transforms.clipNorm = clipNorm;
  if (failed(buildTrainingEntries(*module, options))) return 1;
  auto trainer = ReferenceTrainer::create(
      *module, seed,
      precision == "f64" ? ref::Precision::F64 : ref::Precision::F32);
  if (failed(trainer)) return 1;

  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  if (!datasetPath.empty()) return trainOnDataset(**trainer, forward, peakLr);
  llvm::SmallVector<int64_t> xShape = shapeOf(forward, "x"),
                             yShape = shapeOf(forward, "y");
  if (xShape.empty() || yShape.empty()) {
    llvm::errs() << "error: the model needs inputs named 'x' and 'y'\n";
    return 1;
  }

  std::mt19937_64 trainRng(seed * 7919 + 1), evalRng(seed * 104729 + 2);
  // Held-out data: whole batches covering --eval-samples samples.
  std::vector<NamedTensors> heldOut;
  for (int64_t n = 0; n < evalSamples; n += xShape[0])
    heldOut.push_back(makeBatch(evalRng, xShape, yShape));
  auto evaluate = [&]() -> double {
    double sum = 0;
    for (const NamedTensors &batch : heldOut) {
      FailureOr<double> loss = (*trainer)->evaluate(batch);
      if (failed(loss)) return NAN;
      sum += *loss;
    }
    return sum / heldOut.size();
  };

  llvm::outs() << "training " << modelPath << " (" << task << ") on the CPU "
               << "reference, " << steps << " steps, AdamW, cosine schedule\n";
  const std::optional<int> first = resume(**trainer);
  if (!first) return 1;
  // Resumed: the batches of the steps done are drawn and dropped, so that
  // the data continue where the checkpoint left them.
  for (int step = 0; step < *first; ++step) makeBatch(trainRng, xShape, yShape);
  auto start = std::chrono::steady_clock::now();
  double loss = NAN;
  bool midLine = false;
  for (int step = *first; step < steps; ++step) {
    double lr = learningRate(step, peakLr);
    FailureOr<double> result =
        (*trainer)->step(makeBatch(trainRng, xShape, yShape), lr);
    if (failed(result)) return 1;
    loss = *result;
    // The progress line ends without a newline.
    if (!checkpointIfDue(**trainer, step + 1, midLine ? "\n" : "")) return 1;
    if (evalEvery > 0 && (step + 1) % evalEvery == 0 && step + 1 != steps) {
      llvm::outs() << llvm::format("\nstep %5d  held-out MSE %.5f\n", step + 1,
                                   evaluate());
      midLine = false;
    }
    if ((step + 1) % 50 == 0 || step + 1 == steps) {
      midLine = true;
      double elapsed = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      double rate = (step + 1 - *first) / elapsed;
      llvm::outs() << llvm::format(
          "\rstep %5d/%d  loss %.5f  lr %.2e  %.1f steps/s  ETA %.0fs",
          step + 1, int(steps), loss, lr, rate, (steps - step - 1) / rate);
      llvm::outs().flush();
    }
  }
  if (!finalCheckpoint(**trainer)) return 1;
  double mse = evaluate();
  llvm::outs() << llvm::format(
      "\nheld-out MSE over %lld samples: %.5f\n",
      static_cast<long long>(heldOut.size() * xShape[0]), mse);
  if (!checkpointPath.empty()) reportCheckpoint(**trainer);
  if (expectBelow.getNumOccurrences()) {
    bool ok = mse < expectBelow;
    llvm::outs() << (ok ? "PASS" : "FAIL") << ": held-out MSE "
                 << (ok ? "<" : ">=") << " " << expectBelow.getValue() << "\n";
    return ok ? 0 : 1;
  }
  return std::isfinite(mse) ? 0 : 1;
}
