//===- kiln-ref.cpp - run a kiln function on the CPU reference
//-------------===//
//
// The oracle of every GPU check: runs one function of a model on the CPU
// reference interpreter, with inputs and outputs in safetensors.
//
//   kiln-ref model.mlir|model.onnx --function NAME
//            [--inputs in.safetensors [--allow-nonfinite-inputs]]
//            [--random-seed S] [--int-range N]
//            [--init-params] [--precision f64|f32] [--print]
//            [--print-count K] [--save-inputs used.safetensors]
//            [-o out.safetensors]
//   kiln-ref --batch runs.txt
//
// Arguments are named by their kiln.name, else argN (N = position); results
// by their kiln.name, else resultN. Each argument comes from the tensor of its
// name in --inputs, which must have the argument's shape and dtype exactly
// (F32, BF16, F16, I32, BOOL for f32, bf16, f16, i32, i1), or I64 for i32
// (what PyTorch and NumPy write), narrowed: a value outside the i32 range is
// an error naming the tensor and element, and so is a NaN or infinity in a
// floating-point tensor unless --allow-nonfinite-inputs. An input that is a
// kiln.cross_entropy's labels or a kiln.embedding's indices (directly or
// through kiln.reshape) is checked: a label outside the classes (and not the
// ignore_index) or an index outside the table is an error naming the input's
// element, the value and the op (after --save-inputs has written them). With
// --random-seed, arguments missing from --inputs are drawn from Philox stream
// N (the argument's position) of seed S: floats uniform in [-1, 1), i32
// uniform in [0, --int-range) (default 4), i1 0 or 1 with equal odds; with
// --init-params, kiln.param arguments take their #kiln.init values under S
// instead (what the trainers start from). kiln.state arguments (batch norm
// running statistics) always take their #kiln.init values, as the runtime's
// state buffers do: a random running variance would be meaningless. Without
// --random-seed every argument must be in --inputs. An argument with a
// kiln.value (an imported model's weights, a resident constant) missing from
// --inputs takes those values, with or without --random-seed. A tensor in
// --inputs that names no argument is an error.
//
// --precision f32 (the default) rounds every op's results to their storage
// type as the GPU does; f64 keeps every value exact in double. Outputs are
// written in their result's dtype: in f64 mode the double values are rounded
// to it (to nearest even; bf16 and f16 go through f32, so a value within
// half an f32 ulp of a bf16/f16 rounding boundary may round differently
// from a direct double -> bf16 rounding).
//
// Errors (unparsable IR with MLIR's file:line:col diagnostics, unknown
// function, unreadable or invalid files, missing, extra, mis-shaped or
// mistyped inputs, failed evaluation) print a message and exit with 1; a bad
// command line (tools/common/ToolOptions.h) exits with 2. --fn is an alias
// of --function.
//
// --batch FILE evaluates many runs in one process, each model parsed once
// (BatchJobs.h has the file's format): starting an MLIR tool costs more than
// evaluating a small graph. A failed run prints its errors as above, then
// "kiln-ref: batch line N failed", and the runs after it still go; the exit
// status is 1 if any run failed. The single-run options above (other than
// the model) do not go with --batch.
//
//===----------------------------------------------------------------------===//

#include "codegen/dialect/KilnCudaDialect.h"
#include "compiler/import/LoadModel.h"
#include "compiler/interpreter/HostTensors.h"
#include "compiler/interpreter/IndexInputs.h"
#include "compiler/interpreter/Initializers.h"
#include "compiler/interpreter/Interpreter.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnNaming.h"
#include "kiln/dtype.h"
#include "runtime/io/finite.h"
#include "runtime/io/safetensors.h"
#include "runtime/random/philox.h"
#include "tools/common/ToolOptions.h"
#include "tools/kiln-ref/BatchJobs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::kiln;
namespace cl = llvm::cl;
namespace io = ::kiln::io;

static cl::OptionCategory inputCategory("Inputs");
static cl::OptionCategory runCategory("Evaluation");
static cl::OptionCategory outputCategory("Output");
static cl::opt<std::string> modelPath(cl::Positional,
                                      cl::desc("<model.mlir|model.onnx>"));
static cl::opt<std::string>
    functionName("function",
                 cl::desc("the function to run (required unless --batch)"),
                 cl::value_desc("name"), cl::cat(modelOptionCategory()));
