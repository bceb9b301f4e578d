// draw_inputs MODEL.kiln ENTRY SEED OUT.safetensors: writes random inputs of
// the entry (DrawInputs) for kiln-run --inputs. Exit status 1 when the
// artifact cannot be read or has no such entry, 2 for a bad command line.
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "runtime/artifact/artifact.h"
#include "runtime/io/safetensors.h"
#include "tests/gpu/determinism/draw_inputs.h"

int main(int argc, char** argv) {
  uint64_t seed = 0;
  if (argc != 5 || !absl::SimpleAtoi(argv[3], &seed)) {
    std::fprintf(stderr,
                 "usage: draw_inputs MODEL.kiln ENTRY SEED OUT.safetensors\n");
    return 2;
  }
  auto artifact = kiln::artifact::LoadArtifactFile(argv[1]);
  if (!artifact.ok()) {
    std::fprintf(stderr, "draw_inputs: %s\n",
                 std::string(artifact.status().message()).c_str());
    return 1;
  }
  const kiln::artifact::Entry* entry = artifact->FindEntry(argv[2]);
  if (entry == nullptr) {
    std::fprintf(stderr, "draw_inputs: %s has no entry '%s'\n", argv[1],
                 argv[2]);
    return 1;
  }
  auto inputs = kiln::determinism::DrawInputs(*entry, seed);
  absl::Status written = inputs.ok()
                             ? kiln::io::WriteSafetensorsFile(argv[4], *inputs)
                             : inputs.status();
  if (!written.ok()) {
    std::fprintf(stderr, "draw_inputs: %s\n",
                 std::string(written.message()).c_str());
    return 1;
  }
  return 0;
}
