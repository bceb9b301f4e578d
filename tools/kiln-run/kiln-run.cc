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
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kiln/batch_loader.h"
#include "kiln/dtype.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime/artifact/artifact.h"
#include "runtime/cuda/device.h"
#include "runtime/distributed/communicator.h"
#include "runtime/distributed/config.h"
#include "runtime/io/atomic_file.h"
#include "runtime/io/dataset.h"
#include "runtime/io/safetensors.h"
#include "runtime/memory/pool.h"
#include "runtime/observe/event_file.h"
#include "runtime/observe/loss_curve.h"
#include "tools/kiln-run/describe.h"
#include "tools/kiln-run/flags.h"
#include "tools/kiln-run/preflight.h"
#include "tools/kiln-run/rank_launcher.h"

namespace kiln {
namespace {

// Elements of a host tensor as doubles.
std::vector<double> AsDoubles(const HostTensor& t) {
  const size_t n = t.data.size() / DTypeSize(t.dtype);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = t.data.data() + i * DTypeSize(t.dtype);
    switch (t.dtype) {
      case DType::kF32: {
        float v;
        std::memcpy(&v, p, 4);
        out[i] = v;
        break;
      }
      case DType::kBF16: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        out[i] = Bf16ToF32(v);
        break;
      }
      case DType::kF16: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        out[i] = F16ToF32(v);
        break;
      }
      case DType::kI32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        out[i] = v;
        break;
      }
      case DType::kI1:
        out[i] = *p;
        break;
      case DType::kI64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        out[i] = static_cast<double>(v);
        break;
      }
    }
  }
  return out;
}

// Compares `actual` with every tensor of `expected_path`; prints one line per
// tensor. False on any mismatch.
absl::StatusOr<bool> Check(const std::map<std::string, HostTensor>& actual,
                           const std::string& expected_path, double rtol,
                           double atol, bool scaled_atol) {
  KILN_ASSIGN_OR_RETURN(io::Safetensors expected,
                        io::ReadSafetensorsFile(expected_path));
  bool ok = true;
  for (const auto& [name, e] : expected.tensors) {
    auto it = actual.find(name);
    if (it == actual.end()) {
      std::printf("check %s: MISSING (no output of that name)\n", name.c_str());
      ok = false;
      continue;
    }
    if (it->second.shape != e.shape) {
      std::printf("check %s: SHAPE %s, expected %s\n", name.c_str(),
                  ShapeString(it->second.shape).c_str(),
                  ShapeString(e.shape).c_str());
      ok = false;
      continue;
    }
    const std::vector<double> a = AsDoubles(it->second), x = AsDoubles(e);
    double scale = 0;
    for (double v : x)
      if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
    const double abs_tol = scaled_atol ? atol * scale : atol;
    double max_abs = 0, max_rel = 0;
    int64_t bad = 0, nan = 0, first_bad = -1;
    for (size_t i = 0; i < a.size(); ++i) {
      const double d = std::fabs(a[i] - x[i]);
      if (std::isnan(a[i]) && !std::isnan(x[i])) ++nan;
      // Equal values match, infinities of one sign included (their
      // difference is NaN).
      const bool fine = a[i] == x[i] ||
                        (std::isnan(a[i]) && std::isnan(x[i])) ||
                        d <= abs_tol + rtol * std::fabs(x[i]);
      if (!fine) {
        ++bad;
        if (first_bad < 0) first_bad = static_cast<int64_t>(i);
      }
      if (std::isfinite(d)) {
        max_abs = std::max(max_abs, d);
        if (x[i] != 0) max_rel = std::max(max_rel, d / std::fabs(x[i]));
      }
    }
    if (bad == 0) {
      std::printf(
          "check %s: ok (%zu elements, max abs err %.3g, max rel err %.3g, "
          "max err / max |expected| %.3g)\n",
          name.c_str(), a.size(), max_abs, max_rel,
          scale > 0 ? max_abs / scale : 0.0);
    } else {
      std::printf(
          "check %s: MISMATCH %lld of %zu elements (%lld NaN); first at %lld: "
          "%.9g vs expected %.9g; max abs err %.3g, max rel err %.3g, "
          "max err / max |expected| %.3g\n",
          name.c_str(), static_cast<long long>(bad), a.size(),
          static_cast<long long>(nan), static_cast<long long>(first_bad),
          a[first_bad], x[first_bad], max_abs, max_rel,
          scale > 0 ? max_abs / scale : 0.0);
      ok = false;
    }
  }
  return ok;
}

