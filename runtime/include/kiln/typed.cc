#include "kiln/typed.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "runtime/artifact/checksum.h"

namespace kiln {
namespace typed_internal {

absl::Status CheckType(absl::string_view what, DType dtype, const Shape& shape,
                       DType want_dtype, const Shape& want_shape) {
  if (dtype == want_dtype && shape == want_shape) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, " is ", DTypeName(dtype), ShapeString(shape), ", expected ",
      DTypeName(want_dtype), ShapeString(want_shape)));
}

}  // namespace typed_internal

namespace typed {
namespace {

std::string TypeText(DType dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(shape, ","), "]");
}

absl::string_view RoleName(artifact::BufferRole role) {
  switch (role) {
    case artifact::BufferRole::kParameter:
      return "parameter";
    case artifact::BufferRole::kOptimizerState:
      return "optimizer_state";
    case artifact::BufferRole::kGradient:
      return "gradient";
    case artifact::BufferRole::kMasterWeight:
      return "master_weight";
    case artifact::BufferRole::kConstant:
      return "constant";
    case artifact::BufferRole::kState:
      return "state";
  }
  return "unknown";
}

std::string Hex(uint64_t value) { return absl::StrFormat("0x%016x", value); }

}  // namespace

// Keep in step with the runtime's binding rules (runtime.h): resident
// inputs are the runtime's, "lr" (f32 scalar) and "step" (i32 scalar) are
// filled in, every other input is the caller's.
std::string InterfaceSignature(const artifact::Artifact& artifact) {
  std::string out = "kiln-interface 1\n";
  for (const artifact::Entry& entry : artifact.entries) {
    absl::StrAppend(&out, "entry ", entry.name, "\n");
    for (const artifact::TensorBinding& input : entry.inputs) {
      if (input.buffer.space == artifact::MemorySpace::kResident) continue;
      if ((input.name == "lr" && input.dtype == DType::kF32 &&
           input.shape.empty()) ||
          (input.name == "step" && input.dtype == DType::kI32 &&
           input.shape.empty())) {
        absl::StrAppend(&out, "  ", input.name, "\n");
        continue;
      }
      absl::StrAppend(&out, "  input ", input.name, " ",
                      TypeText(input.dtype, input.shape), "\n");
    }
    for (const artifact::TensorBinding& output : entry.outputs) {
      if (output.buffer.space == artifact::MemorySpace::kResident) continue;
      absl::StrAppend(&out, "  output ", output.name, " ",
                      TypeText(output.dtype, output.shape), "\n");
    }
  }
  for (const artifact::ResidentBuffer& buffer : artifact.resident_buffers)
    absl::StrAppend(&out, "buffer ", buffer.name, " ", RoleName(buffer.role),
                    " ", TypeText(buffer.dtype, buffer.shape), "\n");
  return out;
}

uint64_t InterfaceFingerprint(const artifact::Artifact& artifact) {
  return Fnv1a64(InterfaceSignature(artifact));
}

absl::Status CheckArtifact(const artifact::Artifact& artifact,
                           const ArtifactIdentity& identity, Match match) {
  const std::string header =
      absl::StrCat("the typed header ", identity.header);
  const std::string signature = InterfaceSignature(artifact);
  if (Fnv1a64(signature) != identity.interface_fingerprint ||
      signature != identity.interface_signature) {
    // The first line that differs, with the entry it belongs to.
    std::vector<absl::string_view> have =
        absl::StrSplit(signature, '\n', absl::SkipEmpty());
    std::vector<absl::string_view> want = absl::StrSplit(
        identity.interface_signature, '\n', absl::SkipEmpty());
    std::string where;
    size_t i = 0;
    for (; i < have.size() && i < want.size() && have[i] == want[i]; ++i)
      if (absl::StartsWith(have[i], "entry "))
        where = absl::StrCat(" (", have[i], ")");
    auto line = [](const std::vector<absl::string_view>& lines, size_t i) {
      return i < lines.size()
                 ? absl::StrCat("'", absl::StripLeadingAsciiWhitespace(lines[i]),
                                "'")
                 : std::string("nothing more");
    };
    return absl::FailedPreconditionError(absl::StrCat(
        "artifact does not match ", header, ": its interface differs",
        where, ": the header has ", line(want, i), ", the artifact ",
        line(have, i), " (interface fingerprint ", Hex(Fnv1a64(signature)),
        ", the header's ", Hex(identity.interface_fingerprint),
        "); regenerate the header from this artifact's model"));
  }
  if (match == Match::kArtifact && identity.checksum != 0 &&
      artifact.checksum != identity.checksum) {
    return absl::FailedPreconditionError(absl::StrCat(
        "artifact does not match ", header, ": its checksum is ",
        Hex(artifact.checksum), ", the header was written with the artifact ",
        Hex(identity.checksum),
        " (same interface); load the artifact kilnc wrote beside the header, "
        "or pass kiln::typed::Match::kInterface to accept any artifact with "
        "this interface"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Module>> LoadModule(
    Runtime& runtime, absl::string_view bytes, const ArtifactIdentity& identity,
    Match match) {
  absl::StatusOr<artifact::Artifact> artifact = artifact::LoadArtifact(bytes);
  if (!artifact.ok()) return artifact.status();
  absl::Status status = CheckArtifact(*artifact, identity, match);
  if (!status.ok()) return status;
  return runtime.LoadFromMemory(bytes);
}

absl::StatusOr<std::unique_ptr<Module>> LoadModuleFile(
    Runtime& runtime, const std::string& path, const ArtifactIdentity& identity,
    Match match) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  if (!file.good() && !file.eof())
    return absl::DataLossError(absl::StrCat("cannot read ", path));
  absl::StatusOr<std::unique_ptr<Module>> module =
      LoadModule(runtime, bytes.str(), identity, match);
  if (!module.ok())
    return absl::Status(module.status().code(),
                        absl::StrCat(path, ": ", module.status().message()));
  return module;
}

absl::StatusOr<Inputs> InputsBuilder::Finish() && {
  if (!missing_.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", missing_, "' of ", entry_, " is not set"));
  return std::move(inputs_);
}

}  // namespace typed
}  // namespace kiln
