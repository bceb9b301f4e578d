// A CPU stand-in for libcuda.so.1, for testing the runtime without a GPU.
//
// It exports every entry point the runtime resolves (under the versioned
// names cuda.h maps them to, since it is compiled against cuda.h) and
// emulates a small sm_90 device: "device memory" is host memory, streams run
// work immediately (or record it while capturing a graph), events complete at
// once, and modules are accepted when their image names the requested
// kernels. cuLaunchKernel runs CPU versions of the test kernels of
// tests/gpu/kernels.cu (fill_f32, saxpy, reduce_sum_f32, gather_f32) and
// tests/gpu/linreg_kernels.cu (linear regression, SGD, Adam, a running mean),
// and of the runtime's gradient tools (runtime/session/grad_tools.cu).
// cuLaunchKernelEx takes programmatic serialization, clusters and
// cooperative launches, checks them as the driver does (cluster sizes, the
// grid a multiple of the cluster, a cooperative grid that fits the device)
// and counts them for the tests (kiln_fake_* below); the work runs like any
// other launch. KILN_FAKE_CUDA_SM (e.g. "80") changes the compute capability
// the device reports, for devices without clusters; KILN_FAKE_CUDA_DEVICES
// (e.g. "4") the number of devices. A stream that waits for an event
// recorded during another stream's capture joins that capture, and
// cuLaunchHostFunc runs host functions in stream order (the stand-in libnccl
// enqueues its collectives so).
// The test kernel fault_when (tests/gpu/linreg_kernels.cu) with its flag set
// faults like a kernel that stores to an illegal address on a GPU: the
// context is lost, so from then on work is dropped and every call that
// touches the device returns CUDA_ERROR_ILLEGAL_ADDRESS, until the process
// ends.
// Not a simulator of anything else: unknown kernels fail to launch.
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/random/philox.h"

namespace {

constexpr size_t kTotalMemory = size_t{1} << 30;
constexpr int kMaxSharedOptin = 232448;  // H100/H200 value
constexpr int kDefaultShared = 48 * 1024;
constexpr int kSmCount = 132;
constexpr int kMaxThreadsPerSm = 2048;
constexpr int kMaxBlocksPerSm = 32;
constexpr int kSharedPerSm = 233472;  // 228 KiB
constexpr unsigned int kMaxPortableCluster = 8;
constexpr unsigned int kMaxCluster = 16;

std::mutex mu;
size_t allocated = 0;
std::map<CUdeviceptr, size_t> allocations;
int context_token;
int programmatic_launches = 0;
int cluster_launches = 0;
int cooperative_launches = 0;
unsigned int last_cluster[3] = {0, 0, 0};

// The compute capability as major * 10 + minor: 90 unless KILN_FAKE_CUDA_SM
// says otherwise (read at each query, so a test may change it).
int FakeSm() {
  const char* sm = std::getenv("KILN_FAKE_CUDA_SM");
  return sm != nullptr && *sm != '\0' ? std::atoi(sm) : 90;
}

struct FakeStream {
  bool capturing = false;
  std::vector<std::function<void()>> captured;
  // A stream that waited for an event recorded during another stream's
  // capture joins that capture (as with the driver): its work is recorded
  // into the origin's graph, in issue order, until the capture ends.
  FakeStream* capture_origin = nullptr;
  std::vector<FakeStream*> joined;
};
struct FakeEvent {
  // The capturing stream it was last recorded on during a capture.
  FakeStream* capture = nullptr;
};
struct FakeFunction {
  std::string name;
  int max_dynamic_shared = kDefaultShared;
  bool non_portable_cluster = false;
};
struct FakeModule {
  std::string image;
  // Function handles live as long as their module (as with the driver).
  std::vector<std::unique_ptr<FakeFunction>> functions;
};
// Streams not yet destroyed (events may name a destroyed one).
std::set<FakeStream*> live_streams;

struct FakeGraph {
  std::vector<std::function<void()>> ops;
};

// Runs `op` now, or records it if `stream` is being captured.
// CUDA_ERROR_ILLEGAL_ADDRESS once a fault_when launch has faulted.
CUresult sticky_fault = CUDA_SUCCESS;

CUresult Enqueue(CUstream stream, std::function<void()> op) {
  if (sticky_fault != CUDA_SUCCESS) return sticky_fault;
  auto* s = reinterpret_cast<FakeStream*>(stream);
  if (s != nullptr && s->capture_origin != nullptr) s = s->capture_origin;
  if (s != nullptr && s->capturing) {
    s->captured.push_back(std::move(op));
  } else {
    op();
  }
  return CUDA_SUCCESS;
}

struct StridedView {
  long long shape[4];
  long long strides[4];
  long long offset;
  int rank;
};

template <typename T>
T Arg(void** args, int i) {
  T value;
  std::memcpy(&value, args[i], sizeof(T));
  return value;
}

}  // namespace

