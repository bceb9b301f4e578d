#include "kiln/host_tensor.h"

#include <cstring>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

template <typename T>
std::vector<uint8_t> RawBytes(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace

HostTensor HostTensor::F32(std::vector<int64_t> shape,
                           const std::vector<float>& values) {
  return HostTensor{DType::kF32, std::move(shape), RawBytes(values)};
}

HostTensor HostTensor::I32(std::vector<int64_t> shape,
                           const std::vector<int32_t>& values) {
  return HostTensor{DType::kI32, std::move(shape), RawBytes(values)};
}

namespace host_tensor_internal {
absl::Status ElementTypeMismatch(DType have, DType want) {
  return absl::InvalidArgumentError(
      absl::StrCat("the tensor holds ", DTypeName(have), " elements, not ",
                   DTypeName(want)));
}
}  // namespace host_tensor_internal

bool operator==(const HostTensor& a, const HostTensor& b) {
  return std::tie(a.dtype, a.shape, a.data) ==
         std::tie(b.dtype, b.shape, b.data);
}

}  // namespace kiln
