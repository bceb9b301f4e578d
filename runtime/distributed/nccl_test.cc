// Opens the stand-in libnccl through KILN_NCCL_LIBRARY: every entry point
// resolves, results become Status values with NCCL's descriptions.
#include "runtime/distributed/nccl.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace kiln {
namespace distributed {
namespace {

TEST(NcclLibraryTest, OpensTheLibraryNamedByTheEnvironment) {
  setenv("KILN_NCCL_LIBRARY", "runtime/distributed/libfake_nccl.so", 1);
  auto nccl = NcclLibrary::Get();
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  EXPECT_EQ((*nccl)->path(), "runtime/distributed/libfake_nccl.so");
  EXPECT_EQ((*nccl)->version(), 22105);
  EXPECT_TRUE((*nccl)->Check(ncclSuccess, "ncclGroupStart").ok());
  absl::Status s = (*nccl)->Check(ncclRemoteError, "ncclAllReduce");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("ncclAllReduce failed: ncclRemoteError = 6 "
                             "(remote process exited or there was a network "
                             "error)"),
            std::string::npos)
      << s;
  // A usage error carries the library's last error message.
  EXPECT_EQ((*nccl)->api().ncclGroupEnd(), ncclInvalidUsage);
  s = (*nccl)->Check(ncclInvalidUsage, "ncclGroupEnd");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("ncclGroupEnd without ncclGroupStart"),
            std::string::npos)
      << s;
}

TEST(NcclLibraryTest, UniqueIdsDiffer) {
  auto nccl = NcclLibrary::Get();
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  ncclUniqueId a, b;
  ASSERT_TRUE(KILN_NCCL(*nccl, ncclGetUniqueId, &a).ok());
  ASSERT_TRUE(KILN_NCCL(*nccl, ncclGetUniqueId, &b).ok());
  EXPECT_NE(std::string(a.internal, sizeof(a.internal)),
            std::string(b.internal, sizeof(b.internal)));
}

}  // namespace
}  // namespace distributed
}  // namespace kiln
