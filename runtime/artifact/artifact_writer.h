#ifndef KILN_RUNTIME_ARTIFACT_ARTIFACT_WRITER_H_
#define KILN_RUNTIME_ARTIFACT_ARTIFACT_WRITER_H_

// Building artifact files from plain values (artifact.h). The compiler's
// artifact emitter and the tests use it; the runtime itself only loads.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/artifact/artifact.h"

namespace kiln {
namespace artifact {

// Serialises `artifact` as written, without validating it (so tests can make
// invalid files): payload FlatBuffer, checksum, envelope with identifier
// "KILN". `artifact.checksum` is ignored. The output is deterministic.
std::string SerializeArtifact(const Artifact& artifact);

// Wraps raw payload bytes (a FlatBuffer with root kiln.fb.Artifact, or anything
// else) into an envelope with the given version and the payload's checksum.
std::string SealArtifactPayload(absl::string_view payload,
                                uint32_t format_version = kFormatVersion);

// Validates and serialises.
absl::StatusOr<std::string> WriteArtifact(const Artifact& artifact);
// WriteArtifact to a file (written whole, then renamed into place).
absl::Status WriteArtifactFile(const Artifact& artifact,
                               const std::string& path);

// Builds an artifact piece by piece; the Add* methods return the index of what
// they added, for use in BufferRef, Launch::kernel and Parameter::buffer.
//
//   ArtifactWriter w({"sm_90"});
//   uint32_t k = w.AddKernel({.name = "fused_0", ...});
//   uint32_t wbuf = w.AddParameter("w", DType::kF32, {64, 32},
//                                  InitKind::kNormal, 0.0f, 0.02f, 1);
//   w.AddEntry(std::move(forward));
//   absl::StatusOr<std::string> bytes = w.Finish();
class ArtifactWriter {
 public:
  explicit ArtifactWriter(std::vector<std::string> target_archs);

  uint32_t AddKernel(Kernel kernel);
  uint32_t AddResidentBuffer(ResidentBuffer buffer);
  // A resident buffer of role parameter (updated in place) and its metadata;
  // returns the buffer's index.
  uint32_t AddParameter(std::string name, DType dtype,
                        std::vector<int64_t> shape, InitKind init, float init_a,
                        float init_b, uint64_t seed_stream);
  // The same for model state (role kState, e.g. batch norm running
  // statistics).
  uint32_t AddState(std::string name, DType dtype, std::vector<int64_t> shape,
                    InitKind init, float init_a, float init_b,
                    uint64_t seed_stream);
  // A resident buffer of role constant holding `data`; returns its index.
  uint32_t AddConstant(std::string name, DType dtype,
                       std::vector<int64_t> shape, std::vector<uint8_t> data);
  // A resident buffer of the given role, sized from shape and dtype.
  uint32_t AddBuffer(std::string name, BufferRole role, DType dtype,
                     std::vector<int64_t> shape);
  uint32_t AddEntry(Entry entry);

  const Artifact& artifact() const { return artifact_; }
  Artifact& mutable_artifact() { return artifact_; }

  // ValidateArtifact, then SerializeArtifact.
  absl::StatusOr<std::string> Finish() const;

 private:
  uint32_t AddInitialized(BufferRole role, std::string name, DType dtype,
                          std::vector<int64_t> shape, InitKind init,
                          float init_a, float init_b, uint64_t seed_stream);

  Artifact artifact_;
};

}  // namespace artifact
}  // namespace kiln

#endif  // KILN_RUNTIME_ARTIFACT_ARTIFACT_WRITER_H_
