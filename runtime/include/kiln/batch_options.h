// How a dataset is read in batches (io::BatchProducer, DeviceBatchLoader):
// the sampling options and the hook that runs over each batch's records.
#ifndef KILN_BATCH_OPTIONS_H_
#define KILN_BATCH_OPTIONS_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace kiln {

// Which records form the batches, in what order (io::BatchSampler).
struct BatchOptions {
  uint64_t batch_size = 1;
  // Random order: a new permutation of all records every epoch (without
  // replacement), from (seed, epoch). Otherwise records in file order.
  bool shuffle = true;
  uint64_t seed = 0;
  // Drop a last batch smaller than batch_size (otherwise it is delivered
  // short).
  bool drop_last = true;
  // Stop after this many epochs; 0 = never.
  uint64_t num_epochs = 0;
  // Data parallel: the batches of `shard_count` ranks together form global
  // batches of shard_count * batch_size records, drawn as above; this rank
  // gets the shard_index-th slice of each. So N ranks see, step by step,
  // exactly the batches one rank with an N times larger batch would see.
  // Shards always drop a short last batch.
  uint64_t shard_count = 1;
  uint64_t shard_index = 0;
};

// Runs on the producer thread over each batch's records as soon as they are
// read, before the consumer gets them: `records` holds indices.size()
// records of the dataset's record_bytes(), the i-th being record indices[i]
// of the file. It may check them (an error is the batch's error, as a read
// error is) or rewrite them in place (e.g. narrow a field's values).
using RecordHook = std::function<absl::Status(
    uint8_t* records, absl::Span<const uint64_t> indices)>;

}  // namespace kiln

#endif  // KILN_BATCH_OPTIONS_H_