// The entry's inputs from --inputs, as the plan converted and checked them.
Inputs InputsOf(const RunPlan& plan) {
  Inputs inputs;
  for (const auto& [name, t] : plan.inputs) inputs.emplace(name, Input(t));
  return inputs;
}

// Sets the parameters and model state --inputs gave (through `buffer`, the
// session's or trainer's view of a resident buffer by name).
template <typename Owner>
absl::Status SetResident(const RunPlan& plan, Runtime& rt, Owner& owner) {
  for (const auto& [name, t] : plan.resident) {
    KILN_ASSIGN_OR_RETURN(Tensor buffer, owner.Buffer(name));
    KILN_RETURN_IF_ERROR(rt.CopyInto(buffer, t));
  }
  return absl::OkStatus();
}

// Batch `records` (num_records of the dataset's record bytes) as the
// entry's inputs, each field as the plan lays it out.
Inputs BatchInputs(const RunPlan& plan, const uint8_t* records,
                   uint64_t num_records) {
  const uint64_t record_bytes = plan.dataset->record_bytes();
  Inputs inputs;
  for (const io::DatasetField& field : plan.fields) {
    HostTensor t;
    t.dtype = field.dtype;
    t.shape = {static_cast<int64_t>(num_records)};
    t.shape.insert(t.shape.end(), field.shape.begin(), field.shape.end());
    t.data.resize(num_records * field.bytes);
    for (uint64_t r = 0; r < num_records; ++r) {
      std::memcpy(t.data.data() + r * field.bytes,
                  records + r * record_bytes + field.offset, field.bytes);
    }
    inputs.emplace(field.name, Input(std::move(t)));
  }
  return inputs;
}

// Runs the entry on every whole batch of the dataset, in file order, and
// prints the mean of each scalar output (e.g. a held-out loss and accuracy).
// Batches are gathered on the host, through the checks of the plan:
// evaluation is not worth an upload pipeline, and the session's calls copy
// host inputs in order anyway.
absl::StatusOr<int> RunEvaluation(const Flags& f, const RunPlan& plan,
                                  Runtime& rt, Session& session) {
  io::BatchOptions options = plan.loader.batch;
  options.num_epochs = 1;
  KILN_ASSIGN_OR_RETURN(io::RecordHook hook,
                        LoaderHook(*plan.dataset, plan.loader));
  KILN_ASSIGN_OR_RETURN(
      std::unique_ptr<io::BatchProducer> producer,
      io::BatchProducer::Start(plan.dataset.get(), options,
                               io::DefaultHostAllocator(), std::move(hook)));
  std::map<std::string, double> sums;
  uint64_t batches = 0;
  while (true) {
    absl::StatusOr<io::Batch> batch = producer->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    KILN_RETURN_IF_ERROR(batch.status());
    KILN_ASSIGN_OR_RETURN(
        Outputs outputs, session.Run(f.entry, BatchInputs(plan, batch->data,
                                                          batch->num_records)));
    for (const auto& [name, tensor] : outputs) {
      KILN_ASSIGN_OR_RETURN(HostTensor host, rt.Download(tensor));
      if (!host.shape.empty()) continue;
      sums[name] += AsDoubles(host)[0];
    }
    ++batches;
  }
  std::printf(
      "evaluated %s on %llu batches of %llu records of %s:", f.entry.c_str(),
      static_cast<unsigned long long>(batches),
      static_cast<unsigned long long>(options.batch_size), f.dataset.c_str());
  bool finite = true;
  for (const auto& [name, sum] : sums) {
    const double mean = sum / static_cast<double>(batches);
    finite = finite && std::isfinite(mean);
    std::printf(" %s %.6g", name.c_str(), mean);
  }
  std::printf("\n");
  return finite ? 0 : 1;
}

