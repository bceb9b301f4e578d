// CPU tests of the driver layer. Each test decides from the environment it
// runs in: without libcuda.so.1 the runtime must report Unavailable clearly.
#include "runtime/cuda/driver.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "runtime/cuda/device.h"

namespace kiln {
namespace {

bool SystemHasDriver() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST(CudaResultToStatusTest, NamesCallAndResult) {
  absl::Status status =
      CudaResultToStatus(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc",
                         "CUDA_ERROR_OUT_OF_MEMORY", "out of memory");
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

TEST(CudaResultToStatusTest, SuccessIsOk) {
  EXPECT_TRUE(CudaResultToStatus(CUDA_SUCCESS, "cuInit", "", "").ok());
}

TEST(CudaResultToStatusTest, MapsCodes) {
  EXPECT_EQ(CudaResultToStatus(CUDA_ERROR_INVALID_VALUE, "f", "n", "d").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaResultToStatus(CUDA_ERROR_NOT_FOUND, "f", "n", "d").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(CudaResultToStatus(CUDA_ERROR_NO_DEVICE, "f", "n", "d").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(CudaResultToStatus(CUDA_ERROR_LAUNCH_FAILED, "f", "n", "d").code(),
            absl::StatusCode::kInternal);
}

TEST(CudaDriverTest, WithoutDriverEverythingIsUnavailable) {
  if (SystemHasDriver()) GTEST_SKIP() << "this machine has a CUDA driver";
  unsetenv("KILN_LIBCUDA_PATH");
  auto driver = CudaDriver::Get();
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(driver.status().message().find(
                "libcuda.so.1 not found: no NVIDIA driver on this machine"),
            std::string::npos)
      << driver.status();
  EXPECT_FALSE(CudaDriver::Available());

  auto device = Device::Open(0);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kUnavailable);
  auto count = Device::Count();
  EXPECT_EQ(count.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kiln
