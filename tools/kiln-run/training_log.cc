#include "tools/kiln-run/training_log.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kiln/status.h"
#include "runtime/memory/pool.h"

namespace kiln {

absl::StatusOr<float> ResidentScalar(Runtime& rt, Trainer& trainer,
                                     const char* name) {
  KILN_ASSIGN_OR_RETURN(Tensor t, trainer.Buffer(name));
  KILN_ASSIGN_OR_RETURN(HostTensor host, rt.Download(t));
  float value = 0;
  std::memcpy(&value, host.data.data(), sizeof(value));
  return value;
}

absl::StatusOr<std::unique_ptr<TrainingLog>> TrainingLog::Open(
    const std::string& dir, const std::string& model) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<observe::EventFileWriter> events,
                        observe::EventFileWriter::Open(dir));
  return std::unique_ptr<TrainingLog>(
      new TrainingLog(dir, model, std::move(events)));
}

TrainingLog::TrainingLog(const std::string& dir, std::string model,
                         std::unique_ptr<observe::EventFileWriter> events)
    : curve_path_(dir + "/loss.svg"),
      model_(std::move(model)),
      events_(std::move(events)) {}

void TrainingLog::Begin(int64_t step) {
  last_step_ = step;
  last_time_ = std::chrono::steady_clock::now();
}

absl::Status TrainingLog::AddStep(int64_t step, float loss, float lr,
                                  Runtime& rt, Trainer& trainer) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, double>> scalars = {{"loss", loss},
                                                         {"learning_rate", lr}};
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
  KILN_RETURN_IF_ERROR(AddGradientStatistics(rt, trainer, scalars));
  return events_->AddScalars(step, scalars);
}

absl::Status TrainingLog::AddGradientStatistics(
    Runtime& rt, Trainer& trainer,
    std::vector<std::pair<std::string, double>>& scalars) {
  static constexpr std::pair<const char*, const char*> kStatistics[] = {
      {"grad_stats.global_norm", "grad/global_norm"},
      {"grad_stats.max_abs", "grad/max_abs"},
      {"grad_stats.nonfinite_count", "grad/nonfinite_count"}};
  for (const auto& [output, tag] : kStatistics) {
    if (!trainer.HasUpdateOutput(output)) continue;
    KILN_ASSIGN_OR_RETURN(float value, trainer.UpdateOutput(output));
    scalars.push_back({tag, value});
  }
  if (trainer.Buffer(kSkippedUpdates).ok()) {
    KILN_ASSIGN_OR_RETURN(float skipped,
                          ResidentScalar(rt, trainer, kSkippedUpdates));
    scalars.push_back({"grad/skipped_updates", skipped});
  }
  return absl::OkStatus();
}

absl::Status TrainingLog::Finish() {
  KILN_RETURN_IF_ERROR(events_->Close());
  return observe::WriteLossCurveSvg(curve_path_, losses_,
                                    absl::StrCat("training loss: ", model_));
}

}  // namespace kiln
