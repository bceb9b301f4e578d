#include "kiln/runtime.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/status.h"
#include "runtime/artifact/artifact.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/module.h"
#include "runtime/cuda/stream.h"
#include "runtime/io/atomic_file.h"
#include "runtime/io/checkpoint.h"
#include "runtime/io/safetensors.h"
#include "runtime/memory/cuda_allocator.h"
#include "runtime/session/checkpoint_rules.h"
#include "runtime/session/executor.h"

namespace kiln {

using session_internal::Executor;
using session_internal::InputSource;
using session_internal::ModuleState;
using session_internal::RuntimeState;

// --- Input ------------------------------------------------------------------

Input::Input(HostTensor host) {
  auto owned = std::make_shared<const HostTensor>(std::move(host));
  dtype_ = owned->dtype;
  shape_ = owned->shape;
  host_data_ = owned->data.data();
  host_bytes_ = owned->data.size();
  owned_ = std::move(owned);
}

Input::Input(const Tensor& device) {
  on_device_ = true;
  dtype_ = device.dtype();
  shape_ = device.shape();
  device_ = device;
}

Input Input::HostView(DType dtype, Shape shape, const void* data) {
  Input in;
  in.dtype_ = dtype;
  in.shape_ = std::move(shape);
  in.host_data_ = data;
  return in;
}

Input Input::F32(Shape shape, const std::vector<float>& values) {
  return Input(HostTensor::F32(std::move(shape), values));
}

// --- Runtime ----------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Open(int device) {
  auto state = std::make_shared<RuntimeState>();
  KILN_ASSIGN_OR_RETURN(state->device, Device::Open(device));
  KILN_ASSIGN_OR_RETURN(state->stream, Stream::Create(*state->device));
  state->pool = NewCudaDevicePool(state->device.get());
  return std::unique_ptr<Runtime>(new Runtime(std::move(state)));
}

Runtime::~Runtime() = default;

const Device& Runtime::device() const { return *state_->device; }
DevicePool& Runtime::pool() const { return *state_->pool; }

absl::StatusOr<std::unique_ptr<Module>> Runtime::Load(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, io::ReadFile(path));
  auto module = LoadFromMemory(bytes);
  if (!module.ok()) return Annotate(module.status(), path);
  return module;
}

