#ifndef KILN_RUNTIME_IO_SAFETENSORS_H_
#define KILN_RUNTIME_IO_SAFETENSORS_H_

// The safetensors checkpoint format (huggingface/safetensors), in host memory:
//
//   bytes 0..7   N, the header length, unsigned 64-bit little endian
//   bytes 8..8+N a UTF-8 JSON object, possibly padded at the end with spaces:
//                {"__metadata__": {"k": "v", ...},          (optional, strings)
//                 "<name>": {"dtype": "F32", "shape": [2, 3],
//                            "data_offsets": [begin, end]}, ...}
//   the rest     the data buffer; each tensor's bytes, row-major little endian,
//                are [begin, end) of it, relative to its start.
//
// The reader checks all of it: header length within limits and within the file,
// valid JSON without duplicate keys, known dtypes (F32, BF16, F16, I32, BOOL),
// non-negative integer extents, end - begin == elements * dtype size, and the
// tensors tile the data buffer exactly (no overlaps, no holes, nothing after).
//
// Damage to the data is found by checksums: the writer adds to the metadata,
// for every tensor, "kiln.fnv1a64.<name>": the FNV-1a 64 of its bytes
// (runtime/artifact/checksum.h) as 16 hex digits; the reader checks each one
// it finds (a mismatch names the tensor and its file offset) and returns the
// metadata without them. Files from other writers carry none and load as
// before.
//
// The writer lays tensors out by element size (largest first), then by name, so
// each tensor starts aligned to its element size; pads the header with spaces
// so the data buffer starts at a multiple of 8 bytes; and writes the JSON
// compactly with "__metadata__" first and the tensors in data order, each as
// {"dtype":..,"shape":[..],"data_offsets":[b,e]} (the key order the reference
// implementation writes).

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/io/dtype.h"

namespace kiln {
namespace io {

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

namespace internal {
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
}  // namespace internal

template <typename T>
absl::StatusOr<std::vector<T>> HostTensor::Values() const {
  constexpr DType want = internal::ElementType<T>::kDType;
  if (dtype != want) return internal::ElementTypeMismatch(dtype, want);
  std::vector<T> values(data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), data.data(), data.size());
  return values;
}

struct Safetensors {
  std::map<std::string, HostTensor> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

bool operator==(const HostTensor& a, const HostTensor& b);
bool operator==(const Safetensors& a, const Safetensors& b);

struct SafetensorsLimits {
  // The reference implementation's limit on the header length.
  uint64_t max_header_bytes = 100 << 20;
};

// The file image of `st`. Errors (InvalidArgument) for a tensor whose byte
// count does not match its shape, names that are empty, not UTF-8 or
// "__metadata__".
absl::StatusOr<std::string> SerializeSafetensors(const Safetensors& st);
// Parses and validates a file image; errors are InvalidArgument.
absl::StatusOr<Safetensors> ParseSafetensors(
    absl::string_view bytes, const SafetensorsLimits& limits = {});

// SerializeSafetensors, then WriteFileAtomically (runtime/io/atomic_file.h): an
// existing file at `path` is replaced whole or left untouched.
absl::Status WriteSafetensorsFile(const std::string& path,
                                  const Safetensors& st);
absl::StatusOr<Safetensors> ReadSafetensorsFile(
    const std::string& path, const SafetensorsLimits& limits = {});

}  // namespace io
}  // namespace kiln

#endif  // KILN_RUNTIME_IO_SAFETENSORS_H_
