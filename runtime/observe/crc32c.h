// CRC32C (Castagnoli, the checksum of iSCSI and of TFRecord files).
// The Abseil kiln builds with (20220623) has no absl/crc: a table-driven
// implementation, checked against RFC 3720's test vectors.
#ifndef KILN_RUNTIME_OBSERVE_CRC32C_H_
#define KILN_RUNTIME_OBSERVE_CRC32C_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace kiln::observe {

// CRC32C of `data`; Extend continues a CRC over more bytes:
// Crc32c(a + b) == ExtendCrc32c(Crc32c(a), b).
uint32_t Crc32c(absl::string_view data);
uint32_t ExtendCrc32c(uint32_t crc, absl::string_view data);

// The masked CRC TFRecord framing stores (a CRC of data that holds CRCs is
// weak): ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t MaskCrc(uint32_t crc);
uint32_t UnmaskCrc(uint32_t masked);

}  // namespace kiln::observe

#endif  // KILN_RUNTIME_OBSERVE_CRC32C_H_