namespace {

// Lets `kernel` (artifact kernel `index`) run in clusters of more than the
// portable 8 blocks where a launch asks for them: a property of the
// function, set once when it is loaded.
absl::Status AllowClusters(const artifact::Artifact& a, uint32_t index,
                           const Kernel& kernel) {
  for (const artifact::Entry& entry : a.entries) {
    for (const artifact::Launch& launch : entry.launches) {
      if (launch.kernel == index &&
          launch.cluster_blocks() > artifact::kMaxPortableClusterBlocks) {
        return kernel.AllowNonPortableClusterSize();
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> Runtime::LoadFromMemory(
    absl::string_view bytes) {
  KILN_ASSIGN_OR_RETURN(artifact::Artifact a, artifact::LoadArtifact(bytes));
  auto state = std::make_shared<ModuleState>();
  state->runtime = state_;
  const Device& device = *state_->device;
  KILN_RETURN_IF_ERROR(device.MakeCurrent());
  const int sm = device.compute_capability().sm();
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const artifact::Kernel& k = a.kernels[i];
    const artifact::LoadableImages loadable =
        artifact::FindLoadableImages(k, sm);
    const artifact::KernelImage* cubin = loadable.cubin;
    const artifact::KernelImage* ptx = loadable.ptx;
    std::unique_ptr<CudaModule> module;
    const artifact::KernelImage* loaded = cubin != nullptr ? cubin : ptx;
    state->waits_for_predecessor.push_back(loaded != nullptr &&
                                           loaded->waits_for_predecessor);
    if (cubin != nullptr) {
      KILN_ASSIGN_OR_RETURN(
          module, CudaModule::LoadImage(
                      device,
                      absl::string_view(
                          reinterpret_cast<const char*>(cubin->cubin.data()),
                          cubin->cubin.size()),
                      /*is_ptx=*/false));
    } else if (ptx != nullptr) {
      state->all_cubins = false;
      auto loaded = CudaModule::LoadImage(device, ptx->ptx, /*is_ptx=*/true);
      if (!loaded.ok()) {
        return Annotate(loaded.status(),
                        absl::StrCat("kernels[", i, "] '", k.name, "'"));
      }
      module = std::move(*loaded);
    } else {
      std::vector<std::string> archs;
      for (const artifact::KernelImage& image : k.images) {
        archs.push_back(image.arch);
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "kernels[", i, "] '", k.name, "' has no code for ", device.name(),
          " (sm_", sm, "): images for [", absl::StrJoin(archs, ", "),
          "] (a cubin must match exactly, PTX must not be newer, arch-specific "
          "PTX such as sm_90a's must match exactly)"));
    }
    auto kernel = module->GetKernel(k.name);
    if (!kernel.ok()) {
      return Annotate(kernel.status(), absl::StrCat("kernels[", i, "]"));
    }
    KILN_RETURN_IF_ERROR(
        Annotate(AllowClusters(a, static_cast<uint32_t>(i), *kernel),
                 absl::StrCat("kernels[", i, "] '", k.name, "'")));
    state->kernels.push_back(*kernel);
    state->modules.push_back(std::move(module));
  }
  state->artifact = std::move(a);
  return std::unique_ptr<Module>(new Module(std::move(state)));
}

absl::StatusOr<Tensor> Runtime::Zeros(DType dtype, Shape shape) const {
  KILN_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(*state_->pool, dtype,
                                                   std::move(shape),
                                                   state_->stream_id()));
  if (t.size_bytes() > 0) {
    KILN_RETURN_IF_ERROR(state_->stream->Memset(t.data(), 0, t.size_bytes()));
  }
  KILN_RETURN_IF_ERROR(state_->stream->Synchronize());
  return t;
}

absl::StatusOr<Tensor> Runtime::Upload(const HostTensor& host) const {
  const size_t bytes = NumElements(host.shape) * DTypeSize(host.dtype);
  if (host.data.size() != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Upload: ", host.data.size(), " bytes for ", DTypeName(host.dtype),
        ShapeString(host.shape), " (needs ", bytes, ")"));
  }
  KILN_ASSIGN_OR_RETURN(Tensor t,
                        Tensor::Allocate(*state_->pool, host.dtype, host.shape,
                                         state_->stream_id()));
  if (bytes > 0) {
    KILN_RETURN_IF_ERROR(
        state_->stream->CopyToDevice(t.data(), host.data.data(), bytes));
  }
  KILN_RETURN_IF_ERROR(state_->stream->Synchronize());
  return t;
}

absl::StatusOr<Tensor> FindOutput(const Outputs& outputs,
                                  absl::string_view name) {
  auto found = outputs.find(std::string(name));
  if (found != outputs.end()) return found->second;
  std::vector<std::string> names;
  for (const auto& [output, tensor] : outputs) names.push_back(output);
  return absl::NotFoundError(absl::StrCat("no output '", name,
                                          "'; the outputs are: ",
                                          absl::StrJoin(names, ", ")));
}

absl::StatusOr<HostTensor> Runtime::Download(const Tensor& tensor) const {
  if (!tensor.IsContiguous()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Download: ", tensor.DebugString(), " is not contiguous"));
  }
  HostTensor host;
  host.dtype = tensor.dtype();
  host.shape = tensor.shape();
  host.data.resize(tensor.size_bytes());
  if (!host.data.empty()) {
    KILN_RETURN_IF_ERROR(state_->stream->CopyToHost(
        host.data.data(), tensor.data(), host.data.size()));
  }
  KILN_RETURN_IF_ERROR(state_->stream->Synchronize());
  return host;
}

absl::Status Runtime::CopyInto(const Tensor& dst, const HostTensor& src) const {
  if (!dst.IsContiguous()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CopyInto: ", dst.DebugString(), " is not contiguous"));
  }
  if (src.dtype != dst.dtype() || src.shape != dst.shape() ||
      src.data.size() != dst.size_bytes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CopyInto: destination is ", DTypeName(dst.dtype()),
        ShapeString(dst.shape()), ", source ", DTypeName(src.dtype),
        ShapeString(src.shape), " with ", src.data.size(), " bytes"));
  }
  if (!src.data.empty()) {
    KILN_RETURN_IF_ERROR(state_->stream->CopyToDevice(
        dst.data(), src.data.data(), src.data.size()));
  }
  return state_->stream->Synchronize();
}

// --- Module -----------------------------------------------------------------

Module::~Module() = default;

const artifact::Artifact& Module::artifact() const { return state_->artifact; }

bool Module::HasEntry(absl::string_view name) const {
  return state_->artifact.FindEntry(name) != nullptr;
}

