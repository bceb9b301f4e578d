#include "runtime/session/executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/status.h"
#include "runtime/distributed/communicator.h"
#include "runtime/memory/cuda_allocator.h"
#include "runtime/random/initializers.h"
#include "runtime/session/resident_memory.h"
#include "runtime/session/tensor_map.h"

namespace kiln {

namespace embedded {
extern const unsigned char kGradToolsPtx[];
extern const size_t kGradToolsPtx_size;
}  // namespace embedded

namespace session_internal {
namespace {

constexpr uint32_t kToolThreads = 256;  // KILN_PARTIAL_THREADS in grad_tools.cu
constexpr uint32_t kPartialBlocks = 64;
constexpr uint32_t kMaxToolBlocks = 4096;

std::string BindingString(const artifact::TensorBinding& b) {
  return absl::StrCat(DTypeName(b.dtype), ShapeString(b.shape));
}

std::string InputString(const Input& in) {
  return absl::StrCat(DTypeName(in.dtype()), ShapeString(in.shape()));
}

// Writes `value` into `out` as `dtype` (f32 first, then the narrower type,
// as the CPU reference stores initial values).
void StoreAs(DType dtype, double value, uint8_t* out) {
  const float f = static_cast<float>(value);
  switch (dtype) {
    case DType::kF32:
      std::memcpy(out, &f, 4);
      return;
    case DType::kBF16: {
      const uint16_t h = F32ToBf16(f);
      std::memcpy(out, &h, 2);
      return;
    }
    case DType::kF16: {
      const uint16_t h = F32ToF16(f);
      std::memcpy(out, &h, 2);
      return;
    }
    case DType::kI32: {
      const int32_t i = static_cast<int32_t>(std::nearbyint(value));
      std::memcpy(out, &i, 4);
      return;
    }
    case DType::kI1:
      *out = value != 0 ? 1 : 0;
      return;
    case DType::kI64: {
      const int64_t i = static_cast<int64_t>(std::nearbyint(value));
      std::memcpy(out, &i, 8);
      return;
    }
  }
}

// What a resident buffer starts as: the initial value the artifact carries,
// else a parameter's initial values (stored as `dtype`: the parameter's
// own, or f32 for its master copy), else zeros.
struct InitialContents {
  const artifact::InitialValue* carried = nullptr;
  const artifact::Parameter* parameter = nullptr;
  DType dtype = DType::kF32;
};

std::vector<InitialContents> InitialContentsOf(const artifact::Artifact& a) {
  std::vector<InitialContents> contents(a.resident_buffers.size());
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    index.emplace(a.resident_buffers[i].name, i);
  }
  for (const artifact::Parameter& p : a.parameters) {
    contents[p.buffer] = {nullptr, &p, p.dtype};
    // The f32 master copy starts from the same doubles.
    auto master = index.find("master." + p.name);
    if (master != index.end() &&
        a.resident_buffers[master->second].role ==
            artifact::BufferRole::kMasterWeight &&
        a.resident_buffers[master->second].dtype == DType::kF32) {
      contents[master->second] = {nullptr, &p, DType::kF32};
    }
  }
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    const std::optional<artifact::InitialValue>& value =
        a.resident_buffers[i].initial_value;
    if (value) contents[i] = {&*value, nullptr, DType::kF32};
  }
  return contents;
}

// The host memory a parameter's initial values go through at a time: one
// larger than the host's memory still starts from them.
constexpr size_t kStagingBytes = size_t{64} << 20;

// Writes bytes [offset, offset + out.size()) of a parameter's initial
// values to `out` (zeros already): the elements that lie wholly inside.
void FillStaging(const InitialContents& contents, size_t offset, uint64_t seed,
                 std::vector<uint8_t>& out) {
  const artifact::Parameter& p = *contents.parameter;
  const size_t size = DTypeSize(contents.dtype);
  const size_t elements = static_cast<size_t>(NumElements(p.shape));
  const size_t first = offset / size;
  if (first >= elements) return;
  const size_t count = std::min(out.size() / size, elements - first);
  const std::vector<double> values =
      InitialValues(p.init, p.init_a, p.init_b, p.shape, seed,
                    static_cast<uint32_t>(p.seed_stream), first, count);
  for (size_t j = 0; j < count; ++j) {
    StoreAs(contents.dtype, values[j], &out[j * size]);
  }
}

// Uploads the `bytes` initial bytes of a resident buffer to `device`.
absl::Status Upload(const InitialContents& contents, size_t bytes,
                    uint64_t seed, const Stream& stream, DevicePtr device) {
  if (contents.carried != nullptr) {
    const absl::string_view value = contents.carried->bytes;
    return stream.CopyToDevice(device, value.data(),
                               std::min(value.size(), bytes));
  }
  if (contents.parameter == nullptr) {
    return stream.Memset(device, 0, bytes);
  }
  std::vector<uint8_t> staging;
  for (size_t offset = 0; offset < bytes; offset += kStagingBytes) {
    staging.assign(std::min(kStagingBytes, bytes - offset), 0);
    FillStaging(contents, offset, seed, staging);
    KILN_RETURN_IF_ERROR(
        stream.CopyToDevice(device + offset, staging.data(), staging.size()));
    // The staging area is written again only after the copy has read it.
    KILN_RETURN_IF_ERROR(stream.Synchronize());
  }
  return absl::OkStatus();
}

LaunchConfig ToolConfig(int64_t n) {
  LaunchConfig c;
  c.block.x = kToolThreads;
  c.grid.x = static_cast<uint32_t>(
      std::min<int64_t>((n + kToolThreads - 1) / kToolThreads, kMaxToolBlocks));
  return c;
}

}  // namespace

