// kiln-run without --steps: one entry on --inputs (its outputs printed,
// written with --output, compared with --check, timed with --bench), or with
// --dataset over every batch (evaluation.h).
#ifndef KILN_TOOLS_KILN_RUN_INFERENCE_H_
#define KILN_TOOLS_KILN_RUN_INFERENCE_H_

#include "absl/status/statusor.h"
#include "kiln/runtime.h"
#include "tools/kiln-run/flags.h"
#include "tools/kiln-run/preflight.h"

namespace kiln {

// Returns the exit status: 1 when --check found a mismatch (or evaluation a
// mean that is not finite), else 0.
absl::StatusOr<int> RunInference(const Flags& f, const RunPlan& plan,
                                 Runtime& rt, Module& module);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_INFERENCE_H_
