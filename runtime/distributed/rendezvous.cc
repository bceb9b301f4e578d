#include "runtime/distributed/rendezvous.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "kiln/status.h"
#include "runtime/io/atomic_file.h"

namespace kiln {
namespace distributed {
namespace {

constexpr absl::Duration kPoll = absl::Milliseconds(5);
constexpr char kMagic[] = "KILNRDV1";

std::string Describe(const std::vector<int>& ranks) {
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ",
                      absl::StrJoin(ranks, ", "));
}

std::string Seconds(absl::Duration d) {
  return absl::StrCat(absl::ToDoubleSeconds(d), " s");
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in),
              std::istreambuf_iterator<char>());
  return true;
}

// FNV-1a 64: the check-ins compare what each rank read.
std::string Digest(absl::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return absl::StrCat(h);
}

absl::StatusOr<std::string> FileRendezvous(const DistributedConfig& config,
                                           absl::string_view payload) {
  const std::string& path = config.rendezvous_file;
  const absl::Time deadline = absl::Now() + config.timeout;
  const std::string header = absl::StrCat(kMagic, " ", config.world_size, "\n");
  std::string shared;
  if (config.rank == 0) {
    if (FileExists(path)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the rendezvous file ", path,
          " already exists (left by an earlier job?): remove it, or give "
          "each job a path of its own"));
    }
    shared = std::string(payload);
    KILN_RETURN_IF_ERROR(
        Annotate(io::WriteFileAtomically(path, absl::StrCat(header, shared)),
                 "writing the rendezvous file"));
  } else {
    std::string text;
    while (true) {
      if (ReadFile(path, &text) && text.size() >= header.size()) break;
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "rank ", config.rank, ": rank 0 did not write the rendezvous file ",
            path, " within ", Seconds(config.timeout)));
      }
      absl::SleepFor(kPoll);
    }
    if (text.compare(0, header.size(), header) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", config.rank, ": the rendezvous file ", path,
          " is not for a job of ", config.world_size, " ranks (it starts '",
          text.substr(0, text.find('\n')), "')"));
    }
    shared = text.substr(header.size());
  }
  KILN_RETURN_IF_ERROR(
      Annotate(io::WriteFileAtomically(absl::StrCat(path, ".rank", config.rank),
                                       Digest(shared)),
               "checking in at the rendezvous"));
  const std::string mine = Digest(shared);
  while (true) {
    std::vector<int> missing;
    for (int r = 0; r < config.world_size; ++r) {
      std::string digest;
      if (!ReadFile(absl::StrCat(path, ".rank", r), &digest) ||
          digest.empty()) {
        missing.push_back(r);
      } else if (digest != mine) {
        return absl::FailedPreconditionError(absl::StrCat(
            "rank ", config.rank, ": rank ", r, " read another rendezvous (",
            path, " was replaced during start-up)"));
      }
    }
    if (missing.empty()) return shared;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("rank ", config.rank, ": ", Describe(missing),
                       " did not arrive at the rendezvous ", path, " within ",
                       Seconds(config.timeout)));
    }
    absl::SleepFor(kPoll);
  }
}

// A socket closed when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& other) : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

absl::Status Errno(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", strerror(errno)));
}

absl::StatusOr<sockaddr_storage> Resolve(const DistributedConfig& config,
                                         socklen_t* length) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(config.master_port);
  const int error =
      getaddrinfo(config.master_addr.c_str(), port.c_str(), &hints, &found);
  if (error != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("MASTER_ADDR '", config.master_addr,
                     "' does not resolve: ", gai_strerror(error)));
  }
  sockaddr_storage address = {};
  std::memcpy(&address, found->ai_addr, found->ai_addrlen);
  *length = found->ai_addrlen;
  freeaddrinfo(found);
  return address;
}