bool Module::loaded_cubins() const { return state_->all_cubins; }

absl::StatusOr<std::unique_ptr<Trainer>> Module::NewTrainer(
    const TrainerOptions& options) const {
  const bool fused = HasEntry("train_step");
  const bool split = HasEntry("forward_backward") && HasEntry("apply_update");
  if (!fused && !split) {
    return absl::FailedPreconditionError(
        "the artifact cannot train: it has neither a train_step entry nor "
        "forward_backward and apply_update");
  }
  KILN_ASSIGN_OR_RETURN(auto executor, Executor::Create(state_, options));
  return std::unique_ptr<Trainer>(new Trainer(std::move(executor)));
}

absl::StatusOr<std::unique_ptr<Session>> Module::NewSession(
    const SessionOptions& options) const {
  KILN_ASSIGN_OR_RETURN(auto executor, Executor::Create(state_, options));
  return std::unique_ptr<Session>(new Session(std::move(executor)));
}

// --- Session ----------------------------------------------------------------

namespace {

absl::StatusOr<std::vector<TensorSpec>> CallerInputs(
    const Executor& e, absl::string_view entry) {
  KILN_ASSIGN_OR_RETURN(const artifact::Entry* x, e.GetEntry(entry));
  std::vector<TensorSpec> out;
  for (const artifact::TensorBinding& b : x->inputs) {
    if (session_internal::SourceOf(b) == InputSource::kCaller) {
      out.push_back({b.name, b.dtype, b.shape});
    }
  }
  return out;
}

}  // namespace

Session::Session(std::unique_ptr<Executor> executor)
    : executor_(std::move(executor)) {}
Session::~Session() = default;

absl::StatusOr<Outputs> Session::Run(absl::string_view entry,
                                     const Inputs& inputs) {
  KILN_ASSIGN_OR_RETURN(const artifact::Entry* e, executor_->GetEntry(entry));
  // Sessions do not train: lr 0 and step 1 where an entry takes them.
  KILN_RETURN_IF_ERROR(executor_->Call(*e, inputs, 0.0f, 1));
  return executor_->CollectOutputs(*e);
}

absl::StatusOr<std::vector<TensorSpec>> Session::InputsOf(
    absl::string_view entry) const {
  return CallerInputs(*executor_, entry);
}

