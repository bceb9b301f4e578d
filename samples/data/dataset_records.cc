#include "samples/data/dataset_records.h"

#include <cstring>
#include <utility>

#include "absl/status/status.h"

namespace kiln::samples {

absl::StatusOr<Inputs> ReadRecords(io::MappedDataset& dataset,
                                   const std::vector<std::string>& names,
                                   uint64_t first, uint64_t size) {
  std::vector<uint8_t> records(size * dataset.record_bytes());
  absl::Status read = dataset.ReadRange(first, size, records.data());
  if (!read.ok()) return read;
  Inputs inputs;
  for (const std::string& name : names) {
    const io::DatasetField* field = dataset.FindField(name);
    if (field == nullptr) {
      return absl::InvalidArgumentError("the data has no field '" + name + "'");
    }
    HostTensor t;
    t.dtype = field->dtype;
    t.shape = {static_cast<int64_t>(size)};
    t.shape.insert(t.shape.end(), field->shape.begin(), field->shape.end());
    t.data.resize(size * field->bytes);
    for (uint64_t r = 0; r < size; ++r) {
      std::memcpy(t.data.data() + r * field->bytes,
                  records.data() + r * dataset.record_bytes() + field->offset,
                  field->bytes);
    }
    inputs.emplace(name, Input(std::move(t)));
  }
  return inputs;
}

}  // namespace kiln::samples
