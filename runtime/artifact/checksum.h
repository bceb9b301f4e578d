#ifndef KILN_RUNTIME_ARTIFACT_CHECKSUM_H_
#define KILN_RUNTIME_ARTIFACT_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace kiln {

// FNV-1a, 64-bit (Fowler/Noll/Vo): h = 0xcbf29ce484222325; for each byte b:
// h = (h ^ b) * 0x100000001b3 (mod 2^64). Fnv1a64("") == 0xcbf29ce484222325,
// Fnv1a64("a") == 0xaf63dc4c8601ec8c. It is not cryptographic: it detects
// damage (every single-byte change alters it), not tampering. The artifact
// stores it over its payload; the dataset format over its header.
uint64_t Fnv1a64(const void* data, size_t size,
                 uint64_t seed = 0xcbf29ce484222325ULL);
inline uint64_t Fnv1a64(absl::string_view bytes) {
  return Fnv1a64(bytes.data(), bytes.size());
}

}  // namespace kiln

#endif  // KILN_RUNTIME_ARTIFACT_CHECKSUM_H_