// Waits until `fd` is readable (or writable), at most until `deadline`.
bool WaitFor(int fd, short events, absl::Time deadline) {
  while (true) {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return false;
    pollfd p = {fd, events, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 100)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

// Reads exactly `bytes` bytes before `deadline`; false on EOF, error or
// time-out.
bool ReadExactly(int fd, void* out, size_t bytes, absl::Time deadline) {
  auto* p = static_cast<char*>(out);
  while (bytes > 0) {
    if (!WaitFor(fd, POLLIN, deadline)) return false;
    const ssize_t n = read(fd, p, bytes);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteAll(int fd, const void* data, size_t bytes) {
  auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

struct Hello {
  char magic[8];
  int32_t rank;
  int32_t world_size;
};

absl::StatusOr<std::string> TcpRendezvous(const DistributedConfig& config,
                                          absl::string_view payload) {
  const absl::Time deadline = absl::Now() + config.timeout;
  const std::string where =
      absl::StrCat(config.master_addr, ":", config.master_port);
  socklen_t length = 0;
  KILN_ASSIGN_OR_RETURN(sockaddr_storage address, Resolve(config, &length));
  if (config.rank == 0) {
    Socket listener(socket(address.ss_family, SOCK_STREAM, 0));
    if (listener.fd() < 0) return Errno("rendezvous socket");
    const int one = 1;
    setsockopt(listener.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(listener.fd(), reinterpret_cast<sockaddr*>(&address), length) !=
        0) {
      return Errno(absl::StrCat("rank 0: binding the rendezvous to ", where));
    }
    if (listen(listener.fd(), config.world_size) != 0) {
      return Errno("rank 0: listening for the ranks");
    }
    std::vector<Socket> peers(config.world_size);
    int arrived = 1;
    while (arrived < config.world_size) {
      if (!WaitFor(listener.fd(), POLLIN, deadline)) {
        std::vector<int> missing;
        for (int r = 1; r < config.world_size; ++r) {
          if (peers[r].fd() < 0) missing.push_back(r);
        }
        return absl::DeadlineExceededError(absl::StrCat(
            "rank 0: ", Describe(missing), " did not join the rendezvous at ",
            where, " within ", Seconds(config.timeout)));
      }
      Socket peer(accept(listener.fd(), nullptr, nullptr));
      if (peer.fd() < 0) continue;
      Hello hello;
      if (!ReadExactly(peer.fd(), &hello, sizeof(hello),
                       absl::Now() + absl::Seconds(10)) ||
          std::memcmp(hello.magic, kMagic, 8) != 0) {
        continue;  // not a kiln rank (a port scanner, a stale client)
      }
      if (hello.world_size != config.world_size || hello.rank <= 0 ||
          hello.rank >= config.world_size) {
        return absl::FailedPreconditionError(absl::StrCat(
            "rank 0: a process at the rendezvous ", where, " says it is rank ",
            hello.rank, " of ", hello.world_size, ", this job has ",
            config.world_size, " ranks"));
      }
      if (peers[hello.rank].fd() >= 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("rank 0: two processes at the rendezvous ", where,
                         " say they are rank ", hello.rank));
      }
      peers[hello.rank] = std::move(peer);
      ++arrived;
    }
    const uint32_t size = static_cast<uint32_t>(payload.size());
    for (int r = 1; r < config.world_size; ++r) {
      if (!WriteAll(peers[r].fd(), &size, 4) ||
          !WriteAll(peers[r].fd(), payload.data(), payload.size())) {
        return absl::UnavailableError(absl::StrCat(
            "rank 0: rank ", r, " left the rendezvous at ", where));
      }
    }
    return std::string(payload);
  }

  Socket peer;
  while (true) {
    peer = Socket(socket(address.ss_family, SOCK_STREAM, 0));
    if (peer.fd() < 0) return Errno("rendezvous socket");
    if (connect(peer.fd(), reinterpret_cast<sockaddr*>(&address), length) ==
        0) {
      break;
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "rank ", config.rank, ": rank 0 did not open the rendezvous at ",
          where, " within ", Seconds(config.timeout), " (", strerror(errno),
          ")"));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  Hello hello;
  std::memcpy(hello.magic, kMagic, 8);
  hello.rank = config.rank;
  hello.world_size = config.world_size;
  uint32_t size = 0;
  if (!WriteAll(peer.fd(), &hello, sizeof(hello)) ||
      !ReadExactly(peer.fd(), &size, 4, deadline)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "rank ", config.rank, ": rank 0 at ", where,
        " did not complete the rendezvous within ", Seconds(config.timeout),
        " (another rank missing, or rank 0 failed)"));
  }
  std::string shared(size, '\0');
  if (!ReadExactly(peer.fd(), shared.data(), size, deadline)) {
    return absl::UnavailableError(absl::StrCat("rank ", config.rank,
                                               ": rank 0 at ", where,
                                               " closed the rendezvous early"));
  }
  return shared;
}

}  // namespace

absl::StatusOr<std::string> Rendezvous(const DistributedConfig& config,
                                       absl::string_view payload) {
  if (config.world_size == 1) return std::string(payload);
  if (!config.rendezvous_file.empty()) return FileRendezvous(config, payload);
  if (!config.master_addr.empty()) return TcpRendezvous(config, payload);
  return absl::InvalidArgumentError(
      "no rendezvous: set KILN_RENDEZVOUS_FILE, or MASTER_ADDR and "
      "MASTER_PORT");
}

}  // namespace distributed
}  // namespace kiln
