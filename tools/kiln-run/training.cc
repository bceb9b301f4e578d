#include "tools/kiln-run/training.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "kiln/batch_loader.h"
#include "kiln/status.h"
#include "runtime/memory/pool.h"
#include "tools/kiln-run/check.h"
#include "tools/kiln-run/progress.h"
#include "tools/kiln-run/run_inputs.h"
#include "tools/kiln-run/training_log.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
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

// The trainer, resumed from --resume and with the resident buffers --inputs
// sets.
absl::StatusOr<std::unique_ptr<Trainer>> StartTrainer(const Flags& f,
                                                      const RunPlan& plan,
                                                      Runtime& rt,
                                                      Module& module,
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
  return trainer;
}

// --dataset's batches (null without), past those of the steps already done.
absl::StatusOr<std::unique_ptr<DeviceBatchLoader>> StartLoader(
    const RunPlan& plan, Runtime& rt, Trainer& trainer, const Ranks& ranks) {
  if (plan.dataset == nullptr) return std::unique_ptr<DeviceBatchLoader>();
  DeviceBatchLoaderOptions options = plan.loader;
  // Every rank draws the same global batches and trains on its slice.
  options.batch.shard_count = static_cast<uint64_t>(ranks.world_size);
  options.batch.shard_index = static_cast<uint64_t>(ranks.rank);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBatchLoader> loader,
                        DeviceBatchLoader::Create(rt, plan.dataset.get(),
                                                  options, trainer.stream()));
  // Resumed: the batches of the steps already done are skipped, so the data
  // order continues where the checkpoint left it.
  for (int64_t i = 0; i < trainer.step(); ++i) {
    KILN_RETURN_IF_ERROR(loader->Next().status());
  }
  return loader;
}

void PrintDataParallel(const Ranks& ranks, bool from_dataset,
                       uint64_t batch_size) {
  if (ranks.communicator == nullptr) return;
  std::printf("data parallel: %d ranks, %s; the loss printed is rank 0's\n",
              ranks.world_size,
              from_dataset
                  ? absl::StrCat("global batches of ", ranks.world_size, " x ",
                                 batch_size, " records")
                        .c_str()
                  : "every rank on the same --inputs");
}

// --log-dir's log, written by rank 0 (null otherwise).
absl::StatusOr<std::unique_ptr<TrainingLog>> OpenLog(const Flags& f,
                                                     const Ranks& ranks) {
  if (f.log_dir.empty() || !ranks.leader()) {
    return std::unique_ptr<TrainingLog>();
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<TrainingLog> log,
                        TrainingLog::Open(f.log_dir, f.model));
  std::printf("logging to %s\n", log->events_path().c_str());
  return log;
}

// With a non-finite gradient policy compiled in (kilnc --nonfinite-grads=skip,
// --loss-scale=dynamic): the updates skipped so far and the loss scale.
absl::Status PrintSkippedUpdates(Runtime& rt, Trainer& trainer) {
  if (!trainer.Buffer(kSkippedUpdates).ok()) return absl::OkStatus();
  KILN_ASSIGN_OR_RETURN(float skipped,
                        ResidentScalar(rt, trainer, kSkippedUpdates));
  std::printf("skipped updates (non-finite gradients): %lld of %lld",
              static_cast<long long>(skipped),
              static_cast<long long>(trainer.step()));
  if (trainer.Buffer("loss_scale.exponent").ok()) {
    KILN_ASSIGN_OR_RETURN(float exponent,
                          ResidentScalar(rt, trainer, "loss_scale.exponent"));
    std::printf("; loss scale: the initial one times 2^%lld",
                static_cast<long long>(exponent));
  }
  std::printf("\n");
  return absl::OkStatus();
}

// The steps from the trainer's step to --steps: progress lines (on a
// terminal one line rewritten, else one every --log-every steps), the log,
// and the checkpoints of --checkpoint-every.
class TrainingLoop {
 public:
  TrainingLoop(const Flags& f, const RunPlan& plan, Runtime& rt,
               const Ranks& ranks, Trainer& trainer, DeviceBatchLoader* loader,
               TrainingLog* log);

  // 0 when every step ran; 1 when the loss became non-finite without a
  // skip policy (the run stops: the parameters are lost).
  absl::StatusOr<int> Run();

  float first_loss() const { return first_loss_; }
  float loss() const { return loss_; }
  double elapsed_seconds() const { return Seconds(Clock::now() - t0_); }

 private:
  absl::Status StepFailed(int64_t step, const absl::Status& status);
  absl::Status SaveIfDue(int64_t step);
  int StopOnNonfiniteLoss(int64_t step);
  absl::Status Report(int64_t step, float lr);
  void PrintProgress(int64_t step, float lr, double rate,
                     Clock::time_point now);
  void EndLine() const {
    if (tty_) std::printf("\n");
  }

