// kiln-run --log-dir: a TensorBoard event file with the scalars of every
// logged step, and the loss of every step as DIR/loss.svg at the end.
#ifndef KILN_TOOLS_KILN_RUN_TRAINING_LOG_H_
#define KILN_TOOLS_KILN_RUN_TRAINING_LOG_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/runtime.h"
#include "runtime/observe/event_file.h"
#include "runtime/observe/loss_curve.h"

namespace kiln {

// The resident buffer where a non-finite gradient policy (kilnc
// --nonfinite-grads=skip, --loss-scale=dynamic) counts the updates skipped.
inline constexpr char kSkippedUpdates[] = "grad_stats.skipped_updates";

// The f32 scalar in the trainer's resident buffer `name`.
absl::StatusOr<float> ResidentScalar(Runtime& rt, Trainer& trainer,
                                     const char* name);

class TrainingLog {
 public:
  static absl::StatusOr<std::unique_ptr<TrainingLog>> Open(
      const std::string& dir, const std::string& model);

  // Training starts after `step` (0, or a resumed checkpoint's step).
  void Begin(int64_t step);

  void AddLoss(int64_t step, float loss) { losses_.push_back({step, loss}); }

  // The scalars of `step`: steps/s is the rate since the previous call.
  absl::Status AddStep(int64_t step, float loss, float lr, Runtime& rt,
                       Trainer& trainer);

  // Closes the event file and writes the loss curve.
  absl::Status Finish();

  const std::string& events_path() const { return events_->path(); }
  const std::string& curve_path() const { return curve_path_; }

 private:
  TrainingLog(const std::string& dir, std::string model,
              std::unique_ptr<observe::EventFileWriter> events);

  // The statistics the update computed (kilnc --grad-stats) and, under a
  // skip policy, the updates skipped so far.
  absl::Status AddGradientStatistics(
      Runtime& rt, Trainer& trainer,
      std::vector<std::pair<std::string, double>>& scalars);

  std::string curve_path_;
  std::string model_;
  std::unique_ptr<observe::EventFileWriter> events_;
  std::vector<observe::CurvePoint> losses_;
  int64_t last_step_ = -1;
  std::chrono::steady_clock::time_point last_time_;
};

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_TRAINING_LOG_H_
