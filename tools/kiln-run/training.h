// kiln-run --steps: the training loop, from --resume's step or 0 to --steps,
// on --inputs or batches of --dataset (this rank's shard of each global
// batch), with progress lines, --log-dir, checkpoints and, at the end,
// --check on the parameters.
#ifndef KILN_TOOLS_KILN_RUN_TRAINING_H_
#define KILN_TOOLS_KILN_RUN_TRAINING_H_

#include "absl/status/statusor.h"
#include "kiln/runtime.h"
#include "tools/kiln-run/flags.h"
#include "tools/kiln-run/preflight.h"
#include "tools/kiln-run/ranks.h"

namespace kiln {

// Returns the exit status: 1 when the loss became non-finite without a skip
// policy or --check found a mismatch, else 0. A failed step's error says
// which checkpoint is intact.
absl::StatusOr<int> RunTraining(const Flags& f, const RunPlan& plan,
                                Runtime& rt, Module& module,
                                const Ranks& ranks);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_TRAINING_H_
