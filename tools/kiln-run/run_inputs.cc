#include "tools/kiln-run/run_inputs.h"

#include <cstring>
#include <utility>

namespace kiln {

Inputs InputsOf(const RunPlan& plan) {
  Inputs inputs;
  for (const auto& [name, t] : plan.inputs) inputs.emplace(name, Input(t));
  return inputs;
}

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

}  // namespace kiln
