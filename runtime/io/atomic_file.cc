#include "runtime/io/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace io {
namespace {

absl::Status ErrnoError(int err, absl::string_view what,
                        absl::string_view path) {
  const std::string msg =
      absl::StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// write(2) until everything is written, retrying on EINTR and short writes.
bool WriteAll(int fd, absl::string_view data, int* err) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// Writes `contents` to an existing device or FIFO through open(2).
absl::Status WriteInPlace(const std::string& path, absl::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open", path);
  int err = 0;
  const bool written = WriteAll(fd, contents, &err);
  ::close(fd);
  if (!written) return ErrnoError(err, "cannot write", path);
  return absl::OkStatus();
}

}  // namespace

bool IsSpecialFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
         !S_ISDIR(st.st_mode);
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents) {
  if (path.empty() || path.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("not a file path: \"", path, "\""));
  }
  if (IsSpecialFile(path)) return WriteInPlace(path, contents);
  std::string tmpl = path + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    return ErrnoError(errno, "cannot create a temporary file for", path);
  const std::string tmp(name.data());
  auto fail = [&](int err, absl::string_view what) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoError(err, what, tmp);
  };
  int err = 0;
  if (!WriteAll(fd, contents, &err)) return fail(err, "cannot write");
  // mkstemp creates 0600; a checkpoint should get the usual 0666 & ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) return fail(errno, "cannot chmod");
  if (::fsync(fd) != 0) return fail(errno, "cannot fsync");
  if (::close(fd) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError(err, "cannot close", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError(err, absl::StrCat("cannot rename ", tmp, " to"), path);
  }
  const std::string dir = DirName(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ErrnoError(errno, "cannot open folder", dir);
  const int sync_result = ::fsync(dfd);
  err = errno;
  ::close(dfd);
  // Some file systems cannot fsync a folder (EINVAL); the rename has happened.
  if (sync_result != 0 && err != EINVAL) {
    return ErrnoError(err, "cannot fsync folder", dir);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open", path);
  std::string out;
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    out.reserve(static_cast<size_t>(st.st_size));
  }
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoError(err, "cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace io
}  // namespace kiln