// The entry's outputs that live in resident buffers (forward_backward's
// gradients): Run returns only the arena's, --output writes both.
absl::Status DownloadResidentOutputs(const artifact::Entry& entry,
                                     Runtime& rt, const Session& session,
                                     std::map<std::string, HostTensor>& host) {
  for (const artifact::TensorBinding& b : entry.outputs) {
    if (b.buffer.space != artifact::MemorySpace::kResident ||
        host.count(b.name))
      continue;
    KILN_ASSIGN_OR_RETURN(Tensor resident, session.Buffer(b.name));
    KILN_ASSIGN_OR_RETURN(host[b.name], rt.Download(resident));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> RunInference(const Flags& f, const RunPlan& plan,
                                 Runtime& rt, Module& module) {
  KILN_ASSIGN_OR_RETURN(
      auto session,
      module.NewSession(
          {.seed = f.seed, .programmatic_launch = !f.serial_launches}));
  if (!f.params.empty())
    KILN_RETURN_IF_ERROR(session->LoadParameters(f.params));
  KILN_RETURN_IF_ERROR(SetResident(plan, rt, *session));
  if (!f.dataset.empty()) return RunEvaluation(f, plan, rt, *session);
  const Inputs inputs = InputsOf(plan);
  KILN_ASSIGN_OR_RETURN(Outputs outputs, session->Run(f.entry, inputs));
  std::map<std::string, HostTensor> host;
  for (const auto& [name, t] : outputs) {
    KILN_ASSIGN_OR_RETURN(host[name], rt.Download(t));
  }
  if (!f.output.empty()) {
    KILN_RETURN_IF_ERROR(DownloadResidentOutputs(
        *module.artifact().FindEntry(f.entry), rt, *session, host));
  }
  std::printf("ran %s: %zu output(s)", f.entry.c_str(), host.size());
  for (const auto& [name, t] : host) {
    std::printf(" %s %s%s", name.c_str(),
                std::string(DTypeName(t.dtype)).c_str(),
                ShapeString(t.shape).c_str());
  }
  std::printf("\n");
  if (!f.output.empty()) {
    io::Safetensors st;
    st.tensors = host;
    st.metadata["entry"] = f.entry;
    KILN_RETURN_IF_ERROR(io::WriteSafetensorsFile(f.output, st));
    std::printf("wrote %s\n", f.output.c_str());
  }
  int status = 0;
  if (!f.check.empty()) {
    // Outputs that live in resident buffers (forward_backward's gradients)
    // are not returned by Run: compare those by the buffer's name.
    KILN_ASSIGN_OR_RETURN(io::Safetensors expected,
                          io::ReadSafetensorsFile(f.check));
    for (const auto& [name, unused] : expected.tensors) {
      if (host.count(name)) continue;
      absl::StatusOr<Tensor> resident = session->Buffer(name);
      if (!resident.ok()) continue;
      KILN_ASSIGN_OR_RETURN(host[name], rt.Download(*resident));
    }
    KILN_ASSIGN_OR_RETURN(bool ok,
                          Check(host, f.check, f.rtol, f.atol, f.scaled_atol));
    if (!ok) status = 1;
  }
  if (f.bench) {
    KILN_ASSIGN_OR_RETURN(
        std::vector<float> ms,
        session->Benchmark(f.entry, inputs,
                           static_cast<int>(f.warmup.value_or(10)),
                           static_cast<int>(f.iters)));
    std::vector<float> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0;
    for (float t : ms) mean += t;
    mean /= ms.size();
    std::printf(
        "bench %s: median %.4f ms, min %.4f ms, mean %.4f ms over %zu "
        "replays (%lld warm-up calls; %lld of %zu launches "
        "programmatic)\n",
        f.entry.c_str(), sorted[sorted.size() / 2], sorted.front(), mean,
        ms.size(), static_cast<long long>(f.warmup.value_or(10)),
        static_cast<long long>(session->stats().programmatic_launches),
        module.artifact().FindEntry(f.entry)->launches.size());
    // The pool's high-water marks: resident buffers, the entry's arena and
    // the inputs and outputs, everything the run held on the device.
    const PoolStats pool = rt.pool().stats();
    std::printf(
        "bench memory: peak %zu bytes in use (%.1f MiB), %zu reserved from "
        "the device\n",
        pool.peak_bytes_in_use, pool.peak_bytes_in_use / 1048576.0,
        pool.peak_bytes_reserved);
  }
  return status;
}

// Learning rate of update `step` (0-based) of `total`.
double ScheduledLr(const Flags& f, int64_t step, int64_t total) {
  const int64_t warmup = f.warmup.value_or(0);
  if (step < warmup) return f.lr * double(step + 1) / double(warmup);
  if (f.schedule == "cosine") {
    const double span = std::max<int64_t>(1, total - warmup);
    const double t = std::min(1.0, double(step - warmup) / span);
    return f.lr * 0.5 * (1.0 + std::cos(M_PI * t));
  }
  return f.lr;
}

std::string Duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) return absl::StrCat(std::round(seconds * 10) / 10, "s");
  const int64_t s = static_cast<int64_t>(seconds);
  if (s < 3600) return absl::StrCat(s / 60, "m", s % 60, "s");
  return absl::StrCat(s / 3600, "h", (s % 3600) / 60, "m");
}

