// NCCL, opened at run time.
//
// libnccl.so.2 is opened with dlopen once per process and every entry point
// kiln uses is resolved once into a table of function pointers, as the CUDA
// driver is (runtime/cuda/driver.h). Nothing links against NCCL and no NCCL
// header is needed (nccl_types.h declares its ABI), so binaries start and
// report Unavailable on machines without it.
//
// The library is, in order: $KILN_NCCL_LIBRARY (a path; on machines where
// NCCL comes with PyTorch it lies in site-packages/nvidia/nccl/lib), then
// libnccl.so.2 on the loader's search path.
#ifndef KILN_RUNTIME_DISTRIBUTED_NCCL_H_
#define KILN_RUNTIME_DISTRIBUTED_NCCL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/distributed/nccl_types.h"

namespace kiln {
namespace distributed {

// Function-pointer table, one member per entry point, typed as nccl.h
// declares it and resolved by the same name.
struct NcclApi {
#define KILN_NCCL_API_MEMBER(name) decltype(&::name) name = nullptr;
#define KILN_NCCL_API_LIST(X) \
  X(ncclGetVersion)           \
  X(ncclGetErrorString)       \
  X(ncclGetLastError)         \
  X(ncclGetUniqueId)          \
  X(ncclCommInitRank)         \
  X(ncclCommDestroy)          \
  X(ncclCommAbort)            \
  X(ncclCommGetAsyncError)    \
  X(ncclAllReduce)            \
  X(ncclReduceScatter)        \
  X(ncclAllGather)            \
  X(ncclBroadcast)            \
  X(ncclGroupStart)           \
  X(ncclGroupEnd)
  KILN_NCCL_API_LIST(KILN_NCCL_API_MEMBER)
#undef KILN_NCCL_API_MEMBER
};

// The process-wide NCCL library: the dlopen handle and the resolved table.
class NcclLibrary {
 public:
  // The library, opened on first use (thread-safe); the outcome is computed
  // once. Without it: UnavailableError("libnccl.so.2 not found ... (set
  // KILN_NCCL_LIBRARY ...)"); a missing entry point (an NCCL older than
  // 2.13) is Unavailable naming the symbol.
  static absl::StatusOr<const NcclLibrary*> Get();

  const NcclApi& api() const { return api_; }
  // The path it was opened from.
  const std::string& path() const { return path_; }
  // ncclGetVersion: e.g. 22105 for NCCL 2.21.5.
  int version() const { return version_; }

  // OK for ncclSuccess; otherwise a Status naming the call, the result and
  // NCCL's description of it ("ncclAllReduce failed: ncclRemoteError
  // (remote process exited or there was a network error)"), with the
  // communicator's last error message where `comm` is given.
  absl::Status Check(ncclResult_t result, absl::string_view call,
                     ncclComm_t comm = nullptr) const;

 private:
  NcclLibrary() = default;
  static absl::StatusOr<const NcclLibrary*> Open();

  void* handle_ = nullptr;
  NcclApi api_;
  std::string path_;
  int version_ = 0;
};

// NCCL's name of a result ("ncclRemoteError"); usable without the library.
absl::string_view NcclResultName(ncclResult_t result);

// The Status for a failed result: Unavailable for errors of the system or a
// remote rank (the job cannot go on), InvalidArgument for invalid arguments
// and usage, Internal otherwise.
absl::Status NcclResultToStatus(ncclResult_t result, absl::string_view call,
                                absl::string_view description,
                                absl::string_view last_error);

// Calls api().fn(args...) and checks the result, naming `fn`.
#define KILN_NCCL(library, fn, ...) \
  (library)->Check((library)->api().fn(__VA_ARGS__), #fn)

}  // namespace distributed
}  // namespace kiln

#endif  // KILN_RUNTIME_DISTRIBUTED_NCCL_H_
