// Random inputs for an entry of an artifact, for runs that must see the same
// numbers every time (the determinism check of tests/gpu/determinism).
#ifndef KILN_TESTS_GPU_DETERMINISM_DRAW_INPUTS_H_
#define KILN_TESTS_GPU_DETERMINISM_DRAW_INPUTS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/artifact/artifact.h"
#include "runtime/io/safetensors.h"

namespace kiln {
namespace determinism {

// Every input of `entry` that the caller supplies, drawn from Philox under
// `seed` (input i from stream i): floating-point inputs uniform in [-1, 1)
// as f32 (kiln-run rounds them to the entry's bf16 or f16), i32 inputs
// uniform in their valid range ([0, 4) where the artifact records none),
// booleans 0 or 1. The same seed gives the same bytes on every machine.
absl::StatusOr<io::Safetensors> DrawInputs(const artifact::Entry& entry,
                                           uint64_t seed);

}  // namespace determinism
}  // namespace kiln

#endif  // KILN_TESTS_GPU_DETERMINISM_DRAW_INPUTS_H_
