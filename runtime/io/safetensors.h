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
#include "kiln/host_tensor.h"
#include "runtime/io/dtype.h"

namespace kiln {
namespace io {

using ::kiln::HostTensor;

struct Safetensors {
  std::map<std::string, HostTensor> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

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
