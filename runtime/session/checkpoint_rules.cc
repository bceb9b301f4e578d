#include "runtime/session/checkpoint_rules.h"

#include "absl/strings/str_cat.h"
#include "kiln/status.h"

namespace kiln {
namespace {

io::TensorSpec SpecOf(const artifact::ResidentBuffer& rb) {
  return {rb.name, rb.dtype, rb.shape};
}

}  // namespace

bool IsCheckpointed(artifact::BufferRole role) {
  return role == artifact::BufferRole::kParameter ||
         role == artifact::BufferRole::kState ||
         role == artifact::BufferRole::kOptimizerState ||
         role == artifact::BufferRole::kMasterWeight;
}

std::vector<io::TensorSpec> CheckpointSpecs(
    const artifact::Artifact& artifact) {
  std::vector<io::TensorSpec> specs;
  for (const artifact::ResidentBuffer& rb : artifact.resident_buffers) {
    if (IsCheckpointed(rb.role)) specs.push_back(SpecOf(rb));
  }
  return specs;
}

absl::StatusOr<std::vector<BufferLoad>> ParameterLoads(
    const artifact::Artifact& artifact, const io::Safetensors& file,
    const std::string& path) {
  const auto& rbs = artifact.resident_buffers;
  std::vector<BufferLoad> loads;
  for (size_t i = 0; i < rbs.size(); ++i) {
    const bool param = rbs[i].role == artifact::BufferRole::kParameter;
    const bool state = rbs[i].role == artifact::BufferRole::kState;
    const bool master = rbs[i].role == artifact::BufferRole::kMasterWeight;
    if (!param && !state && !master) continue;
    auto it = file.tensors.find(rbs[i].name);
    if (it == file.tensors.end()) {
      if (master) continue;
      // Inference with running statistics left at their initial values
      // would be silently wrong: model state is required like parameters.
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": no tensor for ", param ? "parameter" : "state",
                       " '", rbs[i].name, "'"));
    }
    KILN_RETURN_IF_ERROR(
        io::CheckTensorFits(path, SpecOf(rbs[i]), it->second));
    loads.push_back({static_cast<int>(i), &it->second});
  }
  return loads;
}

}  // namespace kiln
