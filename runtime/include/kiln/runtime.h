// The host API of the kiln runtime: open a GPU, load an artifact, run its
// entries for inference (Session) or training (Trainer).
//
//   KILN_ASSIGN_OR_RETURN(auto rt, kiln::Runtime::Open(/*device=*/0));
//   KILN_ASSIGN_OR_RETURN(auto model, rt->Load("denoise.kiln"));
//   KILN_ASSIGN_OR_RETURN(auto trainer, model->NewTrainer({.seed = 42}));
//   for (int i = 0; i < steps; ++i) {
//     KILN_ASSIGN_OR_RETURN(float loss,
//                           trainer->Step({{"x", x}, {"y", y}}, Lr(i)));
//   }
//   KILN_RETURN_IF_ERROR(trainer->Save("denoise.safetensors"));
//
// How an artifact's entries are bound (see compiler/training/TrainStep.h for
// the entries the compiler emits):
// - An entry input bound to a resident buffer (parameter, model state such
//   as batch norm running statistics, optimizer state, master weight,
//   gradient, constant) is supplied by the runtime; callers never pass it.
// - An arena input named "lr" (f32, rank 0) is the learning rate argument,
//   one named "step" (i32, rank 0) the update number: step() + 1, counting
//   from 1.
// - Every other input is the caller's, by name, with exactly the binding's
//   dtype and shape.
// - Outputs bound to resident buffers are in-place updates (parameters,
//   state, gradients); arena outputs (e.g. "loss") are returned.
// - The gradient of parameter p is the resident buffer of role gradient
//   called "grad.<p>" (or any gradient buffer by its own name).
//
// Execution: each Session/Trainer owns a stream, its resident buffers and one
// arena per entry (all from the Runtime's binned pool). The first call of an
// entry captures its launch sequence into a CUDA graph; later calls copy the
// inputs (and lr, step) into their bound arena buffers and replay the graph.
// Every call returns after the stream has finished its work.
//
// Failure guarantee: inputs (names, dtypes, shapes, devices) are validated
// before anything is copied or launched, so a call rejected with
// InvalidArgument leaves parameters, optimizer state, gradients and step()
// unchanged. step() advances only when an update succeeded. A driver error
// during a launch (which CUDA makes sticky for the context) leaves the state
// unspecified: restore a checkpoint in a new Runtime.
//
// Thread safety: a Session or Trainer is used from one thread at a time.
// Lifetimes: Modules, Sessions and Trainers keep what they need of the
// Runtime alive (the Runtime object itself may be destroyed first). Tensors
// (outputs, views of resident buffers) must not outlive the last of them.
#ifndef KILN_RUNTIME_H_
#define KILN_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kiln/device_buffer.h"
#include "kiln/dtype.h"
#include "kiln/host_tensor.h"
#include "kiln/tensor.h"

namespace kiln {

class Device;
class Stream;

namespace artifact {
struct Artifact;  // runtime/artifact/artifact.h
}  // namespace artifact

namespace session_internal {
struct RuntimeState;
struct ModuleState;
class Executor;
}  // namespace session_internal

// One input value: host data (copied to the device during the call) or a
// device tensor (copied on the device; it must be contiguous and its producing
// work must be complete or ordered before the call on the caller's side).
class Input {
 public:
  // Host data owned by the Input.
  Input(HostTensor host);  // NOLINT: implicit for {{"x", tensor}} maps
  // A device tensor (shares the buffer).
  Input(const Tensor& device);  // NOLINT
  // Host data the caller keeps alive and unchanged until the call returns.
  static Input HostView(DType dtype, Shape shape, const void* data);
  // f32 host data, copied.
  static Input F32(Shape shape, const std::vector<float>& values);

