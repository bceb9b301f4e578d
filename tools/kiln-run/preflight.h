// kiln-run's checks before the GPU: the artifact, the entry, and every file
// and flag against them (--inputs, --dataset and --batch-fields, --params,
// --resume, --check, output paths, --memory-limit). The run uses the
// --inputs tensors and the dataset they read and checked; --dry-run prints
// what would run and stops.
#ifndef KILN_TOOLS_KILN_RUN_PREFLIGHT_H_
#define KILN_TOOLS_KILN_RUN_PREFLIGHT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/batch_loader.h"
#include "kiln/dataset.h"
#include "runtime/artifact/artifact.h"
#include "runtime/io/safetensors.h"
#include "tools/kiln-run/flags.h"

namespace kiln {

struct RunPlan {
  std::string artifact_bytes;
  artifact::Artifact artifact;
  // The entry that runs: --entry, or for training train_step (else
  // forward_backward with apply_update).
  std::string entry;
  // From --inputs, in the artifact's types and checked: the entry's caller
  // inputs, and the resident buffers it sets by name (parameters, model
  // state and, for parameters stored narrower, their f32 master weights).
  std::map<std::string, io::HostTensor> inputs;
  std::map<std::string, io::HostTensor> resident;
  // Conversions made, for --dry-run ("labels: i64 narrowed to i32").
  std::vector<std::string> conversions;
  // --resume's step (0 without).
  int64_t start_step = 0;
  // --dataset: the file, and how batches are drawn, narrowed and checked
  // (the run adds its rank's shard); `fields` as they are uploaded.
  std::unique_ptr<io::MappedDataset> dataset;
  DeviceBatchLoaderOptions loader;
  std::vector<io::DatasetField> fields;
  // Bytes the entry needs on the device at least: resident buffers, arena,
  // inputs and outputs.
  uint64_t device_bytes = 0;
};

// Runs every check; the first failure is InvalidArgument (NotFound for a
// missing file) naming the file, the tensor or field and what is wrong.
// `world_size`: the data-parallel ranks (1 for one process).
absl::StatusOr<RunPlan> PlanRun(const Flags& flags, int world_size);

// --dry-run's account of what would run.
std::string DescribeRun(const RunPlan& plan, const Flags& flags,
                        int world_size);

// --dry-run: reads every record of the dataset through the checks the run
// makes as it gathers batches (non-finite values, narrowing, label ranges);
// returns how many records were read.
absl::StatusOr<uint64_t> CheckEveryRecord(const RunPlan& plan);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_PREFLIGHT_H_
