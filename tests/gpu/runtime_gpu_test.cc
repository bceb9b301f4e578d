// GPU tests of the runtime: driver, device, modules (PTX and cubin), kernel
// launches, the pool over cuMemAlloc, copies, events, graphs and tensor
// views over device memory. Without a CUDA driver every test skips.
//
// Kernels come from kernels.cu, compiled at build time. They are looked up
// in $KILN_GPU_TEST_DATA, then tests/gpu/ (Bazel runfiles), then the
// directory of the binary (the bundle).
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kiln/dtype.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/graph.h"
#include "runtime/cuda/module.h"
#include "runtime/cuda/stream.h"
#include "runtime/memory/cuda_allocator.h"
#include "runtime/memory/pool.h"

namespace kiln {
namespace {

#define ASSERT_OK(expr)                                       \
  do {                                                        \
    const absl::Status assert_ok_status_ = (expr);            \
    ASSERT_TRUE(assert_ok_status_.ok()) << assert_ok_status_; \
  } while (false)

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                   \
  auto KILN_STATUS_CONCAT_(assign_, __LINE__) = (rexpr);   \
  ASSERT_TRUE(KILN_STATUS_CONCAT_(assign_, __LINE__).ok()) \
      << KILN_STATUS_CONCAT_(assign_, __LINE__).status();  \
  lhs = std::move(KILN_STATUS_CONCAT_(assign_, __LINE__)).value()

// Mirrors StridedView in kernels.cu (passed to gather_f32 by value).
struct StridedView {
  long long shape[4];
  long long strides[4];
  long long offset;
  int rank;
};

absl::StatusOr<std::string> ReadDataFile(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("KILN_GPU_TEST_DATA")) dirs.push_back(env);
  dirs.push_back("tests/gpu");
  char exe[4096] = {};
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len > 0) {
    std::string path(exe, len);
    dirs.push_back(path.substr(0, path.rfind('/')));
  }
  for (const std::string& dir : dirs) {
    std::ifstream file(dir + "/" + name, std::ios::binary);
    if (!file) continue;
    std::stringstream contents;
    contents << file.rdbuf();
    return contents.str();
  }
  return absl::NotFoundError(absl::StrCat(
      "test data file ", name, " not found (set KILN_GPU_TEST_DATA)"));
}

// Shared across tests: opening a device and loading a module are slow.
struct GpuState {
  std::unique_ptr<Device> device;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<CudaModule> module;
  std::shared_ptr<DevicePool> pool;
  std::string ptx;
  std::string cubin;
  Kernel fill, saxpy, reduce, gather;
};

class GpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!CudaDriver::Available()) return;
    state_ = new GpuState();
    setup_status_ = SetUpState(*state_);
  }
  static void TearDownTestSuite() {
    if (state_ == nullptr) return;
    // Everything that uses the device goes before the device.
    if (state_->stream) (void)state_->stream->Synchronize();
    state_->module.reset();
    state_->pool.reset();
    state_->stream.reset();
    delete state_;
    state_ = nullptr;
  }

  static absl::Status SetUpState(GpuState& s) {
    KILN_ASSIGN_OR_RETURN(s.device, Device::Open(0));
    KILN_ASSIGN_OR_RETURN(s.stream, Stream::Create(*s.device));
    KILN_ASSIGN_OR_RETURN(s.ptx, ReadDataFile("kernels.ptx"));
    KILN_ASSIGN_OR_RETURN(s.cubin, ReadDataFile("kernels_sm90.cubin"));
    ModuleImages images;
    images.ptx = s.ptx;
    images.cubins.push_back({90, s.cubin});
    KILN_ASSIGN_OR_RETURN(s.module, CudaModule::Load(*s.device, images));
    KILN_ASSIGN_OR_RETURN(s.fill, s.module->GetKernel("fill_f32"));
    KILN_ASSIGN_OR_RETURN(s.saxpy, s.module->GetKernel("saxpy"));
    KILN_ASSIGN_OR_RETURN(s.reduce, s.module->GetKernel("reduce_sum_f32"));
    KILN_ASSIGN_OR_RETURN(s.gather, s.module->GetKernel("gather_f32"));
    s.pool = NewCudaDevicePool(s.device.get());
    return absl::OkStatus();
  }

  void SetUp() override {
    if (!CudaDriver::Available()) {
      GTEST_SKIP() << "no CUDA driver: GPU test skipped ("
                   << CudaDriver::Get().status().message() << ")";
    }
    ASSERT_TRUE(setup_status_.ok()) << setup_status_;
    ASSERT_OK(state_->device->MakeCurrent());
  }

  GpuState& gpu() { return *state_; }
  const Device& device() { return *state_->device; }
  const Stream& stream() { return *state_->stream; }
  DevicePool& pool() { return *state_->pool; }
  StreamId sid() { return StreamIdOf(*state_->stream); }

  static LaunchConfig Config1D(int n, int block = 256) {
    LaunchConfig config;
    config.block.x = block;
    config.grid.x = std::min(1024, (n + block - 1) / block);
    return config;
  }

  absl::StatusOr<std::vector<float>> Download(DevicePtr src, size_t count) {
    std::vector<float> host(count);
    KILN_RETURN_IF_ERROR(
        stream().CopyToHost(host.data(), src, count * sizeof(float)));
    KILN_RETURN_IF_ERROR(stream().Synchronize());
    return host;
  }

  static GpuState* state_;
  static absl::Status setup_status_;
};

