#ifndef KILN_RUNTIME_IO_CHECKPOINT_H_
#define KILN_RUNTIME_IO_CHECKPOINT_H_

// Training checkpoints: what kiln-run --checkpoint and --resume (Trainer::Save
// and Restore) and samples/train_reference write and read. A safetensors file
// (runtime/io/safetensors.h, with its per-tensor checksums) holding every
// parameter, model state buffer (batch norm running statistics), optimizer
// state buffer ("adam_m.w", "adam_v.w", "momentum.w", the loss scale's and the
// skipped updates' counters) and master weight ("master.w") of the training
// step, each by its name in the compiled model, and in "__metadata__":
//
//   "format": "kiln"
//   "step":   the number of updates done, in decimal
//
// Written atomically (runtime/io/atomic_file.h). The reader checks the file
// against the tensors the model expects before anything is loaded: each one
// present with its dtype and shape, no other tensor, and a valid step.
// Parameter files for inference (kiln-run --params) are checked tensor by
// tensor with CheckTensorFits.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/io/safetensors.h"

namespace kiln {
namespace io {

// A tensor the model expects in a checkpoint.
struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
};

struct Checkpoint {
  int64_t step = 0;
  std::map<std::string, HostTensor> tensors;
};

// Writes `checkpoint` to `path`, atomically.
absl::Status WriteCheckpoint(const std::string& path,
                             const Checkpoint& checkpoint);

// Reads the checkpoint at `path` and checks that it holds exactly `expected`
// (see above). Errors: NotFound for a missing file, InvalidArgument naming
// the file and the tensor ("ckpt: no tensor 'adam_m.w'", "ckpt: tensor 'w'
// is F32[3] but the model's is F32[4]", "ckpt: tensor 'x' is not a
// parameter, ...") or the step.
absl::StatusOr<Checkpoint> ReadCheckpoint(
    const std::string& path, const std::vector<TensorSpec>& expected);

// OK when `tensor`, read from `path`, can be loaded as `spec` (the same
// dtype and shape); else InvalidArgument naming both.
absl::Status CheckTensorFits(const std::string& path, const TensorSpec& spec,
                             const HostTensor& tensor);

}  // namespace io
}  // namespace kiln

#endif  // KILN_RUNTIME_IO_CHECKPOINT_H_
