#include "runtime/cuda/device.h"

#include "absl/strings/str_cat.h"
#include "kiln/status.h"

namespace kiln {

absl::StatusOr<int> Device::Count() {
  KILN_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  int count = 0;
  KILN_RETURN_IF_ERROR(KILN_CU(driver, cuDeviceGetCount, &count));
  return count;
}

absl::StatusOr<std::unique_ptr<Device>> Device::Open(int ordinal) {
  KILN_ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  KILN_ASSIGN_OR_RETURN(int count, Count());
  if (ordinal < 0 || ordinal >= count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA device ", ordinal, " does not exist: this machine has ", count,
        " device(s)"));
  }
  std::unique_ptr<Device> device(new Device());
  device->driver_ = driver;
  device->ordinal_ = ordinal;
  KILN_RETURN_IF_ERROR(KILN_CU(driver, cuDeviceGet, &device->device_, ordinal));

  char name[256] = {};
  KILN_RETURN_IF_ERROR(KILN_CU(driver, cuDeviceGetName, name, sizeof(name) - 1,
                               device->device_));
  device->name_ = name;

  auto attribute = [&](CUdevice_attribute which, int* value) {
    return KILN_CU(driver, cuDeviceGetAttribute, value, which, device->device_);
  };
  KILN_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 &device->capability_.major));
  KILN_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 &device->capability_.minor));
  KILN_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &device->sm_count_));
  KILN_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                &device->max_smem_optin_));
  int cluster_launch = 0, cooperative_launch = 0;
  KILN_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, &cluster_launch));
  KILN_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &cooperative_launch));
  device->cluster_launch_ = cluster_launch != 0;
  device->cooperative_launch_ = cooperative_launch != 0;
  KILN_RETURN_IF_ERROR(KILN_CU(driver, cuDeviceTotalMem, &device->total_memory_,
                               device->device_));

  KILN_RETURN_IF_ERROR(KILN_CU(driver, cuDevicePrimaryCtxRetain,
                               &device->context_, device->device_));
  KILN_RETURN_IF_ERROR(device->MakeCurrent());
  return device;
}

Device::~Device() {
  if (context_ != nullptr) {
    // Errors cannot be reported from a destructor; a failing release only
    // means the driver is already shutting down.
    (void)driver_->api().cuDevicePrimaryCtxRelease(device_);
  }
}

absl::Status Device::MakeCurrent() const {
  return KILN_CU(driver_, cuCtxSetCurrent, context_);
}

absl::StatusOr<MemoryInfo> Device::GetMemoryInfo() const {
  MemoryInfo info;
  KILN_RETURN_IF_ERROR(
      KILN_CU(driver_, cuMemGetInfo, &info.free_bytes, &info.total_bytes));
  return info;
}

absl::StatusOr<CUdeviceptr> Device::Allocate(size_t bytes) const {
  CUdeviceptr pointer = 0;
  absl::Status status = KILN_CU(driver_, cuMemAlloc, &pointer, bytes);
  if (!status.ok()) {
    return Annotate(status, absl::StrCat("allocating ", bytes, " bytes on ",
                                         name_, " (device ", ordinal_, ")"));
  }
  return pointer;
}

absl::Status Device::Free(CUdeviceptr pointer) const {
  return KILN_CU(driver_, cuMemFree, pointer);
}

absl::Status Device::Synchronize() const {
  return KILN_CU(driver_, cuCtxSynchronize);
}

}  // namespace kiln