  const Flags& f_;
  Runtime& rt_;
  const Ranks& ranks_;
  Trainer& trainer_;
  DeviceBatchLoader* loader_;
  TrainingLog* log_;
  const Inputs fixed_;
  const int64_t total_, start_, log_every_;
  const bool skips_nonfinite_;
  const bool tty_ = isatty(fileno(stdout));
  Clock::time_point t0_, last_print_;
  int64_t last_print_step_;
  float loss_ = NAN, first_loss_ = NAN;
  // The last checkpoint a failed step can be resumed from.
  int64_t saved_step_;
  std::string saved_from_;
};

TrainingLoop::TrainingLoop(const Flags& f, const RunPlan& plan, Runtime& rt,
                           const Ranks& ranks, Trainer& trainer,
                           DeviceBatchLoader* loader, TrainingLog* log)
    : f_(f),
      rt_(rt),
      ranks_(ranks),
      trainer_(trainer),
      loader_(loader),
      log_(log),
      fixed_(InputsOf(plan)),
      total_(*f.steps),
      start_(trainer.step()),
      log_every_(f.log_every > 0
                     ? f.log_every
                     : std::max<int64_t>(1, (total_ - start_) / 20)),
      skips_nonfinite_(trainer.Buffer(kSkippedUpdates).ok()),
      last_print_step_(start_),
      saved_step_(f.resume.empty() ? -1 : start_),
      saved_from_(f.resume) {}

absl::StatusOr<int> TrainingLoop::Run() {
  t0_ = last_print_ = Clock::now();
  if (log_ != nullptr) log_->Begin(start_);
  for (int64_t step = start_; step < total_; ++step) {
    const float lr = static_cast<float>(
        ScheduledLr(f_, step, f_.schedule_steps.value_or(total_)));
    absl::StatusOr<float> loss;
    if (loader_ != nullptr) {
      KILN_ASSIGN_OR_RETURN(DeviceBatch batch, loader_->Next());
      loss = trainer_.Step(batch.inputs(), lr);
    } else {
      loss = trainer_.Step(fixed_, lr);
    }
    if (!loss.ok()) return StepFailed(step, loss.status());
    KILN_RETURN_IF_ERROR(SaveIfDue(step));
    loss_ = *loss;
    if (step == start_) first_loss_ = loss_;
    if (log_ != nullptr) log_->AddLoss(step + 1, loss_);
    // Under a skip policy the step's update was skipped and counted.
    if (!std::isfinite(loss_) && !skips_nonfinite_) {
      return StopOnNonfiniteLoss(step);
    }
    KILN_RETURN_IF_ERROR(Report(step, lr));
  }
  EndLine();
  return 0;
}

// The step's error, with the checkpoint it can be resumed from.
absl::Status TrainingLoop::StepFailed(int64_t step,
                                      const absl::Status& status) {
  EndLine();
  std::string intact;
  if (saved_step_ >= 0) {
    intact =
        absl::StrCat("; the checkpoint ", saved_from_, " of step ", saved_step_,
                     " is intact: continue with --resume ", saved_from_);
  }
  if (log_ != nullptr) log_->Finish().IgnoreError();
  return Annotate(status, absl::StrCat("step ", step + 1, intact));
}

// --checkpoint-every, by rank 0; the last step's checkpoint is written after
// the loop.
absl::Status TrainingLoop::SaveIfDue(int64_t step) {
  if (f_.checkpoint_every > 0 && (step + 1) % f_.checkpoint_every == 0 &&
      step + 1 < total_ && ranks_.leader()) {
    KILN_RETURN_IF_ERROR(trainer_.Save(f_.checkpoint));
    saved_step_ = step + 1;
    saved_from_ = f_.checkpoint;
  }
  return absl::OkStatus();
}

int TrainingLoop::StopOnNonfiniteLoss(int64_t step) {
  EndLine();
  if (log_ != nullptr) log_->Finish().IgnoreError();
  std::fprintf(stderr, "kiln-run: the loss is %g at step %lld\n", loss_,
               static_cast<long long>(step + 1));
  return 1;
}

// The log's scalars and the progress line, when due after `step`.
absl::Status TrainingLoop::Report(int64_t step, float lr) {
  const Clock::time_point now = Clock::now();
  const double rate = (step + 1 - start_) / std::max(Seconds(now - t0_), 1e-9);
  const bool last = step + 1 == total_;
  const bool every = (step + 1 - start_) % log_every_ == 0 || last;
  if (log_ != nullptr && every) {
    KILN_RETURN_IF_ERROR(log_->AddStep(step + 1, loss_, lr, rt_, trainer_));
  }
  const bool due = tty_ ? (Seconds(now - last_print_) > 0.1 || last) : every;
  if (due) PrintProgress(step, lr, rate, now);
  return absl::OkStatus();
}