RuntimeState::~RuntimeState() {
  if (stream != nullptr) (void)stream->Synchronize();
  {
    absl::MutexLock lock(&mu);
    grad_kernels.reset();
  }
  pool.reset();
  stream.reset();
}

StreamId RuntimeState::stream_id() const { return StreamIdOf(*stream); }

absl::StatusOr<const GradKernels*> RuntimeState::GetGradKernels() {
  absl::MutexLock lock(&mu);
  if (!grad_kernels_tried) {
    grad_kernels_tried = true;
    auto load = [&]() -> absl::StatusOr<std::unique_ptr<GradKernels>> {
      auto k = std::make_unique<GradKernels>();
      KILN_ASSIGN_OR_RETURN(
          k->module,
          CudaModule::LoadImage(*device,
                                absl::string_view(reinterpret_cast<const char*>(
                                                      embedded::kGradToolsPtx),
                                                  embedded::kGradToolsPtx_size),
                                /*is_ptx=*/true));
      KILN_ASSIGN_OR_RETURN(k->partials,
                            k->module->GetKernel("kiln_grad_partials_f32"));
      KILN_ASSIGN_OR_RETURN(k->scale,
                            k->module->GetKernel("kiln_grad_scale_f32"));
      KILN_ASSIGN_OR_RETURN(k->clip_value,
                            k->module->GetKernel("kiln_grad_clip_value_f32"));
      KILN_ASSIGN_OR_RETURN(k->noise,
                            k->module->GetKernel("kiln_grad_noise_f32"));
      return k;
    };
    auto loaded = load();
    if (loaded.ok()) {
      grad_kernels = std::move(*loaded);
    } else {
      grad_kernels_status =
          Annotate(loaded.status(), "loading the gradient tools");
    }
  }
  if (grad_kernels == nullptr) return grad_kernels_status;
  return grad_kernels.get();
}

ModuleState::~ModuleState() {
  kernels.clear();
  modules.clear();
}

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(
    std::shared_ptr<ModuleState> module, const SessionOptions& options) {
  std::unique_ptr<Executor> e(new Executor(std::move(module), options));
  KILN_RETURN_IF_ERROR(e->Init());
  return e;
}

Executor::~Executor() {
  if (stream_ != nullptr) (void)stream_->Synchronize();
  entries_.clear();
  residents_.clear();
  stream_.reset();
}