extern "C" {

CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case CUDA_SUCCESS:
      *name = "CUDA_SUCCESS";
      break;
    case CUDA_ERROR_INVALID_VALUE:
      *name = "CUDA_ERROR_INVALID_VALUE";
      break;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *name = "CUDA_ERROR_OUT_OF_MEMORY";
      break;
    case CUDA_ERROR_INVALID_PTX:
      *name = "CUDA_ERROR_INVALID_PTX";
      break;
    case CUDA_ERROR_INVALID_IMAGE:
      *name = "CUDA_ERROR_INVALID_IMAGE";
      break;
    case CUDA_ERROR_NOT_FOUND:
      *name = "CUDA_ERROR_NOT_FOUND";
      break;
    case CUDA_ERROR_INVALID_DEVICE:
      *name = "CUDA_ERROR_INVALID_DEVICE";
      break;
    case CUDA_ERROR_NOT_SUPPORTED:
      *name = "CUDA_ERROR_NOT_SUPPORTED";
      break;
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      *name = "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE";
      break;
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
      *name = "CUDA_ERROR_INVALID_CLUSTER_SIZE";
      break;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      *name = "CUDA_ERROR_ILLEGAL_ADDRESS";
      break;
    default:
      *name = "CUDA_ERROR_UNKNOWN";
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  switch (error) {
    case CUDA_ERROR_INVALID_VALUE:
      *text = "invalid argument";
      break;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *text = "out of memory";
      break;
    case CUDA_ERROR_INVALID_PTX:
      *text = "a PTX JIT compilation failed";
      break;
    case CUDA_ERROR_NOT_FOUND:
      *text = "named symbol not found";
      break;
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      *text = "too many blocks in cooperative launch";
      break;
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
      *text = "invalid cluster size";
      break;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      *text = "an illegal memory access was encountered";
      break;
    default:
      *text = "fake driver error";
      break;
  }
  return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}
