// The all-reduce bus bandwidth of this machine's GPUs through kiln's NCCL
// layer (runtime/distributed): one rank per process, started by
// torchrun-like variables (RANK, WORLD_SIZE, LOCAL_RANK and
// KILN_RENDEZVOUS_FILE or MASTER_ADDR/MASTER_PORT; kiln-run --nproc sets
// them the same way), or alone as one rank.
//
//   allreduce_probe [--mib 256] [--iters 20] [--warmup 5]
//
// Checks the average first (rank r holds r + 1 everywhere: the mean is
// (n + 1) / 2), then times in-place f32 all-reduces with events and prints,
// on rank 0, the algorithm bandwidth (bytes / time) and the bus bandwidth
// (algorithm bandwidth x 2 (n - 1) / n, as nccl-tests reports it).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "kiln/status.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/stream.h"
#include "runtime/distributed/communicator.h"
#include "runtime/distributed/config.h"

namespace kiln {
namespace {

struct Options {
  int64_t mib = 256;
  int iters = 20;
  int warmup = 5;
};

absl::StatusOr<Options> ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (arg != name || i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (const char* v = value("--mib")) {
      if (!absl::SimpleAtoi(v, &o.mib) || o.mib < 1)
        return absl::InvalidArgumentError("--mib must be a positive integer");
    } else if (const char* v = value("--iters")) {
      if (!absl::SimpleAtoi(v, &o.iters) || o.iters < 1)
        return absl::InvalidArgumentError("--iters must be >= 1");
    } else if (const char* v = value("--warmup")) {
      if (!absl::SimpleAtoi(v, &o.warmup) || o.warmup < 0)
        return absl::InvalidArgumentError("--warmup must be >= 0");
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown argument '", arg,
          "' (usage: allreduce_probe [--mib 256] [--iters 20] [--warmup 5])"));
    }
  }
  return o;
}

absl::Status Probe(const Options& o) {
  KILN_ASSIGN_OR_RETURN(std::optional<distributed::DistributedConfig> env,
                        distributed::ConfigFromEnvironment());
  const distributed::DistributedConfig config =
      env.value_or(distributed::DistributedConfig());
  KILN_ASSIGN_OR_RETURN(auto device, Device::Open(config.local_rank));
  KILN_RETURN_IF_ERROR(device->MakeCurrent());
  KILN_ASSIGN_OR_RETURN(auto stream, Stream::Create(*device));
  KILN_ASSIGN_OR_RETURN(auto comm, distributed::Communicator::Create(config));
  const size_t count = static_cast<size_t>(o.mib) << 18;  // f32 elements
  const size_t bytes = count * 4;
  KILN_ASSIGN_OR_RETURN(CUdeviceptr buffer, device->Allocate(bytes));
  auto release = [&] { (void)device->Free(buffer); };

  std::vector<float> host(count, static_cast<float>(config.rank + 1));
  absl::Status s = stream->CopyToDevice(buffer, host.data(), bytes);
  if (s.ok()) {
    s = comm->AllReduce(buffer, buffer, count, DType::kF32,
                        distributed::ReduceOp::kAvg, stream->handle());
  }
  KILN_ASSIGN_OR_RETURN(auto start, Event::Create(*device));
  KILN_ASSIGN_OR_RETURN(auto end, Event::Create(*device));
  auto wait = [&](const Event& e, absl::string_view what) {
    return comm->WaitUntil([&e] { return e.IsComplete(); }, what);
  };
  if (s.ok()) s = end->Record(*stream);
  if (s.ok()) s = wait(*end, "the checked all-reduce");
  if (s.ok()) s = stream->CopyToHost(host.data(), buffer, bytes);
  if (s.ok()) s = stream->Synchronize();
  if (!s.ok()) {
    release();
    return s;
  }
  const float want = (config.world_size + 1) / 2.0f;
  for (size_t i = 0; i < count; i += 4093) {
    if (host[i] != want) {
      release();
      return absl::InternalError(
          absl::StrCat("rank ", config.rank, ": element ", i,
                       " of the average is ", host[i], ", not ", want));
    }
  }
  std::vector<float> ms;
  for (int i = 0; i < o.warmup + o.iters && s.ok(); ++i) {
    s = start->Record(*stream);
    if (s.ok()) {
      s = comm->AllReduce(buffer, buffer, count, DType::kF32,
                          distributed::ReduceOp::kSum, stream->handle());
    }
    if (s.ok()) s = end->Record(*stream);
    if (s.ok()) s = wait(*end, absl::StrCat("all-reduce ", i));
    if (s.ok() && i >= o.warmup) {
      absl::StatusOr<float> t = Event::ElapsedMs(*start, *end);
      s = t.status();
      if (s.ok()) ms.push_back(*t);
    }
  }
  release();
  KILN_RETURN_IF_ERROR(s);
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  const double algbw = bytes / (median * 1e-3) / 1e9;
  const int n = config.world_size;
  const double busbw = algbw * 2.0 * (n - 1) / n;
  if (config.rank == 0) {
    std::printf(
        "all-reduce f32 %lld MiB over %d rank(s): median %.3f ms (min %.3f), "
        "algbw %.1f GB/s, busbw %.1f GB/s (average checked)\n",
        static_cast<long long>(o.mib), n, median, ms.front(), algbw, busbw);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  absl::StatusOr<kiln::Options> options = kiln::ParseOptions(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "allreduce_probe: %s\n",
                 std::string(options.status().message()).c_str());
    return 2;
  }
  absl::Status s = kiln::Probe(*options);
  if (!s.ok()) {
    std::fprintf(stderr, "allreduce_probe: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
