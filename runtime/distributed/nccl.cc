#include "runtime/distributed/nccl.h"

#include <dlfcn.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace distributed {

absl::string_view NcclResultName(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "unknown ncclResult_t";
  }
}

absl::Status NcclResultToStatus(ncclResult_t result, absl::string_view call,
                                absl::string_view description,
                                absl::string_view last_error) {
  if (result == ncclSuccess) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (result) {
    case ncclSystemError:
    case ncclRemoteError:
    case ncclUnhandledCudaError:
      code = absl::StatusCode::kUnavailable;
      break;
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      code = absl::StatusCode::kInvalidArgument;
      break;
    default:
      break;
  }
  std::string message =
      absl::StrCat(call, " failed: ", NcclResultName(result), " = ",
                   static_cast<int>(result), " (", description, ")");
  if (!last_error.empty()) absl::StrAppend(&message, ": ", last_error);
  return absl::Status(code, message);
}

absl::Status NcclLibrary::Check(ncclResult_t result, absl::string_view call,
                                ncclComm_t comm) const {
  if (result == ncclSuccess) return absl::OkStatus();
  const char* description = api_.ncclGetErrorString(result);
  // ncclGetLastError(nullptr) is the calling thread's last error.
  const char* last = api_.ncclGetLastError(comm);
  return NcclResultToStatus(result, call,
                            description != nullptr ? description : "",
                            last != nullptr ? last : "");
}

absl::StatusOr<const NcclLibrary*> NcclLibrary::Get() {
  // Never destroyed: communicators may be torn down at exit.
  static const absl::StatusOr<const NcclLibrary*>* const library =
      new absl::StatusOr<const NcclLibrary*>(Open());
  return *library;
}

absl::StatusOr<const NcclLibrary*> NcclLibrary::Open() {
  const char* override_path = std::getenv("KILN_NCCL_LIBRARY");
  const bool overridden = override_path != nullptr && *override_path != '\0';
  const std::string path = overridden ? override_path : "libnccl.so.2";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(absl::StrCat(
        path, " not found: NCCL is needed for more than one rank (dlopen: ",
        error != nullptr ? error : "unknown error", ")",
        overridden ? ""
                   : "; set KILN_NCCL_LIBRARY to its path, e.g. python's "
                     "site-packages/nvidia/nccl/lib/libnccl.so.2"));
  }
  auto* library = new NcclLibrary();
  library->handle_ = handle;
  library->path_ = path;
  NcclApi& api = library->api_;
#define KILN_RESOLVE(name)                                           \
  {                                                                  \
    void* fn = dlsym(handle, #name);                                 \
    if (fn == nullptr) {                                             \
      delete library;                                                \
      dlclose(handle);                                               \
      return absl::UnavailableError(                                 \
          absl::StrCat("the NCCL library ", path, " lacks ", #name,  \
                       ": it is older than NCCL 2.13 or not NCCL")); \
    }                                                                \
    api.name = reinterpret_cast<decltype(api.name)>(fn);             \
  }
  KILN_NCCL_API_LIST(KILN_RESOLVE)
#undef KILN_RESOLVE
  absl::Status version =
      library->Check(api.ncclGetVersion(&library->version_), "ncclGetVersion");
  if (!version.ok()) {
    delete library;
    dlclose(handle);
    return absl::UnavailableError(absl::StrCat("the NCCL library ", path,
                                               " failed: ", version.message()));
  }
  return library;
}

}  // namespace distributed
}  // namespace kiln