// Devices: 1 unless KILN_FAKE_CUDA_DEVICES says otherwise (the ranks of a
// data-parallel test bind devices 0, 1, ...). They share one host memory.
int FakeDeviceCount() {
  const char* n = std::getenv("KILN_FAKE_CUDA_DEVICES");
  return n != nullptr && *n != '\0' ? std::max(1, std::atoi(n)) : 1;
}
CUresult cuDeviceGetCount(int* count) {
  *count = FakeDeviceCount();
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= FakeDeviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute,
                              CUdevice) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = FakeSm() / 10;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = FakeSm() % 10;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = kSmCount;
      break;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
      *value = FakeSm() >= 90 ? 1 : 0;
      break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
      *value = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = kMaxSharedOptin;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int length, CUdevice) {
  std::strncpy(name, "Fake CPU H200", length);
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t* bytes, CUdevice) {
  *bytes = kTotalMemory + (size_t{1} << 20);  // a little more than usable
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice) {
  *context = reinterpret_cast<CUcontext>(&context_token);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext context) {
  return context == reinterpret_cast<CUcontext>(&context_token)
             ? CUDA_SUCCESS
             : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuCtxSynchronize() { return sticky_fault; }

CUresult cuStreamCreate(CUstream* stream, unsigned int) {
  auto* s = new FakeStream();
  live_streams.insert(s);
  *stream = reinterpret_cast<CUstream>(s);
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream stream) {
  auto* s = reinterpret_cast<FakeStream*>(stream);
  live_streams.erase(s);
  for (FakeStream* other : live_streams) {
    if (other->capture_origin == s) other->capture_origin = nullptr;
  }
  delete s;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream stream) {
  auto* s = reinterpret_cast<FakeStream*>(stream);
  if (s != nullptr && s->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return sticky_fault;
}
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int) {
  auto* s = reinterpret_cast<FakeStream*>(stream);
  auto* e = reinterpret_cast<FakeEvent*>(event);
  if (s != nullptr && e != nullptr && e->capture != nullptr &&
      live_streams.count(e->capture) != 0 && e->capture->capturing &&
      e->capture != s && !s->capturing && s->capture_origin == nullptr) {
    s->capture_origin = e->capture;
    e->capture->joined.push_back(s);
  }
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* event, unsigned int) {
  *event = reinterpret_cast<CUevent>(new FakeEvent());
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent event, CUstream stream) {
  auto* s = reinterpret_cast<FakeStream*>(stream);
  if (s != nullptr && s->capture_origin != nullptr) s = s->capture_origin;
  reinterpret_cast<FakeEvent*>(event)->capture =
      s != nullptr && s->capturing ? s : nullptr;
  return CUDA_SUCCESS;
}

// Runs `fn(data)` in stream order (recorded into a graph while capturing),
// as the driver runs a host function; the stand-in NCCL enqueues its
// collectives this way.
CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* data) {
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return Enqueue(stream, [fn, data] { fn(data); });
}
CUresult cuEventQuery(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent) { return sticky_fault; }
CUresult cuEventElapsedTime(float* ms, CUevent, CUevent) {
  *ms = 1.5f;
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent event) {
  delete reinterpret_cast<FakeEvent*>(event);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr* pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu);
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (sticky_fault != CUDA_SUCCESS) return sticky_fault;
  if (bytes > kTotalMemory - allocated) return CUDA_ERROR_OUT_OF_MEMORY;
  void* memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  allocations[*pointer] = bytes;
  allocated += bytes;
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr pointer) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = allocations.find(pointer);
  if (it == allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  allocated -= it->second;
  allocations.erase(it);
  std::free(reinterpret_cast<void*>(pointer));
  return CUDA_SUCCESS;
}
CUresult cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard<std::mutex> lock(mu);
  *free_bytes = kTotalMemory - allocated;
  *total_bytes = kTotalMemory;
  return CUDA_SUCCESS;
}
CUresult cuMemAllocHost(void** pointer, size_t bytes) {
  *pointer = std::malloc(bytes);
  return *pointer ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void* pointer) {
  std::free(pointer);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes,
                           CUstream stream) {
  return Enqueue(
      stream, [=] { std::memcpy(reinterpret_cast<void*>(dst), src, bytes); });
}
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes,
                           CUstream stream) {
  return Enqueue(stream, [=] {
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  });
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                           CUstream stream) {
  return Enqueue(stream, [=] {
    std::memmove(reinterpret_cast<void*>(dst),
                 reinterpret_cast<const void*>(src), bytes);
  });
}
// Host and device memory are both host memory here; arrays are not
// supported.
CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D* copy, CUstream stream) {
  if (copy->srcMemoryType == CU_MEMORYTYPE_ARRAY ||
      copy->dstMemoryType == CU_MEMORYTYPE_ARRAY ||
      copy->WidthInBytes > copy->srcPitch && copy->Height > 1 ||
      copy->WidthInBytes > copy->dstPitch && copy->Height > 1) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  auto address = [](CUmemorytype type, const void* host, CUdeviceptr device,
                    size_t x, size_t y, size_t pitch) {
    const char* base = type == CU_MEMORYTYPE_HOST
                           ? static_cast<const char*>(host)
                           : reinterpret_cast<const char*>(device);
    return const_cast<char*>(base + y * pitch + x);
  };
  const CUDA_MEMCPY2D c = *copy;
  return Enqueue(stream, [c, address] {
    for (size_t row = 0; row < c.Height; ++row) {
      std::memcpy(address(c.dstMemoryType, c.dstHost, c.dstDevice,
                          c.dstXInBytes, c.dstY + row, c.dstPitch),
                  address(c.srcMemoryType, c.srcHost, c.srcDevice,
                          c.srcXInBytes, c.srcY + row, c.srcPitch),
                  c.WidthInBytes);
    }
  });
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes,
                         CUstream stream) {
  return Enqueue(
      stream, [=] { std::memset(reinterpret_cast<void*>(dst), value, bytes); });
}