GpuState* GpuTest::state_ = nullptr;
absl::Status GpuTest::setup_status_;

TEST_F(GpuTest, DriverInitialises) {
  ASSERT_OK_AND_ASSIGN(const CudaDriver* driver, CudaDriver::Get());
  EXPECT_GE(driver->version(), 12000);
  ASSERT_OK_AND_ASSIGN(int count, Device::Count());
  EXPECT_GE(count, 1);
  auto bad = Device::Open(count + 3);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  // Errors name the call and the CUresult.
  absl::Status status = driver->Check(CUDA_ERROR_INVALID_VALUE, "cuTest");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("cuTest failed: CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << status;
}

TEST_F(GpuTest, DeviceProperties) {
  const Device& d = device();
  std::cout << "device 0: " << d.name() << ", sm_"
            << d.compute_capability().sm() << ", " << d.sm_count() << " SMs, "
            << (d.total_memory() >> 20) << " MiB, "
            << d.max_shared_memory_per_block_optin()
            << " B shared/block opt-in\n";
  EXPECT_FALSE(d.name().empty());
  EXPECT_GE(d.compute_capability().major, 7);
  EXPECT_GT(d.sm_count(), 0);
  EXPECT_GT(d.total_memory(), size_t{1} << 30);
  ASSERT_OK_AND_ASSIGN(MemoryInfo info, d.GetMemoryInfo());
  EXPECT_GT(info.free_bytes, 0u);
  EXPECT_LE(info.free_bytes, info.total_bytes);
}

TEST_F(GpuTest, ModuleFromPtx) {
  ASSERT_OK_AND_ASSIGN(
      auto module, CudaModule::LoadImage(device(), gpu().ptx, /*is_ptx=*/true));
  EXPECT_FALSE(module->loaded_cubin());
  ASSERT_OK_AND_ASSIGN(Kernel fill, module->GetKernel("fill_f32"));
  EXPECT_EQ(fill.name(), "fill_f32");
  auto missing = module->GetKernel("no_such_kernel");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound)
      << missing.status();

  // A launch of the JIT-compiled kernel works.
  ASSERT_OK_AND_ASSIGN(DeviceBuffer out, pool().Allocate(1000 * 4, sid()));
  ASSERT_OK(fill.LaunchWith(stream(), Config1D(1000), out.data(), 4.5f,
                            int32_t{1000}));
  ASSERT_OK_AND_ASSIGN(std::vector<float> host, Download(out.data(), 1000));
  for (float v : host) ASSERT_EQ(v, 4.5f);
}

