//===- EmitterUtils.cpp - helpers shared by the CUDA kernel emitters ------===//

#include "codegen/cuda/EmitterUtils.h"

#include "codegen/cuda/Nvrtc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace mlir::kiln::codegen {

std::string cudaType(Type t) {
  if (t.isF32())
    return "float";
  if (t.isBF16())
    return "__nv_bfloat16";
  if (t.isF16())
    return "__half";
  if (t.isInteger(1))
    return "bool";
  return "int";
}

std::string roundedToElement(Type type, const std::string &value) {
  if (type.isBF16())
    return "kiln_load(__float2bfloat16_rn(" + value + "))";
  if (type.isF16())
    return "kiln_load(__float2half_rn(" + value + "))";
  return value;
}

std::string floatLiteral(double value) {
  float f = static_cast<float>(value);
  if (std::isnan(f))
    return "__int_as_float(0x7fc00000)";
  if (std::isinf(f))
    return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buffer[48];
  // 9 significant digits round-trip every f32.
  std::snprintf(buffer, sizeof buffer, "%.9g", f);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + "f";
}

bool sameElements(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  auto withoutOnes = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> out;
    for (int64_t d : shape)
      if (d != 1)
        out.push_back(d);
    return out;
  };
  return withoutOnes(a) == withoutOnes(b);
}

FailureOr<SingleOpFusion> SingleOpFusion::get(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  auto ops = body.without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 1)
    return failure();
  SingleOpFusion result;
  result.op = &*ops.begin();
  if (result.op->getNumRegions() != 0)
    return failure();
  for (Value operand : result.op->getOperands()) {
    auto argument = dyn_cast<BlockArgument>(operand);
    if (!argument || argument.getOwner() != &body)
      return failure();
    result.operandOf.push_back(argument.getArgNumber());
  }
  result.resultOf.assign(result.op->getNumResults(), -1);
  for (auto [index, value] :
       llvm::enumerate(body.getTerminator()->getOperands())) {
    auto opResult = dyn_cast<OpResult>(value);
    if (!opResult || opResult.getOwner() != result.op ||
        result.resultOf[opResult.getResultNumber()] != -1)
      return failure();
    result.resultOf[opResult.getResultNumber()] = index;
  }
  if (llvm::all_of(result.resultOf, [](int64_t r) { return r < 0; }))
    return failure();
  return result;
}

uint64_t FusionBuilder::scratch(uint64_t bytes) {
  uint64_t offset = (generated.scratchBytes + 255) / 256 * 256;
  generated.scratchBytes = offset + bytes;
  return offset;
}

void FusionBuilder::kernel(KernelSpec spec) {
  if (spec.header.empty())
    spec.header = header;
  std::vector<LaunchArg> args;
  for (const KernelParam &param : spec.params)
    args.push_back(param.arg);
  GeneratedKernel kernel = renderKernel(spec);
  std::array<uint32_t, 3> grid = launchGridOf(spec);
  // A merged kernel runs its parts' code, not their entries: neither one
  // that must run all its blocks at once nor one run in tiles can be a part.
  if (spec.cooperative || spec.cluster != std::array<uint32_t, 3>{1, 1, 1} ||
      grid != spec.grid)
    kernel.part = KernelPart();
  addLaunch(std::move(kernel), grid, spec.block, spec.dynamicSharedBytes,
            std::move(args));
  generated.launches.back().cluster = spec.cluster;
  generated.launches.back().cooperative = spec.cooperative;
  generated.launches.back().persistentBlocksPerSm = spec.persistentBlocksPerSm;
}

void FusionBuilder::addLaunch(GeneratedKernel kernel,
                              std::array<uint32_t, 3> grid,
                              std::array<uint32_t, 3> block,
                              uint32_t dynamicSharedBytes,
                              std::vector<LaunchArg> args) {
  size_t index = generated.kernels.size();
  for (size_t i = 0; i < generated.kernels.size(); ++i)
    if (generated.kernels[i].name == kernel.name)
      index = i;
  if (index == generated.kernels.size())
    generated.kernels.push_back(std::move(kernel));
  GeneratedLaunch launch;
  launch.kernel = index;
  launch.grid = grid;
  launch.block = block;
  launch.dynamicSharedBytes = dynamicSharedBytes;
  launch.args = std::move(args);
  generated.launches.push_back(std::move(launch));
}

std::string describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// " << op->getName();
  if (!op->getAttrs().empty()) {
    os << " ";
    op->getAttrDictionary().print(os);
  }
  os << " : ";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << " -> ";
  llvm::interleaveComma(op->getResultTypes(), os);
  os.flush();
  // Attribute printing never contains newlines for these ops; keep the
  // comment one line regardless.
  for (char &c : text)
    if (c == '\n')
      c = ' ';
  return text + "\n";
}

} // namespace mlir::kiln::codegen
