// Tensors in host memory: what the C++ API uploads, downloads and reads
// from and writes to checkpoints (io::HostTensor is this type).
#ifndef KILN_HOST_TENSOR_H_
#define KILN_HOST_TENSOR_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/dtype.h"

namespace kiln {

struct HostTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // elements * DTypeSize(dtype) bytes
  // Where the data starts in the file it was parsed from (0 for a tensor
  // made in memory); not part of its value (operator== ignores it).
  uint64_t file_offset = 0;

  // A tensor of `shape` holding the bytes of `values` (host order = little
  // endian on every machine kiln runs on).
  static HostTensor F32(std::vector<int64_t> shape,
                        const std::vector<float>& values);
  static HostTensor I32(std::vector<int64_t> shape,
                        const std::vector<int32_t>& values);

  // The elements as T: float for F32, int32_t for I32, int64_t for I64.
  // InvalidArgument when T is not this tensor's element type.
  template <typename T>
  absl::StatusOr<std::vector<T>> Values() const;
};

namespace host_tensor_internal {
template <typename T>
struct ElementType;
template <>
struct ElementType<float> {
  static constexpr DType kDType = DType::kF32;
};
template <>
struct ElementType<int32_t> {
  static constexpr DType kDType = DType::kI32;
};
template <>
struct ElementType<int64_t> {
  static constexpr DType kDType = DType::kI64;
};
absl::Status ElementTypeMismatch(DType have, DType want);
}  // namespace host_tensor_internal

template <typename T>
absl::StatusOr<std::vector<T>> HostTensor::Values() const {
  constexpr DType want = host_tensor_internal::ElementType<T>::kDType;
  if (dtype != want) {
    return host_tensor_internal::ElementTypeMismatch(dtype, want);
  }
  std::vector<T> values(data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), data.data(), data.size());
  return values;
}

// Same dtype, shape and bytes (file_offset is ignored).
bool operator==(const HostTensor& a, const HostTensor& b);

}  // namespace kiln

#endif  // KILN_HOST_TENSOR_H_
