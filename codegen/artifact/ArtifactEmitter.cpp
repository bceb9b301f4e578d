//===- ArtifactEmitter.cpp - compiled module to the artifact file ---------===//

#include "codegen/artifact/ArtifactEmitter.h"

#include "runtime/artifact/artifact_writer.h"
#include "tools/common/version.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <cstring>
#include <memory>

namespace mlir::kiln::codegen {

namespace art = ::kiln::artifact;

static art::DType dtypeOf(Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  if (element.isBF16())
    return art::DType::kBF16;
  if (element.isF16())
    return art::DType::kF16;
  if (element.isInteger(32))
    return art::DType::kI32;
  if (element.isInteger(1))
    return art::DType::kI1;
  return art::DType::kF32;
}

static std::vector<int64_t> shapeOf(Type type) {
  auto shape = cast<RankedTensorType>(type).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

static art::BufferRole roleOf(llvm::StringRef role) {
  if (role == "constant")
    return art::BufferRole::kConstant;
  if (role == "optimizer_state")
    return art::BufferRole::kOptimizerState;
  if (role == "master_weight")
    return art::BufferRole::kMasterWeight;
  if (role == "gradient")
    return art::BufferRole::kGradient;
  if (role == "state")
    return art::BufferRole::kState;
  return art::BufferRole::kParameter;
}

static art::InitKind initKindOf(InitKind kind) {
  switch (kind) {
  case InitKind::zeros:
    return art::InitKind::kZeros;
  case InitKind::ones:
    return art::InitKind::kOnes;
  case InitKind::constant:
    return art::InitKind::kConstant;
  case InitKind::normal:
    return art::InitKind::kNormal;
  case InitKind::uniform:
    return art::InitKind::kUniform;
  case InitKind::xavier:
    return art::InitKind::kXavier;
  case InitKind::kaiming:
    return art::InitKind::kKaiming;
  }
  return art::InitKind::kZeros;
}

/// `value`'s elements as a buffer of `dtype` holds them: row-major, little
/// endian, i1 one byte per element, floats rounded to nearest even. The
/// attribute's own bytes when they are already that (they live as long as
/// the MLIR context); a copy otherwise.
static art::InitialValue storedBytes(DenseElementsAttr value,
                                     art::DType dtype) {
  Type element = value.getElementType();
  bool same = (dtype == art::DType::kF32 && element.isF32()) ||
              (dtype == art::DType::kBF16 && element.isBF16()) ||
              (dtype == art::DType::kF16 && element.isF16()) ||
              (dtype == art::DType::kI32 && element.isInteger(32));
  if (same && !value.isSplat()) {
    ArrayRef<char> raw = value.getRawData();
    return art::InitialValue{absl::string_view(raw.data(), raw.size()),
                             nullptr};
  }
  const size_t width = ::kiln::DTypeSize(dtype);
  auto bytes = std::make_shared<std::string>();
  bytes->reserve(value.getNumElements() * width);
  auto append = [&](uint64_t bits) {
    for (size_t k = 0; k < width; ++k)
      bytes->push_back(static_cast<char>(bits >> (8 * k)));
  };
  if (isa<FloatType>(element)) {
    const llvm::fltSemantics &semantics =
        dtype == art::DType::kBF16  ? llvm::APFloat::BFloat()
        : dtype == art::DType::kF16 ? llvm::APFloat::IEEEhalf()
                                    : llvm::APFloat::IEEEsingle();
    for (llvm::APFloat v : value.getValues<llvm::APFloat>()) {
      bool lost;
      v.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
      append(v.bitcastToAPInt().getZExtValue());
    }
  } else {
    for (const llvm::APInt &v : value.getValues<llvm::APInt>())
      append(element.isInteger(1) ? v.getZExtValue() : v.getSExtValue());
  }
  return art::InitialValue{*bytes, bytes};
}

/// The values the buffers start from: constants', and those of parameters
/// and state with a kiln.value, which then has no initialiser (the f32
/// master weight of a narrow parameter starts from the same values).
static bool setStartingValues(const CompiledModule &module,
                              const llvm::StringMap<uint32_t> &residentIndex,
                              art::ArtifactWriter &writer, std::string &error) {
  for (const ResidentInfo &resident : module.residents)
    if (resident.value)
      writer.SetInitialValue(
          residentIndex.lookup(resident.name),
          storedBytes(resident.value, dtypeOf(resident.type)));
  for (const ParameterInfo &param : module.parameters) {
    if (!param.value)
      continue;
    auto it = residentIndex.find(param.name);
    if (it == residentIndex.end()) {
      error = "parameter '" + param.name + "' has no resident buffer";
      return false;
    }
    writer.SetInitialValue(it->second,
                           storedBytes(param.value, dtypeOf(param.type)));
    auto master = residentIndex.find("master." + param.name);
    if (master != residentIndex.end())
      writer.SetInitialValue(master->second,
                             storedBytes(param.value, art::DType::kF32));
  }
  return true;
}

FailureOr<::kiln::artifact::ArtifactFile>
writeArtifact(const CompiledModule &module, std::string &error) {
  art::ArtifactWriter writer({module.arch});
  writer.mutable_artifact().producer = ::kiln::VersionLine("kilnc");
  llvm::StringMap<uint32_t> residentIndex;
  for (const ResidentInfo &resident : module.residents)
    residentIndex[resident.name] =
        writer.AddBuffer(resident.name, roleOf(resident.role),
                         dtypeOf(resident.type), shapeOf(resident.type));
  if (!setStartingValues(module, residentIndex, writer, error))
    return failure();
  for (const ParameterInfo &param : module.parameters) {
    if (param.value)
      continue;
    art::Parameter p;
    p.name = param.name;
    p.shape = shapeOf(param.type);
    p.dtype = dtypeOf(param.type);
    p.init = initKindOf(param.init.getKind());
    p.init_a = static_cast<float>(param.init.getFirstValue());
    p.init_b = static_cast<float>(param.init.getSecondValue());
    p.seed_stream = param.stream;
    auto it = residentIndex.find(param.name);
    if (it == residentIndex.end()) {
      error = "parameter '" + param.name + "' has no resident buffer";
      return failure();
    }
    p.buffer = it->second;
    writer.mutable_artifact().parameters.push_back(std::move(p));
  }

  auto bufferRef = [&](const SlotRef &slot, uint64_t size) {
    if (!slot.resident)
      return art::BufferRef::Arena(slot.offset, size);
    return art::BufferRef::Resident(residentIndex.lookup(slot.name),
                                    slot.offset, size);
  };
  for (const CompiledKernelImage &kernel : module.kernels) {
    art::Kernel k;
    k.name = kernel.name;
    k.content_hash = kernel.hash;
    art::KernelImage image;
    image.arch = kernel.arch;
    image.ptx = kernel.binary.ptx;
    image.cubin = kernel.binary.cubin;
    image.waits_for_predecessor = kernel.waitsForPredecessor;
    k.images.push_back(std::move(image));
    for (LaunchArg::Kind kind : kernel.params)
      k.params.push_back(kind == LaunchArg::Kind::I32   ? art::ArgKind::kI32
                         : kind == LaunchArg::Kind::I64 ? art::ArgKind::kI64
                         : kind == LaunchArg::Kind::F32 ? art::ArgKind::kF32
                         : kind == LaunchArg::Kind::TensorMap
                             ? art::ArgKind::kTensorMap
                             : art::ArgKind::kBuffer);
    writer.AddKernel(std::move(k));
  }
  for (const CompiledEntry &entry : module.entries) {
    art::Entry e;
    e.name = entry.name;
    e.arena_size = entry.arenaBytes;
    auto binding = [&](const TensorRef &t) {
      art::TensorBinding b;
      b.name = t.name;
      b.dtype = dtypeOf(t.type);
      b.shape = shapeOf(t.type);
      b.buffer = bufferRef(t.slot, t.slot.size);
      if (t.validRange)
        b.valid_range = art::ValueRange{t.validRange->low, t.validRange->high,
                                        t.validRange->ignoreIndex,
                                        t.validRange->use};
      return b;
    };
    for (const TensorRef &t : entry.inputs)
      e.inputs.push_back(binding(t));
    for (const TensorRef &t : entry.outputs)
      e.outputs.push_back(binding(t));
    for (const CompiledLaunch &launch : entry.launches) {
      art::Launch l;
      l.kernel = static_cast<uint32_t>(launch.kernel);
      l.grid = {launch.grid[0], launch.grid[1], launch.grid[2]};
      l.block = {launch.block[0], launch.block[1], launch.block[2]};
      l.dynamic_shared_bytes = launch.dynamicSharedBytes;
      l.cluster = {launch.cluster[0], launch.cluster[1], launch.cluster[2]};
      l.cooperative = launch.cooperative;
      l.persistent_blocks_per_sm = launch.persistentBlocksPerSm;
      for (const CompiledArg &arg : launch.args) {
        switch (arg.kind) {
        case LaunchArg::Kind::I32:
          l.args.push_back(art::Arg::I32(static_cast<int32_t>(arg.scalarBits)));
          break;
        case LaunchArg::Kind::I64:
          l.args.push_back(art::Arg::I64(static_cast<int64_t>(arg.scalarBits)));
          break;
        case LaunchArg::Kind::F32: {
          float value;
          uint32_t bits = static_cast<uint32_t>(arg.scalarBits);
          std::memcpy(&value, &bits, sizeof value);
          l.args.push_back(art::Arg::F32(value));
          break;
        }
        case LaunchArg::Kind::TensorMap: {
          const TensorMapLayout &layout = *arg.tensorMap;
          art::TensorMap map;
          map.mode = layout.im2col ? art::TensorMapMode::kIm2col
                                   : art::TensorMapMode::kTiled;
          map.dtype = dtypeOf(arg.bufferType);
          map.dims = layout.dims;
          map.strides = layout.strides;
          map.box = layout.box;
          map.element_strides = layout.elementStrides;
          map.lower_corner = layout.lowerCorner;
          map.upper_corner = layout.upperCorner;
          map.channels_per_pixel = layout.channelsPerPixel;
          map.pixels_per_column = layout.pixelsPerColumn;
          map.swizzle_bytes = layout.swizzleBytes;
          l.args.push_back(art::Arg::TensorMapOf(
              bufferRef(arg.slot, arg.slot.size), std::move(map)));
          break;
        }
        default:
          // A pointer: the kernel sees the start of the slot.
          l.args.push_back(
              art::Arg::Buffer(bufferRef(arg.slot, arg.slot.size)));
          break;
        }
      }
      e.launches.push_back(std::move(l));
    }
    for (const CompiledCollective &collective : entry.collectives) {
      art::Collective c;
      c.kind = art::CollectiveKind::kAllReduceAverage;
      c.after_launches = collective.afterLaunches;
      c.wait_before = collective.waitBefore;
      for (const TensorRef &t : collective.tensors)
        c.tensors.push_back(
            {t.name, dtypeOf(t.type), bufferRef(t.slot, t.slot.size)});
      e.collectives.push_back(std::move(c));
    }
    writer.AddEntry(std::move(e));
  }
  absl::StatusOr<art::ArtifactFile> file =
      art::LayOutValidArtifact(writer.artifact());
  if (!file.ok()) {
    error = std::string(file.status().message());
    return failure();
  }
  return *std::move(file);
}

} // namespace mlir::kiln::codegen
