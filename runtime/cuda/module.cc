#include "runtime/cuda/module.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "kiln/status.h"

namespace kiln {

KernelArgs& KernelArgs::AddBytes(const void* data, size_t size) {
  std::vector<uint64_t> chunk((size + 7) / 8 + (size == 0 ? 1 : 0), 0);
  std::memcpy(chunk.data(), data, size);
  storage_.push_back(std::move(chunk));
  return *this;
}

void** KernelArgs::pointers() {
  pointers_.clear();
  for (auto& chunk : storage_) pointers_.push_back(chunk.data());
  pointers_.push_back(nullptr);
  return pointers_.data();
}

absl::Status Kernel::SetMaxDynamicSharedMemory(int bytes) const {
  return Annotate(
      KILN_CU(driver_, cuFuncSetAttribute, function_,
              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
      absl::StrCat("kernel ", name_));
}

absl::Status Kernel::AllowNonPortableClusterSize() const {
  return Annotate(
      KILN_CU(driver_, cuFuncSetAttribute, function_,
              CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
      absl::StrCat("kernel ", name_));
}

namespace {

std::string DimString(const Dim3& d) {
  return absl::StrCat("(", d.x, ",", d.y, ",", d.z, ")");
}

uint64_t Blocks(const Dim3& d) { return uint64_t{d.x} * d.y * d.z; }

// The geometry of `config` with `count` launch attributes, for
// cuLaunchKernelEx and the occupancy queries (the caller sets the stream).
CUlaunchConfig ExtendedLaunch(const LaunchConfig& config,
                              CUlaunchAttribute* attributes,
                              unsigned int count) {
  CUlaunchConfig launch = {};
  launch.gridDimX = config.grid.x;
  launch.gridDimY = config.grid.y;
  launch.gridDimZ = config.grid.z;
  launch.blockDimX = config.block.x;
  launch.blockDimY = config.block.y;
  launch.blockDimZ = config.block.z;
  launch.sharedMemBytes = config.shared_memory_bytes;
  launch.attrs = attributes;
  launch.numAttrs = count;
  return launch;
}

}  // namespace

absl::Status Kernel::CheckDevice(const LaunchConfig& config) const {
  if (config.clustered() && !device_->supports_clusters()) {
    const ComputeCapability cc = device_->compute_capability();
    return absl::FailedPreconditionError(absl::StrCat(
        "kernel ", name_, " is launched in clusters of ",
        DimString(config.cluster), " blocks, but ", device_->name(),
        " (compute capability ", cc.major, ".", cc.minor,
        ") has no thread-block clusters (9.0 and newer)"));
  }
  if (config.cooperative && !device_->supports_cooperative_launch()) {
    return absl::FailedPreconditionError(
        absl::StrCat("kernel ", name_, " is launched cooperatively, but ",
                     device_->name(), " has no cooperative launches"));
  }
  return absl::OkStatus();
}

absl::Status Kernel::CheckLaunchable(const LaunchConfig& config) const {
  if (function_ == nullptr) {
    return absl::FailedPreconditionError("checking an empty Kernel");
  }
  KILN_RETURN_IF_ERROR(CheckDevice(config));
  const uint64_t threads = Blocks(config.block);
  if (config.cooperative) {
    int per_sm = 0;
    KILN_RETURN_IF_ERROR(
        Annotate(KILN_CU(driver_, cuOccupancyMaxActiveBlocksPerMultiprocessor,
                         &per_sm, function_, static_cast<int>(threads),
                         config.shared_memory_bytes),
                 absl::StrCat("kernel ", name_)));
    const uint64_t resident = uint64_t(per_sm) * device_->sm_count();
    if (Blocks(config.grid) > resident) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "kernel ", name_, " is launched cooperatively with grid ",
          DimString(config.grid), " = ", Blocks(config.grid),
          " blocks, but only ", resident, " blocks of ", threads,
          " threads with ", config.shared_memory_bytes,
          " bytes of dynamic shared memory fit on ", device_->name(),
          " at once (", per_sm, " per SM x ", device_->sm_count(), " SMs)"));
    }
  }
  if (config.clustered()) {
    CUlaunchAttribute attribute = {};
    attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = config.cluster.x;
    attribute.value.clusterDim.y = config.cluster.y;
    attribute.value.clusterDim.z = config.cluster.z;
    CUlaunchConfig launch = ExtendedLaunch(config, &attribute, 1);
    int clusters = 0;
    KILN_RETURN_IF_ERROR(Annotate(
        KILN_CU(driver_, cuOccupancyMaxActiveClusters, &clusters, function_,
                &launch),
        absl::StrCat("kernel ", name_, " cluster ", DimString(config.cluster),
                     " block ", DimString(config.block))));
    if (clusters < 1) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "kernel ", name_, ": not one cluster of ", DimString(config.cluster),
          " blocks of ", threads, " threads with ", config.shared_memory_bytes,
          " bytes of dynamic shared memory fits on ", device_->name()));
    }
  }
  return absl::OkStatus();
}