// The resident set of this process, from /proc (0 where there is none): a
// long run's progress lines show that host memory stays flat.
size_t HostResidentBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long pages = 0, resident = 0;
  const int read = std::fscanf(statm, "%lu %lu", &pages, &resident);
  std::fclose(statm);
  if (read != 2) return 0;
  return static_cast<size_t>(resident) *
         static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// The process's peak resident set (VmHWM), 0 where /proc has none.
size_t HostPeakResidentBytes() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  unsigned long kib = 0;
  while (std::fgets(line, sizeof(line), status) != nullptr) {
    if (std::sscanf(line, "VmHWM: %lu kB", &kib) == 1) break;
  }
  std::fclose(status);
  return static_cast<size_t>(kib) << 10;
}

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// With a non-finite gradient policy compiled in (kilnc --nonfinite-grads=skip,
// --loss-scale=dynamic): the updates skipped so far and the loss scale.
absl::Status PrintSkippedUpdates(Runtime& rt, Trainer& trainer) {
  auto scalar = [&](const char* name) -> absl::StatusOr<double> {
    KILN_ASSIGN_OR_RETURN(Tensor t, trainer.Buffer(name));
    KILN_ASSIGN_OR_RETURN(HostTensor host, rt.Download(t));
    float value = 0;
    std::memcpy(&value, host.data.data(), sizeof(value));
    return value;
  };
  if (!trainer.Buffer("grad_stats.skipped_updates").ok()) {
    return absl::OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(double skipped, scalar("grad_stats.skipped_updates"));
  std::printf("skipped updates (non-finite gradients): %lld of %lld",
              static_cast<long long>(skipped),
              static_cast<long long>(trainer.step()));
  if (trainer.Buffer("loss_scale.exponent").ok()) {
    KILN_ASSIGN_OR_RETURN(double exponent, scalar("loss_scale.exponent"));
    std::printf("; loss scale: the initial one times 2^%lld",
                static_cast<long long>(exponent));
  }
  std::printf("\n");
  return absl::OkStatus();
}

// --log-dir: a TensorBoard event file with the scalars of every logged
// step, and the loss of every step as DIR/loss.svg at the end.
class TrainingLog {
 public:
  static absl::StatusOr<std::unique_ptr<TrainingLog>> Open(
      const std::string& dir, const std::string& model) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<observe::EventFileWriter> events,
                          observe::EventFileWriter::Open(dir));
    return std::unique_ptr<TrainingLog>(
        new TrainingLog(dir, model, std::move(events)));
  }

  // Training starts after `step` (0, or a resumed checkpoint's step).
  void Begin(int64_t step) {
    last_step_ = step;
    last_time_ = std::chrono::steady_clock::now();
  }

  void AddLoss(int64_t step, float loss) { losses_.push_back({step, loss}); }

  // The scalars of `step`: steps/s is the rate since the previous call.
  absl::Status AddStep(int64_t step, float loss, float lr, Runtime& rt,
                       Trainer& trainer) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<std::string, double>> scalars = {
        {"loss", loss}, {"learning_rate", lr}};
    if (last_step_ >= 0) {
      const double seconds =
          std::chrono::duration<double>(now - last_time_).count();
      scalars.push_back(
          {"steps_per_second", (step - last_step_) / std::max(seconds, 1e-9)});
    }
    last_step_ = step;
    last_time_ = now;
    const PoolStats pool = rt.pool().stats();
    scalars.push_back(
        {"device/pool_bytes_in_use", static_cast<double>(pool.bytes_in_use)});
    scalars.push_back({"device/pool_peak_bytes_in_use",
                       static_cast<double>(pool.peak_bytes_in_use)});
    // The statistics the update computed (kilnc --grad-stats) and, under a
    // skip policy, the updates skipped so far.
    static constexpr std::pair<const char*, const char*> kStatistics[] = {
        {"grad_stats.global_norm", "grad/global_norm"},
        {"grad_stats.max_abs", "grad/max_abs"},
        {"grad_stats.nonfinite_count", "grad/nonfinite_count"}};
    for (const auto& [output, tag] : kStatistics) {
      if (!trainer.HasUpdateOutput(output)) continue;
      KILN_ASSIGN_OR_RETURN(float value, trainer.UpdateOutput(output));
      scalars.push_back({tag, value});
    }
    if (trainer.Buffer("grad_stats.skipped_updates").ok()) {
      KILN_ASSIGN_OR_RETURN(Tensor t,
                            trainer.Buffer("grad_stats.skipped_updates"));
      KILN_ASSIGN_OR_RETURN(HostTensor host, rt.Download(t));
      float skipped = 0;
      std::memcpy(&skipped, host.data.data(), sizeof(skipped));
      scalars.push_back({"grad/skipped_updates", skipped});
    }
    return events_->AddScalars(step, scalars);
  }

  // Closes the event file and writes the loss curve.
  absl::Status Finish() {
    KILN_RETURN_IF_ERROR(events_->Close());
    return observe::WriteLossCurveSvg(curve_path_, losses_,
                                      absl::StrCat("training loss: ", model_));
  }

  const std::string& events_path() const { return events_->path(); }
  const std::string& curve_path() const { return curve_path_; }

 private:
  TrainingLog(const std::string& dir, std::string model,
              std::unique_ptr<observe::EventFileWriter> events)
      : curve_path_(dir + "/loss.svg"),
        model_(std::move(model)),
        events_(std::move(events)) {}

  std::string curve_path_;
  std::string model_;
  std::unique_ptr<observe::EventFileWriter> events_;
  std::vector<observe::CurvePoint> losses_;
  int64_t last_step_ = -1;
  std::chrono::steady_clock::time_point last_time_;
};

