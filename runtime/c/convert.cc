#include "runtime/c/convert.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kiln/status.h"
#include "runtime/c/handles.h"

namespace kiln {
namespace c_api {
namespace {

// A host input: its dtype, shape, byte size and data checked.
absl::StatusOr<Input> ToHostInput(const kiln_input& input) {
  const std::string what = absl::StrCat("input ", input.name);
  KILN_ASSIGN_OR_RETURN(DType dtype, ToDType(input.dtype, what));
  KILN_ASSIGN_OR_RETURN(Shape shape, ToShape(what, input.rank, input.shape));
  KILN_ASSIGN_OR_RETURN(size_t bytes, ByteSize(what, dtype, shape));
  if (bytes != input.size_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": size_bytes is ", input.size_bytes,
                     " but its dtype and shape need ", bytes));
  }
  if (bytes > 0 && input.data == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": data is null"));
  }
  return Input::HostView(dtype, std::move(shape), input.data);
}

// A device input: an open tensor of `runtime`.
absl::StatusOr<Input> ToDeviceInput(const kiln_device_input& input,
                                    const SharedRuntime& runtime) {
  const std::string what = absl::StrCat("device input ", input.name);
  auto tensor = Lookup(input.tensor, "its tensor");
  if (!tensor.ok()) return Annotate(tensor.status(), what);
  if ((*tensor)->shared.get() != &runtime) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": its tensor belongs to another runtime (a tensor is usable "
              "only with the runtime it was made from)"));
  }
  return Input((*tensor)->tensor);
}

// Adds `input` to `inputs` under `name`, which must be new.
absl::Status Add(const char* name, absl::StatusOr<Input> input,
                 Inputs& inputs) {
  if (!input.ok()) return input.status();
  if (!inputs.emplace(name, *std::move(input)).second) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", name, " is given twice"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DType> ToDType(int dtype, const std::string& what) {
  if (dtype < KILN_F32 || dtype > KILN_I64) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": unknown dtype ", dtype));
  }
  return static_cast<DType>(dtype);
}

absl::StatusOr<Shape> ToShape(const std::string& what, int32_t rank,
                              const int64_t* dims) {
  if (rank < 0 || rank > KILN_MAX_RANK) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": rank ", rank, " is not in [0, ", KILN_MAX_RANK, "]"));
  }
  if (rank > 0 && dims == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": shape is null"));
  }
  return Shape(dims, dims + rank);
}

absl::StatusOr<size_t> ByteSize(const std::string& what, DType dtype,
                                const Shape& shape) {
  uint64_t bytes = DTypeSize(dtype);
  for (int64_t dim : shape) {
    if (dim < 0 || (dim > 0 && bytes > std::numeric_limits<size_t>::max() /
                                           static_cast<uint64_t>(dim))) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": bad dimension ", dim));
    }
    bytes *= static_cast<uint64_t>(dim);
  }
  return static_cast<size_t>(bytes);
}

absl::StatusOr<Inputs> ToInputs(const kiln_input* inputs, size_t count,
                                const kiln_device_input* device_inputs,
                                size_t device_count,
                                const SharedRuntime& runtime) {
  if (count > 0 && inputs == nullptr) {
    return absl::InvalidArgumentError("inputs is null");
  }
  if (device_count > 0 && device_inputs == nullptr) {
    return absl::InvalidArgumentError("device_inputs is null");
  }
  Inputs result;
  for (size_t i = 0; i < count; ++i) {
    if (inputs[i].name == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, ": null name"));
    }
    KILN_RETURN_IF_ERROR(Add(inputs[i].name, ToHostInput(inputs[i]), result));
  }
  for (size_t i = 0; i < device_count; ++i) {
    const kiln_device_input& input = device_inputs[i];
    if (input.name == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("device input ", i, ": null name"));
    }
    KILN_RETURN_IF_ERROR(
        Add(input.name, ToDeviceInput(input, runtime), result));
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
