// Communicators of 2 and 4 ranks (processes) on the stand-in libnccl: every
// collective's results, groups, and a rank that dies (the others fail with
// an error naming it, within the timeout, never hang).
#include "runtime/distributed/communicator.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "kiln/dtype.h"
#include "runtime/distributed/testing/multiprocess.h"

namespace kiln {
namespace distributed {
namespace {

using testing::RankResult;
using testing::RunRanks;

CUdeviceptr Dev(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

class CommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("KILN_NCCL_LIBRARY", "runtime/distributed/libfake_nccl.so", 1);
    unsetenv("KILN_FAKE_NCCL_EXIT_AT");
    unsetenv("KILN_FAKE_NCCL_TIMEOUT_MS");
  }

  DistributedConfig Config(int world_size, const std::string& name) {
    DistributedConfig config;
    config.world_size = world_size;
    const char* dir = std::getenv("TEST_TMPDIR");
    config.rendezvous_file = absl::StrCat(dir != nullptr ? dir : "/tmp", "/",
                                          name, "-", getpid(), "-", ++runs_);
    config.timeout = absl::Seconds(20);
    return config;
  }

  int runs_ = 0;
};

// Runs `body` with a communicator on every rank; a failing Status is the
// rank's report and exit status 2.
std::vector<RankResult> WithCommunicators(
    const DistributedConfig& base,
    const std::function<absl::Status(Communicator&)>& body) {
  return RunRanks(base.world_size, absl::Seconds(60),
                  [&](int rank, std::string* report) {
                    DistributedConfig config = base;
                    config.rank = rank;
                    auto comm = Communicator::Create(config);
                    if (!comm.ok()) {
                      *report = std::string(comm.status().message());
                      return 2;
                    }
                    absl::Status s = body(**comm);
                    if (!s.ok()) {
                      *report = std::string(s.message());
                      return 2;
                    }
                    return 0;
                  });
}

absl::Status Expect(bool ok, const std::string& what) {
  return ok ? absl::OkStatus() : absl::InternalError(what);
}

TEST_F(CommunicatorTest, CollectivesOfTwoAndFourRanks) {
  for (int world : {2, 4}) {
    SCOPED_TRACE(absl::StrCat(world, " ranks"));
    auto results =
        WithCommunicators(Config(world, "collectives"), [&](Communicator& c) {
          const int r = c.rank();
          const int n = c.world_size();
          // All-reduce (average, in place) of f32: rank r holds r + i.
          std::vector<float> x(6);
          for (int i = 0; i < 6; ++i) x[i] = static_cast<float>(r + i);
          if (auto s = c.AllReduce(Dev(x.data()), Dev(x.data()), 6, DType::kF32,
                                   ReduceOp::kAvg, nullptr);
              !s.ok())
            return s;
          for (int i = 0; i < 6; ++i) {
            if (x[i] != (n - 1) / 2.0f + i)
              return Expect(false, absl::StrCat("avg[", i, "] = ", x[i]));
          }
          // Sum of bf16 (1.0 each) and max of i32, grouped.
          std::vector<uint16_t> h(3, F32ToBf16(1.0f));
          std::vector<int32_t> m = {r, -r, 7};
          if (auto s = c.GroupStart(); !s.ok()) return s;
          if (auto s = c.AllReduce(Dev(h.data()), Dev(h.data()), 3,
                                   DType::kBF16, ReduceOp::kSum, nullptr);
              !s.ok())
            return s;
          if (auto s = c.AllReduce(Dev(m.data()), Dev(m.data()), 3, DType::kI32,
                                   ReduceOp::kMax, nullptr);
              !s.ok())
            return s;
          if (auto s = c.GroupEnd(); !s.ok()) return s;
          if (Bf16ToF32(h[2]) != n) return Expect(false, "bf16 sum");
          if (m[0] != n - 1 || m[1] != 0 || m[2] != 7)
            return Expect(false, "i32 max");
          // Reduce-scatter (sum): n chunks of 2; rank r gets chunk r.
          std::vector<float> full(2 * n, 1.0f), part(2, 0.0f);
          full[2 * r] = 10.0f;
          if (auto s = c.ReduceScatter(Dev(full.data()), Dev(part.data()), 2,
                                       DType::kF32, ReduceOp::kSum, nullptr);
              !s.ok())
            return s;
          if (part[0] != 10.0f + (n - 1) || part[1] != n)
            return Expect(false, "reduce-scatter");
          // All-gather: rank r's two values land at 2r.
          std::vector<float> mine = {float(r), float(10 * r)};
          std::vector<float> all(2 * n, -1.0f);
          if (auto s = c.AllGather(Dev(mine.data()), Dev(all.data()), 2,
                                   DType::kF32, nullptr);
              !s.ok())
            return s;
          for (int k = 0; k < n; ++k) {
            if (all[2 * k] != k || all[2 * k + 1] != 10 * k)
              return Expect(false, "all-gather");
          }
          // Broadcast from the last rank.
          std::vector<float> b = {float(r), float(r)};
          if (auto s = c.Broadcast(Dev(b.data()), Dev(b.data()), 2, DType::kF32,
                                   n - 1, nullptr);
              !s.ok())
            return s;
          return Expect(b[0] == n - 1 && b[1] == n - 1, "broadcast");
        });
    for (const RankResult& r : results) EXPECT_EQ(r.status, 0) << r.report;
  }
}

TEST_F(CommunicatorTest, ARankThatDiesFailsTheOthersNamingIt) {
  // Rank 1 exits at its third collective; the others must not hang.
  setenv("KILN_FAKE_NCCL_EXIT_AT", "1:2", 1);
  const absl::Time start = absl::Now();
  auto results = WithCommunicators(Config(3, "dies"), [](Communicator& c) {
    std::vector<float> x(4, 1.0f);
    for (int step = 0; step < 5; ++step) {
      if (auto s = c.AllReduce(Dev(x.data()), Dev(x.data()), 4, DType::kF32,
                               ReduceOp::kAvg, nullptr);
          !s.ok())
        return s;
      if (auto s =
              c.WaitUntil([] { return true; }, absl::StrCat("step ", step));
          !s.ok())
        return s;
    }
    return absl::OkStatus();
  });
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  EXPECT_EQ(results[1].status, 17);
  for (int r : {0, 2}) {
    EXPECT_EQ(results[r].status, 2);
    EXPECT_NE(results[r].report.find(absl::StrCat("rank ", r, ": step 2")),
              std::string::npos)
        << results[r].report;
    EXPECT_NE(results[r].report.find("ncclRemoteError"), std::string::npos)
        << results[r].report;
    EXPECT_NE(results[r].report.find("rank 1 (pid "), std::string::npos)
        << results[r].report;
  }
}

TEST_F(CommunicatorTest, StalledCollectiveTimesOutAndAborts) {
  // Rank 1 never issues its collective (but stays alive); rank 0's stand-in
  // gives up after 300 ms, and the watchdog of rank 1 (waiting for work that
  // never completes) after its own timeout.
  setenv("KILN_FAKE_NCCL_TIMEOUT_MS", "300", 1);
  DistributedConfig config = Config(2, "stall");
  config.timeout = absl::Milliseconds(500);
  auto results = WithCommunicators(config, [](Communicator& c) {
    if (c.rank() == 1) {
      absl::Status s =
          c.WaitUntil([] { return false; }, "the step's gradients");
      absl::SleepFor(absl::Milliseconds(500));
      // Failed communicators refuse further work.
      absl::Status again =
          c.AllReduce(0, 0, 0, DType::kF32, ReduceOp::kSum, nullptr);
      if (again.code() != absl::StatusCode::kFailedPrecondition)
        return absl::InternalError("a failed communicator accepted work");
      return s;
    }
    std::vector<float> x(4, 1.0f);
    if (auto s = c.AllReduce(Dev(x.data()), Dev(x.data()), 4, DType::kF32,
                             ReduceOp::kAvg, nullptr);
        !s.ok())
      return s;
    return c.CheckAsyncError();
  });
  EXPECT_EQ(results[0].status, 2);
  EXPECT_NE(results[0].report.find("rank 1 did not arrive at all-reduce #0"),
            std::string::npos)
      << results[0].report;
  EXPECT_EQ(results[1].status, 2);
  EXPECT_NE(results[1].report.find("rank 1: the step's gradients did not "
                                   "complete within 0.5 s"),
            std::string::npos)
      << results[1].report;
}

TEST_F(CommunicatorTest, RendezvousFailureNamesTheMissingRank) {
  DistributedConfig config = Config(2, "absent");
  config.timeout = absl::Milliseconds(300);
  config.rank = 0;
  auto comm = Communicator::Create(config);
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(comm.status().message().find("rank 1 did not arrive"),
            std::string::npos)
      << comm.status();
}

}  // namespace
}  // namespace distributed
}  // namespace kiln