// kiln-ref's first spelling, kept working.
static cl::alias functionAlias("fn", cl::desc("alias for --function"),
                               cl::aliasopt(functionName));
static cl::opt<std::string>
    inputsPath("inputs",
               cl::desc("safetensors file with the arguments by name"),
               cl::value_desc("path"), cl::cat(inputCategory));
static cl::opt<bool> allowNonfiniteInputs(
    "allow-nonfinite-inputs",
    cl::desc("pass NaN and infinite values of --inputs on to the function "
             "(without it they are an error naming the tensor and element)"),
    cl::init(false), cl::cat(inputCategory));
static cl::opt<uint64_t> randomSeed(
    "random-seed",
    cl::desc("draw the arguments missing from --inputs from Philox under "
             "this seed (without it, --inputs must hold every argument)"),
    cl::cat(inputCategory));
static cl::opt<int64_t>
    intRange("int-range",
             cl::desc("random i32 arguments are uniform in [0, N), N >= 1"),
             cl::init(4), cl::cat(inputCategory));
static cl::opt<bool>
    initParams("init-params",
               cl::desc("with --random-seed, kiln.param arguments without "
                        "a kiln.value take their #kiln.init values under the "
                        "seed"),
               cl::init(false), cl::cat(inputCategory));
static cl::opt<std::string> precisionName(
    "precision",
    cl::desc("f32 rounds every op's results to their storage type as the "
             "GPU does; f64 keeps every value exact in double"),
    cl::value_desc("f32|f64"), cl::init("f32"), cl::cat(runCategory));
static cl::opt<std::string> batchPath(
    "batch",
    cl::desc("evaluate the runs a file lists, one a line: MODEL, FUNCTION, "
             "PRECISION, INPUTS ('-' for none) and OUTPUT separated by tabs, "
             "each model parsed once (instead of a model and --function)"),
    cl::value_desc("path"), cl::cat(runCategory));
static cl::opt<std::string> outputPath("o", cl::desc("output safetensors file"),
                                       cl::value_desc("path"),
                                       cl::cat(outputCategory));
static cl::opt<std::string> saveInputsPath(
    "save-inputs",
    cl::desc("also write every argument as used (file and drawn) to this "
             "safetensors file, e.g. to feed the same inputs to kiln-run"),
    cl::value_desc("path"), cl::init(""), cl::cat(outputCategory));
static cl::opt<bool>
    printOutputs("print",
                 cl::desc("print each output's name, type and first values"),
                 cl::init(false), cl::cat(outputCategory));
static cl::opt<unsigned> printCount("print-count",
                                    cl::desc("values --print shows per output"),
                                    cl::init(8), cl::cat(outputCategory));

static const ::kiln::tools::ToolCommandLine &commandLine() {
  static const ::kiln::tools::ToolCommandLine tool{
      "kiln-ref",
      "kiln-ref [options] <model.mlir|model.onnx> --function NAME",
      "kiln-ref: runs one function of a model on the CPU reference "
      "interpreter, inputs and outputs in safetensors; the oracle of every "
      "GPU check.",
      {&modelOptionCategory(), &inputCategory, &runCategory, &outputCategory},
      {{"fn", "kiln-ref names the function with --function"},
       {"seed", "kiln-ref draws its inputs with --random-seed"}},
      ""};
  return tool;
}

/// Why the options do not go together or are out of range; empty when they
/// are fine.
static std::string checkOptions() {
  if (!batchPath.empty()) {
    const cl::Option *singleRun[] = {
        &functionName,  &inputsPath, &allowNonfiniteInputs,
        &randomSeed,    &intRange,   &initParams,
        &precisionName, &outputPath, &saveInputsPath,
        &printOutputs,  &printCount};
    for (const cl::Option *option : singleRun)
      if (option->getNumOccurrences())
        return "--batch lists each run's model, function, precision, inputs "
               "and output: give " +
               ::kiln::tools::spelling(*option) + " in a single run only";
    if (!modelPath.empty())
      return "--batch lists each run's model: give no model '" + modelPath +
             "' with it";
    return checkModelOptions(batchPath);
  }
  if (modelPath.empty())
    return "give a model (or --batch FILE)";
  if (functionName.empty())
    return "give --function NAME";
  bool random = randomSeed.getNumOccurrences() > 0;
  if (precisionName != "f32" && precisionName != "f64")
    return "--precision must be f32 or f64, got '" + precisionName + "'";
  if (intRange < 1)
    return "--int-range must be at least 1";
  if (!random && (initParams || intRange.getNumOccurrences()))
    return std::string(initParams ? "--init-params" : "--int-range") +
           " sets how arguments are drawn: give --random-seed";
  if (allowNonfiniteInputs && inputsPath.empty())
    return "--allow-nonfinite-inputs sets how --inputs is checked: give "
           "--inputs";
  if (printCount.getNumOccurrences() && !printOutputs)
    return "--print-count sets what --print shows: give --print";
  if (outputPath.empty() && !printOutputs)
    return "nothing to do: give -o out.safetensors and/or --print";
  return checkModelOptions(modelPath);
}

