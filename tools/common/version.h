// kiln's version and the commit a binary was built from, for every tool's
// --version. Dependency-free: linked into the MLIR tools and into the static
// runtime tools alike.
#ifndef KILN_TOOLS_COMMON_VERSION_H_
#define KILN_TOOLS_COMMON_VERSION_H_

#include <string>
#include <string_view>

namespace kiln {

// kiln's release version, "0.1.0".
std::string_view KilnVersion();

// The short hash of the commit the binary was built from, or "unknown" (a
// build outside a git checkout).
std::string_view BuildCommit();

// "<program> 0.1.0 (kiln, commit 3911962)": what --version prints.
std::string VersionLine(std::string_view program);

} // namespace kiln

#endif // KILN_TOOLS_COMMON_VERSION_H_