  bool on_device() const { return on_device_; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  // Host bytes (on_device() == false).
  const void* host_data() const { return host_data_; }
  // The device tensor (on_device() == true).
  const Tensor& device_tensor() const { return device_; }
  size_t host_bytes() const { return host_bytes_; }

 private:
  Input() = default;
  bool on_device_ = false;
  DType dtype_ = DType::kF32;
  // Bytes of host data, when known (SIZE_MAX for a HostView).
  size_t host_bytes_ = SIZE_MAX;
  Shape shape_;
  const void* host_data_ = nullptr;
  std::shared_ptr<const HostTensor> owned_;
  Tensor device_;
};

using Inputs = std::map<std::string, Input>;
// A tensor an entry takes from its caller: its name, dtype and shape.
struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
};

// Outputs of an entry, each in a buffer of its own (not the entry's arena, so
// they stay valid across later calls).
using Outputs = std::map<std::string, Tensor>;

// The output `name` of an entry's outputs; NotFound naming the outputs there
// are.
absl::StatusOr<Tensor> FindOutput(const Outputs& outputs,
                                  absl::string_view name);

class Module;

class Runtime {
 public:
  // Opens device `device` (0-based): Unavailable without a driver,
  // InvalidArgument for an ordinal out of range.
  static absl::StatusOr<std::unique_ptr<Runtime>> Open(int device = 0);
  ~Runtime();

  // Loads an artifact: LoadArtifact verifies the whole file first (a bad file
  // is InvalidArgument, never a crash); then every kernel is loaded from its
  // cubin when one matches the device's architecture number exactly (sm_90
  // or the arch-specific sm_90a on an sm_90 device), from PTX (of the newest
  // architecture not above the device's; arch-specific PTX only for its own
  // architecture) otherwise.
  absl::StatusOr<std::unique_ptr<Module>> Load(const std::string& path);
  absl::StatusOr<std::unique_ptr<Module>> LoadFromMemory(
      absl::string_view bytes);

  const Device& device() const;
  DevicePool& pool() const;

  // A new dense tensor of zeros (filled on the device, synchronous).
  absl::StatusOr<Tensor> Zeros(DType dtype, Shape shape) const;
  // Host <-> device copies on the runtime's own stream (synchronous).
  absl::StatusOr<Tensor> Upload(const HostTensor& host) const;
  // Contiguous tensors only.
  absl::StatusOr<HostTensor> Download(const Tensor& tensor) const;
  // Overwrites the elements of a contiguous tensor (e.g. a gradient view)
  // with `src`, which must have its dtype and shape.
  absl::Status CopyInto(const Tensor& dst, const HostTensor& src) const;