TEST_F(GpuTest, BrokenPtxReportsJitLog) {
  const std::string bad =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry broken()\n{\n  not_an_instruction %r1;\n}\n";
  auto module = CudaModule::LoadImage(device(), bad, /*is_ptx=*/true);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("cuModuleLoadDataEx failed"),
            std::string::npos)
      << module.status();
  EXPECT_NE(module.status().message().find("JIT log"), std::string::npos)
      << module.status();
}

TEST_F(GpuTest, ModuleFromCubin) {
  ModuleImages images;
  images.ptx = gpu().ptx;
  images.cubins.push_back({90, gpu().cubin});
  ASSERT_OK_AND_ASSIGN(auto module, CudaModule::Load(device(), images));
  // The cubin is used exactly when the device is sm_90 (H100/H200).
  EXPECT_EQ(module->loaded_cubin(), device().compute_capability().sm() == 90);
  ASSERT_OK(module->GetKernel("saxpy").status());

  ModuleImages wrong_arch;
  wrong_arch.cubins.push_back({10, "not a cubin"});
  auto none = CudaModule::Load(device(), wrong_arch);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("cubins only for [sm_10]"),
            std::string::npos)
      << none.status();
  if (device().compute_capability().sm() == 90) {
    ASSERT_OK_AND_ASSIGN(auto direct,
                         CudaModule::LoadImage(device(), gpu().cubin, false));
    EXPECT_TRUE(direct->loaded_cubin());
  }
}

TEST_F(GpuTest, FillAndSaxpy) {
  const int n = (1 << 20) + 3;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer x, pool().Allocate(n * 4, sid()));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer y, pool().Allocate(n * 4, sid()));
  ASSERT_OK(gpu().fill.LaunchWith(stream(), Config1D(n), x.data(), 2.0f, n));
  ASSERT_OK(gpu().fill.LaunchWith(stream(), Config1D(n), y.data(), 1.0f, n));
  // The same launch through run-time assembled arguments.
  KernelArgs args;
  args.Add(3.0f).Add(x.data()).Add(y.data()).Add(int32_t{n});
  ASSERT_OK(gpu().saxpy.Launch(stream(), Config1D(n), args));
  ASSERT_OK_AND_ASSIGN(std::vector<float> host, Download(y.data(), n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 7.0f) << i;
}

TEST_F(GpuTest, ReductionWithLargeDynamicSharedMemory) {
  const int n = 123457;
  std::vector<float> values(n);
  double expected = 0;
  for (int i = 0; i < n; ++i) {
    values[i] = static_cast<float>(i % 7 - 3);
    expected += values[i];
  }
  ASSERT_OK_AND_ASSIGN(DeviceBuffer x, pool().Allocate(n * 4, sid()));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer out, pool().Allocate(4, sid()));
  ASSERT_OK(stream().CopyToDevice(x.data(), values.data(), n * 4));
  ASSERT_OK(stream().Memset(out.data(), 0, 4));
  // 64 KiB of dynamic shared memory needs the opt-in attribute.
  const int block = 1024;
  const uint32_t shared = 64 * 1024;
  ASSERT_OK(gpu().reduce.SetMaxDynamicSharedMemory(shared));
  LaunchConfig config = Config1D(n, block);
  config.shared_memory_bytes = shared;
  ASSERT_OK(gpu().reduce.LaunchWith(stream(), config, x.data(), out.data(), n));
  ASSERT_OK_AND_ASSIGN(std::vector<float> sum, Download(out.data(), 1));
  EXPECT_EQ(sum[0], static_cast<float>(expected));

  // Too much shared memory fails with a clear error, not a crash.
  config.shared_memory_bytes = 4 << 20;
  absl::Status too_much =
      gpu().reduce.LaunchWith(stream(), config, x.data(), out.data(), n);
  EXPECT_FALSE(too_much.ok());
  EXPECT_NE(too_much.message().find("cuLaunchKernel failed"), std::string::npos)
      << too_much;
}

