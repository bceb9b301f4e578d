#include "runtime/cuda/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

// Stringifies after macro expansion, so KILN_VERSIONED_NAME(cuMemAlloc) is
// "cuMemAlloc_v2": the symbol cuda.h maps the plain name to.
#define KILN_STRINGIFY_INNER(x) #x
#define KILN_VERSIONED_NAME(x) KILN_STRINGIFY_INNER(x)

// Resolves `versioned`, falling back to `plain` for entry points whose
// versioned symbol is newer than the installed driver but whose plain symbol
// has the same signature (cuEventElapsedTime_v2 arrived in 12.8).
void* Resolve(void* handle, const char* versioned, const char* plain) {
  void* fn = dlsym(handle, versioned);
  if (fn == nullptr && std::string(versioned) != plain) {
    static const char* const kSameSignature[] = {"cuEventElapsedTime"};
    for (const char* name : kSameSignature) {
      if (std::string(plain) == name) fn = dlsym(handle, plain);
    }
  }
  return fn;
}

absl::StatusCode CodeFor(CUresult result) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      return absl::StatusCode::kResourceExhausted;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_DEVICE:
      return absl::StatusCode::kInvalidArgument;
    case CUDA_ERROR_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status CudaResultToStatus(CUresult result, absl::string_view call,
                                absl::string_view name,
                                absl::string_view description) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  return absl::Status(CodeFor(result), absl::StrCat(call, " failed: ", name,
                                                    " (", description, ")"));
}

absl::Status CudaDriver::Check(CUresult result, absl::string_view call) const {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* description = nullptr;
  if (api_.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
    name = "unknown CUresult";
  }
  if (api_.cuGetErrorString(result, &description) != CUDA_SUCCESS ||
      description == nullptr) {
    description = "no description";
  }
  return CudaResultToStatus(result, call,
                            absl::StrCat(name, " = ", static_cast<int>(result)),
                            description);
}

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  // Function-local static: initialised once, thread-safe, never destroyed
  // (the driver must outlive every object that might call it at exit).
  static const absl::StatusOr<const CudaDriver*>* const driver =
      new absl::StatusOr<const CudaDriver*>(Open());
  return *driver;
}

absl::StatusOr<const CudaDriver*> CudaDriver::Open() {
  // KILN_LIBCUDA_PATH overrides the library (a specific driver install, or a
  // stand-in library in tests).
  const char* override_path = std::getenv("KILN_LIBCUDA_PATH");
  const char* path = override_path != nullptr && *override_path != '\0'
                         ? override_path
                         : "libcuda.so.1";
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::UnavailableError(absl::StrCat(
        path, " not found: no NVIDIA driver on this machine (dlopen: ",
        error != nullptr ? error : "unknown error", ")"));
  }
  auto* driver = new CudaDriver();
  driver->handle_ = handle;
  CudaApi& api = driver->api_;
#define KILN_RESOLVE(name)                                                     \
  {                                                                            \
    void* fn = Resolve(handle, KILN_VERSIONED_NAME(name), #name);              \
    if (fn == nullptr) {                                                       \
      delete driver;                                                           \
      dlclose(handle);                                                         \
      return absl::UnavailableError(absl::StrCat(                              \
          "the NVIDIA driver in ", path, " lacks ", KILN_VERSIONED_NAME(name), \
          ": the driver is older than CUDA 12 or damaged"));                   \
    }                                                                          \
    api.name = reinterpret_cast<decltype(api.name)>(fn);                       \
  }
  KILN_CUDA_API_LIST(KILN_RESOLVE)
#undef KILN_RESOLVE

  absl::Status init = driver->Check(api.cuInit(0), "cuInit");
  if (init.ok()) {
    init = driver->Check(api.cuDriverGetVersion(&driver->version_),
                         "cuDriverGetVersion");
  }
  if (!init.ok()) {
    // A driver without a usable GPU (or a broken install): report it as
    // Unavailable so callers can skip GPU work uniformly.
    absl::Status status = absl::UnavailableError(absl::StrCat(
        "the NVIDIA driver failed to initialise: ", init.message()));
    delete driver;
    dlclose(handle);
    return status;
  }
  return driver;
}

}  // namespace kiln
