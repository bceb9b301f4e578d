// What kiln-run hands an entry from its plan (preflight.h): the --inputs
// tensors as the entry's inputs, the resident buffers they set, and batches
// of dataset records laid out as the entry's inputs.
#ifndef KILN_TOOLS_KILN_RUN_RUN_INPUTS_H_
#define KILN_TOOLS_KILN_RUN_RUN_INPUTS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "tools/kiln-run/preflight.h"

namespace kiln {

// The entry's inputs from --inputs, as the plan converted and checked them.
Inputs InputsOf(const RunPlan& plan);

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
                   uint64_t num_records);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_RUN_INPUTS_H_