TEST_F(GpuTest, PoolOverCuMemAlloc) {
  // A fresh pool, so the statistics are this test's own.
  std::shared_ptr<DevicePool> p = NewCudaDevicePool(&device());
  ASSERT_OK_AND_ASSIGN(auto other, Stream::Create(device()));
  DevicePtr first;
  {
    ASSERT_OK_AND_ASSIGN(DeviceBuffer a, p->Allocate(3 << 20, sid()));
    first = a.data();
    EXPECT_EQ(first % 256, 0u);
    EXPECT_EQ(a.capacity(), DevicePool::RoundSize(3 << 20));
    ASSERT_OK(stream().Memset(a.data(), 0xab, a.size()));
  }
  // Same stream: reused at once, even with the memset still in flight.
  ASSERT_OK_AND_ASSIGN(DeviceBuffer b, p->Allocate(3 << 20, sid()));
  EXPECT_EQ(b.data(), first);
  std::vector<uint8_t> host(16);
  ASSERT_OK(stream().CopyToHost(host.data(), b.data(), host.size()));
  ASSERT_OK(stream().Synchronize());
  EXPECT_EQ(host[0], 0xab);
  b.reset();
  // Another stream: only after the fence recorded at free time completed.
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(DeviceBuffer c,
                       p->Allocate(3 << 20, StreamIdOf(*other)));
  EXPECT_EQ(c.data(), first);
  PoolStats stats = p->stats();
  EXPECT_EQ(stats.requests, 3);
  EXPECT_EQ(stats.hits, 2);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.bytes_in_use, DevicePool::RoundSize(3 << 20));
  c.reset();

  ASSERT_OK_AND_ASSIGN(size_t released, p->Trim());
  EXPECT_EQ(released, DevicePool::RoundSize(3 << 20));
  EXPECT_EQ(p->stats().bytes_reserved, 0u);

  // More than the device has: trim-and-retry, then ResourceExhausted.
  auto huge = p->Allocate(device().total_memory() * 2, sid());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted)
      << huge.status();
  EXPECT_NE(huge.status().message().find("CUDA_ERROR_OUT_OF_MEMORY"),
            std::string::npos)
      << huge.status();
  ASSERT_OK(other->Synchronize());
}

TEST_F(GpuTest, CopiesRoundTrip) {
  const size_t n = 1 << 16;
  std::vector<float> src(n);
  std::iota(src.begin(), src.end(), -100.0f);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer a, pool().Allocate(n * 4, sid()));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer b, pool().Allocate(n * 4, sid()));
  ASSERT_OK(stream().CopyToDevice(a.data(), src.data(), n * 4));
  ASSERT_OK(stream().CopyDeviceToDevice(b.data(), a.data(), n * 4));
  ASSERT_OK_AND_ASSIGN(std::vector<float> back, Download(b.data(), n));
  EXPECT_EQ(back, src);

  // Pinned host memory, asynchronous both ways.
  ASSERT_OK_AND_ASSIGN(auto pinned, PinnedHostBuffer::Create(device(), n * 4));
  ASSERT_OK(stream().Memset(a.data(), 0, n * 4));
  ASSERT_OK(stream().CopyToHost(pinned->data(), a.data(), n * 4));
  ASSERT_OK(stream().Synchronize());
  const float* zeros = static_cast<const float*>(pinned->data());
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(zeros[i], 0.0f);
  std::memcpy(pinned->data(), src.data(), n * 4);
  ASSERT_OK(stream().CopyToDevice(a.data(), pinned->data(), n * 4));
  ASSERT_OK_AND_ASSIGN(back, Download(a.data(), n));
  EXPECT_EQ(back, src);
}

TEST_F(GpuTest, EventTiming) {
  const int n = 1 << 24;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer x, pool().Allocate(size_t{n} * 4, sid()));
  ASSERT_OK_AND_ASSIGN(auto start, Event::Create(device()));
  ASSERT_OK_AND_ASSIGN(auto end, Event::Create(device()));
  ASSERT_OK(start->Record(stream()));
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(gpu().fill.LaunchWith(stream(), Config1D(n), x.data(),
                                    static_cast<float>(i), n));
  }
  ASSERT_OK(end->Record(stream()));
  ASSERT_OK(end->Synchronize());
  ASSERT_OK_AND_ASSIGN(bool done, end->IsComplete());
  EXPECT_TRUE(done);
  ASSERT_OK_AND_ASSIGN(float ms, Event::ElapsedMs(*start, *end));
  std::cout << "20 fills of 64 MiB: " << ms << " ms ("
            << 20.0 * n * 4 / (ms * 1e-3) / 1e9 << " GB/s)\n";
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 10000.0f);
  // A second stream waits on an event.
  ASSERT_OK_AND_ASSIGN(auto other, Stream::Create(device()));
  ASSERT_OK(other->Wait(*end));
  ASSERT_OK(other->Synchronize());
}

