// Internals of the host API (kiln/runtime.h): the state a Runtime and a
// Module share, and the Executor that owns one Session's or Trainer's
// resident buffers, arenas, graphs and stream.
#ifndef KILN_RUNTIME_SESSION_EXECUTOR_H_
#define KILN_RUNTIME_SESSION_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kiln/runtime.h"
#include "kiln/tensor.h"
#include "runtime/artifact/artifact.h"
#include "runtime/artifact/interface.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/graph.h"
#include "runtime/cuda/module.h"
#include "runtime/cuda/stream.h"
#include "runtime/memory/pool.h"

namespace kiln {
namespace session_internal {

// The runtime's gradient-tool kernels (grad_tools.cu), loaded from the
// embedded PTX on first use.
struct GradKernels {
  std::unique_ptr<CudaModule> module;
  Kernel partials;
  Kernel scale;
  Kernel clip_value;
  Kernel noise;
};

struct RuntimeState {
  // Destroyed in reverse order: the pool before the stream before the device.
  std::unique_ptr<Device> device;
  std::unique_ptr<Stream> stream;  // Upload, Download, output buffers
  std::shared_ptr<DevicePool> pool;

  absl::Mutex mu;
  std::unique_ptr<GradKernels> grad_kernels ABSL_GUARDED_BY(mu);
  absl::Status grad_kernels_status ABSL_GUARDED_BY(mu);
  bool grad_kernels_tried ABSL_GUARDED_BY(mu) = false;

  ~RuntimeState();
  StreamId stream_id() const;
  absl::StatusOr<const GradKernels*> GetGradKernels();
};

struct ModuleState {
  std::shared_ptr<RuntimeState> runtime;
  artifact::Artifact artifact;
  std::vector<std::unique_ptr<CudaModule>> modules;  // one per kernel
  std::vector<Kernel> kernels;                       // artifact.kernels order
  // Per kernel: the loaded image waits for its predecessor grids itself, so
  // it may be launched with programmatic stream serialization.
  std::vector<bool> waits_for_predecessor;
  bool all_cubins = true;
  ~ModuleState();
};

// Which inputs of an entry come from where.
using artifact::InputSource;
using artifact::SourceOf;

class Executor {
 public:
  static absl::StatusOr<std::unique_ptr<Executor>> Create(
      std::shared_ptr<ModuleState> module, const SessionOptions& options);
  ~Executor();

  const artifact::Artifact& artifact() const { return module_->artifact; }
  RuntimeState& runtime() const { return *module_->runtime; }
  const Stream& stream() const { return *stream_; }
  const artifact::Entry* FindEntry(absl::string_view name) const {
    return artifact().FindEntry(name);
  }
  // The named entry or NotFound listing the artifact's entries.
  absl::StatusOr<const artifact::Entry*> GetEntry(absl::string_view name) const;

  // Checks `inputs` against the caller's inputs of `entry`: names, dtypes,
  // shapes, host byte counts, contiguity of device tensors.
  absl::Status Validate(const artifact::Entry& entry,
                        const Inputs& inputs) const;
  // Validates, copies inputs (and lr, step where the entry takes them) into
  // the arena and runs the launch sequence (graph capture on the first call,
  // replay later); waits for the stream.
  absl::Status Call(const artifact::Entry& entry, const Inputs& inputs,
                    float lr, int32_t step);
  // The entry's arena outputs copied into buffers of their own.
  absl::StatusOr<Outputs> CollectOutputs(const artifact::Entry& entry);
  // The f32 scalar output `name` (or the entry's first rank-0 f32 arena
  // output when `name` is not an output).
  absl::StatusOr<float> ReadScalar(const artifact::Entry& entry,
                                   absl::string_view name);
  // Replays `entry` (called before, so its graph exists) `iterations` times,
  // each timed with events.
  absl::StatusOr<std::vector<float>> Time(const artifact::Entry& entry,
                                          int iterations);

  // Resident buffers.
  int FindResident(absl::string_view name) const;
  absl::StatusOr<Tensor> ResidentTensor(int index) const;
  std::vector<int> ResidentsWithRole(artifact::BufferRole role) const;
  absl::Status UploadResident(int index, const void* data, size_t bytes);
  absl::StatusOr<HostTensor> DownloadResident(int index);