// This process's place in data-parallel training (one rank of one without).
struct Ranks {
  std::shared_ptr<distributed::Communicator> communicator;
  int rank = 0;
  int world_size = 1;
  // Rank 0 writes the checkpoints, the logs and the checks.
  bool leader() const { return rank == 0; }
};

absl::StatusOr<int> RunTraining(const Flags& f, const RunPlan& plan,
                                Runtime& rt, Module& module,
                                const Ranks& ranks) {
  TrainerOptions trainer_options;
  trainer_options.seed = f.seed;
  trainer_options.programmatic_launch = !f.serial_launches;
  trainer_options.communicator = ranks.communicator;
  KILN_ASSIGN_OR_RETURN(auto trainer, module.NewTrainer(trainer_options));
  if (!f.resume.empty()) {
    KILN_RETURN_IF_ERROR(trainer->Restore(f.resume));
    std::printf("resumed from %s at step %lld\n", f.resume.c_str(),
                static_cast<long long>(trainer->step()));
  }
  KILN_RETURN_IF_ERROR(SetResident(plan, rt, *trainer));
  const int64_t total = *f.steps;
  const int64_t start = trainer->step();
  const uint64_t batch_size = plan.loader.batch.batch_size;

  const Inputs fixed = InputsOf(plan);
  std::unique_ptr<DeviceBatchLoader> loader;
  if (plan.dataset != nullptr) {
    DeviceBatchLoaderOptions options = plan.loader;
    // Every rank draws the same global batches and trains on its slice.
    options.batch.shard_count = static_cast<uint64_t>(ranks.world_size);
    options.batch.shard_index = static_cast<uint64_t>(ranks.rank);
    KILN_ASSIGN_OR_RETURN(
        loader, DeviceBatchLoader::Create(rt, plan.dataset.get(), options,
                                          trainer->stream()));
    // Resumed: the batches of the steps already done are skipped, so the data
    // order continues where the checkpoint left it.
    for (int64_t i = 0; i < start; ++i) {
      KILN_RETURN_IF_ERROR(loader->Next().status());
    }
  }

  const bool skips_nonfinite =
      trainer->Buffer("grad_stats.skipped_updates").ok();
  if (ranks.communicator != nullptr) {
    std::printf("data parallel: %d ranks, %s; the loss printed is rank 0's\n",
                ranks.world_size,
                loader != nullptr
                    ? absl::StrCat("global batches of ", ranks.world_size,
                                   " x ", batch_size, " records")
                          .c_str()
                    : "every rank on the same --inputs");
  }
  std::unique_ptr<TrainingLog> log;
  if (!f.log_dir.empty() && ranks.leader()) {
    KILN_ASSIGN_OR_RETURN(log, TrainingLog::Open(f.log_dir, f.model));
    std::printf("logging to %s\n", log->events_path().c_str());
  }
  const bool tty = isatty(fileno(stdout));
  const int64_t log_every = f.log_every > 0
                                ? f.log_every
                                : std::max<int64_t>(1, (total - start) / 20);
  const auto t0 = std::chrono::steady_clock::now();
  auto last_print = t0;
  if (log != nullptr) log->Begin(start);
  int64_t last_print_step = start;
  float loss = NAN, first_loss = NAN;
  // The last checkpoint a failed step can be resumed from.
  int64_t saved_step = f.resume.empty() ? -1 : start;
  std::string saved_from = f.resume;
  for (int64_t step = start; step < total; ++step) {
    const float lr = static_cast<float>(
        ScheduledLr(f, step, f.schedule_steps.value_or(total)));
    absl::StatusOr<float> result;
    if (loader != nullptr) {
      KILN_ASSIGN_OR_RETURN(DeviceBatch batch, loader->Next());
      result = trainer->Step(batch.inputs(), lr);
    } else {
      result = trainer->Step(fixed, lr);
    }
    if (!result.ok()) {
      if (tty) std::printf("\n");
      std::string intact;
      if (saved_step >= 0) {
        intact = absl::StrCat("; the checkpoint ", saved_from, " of step ",
                              saved_step, " is intact: continue with --resume ",
                              saved_from);
      }
      if (log != nullptr) log->Finish().IgnoreError();
      return Annotate(result.status(), absl::StrCat("step ", step + 1, intact));
    }
    if (f.checkpoint_every > 0 && (step + 1) % f.checkpoint_every == 0 &&
        step + 1 < total && ranks.leader()) {
      KILN_RETURN_IF_ERROR(trainer->Save(f.checkpoint));
      saved_step = step + 1;
      saved_from = f.checkpoint;
    }
    loss = *result;
    if (step == start) first_loss = loss;
    if (log != nullptr) log->AddLoss(step + 1, loss);
    // Under a skip policy the step's update was skipped and counted; without
    // one the parameters are lost and the run stops.
    if (!std::isfinite(loss) && !skips_nonfinite) {
      if (tty) std::printf("\n");
      if (log != nullptr) log->Finish().IgnoreError();
      std::fprintf(stderr, "kiln-run: the loss is %g at step %lld\n", loss,
                   static_cast<long long>(step + 1));
      return 1;
    }
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - t0).count();
    const double rate = (step + 1 - start) / std::max(elapsed, 1e-9);
    const bool last = step + 1 == total;
    if (log != nullptr && ((step + 1 - start) % log_every == 0 || last)) {
      KILN_RETURN_IF_ERROR(log->AddStep(step + 1, loss, lr, rt, *trainer));
    }
    const bool due =
        tty ? (std::chrono::duration<double>(now - last_print).count() > 0.1 ||
               last)
            : ((step + 1 - start) % log_every == 0 || last);
    if (due) {
      // The mean step time since the last line, and the device pool and host
      // memory now: a leak shows as growth from line to line.
      const double window_ms =
          1e3 * std::chrono::duration<double>(now - last_print).count() /
          std::max<int64_t>(1, step + 1 - last_print_step);
      last_print = now;
      last_print_step = step + 1;
      const PoolStats pool = rt.pool().stats();
      std::printf(
          "%sstep %lld/%lld  loss %.6g  lr %.3g  %.1f steps/s  %.3f ms/step  "
          "pool %.1f MiB (peak %.1f, %lld device allocs)  host %.1f MiB  "
          "ETA %s%s",
          tty ? "\r" : "", static_cast<long long>(step + 1),
          static_cast<long long>(total), loss, lr, rate, window_ms,
          MiB(pool.bytes_in_use), MiB(pool.peak_bytes_in_use),
          static_cast<long long>(pool.device_allocations),
          MiB(HostResidentBytes()), Duration((total - step - 1) / rate).c_str(),
          tty ? "\033[K" : "\n");
      std::fflush(stdout);
    }
  }
  if (tty) std::printf("\n");
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::printf(
      "trained steps %lld..%lld in %s: first loss %.6g, final loss %.6g\n",
      static_cast<long long>(start + 1), static_cast<long long>(total),
      Duration(elapsed).c_str(), first_loss, loss);
  const PoolStats pool = rt.pool().stats();
  std::printf(
      "memory: device pool peak %.1f MiB in use, %.1f MiB reserved; host "
      "peak resident %.1f MiB\n",
      MiB(pool.peak_bytes_in_use), MiB(pool.peak_bytes_reserved),
      MiB(HostPeakResidentBytes()));
  KILN_RETURN_IF_ERROR(PrintSkippedUpdates(rt, *trainer));
  if (log != nullptr) {
    KILN_RETURN_IF_ERROR(log->Finish());
    std::printf("wrote %s and %s\n", log->events_path().c_str(),
                log->curve_path().c_str());
  }
  if (!f.checkpoint.empty() && ranks.leader()) {
    KILN_RETURN_IF_ERROR(trainer->Save(f.checkpoint));
    std::printf("wrote checkpoint %s (step %lld)\n", f.checkpoint.c_str(),
                static_cast<long long>(trainer->step()));
  }
  if (!f.check.empty() && ranks.leader()) {
    std::map<std::string, HostTensor> params;
    for (const std::string& name : trainer->parameter_names()) {
      KILN_ASSIGN_OR_RETURN(Tensor t, trainer->Parameter(name));
      KILN_ASSIGN_OR_RETURN(params[name], rt.Download(t));
    }
    KILN_ASSIGN_OR_RETURN(
        bool ok, Check(params, f.check, f.rtol, f.atol, f.scaled_atol));
    if (!ok) return 1;
  }
  return 0;
}