absl::Status Kernel::Launch(const Stream& stream, const LaunchConfig& config,
                            void** args) const {
  if (function_ == nullptr) {
    return absl::FailedPreconditionError("launching an empty Kernel");
  }
  KILN_RETURN_IF_ERROR(CheckDevice(config));
  // Every attribute the launch asks for, at most one of each kind.
  CUlaunchAttribute attributes[3] = {};
  unsigned int count = 0;
  if (config.programmatic_serialization) {
    attributes[count].id =
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attributes[count].value.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  if (config.clustered()) {
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[count].value.clusterDim.x = config.cluster.x;
    attributes[count].value.clusterDim.y = config.cluster.y;
    attributes[count].value.clusterDim.z = config.cluster.z;
    ++count;
  }
  if (config.cooperative) {
    attributes[count].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attributes[count].value.cooperative = 1;
    ++count;
  }
  absl::Status status;
  if (count > 0) {
    CUlaunchConfig launch = ExtendedLaunch(config, attributes, count);
    launch.hStream = stream.handle();
    status =
        KILN_CU(driver_, cuLaunchKernelEx, &launch, function_, args, nullptr);
  } else {
    status = KILN_CU(driver_, cuLaunchKernel, function_, config.grid.x,
                     config.grid.y, config.grid.z, config.block.x,
                     config.block.y, config.block.z, config.shared_memory_bytes,
                     stream.handle(), args, nullptr);
  }
  if (!status.ok()) {
    return Annotate(
        status,
        absl::StrCat(
            "kernel ", name_, " grid ", DimString(config.grid), " block ",
            DimString(config.block), " shared ", config.shared_memory_bytes,
            config.clustered() ? " cluster " + DimString(config.cluster) : "",
            config.cooperative ? " cooperative" : ""));
  }
  return status;
}

absl::StatusOr<std::unique_ptr<CudaModule>> CudaModule::LoadImage(
    const Device& device, absl::string_view image, bool is_ptx) {
  const CudaDriver* driver = &device.driver();
  // cuModuleLoadDataEx reads PTX as a NUL-terminated string.
  std::string owned(image);
  constexpr size_t kLogSize = 16 * 1024;
  std::vector<char> info_log(kLogSize, '\0');
  std::vector<char> error_log(kLogSize, '\0');
  CUjit_option options[] = {
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {
      info_log.data(),
      reinterpret_cast<void*>(static_cast<uintptr_t>(kLogSize - 1)),
      error_log.data(),
      reinterpret_cast<void*>(static_cast<uintptr_t>(kLogSize - 1))};
  CUmodule module = nullptr;
  absl::Status status =
      KILN_CU(driver, cuModuleLoadDataEx, &module, owned.c_str(),
              sizeof(options) / sizeof(options[0]), options, values);
  if (!status.ok()) {
    std::string log(error_log.data());
    return Annotate(
        status,
        absl::StrCat("loading a ", is_ptx ? "PTX" : "cubin", " module on ",
                     device.name(), log.empty() ? "" : "; JIT log: ", log));
  }
  std::unique_ptr<CudaModule> result(new CudaModule(&device, module));
  result->loaded_cubin_ = !is_ptx;
  result->info_log_ = info_log.data();
  return result;
}

absl::StatusOr<std::unique_ptr<CudaModule>> CudaModule::Load(
    const Device& device, const ModuleImages& images) {
  const int sm = device.compute_capability().sm();
  for (const ModuleImages::Cubin& cubin : images.cubins) {
    if (cubin.sm == sm) return LoadImage(device, cubin.data, /*is_ptx=*/false);
  }
  if (images.ptx.empty()) {
    std::string have;
    for (const ModuleImages::Cubin& cubin : images.cubins) {
      absl::StrAppend(&have, have.empty() ? "" : ", ", "sm_", cubin.sm);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "no code for ", device.name(), " (sm_", sm,
        "): the module has no PTX and cubins only for [", have, "]"));
  }
  return LoadImage(device, images.ptx, /*is_ptx=*/true);
}

CudaModule::~CudaModule() {
  (void)device_->driver().api().cuModuleUnload(module_);
}

absl::StatusOr<Kernel> CudaModule::GetKernel(const std::string& name) const {
  CUfunction function = nullptr;
  absl::Status status = KILN_CU(&device_->driver(), cuModuleGetFunction,
                                &function, module_, name.c_str());
  if (!status.ok()) {
    return Annotate(status, absl::StrCat("kernel '", name, "'"));
  }
  return Kernel(device_, function, name);
}

}  // namespace kiln
