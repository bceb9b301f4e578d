//===- CustomEmitter.cpp - kernels of "custom" fusions (user kernels) -----===//
//
// A "custom" fusion holds one kiln.custom or kiln.custom_backward (the
// fusion pass gives them groups of their own). Its kernel is the user's
// function template, instantiated by a stub this planner writes: the
// user's file at file scope, an `Args` struct with the op's tensors (each a
// kiln::custom::tensor of the op's element type, its static shape spelled
// out), parameters and launch constants, and a `run` that fills it and
// calls the user's entry. The ABI is codegen/cuda/kernels/custom_op.cuh.
// A result of the op that nothing reads still gets a buffer, in scratch,
// because the kernel writes every output.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/RecordedKernel.h"
#include "codegen/cuda/custom/CustomKernelSource.h"

#include "kiln/custom_layout.cuh"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

namespace mlir::kiln::codegen {
namespace {

static_assert(CustomOp::kMaxRank == ::kiln::custom::max_rank,
              "the dialect and the ABI header must agree on the rank limit");

/// One tensor of the ABI: the member of `Args` that holds it, the value,
/// whether the kernel writes it, and the buffer behind it.
struct AbiTensor {
  std::string member;
  Value value;
  bool written = false;
  LaunchArg arg;
};

/// What the stub needs of a kiln.custom or kiln.custom_backward.
struct CustomCall {
  Operation *op = nullptr;
  StringRef entry, source;
  std::optional<DictionaryAttr> params;
  int64_t blockSize = ::kiln::custom::default_block_size;
  size_t numInputs = 0, numOutputs = 0;
  std::vector<AbiTensor> tensors;
};

/// The op of a "custom" fusion, reading fusion operands only.
FailureOr<SingleOpFusion> customFusion(FusionOp fusion) {
  if (fusion.getKind() != "custom")
    return failure();
  FailureOr<SingleOpFusion> single = SingleOpFusion::get(fusion);
  if (failed(single) || !isa<CustomOp, CustomBackwardOp>(single->op))
    return failure();
  return single;
}

/// The buffer of op result `i`: the fusion's result, or scratch when the
/// fusion does not yield it.
LaunchArg resultBuffer(const SingleOpFusion &single, unsigned i,
                       FusionBuilder &builder) {
  if (single.resultOf[i] >= 0)
    return LaunchArg::result(single.resultOf[i]);
  auto type = cast<ShapedType>(single.op->getResult(i).getType());
  uint64_t bytes =
      type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  return LaunchArg::scratch(builder.scratch(std::max<uint64_t>(bytes, 1)));
}

CustomCall describeCall(const SingleOpFusion &single, FusionBuilder &builder) {
  CustomCall call;
  call.op = single.op;
  auto read = [&](std::string member, unsigned operand) {
    call.tensors.push_back({std::move(member), single.op->getOperand(operand),
                            false,
                            LaunchArg::operand(single.operandOf[operand])});
  };
  auto write = [&](std::string member, unsigned result) {
    call.tensors.push_back({std::move(member), single.op->getResult(result),
                            true, resultBuffer(single, result, builder)});
  };
  if (auto custom = dyn_cast<CustomOp>(single.op)) {
    call.entry = custom.getForward();
    call.source = custom.getSource();
    call.params = custom.getParams();
    call.blockSize = custom.getBlockSize();
    call.numInputs = custom.getInputs().size();
    call.numOutputs = custom.getOutputs().size();
    for (unsigned i = 0; i < call.numInputs; ++i)
      read("in" + std::to_string(i), i);
    for (unsigned i = 0; i < call.numOutputs; ++i)
      write("out" + std::to_string(i), i);
    return call;
  }
  auto backward = cast<CustomBackwardOp>(single.op);
  call.entry = backward.getBackward();
  call.source = backward.getSource();
  call.params = backward.getParams();
  call.blockSize = backward.getBlockSize();
  call.numInputs = backward.getInputs().size();
  call.numOutputs = backward.getOutputs().size();
  unsigned operand = 0;
  for (unsigned i = 0; i < call.numInputs; ++i)
    read("in" + std::to_string(i), operand++);
  for (unsigned i = 0; i < call.numOutputs; ++i)
    read("out" + std::to_string(i), operand++);
  for (unsigned i = 0; i < call.numOutputs; ++i)
    read("grad_out" + std::to_string(i), operand++);
  for (auto [k, input] : llvm::enumerate(
           CustomOp::differentiableInputs(backward.getInputs().getTypes())))
    write("grad_in" + std::to_string(input), k);
  return call;
}

/// A parameter as the stub spells it: its C++ type and a constant
/// expression of its value.
struct CppConstant {
  std::string type, value;
};

/// An integer or float parameter (the verifier admits no other).
CppConstant constantOf(Attribute value) {
  if (auto integer = dyn_cast<IntegerAttr>(value)) {
    int64_t v = integer.getType().getIntOrFloatBitWidth() == 1
                    ? static_cast<int64_t>(integer.getValue().getZExtValue())
                    : integer.getValue().getSExtValue();
    if (v == LLONG_MIN)
      return {"long long", "(-9223372036854775807LL - 1)"};
    return {"long long", std::to_string(v) + "LL"};
  }
  auto real = cast<FloatAttr>(value);
  if (real.getType().isF32())
    return {"float", floatLiteral(real.getValueAsDouble())};
  double v = real.getValueAsDouble();
  if (std::isnan(v))
    return {"double", "__longlong_as_double(0x7ff8000000000000LL)"};
  if (std::isinf(v))
    return {"double", v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                            : "__longlong_as_double(0xfff0000000000000LL)"};
  char buffer[48];
  // 17 significant digits round-trip every f64.
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return {"double", text};
}

/// The `Args` struct of the call: launch constants, parameters, tensors.
std::string argsStruct(const CustomCall &call) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "struct args_t {\n"
     << "  static constexpr int num_inputs = " << call.numInputs << ";\n"
     << "  static constexpr int num_outputs = " << call.numOutputs << ";\n"
     << "  static constexpr int block_size = " << call.blockSize << ";\n"
     << "  struct params {\n";
  if (call.params)
    for (NamedAttribute param : *call.params) {
      CppConstant constant = constantOf(param.getValue());
      os << "    static constexpr " << constant.type << " "
         << param.getName().strref() << " = " << constant.value << ";\n";
    }
  os << "  };\n  kiln::launch_ctx ctx;\n";
  for (const AbiTensor &tensor : call.tensors)
    os << "  kiln::custom::tensor<" << (tensor.written ? "" : "const ")
       << cudaType(tensor.value) << "> " << tensor.member << ";\n";
  os << "};\n";
  return text;
}

/// `{data, numel, rank, {shape...}}` of one tensor.
std::string tensorInitializer(const AbiTensor &tensor) {
  auto type = cast<ShapedType>(tensor.value.getType());
  std::string dims;
  for (int64_t dim : type.getShape())
    dims += (dims.empty() ? "" : ", ") + std::to_string(dim) + "LL";
  return llvm::formatv("{{{0}, {1}LL, {2}, {{{3}}}", tensor.member,
                       type.getNumElements(), type.getRank(), dims)
      .str();
}

/// The planner's grid: a thread per element of the largest tensor written,
/// as many blocks as fill the target four times over.
int64_t plannedBlocks(const CustomCall &call, const GpuTarget &target) {
  int64_t written = 0;
  for (const AbiTensor &tensor : call.tensors)
    if (tensor.written)
      written = std::max(written, numElementsOf(tensor.value));
  int64_t blocksPerSm = std::max<int64_t>(1, 1024 / call.blockSize);
  return ::kiln::custom::grid_blocks(written, call.blockSize,
                                     target.blocksForWaves(4, blocksPerSm));
}

FailureOr<GeneratedFusion> emitCustom(FusionOp fusion,
                                      const SingleOpFusion &single,
                                      const CodegenOptions &options) {
  FusionBuilder builder("// kiln custom kernel of\n" + describeOp(single.op));
  CustomCall call = describeCall(single, builder);

  std::vector<std::string> searchPath =
      customKernelSearchPath(call.op->getLoc(), options.customKernelDirs);
  FailureOr<CustomKernelSource> source =
      loadCustomKernelSource(call.source, call.entry, searchPath,
                             [&] { return emitFusionError(fusion); });
  if (failed(source))
    return failure();

  KernelSpec spec;
  std::string entryName = call.entry.str();
  std::replace(entryName.begin(), entryName.end(), ':', '_');
  spec.prefix = "kiln_custom_" + entryName;
  spec.templateName = "custom " + call.entry.str();
  spec.templates = {"kiln/custom_op.cuh"};
  // The user's file as it is, with its own line numbers in NVRTC's log.
  spec.globalCode = "#line 1 \"" + source->name + "\"\n" + source->text;
  spec.functors = argsStruct(call);
  spec.body = "  const args_t args{ctx";
  for (const AbiTensor &tensor : call.tensors) {
    std::string pointer = cudaType(tensor.value) + " *__restrict__";
    spec.addParam(tensor.written ? pointer : "const " + pointer, tensor.member,
                  tensor.arg);
    spec.body += ",\n      " + tensorInitializer(tensor);
  }
  spec.body += "};\n  ::" + call.entry.str() + "<args_t>(args);\n";

  FailureOr<cuda::CustomAttr> recorded =
      recordedKernel<cuda::CustomAttr>(fusion);
  if (failed(recorded))
    return failure();
  int64_t blocks = *recorded ? recorded->getBlocks()
                             : plannedBlocks(call, options.target());
  spec.grid = {uint32_t(blocks), 1, 1};
  spec.block = {uint32_t(call.blockSize), 1, 1};
  spec.configuration = llvm::formatv("file={0} block={1} blocks={2}",
                                     call.source, call.blockSize, blocks)
                           .str();
  builder.kernel(std::move(spec));
  return builder.take();
}

class CustomEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    return succeeded(customFusion(fusion));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<SingleOpFusion> single = customFusion(fusion);
    if (failed(single))
      return (emitFusionError(fusion) << "is not a fusion of one custom op");
    return emitCustom(fusion, *single, options);
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    FusionBuilder scratch("");
    CustomCall call = describeCall(*customFusion(fusion), scratch);
    return Attribute(cuda::CustomAttr::get(
        fusion.getContext(), plannedBlocks(call, options.target())));
  }

  /// Any grid (the attribute's own check) runs a kernel written for any.
  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &) const override {
    return failure(failed(recordedKernel<cuda::CustomAttr>(fusion)));
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createCustomEmitter() {
  return std::make_unique<CustomEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Custom,
                                              createCustomEmitter);

} // namespace mlir::kiln::codegen
