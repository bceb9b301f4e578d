#include "runtime/io/checkpoint.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "kiln/status.h"

namespace kiln {
namespace io {

absl::Status WriteCheckpoint(const std::string& path,
                             const Checkpoint& checkpoint) {
  Safetensors st;
  st.tensors = checkpoint.tensors;
  st.metadata["format"] = "kiln";
  st.metadata["step"] = absl::StrCat(checkpoint.step);
  return WriteSafetensorsFile(path, st);
}

absl::Status CheckTensorFits(const std::string& path, const TensorSpec& spec,
                             const HostTensor& tensor) {
  if (tensor.dtype != spec.dtype || tensor.shape != spec.shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": tensor '", spec.name, "' is ", DTypeName(tensor.dtype),
        ShapeString(tensor.shape), " but the model's is ",
        DTypeName(spec.dtype), ShapeString(spec.shape)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Checkpoint> ReadCheckpoint(
    const std::string& path, const std::vector<TensorSpec>& expected) {
  absl::StatusOr<Safetensors> read = ReadSafetensorsFile(path);
  if (!read.ok()) return Annotate(read.status(), path);
  Checkpoint checkpoint;
  auto step = read->metadata.find("step");
  if (step == read->metadata.end() ||
      !absl::SimpleAtoi(step->second, &checkpoint.step) ||
      checkpoint.step < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": __metadata__ has no valid \"step\" (a kiln checkpoint "
                     "stores the update count there)"));
  }
  std::set<std::string> known;
  for (const TensorSpec& spec : expected) {
    known.insert(spec.name);
    auto tensor = read->tensors.find(spec.name);
    if (tensor == read->tensors.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": no tensor '", spec.name, "'"));
    }
    if (absl::Status fits = CheckTensorFits(path, spec, tensor->second);
        !fits.ok()) {
      return fits;
    }
  }
  for (auto& [name, tensor] : read->tensors) {
    if (known.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor '", name,
                       "' is not a parameter, model state, optimizer state "
                       "or master weight of this model"));
    }
  }
  checkpoint.tensors = std::move(read->tensors);
  return checkpoint;
}

}  // namespace io
}  // namespace kiln