TEST_F(GpuTest, GraphCaptureAndReplay) {
  const int n = 10007;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer x, pool().Allocate(n * 4, sid()));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer y, pool().Allocate(n * 4, sid()));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer sum, pool().Allocate(4, sid()));
  ASSERT_OK(gpu().fill.LaunchWith(stream(), Config1D(n), x.data(), 0.5f, n));
  ASSERT_OK(gpu().fill.LaunchWith(stream(), Config1D(n), y.data(), 0.0f, n));
  ASSERT_OK(stream().Synchronize());

  // One step: y += 2 * x; sum = reduce(y). Nothing runs during capture.
  const LaunchConfig reduce_config = [&] {
    LaunchConfig c = Config1D(n, 256);
    c.shared_memory_bytes = 256 * 4;
    return c;
  }();
  ASSERT_OK_AND_ASSIGN(
      auto graph, Graph::Capture(stream(), [&]() -> absl::Status {
        KILN_RETURN_IF_ERROR(gpu().saxpy.LaunchWith(stream(), Config1D(n), 2.0f,
                                                    x.data(), y.data(), n));
        KILN_RETURN_IF_ERROR(stream().Memset(sum.data(), 0, 4));
        return gpu().reduce.LaunchWith(stream(), reduce_config, y.data(),
                                       sum.data(), n);
      }));
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<float> untouched, Download(y.data(), n));
  EXPECT_EQ(untouched[0], 0.0f);

  const int kReplays = 25;
  for (int i = 0; i < kReplays; ++i) ASSERT_OK(graph->Launch(stream()));
  ASSERT_OK_AND_ASSIGN(std::vector<float> host, Download(y.data(), n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 25.0f) << i;
  ASSERT_OK_AND_ASSIGN(std::vector<float> total, Download(sum.data(), 1));
  EXPECT_EQ(total[0], 25.0f * n);

  // A failing recording ends the capture and leaves the stream usable.
  auto failed = Graph::Capture(
      stream(), [] { return absl::InternalError("recording failed"); });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
  ASSERT_OK(gpu().fill.LaunchWith(stream(), Config1D(n), y.data(), 1.0f, n));
  ASSERT_OK(stream().Synchronize());
}