absl::Status Executor::Init() {
  RuntimeState& rt = runtime();
  KILN_RETURN_IF_ERROR(rt.device->MakeCurrent());
  KILN_ASSIGN_OR_RETURN(stream_, Stream::Create(*rt.device));
  if (distributed()) {
    KILN_ASSIGN_OR_RETURN(comm_stream_, Stream::Create(*rt.device));
  }
  // Grid dependency control arrived with sm_90; graphs capture programmatic
  // launches from CUDA 12.3 on.
  constexpr int kProgrammaticCaptureDriver = 12030;
  programmatic_launch_ =
      options_.programmatic_launch &&
      rt.device->compute_capability().sm() >= 90 &&
      rt.device->driver().version() >= kProgrammaticCaptureDriver;
  const artifact::Artifact& a = artifact();
  const StreamId sid = StreamIdOf(*stream_);

  // Nothing is allocated or initialised before all of it is known to fit.
  KILN_ASSIGN_OR_RETURN(const MemoryInfo memory, rt.device->GetMemoryInfo());
  KILN_RETURN_IF_ERROR(CheckResidentsFit(
      a.resident_buffers, memory.free_bytes + rt.pool->stats().bytes_cached,
      memory.total_bytes,
      absl::StrCat(rt.device->name(), " (device ", rt.device->ordinal(), ")")));
  const std::vector<InitialContents> contents = InitialContentsOf(a);
  residents_.reserve(a.resident_buffers.size());
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    const artifact::ResidentBuffer& rb = a.resident_buffers[i];
    absl::StatusOr<DeviceBuffer> allocated =
        rt.pool->Allocate(rb.byte_size, sid);
    if (!allocated.ok()) {
      return absl::Status(
          allocated.status().code(),
          absl::StrCat("resident buffer '", rb.name, "' (", rb.byte_size,
                       " bytes): ", allocated.status().message()));
    }
    residents_.push_back(*std::move(allocated));
    KILN_RETURN_IF_ERROR(Upload(contents[i], rb.byte_size, options_.seed,
                                *stream_, residents_.back().data()));
  }
  return stream_->Synchronize();
}

absl::StatusOr<const artifact::Entry*> Executor::GetEntry(
    absl::string_view name) const {
  const artifact::Entry* e = FindEntry(name);
  if (e == nullptr) {
    std::vector<std::string> names;
    for (const artifact::Entry& x : artifact().entries) names.push_back(x.name);
    return absl::NotFoundError(
        absl::StrCat("the artifact has no entry '", name,
                     "' (entries: ", absl::StrJoin(names, ", "), ")"));
  }
  return e;
}

absl::Status Executor::Validate(const artifact::Entry& entry,
                                const Inputs& inputs) const {
  std::vector<std::string> expected;
  for (const artifact::TensorBinding& b : entry.inputs) {
    if (SourceOf(b) == InputSource::kCaller) {
      expected.push_back(absl::StrCat(b.name, " ", BindingString(b)));
    }
  }
  for (const auto& [name, input] : inputs) {
    const artifact::TensorBinding* binding = nullptr;
    for (const artifact::TensorBinding& b : entry.inputs) {
      if (b.name == name) binding = &b;
    }
    if (binding == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("entry '", entry.name, "' has no input '", name,
                       "' (it takes: ", absl::StrJoin(expected, ", "), ")"));
    }
    if (SourceOf(*binding) != InputSource::kCaller) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", name, "' of entry '", entry.name,
          "' is supplied by the runtime (a resident buffer, the learning rate "
          "or the step), not by the caller"));
    }
    if (input.dtype() != binding->dtype || input.shape() != binding->shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", name, "' of entry '", entry.name, "' must be ",
          BindingString(*binding), ", got ", InputString(input)));
    }
    const size_t bytes =
        NumElements(binding->shape) * DTypeSize(binding->dtype);
    if (input.on_device()) {
      if (!input.device_tensor().IsContiguous()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", name, "' of entry '", entry.name,
                         "' is a non-contiguous device tensor (",
                         input.device_tensor().DebugString(), "): copy it"));
      }
    } else {
      if (input.host_bytes() != SIZE_MAX && input.host_bytes() != bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", name, "' of entry '", entry.name, "' has ",
                         input.host_bytes(), " bytes of host data, but ",
                         BindingString(*binding), " needs ", bytes));
      }
      if (input.host_data() == nullptr && bytes > 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", name, "' of entry '", entry.name, "' has no data"));
      }
    }
  }
  for (const artifact::TensorBinding& b : entry.inputs) {
    if (SourceOf(b) == InputSource::kCaller && inputs.count(b.name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("entry '", entry.name, "' is missing input '", b.name,
                       "' (", BindingString(b), ")"));
    }
  }
  return absl::OkStatus();
}

DevicePtr Executor::Address(const EntryState& state,
                            const artifact::BufferRef& ref) const {
  const DevicePtr base = ref.space == artifact::MemorySpace::kArena
                             ? state.arena.data()
                             : residents_[ref.index].data();
  return base + ref.offset;
}