 private:
  explicit Runtime(std::shared_ptr<session_internal::RuntimeState> state)
      : state_(std::move(state)) {}
  std::shared_ptr<session_internal::RuntimeState> state_;
};

namespace distributed {
class Communicator;  // runtime/distributed/communicator.h
}  // namespace distributed

struct SessionOptions {
  // Seed of the parameters' initialisers (runtime/random/initializers.h).
  uint64_t seed = 0;
  // Capture each entry into a CUDA graph on its first call and replay it;
  // false launches every kernel on every call.
  bool use_graphs = true;
  // Launch each kernel that waits for its predecessor in the kernel itself
  // (the artifact marks them; kilnc does so for sm_90 and newer) with
  // programmatic stream serialization, so it is scheduled while the previous
  // kernel still runs and starts as soon as that one's results are visible.
  // Used on devices of compute capability 9.0 and newer with a driver of CUDA
  // 12.3 or newer (which captures such launches into graphs); false launches
  // every kernel only after the previous one has finished.
  bool programmatic_launch = true;
  // Data-parallel training: this rank's communicator. The collectives an
  // artifact compiled with kilnc --data-parallel plans (the gradients'
  // all-reduces) run through it, on a second stream, inside each entry's
  // graph, and every call waits for the step under the communicator's
  // watchdog (a failed rank is an error, not a hang). Without one the
  // collectives are skipped: the artifact trains as a single-rank one.
  std::shared_ptr<distributed::Communicator> communicator;
};
using TrainerOptions = SessionOptions;

// Counters of a Session or Trainer (for tests and tools).
struct ExecutionStats {
  int64_t calls = 0;            // entry calls that ran
  int64_t graph_captures = 0;   // graphs captured (once per entry)
  int64_t graph_replays = 0;    // graph launches
  int64_t kernel_launches = 0;  // launches outside graphs (incl. tools)
  // Launches issued (directly or into a graph being captured) with
  // programmatic stream serialization (SessionOptions::programmatic_launch).
  int64_t programmatic_launches = 0;
  // Launches issued (counted the same way) in thread-block clusters and
  // cooperatively, as the artifact's launches ask.
  int64_t cluster_launches = 0;
  int64_t cooperative_launches = 0;
  // Launches (counted the same way) of persistent kernels whose grid was
  // sized for more SMs than the device has, run with a grid shrunk to it.
  int64_t shrunk_persistent_launches = 0;
  // Collectives issued (directly or into a graph being captured).
  int64_t collectives = 0;
};

// Inference: runs any entry of the module with the parameters resident.
class Session {
 public:
  ~Session();
  // Runs entry `entry` (e.g. "forward"); returns its arena outputs.
  absl::StatusOr<Outputs> Run(absl::string_view entry, const Inputs& inputs);
  absl::StatusOr<Outputs> Forward(const Inputs& inputs) {
    return Run("forward", inputs);
  }
  // Names, dtypes and shapes of the caller's inputs of `entry`.
  absl::StatusOr<std::vector<TensorSpec>> InputsOf(
      absl::string_view entry) const;
  // Loads parameters, model state (batch norm running statistics) and master
  // weights by name from a safetensors file (e.g. a Trainer checkpoint);
  // every parameter and state tensor must be present. Other tensors are
  // ignored.
  absl::Status LoadParameters(const std::string& path);
  absl::StatusOr<Tensor> Parameter(const std::string& name) const;
  // Any resident buffer by name (e.g. "master.w", a constant).
  absl::StatusOr<Tensor> Buffer(const std::string& name) const;

  // Times `entry`: `warmup` calls, then `iterations` graph replays each
  // timed with events; returns the milliseconds of each replay. Inputs are
  // copied once.
  absl::StatusOr<std::vector<float>> Benchmark(absl::string_view entry,
                                               const Inputs& inputs, int warmup,
                                               int iterations);
  ExecutionStats stats() const;

 private:
  friend class Module;
  explicit Session(std::unique_ptr<session_internal::Executor> executor);
  std::unique_ptr<session_internal::Executor> executor_;
};

struct GradientStats {
  double global_norm = 0;  // sqrt of the sum of squares (NaN/Inf propagate)
  float max_abs = 0;       // largest |g| (NaN ignored)
  int64_t nonfinite_count = 0;  // NaN and Inf elements
};

// Training with the entries forward, forward_backward, apply_update and
// train_step (those the artifact has).
class Trainer {
 public:
  ~Trainer();

  // One update (train_step, or forward_backward then apply_update when the
  // artifact has no train_step) with learning rate `lr`; returns the loss.
  absl::StatusOr<float> Step(const Inputs& inputs, float lr);
  // The loss function only; nothing is updated.
  absl::StatusOr<Outputs> Forward(const Inputs& inputs);
  // Loss and gradients; the gradients stay in their device buffers
  // (Gradient(name)) for ApplyUpdate.
  absl::StatusOr<float> ForwardBackward(const Inputs& inputs);
  // The optimizer update from the current gradients, with step() + 1.
  absl::Status ApplyUpdate(float lr);

  // Views of resident buffers: reading or writing them (e.g. with kernels of
  // one's own on stream()) reads or changes the trainer's state.
  // The gradient of parameter `name` ("grad.<name>"), or a gradient buffer
  // by its own name.
  absl::StatusOr<Tensor> Gradient(const std::string& name) const;
  absl::StatusOr<Tensor> Parameter(const std::string& name) const;
  // Any resident buffer by name (e.g. "adam_m.w", "master.w").
  absl::StatusOr<Tensor> Buffer(const std::string& name) const;
  std::vector<std::string> parameter_names() const;
  std::vector<std::string> gradient_names() const;
  // Names, dtypes and shapes of the caller's inputs of `entry`.
  absl::StatusOr<std::vector<TensorSpec>> InputsOf(
      absl::string_view entry) const;

