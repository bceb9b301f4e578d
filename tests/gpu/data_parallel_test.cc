// Data-parallel training of the linear-regression artifact (built with the
// collectives kilnc --data-parallel plans) by ranks that are processes:
// - 2 ranks, each with half of every global batch, end with the same
//   parameters as 1 rank that trains on the whole batches (the mean of the
//   halves' gradients is the whole batch's gradient), bit for bit equal to
//   each other; with graphs (the all-reduces captured in the step's graph,
//   on a second stream) and without;
// - forward_backward leaves the averaged gradients;
// - a communicator of 1 rank trains exactly as no communicator;
// - a rank that dies mid-training makes the other fail, naming it, within
//   the timeout.
// In CI it runs on the stand-in libcuda and libnccl (KILN_LIBCUDA_PATH,
// KILN_NCCL_LIBRARY are set to them unless given). With
// KILN_DATA_PARALLEL_TEST_REAL=1 it runs on the machine's driver and NCCL
// (KILN_NCCL_LIBRARY or libnccl.so.2), rank r on device r: 2 GPUs for the
// two-rank tests (tests/gpu/distributed/run.sh runs it so); the dying rank
// needs the stand-in's hook and is skipped there.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime/distributed/communicator.h"
#include "runtime/distributed/testing/multiprocess.h"
#include "tests/gpu/linreg_artifact.h"

namespace kiln {
namespace {

using distributed::Communicator;
using distributed::DistributedConfig;
using distributed::testing::RankResult;
using distributed::testing::RunRanks;
using testing::LinRegData;
using testing::LinRegOptions;

constexpr int kGlobalBatch = 16;
constexpr int kSteps = 4;

void SetDefaultEnv(const char* name, const char* value) {
  const char* set = std::getenv(name);
  if (set == nullptr || *set == '\0') setenv(name, value, 1);
}

LinRegOptions Options(int batch, bool data_parallel) {
  LinRegOptions o;
  o.batch = batch;
  o.optimizer = testing::LinRegOptimizer::kSgd;
  o.data_parallel = data_parallel;
  return o;
}

// Rows [first, first + rows) of step `step`'s global batch.
Inputs Slice(const LinRegData& d, const LinRegOptions& o, int step, int first,
             int rows) {
  const size_t row0 = size_t(step) * kGlobalBatch + first;
  std::vector<float> x(d.x.begin() + row0 * o.in,
                       d.x.begin() + (row0 + rows) * o.in);
  std::vector<float> y(d.y.begin() + row0 * o.out,
                       d.y.begin() + (row0 + rows) * o.out);
  return {{"x", Input::F32({rows, o.in}, x)},
          {"y", Input::F32({rows, o.out}, y)}};
}

std::string Hex(const std::vector<float>& v) {
  std::string out;
  for (float f : v) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    absl::StrAppend(&out, absl::Hex(bits, absl::kZeroPad8), " ");
  }
  return out;
}

std::vector<float> FromHex(const std::string& text) {
  std::vector<float> out;
  for (absl::string_view word :
       absl::StrSplit(text, ' ', absl::SkipWhitespace())) {
    const uint32_t bits =
        static_cast<uint32_t>(std::stoul(std::string(word), nullptr, 16));
    float f;
    std::memcpy(&f, &bits, 4);
    out.push_back(f);
  }
  return out;
}

struct RunMode {
  bool use_graphs = true;
  // Split entries (forward_backward + apply_update) instead of train_step.
  bool split = false;
  int steps = kSteps;
};

// Trains `kSteps` steps as rank `rank` of `world` (world 0: no
// communicator) on its share of each global batch; returns w and b (and,
// for split runs, the last gradients) as hex floats, or an error.
absl::StatusOr<std::string> Train(int rank, int world,
                                  const std::string& rendezvous,
                                  const RunMode& run) {
  const int ranks = world == 0 ? 1 : world;
  const LinRegOptions o = Options(kGlobalBatch / ranks, world > 0);
  const LinRegData data =
      testing::MakeLinRegData(kGlobalBatch * kSteps, o.in, o.out, 11);
  KILN_ASSIGN_OR_RETURN(auto rt, Runtime::Open(rank));
  KILN_ASSIGN_OR_RETURN(std::string bytes, testing::LinRegArtifactBytes(o));
  KILN_ASSIGN_OR_RETURN(auto module, rt->LoadFromMemory(bytes));
  TrainerOptions options;
  options.seed = 3;
  options.use_graphs = run.use_graphs;
  if (world > 0) {
    DistributedConfig config;
    config.rank = rank;
    config.world_size = world;
    config.rendezvous_file = rendezvous;
    config.timeout = absl::Seconds(20);
    KILN_ASSIGN_OR_RETURN(options.communicator, Communicator::Create(config));
  }
  KILN_ASSIGN_OR_RETURN(auto trainer, module->NewTrainer(options));
  for (int step = 0; step < run.steps; ++step) {
    const Inputs batch = Slice(data, o, step, rank * o.batch, o.batch);
    if (run.split) {
      KILN_RETURN_IF_ERROR(trainer->ForwardBackward(batch).status());
      KILN_RETURN_IF_ERROR(trainer->ApplyUpdate(0.05f));
    } else {
      KILN_RETURN_IF_ERROR(trainer->Step(batch, 0.05f).status());
    }
  }
  // With a communicator: the first call runs without a graph (NCCL's
  // warm-up), later ones replay the captured graph, the all-reduces in it:
  // 2 collectives issued directly, 2 into the capture.
  const ExecutionStats stats = trainer->stats();
  if (world > 0 && run.use_graphs && !run.split && run.steps > 1 &&
      (stats.graph_captures != 1 || stats.graph_replays != run.steps - 1 ||
       stats.collectives != 4)) {
    return absl::InternalError(
        absl::StrCat("expected 1 capture, ", run.steps - 1,
                     " replays and 4 collectives, got ", stats.graph_captures,
                     ", ", stats.graph_replays, ", ", stats.collectives));
  }
  std::string out;
  for (const char* name : {"w", "b", "grad.w", "grad.b"}) {
    KILN_ASSIGN_OR_RETURN(Tensor t, trainer->Buffer(name));
    KILN_ASSIGN_OR_RETURN(HostTensor host, rt->Download(t));
    std::vector<float> v(host.data.size() / 4);
    std::memcpy(v.data(), host.data.data(), host.data.size());
    absl::StrAppend(&out, Hex(v), "|");
  }
  return out;
}

class DataParallelTest : public ::testing::Test {
 protected:
  static bool Real() {
    const char* real = std::getenv("KILN_DATA_PARALLEL_TEST_REAL");
    return real != nullptr && std::string(real) == "1";
  }