LaunchConfig Executor::ConfigOf(const artifact::Launch& l) const {
  LaunchConfig config;
  config.grid = {l.grid.x, l.grid.y, l.grid.z};
  config.block = {l.block.x, l.block.y, l.block.z};
  config.shared_memory_bytes = l.dynamic_shared_bytes;
  config.programmatic_serialization =
      programmatic_launch_ && module_->waits_for_predecessor[l.kernel];
  config.cluster = {l.cluster.x, l.cluster.y, l.cluster.z};
  config.cooperative = l.cooperative;
  config.grid.x = PersistentGridX(l, runtime().device->sm_count());
  return config;
}

uint32_t PersistentGridX(const artifact::Launch& launch, int sm_count) {
  if (launch.persistent_blocks_per_sm == 0 || sm_count <= 0) {
    return launch.grid.x;
  }
  // Whole clusters, at least one: the kernel's blocks stride over the work
  // by the grid, so fewer of them still do all of it.
  const uint64_t cluster = std::max<uint32_t>(launch.cluster.x, 1);
  const uint64_t fits =
      uint64_t{launch.persistent_blocks_per_sm} * uint64_t(sm_count);
  const uint64_t blocks = std::max(fits / cluster * cluster, cluster);
  return static_cast<uint32_t>(std::min<uint64_t>(launch.grid.x, blocks));
}

absl::StatusOr<Executor::EntryState*> Executor::Prepare(
    const artifact::Entry& entry) {
  auto it = entries_.find(entry.name);
  if (it != entries_.end()) return &it->second;
  if (entry.arena_alignment > 256) {
    return absl::UnimplementedError(
        absl::StrCat("entry '", entry.name, "' asks for arena alignment ",
                     entry.arena_alignment, " (the pool gives 256)"));
  }
  EntryState state;
  absl::StatusOr<DeviceBuffer> arena =
      runtime().pool->Allocate(entry.arena_size, StreamIdOf(*stream_));
  if (!arena.ok()) {
    return absl::Status(
        arena.status().code(),
        absl::StrCat("entry '", entry.name, "': its arena of ",
                     entry.arena_size, " bytes: ", arena.status().message()));
  }
  state.arena = *std::move(arena);
  for (size_t i = 0; i < entry.launches.size(); ++i) {
    const artifact::Launch& launch = entry.launches[i];
    const Kernel& kernel = module_->kernels[launch.kernel];
    // Static and dynamic shared memory together may pass 48 KiB only up to
    // the kernel's opt-in limit. Always opting in to the launch's dynamic
    // bytes covers kernels whose static use the artifact does not record
    // (e.g. launches merged into one kernel); the driver still refuses what
    // the block cannot hold.
    if (launch.dynamic_shared_bytes > 0) {
      KILN_RETURN_IF_ERROR(kernel.SetMaxDynamicSharedMemory(
          static_cast<int>(launch.dynamic_shared_bytes)));
    }
    // A cooperative grid or a cluster that cannot fit is refused here, by
    // name, rather than by the driver during a graph capture (where the
    // error may only surface when the graph is instantiated).
    if (launch.cooperative || launch.clustered()) {
      KILN_RETURN_IF_ERROR(
          Annotate(kernel.CheckLaunchable(ConfigOf(launch)),
                   absl::StrCat("entry '", entry.name, "' launch ", i)));
    }
    KernelArgs args;
    for (const artifact::Arg& arg : launch.args) {
      switch (arg.kind) {
        case artifact::ArgKind::kBuffer:
          args.Add(static_cast<CUdeviceptr>(Address(state, arg.buffer)));
          break;
        case artifact::ArgKind::kI32:
          args.Add(static_cast<int32_t>(static_cast<uint32_t>(arg.scalar)));
          break;
        case artifact::ArgKind::kI64:
          args.Add(static_cast<int64_t>(arg.scalar));
          break;
        case artifact::ArgKind::kF32: {
          const uint32_t bits = static_cast<uint32_t>(arg.scalar);
          float f;
          std::memcpy(&f, &bits, 4);
          args.Add(f);
          break;
        }
        case artifact::ArgKind::kF64: {
          double d;
          std::memcpy(&d, &arg.scalar, 8);
          args.Add(d);
          break;
        }
        case artifact::ArgKind::kTensorMap: {
          // Encoded once: the arena and the resident buffers keep their
          // addresses for the executor's lifetime.
          absl::StatusOr<CUtensorMap> map = EncodeTensorMap(
              runtime().device->driver(), arg.tensor_map,
              static_cast<CUdeviceptr>(Address(state, arg.buffer)));
          if (!map.ok()) {
            return Annotate(map.status(),
                            absl::StrCat("entry '", entry.name, "' launch ", i,
                                         " (a tensor map of kernel '",
                                         kernel.name(), "')"));
          }
          args.Add(*map);
          break;
        }
      }
    }
    state.args.push_back(std::move(args));
  }
  if (distributed()) {
    const Device& device = *runtime().device;
    for (size_t c = 0; c < entry.collectives.size(); ++c) {
      KILN_ASSIGN_OR_RETURN(auto ready, Event::Create(device, false));
      KILN_ASSIGN_OR_RETURN(auto done, Event::Create(device, false));
      state.collective_ready.push_back(std::move(ready));
      state.collective_done.push_back(std::move(done));
    }
    KILN_ASSIGN_OR_RETURN(state.finished, Event::Create(device, false));
  }
  return &entries_.emplace(entry.name, std::move(state)).first->second;
}