void TrainingLoop::PrintProgress(int64_t step, float lr, double rate,
                                 Clock::time_point now) {
  // The mean step time since the last line, and the device pool and host
  // memory now: a leak shows as growth from line to line.
  const double window_ms = 1e3 * Seconds(now - last_print_) /
                           std::max<int64_t>(1, step + 1 - last_print_step_);
  last_print_ = now;
  last_print_step_ = step + 1;
  const PoolStats pool = rt_.pool().stats();
  std::printf(
      "%sstep %lld/%lld  loss %.6g  lr %.3g  %.1f steps/s  %.3f ms/step  "
      "pool %.1f MiB (peak %.1f, %lld device allocs)  host %.1f MiB  "
      "ETA %s%s",
      tty_ ? "\r" : "", static_cast<long long>(step + 1),
      static_cast<long long>(total_), loss_, lr, rate, window_ms,
      MiB(pool.bytes_in_use), MiB(pool.peak_bytes_in_use),
      static_cast<long long>(pool.device_allocations), MiB(HostResidentBytes()),
      Duration((total_ - step - 1) / rate).c_str(), tty_ ? "\033[K" : "\n");
  std::fflush(stdout);
}

void PrintSummary(int64_t start, int64_t total, const TrainingLoop& loop,
                  Runtime& rt) {
  std::printf(
      "trained steps %lld..%lld in %s: first loss %.6g, final loss %.6g\n",
      static_cast<long long>(start + 1), static_cast<long long>(total),
      Duration(loop.elapsed_seconds()).c_str(), loop.first_loss(), loop.loss());
  const PoolStats pool = rt.pool().stats();
  std::printf(
      "memory: device pool peak %.1f MiB in use, %.1f MiB reserved; host "
      "peak resident %.1f MiB\n",
      MiB(pool.peak_bytes_in_use), MiB(pool.peak_bytes_reserved),
      MiB(HostPeakResidentBytes()));
}

// --check on the trained parameters.
absl::StatusOr<bool> CheckParameters(const Flags& f, Runtime& rt,
                                     Trainer& trainer) {
  std::map<std::string, HostTensor> params;
  for (const std::string& name : trainer.parameter_names()) {
    KILN_ASSIGN_OR_RETURN(Tensor t, trainer.Parameter(name));
    KILN_ASSIGN_OR_RETURN(params[name], rt.Download(t));
  }
  return CheckAgainstFile(params, f.check,
                          {.rtol = f.rtol,
                           .atol = f.atol,
                           .scaled_atol = f.scaled_atol,
                           .shared_gradient_scale = f.shared_gradient_scale});
}

// After the last step: the summary, the log's files, the checkpoint and
// --check, the last two by rank 0.
absl::StatusOr<int> FinishTraining(const Flags& f, Runtime& rt,
                                   const Ranks& ranks, Trainer& trainer,
                                   TrainingLog* log) {
  KILN_RETURN_IF_ERROR(PrintSkippedUpdates(rt, trainer));
  if (log != nullptr) {
    KILN_RETURN_IF_ERROR(log->Finish());
    std::printf("wrote %s and %s\n", log->events_path().c_str(),
                log->curve_path().c_str());
  }
  if (!f.checkpoint.empty() && ranks.leader()) {
    KILN_RETURN_IF_ERROR(trainer.Save(f.checkpoint));
    std::printf("wrote checkpoint %s (step %lld)\n", f.checkpoint.c_str(),
                static_cast<long long>(trainer.step()));
  }
  if (!f.check.empty() && ranks.leader()) {
    KILN_ASSIGN_OR_RETURN(bool ok, CheckParameters(f, rt, trainer));
    if (!ok) return 1;
  }
  return 0;
}

}  // namespace

absl::StatusOr<int> RunTraining(const Flags& f, const RunPlan& plan,
                                Runtime& rt, Module& module,
                                const Ranks& ranks) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                        StartTrainer(f, plan, rt, module, ranks));
  const int64_t start = trainer->step();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBatchLoader> loader,
                        StartLoader(plan, rt, *trainer, ranks));
  PrintDataParallel(ranks, loader != nullptr, plan.loader.batch.batch_size);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<TrainingLog> log, OpenLog(f, ranks));
  TrainingLoop loop(f, plan, rt, ranks, *trainer, loader.get(), log.get());
  KILN_ASSIGN_OR_RETURN(int stopped, loop.Run());
  if (stopped != 0) return stopped;
  PrintSummary(start, *f.steps, loop, rt);
  return FinishTraining(f, rt, ranks, *trainer, log.get());
}

}  // namespace kiln
