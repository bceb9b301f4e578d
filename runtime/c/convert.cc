#include "runtime/c/convert.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kiln/status.h"

namespace kiln {
namespace c_api {
namespace {

absl::StatusOr<DType> ToDType(int dtype, const std::string& name) {
  if (dtype < KILN_F32 || dtype > KILN_I64) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", name, ": unknown dtype ", dtype));
  }
  return static_cast<DType>(dtype);
}

// The shape of `input`, and a check of its byte size against it.
absl::StatusOr<Shape> ToShape(const kiln_input& input, DType dtype) {
  const std::string name = input.name;
  if (input.rank < 0 || input.rank > KILN_MAX_RANK) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", name, ": rank ", input.rank, " is not in [0, ",
        KILN_MAX_RANK, "]"));
  }
  if (input.rank > 0 && input.shape == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", name, ": shape is null"));
  }
  Shape shape(input.shape, input.shape + input.rank);
  uint64_t bytes = DTypeSize(dtype);
  for (int64_t dim : shape) {
    if (dim < 0 || (dim > 0 && bytes > std::numeric_limits<uint64_t>::max() /
                                           static_cast<uint64_t>(dim))) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", name, ": bad dimension ", dim));
    }
    bytes *= static_cast<uint64_t>(dim);
  }
  if (bytes != input.size_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", name, ": size_bytes is ", input.size_bytes,
        " but its dtype and shape need ", bytes));
  }
  if (bytes > 0 && input.data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", name, ": data is null"));
  }
  return shape;
}

}  // namespace

absl::StatusOr<Inputs> ToInputs(const kiln_input* inputs, size_t count) {
  if (count > 0 && inputs == nullptr) {
    return absl::InvalidArgumentError("inputs is null");
  }
  Inputs result;
  for (size_t i = 0; i < count; ++i) {
    const kiln_input& input = inputs[i];
    if (input.name == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, ": null name"));
    }
    auto dtype = ToDType(input.dtype, input.name);
    if (!dtype.ok()) return dtype.status();
    auto shape = ToShape(input, *dtype);
    if (!shape.ok()) return shape.status();
    auto [it, added] = result.emplace(
        input.name, Input::HostView(*dtype, *std::move(shape), input.data));
    if (!added) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", input.name, " is given twice"));
    }
  }
  return result;
}

kiln_tensor_info Describe(const std::string& name, DType dtype,
                          const std::vector<int64_t>& shape, kiln_role role) {
  kiln_tensor_info info = {};
  info.name = name.c_str();
  info.dtype = static_cast<kiln_dtype>(dtype);
  info.role = role;
  // Artifacts are verified to have at most KILN_MAX_RANK dims.
  info.rank = static_cast<int32_t>(std::min<size_t>(shape.size(), KILN_MAX_RANK));
  std::copy(shape.begin(), shape.begin() + info.rank, info.shape);
  info.size_bytes = NumElements(shape) * DTypeSize(dtype);
  return info;
}

kiln_tensor_info Describe(const artifact::Artifact& artifact,
                          const artifact::TensorBinding& binding) {
  kiln_role role = KILN_ROLE_IO;
  if (binding.buffer.space == artifact::MemorySpace::kResident &&
      binding.buffer.index < artifact.resident_buffers.size()) {
    role = static_cast<kiln_role>(
        artifact.resident_buffers[binding.buffer.index].role);
  }
  return Describe(binding.name, binding.dtype, binding.shape, role);
}

absl::Status CheckSize(const std::string& name, size_t expected,
                       size_t size_bytes, const void* data) {
  if (size_bytes != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " holds ", expected, " bytes, the caller's buffer ", size_bytes));
  }
  if (expected > 0 && data == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": buffer is null"));
  }
  return absl::OkStatus();
}

absl::Status ReadTensor(SharedRuntime& runtime, const std::string& name,
                        const Tensor& tensor, void* dst, size_t size_bytes) {
  KILN_RETURN_IF_ERROR(CheckSize(name, tensor.size_bytes(), size_bytes, dst));
  absl::MutexLock lock(&runtime.mutex);
  KILN_ASSIGN_OR_RETURN(HostTensor host, runtime.runtime->Download(tensor));
  if (!host.data.empty()) std::memcpy(dst, host.data.data(), host.data.size());
  return absl::OkStatus();
}

absl::Status WriteTensor(SharedRuntime& runtime, const std::string& name,
                         const Tensor& tensor, const void* src,
                         size_t size_bytes) {
  KILN_RETURN_IF_ERROR(CheckSize(name, tensor.size_bytes(), size_bytes, src));
  HostTensor host;
  host.dtype = tensor.dtype();
  host.shape = tensor.shape();
  const auto* bytes = static_cast<const uint8_t*>(src);
  host.data.assign(bytes, bytes + size_bytes);
  absl::MutexLock lock(&runtime.mutex);
  return runtime.runtime->CopyInto(tensor, host);
}

absl::StatusOr<std::unique_ptr<kiln_outputs>> CopyOutputs(
    SharedRuntime& runtime, const Outputs& outputs) {
  auto copies = std::make_unique<kiln_outputs>();
  absl::MutexLock lock(&runtime.mutex);
  for (const auto& [name, tensor] : outputs) {
    KILN_ASSIGN_OR_RETURN(HostTensor host, runtime.runtime->Download(tensor));
    copies->names.push_back(name);
    copies->tensors.push_back(std::move(host));
  }
  return copies;
}

absl::Status NotNull(const void* pointer, const char* what) {
  if (pointer == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is null"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Text(const char* text, const char* what) {
  if (text == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is null"));
  }
  return std::string(text);
}

}  // namespace c_api
}  // namespace kiln