namespace {

/// Prints "error: <message>" and returns the exit status of a failed run.
int fail(const llvm::Twine &message) {
  llvm::errs() << "error: " << message << "\n";
  return 1;
}

/// "F32 [64, 8]", how a file tensor or an argument is described in messages.
std::string describe(io::DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string text = std::string(::kiln::DTypeName(dtype)) + " [";
  for (auto [i, extent] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(extent);
  return text + "]";
}

/// Draws argument `index` from Philox stream `index` of `seed`.
void drawRandom(ref::Tensor &tensor, uint64_t seed, uint32_t index) {
  ::kiln::RandomStream stream{seed, index, 0};
  for (size_t i = 0; i < tensor.data.size(); ++i) {
    double u = stream.Uniform(i);
    switch (tensor.kind) {
    case ref::ElementKind::F32:
    case ref::ElementKind::BF16:
    case ref::ElementKind::F16:
      tensor.data[i] = -1.0 + 2.0 * u;
      break;
    case ref::ElementKind::I32:
      tensor.data[i] = std::floor(u * double(intRange));
      break;
    case ref::ElementKind::I1:
      tensor.data[i] = u < 0.5 ? 0.0 : 1.0;
      break;
    }
  }
}

/// "name: tensor<4x8xf32> = [v0, v1, ...]" for --print.
void printSummary(llvm::raw_ostream &os, llvm::StringRef name,
                  const ref::Tensor &tensor) {
  os << name << ": " << tensor.typeString() << " = [";
  size_t shown = std::min<size_t>(tensor.data.size(), printCount);
  for (size_t i = 0; i < shown; ++i) {
    if (i)
      os << ", ";
    os << llvm::format("%.6g", tensor.data[i]);
  }
  if (shown < tensor.data.size())
    os << ", ...";
  os << "]\n";
}

/// One evaluation: a function of a model on inputs, written to a file.
struct Run {
  std::string model, function, precision, inputs, output;
};

/// The model `run` names, or null after its errors were printed.
OwningOpRef<ModuleOp> load(const Run &run, MLIRContext &context,
                           llvm::SourceMgr &sourceMgr) {
  std::string openError;
  OwningOpRef<ModuleOp> module =
      loadModel(run.model, sourceMgr, &context,
                onnxImportOptionsFromCommandLine(run.function), openError);
  if (!module && !openError.empty())
    fail(openError);
  return module;
}

/// Evaluates `run` on `module`; the exit status of a single run.
int runFunction(ModuleOp module, const Run &run) {
  ref::Precision precision =
      run.precision == "f64" ? ref::Precision::F64 : ref::Precision::F32;
  auto function = module.lookupSymbol<func::FuncOp>(run.function);
  if (!function) {
    std::string names;
    for (auto candidate : module.getOps<func::FuncOp>())
      names += (names.empty() ? "" : ", ") + candidate.getSymName().str();
    return fail("no function '" + run.function + "' in " + run.model +
                " (functions: " + (names.empty() ? "none" : names) + ")");
  }
  if (function.isExternal())
    return fail("function '" + run.function + "' has no body");

  io::Safetensors inputFile;
  if (!run.inputs.empty()) {
    absl::StatusOr<io::Safetensors> read = io::ReadSafetensorsFile(run.inputs);
    if (!read.ok())
      return fail("cannot read inputs '" + run.inputs +
                  "': " + std::string(read.status().message()));
    inputFile = std::move(*read);
  }
  bool random = randomSeed.getNumOccurrences() > 0;

  // Bind every argument: from the file, else drawn.
  std::vector<ref::Tensor> inputs;
  llvm::StringSet<> argumentNames;
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    std::string name = argumentName(function, i);
    argumentNames.insert(name);
    auto type = dyn_cast<RankedTensorType>(function.getArgumentTypes()[i]);
    if (!type || !type.hasStaticShape() ||
        !ref::elementKindOf(type.getElementType()))
      return fail("argument '" + name + "' of '" + run.function +
                  "' is not a static tensor of f32, bf16, f16, i32 or i1");
    uint64_t bytes = ref::hostBytesOf(type), memory = ref::hostMemoryBytes();
    if (memory && bytes > memory)
      return fail("argument '" + name + "' of '" + run.function + "' needs " +
                  (bytes == UINT64_MAX ? std::string("more than 2^64")
                                       : std::to_string(bytes)) +
                  " bytes as f64 values, more than this machine's " +
                  std::to_string(memory));
    ref::Tensor tensor = ref::Tensor::ofType(type);
    io::DType expected = ref::fileDType(tensor.kind);
    auto found = inputFile.tensors.find(name);
    if (found != inputFile.tensors.end()) {
      const io::HostTensor &file = found->second;
      bool narrowed =
          file.dtype == io::DType::kI64 && expected == io::DType::kI32;
      if ((file.dtype != expected && !narrowed) ||
          llvm::ArrayRef<int64_t>(file.shape) != type.getShape())
        return fail("input '" + name + "' must be " +
                    describe(expected, type.getShape()) +
                    (expected == io::DType::kI32 ? " (or i64)" : "") +
                    ", got " + describe(file.dtype, file.shape));
      if (!narrowed) {
        if (!allowNonfiniteInputs)
          if (absl::Status finite = io::CheckFinite(
                  file, "input '" + name + "' in " + run.inputs);
              !finite.ok())
            return fail(std::string(finite.message()) +
                        " (--allow-nonfinite-inputs passes it on)");
        ref::fromHostTensor(file, tensor);
      } else if (std::optional<int64_t> bad = ref::readI64AsI32(
                     file.data.data(), tensor.size(), tensor.data.data())) {
        int64_t value;
        std::memcpy(&value, file.data.data() + 8 * *bad, 8);
        return fail("input '" + name + "' element " +
                    formatShape(ref::unflatIndex(file.shape, *bad)) +
                    ": i64 value " + std::to_string(value) +
                    " is outside the i32 range");
      }
    } else if (auto value = function.getArgAttrOfType<DenseElementsAttr>(
                   i, KilnDialect::kValueAttrName)) {
      // The values it starts from (an imported model's weights, a resident
      // constant), rounded to its storage type as the runtime stores them.
      tensor.data = ref::valuesOf(value);
      for (double &element : tensor.data)
        element =
            ref::roundToStorage(element, tensor.kind, ref::Precision::F32);
    } else if (random) {
      auto init =
          function.getArgAttrOfType<InitAttr>(i, KilnDialect::kParamAttrName);
      auto state =
          function.getArgAttrOfType<InitAttr>(i, KilnDialect::kStateAttrName);
      if (state || (initParams && init)) {
        if (state)
          init = state;
        std::vector<double> values =
            ref::initialValues(init, type.getShape(), randomSeed, i);
        tensor.data = std::move(values);
      } else {
        drawRandom(tensor, randomSeed, i);
      }
      // Drawn inputs are stored tensors: rounded to their dtype in both
      // modes, so that --save-inputs writes exactly what was used.
      for (double &value : tensor.data)
        value = ref::roundToStorage(value, tensor.kind, ref::Precision::F32);
    } else if (run.inputs.empty()) {
      return fail("missing input '" + name + "' of '" + run.function +
                  "' (give --inputs or --random-seed)");
    } else {
      return fail("missing input '" + name + "' of '" + run.function + "' in " +
                  run.inputs);
    }
    inputs.push_back(std::move(tensor));
  }
  for (const auto &[name, file] : inputFile.tensors)
    if (!argumentNames.contains(name))
      return fail("input '" + name + "' in " + run.inputs +
                  " names no argument of '" + run.function + "'");

  if (!saveInputsPath.empty()) {
    io::Safetensors used;
    used.metadata["kiln.function"] = run.function;
    for (auto [index, tensor] : llvm::enumerate(inputs))
      used.tensors.emplace(argumentName(function, index),
                           ref::toHostTensor(tensor));
    absl::Status written = io::WriteSafetensorsFile(saveInputsPath, used);
    if (!written.ok())
      return fail("cannot write '" + saveInputsPath +
                  "': " + std::string(written.message()));
  }

  // After --save-inputs, so that the inputs a bad value came with are kept.
  for (const ref::IndexInput &use : ref::findIndexInputs(function)) {
    const ref::Tensor &values = inputs[use.argument];
    if (std::optional<int64_t> bad = ref::firstBadIndex(use, values))
      return fail("input '" + argumentName(function, use.argument) +
                  "' element " +
                  formatShape(ref::unflatIndex(values.shape, *bad)) + ": " +
                  ref::describeBadIndex(use, values.data[*bad]));
  }

  ref::Interpreter interpreter(precision);
  FailureOr<std::vector<ref::Tensor>> results =
      interpreter.run(function, inputs);
  if (failed(results))
    return 1; // The interpreter has reported why.

  io::Safetensors outputFile;
  outputFile.metadata["kiln.function"] = run.function;
  outputFile.metadata["kiln.precision"] = run.precision;
  for (auto [index, result] : llvm::enumerate(*results)) {
    std::string name = resultName(function, index);
    if (printOutputs)
      printSummary(llvm::outs(), name, result);
    if (!outputFile.tensors.emplace(name, ref::toHostTensor(result)).second)
      return fail("two results of '" + run.function + "' are named '" + name +
                  "'");
  }
  if (!run.output.empty()) {
    absl::Status written = io::WriteSafetensorsFile(run.output, outputFile);
    if (!written.ok())
      return fail("cannot write '" + run.output +
                  "': " + std::string(written.message()));
  }
  return 0;
}

/// A model of a --batch file with the source its diagnostics show.
struct BatchModel {
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  OwningOpRef<ModuleOp> module;
};

/// Evaluates every run of the --batch file, each model parsed once (a model
/// that fails to parse is tried again by its next run, which reports why
/// again). A failed run's errors are followed by "kiln-ref: batch line N
/// failed" and the runs after it go on; 1 if any failed.
int runBatch(MLIRContext &context) {
  auto text = llvm::MemoryBuffer::getFile(batchPath);
  if (!text)
    return fail("cannot read batch file '" + batchPath +
                "': " + text.getError().message());
  std::string error;
  std::vector<::kiln::tools::BatchJob> jobs =
      ::kiln::tools::parseBatchJobs(batchPath, (*text)->getBuffer(), error);
  if (!error.empty())
    return fail(error);
  llvm::StringMap<BatchModel> models;
  int status = 0;
  for (const ::kiln::tools::BatchJob &job : jobs) {
    Run run{job.model, job.function, job.precision,
            job.inputs == "-" ? "" : job.inputs, job.output};
    // A SourceMgr parses its first buffer: one per model.
    BatchModel &model = models[job.model];
    if (!model.module)
      model.sourceMgr = std::make_unique<llvm::SourceMgr>();
    SourceMgrDiagnosticHandler diagnostics(*model.sourceMgr, &context);
    if (!model.module)
      model.module = load(run, context, *model.sourceMgr);
    if (!model.module || runFunction(*model.module, run) != 0) {
      llvm::errs() << "kiln-ref: batch line " << job.line << " failed\n";
      status = 1;
    }
  }
  return status;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  ::kiln::tools::parseToolCommandLine(argc, argv, commandLine());
  if (std::string problem = checkOptions(); !problem.empty())
    return ::kiln::tools::usageError(commandLine(), problem);

  DialectRegistry registry;
  // kiln_cuda: the kernel choices kilnc records on the fusions of the
  // modules it compiles, which kiln-ref runs as they stand.
  registry.insert<KilnDialect, cuda::KilnCudaDialect, func::FuncDialect,
                  arith::ArithDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  if (!batchPath.empty())
    return runBatch(context);
  llvm::SourceMgr sourceMgr;
  // Parse and verifier errors print as file:line:col: error: ...; a .onnx
  // model goes through the ONNX importer, its errors located at its nodes.
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  auto onnxDiagnostics = makeOnnxDiagnosticHandler(&context);

  Run run{modelPath, functionName, precisionName, inputsPath, outputPath};
  OwningOpRef<ModuleOp> module = load(run, context, sourceMgr);
  return module ? runFunction(*module, run) : 1;
}