absl::Status Session::LoadParameters(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(io::Safetensors st, io::ReadSafetensorsFile(path));
  KILN_ASSIGN_OR_RETURN(std::vector<BufferLoad> loads,
                        ParameterLoads(executor_->artifact(), st, path));
  for (const BufferLoad& load : loads) {
    KILN_RETURN_IF_ERROR(executor_->UploadResident(
        load.buffer, load.tensor->data.data(), load.tensor->data.size()));
  }
  // Every parameter and state buffer holds the file's values again.
  executor_->ClearFault();
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Session::Parameter(const std::string& name) const {
  const int i = executor_->FindResident(name);
  if (i < 0 || executor_->artifact().resident_buffers[i].role !=
                   artifact::BufferRole::kParameter) {
    return absl::NotFoundError(absl::StrCat("no parameter '", name, "'"));
  }
  return executor_->ResidentTensor(i);
}

absl::StatusOr<Tensor> Session::Buffer(const std::string& name) const {
  const int i = executor_->FindResident(name);
  if (i < 0) {
    return absl::NotFoundError(absl::StrCat("no resident buffer '", name, "'"));
  }
  return executor_->ResidentTensor(i);
}

absl::StatusOr<std::vector<float>> Session::Benchmark(absl::string_view entry,
                                                      const Inputs& inputs,
                                                      int warmup,
                                                      int iterations) {
  if (warmup < 1 || iterations < 1) {
    return absl::InvalidArgumentError(
        "Benchmark: warmup and iterations must be at least 1");
  }
  KILN_ASSIGN_OR_RETURN(const artifact::Entry* e, executor_->GetEntry(entry));
  for (int i = 0; i < warmup; ++i) {
    KILN_RETURN_IF_ERROR(executor_->Call(*e, inputs, 0.0f, 1));
  }
  return executor_->Time(*e, iterations);
}

ExecutionStats Session::stats() const { return executor_->stats(); }

// --- Trainer ----------------------------------------------------------------

Trainer::Trainer(std::unique_ptr<Executor> executor)
    : executor_(std::move(executor)) {}
Trainer::~Trainer() = default;

absl::StatusOr<float> Trainer::Step(const Inputs& inputs, float lr) {
  const int32_t next = static_cast<int32_t>(step_ + 1);
  if (const artifact::Entry* e = executor_->FindEntry("train_step")) {
    KILN_RETURN_IF_ERROR(executor_->Call(*e, inputs, lr, next));
    KILN_ASSIGN_OR_RETURN(float loss, executor_->ReadScalar(*e, "loss"));
    ++step_;
    return loss;
  }
  KILN_ASSIGN_OR_RETURN(float loss, ForwardBackward(inputs));
  KILN_RETURN_IF_ERROR(ApplyUpdate(lr));
  return loss;
}

bool Trainer::HasUpdateOutput(const std::string& name) const {
  const artifact::Entry* e = executor_->FindEntry("train_step");
  if (e == nullptr) e = executor_->FindEntry("apply_update");
  if (e == nullptr) return false;
  for (const artifact::TensorBinding& b : e->outputs) {
    if (b.name == name && b.dtype == DType::kF32 && b.shape.empty()) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<float> Trainer::UpdateOutput(const std::string& name) {
  if (!HasUpdateOutput(name)) {
    return absl::NotFoundError(
        absl::StrCat("the update entry has no f32 scalar output '", name, "'"));
  }
  const artifact::Entry* e = executor_->FindEntry("train_step");
  if (e == nullptr) e = executor_->FindEntry("apply_update");
  return executor_->ReadScalar(*e, name);
}

absl::StatusOr<Outputs> Trainer::Forward(const Inputs& inputs) {
  KILN_ASSIGN_OR_RETURN(const artifact::Entry* e,
                        executor_->GetEntry("forward"));
  KILN_RETURN_IF_ERROR(
      executor_->Call(*e, inputs, 0.0f, static_cast<int32_t>(step_ + 1)));
  return executor_->CollectOutputs(*e);
}

absl::StatusOr<float> Trainer::ForwardBackward(const Inputs& inputs) {
  KILN_ASSIGN_OR_RETURN(const artifact::Entry* e,
                        executor_->GetEntry("forward_backward"));
  KILN_RETURN_IF_ERROR(
      executor_->Call(*e, inputs, 0.0f, static_cast<int32_t>(step_ + 1)));
  return executor_->ReadScalar(*e, "loss");
}

absl::Status Trainer::ApplyUpdate(float lr) {
  KILN_ASSIGN_OR_RETURN(const artifact::Entry* e,
                        executor_->GetEntry("apply_update"));
  KILN_RETURN_IF_ERROR(
      executor_->Call(*e, {}, lr, static_cast<int32_t>(step_ + 1)));
  ++step_;
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Trainer::Gradient(const std::string& name) const {
  const auto& rbs = executor_->artifact().resident_buffers;
  for (const std::string& candidate : {name, "grad." + name}) {
    const int i = executor_->FindResident(candidate);
    if (i >= 0 && rbs[i].role == artifact::BufferRole::kGradient) {
      return executor_->ResidentTensor(i);
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "no gradient '", name,
      "' (gradients: ", absl::StrJoin(gradient_names(), ", "), ")"));
}

absl::StatusOr<Tensor> Trainer::Parameter(const std::string& name) const {
  const int i = executor_->FindResident(name);
  if (i < 0 || executor_->artifact().resident_buffers[i].role !=
                   artifact::BufferRole::kParameter) {
    return absl::NotFoundError(absl::StrCat(
        "no parameter '", name,
        "' (parameters: ", absl::StrJoin(parameter_names(), ", "), ")"));
  }
  return executor_->ResidentTensor(i);
}

absl::StatusOr<Tensor> Trainer::Buffer(const std::string& name) const {
  const int i = executor_->FindResident(name);
  if (i < 0) {
    return absl::NotFoundError(absl::StrCat("no resident buffer '", name, "'"));
  }
  return executor_->ResidentTensor(i);
}

std::vector<std::string> Trainer::parameter_names() const {
  std::vector<std::string> out;
  for (int i : executor_->ResidentsWithRole(artifact::BufferRole::kParameter)) {
    out.push_back(executor_->artifact().resident_buffers[i].name);
  }
  return out;
}

std::vector<std::string> Trainer::gradient_names() const {
  std::vector<std::string> out;
  for (int i : executor_->ResidentsWithRole(artifact::BufferRole::kGradient)) {
    out.push_back(executor_->artifact().resident_buffers[i].name);
  }
  return out;
}

absl::StatusOr<std::vector<TensorSpec>> Trainer::InputsOf(
    absl::string_view entry) const {
  return CallerInputs(*executor_, entry);
}

int64_t Trainer::step() const { return step_; }
const Stream& Trainer::stream() const { return executor_->stream(); }
ExecutionStats Trainer::stats() const { return executor_->stats(); }

absl::StatusOr<std::vector<int>> Trainer::GradientBuffers() const {
  std::vector<int> grads =
      executor_->ResidentsWithRole(artifact::BufferRole::kGradient);
  for (int i : grads) {
    const artifact::ResidentBuffer& rb =
        executor_->artifact().resident_buffers[i];
    if (rb.dtype != DType::kF32) {
      return absl::UnimplementedError(
          absl::StrCat("gradient tools work on f32 gradients; '", rb.name,
                       "' is ", DTypeName(rb.dtype)));
    }
  }
  return grads;
}

absl::StatusOr<double> Trainer::ClipGradNorm(double max_norm) {
  if (!(max_norm > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ClipGradNorm: max_norm must be positive, got ", max_norm));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int> grads, GradientBuffers());
  KILN_ASSIGN_OR_RETURN(GradientStats stats, executor_->Stats(grads));
  const double scale = max_norm / (stats.global_norm + 1e-6);
  if (scale < 1.0) {
    KILN_RETURN_IF_ERROR(executor_->Scale(grads, static_cast<float>(scale)));
  }
  return stats.global_norm;
}

absl::Status Trainer::ClipGradValue(float value) {
  if (!(value >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ClipGradValue: the bound must be non-negative, got ", value));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int> grads, GradientBuffers());
  return executor_->ClipValue(grads, value);
}

absl::Status Trainer::ScaleGrads(float scale) {
  KILN_ASSIGN_OR_RETURN(std::vector<int> grads, GradientBuffers());
  return executor_->Scale(grads, scale);
}

absl::Status Trainer::AddGradNoise(float stddev, uint64_t seed) {
  if (!(stddev >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AddGradNoise: stddev must be non-negative, got ", stddev));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int> grads, GradientBuffers());
  return executor_->Noise(grads, stddev, seed, static_cast<uint32_t>(step_));
}

absl::StatusOr<GradientStats> Trainer::GradStats() {
  KILN_ASSIGN_OR_RETURN(std::vector<int> grads, GradientBuffers());
  return executor_->Stats(grads);
}

absl::Status Trainer::Save(const std::string& path) {
  // Undefined buffers are never written over a good checkpoint.
  KILN_RETURN_IF_ERROR(
      Annotate(executor_->CheckUsable(), absl::StrCat("not saving ", path)));
  io::Checkpoint checkpoint;
  checkpoint.step = step_;
  const auto& rbs = executor_->artifact().resident_buffers;
  for (size_t i = 0; i < rbs.size(); ++i) {
    if (!IsCheckpointed(rbs[i].role)) continue;
    KILN_ASSIGN_OR_RETURN(HostTensor t,
                          executor_->DownloadResident(static_cast<int>(i)));
    checkpoint.tensors.emplace(rbs[i].name, std::move(t));
  }
  return Annotate(io::WriteCheckpoint(path, checkpoint),
                  absl::StrCat("saving a checkpoint to ", path));
}

absl::Status Trainer::Restore(const std::string& path) {
  // Checked whole before anything changes.
  KILN_ASSIGN_OR_RETURN(
      io::Checkpoint checkpoint,
      io::ReadCheckpoint(path, CheckpointSpecs(executor_->artifact())));
  const auto& rbs = executor_->artifact().resident_buffers;
  for (size_t index = 0; index < rbs.size(); ++index) {
    if (!IsCheckpointed(rbs[index].role)) continue;
    const HostTensor& t = checkpoint.tensors.at(rbs[index].name);
    absl::Status uploaded = executor_->UploadResident(
        static_cast<int>(index), t.data.data(), t.data.size());
    if (!uploaded.ok() && executor_->faulted()) {
      return Annotate(
          uploaded,
          absl::StrCat("restoring ", path, " after the device fault (",
                       executor_->fault().message(),
                       "): the device context did not survive it; restore "
                       "the checkpoint in a new process"));
    }
    KILN_RETURN_IF_ERROR(uploaded);
  }
  // Every checkpointed buffer holds the checkpoint's values again.
  executor_->ClearFault();
  step_ = checkpoint.step;
  return absl::OkStatus();
}

}  // namespace kiln
