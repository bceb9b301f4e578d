// The C API's device tensors: made from a runtime, copied to and from host
// memory, passed as inputs by the *_device calls.
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "kiln/kiln.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime/c/convert.h"
#include "runtime/c/handles.h"
#include "runtime/c/objects.h"

using kiln::c_api::Call;
using kiln::c_api::Lookup;
using kiln::c_api::NotNull;

namespace {

// Runs `body` on the tensor behind `handle`.
kiln_status WithTensor(kiln_tensor* handle,
                       const std::function<absl::Status(kiln_tensor&)>& body) {
  return Call([&]() -> absl::Status {
    KILN_ASSIGN_OR_RETURN(auto tensor, Lookup(handle, "tensor"));
    return body(*tensor);
  });
}

}  // namespace

extern "C" {

kiln_status kiln_tensor_new(kiln_runtime* handle, kiln_dtype dtype,
                            int32_t rank, const int64_t* shape,
                            kiln_tensor** out) {
  return Call([&]() -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(out, "out"));
    KILN_ASSIGN_OR_RETURN(auto runtime, Lookup(handle, "runtime"));
    KILN_ASSIGN_OR_RETURN(kiln::DType type,
                          kiln::c_api::ToDType(dtype, "tensor"));
    KILN_ASSIGN_OR_RETURN(kiln::Shape dims,
                          kiln::c_api::ToShape("tensor", rank, shape));
    KILN_RETURN_IF_ERROR(kiln::c_api::ByteSize("tensor", type, dims).status());
    auto made = std::make_shared<kiln_tensor>();
    made->shared = runtime->shared;
    {
      // Zeros, so that a tensor never shows what its memory held before.
      absl::MutexLock lock(&made->shared->mutex);
      const kiln::Runtime& rt = *made->shared->runtime;
      KILN_ASSIGN_OR_RETURN(made->tensor, rt.Zeros(type, std::move(dims)));
    }
    *out = kiln::c_api::Register(std::move(made));
    return absl::OkStatus();
  });
}

void kiln_tensor_close(kiln_tensor* tensor) {
  kiln::c_api::CloseHandle(tensor);
}

kiln_status kiln_tensor_describe(kiln_tensor* handle, kiln_tensor_info* info) {
  return WithTensor(handle, [&](kiln_tensor& tensor) -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(info, "info"));
    static const std::string kNoName;
    *info = kiln::c_api::Describe(kNoName, tensor.tensor.dtype(),
                                  tensor.tensor.shape(), KILN_ROLE_IO);
    return absl::OkStatus();
  });
}

kiln_status kiln_tensor_write(kiln_tensor* handle, const void* src,
                              size_t size_bytes) {
  return WithTensor(handle, [&](kiln_tensor& tensor) {
    return kiln::c_api::WriteTensor(*tensor.shared, "tensor", tensor.tensor,
                                    src, size_bytes);
  });
}

kiln_status kiln_tensor_read(kiln_tensor* handle, void* dst,
                             size_t size_bytes) {
  return WithTensor(handle, [&](kiln_tensor& tensor) {
    return kiln::c_api::ReadTensor(*tensor.shared, "tensor", tensor.tensor,
                                   dst, size_bytes);
  });
}

kiln_status kiln_tensor_device_pointer(kiln_tensor* handle, uint64_t* pointer,
                                       size_t* size_bytes) {
  return WithTensor(handle, [&](kiln_tensor& tensor) -> absl::Status {
    KILN_RETURN_IF_ERROR(NotNull(pointer, "pointer"));
    KILN_RETURN_IF_ERROR(NotNull(size_bytes, "size_bytes"));
    *pointer = tensor.tensor.data();
    *size_bytes = tensor.tensor.size_bytes();
    return absl::OkStatus();
  });
}

}  // extern "C"
