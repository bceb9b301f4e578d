#include "tools/common/version.h"

namespace kiln {
namespace version_internal {
// Defined in the source //tools/common:build_commit generates, so that a new
// commit recompiles that one line and relinks, nothing else.
extern const char kBuildCommit[];
} // namespace version_internal

std::string_view KilnVersion() { return "0.1.0"; }

std::string_view BuildCommit() { return version_internal::kBuildCommit; }

std::string VersionLine(std::string_view program) {
  std::string line(program);
  line += " ";
  line += KilnVersion();
  line += " (kiln, commit ";
  line += BuildCommit();
  line += ")";
  return line;
}

} // namespace kiln