absl::Status Executor::IssueCollective(const artifact::Entry& entry,
                                       EntryState& state, size_t index) {
  const artifact::Collective& c = entry.collectives[index];
  distributed::Communicator& comm = *options_.communicator;
  const std::string where =
      absl::StrCat("entry '", entry.name, "' collective ", index);
  // Fork: the communication stream waits for the work issued so far (in a
  // capture, this makes it part of the graph).
  KILN_RETURN_IF_ERROR(state.collective_ready[index]->Record(*stream_));
  KILN_RETURN_IF_ERROR(comm_stream_->Wait(*state.collective_ready[index]));
  KILN_RETURN_IF_ERROR(Annotate(comm.GroupStart(), where));
  for (const artifact::CollectiveTensor& t : c.tensors) {
    const CUdeviceptr data = static_cast<CUdeviceptr>(Address(state, t.buffer));
    const size_t count = t.buffer.size / DTypeSize(t.dtype);
    absl::Status issued =
        comm.AllReduce(data, data, count, t.dtype, distributed::ReduceOp::kAvg,
                       comm_stream_->handle());
    if (!issued.ok()) {
      (void)comm.GroupEnd();
      return Annotate(issued, absl::StrCat(where, " ('", t.name, "')"));
    }
  }
  KILN_RETURN_IF_ERROR(Annotate(comm.GroupEnd(), where));
  return state.collective_done[index]->Record(*comm_stream_);
}

absl::Status Executor::LaunchAll(const artifact::Entry& entry,
                                 EntryState& state) {
  const std::vector<artifact::Collective>& collectives =
      distributed() ? entry.collectives : std::vector<artifact::Collective>();
  size_t next = 0;  // the next collective to issue
  // Before launch `l` (or at the end, l == launches.size()): issue the
  // collectives whose inputs are now issued, then join those launch `l`
  // must see the results of.
  auto synchronise = [&](size_t l, bool* waited) -> absl::Status {
    *waited = false;
    while (next < collectives.size() && collectives[next].after_launches == l) {
      KILN_RETURN_IF_ERROR(IssueCollective(entry, state, next));
      ++next;
    }
    for (size_t c = 0; c < collectives.size(); ++c) {
      if (collectives[c].wait_before == l) {
        KILN_RETURN_IF_ERROR(stream_->Wait(*state.collective_done[c]));
        *waited = true;
      }
    }
    return absl::OkStatus();
  };
  for (size_t i = 0; i < entry.launches.size(); ++i) {
    bool waited = false;
    KILN_RETURN_IF_ERROR(synchronise(i, &waited));
    const artifact::Launch& l = entry.launches[i];
    LaunchConfig config = ConfigOf(l);
    // A launch that waits for a collective starts after it, not early
    // beside its predecessor kernel.
    if (waited) config.programmatic_serialization = false;
    stats_.programmatic_launches += config.programmatic_serialization ? 1 : 0;
    stats_.cluster_launches += config.clustered() ? 1 : 0;
    stats_.cooperative_launches += config.cooperative ? 1 : 0;
    stats_.shrunk_persistent_launches += config.grid.x < l.grid.x ? 1 : 0;
    KILN_RETURN_IF_ERROR(Annotate(
        module_->kernels[l.kernel].Launch(*stream_, config, state.args[i]),
        absl::StrCat("entry '", entry.name, "' launch ", i)));
  }
  bool waited = false;
  KILN_RETURN_IF_ERROR(synchronise(entry.launches.size(), &waited));
  stats_.collectives += static_cast<int64_t>(collectives.size());
  return absl::OkStatus();
}

