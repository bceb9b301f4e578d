#include "runtime/artifact/interface.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/dtype.h"
#include "runtime/artifact/checksum.h"

namespace kiln {
namespace artifact {
namespace {

std::string TypeText(DType dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(shape, ","), "]");
}

absl::string_view RoleName(BufferRole role) {
  switch (role) {
    case BufferRole::kParameter:
      return "parameter";
    case BufferRole::kOptimizerState:
      return "optimizer_state";
    case BufferRole::kGradient:
      return "gradient";
    case BufferRole::kMasterWeight:
      return "master_weight";
    case BufferRole::kConstant:
      return "constant";
    case BufferRole::kState:
      return "state";
  }
  return "unknown";
}

}  // namespace

InputSource SourceOf(const TensorBinding& binding) {
  if (binding.buffer.space == MemorySpace::kResident) {
    return InputSource::kResident;
  }
  if (binding.name == "lr" && binding.dtype == DType::kF32 &&
      binding.shape.empty()) {
    return InputSource::kLr;
  }
  if (binding.name == "step" && binding.dtype == DType::kI32 &&
      binding.shape.empty()) {
    return InputSource::kStep;
  }
  return InputSource::kCaller;
}

std::string InterfaceSignature(const Artifact& artifact) {
  std::string out = "kiln-interface 1\n";
  for (const Entry& entry : artifact.entries) {
    absl::StrAppend(&out, "entry ", entry.name, "\n");
    for (const TensorBinding& input : entry.inputs) {
      const InputSource source = SourceOf(input);
      if (source == InputSource::kResident) continue;
      if (source != InputSource::kCaller) {
        absl::StrAppend(&out, "  ", input.name, "\n");
        continue;
      }
      absl::StrAppend(&out, "  input ", input.name, " ",
                      TypeText(input.dtype, input.shape), "\n");
    }
    for (const TensorBinding& output : entry.outputs) {
      if (output.buffer.space == MemorySpace::kResident) continue;
      absl::StrAppend(&out, "  output ", output.name, " ",
                      TypeText(output.dtype, output.shape), "\n");
    }
  }
  for (const ResidentBuffer& buffer : artifact.resident_buffers)
    absl::StrAppend(&out, "buffer ", buffer.name, " ", RoleName(buffer.role),
                    " ", TypeText(buffer.dtype, buffer.shape), "\n");
  return out;
}

uint64_t InterfaceFingerprint(const Artifact& artifact) {
  return Fnv1a64(InterfaceSignature(artifact));
}

}  // namespace artifact
}  // namespace kiln
