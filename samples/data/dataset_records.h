// Records of a memory-mapped KILNDATA file as a batch of host inputs: what
// the GPU host samples feed their evaluation entries.

#ifndef KILN_SAMPLES_DATA_DATASET_RECORDS_H_
#define KILN_SAMPLES_DATA_DATASET_RECORDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/dataset.h"
#include "kiln/runtime.h"

namespace kiln::samples {

// Records [first, first + size) of `dataset` (in file order), one input per
// name in `names`, each a tensor [size, field shape...] of its field.
absl::StatusOr<Inputs> ReadRecords(io::MappedDataset& dataset,
                                   const std::vector<std::string>& names,
                                   uint64_t first, uint64_t size);

}  // namespace kiln::samples

#endif  // KILN_SAMPLES_DATA_DATASET_RECORDS_H_