  static void SetUpTestSuite() {
    if (Real()) return;
    SetDefaultEnv("KILN_LIBCUDA_PATH", "runtime/cuda/libfake_cuda.so");
    SetDefaultEnv("KILN_NCCL_LIBRARY", "runtime/distributed/libfake_nccl.so");
    SetDefaultEnv("KILN_FAKE_CUDA_DEVICES", "2");
  }

  std::string Rendezvous(const std::string& name) {
    const char* dir = std::getenv("TEST_TMPDIR");
    return absl::StrCat(dir != nullptr ? dir : "/tmp", "/dp-", name, "-",
                        getpid(), "-", ++runs_);
  }

  // Each rank's result (as Train returns it) in its own process.
  std::vector<RankResult> TrainRanks(int world, const RunMode& run,
                                     const std::string& name) {
    const std::string rendezvous = Rendezvous(name);
    return RunRanks(world == 0 ? 1 : world, absl::Seconds(60),
                    [&](int rank, std::string* report) {
                      auto result = Train(rank, world, rendezvous, run);
                      *report = result.ok()
                                    ? *result
                                    : std::string(result.status().message());
                      return result.ok() ? 0 : 2;
                    });
  }

  int runs_ = 0;
};

// The parts of a Train result: w, b, grad.w, grad.b.
std::vector<std::vector<float>> Parts(const std::string& report) {
  std::vector<std::vector<float>> parts;
  for (absl::string_view part : absl::StrSplit(report, '|')) {
    if (!part.empty()) parts.push_back(FromHex(std::string(part)));
  }
  return parts;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])))
        << what << "[" << i << "]";
  }
}

TEST_F(DataParallelTest, TwoRanksWithHalfBatchesMatchOneRankOnWholeBatches) {
  for (const RunMode run :
       {RunMode{true, false}, RunMode{false, false}, RunMode{true, true}}) {
    SCOPED_TRACE(absl::StrCat("graphs ", run.use_graphs, " split ", run.split));
    std::vector<RankResult> one = TrainRanks(0, run, "one");
    ASSERT_EQ(one[0].status, 0) << one[0].report;
    std::vector<RankResult> two = TrainRanks(2, run, "two");
    ASSERT_EQ(two[0].status, 0) << two[0].report;
    ASSERT_EQ(two[1].status, 0) << two[1].report;
    // The ranks agree bit for bit: every rank reduces in the same order.
    EXPECT_EQ(two[0].report, two[1].report);
    const auto single = Parts(one[0].report);
    const auto parallel = Parts(two[0].report);
    ASSERT_EQ(single.size(), 4u);
    ASSERT_EQ(parallel.size(), 4u);
    ExpectNear(parallel[0], single[0], "w");
    ExpectNear(parallel[1], single[1], "b");
    // The last step's gradients (averaged) are the whole batch's.
    ExpectNear(parallel[2], single[2], "grad.w");
    ExpectNear(parallel[3], single[3], "grad.b");
    // Training moved the parameters (the comparison is not of untouched
    // initial values).
    RunMode none = run;
    none.steps = 0;
    std::vector<RankResult> untrained = TrainRanks(0, none, "untrained");
    ASSERT_EQ(untrained[0].status, 0) << untrained[0].report;
    EXPECT_NE(Parts(untrained[0].report)[0], single[0]);
  }
}

TEST_F(DataParallelTest, OneRankTrainsExactlyAsWithoutACommunicator) {
  std::vector<RankResult> none = TrainRanks(0, RunMode{}, "none");
  std::vector<RankResult> one = TrainRanks(1, RunMode{}, "single");
  ASSERT_EQ(none[0].status, 0) << none[0].report;
  ASSERT_EQ(one[0].status, 0) << one[0].report;
  EXPECT_EQ(one[0].report, none[0].report);
}

TEST_F(DataParallelTest, ARankThatDiesFailsTheOtherNamingIt) {
  if (Real())
    GTEST_SKIP() << "needs the stand-in libnccl's KILN_FAKE_NCCL_EXIT_AT";
  // Rank 1 exits at its fifth collective (the third step's first bucket).
  setenv("KILN_FAKE_NCCL_EXIT_AT", "1:4", 1);
  const absl::Time start = absl::Now();
  std::vector<RankResult> two = TrainRanks(2, RunMode{}, "dies");
  unsetenv("KILN_FAKE_NCCL_EXIT_AT");
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_EQ(two[1].status, 17);
  EXPECT_EQ(two[0].status, 2);
  EXPECT_NE(two[0].report.find("rank 0: entry 'train_step'"), std::string::npos)
      << two[0].report;
  EXPECT_NE(two[0].report.find("rank 1 (pid "), std::string::npos)
      << two[0].report;
}

}  // namespace
}  // namespace kiln
