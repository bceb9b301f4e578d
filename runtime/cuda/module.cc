#include "runtime/cuda/module.h"

#include <cstdint>

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

absl::Status Kernel::Launch(const Stream& stream, const LaunchConfig& config,
                            void** args) const {
  if (function_ == nullptr) {
    return absl::FailedPreconditionError("launching an empty Kernel");
  }
  absl::Status status;
  if (config.programmatic_serialization) {
    CUlaunchAttribute attribute = {};
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig launch = {};
    launch.gridDimX = config.grid.x;
    launch.gridDimY = config.grid.y;
    launch.gridDimZ = config.grid.z;
    launch.blockDimX = config.block.x;
    launch.blockDimY = config.block.y;
    launch.blockDimZ = config.block.z;
    launch.sharedMemBytes = config.shared_memory_bytes;
    launch.hStream = stream.handle();
    launch.attrs = &attribute;
    launch.numAttrs = 1;
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
        absl::StrCat("kernel ", name_, " grid (", config.grid.x, ",",
                     config.grid.y, ",", config.grid.z, ") block (",
                     config.block.x, ",", config.block.y, ",", config.block.z,
                     ") shared ", config.shared_memory_bytes));
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
  return Kernel(&device_->driver(), function, name);
}

}  // namespace kiln
