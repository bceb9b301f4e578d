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
//
// A path that names something other than a regular file (/dev/null, a FIFO, a
// terminal) is written in place: renaming over it would replace the device
// node itself (as root, /dev/null would become a regular file). A folder is
// an error.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

// Whether `path` exists and is not a regular file, a folder or a link to
// one: a device, FIFO or socket, which writers must open rather than
// replace.
bool IsSpecialFile(const std::string& path);

// Reads a whole file.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace io
}  // namespace kiln

#endif  // KILN_RUNTIME_IO_ATOMIC_FILE_H_
