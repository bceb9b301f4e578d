#ifndef KILN_RUNTIME_ARTIFACT_INTERFACE_H_
#define KILN_RUNTIME_ARTIFACT_INTERFACE_H_

// The interface of an artifact: what host code binds by name (entries, the
// caller's inputs, the outputs returned, resident buffers), without the
// buffer plan, kernels or launches. Typed headers (kilnc -H, kiln/typed.h)
// carry it to check that they are used with an artifact they fit.

#include <cstdint>
#include <string>

#include "runtime/artifact/artifact.h"

namespace kiln {
namespace artifact {

// Where an entry input's value comes from when the entry runs (the binding
// rules of kiln/runtime.h): a resident buffer (parameter, model state,
// optimizer state, gradient, ...), the learning rate ("lr", f32 scalar), the
// update number ("step", i32 scalar), or the caller.
enum class InputSource { kCaller, kResident, kLr, kStep };
InputSource SourceOf(const TensorBinding& binding);

// The interface as text, one line each: "kiln-interface 1", then for every
// entry (in the artifact's order) "entry NAME", its caller inputs
// "  input NAME DTYPE[DIMS]" (DIMS comma-separated), its learning-rate and
// step inputs "  lr" and "  step", its arena outputs
// "  output NAME DTYPE[DIMS]"; then every resident buffer
// "buffer NAME ROLE DTYPE[DIMS]" (ROLE: parameter, optimizer_state,
// gradient, master_weight, constant, state). Inputs bound to resident
// buffers and outputs written to them are left out.
std::string InterfaceSignature(const Artifact& artifact);
// FNV-1a 64 of InterfaceSignature (checksum.h).
uint64_t InterfaceFingerprint(const Artifact& artifact);

}  // namespace artifact
}  // namespace kiln

#endif  // KILN_RUNTIME_ARTIFACT_INTERFACE_H_