  // Gradient tools over the given resident f32 buffers.
  absl::StatusOr<GradientStats> Stats(const std::vector<int>& buffers);
  absl::Status Scale(const std::vector<int>& buffers, float scale);
  absl::Status ClipValue(const std::vector<int>& buffers, float value);
  absl::Status Noise(const std::vector<int>& buffers, float stddev,
                     uint64_t seed, uint32_t offset);

  ExecutionStats stats() const { return stats_; }

  // After a device fault (an error once an entry's or a gradient tool's
  // kernels were launched) the resident buffers are undefined, partly
  // updated at best: every later call that runs kernels fails with
  // FailedPrecondition naming the fault, until ClearFault() after all of
  // them were loaded again (from a checkpoint).
  absl::Status CheckUsable() const;
  bool faulted() const { return !fault_.ok(); }
  const absl::Status& fault() const { return fault_; }
  void ClearFault() { fault_ = absl::OkStatus(); }

 private:
  struct EntryState {
    DeviceBuffer arena;
    std::vector<KernelArgs> args;  // one per launch
    std::unique_ptr<Graph> graph;
    // Per collective (when they run): recorded on the entry's stream where
    // the collective may start, and on the communication stream where it
    // has ended.
    std::vector<std::unique_ptr<Event>> collective_ready, collective_done;
    // Recorded at the end of each call, for the watchdog's wait.
    std::unique_ptr<Event> finished;
    // Calls so far. With a communicator the first runs without a graph:
    // NCCL sets up its connections on a collective's first use, which
    // belongs outside a capture (as PyTorch warms NCCL up before capturing).
    int64_t calls = 0;
  };

  Executor(std::shared_ptr<ModuleState> module, const SessionOptions& options)
      : module_(std::move(module)), options_(options) {}
  absl::Status Init();
  absl::StatusOr<EntryState*> Prepare(const artifact::Entry& entry);
  // How `launch` is launched on this device.
  LaunchConfig ConfigOf(const artifact::Launch& launch) const;
  DevicePtr Address(const EntryState& state,
                    const artifact::BufferRef& ref) const;
  absl::Status LaunchAll(const artifact::Entry& entry, EntryState& state);
  // Whether the artifact's collectives run (a communicator was given).
  bool distributed() const { return options_.communicator != nullptr; }
  // Issues collective `index` of `entry` on the communication stream after
  // the work issued so far on the entry's stream.
  absl::Status IssueCollective(const artifact::Entry& entry, EntryState& state,
                               size_t index);
  // Waits for the entry's stream: with a communicator under its watchdog.
  absl::Status WaitForEntry(const artifact::Entry& entry, EntryState& state);
  absl::StatusOr<const GradKernels*> Tools() const;
  // Runs `work` (which launches kernels) unless a fault is recorded, and
  // records its error as the fault.
  absl::Status Guarded(const std::function<absl::Status()>& work);
  // Guarded: `launch(t, data, elements)` for each non-empty buffers[t], then
  // a wait for them all.
  absl::Status LaunchOnEach(
      const std::vector<int>& buffers,
      const std::function<absl::Status(size_t, CUdeviceptr, long long)>&
          launch);

  std::shared_ptr<ModuleState> module_;
  SessionOptions options_;
  // options_.programmatic_launch where the device and driver support it.
  bool programmatic_launch_ = false;
  // Destroyed in reverse order: entries and residents before the stream.
  std::unique_ptr<Stream> stream_;
  // The collectives' stream (distributed() only).
  std::unique_ptr<Stream> comm_stream_;
  std::vector<DeviceBuffer> residents_;
  std::map<std::string, EntryState> entries_;
  ExecutionStats stats_;
  absl::Status fault_;
};

// The grid.x `launch` runs with on a device of `sm_count` SMs: a persistent
// launch sized for more SMs than the device has shrinks to
// persistent_blocks_per_sm blocks per SM, in whole clusters (at least one),
// so that none of its blocks waits for a second wave; any other keeps its
// grid.
uint32_t PersistentGridX(const artifact::Launch& launch, int sm_count);

}  // namespace session_internal
}  // namespace kiln

#endif  // KILN_RUNTIME_SESSION_EXECUTOR_H_
