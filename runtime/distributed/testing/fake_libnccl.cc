// A CPU stand-in for libnccl.so.2, for testing data-parallel training
// without GPUs: the ranks are processes of one machine and "device memory"
// is host memory (as in the stand-in libcuda, runtime/cuda/testing).
//
// The unique id names a rendezvous directory (under $KILN_FAKE_NCCL_DIR,
// else $TEST_TMPDIR, else /tmp). ncclCommInitRank writes the rank's pid
// there and waits for every rank's. Each collective is the communicator's
// next operation n: every rank writes its send buffer to op<n>.rank<r>
// (written aside and renamed, so a file is whole once seen), waits for all
// ranks' files, and computes its result from them, in rank order (so every
// rank gets the same bits, as with NCCL). A rank deletes its file of
// operation n-1 once it has seen all files of n: by then every rank has
// read it.
//
// Work is enqueued on the stream with cuLaunchHostFunc of the stand-in
// libcuda when that is loaded (so collectives are recorded into graphs and
// replayed with them), and runs at once otherwise. A rank that does not
// arrive within $KILN_FAKE_NCCL_TIMEOUT_MS (default 60000), or whose
// process has exited, fails the operation: the communicator's async error
// becomes ncclRemoteError and ncclGetLastError names the rank, as NCCL's
// watchdog-visible state would after a peer failure; later operations on
// it are dropped. ncclCommAbort stops waiting operations.
//
// Test hook: KILN_FAKE_NCCL_EXIT_AT="RANK:OP" ends that rank's process
// (status 17) when it reaches operation OP, like a rank that dies
// mid-training.
#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/distributed/nccl_types.h"

struct ncclComm {
  std::string dir;
  int nranks = 0;
  int rank = 0;
  int64_t next_op = 0;
  std::vector<pid_t> pids;
  std::atomic<bool> aborted{false};
  std::mutex mu;
  ncclResult_t async_error = ncclSuccess;
  std::string last_error;
};

namespace {

constexpr char kIdPrefix[] = "kiln-fake-nccl:";
thread_local std::string thread_last_error;

using HostFn = void (*)(void*);
using LaunchHostFunc = int (*)(CUstream_st*, HostFn, void*);

int64_t TimeoutMs() {
  const char* v = std::getenv("KILN_FAKE_NCCL_TIMEOUT_MS");
  return v != nullptr && *v != '\0' ? std::atoll(v) : 60000;
}

std::string BaseDir() {
  for (const char* name : {"KILN_FAKE_NCCL_DIR", "TEST_TMPDIR"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return v;
  }
  return "/tmp";
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool WriteWhole(const std::string& path, const void* data, size_t bytes) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(data, 1, bytes, f) == bytes;
  if (std::fclose(f) != 0 || !ok) return false;
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

bool ReadWhole(const std::string& path, std::vector<char>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in),
              std::istreambuf_iterator<char>());
  return true;
}

// A process that has exited but is not reaped yet (a zombie) counts as
// gone.
bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return true;
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ||
         line[paren + 2] != 'Z';
}

// Waits until `path(r)` exists for every rank r. On failure sets `*error`
// to a message naming the missing ranks.
bool WaitForAll(ncclComm* comm, const std::string& what,
                std::string (*path)(const ncclComm*, int, int64_t), int64_t op,
                std::string* error) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(TimeoutMs());
  while (true) {
    std::vector<int> missing;
    for (int r = 0; r < comm->nranks; ++r) {
      if (!Exists(path(comm, r, op))) missing.push_back(r);
    }
    if (missing.empty()) return true;
    for (int r : missing) {
      if (r < static_cast<int>(comm->pids.size()) &&
          !ProcessAlive(comm->pids[r])) {
        *error = "rank " + std::to_string(r) + " (pid " +
                 std::to_string(comm->pids[r]) + ") exited before " + what;
        return false;
      }
    }
    if (comm->aborted) {
      *error = what + " aborted (ncclCommAbort)";
      return false;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::string ranks;
      for (int r : missing) {
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
      }
      *error = std::string(missing.size() == 1 ? "rank " : "ranks ") + ranks +
               " did not arrive at " + what + " within " +
               std::to_string(TimeoutMs()) + " ms";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::string PidPath(const ncclComm* comm, int rank, int64_t) {
  return comm->dir + "/rank" + std::to_string(rank) + ".pid";
}
std::string OpPath(const ncclComm* comm, int rank, int64_t op) {
  return comm->dir + "/op" + std::to_string(op) + ".rank" +
         std::to_string(rank);
}

size_t ElementSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
  }
  return 0;
}

float Bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  int exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {
      exponent = 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ffu;
      bits =
          sign | static_cast<uint32_t>(exponent + 112) << 23 | (mantissa << 13);
    }
  } else {
    bits =
        sign | static_cast<uint32_t>(exponent + 112) << 23 | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffffu;
  if (((bits >> 23) & 0xff) == 0xff) {
    return sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0);
  }
  if (exponent >= 0x1f) return sign | 0x7c00u;
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    mantissa |= 0x800000u;
    const int shift = 14 - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = static_cast<uint32_t>(exponent) << 10 | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<uint16_t>(half);
}

double Load(const char* p, ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
      return *reinterpret_cast<const int8_t*>(p);
    case ncclUint8:
      return *reinterpret_cast<const uint8_t*>(p);
    case ncclInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case ncclUint32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case ncclInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case ncclUint64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case ncclFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return HalfToFloat(v);
    }
    case ncclBfloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return Bf16ToFloat(v);
    }
    case ncclFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case ncclFloat64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
  return 0;
}

void Store(double value, ncclDataType_t type, char* p) {
  switch (type) {
    case ncclInt8:
      *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(value);
      return;
    case ncclUint8:
      *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(value);
      return;
    case ncclInt32: {
      const int32_t v = static_cast<int32_t>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case ncclUint32: {
      const uint32_t v = static_cast<uint32_t>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case ncclInt64: {
      const int64_t v = static_cast<int64_t>(value);
      std::memcpy(p, &v, 8);
      return;
    }
    case ncclUint64: {
      const uint64_t v = static_cast<uint64_t>(value);
      std::memcpy(p, &v, 8);
      return;
    }
    case ncclFloat16: {
      const uint16_t v = FloatToHalf(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      return;
    }
    case ncclBfloat16: {
      const uint16_t v = FloatToBf16(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      return;
    }
    case ncclFloat32: {
      const float v = static_cast<float>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case ncclFloat64:
      std::memcpy(p, &value, 8);
      return;
  }
}

bool IsFloat(ncclDataType_t type) {
  return type == ncclFloat16 || type == ncclBfloat16 || type == ncclFloat32 ||
         type == ncclFloat64;
}

// Reduces in the element type's own arithmetic where NCCL does: f32 sums in
// f32 (rank order), narrower floats through f32, integers exactly.
void Reduce(const std::vector<std::vector<char>>& inputs, size_t offset,
            size_t count, ncclDataType_t type, ncclRedOp_t op, char* out) {
  const size_t size = ElementSize(type);
  const int n = static_cast<int>(inputs.size());
  for (size_t i = 0; i < count; ++i) {
    const size_t at = (offset + i) * size;
    double acc = Load(inputs[0].data() + at, type);
    float facc = static_cast<float>(acc);
    for (int r = 1; r < n; ++r) {
      const double v = Load(inputs[r].data() + at, type);
      switch (op) {
        case ncclSum:
        case ncclAvg:
          acc += v;
          facc += static_cast<float>(v);
          break;
        case ncclProd:
          acc *= v;
          facc *= static_cast<float>(v);
          break;
        case ncclMax:
          acc = std::max(acc, v);
          facc = std::max(facc, static_cast<float>(v));
          break;
        case ncclMin:
          acc = std::min(acc, v);
          facc = std::min(facc, static_cast<float>(v));
          break;
      }
    }
    double result = type == ncclFloat64 || !IsFloat(type) ? acc : facc;
    if (op == ncclAvg) {
      result = IsFloat(type) && type != ncclFloat64
                   ? static_cast<double>(facc / static_cast<float>(n))
                   : (IsFloat(type)
                          ? acc / n
                          : static_cast<double>(static_cast<int64_t>(acc) / n));
    }
    Store(result, type, out + i * size);
  }
}

enum class Kind { kAllReduce, kReduceScatter, kAllGather, kBroadcast };

struct Operation {
  Kind kind;
  const void* send;
  void* recv;
  size_t count;  // elements each rank sends
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;
  ncclComm* comm;
};

void Fail(ncclComm* comm, ncclResult_t result, const std::string& message) {
  std::lock_guard<std::mutex> lock(comm->mu);
  if (comm->async_error == ncclSuccess) {
    comm->async_error = result;
    comm->last_error = message;
  }
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kAllReduce:
      return "all-reduce";
    case Kind::kReduceScatter:
      return "reduce-scatter";
    case Kind::kAllGather:
      return "all-gather";
    case Kind::kBroadcast:
      return "broadcast";
  }
  return "collective";
}

void MaybeExit(const ncclComm* comm, int64_t op) {
  const char* at = std::getenv("KILN_FAKE_NCCL_EXIT_AT");
  if (at == nullptr || *at == '\0') return;
  int rank = -1;
  long long when = -1;
  if (std::sscanf(at, "%d:%lld", &rank, &when) == 2 && rank == comm->rank &&
      when == op) {
    std::fprintf(stderr, "fake NCCL: rank %d exits at operation %lld\n", rank,
                 when);
    _exit(17);
  }
}

void Run(const Operation& o) {
  ncclComm* comm = o.comm;
  {
    std::lock_guard<std::mutex> lock(comm->mu);
    if (comm->async_error != ncclSuccess) return;
  }
  const int64_t n = comm->next_op++;
  MaybeExit(comm, n);
  const size_t size = ElementSize(o.type);
  const size_t send_bytes = o.count * size;
  if (!WriteWhole(OpPath(comm, comm->rank, n), o.send, send_bytes)) {
    Fail(comm, ncclSystemError,
         "fake NCCL could not write " + OpPath(comm, comm->rank, n));
    return;
  }
  std::string error;
  const std::string what = std::string(KindName(o.kind)) + " #" +
                           std::to_string(n) + " of rank " +
                           std::to_string(comm->rank);
  if (!WaitForAll(comm, what, OpPath, n, &error)) {
    Fail(comm, ncclRemoteError, error);
    return;
  }
  if (n > 0) std::remove(OpPath(comm, comm->rank, n - 1).c_str());
  std::vector<std::vector<char>> inputs(comm->nranks);
  for (int r = 0; r < comm->nranks; ++r) {
    if (!ReadWhole(OpPath(comm, r, n), &inputs[r]) ||
        inputs[r].size() != send_bytes) {
      Fail(comm, ncclInvalidUsage,
           "rank " + std::to_string(r) + " sent " +
               std::to_string(inputs[r].size()) + " bytes to " + what +
               ", rank " + std::to_string(comm->rank) + " " +
               std::to_string(send_bytes));
      return;
    }
  }
  char* out = static_cast<char*>(o.recv);
  switch (o.kind) {
    case Kind::kAllReduce:
      Reduce(inputs, 0, o.count, o.type, o.op, out);
      break;
    case Kind::kReduceScatter: {
      const size_t chunk = o.count / comm->nranks;
      Reduce(inputs, chunk * comm->rank, chunk, o.type, o.op, out);
      break;
    }
    case Kind::kAllGather:
      for (int r = 0; r < comm->nranks; ++r) {
        std::memcpy(out + r * send_bytes, inputs[r].data(), send_bytes);
      }
      break;
    case Kind::kBroadcast:
      std::memcpy(out, inputs[o.root].data(), send_bytes);
      break;
  }
}

void RunHostFn(void* data) {
  auto* op = static_cast<Operation*>(data);
  Run(*op);
}

thread_local int group_depth = 0;
thread_local std::vector<std::pair<Operation*, CUstream_st*>> grouped;

ncclResult_t Issue(const Operation& o, CUstream_st* stream) {
  if (o.comm == nullptr) {
    thread_last_error = "null communicator";
    return ncclInvalidArgument;
  }
  if (ElementSize(o.type) == 0 || (o.count > 0 && (!o.send || !o.recv))) {
    thread_last_error = "invalid datatype or null buffer";
    return ncclInvalidArgument;
  }
  // An operation enqueued on a stream stays alive as long as a graph may
  // replay it: for the process's lifetime (tests make few).
  auto* op = new Operation(o);
  if (group_depth > 0) {
    grouped.emplace_back(op, stream);
    return ncclSuccess;
  }
  static LaunchHostFunc launch = [] {
    const char* path = std::getenv("KILN_LIBCUDA_PATH");
    if (path == nullptr || *path == '\0') return LaunchHostFunc(nullptr);
    void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return LaunchHostFunc(nullptr);
    return reinterpret_cast<LaunchHostFunc>(dlsym(handle, "cuLaunchHostFunc"));
  }();
  if (launch != nullptr && stream != nullptr) {
    if (launch(stream, RunHostFn, op) != 0) {
      thread_last_error = "cuLaunchHostFunc failed";
      delete op;
      return ncclUnhandledCudaError;
    }
    return ncclSuccess;
  }
  Run(*op);
  delete op;
  return ncclSuccess;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  *version = 22105;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL "
             "developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t comm) {
  if (comm == nullptr) return thread_last_error.c_str();
  std::lock_guard<std::mutex> lock(comm->mu);
  return comm->last_error.c_str();
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id->internal, 0, sizeof(id->internal));
  uint64_t nonce = 0;
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    if (std::fread(&nonce, sizeof(nonce), 1, f) != 1) nonce = 0;
    std::fclose(f);
  }
  nonce ^= static_cast<uint64_t>(getpid()) << 32 ^
           static_cast<uint64_t>(
               std::chrono::steady_clock::now().time_since_epoch().count());
  std::snprintf(id->internal, sizeof(id->internal), "%s%016llx", kIdPrefix,
                static_cast<unsigned long long>(nonce));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* out, int nranks, ncclUniqueId id,
                              int rank) {
  if (std::strncmp(id.internal, kIdPrefix, sizeof(kIdPrefix) - 1) != 0) {
    thread_last_error = "the unique id was not made by ncclGetUniqueId";
    return ncclInvalidArgument;
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    thread_last_error = "rank " + std::to_string(rank) + " of " +
                        std::to_string(nranks) + " ranks";
    return ncclInvalidArgument;
  }
  auto* comm = new ncclComm();
  comm->nranks = nranks;
  comm->rank = rank;
  comm->dir = BaseDir() + "/" +
              std::string(id.internal + sizeof(kIdPrefix) - 1,
                          strnlen(id.internal, sizeof(id.internal)) -
                              (sizeof(kIdPrefix) - 1));
  mkdir(comm->dir.c_str(), 0700);
  const std::string pid = std::to_string(getpid());
  if (!WriteWhole(PidPath(comm, rank, 0), pid.data(), pid.size())) {
    thread_last_error = "fake NCCL could not write to " + comm->dir;
    delete comm;
    return ncclSystemError;
  }
  std::string error;
  if (!WaitForAll(comm, "ncclCommInitRank", PidPath, 0, &error)) {
    thread_last_error = error;
    delete comm;
    return ncclRemoteError;
  }
  comm->pids.resize(nranks);
  for (int r = 0; r < nranks; ++r) {
    std::vector<char> text;
    ReadWhole(PidPath(comm, r, 0), &text);
    comm->pids[r] = std::atoi(std::string(text.begin(), text.end()).c_str());
  }
  *out = comm;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  // Not freed: an operation of another thread may still be waiting on it.
  comm->aborted = true;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  if (comm == nullptr) return ncclInvalidArgument;
  std::lock_guard<std::mutex> lock(comm->mu);
  *error = comm->async_error;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                           CUstream_st* stream) {
  return Issue({Kind::kAllReduce, send, recv, count, type, op, 0, comm},
               stream);
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, CUstream_st* stream) {
  const size_t count = comm != nullptr ? recvcount * comm->nranks : 0;
  return Issue({Kind::kReduceScatter, send, recv, count, type, op, 0, comm},
               stream);
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount,
                           ncclDataType_t type, ncclComm_t comm,
                           CUstream_st* stream) {
  return Issue(
      {Kind::kAllGather, send, recv, sendcount, type, ncclSum, 0, comm},
      stream);
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           CUstream_st* stream) {
  if (comm != nullptr && (root < 0 || root >= comm->nranks)) {
    thread_last_error = "broadcast root " + std::to_string(root);
    return ncclInvalidArgument;
  }
  // Every rank sends (non-roots their receive buffer, ignored), so that
  // each operation has one file per rank.
  const void* from = send != nullptr ? send : recv;
  return Issue({Kind::kBroadcast, from, recv, count, type, ncclSum, root, comm},
               stream);
}

ncclResult_t ncclGroupStart() {
  ++group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (group_depth == 0) {
    thread_last_error = "ncclGroupEnd without ncclGroupStart";
    return ncclInvalidUsage;
  }
  if (--group_depth > 0) return ncclSuccess;
  std::vector<std::pair<Operation*, CUstream_st*>> ops;
  ops.swap(grouped);
  for (auto& [op, stream] : ops) {
    const Operation copy = *op;
    delete op;
    const ncclResult_t result = Issue(copy, stream);
    if (result != ncclSuccess) return result;
  }
  return ncclSuccess;
}

}  // extern "C"
