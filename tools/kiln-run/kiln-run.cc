// kiln-run: runs a kiln artifact on the GPU.
//
//   kiln-run model.kiln --entry forward --inputs in.safetensors \
//       [--params ckpt.safetensors] [--output out.safetensors] \
//       [--check expected.safetensors --rtol 1e-5 --atol 1e-6] \
//       [--bench --warmup 10 --iters 100]
//   kiln-run model.kiln --steps 1000 --dataset data.kilndata \
//       --batch-fields x,y --lr 3e-3 --schedule cosine --warmup 100 \
//       --seed 0 --checkpoint out.safetensors [--resume in.safetensors]
//   kiln-run model.kiln --params ckpt.safetensors --dataset heldout.kilndata \
//       --batch-fields x,y
//   kiln-run model.kiln --nproc 2 --steps 1000 ...    data parallel
//   kiln-run model.kiln --describe                      what it holds
//
// Every file and flag is checked against the artifact before the driver is
// opened (preflight.h); --dry-run stops there. docs/kiln-run.md has more.
// Exit status: 0 on success, 1 when a check or running failed or --check
// found a mismatch (or NaN), 2 for bad command lines.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime/artifact/artifact.h"
#include "runtime/cuda/device.h"
#include "runtime/distributed/communicator.h"
#include "runtime/distributed/config.h"
#include "runtime/io/atomic_file.h"
#include "runtime/memory/pool.h"
#include "tools/kiln-run/describe.h"
#include "tools/kiln-run/flags.h"
#include "tools/kiln-run/inference.h"
#include "tools/kiln-run/preflight.h"
#include "tools/kiln-run/rank_launcher.h"
#include "tools/kiln-run/ranks.h"
#include "tools/kiln-run/training.h"

namespace kiln {
namespace {

// Prints `status` as kiln-run's error (`who`: which rank, if any) and
// returns the exit status 1.
int Fail(const std::string& who, const absl::Status& status) {
  std::fprintf(stderr, "kiln-run%s: %s\n", who.c_str(),
               std::string(status.ToString()).c_str());
  return 1;
}

// --describe: the artifact's contents, from the file alone.
int Describe(const std::string& path) {
  absl::StatusOr<std::string> bytes = io::ReadFile(path);
  absl::StatusOr<artifact::Artifact> artifact =
      bytes.ok() ? artifact::LoadArtifact(*bytes) : bytes.status();
  if (!artifact.ok()) {
    std::fprintf(stderr, "kiln-run: %s\n",
                 Annotate(artifact.status(), path).ToString().c_str());
    return 1;
  }
  std::fputs(DescribeArtifact(*artifact, path, bytes->size()).c_str(), stdout);
  return 0;
}

// --dry-run: what the run would do, once every record of the dataset has
// passed the checks the run makes as it reads them.
int DryRun(const Flags& flags, const RunPlan& plan, int world_size) {
  absl::StatusOr<uint64_t> records = CheckEveryRecord(plan);
  if (!records.ok()) {
    std::fprintf(stderr, "kiln-run: %s\n", records.status().ToString().c_str());
    return 1;
  }
  std::fputs(DescribeRun(plan, flags, world_size).c_str(), stdout);
  if (plan.dataset != nullptr) {
    std::printf("  read and checked all %llu records of %s\n",
                static_cast<unsigned long long>(*records),
                flags.dataset.c_str());
  }
  return 0;
}

// The launcher: N ranks of this command line, each of which finds RANK in
// its environment.
bool LaunchesRanks(const Flags& flags) {
  const char* rank_variable = std::getenv("RANK");
  return flags.nproc > 1 && (rank_variable == nullptr || *rank_variable == 0) &&
         !flags.dry_run;
}

// The files are checked once before any rank starts.
int CheckAndLaunchRanks(const Flags& flags, char** argv) {
  if (absl::Status checked = PlanRun(flags, flags.nproc).status();
      !checked.ok()) {
    return Fail("", checked);
  }
  LaunchOptions launch;
  launch.nproc = flags.nproc;
  return LaunchRanks(argv, launch);
}

// The run on the device (the rank's, with its communicator): training with
// --steps, else inference or evaluation.
int RunOnDevice(const Flags& flags, const RunPlan& plan,
                const std::optional<distributed::DistributedConfig>& config,
                Ranks& ranks, const std::string& who) {
  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      Runtime::Open(config ? config->local_rank : flags.device);
  if (!rt.ok()) return Fail(who, rt.status());
  if (config) {
    // On the rank's device (Runtime::Open made its context current).
    absl::StatusOr<std::unique_ptr<distributed::Communicator>> communicator =
        distributed::Communicator::Create(*config);
    if (!communicator.ok()) return Fail(who, communicator.status());
    ranks.communicator = std::move(*communicator);
  }
  (*rt)->pool().SetLimit(static_cast<size_t>(flags.memory_limit));
  absl::StatusOr<std::unique_ptr<Module>> module =
      (*rt)->LoadFromMemory(plan.artifact_bytes);
  if (!module.ok()) return Fail(who, Annotate(module.status(), flags.model));
  std::printf("%s on %s (sm_%d), kernels from %s\n", flags.model.c_str(),
              (*rt)->device().name().c_str(),
              (*rt)->device().compute_capability().sm(),
              (*module)->loaded_cubins() ? "cubins" : "PTX");
  absl::StatusOr<int> status =
      flags.steps ? RunTraining(flags, plan, **rt, **module, ranks)
                  : RunInference(flags, plan, **rt, **module);
  if (!status.ok() && ranks.communicator != nullptr) {
    // A failed rank leaves without tearing down: its streams may hold NCCL
    // work that waits for a peer that is gone.
    Fail(who, status.status());
    std::fflush(nullptr);
    _exit(1);
  }
  if (!status.ok()) return Fail(who, status.status());
  return *status;
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlagsOrExit(argc, argv);
  if (flags.mode == RunMode::kDescribe) return Describe(flags.model);
  if (LaunchesRanks(flags)) return CheckAndLaunchRanks(flags, argv);
  absl::StatusOr<std::optional<distributed::DistributedConfig>> config =
      RanksOf(flags);
  if (!config.ok()) return Fail("", config.status());
  Ranks ranks;
  std::string who;
  if (config->has_value()) {
    ranks.rank = (*config)->rank;
    ranks.world_size = (*config)->world_size;
    who = absl::StrCat(" (rank ", ranks.rank, " of ", ranks.world_size, ")");
    // One progress report: rank 0's. The others print only errors.
    if (ranks.rank > 0) {
      if (absl::Status silenced = SilenceStdout(); !silenced.ok()) {
        return Fail(who, silenced);
      }
    }
  }
  // Every file and flag against the artifact first, each file read once: a
  // bad one is reported as such, also on a machine without a GPU.
  const int world_size =
      config->has_value() ? ranks.world_size : std::max(1, flags.nproc);
  absl::StatusOr<RunPlan> plan = PlanRun(flags, world_size);
  if (!plan.ok()) return Fail(who, plan.status());
  if (flags.dry_run) return DryRun(flags, *plan, world_size);
  return RunOnDevice(flags, *plan, *config, ranks, who);
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) { return kiln::Main(argc, argv); }