CUresult cuModuleLoadDataEx(CUmodule* module, const void* image,
                            unsigned int count, CUjit_option* options,
                            void** values) {
  // As on a GPU, a lost context loads nothing more.
  if (sticky_fault != CUDA_SUCCESS) return sticky_fault;
  const char* bytes = static_cast<const char*>(image);
  std::string text;
  if (std::memcmp(bytes,
                  "\x7f"
                  "ELF",
                  4) == 0) {
    // A cubin (64-bit ELF): the section headers end the file, so their
    // offset and count give its size. The fake only searches the bytes for
    // kernel names (in the string table).
    uint64_t section_offset;
    uint16_t section_size, section_count;
    std::memcpy(&section_offset, bytes + 0x28, 8);
    std::memcpy(&section_size, bytes + 0x3a, 2);
    std::memcpy(&section_count, bytes + 0x3c, 2);
    text.assign(bytes, section_offset + uint64_t{section_size} * section_count);
  } else if (std::strstr(bytes, ".version") != nullptr) {
    text = bytes;
    if (text.find("not_an_instruction") != std::string::npos) {
      for (unsigned i = 0; i < count; ++i) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER) {
          std::strcpy(static_cast<char*>(values[i]),
                      "ptxas application ptx input, line 6; error   : "
                      "Unknown instruction 'not_an_instruction'");
        }
      }
      return CUDA_ERROR_INVALID_PTX;
    }
  } else {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  *module = reinterpret_cast<CUmodule>(new FakeModule{std::move(text), {}});
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module,
                             const char* name) {
  auto* m = reinterpret_cast<FakeModule*>(module);
  if (m->image.find(std::string(name)) == std::string::npos) {
    return CUDA_ERROR_NOT_FOUND;
  }
  std::lock_guard<std::mutex> lock(mu);
  m->functions.push_back(std::make_unique<FakeFunction>(FakeFunction{name}));
  *function = reinterpret_cast<CUfunction>(m->functions.back().get());
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule module) {
  delete reinterpret_cast<FakeModule*>(module);
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attr,
                            int value) {
  auto* f = reinterpret_cast<FakeFunction*>(function);
  if (attr == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
    if (FakeSm() < 90 || (value != 0 && value != 1)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    f->non_portable_cluster = value != 0;
    return CUDA_SUCCESS;
  }
  if (attr != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ||
      value > kMaxSharedOptin) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  f->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int* value, CUfunction_attribute, CUfunction) {
  *value = 0;
  return CUDA_SUCCESS;
}

}  // extern "C"

