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
#include "runtime/artifact/interface.h"

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

std::string Hex(uint64_t value) { return absl::StrFormat("0x%016x", value); }

}  // namespace

absl::Status CheckArtifact(const artifact::Artifact& artifact,
                           const ArtifactIdentity& identity, Match match) {
  const std::string header = absl::StrCat("the typed header ", identity.header);
  const std::string signature = artifact::InterfaceSignature(artifact);
  if (Fnv1a64(signature) != identity.interface_fingerprint ||
      signature != identity.interface_signature) {
    // The first line that differs, with the entry it belongs to.
    std::vector<absl::string_view> have =
        absl::StrSplit(signature, '\n', absl::SkipEmpty());
    std::vector<absl::string_view> want =
        absl::StrSplit(identity.interface_signature, '\n', absl::SkipEmpty());
    std::string where;
    size_t i = 0;
    for (; i < have.size() && i < want.size() && have[i] == want[i]; ++i)
      if (absl::StartsWith(have[i], "entry "))
        where = absl::StrCat(" (", have[i], ")");
    auto line = [](const std::vector<absl::string_view>& lines, size_t i) {
      return i < lines.size()
                 ? absl::StrCat(
                       "'", absl::StripLeadingAsciiWhitespace(lines[i]), "'")
                 : std::string("nothing more");
    };
    return absl::FailedPreconditionError(absl::StrCat(
        "artifact does not match ", header, ": its interface differs", where,
        ": the header has ", line(want, i), ", the artifact ", line(have, i),
        " (interface fingerprint ", Hex(Fnv1a64(signature)), ", the header's ",
        Hex(identity.interface_fingerprint),
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
    return absl::InvalidArgumentError(
        absl::StrCat("input '", missing_, "' of ", entry_, " is not set"));
  return std::move(inputs_);
}

}  // namespace typed
}  // namespace kiln
