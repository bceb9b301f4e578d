// The rendezvous across real processes: file and TCP, 2 and 4 ranks, and a
// rank that never arrives (the others fail within the timeout, naming it).
#include "runtime/distributed/rendezvous.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "runtime/distributed/testing/multiprocess.h"

namespace kiln {
namespace distributed {
namespace {

using testing::RankResult;
using testing::RunRanks;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name, "-", getpid());
}

// A port that was free a moment ago.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

// Every rank must receive rank 0's payload.
std::vector<RankResult> Meet(DistributedConfig base, int world_size,
                             int absent_rank = -1) {
  base.world_size = world_size;
  return RunRanks(
      world_size, absl::Seconds(30), [&](int rank, std::string* report) {
        if (rank == absent_rank) return 0;
        DistributedConfig config = base;
        config.rank = rank;
        auto shared =
            Rendezvous(config, rank == 0 ? "id-from-rank-0" : "ignored");
        if (!shared.ok()) {
          *report = std::string(shared.status().message());
          return 2;
        }
        *report = *shared;
        return *shared == "id-from-rank-0" ? 0 : 3;
      });
}

class RendezvousTest : public ::testing::TestWithParam<int> {};

TEST_P(RendezvousTest, FileHandsRankZerosPayloadToAll) {
  DistributedConfig config;
  config.rendezvous_file = TempPath(absl::StrCat("rdv-file-", GetParam()));
  config.timeout = absl::Seconds(20);
  for (const RankResult& r : Meet(config, GetParam())) {
    EXPECT_EQ(r.status, 0) << r.report;
    EXPECT_EQ(r.report, "id-from-rank-0");
  }
}

TEST_P(RendezvousTest, TcpHandsRankZerosPayloadToAll) {
  DistributedConfig config;
  config.master_addr = "127.0.0.1";
  config.master_port = FreePort();
  config.timeout = absl::Seconds(20);
  for (const RankResult& r : Meet(config, GetParam())) {
    EXPECT_EQ(r.status, 0) << r.report;
    EXPECT_EQ(r.report, "id-from-rank-0");
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, RendezvousTest, ::testing::Values(2, 4));

TEST(RendezvousTest, FileNamesTheRankThatNeverArrives) {
  DistributedConfig config;
  config.rendezvous_file = TempPath("rdv-file-absent");
  config.timeout = absl::Seconds(1);
  const absl::Time start = absl::Now();
  std::vector<RankResult> results = Meet(config, 3, /*absent_rank=*/2);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  for (int r : {0, 1}) {
    EXPECT_EQ(results[r].status, 2);
    EXPECT_NE(results[r].report.find("rank 2 did not arrive at the rendezvous"),
              std::string::npos)
        << results[r].report;
  }
}

TEST(RendezvousTest, TcpNamesTheRankThatNeverArrives) {
  DistributedConfig config;
  config.master_addr = "127.0.0.1";
  config.master_port = FreePort();
  config.timeout = absl::Seconds(1);
  std::vector<RankResult> results = Meet(config, 3, /*absent_rank=*/1);
  EXPECT_EQ(results[0].status, 2);
  EXPECT_NE(results[0].report.find("rank 0: rank 1 did not join the "
                                   "rendezvous at 127.0.0.1:"),
            std::string::npos)
      << results[0].report;
  // Rank 2 waited for rank 0's answer, which never came.
  EXPECT_EQ(results[2].status, 2);
  EXPECT_NE(results[2].report.find("rank 2: rank 0 at 127.0.0.1:"),
            std::string::npos)
      << results[2].report;
}

TEST(RendezvousTest, TcpWithoutRankZeroTimesOut) {
  DistributedConfig config;
  config.master_addr = "127.0.0.1";
  config.master_port = FreePort();
  config.timeout = absl::Milliseconds(500);
  std::vector<RankResult> results = Meet(config, 2, /*absent_rank=*/0);
  EXPECT_EQ(results[1].status, 2);
  EXPECT_NE(results[1].report.find("rank 1: rank 0 did not open the "
                                   "rendezvous"),
            std::string::npos)
      << results[1].report;
}

TEST(RendezvousTest, StaleFileIsRefusedByRankZero) {
  DistributedConfig config;
  config.rendezvous_file = TempPath("rdv-stale");
  config.world_size = 2;
  config.timeout = absl::Seconds(1);
  FILE* f = std::fopen(config.rendezvous_file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  auto shared = Rendezvous(config, "id");
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(shared.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(shared.status().message().find("already exists"), std::string::npos)
      << shared.status();
}

TEST(RendezvousTest, OneRankNeedsNoRendezvous) {
  DistributedConfig config;
  auto shared = Rendezvous(config, "id");
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(*shared, "id");
}

}  // namespace
}  // namespace distributed
}  // namespace kiln
