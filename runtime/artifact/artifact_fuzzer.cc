// libFuzzer entry point for the artifact loader.
//
// LoadArtifact must reject any input with InvalidArgument naming a field, or
// return an artifact that validates and survives a write/load round trip; it
// must never crash. Build and run it outside Bazel with clang:
//
//   clang++-19 -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined \
//     -I. -Ibazel-out/k8-fastbuild/bin runtime/artifact/artifact_fuzzer.cc \
//     runtime/artifact/artifact.cc runtime/artifact/artifact_loader.cc \
//     runtime/artifact/artifact_validate.cc \
//     runtime/artifact/artifact_writer.cc runtime/artifact/checksum.cc \
//     runtime/artifact/test_artifacts.cc \
//     -Wl,--start-group /usr/lib/x86_64-linux-gnu/libabsl_*.a \
//     -Wl,--end-group -l:libflatbuffers.a -o /tmp/artifact_fuzzer
//   (bazel build //runtime/artifact:kiln_artifact_fbs first, for the generated
//   header.) Seed corpus: /tmp/artifact_fuzzer -write_seeds=DIR
//   is not a libFuzzer flag, so set KILN_WRITE_SEEDS=DIR once to write the
//   valid test artifacts there, then run
//   /tmp/artifact_fuzzer DIR -max_total_time=60.
//
// Under Bazel this file is compiled as a library only (no fuzzing engine).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/artifact/artifact.h"
#include "runtime/artifact/artifact_writer.h"
#include "runtime/artifact/kiln_artifact_generated.h"
#include "runtime/artifact/test_artifacts.h"

namespace {

void WriteSeedsOnce() {
  static bool done = false;
  if (done) return;
  done = true;
  const char* dir = std::getenv("KILN_WRITE_SEEDS");
  if (dir == nullptr) return;
  int i = 0;
  for (const kiln::artifact::Artifact& a :
       kiln::artifact::testing::ValidArtifacts()) {
    const std::string file = kiln::artifact::SerializeArtifact(a);
    const auto* payload = kiln::fb::GetEnvelope(file.data())->payload();
    const std::string body(reinterpret_cast<const char*>(payload->data()),
                           payload->size());
    for (const std::string* bytes : {&file, &body}) {
      const std::string path = std::string(dir) + "/seed" + std::to_string(i++);
      if (FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(bytes->data(), 1, bytes->size(), f);
        std::fclose(f);
      }
    }
  }
}

// Loads `bytes` and checks the contract; aborts on a violation.
void Check(absl::string_view bytes) {
  absl::StatusOr<kiln::artifact::Artifact> loaded =
      kiln::artifact::LoadArtifact(bytes);
  if (!loaded.ok()) {
    if (loaded.status().code() != absl::StatusCode::kInvalidArgument) abort();
    return;
  }
  if (!kiln::artifact::ValidateArtifact(*loaded).ok()) abort();
  absl::StatusOr<kiln::artifact::Artifact> again =
      kiln::artifact::LoadArtifact(kiln::artifact::SerializeArtifact(*loaded));
  if (!again.ok()) abort();
  again->checksum = loaded->checksum;
  if (*again != *loaded) abort();
}

}  // namespace

// Each input is tried as a whole file, and as a payload sealed with a valid
// envelope and checksum so that mutations reach the verifier and the semantic
// checks rather than stopping at the checksum.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  WriteSeedsOnce();
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  Check(bytes);
  Check(kiln::artifact::SealArtifactPayload(bytes));
  return 0;
}
