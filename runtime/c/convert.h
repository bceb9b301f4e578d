// Conversions between the C API's structs and the C++ API's types.
#ifndef KILN_RUNTIME_C_CONVERT_H_
#define KILN_RUNTIME_C_CONVERT_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/kiln.h"
#include "kiln/runtime.h"
#include "runtime/artifact/artifact.h"
#include "runtime/c/objects.h"

namespace kiln {
namespace c_api {

// A kiln_dtype's DType; `what` names the tensor in errors.
absl::StatusOr<DType> ToDType(int dtype, const std::string& what);
// The shape of `rank` dims at `dims` (null only for rank 0).
absl::StatusOr<Shape> ToShape(const std::string& what, int32_t rank,
                              const int64_t* dims);
// The bytes of a dense tensor of `dtype` and `shape`: InvalidArgument for a
// negative dimension or a size that does not fit in size_t.
absl::StatusOr<size_t> ByteSize(const std::string& what, DType dtype,
                                const Shape& shape);

// Checks every field of `inputs` (names, dtypes, ranks, byte sizes) and of
// `device_inputs` (open tensors of `runtime`; each name once in all) and
// makes views of their host data and device tensors: the C++ API then checks
// them against the entry.
absl::StatusOr<Inputs> ToInputs(const kiln_input* inputs, size_t count,
                                const kiln_device_input* device_inputs,
                                size_t device_count,
                                const SharedRuntime& runtime);

// `name` must outlive the info.
kiln_tensor_info Describe(const std::string& name, DType dtype,
                          const std::vector<int64_t>& shape, kiln_role role);
// An entry's binding, with the role of the resident buffer it is bound to.
kiln_tensor_info Describe(const artifact::Artifact& artifact,
                          const artifact::TensorBinding& binding);

// Checks that a caller's buffer (`data`, `size_bytes`) holds exactly
// `expected` bytes, the size of the tensor `name`.
absl::Status CheckSize(const std::string& name, size_t expected,
                       size_t size_bytes, const void* data);

// Copies the device tensor `name` into the caller's `dst` / from `src`.
absl::Status ReadTensor(SharedRuntime& runtime, const std::string& name,
                        const Tensor& tensor, void* dst, size_t size_bytes);
absl::Status WriteTensor(SharedRuntime& runtime, const std::string& name,
                         const Tensor& tensor, const void* src,
                         size_t size_bytes);

// Host copies of `outputs`.
absl::StatusOr<std::unique_ptr<kiln_outputs>> CopyOutputs(
    SharedRuntime& runtime, const Outputs& outputs);

// An out-parameter (or other pointer) that must not be null: checked before
// any work, so that a null one cannot leave a half-done call behind.
absl::Status NotNull(const void* pointer, const char* what);

// A string argument that must not be null.
absl::StatusOr<std::string> Text(const char* text, const char* what);

}  // namespace c_api
}  // namespace kiln

#endif  // KILN_RUNTIME_C_CONVERT_H_
