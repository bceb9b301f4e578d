#ifndef KILN_RUNTIME_ARTIFACT_ARTIFACT_WRITER_H_
#define KILN_RUNTIME_ARTIFACT_ARTIFACT_WRITER_H_

// Building artifact files from plain values (artifact.h). The compiler's
// artifact emitter and the tests use it; the runtime itself only loads.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/artifact/artifact.h"

namespace kiln {
namespace artifact {

// An artifact file as the pieces it is written in: `head` (the envelope and
// the zeros up to the data section) and the data section's pieces in order
// (each initial value's bytes where the artifact holds them, and the zero
// padding between them). Nothing of the initial values is copied, so a
// compiler streams them to the file; the file keeps the values' owners
// alive, so it may outlive the Artifact it was laid out from (values
// without an owner must outlive it).
struct ArtifactFile {
  std::string head;
  std::vector<absl::string_view> data;
  std::vector<std::shared_ptr<const void>> owners;
  // The payload's checksum, as LoadArtifact reports it.
  uint64_t checksum = 0;

  uint64_t size() const;
  // The whole file in memory.
  std::string Join() const;
};

// Lays `artifact` out as written, without validating it (so tests can make
// invalid files): payload FlatBuffer, checksum, envelope with identifier
// "KILN", data section. `artifact.checksum` is ignored. The output is
// deterministic.
ArtifactFile LayOutArtifact(const Artifact& artifact);
// LayOutArtifact(artifact).Join().
std::string SerializeArtifact(const Artifact& artifact);

// Wraps raw payload bytes (a FlatBuffer with root kiln.fb.Artifact, or anything
// else) into an envelope with the given version and the payload's checksum.
std::string SealArtifactPayload(absl::string_view payload,
                                uint32_t format_version = kFormatVersion);

// Validates and lays out, or serialises.
absl::StatusOr<ArtifactFile> LayOutValidArtifact(const Artifact& artifact);
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
  // A resident buffer of role constant holding (a copy of) `data`; returns
  // its index.
  uint32_t AddConstant(std::string name, DType dtype,
                       std::vector<int64_t> shape, std::vector<uint8_t> data);
  // A resident buffer of the given role, sized from shape and dtype.
  uint32_t AddBuffer(std::string name, BufferRole role, DType dtype,
                     std::vector<int64_t> shape);
  // What resident buffer `buffer` holds when a session starts.
  void SetInitialValue(uint32_t buffer, InitialValue value);
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