// The data-parallel configuration from the environment and --distributed:
// nullopt for one process.
absl::StatusOr<std::optional<distributed::DistributedConfig>> RanksOf(
    const Flags& f) {
  if (f.distributed == "off") return std::nullopt;
  KILN_ASSIGN_OR_RETURN(std::optional<distributed::DistributedConfig> config,
                        distributed::ConfigFromEnvironment());
  if (!config && f.distributed == "nccl") {
    config = distributed::DistributedConfig();  // rank 0 of 1
  }
  if (config && config->world_size == 1 && f.distributed != "nccl") {
    return std::nullopt;
  }
  if (config && f.nproc > 1 && f.nproc != config->world_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--nproc ", f.nproc, " but WORLD_SIZE is ", config->world_size));
  }
  if (config && !f.steps) {
    return absl::InvalidArgumentError(
        "data-parallel ranks train: give --steps (inference and evaluation "
        "run as one process, --distributed=off)");
  }
  return config;
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

int Main(int argc, char** argv) {
  const Flags flags = ParseFlagsOrExit(argc, argv);
  if (flags.mode == RunMode::kDescribe) return Describe(flags.model);
  std::string who;
  auto fail = [&who](const absl::Status& s) {
    std::fprintf(stderr, "kiln-run%s: %s\n", who.c_str(),
                 std::string(s.ToString()).c_str());
    return 1;
  };
  // The launcher: N ranks of this command line, each of which finds RANK
  // in its environment. The files are checked once before any starts.
  const char* rank_variable = std::getenv("RANK");
  if (flags.nproc > 1 && (rank_variable == nullptr || *rank_variable == 0) &&
      !flags.dry_run) {
    if (absl::Status checked = PlanRun(flags, flags.nproc).status();
        !checked.ok()) {
      return fail(checked);
    }
    LaunchOptions launch;
    launch.nproc = flags.nproc;
    return LaunchRanks(argv, launch);
  }
  absl::StatusOr<std::optional<distributed::DistributedConfig>> config =
      RanksOf(flags);
  if (!config.ok()) return fail(config.status());
  Ranks ranks;
  int device = flags.device;
  if (config->has_value()) {
    ranks.rank = (*config)->rank;
    ranks.world_size = (*config)->world_size;
    device = (*config)->local_rank;
    who = absl::StrCat(" (rank ", ranks.rank, " of ", ranks.world_size, ")");
    // One progress report: rank 0's. The others print only errors (their
    // stdout discards what it is given; /dev/null may be unavailable, as
    // in sandboxes).
    if (ranks.rank > 0) {
      cookie_io_functions_t discard = {};
      discard.write = [](void*, const char*, size_t size) -> ssize_t {
        return static_cast<ssize_t>(size);
      };
      FILE* quiet = fopencookie(nullptr, "w", discard);
      if (quiet == nullptr) {
        return fail(absl::InternalError("cannot silence stdout"));
      }
      std::fflush(stdout);
      stdout = quiet;
    }
  }
  // Every file and flag against the artifact first, each file read once: a
  // bad one is reported as such, also on a machine without a GPU.
  const int world_size =
      config->has_value() ? ranks.world_size : std::max(1, flags.nproc);
  absl::StatusOr<RunPlan> plan = PlanRun(flags, world_size);
  if (!plan.ok()) return fail(plan.status());
  if (flags.dry_run) return DryRun(flags, *plan, world_size);
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(device);
  if (!rt.ok()) return fail(rt.status());
  if (config->has_value()) {
    // On the rank's device (Runtime::Open made its context current).
    absl::StatusOr<std::unique_ptr<distributed::Communicator>> communicator =
        distributed::Communicator::Create(**config);
    if (!communicator.ok()) return fail(communicator.status());
    ranks.communicator = std::move(*communicator);
  }
  (*rt)->pool().SetLimit(static_cast<size_t>(flags.memory_limit));
  absl::StatusOr<std::unique_ptr<Module>> module =
      (*rt)->LoadFromMemory(plan->artifact_bytes);
  if (!module.ok()) return fail(Annotate(module.status(), flags.model));
  std::printf("%s on %s (sm_%d), kernels from %s\n", flags.model.c_str(),
              (*rt)->device().name().c_str(),
              (*rt)->device().compute_capability().sm(),
              (*module)->loaded_cubins() ? "cubins" : "PTX");
  absl::StatusOr<int> status =
      flags.steps ? RunTraining(flags, *plan, **rt, **module, ranks)
                  : RunInference(flags, *plan, **rt, **module);
  if (!status.ok() && ranks.communicator != nullptr) {
    // A failed rank leaves without tearing down: its streams may hold NCCL
    // work that waits for a peer that is gone.
    fail(status.status());
    std::fflush(nullptr);
    _exit(1);
  }
  if (!status.ok()) return fail(status.status());
  return *status;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) { return kiln::Main(argc, argv); }
