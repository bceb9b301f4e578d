// The CUDA driver API, opened at run time.
//
// libcuda.so.1 is opened with dlopen exactly once per process and every entry
// point the runtime uses is resolved once into a table of function pointers.
// cuda.h is used for its types only; nothing links against libcuda, so
// binaries start (and report Unavailable) on machines without a driver.
#ifndef KILN_RUNTIME_CUDA_DRIVER_H_
#define KILN_RUNTIME_CUDA_DRIVER_H_

#include <cuda.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {

// Function-pointer table. Each member has the type of the cuda.h declaration
// the header maps the plain name to (e.g. cuMemAlloc -> cuMemAlloc_v2), and is
// resolved by that versioned symbol name.
struct CudaApi {
#define KILN_CUDA_API_MEMBER(name) decltype(&::name) name = nullptr;
#define KILN_CUDA_API_LIST(X)                    \
  X(cuGetErrorName)                              \
  X(cuGetErrorString)                            \
  X(cuInit)                                      \
  X(cuDriverGetVersion)                          \
  X(cuDeviceGetCount)                            \
  X(cuDeviceGet)                                 \
  X(cuDeviceGetAttribute)                        \
  X(cuDeviceGetName)                             \
  X(cuDeviceTotalMem)                            \
  X(cuDevicePrimaryCtxRetain)                    \
  X(cuDevicePrimaryCtxRelease)                   \
  X(cuCtxSetCurrent)                             \
  X(cuCtxSynchronize)                            \
  X(cuStreamCreate)                              \
  X(cuStreamDestroy)                             \
  X(cuStreamSynchronize)                         \
  X(cuStreamWaitEvent)                           \
  X(cuEventCreate)                               \
  X(cuEventRecord)                               \
  X(cuEventQuery)                                \
  X(cuEventSynchronize)                          \
  X(cuEventElapsedTime)                          \
  X(cuEventDestroy)                              \
  X(cuMemAlloc)                                  \
  X(cuMemFree)                                   \
  X(cuMemcpyHtoDAsync)                           \
  X(cuMemcpyDtoHAsync)                           \
  X(cuMemcpyDtoDAsync)                           \
  X(cuMemcpy2DAsync)                             \
  X(cuMemsetD8Async)                             \
  X(cuMemAllocHost)                              \
  X(cuMemFreeHost)                               \
  X(cuMemGetInfo)                                \
  X(cuModuleLoadDataEx)                          \
  X(cuModuleGetFunction)                         \
  X(cuModuleUnload)                              \
  X(cuLaunchKernel)                              \
  X(cuLaunchKernelEx)                            \
  X(cuFuncSetAttribute)                          \
  X(cuFuncGetAttribute)                          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuOccupancyMaxActiveClusters)                \
  X(cuStreamBeginCapture)                        \
  X(cuStreamEndCapture)                          \
  X(cuGraphInstantiate)                          \
  X(cuGraphLaunch)                               \
  X(cuGraphExecDestroy)                          \
  X(cuGraphDestroy)                              \
  X(cuTensorMapEncodeTiled)                      \
  X(cuTensorMapEncodeIm2col)
  KILN_CUDA_API_LIST(KILN_CUDA_API_MEMBER)
#undef KILN_CUDA_API_MEMBER
};

// The process-wide driver: the dlopen handle, the resolved table and the
// result of cuInit(0).
class CudaDriver {
 public:
  // The driver, opened and initialised on first use (thread-safe). Without
  // libcuda.so.1 this is UnavailableError("libcuda.so.1 not found: no NVIDIA
  // driver on this machine ..."); a missing entry point or a failing cuInit
  // is reported the same way, with the symbol or the CUresult named. The
  // outcome is computed once and returned on every later call.
  static absl::StatusOr<const CudaDriver*> Get();

  // True when Get() succeeds.
  static bool Available() { return Get().ok(); }

  const CudaApi& api() const { return api_; }

  // The driver's version as reported by cuDriverGetVersion (e.g. 13000).
  int version() const { return version_; }

  // OK for CUDA_SUCCESS; otherwise a Status naming the call and the result:
  // "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)". Out of
  // memory and a cooperative grid too large for the device map to
  // ResourceExhausted, invalid arguments (a cluster size among them) to
  // InvalidArgument, a missing kernel to NotFound, everything else to
  // Internal.
  absl::Status Check(CUresult result, absl::string_view call) const;

 private:
  CudaDriver() = default;
  static absl::StatusOr<const CudaDriver*> Open();

  void* handle_ = nullptr;
  CudaApi api_;
  int version_ = 0;
};

// The Status for a CUresult given its name and description; used by
// CudaDriver::Check and usable without a driver.
absl::Status CudaResultToStatus(CUresult result, absl::string_view call,
                                absl::string_view name,
                                absl::string_view description);

// Calls api().fn(args...) and checks the result, naming `fn` in the error.
// Usage: KILN_RETURN_IF_ERROR(KILN_CU(driver, cuStreamSynchronize, stream));
#define KILN_CU(driver, fn, ...) \
  (driver)->Check((driver)->api().fn(__VA_ARGS__), #fn)

}  // namespace kiln

#endif  // KILN_RUNTIME_CUDA_DRIVER_H_
