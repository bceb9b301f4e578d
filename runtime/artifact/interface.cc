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

// Keep in step with the runtime's binding rules (runtime.h): resident
// inputs are the runtime's, "lr" (f32 scalar) and "step" (i32 scalar) are
// filled in, every other input is the caller's.
std::string InterfaceSignature(const Artifact& artifact) {
  std::string out = "kiln-interface 1\n";
  for (const Entry& entry : artifact.entries) {
    absl::StrAppend(&out, "entry ", entry.name, "\n");
    for (const TensorBinding& input : entry.inputs) {
      if (input.buffer.space == MemorySpace::kResident) continue;
      if ((input.name == "lr" && input.dtype == DType::kF32 &&
           input.shape.empty()) ||
          (input.name == "step" && input.dtype == DType::kI32 &&
           input.shape.empty())) {
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