namespace {

// Blocks of `threads` threads and `shared` bytes of dynamic shared memory
// that fit on one SM at once (registers are not modelled).
int BlocksPerSm(unsigned int threads, size_t shared) {
  if (threads == 0 || threads > 1024) return 0;
  int blocks = std::min<int>(kMaxBlocksPerSm, kMaxThreadsPerSm / threads);
  if (shared > 0) {
    blocks = std::min<int>(blocks, static_cast<int>(kSharedPerSm / shared));
  }
  return blocks;
}

// The cluster attribute of `config`, if any, checked as the driver checks
// it: CUDA_ERROR_NOT_SUPPORTED before sm_90, CUDA_ERROR_INVALID_CLUSTER_SIZE
// for a zero dimension, a grid that is not a multiple of it, more than 16
// blocks, or more than 8 without the function's non-portable opt-in.
CUresult CheckCluster(const CUlaunchConfig& config, const FakeFunction& f,
                      const CUlaunchAttribute& attribute) {
  if (FakeSm() < 90) return CUDA_ERROR_NOT_SUPPORTED;
  const auto& c = attribute.value.clusterDim;
  if (c.x == 0 || c.y == 0 || c.z == 0 || config.gridDimX % c.x != 0 ||
      config.gridDimY % c.y != 0 || config.gridDimZ % c.z != 0) {
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  const uint64_t size = uint64_t{c.x} * c.y * c.z;
  if (size > kMaxCluster ||
      (size > kMaxPortableCluster && !f.non_portable_cluster)) {
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks,
                                                     CUfunction function,
                                                     int threads,
                                                     size_t shared) {
  if (blocks == nullptr || function == nullptr || threads <= 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *blocks = BlocksPerSm(static_cast<unsigned int>(threads), shared);
  return CUDA_SUCCESS;
}

// Every SM of the fake may hold blocks of one cluster (there are no GPCs).
CUresult cuOccupancyMaxActiveClusters(int* clusters, CUfunction function,
                                      const CUlaunchConfig* config) {
  if (clusters == nullptr || function == nullptr || config == nullptr ||
      (config->numAttrs > 0 && config->attrs == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const auto& f = *reinterpret_cast<FakeFunction*>(function);
  uint64_t size = 1;
  for (unsigned int i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) continue;
    const CUresult checked = CheckCluster(*config, f, config->attrs[i]);
    if (checked != CUDA_SUCCESS) return checked;
    const auto& c = config->attrs[i].value.clusterDim;
    size = uint64_t{c.x} * c.y * c.z;
  }
  const int per_sm =
      BlocksPerSm(config->blockDimX * config->blockDimY * config->blockDimZ,
                  config->sharedMemBytes);
  *clusters = static_cast<int>(uint64_t(kSmCount) * per_sm / size);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned int gx, unsigned int gy,
                        unsigned int gz, unsigned int bx, unsigned int by,
                        unsigned int bz, unsigned int shared, CUstream stream,
                        void** args, void** extra) {
  auto* f = reinterpret_cast<FakeFunction*>(function);
  if (gx == 0 || gy == 0 || gz == 0 || bx * by * bz == 0 ||
      bx * by * bz > 1024 || extra != nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (static_cast<int>(shared) > f->max_dynamic_shared) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::string& name = f->name;
  if (name == "fill_f32") {
    auto out = Arg<float*>(args, 0);
    auto value = Arg<float>(args, 1);
    auto n = Arg<int>(args, 2);
    return Enqueue(stream, [=] {
      for (int i = 0; i < n; ++i) out[i] = value;
    });
  }
  if (name == "saxpy") {
    auto a = Arg<float>(args, 0);
    auto x = Arg<const float*>(args, 1);
    auto y = Arg<float*>(args, 2);
    auto n = Arg<int>(args, 3);
    return Enqueue(stream, [=] {
      for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
    });
  }
  if (name == "reduce_sum_f32") {
    auto x = Arg<const float*>(args, 0);
    auto out = Arg<float*>(args, 1);
    auto n = Arg<int>(args, 2);
    return Enqueue(stream, [=] {
      float sum = 0;
      for (int i = 0; i < n; ++i) sum += x[i];
      *out += sum;
    });
  }
  if (name == "gather_f32") {
    auto base = Arg<const float*>(args, 0);
    auto out = Arg<float*>(args, 1);
    auto view = Arg<StridedView>(args, 2);
    auto n = Arg<long long>(args, 3);
    return Enqueue(stream, [=] {
      for (long long i = 0; i < n; ++i) {
        long long rest = i, offset = view.offset;
        for (int d = view.rank - 1; d >= 0; --d) {
          offset += (rest % view.shape[d]) * view.strides[d];
          rest /= view.shape[d];
        }
        out[i] = base[offset];
      }
    });
  }
  // tests/gpu/linreg_kernels.cu
  if (name == "linreg_forward") {
    auto x = Arg<const float*>(args, 0);
    auto w = Arg<const float*>(args, 1);
    auto b = Arg<const float*>(args, 2);
    auto pred = Arg<float*>(args, 3);
    auto n = Arg<int>(args, 4), in = Arg<int>(args, 5), out = Arg<int>(args, 6);
    return Enqueue(stream, [=] {
      for (int i = 0; i < n; ++i) {
        for (int o = 0; o < out; ++o) {
          float acc = b[o];
          for (int k = 0; k < in; ++k) acc += x[i * in + k] * w[k * out + o];
          pred[i * out + o] = acc;
        }
      }
    });
  }
  if (name == "mse_loss") {
    auto pred = Arg<const float*>(args, 0);
    auto y = Arg<const float*>(args, 1);
    auto loss = Arg<float*>(args, 2);
    auto count = Arg<int>(args, 3);
    return Enqueue(stream, [=] {
      float sum = 0;
      for (int i = 0; i < count; ++i)
        sum += (pred[i] - y[i]) * (pred[i] - y[i]);
      *loss = sum / count;
    });
  }
  if (name == "mse_grad") {
    auto pred = Arg<const float*>(args, 0);
    auto y = Arg<const float*>(args, 1);
    auto dpred = Arg<float*>(args, 2);
    auto count = Arg<int>(args, 3);
    return Enqueue(stream, [=] {
      for (int i = 0; i < count; ++i)
        dpred[i] = 2.0f * (pred[i] - y[i]) / count;
    });
  }
  if (name == "linreg_grad_w") {
    auto x = Arg<const float*>(args, 0);
    auto dpred = Arg<const float*>(args, 1);
    auto gw = Arg<float*>(args, 2);
    auto n = Arg<int>(args, 3), in = Arg<int>(args, 4), out = Arg<int>(args, 5);
    return Enqueue(stream, [=] {
      for (int k = 0; k < in; ++k) {
        for (int o = 0; o < out; ++o) {
          float acc = 0;
          for (int i = 0; i < n; ++i) acc += x[i * in + k] * dpred[i * out + o];
          gw[k * out + o] = acc;
        }
      }
    });
  }
  if (name == "running_mean_update") {
    auto pred = Arg<const float*>(args, 0);
    auto running = Arg<float*>(args, 1);
    auto momentum = Arg<float>(args, 2);
    auto n = Arg<int>(args, 3), out = Arg<int>(args, 4);
    return Enqueue(stream, [=] {
      for (int o = 0; o < out; ++o) {
        float acc = 0.0f;
        for (int i = 0; i < n; ++i) acc += pred[i * out + o];
        running[o] = (1.0f - momentum) * running[o] + momentum * (acc / n);
      }
    });
  }
  if (name == "linreg_grad_b") {
    auto dpred = Arg<const float*>(args, 0);
    auto gb = Arg<float*>(args, 1);
    auto n = Arg<int>(args, 2), out = Arg<int>(args, 3);
    return Enqueue(stream, [=] {
      for (int o = 0; o < out; ++o) {
        float acc = 0;
        for (int i = 0; i < n; ++i) acc += dpred[i * out + o];
        gb[o] = acc;
      }
    });
  }
  if (name == "fault_when") {
    auto flag = Arg<const int*>(args, 0);
    return Enqueue(stream, [=] {
      if (flag[0] != 0) sticky_fault = CUDA_ERROR_ILLEGAL_ADDRESS;
    });
  }
  if (name == "sgd_update") {
    auto p = Arg<float*>(args, 0);
    auto g = Arg<const float*>(args, 1);
    auto lr = Arg<const float*>(args, 2);
    auto count = Arg<int>(args, 3);
    return Enqueue(stream, [=] {
      for (int i = 0; i < count; ++i) p[i] = p[i] - lr[0] * g[i];
    });
  }
  if (name == "adam_update") {
    auto p = Arg<float*>(args, 0);
    auto m = Arg<float*>(args, 1);
    auto v = Arg<float*>(args, 2);
    auto g = Arg<const float*>(args, 3);
    auto lr = Arg<const float*>(args, 4);
    auto step = Arg<const int*>(args, 5);
    auto beta1 = Arg<float>(args, 6), beta2 = Arg<float>(args, 7),
         eps = Arg<float>(args, 8);
    auto count = Arg<int>(args, 9);
    return Enqueue(stream, [=] {
      const float t = static_cast<float>(step[0]);
      for (int i = 0; i < count; ++i) {
        const float mi = beta1 * m[i] + (1.0f - beta1) * g[i];
        const float vi = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        m[i] = mi;
        v[i] = vi;
        const float mhat = mi / (1.0f - std::pow(beta1, t));
        const float vhat = vi / (1.0f - std::pow(beta2, t));
        p[i] = p[i] - lr[0] * mhat / (std::sqrt(vhat) + eps);
      }
    });
  }
  // runtime/session/grad_tools.cu
  if (name == "kiln_grad_partials_f32") {
    auto g = Arg<const float*>(args, 0);
    auto n = Arg<long long>(args, 1);
    auto sumsq = Arg<double*>(args, 2);
    auto maxabs = Arg<float*>(args, 3);
    auto nonfinite = Arg<unsigned int*>(args, 4);
    const long long blocks = gx, threads = bx;
    return Enqueue(stream, [=] {
      for (long long blk = 0; blk < blocks; ++blk) {
        double sum = 0;
        float mx = 0;
        unsigned int bad = 0;
        for (long long t = 0; t < threads; ++t) {
          for (long long i = blk * threads + t; i < n; i += blocks * threads) {
            sum += double(g[i]) * double(g[i]);
            mx = std::fmax(mx, std::fabs(g[i]));
            if (!std::isfinite(g[i])) ++bad;
          }
        }
        sumsq[blk] = sum;
        maxabs[blk] = mx;
        nonfinite[blk] = bad;
      }
    });
  }
  if (name == "kiln_grad_scale_f32") {
    auto g = Arg<float*>(args, 0);
    auto n = Arg<long long>(args, 1);
    auto s = Arg<float>(args, 2);
    return Enqueue(stream, [=] {
      for (long long i = 0; i < n; ++i) g[i] = g[i] * s;
    });
  }
  if (name == "kiln_grad_clip_value_f32") {
    auto g = Arg<float*>(args, 0);
    auto n = Arg<long long>(args, 1);
    auto v = Arg<float>(args, 2);
    return Enqueue(stream, [=] {
      for (long long i = 0; i < n; ++i) {
        if (g[i] > v) {
          g[i] = v;
        } else if (g[i] < -v) {
          g[i] = -v;
        }
      }
    });
  }
  if (name == "kiln_grad_noise_f32") {
    auto g = Arg<float*>(args, 0);
    auto n = Arg<long long>(args, 1);
    auto stddev = Arg<float>(args, 2);
    auto seed = Arg<unsigned long long>(args, 3);
    auto stream_id = Arg<unsigned int>(args, 4);
    auto offset = Arg<unsigned int>(args, 5);
    return Enqueue(stream, [=] {
      const kiln::RandomStream r{seed, stream_id, offset};
      for (long long i = 0; i < n; ++i) {
        g[i] = g[i] + static_cast<float>(double(stddev) * r.Normal(i));
      }
    });
  }
  return CUDA_ERROR_LAUNCH_FAILED;
}

// Accepts the attributes the runtime sets (programmatic stream
// serialization, cluster dimension, cooperative), checks them and runs the
// launch like cuLaunchKernel: the stand-in runs kernels one after another,
// which is one valid schedule of such launches (and its CPU kernels need no
// grid-wide barrier).
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction function,
                          void** args, void** extra) {
  if (config == nullptr || function == nullptr ||
      (config->numAttrs > 0 && config->attrs == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const auto& f = *reinterpret_cast<FakeFunction*>(function);
  bool programmatic = false, cooperative = false;
  const CUlaunchAttribute* cluster = nullptr;
  for (unsigned int i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& attribute = config->attrs[i];
    switch (attribute.id) {
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        programmatic |=
            attribute.value.programmaticStreamSerializationAllowed != 0;
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
        const CUresult checked = CheckCluster(*config, f, attribute);
        if (checked != CUDA_SUCCESS) return checked;
        cluster = &attribute;
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        cooperative |= attribute.value.cooperative != 0;
        break;
      default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  if (cooperative) {
    const uint64_t blocks =
        uint64_t{config->gridDimX} * config->gridDimY * config->gridDimZ;
    const int per_sm =
        BlocksPerSm(config->blockDimX * config->blockDimY * config->blockDimZ,
                    config->sharedMemBytes);
    if (blocks > uint64_t(kSmCount) * per_sm) {
      return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    }
  }
  const CUresult launched = cuLaunchKernel(
      function, config->gridDimX, config->gridDimY, config->gridDimZ,
      config->blockDimX, config->blockDimY, config->blockDimZ,
      config->sharedMemBytes, config->hStream, args, extra);
  if (launched != CUDA_SUCCESS) return launched;
  std::lock_guard<std::mutex> lock(mu);
  programmatic_launches += programmatic ? 1 : 0;
  cooperative_launches += cooperative ? 1 : 0;
  if (cluster != nullptr) {
    ++cluster_launches;
    last_cluster[0] = cluster->value.clusterDim.x;
    last_cluster[1] = cluster->value.clusterDim.y;
    last_cluster[2] = cluster->value.clusterDim.z;
  }
  return CUDA_SUCCESS;
}

// Test hooks: how many launches (or graph captures of a launch) asked for
// programmatic stream serialization, a cluster, a cooperative launch; the
// cluster shape of the latest clustered launch.
int kiln_fake_programmatic_launches() { return programmatic_launches; }
int kiln_fake_cluster_launches() { return cluster_launches; }
int kiln_fake_cooperative_launches() { return cooperative_launches; }
void kiln_fake_last_cluster(unsigned int* x, unsigned int* y, unsigned int* z) {
  *x = last_cluster[0];
  *y = last_cluster[1];
  *z = last_cluster[2];
}

CUresult cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode) {
  auto* s = reinterpret_cast<FakeStream*>(stream);
  if (s == nullptr || s->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  s->capturing = true;
  s->captured.clear();
  return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  auto* s = reinterpret_cast<FakeStream*>(stream);
  if (s == nullptr || !s->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  s->capturing = false;
  for (FakeStream* joined : s->joined) joined->capture_origin = nullptr;
  s->joined.clear();
  *graph = reinterpret_cast<CUgraph>(new FakeGraph{std::move(s->captured)});
  s->captured.clear();
  return CUDA_SUCCESS;
}
CUresult cuGraphInstantiate(CUgraphExec* exec, CUgraph graph,
                            unsigned long long) {
  *exec = reinterpret_cast<CUgraphExec>(
      new FakeGraph(*reinterpret_cast<FakeGraph*>(graph)));
  return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  auto ops = reinterpret_cast<FakeGraph*>(exec)->ops;
  return Enqueue(stream, [ops] {
    // A fault ends the graph's work there, as it would on the device.
    for (const auto& op : ops) {
      if (sticky_fault != CUDA_SUCCESS) return;
      op();
    }
  });
}
CUresult cuGraphExecDestroy(CUgraphExec exec) {
  delete reinterpret_cast<FakeGraph*>(exec);
  return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<FakeGraph*>(graph);
  return CUDA_SUCCESS;
}

// Tensor maps: checked as the driver checks the basics (a 16-byte aligned
// address, rank, 16-byte strides) and encoded as the address and the
// dimensions, which no fake kernel reads.
CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType,
                                cuuint32_t rank, void* address,
                                const cuuint64_t* dims,
                                const cuuint64_t* strides, const cuuint32_t*,
                                const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion,
                                CUtensorMapFloatOOBfill) {
  if (map == nullptr || rank < 1 || rank > 5 ||
      reinterpret_cast<uintptr_t>(address) % 16 != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (cuuint32_t d = 0; d + 1 < rank; ++d) {
    if (strides[d] % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  }
  std::memset(map, 0, sizeof(*map));
  uint64_t words[16] = {reinterpret_cast<uintptr_t>(address)};
  std::copy(dims, dims + rank, words + 1);
  std::memcpy(map, words, sizeof(words));
  return CUDA_SUCCESS;
}
CUresult cuTensorMapEncodeIm2col(
    CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
    const cuuint64_t* dims, const cuuint64_t* strides, const int*, const int*,
    cuuint32_t, cuuint32_t, const cuuint32_t* element_strides,
    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion promotion, CUtensorMapFloatOOBfill fill) {
  if (rank < 3) return CUDA_ERROR_INVALID_VALUE;
  return cuTensorMapEncodeTiled(map, type, rank, address, dims, strides,
                                nullptr, element_strides, interleave, swizzle,
                                promotion, fill);
}

}  // extern "C"
