// Which of an artifact's resident buffers checkpoints hold, without a GPU:
// Session::LoadParameters and Trainer::Restore (kiln/runtime.h) load by
// these rules, and kiln-run checks its files with them before it opens the
// driver. The file format is runtime/io/checkpoint.h's.
#ifndef KILN_RUNTIME_SESSION_CHECKPOINT_RULES_H_
#define KILN_RUNTIME_SESSION_CHECKPOINT_RULES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/artifact/artifact.h"
#include "runtime/io/checkpoint.h"
#include "runtime/io/safetensors.h"

namespace kiln {

// The roles Trainer::Save writes and Restore reads: parameters, model
// state, optimizer state and master weights.
bool IsCheckpointed(artifact::BufferRole role);

// What io::ReadCheckpoint expects of a training checkpoint of `artifact`:
// every buffer of a checkpointed role, in the artifact's order.
std::vector<io::TensorSpec> CheckpointSpecs(const artifact::Artifact& artifact);

// A tensor of a parameter file and the resident buffer it loads into.
struct BufferLoad {
  int buffer = 0;  // index into Artifact::resident_buffers
  const io::HostTensor* tensor = nullptr;
};

// Session::LoadParameters: every parameter and model state buffer from the
// tensor of its name, master weights where the file has them; the file's
// other tensors are ignored. A missing tensor, or one of another dtype or
// shape, is InvalidArgument naming `path` and the tensor.
absl::StatusOr<std::vector<BufferLoad>> ParameterLoads(
    const artifact::Artifact& artifact, const io::Safetensors& file,
    const std::string& path);

}  // namespace kiln

#endif  // KILN_RUNTIME_SESSION_CHECKPOINT_RULES_H_