  // Updates done so far (0 after creation; restored by Restore).
  int64_t step() const;
  // The stream all of the trainer's work runs on.
  const Stream& stream() const;

  // Gradient tools, on every gradient buffer (f32 only), for use between
  // ForwardBackward and ApplyUpdate.
  // Scales all gradients by min(1, max_norm / (norm + 1e-6)); returns the
  // global L2 norm before clipping.
  absl::StatusOr<double> ClipGradNorm(double max_norm);
  // Clamps every element to [-value, value] (NaN stays NaN).
  absl::Status ClipGradValue(float value);
  absl::Status ScaleGrads(float scale);
  // g += stddev * N(0, 1); gradient i (in gradient_names() order) draws from
  // Philox stream i of `seed` at offset step() (runtime/random/philox.h).
  absl::Status AddGradNoise(float stddev, uint64_t seed);
  absl::StatusOr<GradientStats> GradStats();
  // The f32 scalar output `name` of the last update (train_step, or
  // apply_update when the artifact has no train_step): e.g. the gradient
  // statistics of kilnc --grad-stats, "grad_stats.global_norm",
  // "grad_stats.max_abs" and "grad_stats.nonfinite_count", computed by the
  // update itself. NotFound when the entry has no such output,
  // FailedPrecondition before the first update.
  absl::StatusOr<float> UpdateOutput(const std::string& name);
  bool HasUpdateOutput(const std::string& name) const;

  // Checkpoints in safetensors: every parameter, model state buffer (batch
  // norm running statistics), optimizer state buffer and master weight by
  // its name, and {"step": "<n>", "format": "kiln"} in
  // __metadata__ (runtime/io/checkpoint.h); written atomically. Restore checks every tensor (present,
  // same dtype and shape) and the step before it changes anything; then the
  // trainer continues exactly as the saved one would have.
  //
  // A device fault (a kernel's illegal address, a failed launch) in any
  // call that runs kernels leaves the buffers undefined: that call returns
  // the error (naming the entry), and every later Step, ForwardBackward,
  // ApplyUpdate, gradient tool and Save fails with FailedPrecondition until
  // Restore succeeds. Faults that lose the device context (an illegal
  // address, a trap) make Restore fail too: restore in a new process.
  absl::Status Save(const std::string& path);
  absl::Status Restore(const std::string& path);

  ExecutionStats stats() const;

 private:
  friend class Module;
  explicit Trainer(std::unique_ptr<session_internal::Executor> executor);
  absl::StatusOr<std::vector<int>> GradientBuffers() const;
  std::unique_ptr<session_internal::Executor> executor_;
  int64_t step_ = 0;
};

// A loaded artifact: its kernels are on the device; each Session or Trainer
// made from it has resident buffers of its own.
class Module {
 public:
  ~Module();
  // The loaded artifact (for code built with runtime/artifact/artifact.h,
  // which the SDK does not install).
  const artifact::Artifact& artifact() const;
  bool HasEntry(absl::string_view name) const;
  // True when every kernel was loaded from a cubin (no PTX JIT).
  bool loaded_cubins() const;

  // A trainer: needs train_step, or forward_backward and apply_update.
  absl::StatusOr<std::unique_ptr<Trainer>> NewTrainer(
      const TrainerOptions& options = {}) const;
  absl::StatusOr<std::unique_ptr<Session>> NewSession(
      const SessionOptions& options = {}) const;

 private:
  friend class Runtime;
  explicit Module(std::shared_ptr<session_internal::ModuleState> state)
      : state_(std::move(state)) {}
  std::shared_ptr<session_internal::ModuleState> state_;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_H_
