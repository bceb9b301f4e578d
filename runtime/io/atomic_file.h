#ifndef KILN_RUNTIME_IO_ATOMIC_FILE_H_
#define KILN_RUNTIME_IO_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {
namespace io {

// Replaces `path` with `contents` so that a crash or error at any point leaves
// either the old file or the new one, never a mix: writes a temporary file in
// the same folder (mkstemp, "<name>.tmp.XXXXXX"), fsyncs it, renames it over
// `path`, then fsyncs the folder so the rename itself is durable. On any error
// the temporary file is removed and `path` is untouched.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

// Reads a whole file.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace io
}  // namespace kiln

#endif  // KILN_RUNTIME_IO_ATOMIC_FILE_H_
