// Loaded code: modules (cubin or PTX) and kernel launches.
#ifndef KILN_RUNTIME_CUDA_MODULE_H_
#define KILN_RUNTIME_CUDA_MODULE_H_

#include <cuda.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/stream.h"

namespace kiln {

// The code of one module: PTX (portable, JIT-compiled by the driver) and
// optionally cubins, each for one exact architecture.
struct ModuleImages {
  struct Cubin {
    int sm = 0;  // e.g. 90 for sm_90
    std::string data;
  };
  std::string ptx;
  std::vector<Cubin> cubins;
};

struct Dim3 {
  uint32_t x = 1;
  uint32_t y = 1;
  uint32_t z = 1;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t shared_memory_bytes = 0;  // dynamic shared memory per block
  // Programmatic stream serialization: the kernel may be scheduled before the
  // previous kernel on the stream has finished. Only for kernels that wait
  // for their predecessor themselves (griddepcontrol.wait) before they touch
  // memory; on devices of compute capability 9.0 and newer.
  bool programmatic_serialization = false;
  // Blocks per thread-block cluster (1 x 1 x 1: none); each grid dimension
  // must be a multiple of it. Devices of compute capability 9.0 and newer;
  // past 8 blocks only after Kernel::AllowNonPortableClusterSize.
  Dim3 cluster;
  // Every block resident at once, for kernels that synchronise the whole
  // grid: the driver refuses a grid that does not fit the device.
  bool cooperative = false;

  bool clustered() const {
    return cluster.x != 1 || cluster.y != 1 || cluster.z != 1;
  }
};

// Kernel arguments assembled at run time (e.g. from an artifact's argument
// layout). Each value is copied, so the builder owns everything it points to.
class KernelArgs {
 public:
  template <typename T>
  KernelArgs& Add(const T& value) {
    static_assert(std::is_trivially_copyable<T>::value,
                  "kernel arguments are copied bytewise");
    return AddBytes(&value, sizeof(T));
  }
  KernelArgs& AddBytes(const void* data, size_t size);

  // Pointers to each argument value, as cuLaunchKernel takes them. Valid
  // until the next Add.
  void** pointers();
  size_t size() const { return storage_.size(); }

 private:
  // One 8-byte-aligned chunk per argument.
  std::vector<std::vector<uint64_t>> storage_;
  std::vector<void*> pointers_;
};

// A kernel of a loaded module; valid while the module lives.
class Kernel {
 public:
  Kernel() = default;

  const std::string& name() const { return name_; }
  CUfunction handle() const { return function_; }

  // Allows launches with up to `bytes` of dynamic shared memory (needed
  // above 48 KiB).
  absl::Status SetMaxDynamicSharedMemory(int bytes) const;
  // Allows clusters of more than the portable 8 blocks (up to 16 on sm_90).
  absl::Status AllowNonPortableClusterSize() const;

  // OK when the device can run `config` at all: clusters need compute
  // capability 9.0, a cooperative grid must fit on the device at once and a
  // cluster must fit its blocks on one GPC. FailedPrecondition or
  // ResourceExhausted naming the kernel otherwise. Launch reports the same
  // only through the driver's error, and inside a graph capture maybe not
  // until the graph is instantiated; call this first (outside a capture).
  absl::Status CheckLaunchable(const LaunchConfig& config) const;

  // Launches on `stream`; `args` points to one pointer per kernel parameter.
  // With a cluster, cooperatively or with programmatic serialization through
  // cuLaunchKernelEx and its launch attributes (kept by graph capture).
  absl::Status Launch(const Stream& stream, const LaunchConfig& config,
                      void** args) const;
  absl::Status Launch(const Stream& stream, const LaunchConfig& config,
                      KernelArgs& args) const {
    return Launch(stream, config, args.pointers());
  }
  // Launch with the arguments given directly, each passed by value in the
  // exact type of the kernel's parameter (e.g. CUdeviceptr, float, int32_t).
  template <typename... Args>
  absl::Status LaunchWith(const Stream& stream, const LaunchConfig& config,
                          const Args&... args) const {
    std::array<void*, sizeof...(Args) + 1> pointers = {
        const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
    return Launch(stream, config, pointers.data());
  }

 private:
  friend class CudaModule;
  Kernel(const Device* device, CUfunction function, std::string name)
      : device_(device),
        driver_(&device->driver()),
        function_(function),
        name_(std::move(name)) {}

  // The device checks of CheckLaunchable, without the driver's.
  absl::Status CheckDevice(const LaunchConfig& config) const;

  const Device* device_ = nullptr;
  const CudaDriver* driver_ = nullptr;
  CUfunction function_ = nullptr;
  std::string name_;
};

// A loaded CUmodule. (kiln::Module is the public API's loaded artifact.)
class CudaModule {
 public:
  // Loads the cubin built for the device's exact architecture if `images`
  // has one, the PTX otherwise. A failing JIT compilation returns its error
  // log in the message. InvalidArgument if neither fits.
  static absl::StatusOr<std::unique_ptr<CudaModule>> Load(
      const Device& device, const ModuleImages& images);

  // Loads one image (cubin, fatbin or NUL-free PTX text).
  static absl::StatusOr<std::unique_ptr<CudaModule>> LoadImage(
      const Device& device, absl::string_view image, bool is_ptx);

  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;
  ~CudaModule();

  // True if the module came from a cubin, false if it was JIT-compiled.
  bool loaded_cubin() const { return loaded_cubin_; }
  // The JIT's info log (empty for cubins or when the JIT said nothing).
  const std::string& jit_info_log() const { return info_log_; }

  // NotFound if the module has no kernel called `name`.
  absl::StatusOr<Kernel> GetKernel(const std::string& name) const;

 private:
  CudaModule(const Device* device, CUmodule module)
      : device_(device), module_(module) {}
  const Device* device_;
  CUmodule module_;
  bool loaded_cubin_ = false;
  std::string info_log_;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_CUDA_MODULE_H_
