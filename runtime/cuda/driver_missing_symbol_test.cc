// Opens a stand-in libcuda that lacks most entry points: the driver must
// refuse it with Unavailable naming the first missing symbol, never crash.
// (A separate binary: the driver is opened once per process.)
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver.h"

namespace kiln {
namespace {

TEST(CudaDriverTest, MissingEntryPointIsUnavailable) {
  setenv("KILN_LIBCUDA_PATH", "runtime/cuda/libfake_cuda_partial.so", 1);
  auto driver = CudaDriver::Get();
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
  // cuDriverGetVersion is the first entry point in the table the stand-in
  // does not export.
  EXPECT_NE(driver.status().message().find("lacks cuDriverGetVersion"),
            std::string::npos)
      << driver.status();
  EXPECT_EQ(Device::Open(0).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kiln