absl::Status Executor::WaitForEntry(const artifact::Entry& entry,
                                    EntryState& state) {
  const std::string what = absl::StrCat("entry '", entry.name, "'");
  if (!distributed()) return Annotate(stream_->Synchronize(), what);
  KILN_RETURN_IF_ERROR(state.finished->Record(*stream_));
  const Event& finished = *state.finished;
  KILN_RETURN_IF_ERROR(options_.communicator->WaitUntil(
      [&finished] { return finished.IsComplete(); }, what));
  return Annotate(stream_->Synchronize(), what);
}

absl::Status Executor::CheckUsable() const {
  if (fault_.ok()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the parameters and optimizer state are undefined since a device fault "
      "(",
      fault_.message(),
      "); restore them from a checkpoint first (Trainer::Restore, "
      "Session::LoadParameters; after a fault that loses the device context, "
      "such as an illegal address, in a new process)"));
}

absl::Status Executor::Guarded(const std::function<absl::Status()>& work) {
  KILN_RETURN_IF_ERROR(CheckUsable());
  absl::Status status = work();
  if (!status.ok()) fault_ = status;
  return status;
}

absl::Status Executor::Call(const artifact::Entry& entry, const Inputs& inputs,
                            float lr, int32_t step) {
  KILN_RETURN_IF_ERROR(CheckUsable());
  KILN_RETURN_IF_ERROR(Validate(entry, inputs));
  KILN_ASSIGN_OR_RETURN(EntryState * state, Prepare(entry));
  // Nothing has changed yet; from here on the device state moves.
  for (const artifact::TensorBinding& b : entry.inputs) {
    const size_t bytes = NumElements(b.shape) * DTypeSize(b.dtype);
    const DevicePtr dst = Address(*state, b.buffer);
    switch (SourceOf(b)) {
      case InputSource::kResident:
        break;
      case InputSource::kLr:
        KILN_RETURN_IF_ERROR(stream_->CopyToDevice(dst, &lr, 4));
        break;
      case InputSource::kStep:
        KILN_RETURN_IF_ERROR(stream_->CopyToDevice(dst, &step, 4));
        break;
      case InputSource::kCaller: {
        if (bytes == 0) break;
        const Input& in = inputs.at(b.name);
        if (in.on_device()) {
          KILN_RETURN_IF_ERROR(stream_->CopyDeviceToDevice(
              dst, in.device_tensor().data(), bytes));
        } else {
          KILN_RETURN_IF_ERROR(
              stream_->CopyToDevice(dst, in.host_data(), bytes));
        }
        break;
      }
    }
  }
  // Once kernels run, an error leaves the resident buffers undefined.
  KILN_RETURN_IF_ERROR(Guarded([&]() -> absl::Status {
    const bool warm_up =
        distributed() && state->calls == 0 && !entry.collectives.empty();
    if (options_.use_graphs && !warm_up) {
      if (state->graph == nullptr) {
        KILN_ASSIGN_OR_RETURN(state->graph, Graph::Capture(*stream_, [&] {
                                return LaunchAll(entry, *state);
                              }));
        ++stats_.graph_captures;
      }
      KILN_RETURN_IF_ERROR(state->graph->Launch(*stream_));
      ++stats_.graph_replays;
    } else {
      KILN_RETURN_IF_ERROR(LaunchAll(entry, *state));
      stats_.kernel_launches += static_cast<int64_t>(entry.launches.size());
    }
    return WaitForEntry(entry, *state);
  }));
  ++state->calls;
  ++stats_.calls;
  return absl::OkStatus();
}

absl::StatusOr<Outputs> Executor::CollectOutputs(const artifact::Entry& entry) {
  auto it = entries_.find(entry.name);
  if (it == entries_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("entry '", entry.name, "' has not run"));
  }
  Outputs out;
  for (const artifact::TensorBinding& b : entry.outputs) {
    if (b.buffer.space != artifact::MemorySpace::kArena) continue;
    KILN_ASSIGN_OR_RETURN(Tensor t,
                          Tensor::Allocate(*runtime().pool, b.dtype, b.shape,
                                           runtime().stream_id()));
    if (t.size_bytes() > 0) {
      KILN_RETURN_IF_ERROR(stream_->CopyDeviceToDevice(
          t.data(), Address(it->second, b.buffer), t.size_bytes()));
    }
    out.emplace(b.name, std::move(t));
  }
  KILN_RETURN_IF_ERROR(stream_->Synchronize());
  return out;
}

