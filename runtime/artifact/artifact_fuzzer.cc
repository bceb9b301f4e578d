// libFuzzer entry point for the artifact loader.
//
// LoadArtifact must reject any input with InvalidArgument naming a field, or
// return an artifact that validates and survives a write/load round trip; it
// must never crash. Build and run it outside Bazel with clang:
//
//   clang++-19 -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined \
//     -I. -Ibazel-bin runtime/artifact/artifact_fuzzer.cc \
//     runtime/artifact/artifact.cc runtime/artifact/artifact_loader.cc \
//     runtime/artifact/artifact_validate.cc runtime/artifact/artifact_writer.cc
//     \
//     runtime/artifact/checksum.cc runtime/artifact/test_artifacts.cc \
//     -l:libabsl_strings.a -l:libabsl_str_format_internal.a \
//     -l:libabsl_status.a -l:libabsl_statusor.a -l:libabsl_cord.a \
//     -l:libabsl_cord_internal.a -l:libabsl_cordz_info.a \
//     -l:libabsl_cordz_handle.a -l:libabsl_cordz_functions.a \
//     -l:libabsl_strings_internal.a -l:libabsl_throw_delegate.a \
//     -l:libabsl_int128.a -l:libabsl_raw_logging_internal.a \
//     -l:libabsl_base.a -l:libabsl_spinlock_wait.a \
//     -l:libabsl_exponential_biased.a -l:libabsl_synchronization.a \
//     -l:libabsl_time.a -l:libabsl_time_zone.a -l:libabsl_stacktrace.a \
//     -l:libabsl_symbolize.a -l:libabsl_debugging_internal.a \
//     -l:libabsl_demangle_internal.a -l:libabsl_malloc_internal.a \
//     -l:libabsl_graphcycles_internal.a -l:libabsl_bad_optional_access.a \
//     -l:libflatbuffers.a -o /tmp/artifact_fuzzer
//   (bazel build //runtime/artifact:kiln_artifact_fbs first, for the generated
//   header under bazel-bin.) Seed corpus: /tmp/artifact_fuzzer -write_seeds=DIR
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
    const std::string bytes = kiln::artifact::SerializeArtifact(a);
    const std::string path = std::string(dir) + "/seed" + std::to_string(i++);
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  WriteSeedsOnce();
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<kiln::artifact::Artifact> loaded =
      kiln::artifact::LoadArtifact(bytes);
  if (!loaded.ok()) {
    if (loaded.status().code() != absl::StatusCode::kInvalidArgument) abort();
    return 0;
  }
  if (!kiln::artifact::ValidateArtifact(*loaded).ok()) abort();
  absl::StatusOr<kiln::artifact::Artifact> again =
      kiln::artifact::LoadArtifact(kiln::artifact::SerializeArtifact(*loaded));
  if (!again.ok()) abort();
  again->checksum = loaded->checksum;
  if (*again != *loaded) abort();
  return 0;
}
