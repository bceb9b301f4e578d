// kiln-run --dataset without --steps: an entry over every whole batch of a
// dataset, and the mean of each scalar output.
#ifndef KILN_TOOLS_KILN_RUN_EVALUATION_H_
#define KILN_TOOLS_KILN_RUN_EVALUATION_H_

#include "absl/status/statusor.h"
#include "kiln/runtime.h"
#include "tools/kiln-run/flags.h"
#include "tools/kiln-run/preflight.h"

namespace kiln {

// Runs the entry on every whole batch of the dataset, in file order, and
// prints the mean of each scalar output (e.g. a held-out loss and accuracy).
// Returns the exit status: 1 when a mean is not finite, else 0.
absl::StatusOr<int> RunEvaluation(const Flags& f, const RunPlan& plan,
                                  Runtime& rt, Session& session);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_EVALUATION_H_