absl::StatusOr<float> Executor::ReadScalar(const artifact::Entry& entry,
                                           absl::string_view name) {
  auto it = entries_.find(entry.name);
  if (it == entries_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("entry '", entry.name, "' has not run"));
  }
  const artifact::TensorBinding* found = nullptr;
  for (const artifact::TensorBinding& b : entry.outputs) {
    if (b.name == name) found = &b;
  }
  if (found == nullptr) {
    for (const artifact::TensorBinding& b : entry.outputs) {
      if (found == nullptr && b.dtype == DType::kF32 && b.shape.empty() &&
          b.buffer.space == artifact::MemorySpace::kArena) {
        found = &b;
      }
    }
  }
  if (found == nullptr || found->dtype != DType::kF32 ||
      !found->shape.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "entry '", entry.name, "' has no f32 scalar output '", name, "'"));
  }
  float value = 0;
  KILN_RETURN_IF_ERROR(
      stream_->CopyToHost(&value, Address(it->second, found->buffer), 4));
  KILN_RETURN_IF_ERROR(stream_->Synchronize());
  return value;
}

absl::StatusOr<std::vector<float>> Executor::Time(const artifact::Entry& entry,
                                                  int iterations) {
  KILN_RETURN_IF_ERROR(CheckUsable());
  auto it = entries_.find(entry.name);
  if (it == entries_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("entry '", entry.name, "' has not run"));
  }
  const Device& device = *runtime().device;
  KILN_ASSIGN_OR_RETURN(auto start, Event::Create(device));
  KILN_ASSIGN_OR_RETURN(auto end, Event::Create(device));
  std::vector<float> ms;
  for (int i = 0; i < iterations; ++i) {
    KILN_RETURN_IF_ERROR(start->Record(*stream_));
    if (it->second.graph != nullptr) {
      KILN_RETURN_IF_ERROR(it->second.graph->Launch(*stream_));
      ++stats_.graph_replays;
    } else {
      KILN_RETURN_IF_ERROR(LaunchAll(entry, it->second));
      stats_.kernel_launches += static_cast<int64_t>(entry.launches.size());
    }
    KILN_RETURN_IF_ERROR(end->Record(*stream_));
    if (distributed()) {
      const Event& done = *end;
      KILN_RETURN_IF_ERROR(options_.communicator->WaitUntil(
          [&done] { return done.IsComplete(); },
          absl::StrCat("entry '", entry.name, "' (timed)")));
    }
    KILN_RETURN_IF_ERROR(end->Synchronize());
    KILN_ASSIGN_OR_RETURN(float t, Event::ElapsedMs(*start, *end));
    ms.push_back(t);
  }
  return ms;
}

