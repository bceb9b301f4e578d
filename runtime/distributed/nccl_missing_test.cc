// Without NCCL the library reports Unavailable with a message that says
// what to do. (A binary of its own: the library is opened once per process.)
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "runtime/distributed/nccl.h"

namespace kiln {
namespace distributed {
namespace {

TEST(NcclLibraryTest, MissingLibraryIsUnavailable) {
  setenv("KILN_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  auto nccl = NcclLibrary::Get();
  ASSERT_FALSE(nccl.ok());
  EXPECT_EQ(nccl.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(nccl.status().message().find("/nonexistent/libnccl.so.2 not found"),
            std::string::npos)
      << nccl.status();
  // The outcome is kept.
  EXPECT_EQ(NcclLibrary::Get().status(), nccl.status());
}

TEST(NcclResultTest, StatusNamesCallResultAndLastError) {
  EXPECT_TRUE(NcclResultToStatus(ncclSuccess, "ncclAllReduce", "", "").ok());
  absl::Status s = NcclResultToStatus(ncclRemoteError, "ncclAllReduce",
                                      "remote process exited", "rank 1 died");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(),
            "ncclAllReduce failed: ncclRemoteError = 6 (remote process "
            "exited): rank 1 died");
  EXPECT_EQ(
      NcclResultToStatus(ncclInvalidUsage, "ncclGroupEnd", "x", "").code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NcclResultToStatus(ncclInternalError, "f", "x", "").code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(NcclResultName(static_cast<ncclResult_t>(42)),
            "unknown ncclResult_t");
}

}  // namespace
}  // namespace distributed
}  // namespace kiln