// Clustered and cooperative launches run like any other, directly and in a
// graph; what the device cannot run is refused with the kernel's name.
TEST_F(GpuTest, ClusteredAndCooperativeLaunches) {
  if (!device().supports_clusters()) {
    GTEST_SKIP() << device().name() << " has no thread-block clusters";
  }
  // A module of its own: the non-portable opt-in below stays with it.
  ModuleImages images;
  images.ptx = gpu().ptx;
  images.cubins.push_back({90, gpu().cubin});
  ASSERT_OK_AND_ASSIGN(auto module, CudaModule::Load(device(), images));
  ASSERT_OK_AND_ASSIGN(Kernel fill, module->GetKernel("fill_f32"));
  ASSERT_OK_AND_ASSIGN(Kernel saxpy, module->GetKernel("saxpy"));
  const int n = 4096;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer x, pool().Allocate(n * 4, sid()));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer y, pool().Allocate(n * 4, sid()));

  LaunchConfig clustered;
  clustered.grid = {8, 2, 1};
  clustered.block = {128, 1, 1};
  clustered.cluster = {2, 2, 1};
  LaunchConfig cooperative;
  cooperative.grid = {4, 1, 1};
  cooperative.block = {256, 1, 1};
  cooperative.cooperative = true;
  ASSERT_OK(fill.CheckLaunchable(clustered));
  ASSERT_OK(fill.CheckLaunchable(cooperative));
  ASSERT_OK(fill.LaunchWith(stream(), clustered, x.data(), 0.5f, n));
  ASSERT_OK(fill.LaunchWith(stream(), cooperative, y.data(), 1.0f, n));
  // Combined with programmatic serialization, and captured into a graph.
  LaunchConfig both = clustered;
  both.programmatic_serialization = true;
  ASSERT_OK_AND_ASSIGN(
      auto graph, Graph::Capture(stream(), [&]() -> absl::Status {
        KILN_RETURN_IF_ERROR(
            saxpy.LaunchWith(stream(), both, 2.0f, x.data(), y.data(), n));
        return saxpy.LaunchWith(stream(), cooperative, 1.0f, x.data(),
                                y.data(), n);
      }));
  ASSERT_OK(graph->Launch(stream()));
  ASSERT_OK(graph->Launch(stream()));
  ASSERT_OK_AND_ASSIGN(std::vector<float> host, Download(y.data(), n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 1.0f + 2 * 1.5f) << i;

  // More than 8 blocks only after the kernel opts in.
  LaunchConfig wide;
  wide.grid = {32, 1, 1};
  wide.block = {128, 1, 1};
  wide.cluster = {16, 1, 1};
  absl::Status refused = fill.LaunchWith(stream(), wide, x.data(), 2.0f, n);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("kernel fill_f32"), std::string::npos)
      << refused;
  EXPECT_NE(refused.message().find("cluster (16,1,1)"), std::string::npos)
      << refused;
  ASSERT_OK(fill.AllowNonPortableClusterSize());
  ASSERT_OK(fill.CheckLaunchable(wide));
  ASSERT_OK(fill.LaunchWith(stream(), wide, x.data(), 2.0f, n));
  ASSERT_OK_AND_ASSIGN(host, Download(x.data(), n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 2.0f) << i;

  // A cooperative grid larger than the device holds at once.
  LaunchConfig huge = cooperative;
  huge.grid = {1 << 20, 1, 1};
  absl::Status too_large = fill.CheckLaunchable(huge);
  EXPECT_EQ(too_large.code(), absl::StatusCode::kResourceExhausted)
      << too_large;
  EXPECT_NE(too_large.message().find("kernel fill_f32 is launched "
                                     "cooperatively with grid (1048576,1,1)"),
            std::string::npos)
      << too_large;
  absl::Status launched = fill.LaunchWith(stream(), huge, x.data(), 0.0f, n);
  EXPECT_EQ(launched.code(), absl::StatusCode::kResourceExhausted) << launched;
  EXPECT_NE(launched.message().find("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
            std::string::npos)
      << launched;
  EXPECT_NE(launched.message().find("kernel fill_f32"), std::string::npos)
      << launched;
  ASSERT_OK(stream().Synchronize());
}

// On the stand-in driver posing as an sm_80 device: clusters are refused by
// name before the driver sees them.
TEST_F(GpuTest, ClustersNeedComputeCapability90) {
  if (std::getenv("KILN_LIBCUDA_PATH") == nullptr) {
    GTEST_SKIP() << "needs the stand-in driver to pose as an older device";
  }
  setenv("KILN_FAKE_CUDA_SM", "80", 1);
  auto older = Device::Open(0);
  unsetenv("KILN_FAKE_CUDA_SM");
  ASSERT_OK(older.status());
  ASSERT_EQ((*older)->compute_capability().sm(), 80);
  EXPECT_FALSE((*older)->supports_clusters());
  ModuleImages images;
  images.ptx = gpu().ptx;
  ASSERT_OK_AND_ASSIGN(auto module, CudaModule::Load(**older, images));
  ASSERT_OK_AND_ASSIGN(Kernel fill, module->GetKernel("fill_f32"));
  LaunchConfig clustered;
  clustered.grid = {2, 1, 1};
  clustered.block = {32, 1, 1};
  clustered.cluster = {2, 1, 1};
  for (const absl::Status& status :
       {fill.CheckLaunchable(clustered),
        fill.LaunchWith(stream(), clustered, CUdeviceptr{0}, 0.0f, 0)}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_EQ(status.message(),
              "kernel fill_f32 is launched in clusters of (2,1,1) blocks, but "
              "Fake CPU H200 (compute capability 8.0) has no thread-block "
              "clusters (9.0 and newer)");
  }
  ASSERT_OK(device().MakeCurrent());
}

TEST_F(GpuTest, TensorViewsOverDeviceMemory) {
  // A [4, 6, 5] f32 tensor holding 0..119.
  ASSERT_OK_AND_ASSIGN(Tensor t,
                       Tensor::Allocate(pool(), DType::kF32, {4, 6, 5}, sid()));
  std::vector<float> iota(t.num_elements());
  std::iota(iota.begin(), iota.end(), 0.0f);
  ASSERT_OK(stream().CopyToDevice(t.data(), iota.data(), t.size_bytes()));

  ASSERT_OK_AND_ASSIGN(Tensor v, t.Transpose({2, 0, 1}));  // [5, 4, 6]
  ASSERT_OK_AND_ASSIGN(v, v.Slice(2, 1, 6, 2));            // [5, 4, 3]
  ASSERT_OK_AND_ASSIGN(v, v.Slice(0, 1, 4));               // [3, 4, 3]
  ASSERT_OK_AND_ASSIGN(Tensor b, t.Slice(0, 2, 3));        // [1, 6, 5]
  ASSERT_OK_AND_ASSIGN(b, b.Broadcast({2, 3, 6, 5}));      // stride-0 dims

  for (const Tensor* view : {&v, &b}) {
    SCOPED_TRACE(view->DebugString());
    const int64_t count = view->num_elements();
    // On the device: the gather kernel reads the view by its strides.
    StridedView desc = {};
    desc.rank = view->rank();
    for (int d = 0; d < view->rank(); ++d) {
      desc.shape[d] = view->dim(d);
      desc.strides[d] = view->strides()[d];
    }
    desc.offset = view->offset();
    ASSERT_OK_AND_ASSIGN(DeviceBuffer out, pool().Allocate(count * 4, sid()));
    ASSERT_OK(gpu().gather.LaunchWith(stream(), Config1D(count),
                                      view->buffer().data(), out.data(), desc,
                                      static_cast<long long>(count)));
    ASSERT_OK_AND_ASSIGN(std::vector<float> gathered,
                         Download(out.data(), count));
    // On the host: download the whole buffer and stride through it.
    ASSERT_OK_AND_ASSIGN(std::vector<float> whole,
                         Download(view->buffer().data(), iota.size()));
    std::vector<int64_t> offsets = view->ElementOffsets();
    ASSERT_EQ(static_cast<int64_t>(offsets.size()), count);
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(gathered[i], whole[offsets[i]]) << i;
      ASSERT_EQ(gathered[i], static_cast<float>(offsets[i])) << i;
    }
  }
  // Spot checks against index arithmetic: v[i, j, k] = t[j, 2k+1, i+1].
  ASSERT_EQ(v.ElementOffsets()[0], 0 * 30 + 1 * 5 + 1);

  // bf16 data survives the round trip bit-exactly.
  ASSERT_OK_AND_ASSIGN(Tensor h,
                       Tensor::Allocate(pool(), DType::kBF16, {3, 7}, sid()));
  std::vector<uint16_t> bits(21);
  for (int i = 0; i < 21; ++i) bits[i] = F32ToBf16(0.1f * i - 1.0f);
  ASSERT_OK(stream().CopyToDevice(h.data(), bits.data(), h.size_bytes()));
  std::vector<uint16_t> back(21);
  ASSERT_OK(stream().CopyToHost(back.data(), h.data(), h.size_bytes()));
  ASSERT_OK(stream().Synchronize());
  EXPECT_EQ(back, bits);
  EXPECT_NEAR(Bf16ToF32(back[20]), 1.0f, 1e-2);
}

}  // namespace
}  // namespace kiln