int Executor::FindResident(absl::string_view name) const {
  const auto& rbs = artifact().resident_buffers;
  for (size_t i = 0; i < rbs.size(); ++i) {
    if (rbs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<Tensor> Executor::ResidentTensor(int index) const {
  const artifact::ResidentBuffer& rb = artifact().resident_buffers[index];
  return Tensor::FromBuffer(residents_[index], rb.dtype, rb.shape);
}

std::vector<int> Executor::ResidentsWithRole(artifact::BufferRole role) const {
  std::vector<int> out;
  const auto& rbs = artifact().resident_buffers;
  for (size_t i = 0; i < rbs.size(); ++i) {
    if (rbs[i].role == role) out.push_back(static_cast<int>(i));
  }
  return out;
}

absl::Status Executor::UploadResident(int index, const void* data,
                                      size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  KILN_RETURN_IF_ERROR(
      stream_->CopyToDevice(residents_[index].data(), data, bytes));
  return stream_->Synchronize();
}

absl::StatusOr<HostTensor> Executor::DownloadResident(int index) {
  const artifact::ResidentBuffer& rb = artifact().resident_buffers[index];
  HostTensor t;
  t.dtype = rb.dtype;
  t.shape = rb.shape;
  t.data.resize(NumElements(rb.shape) * DTypeSize(rb.dtype));
  if (!t.data.empty()) {
    KILN_RETURN_IF_ERROR(stream_->CopyToHost(
        t.data.data(), residents_[index].data(), t.data.size()));
    KILN_RETURN_IF_ERROR(stream_->Synchronize());
  }
  return t;
}

absl::StatusOr<const GradKernels*> Executor::Tools() const {
  // Refused before the tools' module is loaded: after a fault that lost the
  // context, loading it fails with the driver's error instead.
  KILN_RETURN_IF_ERROR(CheckUsable());
  return runtime().GetGradKernels();
}

absl::StatusOr<GradientStats> Executor::Stats(const std::vector<int>& buffers) {
  KILN_ASSIGN_OR_RETURN(const GradKernels* k, Tools());
  const size_t parts = buffers.size() * kPartialBlocks;
  GradientStats stats;
  if (parts == 0) return stats;
  std::vector<double> host_sums(parts);
  std::vector<float> host_maxes(parts);
  std::vector<uint32_t> host_bad(parts);
  DevicePool& pool = *runtime().pool;
  const StreamId sid = StreamIdOf(*stream_);
  KILN_ASSIGN_OR_RETURN(DeviceBuffer sums, pool.Allocate(parts * 8, sid));
  KILN_ASSIGN_OR_RETURN(DeviceBuffer maxes, pool.Allocate(parts * 4, sid));
  KILN_ASSIGN_OR_RETURN(DeviceBuffer bad, pool.Allocate(parts * 4, sid));
  KILN_RETURN_IF_ERROR(Guarded([&]() -> absl::Status {
    LaunchConfig config;
    config.grid.x = kPartialBlocks;
    config.block.x = kToolThreads;
    for (size_t t = 0; t < buffers.size(); ++t) {
      const long long n =
          NumElements(artifact().resident_buffers[buffers[t]].shape);
      const CUdeviceptr g = residents_[buffers[t]].data();
      const CUdeviceptr s = sums.data() + t * kPartialBlocks * 8;
      const CUdeviceptr m = maxes.data() + t * kPartialBlocks * 4;
      const CUdeviceptr b = bad.data() + t * kPartialBlocks * 4;
      KILN_RETURN_IF_ERROR(
          k->partials.LaunchWith(*stream_, config, g, n, s, m, b));
      ++stats_.kernel_launches;
    }
    KILN_RETURN_IF_ERROR(
        stream_->CopyToHost(host_sums.data(), sums.data(), parts * 8));
    KILN_RETURN_IF_ERROR(
        stream_->CopyToHost(host_maxes.data(), maxes.data(), parts * 4));
    KILN_RETURN_IF_ERROR(
        stream_->CopyToHost(host_bad.data(), bad.data(), parts * 4));
    return stream_->Synchronize();
  }));
  double sum = 0;
  float mx = 0;
  int64_t nonfinite = 0;
  for (size_t i = 0; i < parts; ++i) {
    sum += host_sums[i];
    mx = std::fmax(mx, host_maxes[i]);
    nonfinite += host_bad[i];
  }
  stats.global_norm = std::sqrt(sum);
  stats.max_abs = mx;
  stats.nonfinite_count = nonfinite;
  return stats;
}

absl::Status Executor::LaunchOnEach(
    const std::vector<int>& buffers,
    const std::function<absl::Status(size_t, CUdeviceptr, long long)>& launch) {
  return Guarded([&]() -> absl::Status {
    for (size_t t = 0; t < buffers.size(); ++t) {
      const int i = buffers[t];
      const long long n = NumElements(artifact().resident_buffers[i].shape);
      if (n == 0) continue;
      KILN_RETURN_IF_ERROR(launch(t, residents_[i].data(), n));
      ++stats_.kernel_launches;
    }
    return stream_->Synchronize();
  });
}

absl::Status Executor::Scale(const std::vector<int>& buffers, float scale) {
  KILN_ASSIGN_OR_RETURN(const GradKernels* k, Tools());
  return LaunchOnEach(buffers, [&](size_t, CUdeviceptr g, long long n) {
    return k->scale.LaunchWith(*stream_, ToolConfig(n), g, n, scale);
  });
}

absl::Status Executor::ClipValue(const std::vector<int>& buffers, float value) {
  KILN_ASSIGN_OR_RETURN(const GradKernels* k, Tools());
  return LaunchOnEach(buffers, [&](size_t, CUdeviceptr g, long long n) {
    return k->clip_value.LaunchWith(*stream_, ToolConfig(n), g, n, value);
  });
}

absl::Status Executor::Noise(const std::vector<int>& buffers, float stddev,
                             uint64_t seed, uint32_t offset) {
  KILN_ASSIGN_OR_RETURN(const GradKernels* k, Tools());
  return LaunchOnEach(buffers, [&](size_t t, CUdeviceptr g, long long n) {
    const unsigned long long s = seed;
    const unsigned int stream = static_cast<unsigned int>(t);
    const unsigned int off = offset;
    return k->noise.LaunchWith(*stream_, ToolConfig(n), g, n, stddev, s, stream,
                               off);
  });
}

}  // namespace session_internal
}  // namespace kiln
