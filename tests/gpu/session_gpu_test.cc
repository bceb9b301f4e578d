// GPU tests of the host API (kiln/runtime.h) with small linear-regression
// artifacts built from hand-written kernels (linreg_artifact.h). Without a
// CUDA driver every test skips; in CI they also run against the CPU stand-in
// driver.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/batch_loader.h"
#include "kiln/dataset.h"
#include "kiln/dtype.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime/artifact/artifact_writer.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver.h"
#include "runtime/io/safetensors.h"
#include "runtime/memory/pool.h"
#include "runtime/random/initializers.h"
#include "runtime/random/philox.h"
#include "tests/gpu/linreg_artifact.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using testing::LinRegData;
using testing::LinRegOptimizer;
using testing::LinRegOptions;

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

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

std::vector<float> Floats(const HostTensor& t) {
  std::vector<float> out(t.data.size() / 4);
  std::memcpy(out.data(), t.data.data(), t.data.size());
  return out;
}

// A counter of the CPU stand-in driver (kiln_fake_<name>); -1 with a real
// driver (which has no such counter).
int FakeDriverCounter(const char* name) {
  const char* path = std::getenv("KILN_LIBCUDA_PATH");
  if (path == nullptr || *path == '\0') return -1;
  void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  using Counter = int (*)();
  auto counter = reinterpret_cast<Counter>(
      dlsym(handle, absl::StrCat("kiln_fake_", name).c_str()));
  const int count = counter != nullptr ? counter() : -1;
  dlclose(handle);
  return count;
}

// Launches with programmatic stream serialization.
int FakeDriverProgrammaticLaunches() {
  return FakeDriverCounter("programmatic_launches");
}

class SessionGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!CudaDriver::Available()) return;
    auto rt = Runtime::Open(0);
    if (rt.ok()) runtime_ = std::move(*rt).release();
  }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }

  void SetUp() override {
    if (!CudaDriver::Available()) {
      GTEST_SKIP() << "no CUDA driver: GPU test skipped ("
                   << CudaDriver::Get().status().message() << ")";
    }
    ASSERT_NE(runtime_, nullptr) << Runtime::Open(0).status();
  }

  Runtime& rt() { return *runtime_; }

  std::unique_ptr<Module> LoadLinReg(const LinRegOptions& options = {}) {
    auto bytes = testing::LinRegArtifactBytes(options);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    if (!bytes.ok()) return nullptr;
    auto module = rt().LoadFromMemory(*bytes);
    EXPECT_TRUE(module.ok()) << module.status();
    return module.ok() ? std::move(*module) : nullptr;
  }

  // Batch `i` of `data` as inputs x, y.
  static Inputs Batch(const LinRegData& data, const LinRegOptions& o, int i) {
    const size_t nx = size_t(o.batch) * o.in, ny = size_t(o.batch) * o.out;
    std::vector<float> x(data.x.begin() + i * nx,
                         data.x.begin() + (i + 1) * nx);
    std::vector<float> y(data.y.begin() + i * ny,
                         data.y.begin() + (i + 1) * ny);
    return {{"x", Input::F32({o.batch, o.in}, x)},
            {"y", Input::F32({o.batch, o.out}, y)}};
  }

  std::vector<float> Download(const absl::StatusOr<Tensor>& t) {
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) return {};
    auto host = rt().Download(*t);
    EXPECT_TRUE(host.ok()) << host.status();
    return host.ok() ? Floats(*host) : std::vector<float>{};
  }

  static Runtime* runtime_;
};

Runtime* SessionGpuTest::runtime_ = nullptr;

TEST_F(SessionGpuTest, LoadsCubinOrPtxAndRejectsBadFiles) {
  auto with_cubin = LoadLinReg();
  ASSERT_NE(with_cubin, nullptr);
  EXPECT_EQ(with_cubin->loaded_cubins(),
            rt().device().compute_capability().sm() == 90);
  LinRegOptions ptx_only;
  ptx_only.cubin = false;
  auto ptx = LoadLinReg(ptx_only);
  ASSERT_NE(ptx, nullptr);
  EXPECT_FALSE(ptx->loaded_cubins());
  EXPECT_TRUE(ptx->HasEntry("train_step"));

  auto bad = rt().LoadFromMemory("not an artifact");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  auto missing = rt().Load(TempPath("missing.kiln"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  // Only an inference entry: no trainer.
  LinRegOptions inference;
  inference.inference_only = true;
  auto predict = LoadLinReg(inference);
  ASSERT_NE(predict, nullptr);
  EXPECT_EQ(predict->NewTrainer().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(SessionGpuTest, ParametersStartFromTheInitialisers) {
  LinRegOptions o;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto trainer, module->NewTrainer({.seed = 7}));
  const std::vector<double> w =
      InitialValues(InitKind::kXavier, 1.0, 0.0, {o.in, o.out}, 7, 0);
  const std::vector<double> b =
      InitialValues(InitKind::kUniform, -0.1f, 0.1f, {o.out}, 7, 1);
  std::vector<float> got_w = Download(trainer->Parameter("w"));
  std::vector<float> got_b = Download(trainer->Parameter("b"));
  ASSERT_EQ(got_w.size(), w.size());
  ASSERT_EQ(got_b.size(), b.size());
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(got_w[i], static_cast<float>(w[i])) << i;
  }
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(got_b[i], static_cast<float>(b[i])) << i;
  }
  for (float v : Download(trainer->Buffer("adam_m.w"))) EXPECT_EQ(v, 0.0f);
  for (float v : Download(trainer->Buffer("adam_v.b"))) EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(trainer->step(), 0);
  EXPECT_EQ(trainer->parameter_names(), (std::vector<std::string>{"w", "b"}));
  EXPECT_EQ(trainer->gradient_names(),
            (std::vector<std::string>{"grad.w", "grad.b"}));
  EXPECT_EQ(trainer->Parameter("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(SessionGpuTest, StepReducesTheLoss) {
  for (LinRegOptimizer opt : {LinRegOptimizer::kAdam, LinRegOptimizer::kSgd}) {
    LinRegOptions o;
    o.optimizer = opt;
    auto module = LoadLinReg(o);
    ASSERT_NE(module, nullptr);
    ASSERT_OK_AND_ASSIGN(auto trainer, module->NewTrainer({.seed = 1}));
    const LinRegData data =
        testing::MakeLinRegData(o.batch * 8, o.in, o.out, 3);
    const float lr = opt == LinRegOptimizer::kAdam ? 0.05f : 0.1f;
    float first = 0, last = 0;
    for (int i = 0; i < 300; ++i) {
      ASSERT_OK_AND_ASSIGN(float loss,
                           trainer->Step(Batch(data, o, i % 8), lr));
      ASSERT_TRUE(std::isfinite(loss));
      if (i == 0) first = loss;
      last = loss;
    }
    EXPECT_EQ(trainer->step(), 300);
    EXPECT_LT(last, first * 0.01f) << "optimizer " << static_cast<int>(opt)
                                   << ": first " << first << " last " << last;
  }
}

TEST_F(SessionGpuTest, MemoryLimitNamesTheEntryAndTheTrainerStaysUsable) {
  LinRegOptions o;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto trainer, module->NewTrainer({.seed = 1}));
  const LinRegData data = testing::MakeLinRegData(o.batch * 8, o.in, o.out, 3);
  const std::vector<float> w = Download(trainer->Parameter("w"));
  // Room for what the trainer holds now, not for the step's arena (with
  // nothing cached, where earlier tests' blocks would serve it).
  ASSERT_TRUE(rt().pool().Trim().ok());
  rt().pool().SetLimit(rt().pool().stats().bytes_in_use + 1);
  absl::StatusOr<float> refused = trainer->Step(Batch(data, o, 0), 0.1f);
  rt().pool().SetLimit(0);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("entry 'train_step'"),
            std::string::npos)
      << refused.status();
  EXPECT_NE(refused.status().message().find("the pool's limit"),
            std::string::npos)
      << refused.status();
  // Nothing was applied, and without the limit the same trainer trains.
  EXPECT_EQ(Download(trainer->Parameter("w")), w);
  EXPECT_EQ(trainer->step(), 0);
  ASSERT_OK_AND_ASSIGN(float loss, trainer->Step(Batch(data, o, 0), 0.1f));
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(trainer->step(), 1);
  EXPECT_NE(Download(trainer->Parameter("w")), w);
}

TEST_F(SessionGpuTest, SplitEntriesEqualTrainStep) {
  LinRegOptions o;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto fused, module->NewTrainer({.seed = 5}));
  ASSERT_OK_AND_ASSIGN(auto split, module->NewTrainer({.seed = 5}));
  const LinRegData data = testing::MakeLinRegData(o.batch * 4, o.in, o.out, 9);
  for (int i = 0; i < 6; ++i) {
    const float lr = 0.01f * (i + 1);
    ASSERT_OK_AND_ASSIGN(float a, fused->Step(Batch(data, o, i % 4), lr));
    ASSERT_OK_AND_ASSIGN(float b,
                         split->ForwardBackward(Batch(data, o, i % 4)));
    ASSERT_OK(split->ApplyUpdate(lr));
    EXPECT_EQ(a, b) << "step " << i;
  }
  EXPECT_EQ(fused->step(), split->step());
  for (const char* name : {"w", "b", "adam_m.w", "adam_v.w", "adam_m.b"}) {
    EXPECT_EQ(Download(fused->Buffer(name)), Download(split->Buffer(name)))
        << name;
  }
  // Forward alone changes nothing and returns loss and pred.
  const std::vector<float> before = Download(fused->Parameter("w"));
  ASSERT_OK_AND_ASSIGN(Outputs out, fused->Forward(Batch(data, o, 0)));
  ASSERT_EQ(out.count("loss"), 1u);
  ASSERT_EQ(out.count("pred"), 1u);
  EXPECT_EQ(out.at("pred").shape(), (Shape{o.batch, o.out}));
  EXPECT_EQ(Download(fused->Parameter("w")), before);
}

// Host reference of the gradients of the MSE loss at the trainer's current
// parameters.
void ReferenceGradients(const LinRegOptions& o, const std::vector<float>& x,
                        const std::vector<float>& y,
                        const std::vector<float>& w,
                        const std::vector<float>& b, std::vector<double>* gw,
                        std::vector<double>* gb) {
  const int n = o.batch, in = o.in, out = o.out;
  gw->assign(in * out, 0.0);
  gb->assign(out, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < out; ++k) {
      double pred = b[k];
      for (int j = 0; j < in; ++j)
        pred += double(x[i * in + j]) * w[j * out + k];
      const double d = 2.0 * (pred - y[i * out + k]) / (n * out);
      (*gb)[k] += d;
      for (int j = 0; j < in; ++j) (*gw)[j * out + k] += x[i * in + j] * d;
    }
  }
}

TEST_F(SessionGpuTest, GradientsCanBeReadAndEditedBeforeTheUpdate) {
  LinRegOptions o;
  o.optimizer = LinRegOptimizer::kSgd;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto trainer, module->NewTrainer({.seed = 2}));
  const LinRegData data = testing::MakeLinRegData(o.batch, o.in, o.out, 4);
  const std::vector<float> w = Download(trainer->Parameter("w"));
  const std::vector<float> b = Download(trainer->Parameter("b"));
  ASSERT_OK_AND_ASSIGN(float loss, trainer->ForwardBackward(Batch(data, o, 0)));
  EXPECT_GT(loss, 0.0f);
  std::vector<double> gw, gb;
  ReferenceGradients(o, data.x, data.y, w, b, &gw, &gb);
  const std::vector<float> got_w = Download(trainer->Gradient("w"));
  const std::vector<float> got_b = Download(trainer->Gradient("grad.b"));
  ASSERT_EQ(got_w.size(), gw.size());
  for (size_t i = 0; i < gw.size(); ++i)
    EXPECT_NEAR(got_w[i], gw[i], 1e-4) << i;
  for (size_t i = 0; i < gb.size(); ++i)
    EXPECT_NEAR(got_b[i], gb[i], 1e-4) << i;

  // Zero the gradient of w, halve that of b: SGD then leaves w alone and
  // moves b by lr * g / 2.
  ASSERT_OK_AND_ASSIGN(Tensor grad_w, trainer->Gradient("w"));
  ASSERT_OK_AND_ASSIGN(Tensor grad_b, trainer->Gradient("b"));
  ASSERT_OK(rt().CopyInto(
      grad_w, HostTensor::F32(grad_w.shape(),
                              std::vector<float>(grad_w.num_elements(), 0))));
  std::vector<float> half(got_b);
  for (float& v : half) v *= 0.5f;
  ASSERT_OK(rt().CopyInto(grad_b, HostTensor::F32(grad_b.shape(), half)));
  ASSERT_OK(trainer->ApplyUpdate(0.5f));
  EXPECT_EQ(trainer->step(), 1);
  EXPECT_EQ(Download(trainer->Parameter("w")), w);
  const std::vector<float> new_b = Download(trainer->Parameter("b"));
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(new_b[i], b[i] - 0.5f * half[i]) << i;
  }
  EXPECT_EQ(trainer->Gradient("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(SessionGpuTest, GradientTools) {
  LinRegOptions o;
  o.in = 37;
  o.out = 29;  // more elements than one block of threads
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto trainer, module->NewTrainer({.seed = 3}));
  const LinRegData data = testing::MakeLinRegData(o.batch, o.in, o.out, 5);
  ASSERT_OK(trainer->ForwardBackward(Batch(data, o, 0)).status());
  auto grads = [&] {
    std::vector<float> all = Download(trainer->Gradient("w"));
    std::vector<float> gb = Download(trainer->Gradient("b"));
    all.insert(all.end(), gb.begin(), gb.end());
    return all;
  };
  auto norm_of = [](const std::vector<float>& g) {
    double s = 0;
    for (float v : g) s += double(v) * v;
    return std::sqrt(s);
  };
  const std::vector<float> g0 = grads();
  float max0 = 0;
  for (float v : g0) max0 = std::max(max0, std::fabs(v));

  ASSERT_OK_AND_ASSIGN(GradientStats stats, trainer->GradStats());
  EXPECT_NEAR(stats.global_norm, norm_of(g0), 1e-9 * norm_of(g0) + 1e-12);
  EXPECT_EQ(stats.max_abs, max0);
  EXPECT_EQ(stats.nonfinite_count, 0);

  ASSERT_OK(trainer->ScaleGrads(2.0f));
  std::vector<float> g1 = grads();
  for (size_t i = 0; i < g0.size(); ++i) ASSERT_EQ(g1[i], g0[i] * 2.0f) << i;

  const float bound = max0 * 0.5f;
  ASSERT_OK(trainer->ClipGradValue(bound));
  std::vector<float> g2 = grads();
  for (size_t i = 0; i < g0.size(); ++i) {
    ASSERT_EQ(g2[i], std::min(bound, std::max(-bound, g1[i]))) << i;
  }

  const double before = norm_of(g2);
  ASSERT_OK_AND_ASSIGN(double returned, trainer->ClipGradNorm(before * 0.25));
  EXPECT_NEAR(returned, before, 1e-6 * before);
  EXPECT_NEAR(norm_of(grads()), before * 0.25, 1e-4 * before);
  // Below the bound: unchanged.
  const std::vector<float> g3 = grads();
  ASSERT_OK(trainer->ClipGradNorm(before * 10).status());
  EXPECT_EQ(grads(), g3);

  // Noise: gradient i draws from Philox stream i at offset step().
  ASSERT_OK(trainer->AddGradNoise(0.125f, 99));
  const std::vector<float> g4 = grads();
  const size_t nw = size_t(o.in) * o.out;
  for (size_t i = 0; i < g4.size(); ++i) {
    const RandomStream r{99, i < nw ? 0u : 1u, 0};
    const float expected =
        g3[i] + static_cast<float>(0.125 * r.Normal(i < nw ? i : i - nw));
    ASSERT_NEAR(g4[i], expected, 1e-6f * (1 + std::fabs(expected))) << i;
  }

  // Non-finite values are counted.
  ASSERT_OK_AND_ASSIGN(Tensor grad_b, trainer->Gradient("b"));
  std::vector<float> bad(o.out, 1.0f);
  bad[0] = NAN;
  bad[1] = INFINITY;
  ASSERT_OK(rt().CopyInto(grad_b, HostTensor::F32(grad_b.shape(), bad)));
  ASSERT_OK_AND_ASSIGN(stats, trainer->GradStats());
  EXPECT_EQ(stats.nonfinite_count, 2);
  EXPECT_FALSE(std::isfinite(stats.global_norm));

  EXPECT_EQ(trainer->ClipGradNorm(-1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(trainer->ClipGradValue(-1).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SessionGpuTest, CheckpointRestoreContinuesBitIdentically) {
  LinRegOptions o;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  const LinRegData data = testing::MakeLinRegData(o.batch * 4, o.in, o.out, 6);
  ASSERT_OK_AND_ASSIGN(auto a, module->NewTrainer({.seed = 11}));
  for (int i = 0; i < 5; ++i)
    ASSERT_OK(a->Step(Batch(data, o, i % 4), 0.02f).status());
  const std::string path = TempPath("linreg_ckpt.safetensors");
  ASSERT_OK(a->Save(path));
  std::vector<float> losses_a;
  for (int i = 5; i < 10; ++i) {
    ASSERT_OK_AND_ASSIGN(float loss, a->Step(Batch(data, o, i % 4), 0.02f));
    losses_a.push_back(loss);
  }

  // A different seed: everything comes from the checkpoint.
  ASSERT_OK_AND_ASSIGN(auto b, module->NewTrainer({.seed = 12}));
  ASSERT_OK(b->Restore(path));
  EXPECT_EQ(b->step(), 5);
  std::vector<float> losses_b;
  for (int i = 5; i < 10; ++i) {
    ASSERT_OK_AND_ASSIGN(float loss, b->Step(Batch(data, o, i % 4), 0.02f));
    losses_b.push_back(loss);
  }
  EXPECT_EQ(losses_a, losses_b);
  EXPECT_EQ(b->step(), 10);
  for (const char* name :
       {"w", "b", "adam_m.w", "adam_v.w", "adam_m.b", "adam_v.b"}) {
    EXPECT_EQ(Download(a->Buffer(name)), Download(b->Buffer(name))) << name;
  }

  // The file: every parameter and state tensor by name, the step in the
  // metadata.
  ASSERT_OK_AND_ASSIGN(io::Safetensors st, io::ReadSafetensorsFile(path));
  EXPECT_EQ(st.metadata.at("step"), "5");
  EXPECT_EQ(st.tensors.size(), 6u);
  EXPECT_EQ(st.tensors.count("adam_v.w"), 1u);

  // A checkpoint that does not fit changes nothing.
  io::Safetensors wrong = st;
  wrong.tensors["w"] = HostTensor::F32({1}, {1.0f});
  ASSERT_OK(io::WriteSafetensorsFile(TempPath("wrong.safetensors"), wrong));
  const std::vector<float> w_before = Download(b->Parameter("w"));
  auto status = b->Restore(TempPath("wrong.safetensors"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("tensor 'w'"));
  EXPECT_EQ(Download(b->Parameter("w")), w_before);
  EXPECT_EQ(b->step(), 10);
  wrong = st;
  wrong.metadata.erase("step");
  ASSERT_OK(io::WriteSafetensorsFile(TempPath("nostep.safetensors"), wrong));
  EXPECT_EQ(b->Restore(TempPath("nostep.safetensors")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b->Restore(TempPath("absent.safetensors")).code(),
            absl::StatusCode::kNotFound);
}

// Batch `i` of `data` with the fault_input artifact's flag.
Inputs FaultBatch(const LinRegData& data, const LinRegOptions& o, int i,
                  int32_t fault) {
  HostTensor flag;
  flag.dtype = DType::kI32;
  flag.data.resize(4);
  std::memcpy(flag.data.data(), &fault, 4);
  const size_t nx = size_t(o.batch) * o.in, ny = size_t(o.batch) * o.out;
  return {{"x", Input::F32({o.batch, o.in},
                           std::vector<float>(data.x.begin() + i * nx,
                                              data.x.begin() + (i + 1) * nx))},
          {"y", Input::F32({o.batch, o.out},
                           std::vector<float>(data.y.begin() + i * ny,
                                              data.y.begin() + (i + 1) * ny))},
          {"inject_fault", Input(std::move(flag))}};
}

// The faulting half of KernelFaultRefusesStepsUntilRestored, in a process of
// its own (the fault loses the device context): 0 when every check holds,
// else 1 after printing the failed one.
int TrainFaultAndCheckRefusals(Module& module, const LinRegData& data,
                               const LinRegOptions& o,
                               const std::string& checkpoint,
                               const std::string& refused) {
  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "fault check failed: %s\n", what.c_str());
    return 1;
  };
  auto trainer = module.NewTrainer({.seed = 21});
  if (!trainer.ok()) return fail(std::string(trainer.status().message()));
  for (int i = 0; i < 3; ++i) {
    auto loss = (*trainer)->Step(FaultBatch(data, o, i % 4, 0), 0.02f);
    if (!loss.ok()) return fail(std::string(loss.status().message()));
  }
  if (absl::Status s = (*trainer)->Save(checkpoint); !s.ok())
    return fail(std::string(s.message()));
  // The fault: an error that names the entry.
  auto faulted = (*trainer)->Step(FaultBatch(data, o, 3, 1), 0.02f);
  if (faulted.ok()) return fail("the faulting step succeeded");
  const std::string message(faulted.status().message());
  if (message.find("train_step") == std::string::npos ||
      message.find("ILLEGAL_ADDRESS") == std::string::npos)
    return fail("fault message: " + message);
  // Refused: steps, the split entries, gradient tools and saving.
  auto again = (*trainer)->Step(FaultBatch(data, o, 0, 0), 0.02f);
  if (again.status().code() != absl::StatusCode::kFailedPrecondition ||
      std::string(again.status().message()).find("restore") ==
          std::string::npos)
    return fail("a step after the fault: " + again.status().ToString());
  if ((*trainer)->ScaleGrads(0.5f).code() !=
      absl::StatusCode::kFailedPrecondition)
    return fail("a gradient tool after the fault was not refused");
  if ((*trainer)->Save(refused).code() != absl::StatusCode::kFailedPrecondition)
    return fail("saving after the fault was not refused");
  if (std::FILE* f = std::fopen(refused.c_str(), "rb")) {
    std::fclose(f);
    return fail("a refused save wrote " + refused);
  }
  // The context is lost: restoring in this process fails and says why.
  absl::Status restored = (*trainer)->Restore(checkpoint);
  if (restored.ok() ||
      std::string(restored.message()).find("new process") == std::string::npos)
    return fail("restore after the fault: " + restored.ToString());
  if ((*trainer)->Step(FaultBatch(data, o, 0, 0), 0.02f).status().code() !=
      absl::StatusCode::kFailedPrecondition)
    return fail("a step after the failed restore was not refused");
  return 0;
}

// A kernel fault in the middle of train_step (an illegal address after w is
// updated and before b is) is an error naming the entry; the trainer then
// refuses further steps and saves until restored. A new process restores
// the checkpoint written before the fault and continues exactly as a run
// that never faulted.
TEST_F(SessionGpuTest, KernelFaultRefusesStepsUntilRestored) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  LinRegOptions o;
  o.fault_input = true;
  const LinRegData data = testing::MakeLinRegData(o.batch * 4, o.in, o.out, 8);
  const std::string checkpoint = TempPath("before_fault.safetensors");
  const std::string refused = TempPath("after_fault.safetensors");
  std::remove(refused.c_str());
  EXPECT_EXIT(
      {
        auto module = LoadLinReg(o);
        std::_Exit(module == nullptr
                       ? 2
                       : TrainFaultAndCheckRefusals(*module, data, o,
                                                    checkpoint, refused));
      },
      ::testing::ExitedWithCode(0), "");

  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto resumed, module->NewTrainer({.seed = 5}));
  ASSERT_OK(resumed->Restore(checkpoint));
  EXPECT_EQ(resumed->step(), 3);
  ASSERT_OK_AND_ASSIGN(auto clean, module->NewTrainer({.seed = 21}));
  for (int i = 0; i < 3; ++i)
    ASSERT_OK(clean->Step(FaultBatch(data, o, i % 4, 0), 0.02f).status());
  for (int i = 3; i < 6; ++i) {
    ASSERT_OK_AND_ASSIGN(float a,
                         resumed->Step(FaultBatch(data, o, i % 4, 0), 0.02f));
    ASSERT_OK_AND_ASSIGN(float b,
                         clean->Step(FaultBatch(data, o, i % 4, 0), 0.02f));
    EXPECT_EQ(a, b) << "step " << i + 1;
  }
  for (const char* name :
       {"w", "b", "adam_m.w", "adam_v.w", "adam_m.b", "adam_v.b"})
    EXPECT_EQ(Download(resumed->Buffer(name)), Download(clean->Buffer(name)))
        << name;
}

TEST_F(SessionGpuTest, ModelStateIsUpdatedCheckpointedAndRestored) {
  LinRegOptions o;
  o.running_mean = true;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  const LinRegData data = testing::MakeLinRegData(o.batch * 4, o.in, o.out, 16);
  ASSERT_OK_AND_ASSIGN(auto a, module->NewTrainer({.seed = 11}));
  const char* kState = "running_mean.pred";
  // The state starts from its initialiser; the runtime binds it, the caller
  // never passes it, and it is not a parameter.
  EXPECT_EQ(Download(a->Buffer(kState)), std::vector<float>(o.out, 1.0f));
  EXPECT_EQ(a->parameter_names().size(), 2u);
  ASSERT_OK_AND_ASSIGN(auto inputs, a->InputsOf("train_step"));
  for (const TensorSpec& b : inputs) EXPECT_NE(b.name, kState);

  // forward reads it and leaves it; a step updates it from the batch.
  ASSERT_OK_AND_ASSIGN(Outputs out, a->Forward(Batch(data, o, 0)));
  EXPECT_EQ(Download(a->Buffer(kState)), std::vector<float>(o.out, 1.0f));
  const std::vector<float> pred = Download(out.at("pred"));
  ASSERT_OK(a->Step(Batch(data, o, 0), 0.02f).status());
  const std::vector<float> running = Download(a->Buffer(kState));
  for (int k = 0; k < o.out; ++k) {
    double mean = 0;
    for (int i = 0; i < o.batch; ++i) mean += pred[i * o.out + k];
    mean /= o.batch;
    EXPECT_NEAR(running[k], (1 - o.momentum) * 1.0 + o.momentum * mean, 1e-5)
        << k;
  }

  for (int i = 1; i < 5; ++i)
    ASSERT_OK(a->Step(Batch(data, o, i % 4), 0.02f).status());
  const std::string path = TempPath("linreg_state.safetensors");
  ASSERT_OK(a->Save(path));
  ASSERT_OK_AND_ASSIGN(io::Safetensors st, io::ReadSafetensorsFile(path));
  ASSERT_EQ(st.tensors.count(kState), 1u);
  EXPECT_EQ(Floats(st.tensors.at(kState)), Download(a->Buffer(kState)));
  for (int i = 5; i < 8; ++i)
    ASSERT_OK(a->Step(Batch(data, o, i % 4), 0.02f).status());

  // A resumed trainer continues with the saved statistics.
  ASSERT_OK_AND_ASSIGN(auto b, module->NewTrainer({.seed = 12}));
  ASSERT_OK(b->Restore(path));
  EXPECT_EQ(Floats(st.tensors.at(kState)), Download(b->Buffer(kState)));
  for (int i = 5; i < 8; ++i)
    ASSERT_OK(b->Step(Batch(data, o, i % 4), 0.02f).status());
  EXPECT_EQ(Download(a->Buffer(kState)), Download(b->Buffer(kState)));
  EXPECT_EQ(Download(a->Parameter("w")), Download(b->Parameter("w")));

  // A checkpoint without the state does not restore, and does not load into
  // a session either (inference would normalise with initial statistics).
  io::Safetensors without = st;
  without.tensors.erase(kState);
  ASSERT_OK(io::WriteSafetensorsFile(TempPath("nostate.safetensors"), without));
  auto status = b->Restore(TempPath("nostate.safetensors"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr(kState));
  ASSERT_OK_AND_ASSIGN(auto session, module->NewSession());
  status = session->LoadParameters(TempPath("nostate.safetensors"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("no tensor for state"));
  ASSERT_OK(session->LoadParameters(path));
  EXPECT_EQ(Download(session->Buffer(kState)), Floats(st.tensors.at(kState)));
}

TEST_F(SessionGpuTest, GraphsAreCapturedOnceAndReplayed) {
  LinRegOptions o;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  const LinRegData data = testing::MakeLinRegData(o.batch * 3, o.in, o.out, 8);
  ASSERT_OK_AND_ASSIGN(auto graphs, module->NewTrainer({.seed = 4}));
  ASSERT_OK_AND_ASSIGN(auto direct,
                       module->NewTrainer({.seed = 4, .use_graphs = false}));
  for (int i = 0; i < 3; ++i) {
    // A different lr each step: the replayed graph reads it from its buffer.
    ASSERT_OK_AND_ASSIGN(float a,
                         graphs->Step(Batch(data, o, i), 0.01f * (i + 1)));
    ASSERT_OK_AND_ASSIGN(float b,
                         direct->Step(Batch(data, o, i), 0.01f * (i + 1)));
    EXPECT_EQ(a, b);
  }
  EXPECT_EQ(Download(graphs->Parameter("w")), Download(direct->Parameter("w")));
  ExecutionStats g = graphs->stats();
  EXPECT_EQ(g.calls, 3);
  EXPECT_EQ(g.graph_captures, 1);
  EXPECT_EQ(g.graph_replays, 3);
  EXPECT_EQ(g.kernel_launches, 0);
  ExecutionStats d = direct->stats();
  EXPECT_EQ(d.graph_captures, 0);
  EXPECT_EQ(d.kernel_launches, 3 * 7);  // 5 forward/backward + 2 Adam
}

// Kernels that wait for their predecessor may be scheduled before it ends:
// results must not change. On the CPU stand-in driver the launches also
// reach cuLaunchKernelEx with the attribute (its counter says so).
TEST_F(SessionGpuTest, ProgrammaticLaunchesGiveIdenticalResults) {
  LinRegOptions o;
  o.waits_for_predecessor = true;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  const LinRegData data = testing::MakeLinRegData(o.batch * 4, o.in, o.out, 6);
  ASSERT_OK_AND_ASSIGN(
      auto serial,
      module->NewTrainer({.seed = 2, .programmatic_launch = false}));
  ASSERT_OK_AND_ASSIGN(auto graphs, module->NewTrainer({.seed = 2}));
  ASSERT_OK_AND_ASSIGN(auto direct,
                       module->NewTrainer({.seed = 2, .use_graphs = false}));
  const int launches_before = FakeDriverProgrammaticLaunches();
  if (std::getenv("KILN_LIBCUDA_PATH") != nullptr) {
    ASSERT_GE(launches_before, 0) << "the stand-in driver has no counter";
  }
  constexpr int kSteps = 20;
  for (int i = 0; i < kSteps; ++i) {
    const float lr = 0.01f * (1 + i % 3);
    ASSERT_OK_AND_ASSIGN(float a, serial->Step(Batch(data, o, i % 4), lr));
    ASSERT_OK_AND_ASSIGN(float b, graphs->Step(Batch(data, o, i % 4), lr));
    ASSERT_OK_AND_ASSIGN(float c, direct->Step(Batch(data, o, i % 4), lr));
    EXPECT_EQ(a, b) << "step " << i;
    EXPECT_EQ(a, c) << "step " << i;
  }
  for (const char* name : {"w", "b", "adam_m.w", "adam_v.b"}) {
    const std::vector<float> expected = Download(serial->Buffer(name));
    EXPECT_EQ(Download(graphs->Buffer(name)), expected) << name;
    EXPECT_EQ(Download(direct->Buffer(name)), expected) << name;
  }
  // 7 launches per step: 5 forward/backward, 2 Adam; a graph captures once.
  const bool supported = rt().device().compute_capability().sm() >= 90 &&
                         CudaDriver::Get().value()->version() >= 12030;
  EXPECT_EQ(serial->stats().programmatic_launches, 0);
  EXPECT_EQ(graphs->stats().programmatic_launches, supported ? 7 : 0);
  EXPECT_EQ(direct->stats().programmatic_launches, supported ? kSteps * 7 : 0);
  if (launches_before >= 0) {
    EXPECT_EQ(FakeDriverProgrammaticLaunches() - launches_before,
              supported ? 7 + kSteps * 7 : 0);
  }

  // Images not marked as waiting are never launched early.
  o.waits_for_predecessor = false;
  auto unmarked = LoadLinReg(o);
  ASSERT_NE(unmarked, nullptr);
  ASSERT_OK_AND_ASSIGN(auto plain, unmarked->NewTrainer({.seed = 2}));
  ASSERT_OK_AND_ASSIGN(float loss, plain->Step(Batch(data, o, 0), 0.01f));
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(plain->stats().programmatic_launches, 0);
}

// The linear-regression artifact with some launches in thread-block clusters
// (one of 16 blocks, past the portable 8) and one cooperative. The kernels
// guard their index, so the larger grids change nothing but the launch.
artifact::Artifact ClusteredLinReg(const LinRegOptions& o) {
  artifact::Artifact a = testing::LinRegArtifact(o);
  for (artifact::Entry& entry : a.entries) {
    for (artifact::Launch& launch : entry.launches) {
      const std::string& name = a.kernels[launch.kernel].name;
      if (name == "mse_grad") {
        launch.grid = {4, 2, 1};
        launch.cluster = {2, 2, 1};
      } else if (name == "adam_update") {
        launch.grid = {32, 1, 1};
        launch.cluster = {16, 1, 1};
      } else if (name == "linreg_forward") {
        launch.cooperative = true;
      }
    }
  }
  return a;
}

TEST_F(SessionGpuTest, ClusteredAndCooperativeLaunchesGiveIdenticalResults) {
  if (!rt().device().supports_clusters()) {
    GTEST_SKIP() << rt().device().name() << " has no thread-block clusters";
  }
  LinRegOptions o;
  auto plain = LoadLinReg(o);
  ASSERT_NE(plain, nullptr);
  ASSERT_OK_AND_ASSIGN(std::string bytes,
                       artifact::WriteArtifact(ClusteredLinReg(o)));
  ASSERT_OK_AND_ASSIGN(auto shaped, rt().LoadFromMemory(bytes));
  const LinRegData data = testing::MakeLinRegData(o.batch * 4, o.in, o.out, 9);
  ASSERT_OK_AND_ASSIGN(auto reference, plain->NewTrainer({.seed = 3}));
  ASSERT_OK_AND_ASSIGN(auto graphs, shaped->NewTrainer({.seed = 3}));
  ASSERT_OK_AND_ASSIGN(auto direct,
                       shaped->NewTrainer({.seed = 3, .use_graphs = false}));
  const int clusters_before = FakeDriverCounter("cluster_launches");
  const int cooperative_before = FakeDriverCounter("cooperative_launches");
  constexpr int kSteps = 6;
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_OK_AND_ASSIGN(float a, reference->Step(Batch(data, o, i % 4), 0.02f));
    ASSERT_OK_AND_ASSIGN(float b, graphs->Step(Batch(data, o, i % 4), 0.02f));
    ASSERT_OK_AND_ASSIGN(float c, direct->Step(Batch(data, o, i % 4), 0.02f));
    EXPECT_EQ(a, b) << "step " << i;
    EXPECT_EQ(a, c) << "step " << i;
  }
  for (const char* name : {"w", "b", "adam_m.w", "adam_v.b"}) {
    const std::vector<float> expected = Download(reference->Buffer(name));
    EXPECT_EQ(Download(graphs->Buffer(name)), expected) << name;
    EXPECT_EQ(Download(direct->Buffer(name)), expected) << name;
  }
  // Per step: mse_grad and two Adam updates clustered, the forward pass
  // cooperative; a graph is captured once.
  EXPECT_EQ(reference->stats().cluster_launches, 0);
  EXPECT_EQ(reference->stats().cooperative_launches, 0);
  EXPECT_EQ(graphs->stats().cluster_launches, 3);
  EXPECT_EQ(graphs->stats().cooperative_launches, 1);
  EXPECT_EQ(direct->stats().cluster_launches, 3 * kSteps);
  EXPECT_EQ(direct->stats().cooperative_launches, kSteps);
  if (clusters_before >= 0) {
    EXPECT_EQ(FakeDriverCounter("cluster_launches") - clusters_before,
              3 + 3 * kSteps);
    EXPECT_EQ(FakeDriverCounter("cooperative_launches") - cooperative_before,
              1 + kSteps);
  }
}

// A persistent launch sized for more SMs than the device has runs with a
// grid shrunk to one block per SM. The forward pass's kernel guards its
// index, and its few blocks of work fit in the shrunk grid, so the results
// are those of the plain artifact.
TEST_F(SessionGpuTest, PersistentLaunchesShrinkToTheDevice) {
  LinRegOptions o;
  auto plain = LoadLinReg(o);
  ASSERT_NE(plain, nullptr);
  artifact::Artifact a = testing::LinRegArtifact(o);
  int persistent = 0;
  for (artifact::Entry& entry : a.entries) {
    for (artifact::Launch& launch : entry.launches) {
      if (a.kernels[launch.kernel].name != "linreg_forward") continue;
      ASSERT_LE(launch.grid.x, 132u);
      launch.grid = {65535, 1, 1};
      launch.persistent_blocks_per_sm = 1;
      ++persistent;
    }
  }
  ASSERT_GT(persistent, 0);
  ASSERT_OK_AND_ASSIGN(std::string bytes, artifact::WriteArtifact(a));
  ASSERT_OK_AND_ASSIGN(auto shaped, rt().LoadFromMemory(bytes));
  const LinRegData data = testing::MakeLinRegData(o.batch * 4, o.in, o.out, 9);
  ASSERT_OK_AND_ASSIGN(auto reference, plain->NewTrainer({.seed = 4}));
  ASSERT_OK_AND_ASSIGN(auto graphs, shaped->NewTrainer({.seed = 4}));
  ASSERT_OK_AND_ASSIGN(auto direct,
                       shaped->NewTrainer({.seed = 4, .use_graphs = false}));
  constexpr int kSteps = 3;
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_OK_AND_ASSIGN(float x, reference->Step(Batch(data, o, i), 0.02f));
    ASSERT_OK_AND_ASSIGN(float y, graphs->Step(Batch(data, o, i), 0.02f));
    ASSERT_OK_AND_ASSIGN(float z, direct->Step(Batch(data, o, i), 0.02f));
    EXPECT_EQ(x, y) << "step " << i;
    EXPECT_EQ(x, z) << "step " << i;
  }
  for (const char* name : {"w", "b"}) {
    const std::vector<float> expected = Download(reference->Buffer(name));
    EXPECT_EQ(Download(graphs->Buffer(name)), expected) << name;
    EXPECT_EQ(Download(direct->Buffer(name)), expected) << name;
  }
  // One forward launch per step; a graph is captured once.
  EXPECT_EQ(reference->stats().shrunk_persistent_launches, 0);
  EXPECT_EQ(graphs->stats().shrunk_persistent_launches, 1);
  EXPECT_EQ(direct->stats().shrunk_persistent_launches, kSteps);
}

// A cooperative grid the device cannot hold at once fails the call before
// anything runs (and before a graph is captured), naming the kernel.
TEST_F(SessionGpuTest, CooperativeGridTooLargeIsAnError) {
  LinRegOptions o;
  artifact::Artifact a = testing::LinRegArtifact(o);
  for (artifact::Entry& entry : a.entries) {
    for (artifact::Launch& launch : entry.launches) {
      if (a.kernels[launch.kernel].name == "mse_grad") {
        launch.grid = {1 << 20, 1, 1};
        launch.cooperative = true;
      }
    }
  }
  ASSERT_OK_AND_ASSIGN(std::string bytes, artifact::WriteArtifact(a));
  ASSERT_OK_AND_ASSIGN(auto module, rt().LoadFromMemory(bytes));
  const LinRegData data = testing::MakeLinRegData(o.batch, o.in, o.out, 10);
  for (bool use_graphs : {true, false}) {
    ASSERT_OK_AND_ASSIGN(
        auto trainer,
        module->NewTrainer({.seed = 3, .use_graphs = use_graphs}));
    const std::vector<float> w = Download(trainer->Parameter("w"));
    auto loss = trainer->Step(Batch(data, o, 0), 0.1f);
    EXPECT_EQ(loss.status().code(), absl::StatusCode::kResourceExhausted)
        << loss.status();
    EXPECT_THAT(std::string(loss.status().message()),
                HasSubstr("kernel mse_grad is launched cooperatively with grid "
                          "(1048576,1,1)"));
    EXPECT_THAT(std::string(loss.status().message()),
                HasSubstr("entry 'train_step' launch"));
    EXPECT_EQ(Download(trainer->Parameter("w")), w);
    EXPECT_EQ(trainer->stats().calls, 0);
  }
}

TEST_F(SessionGpuTest, WrongInputsAreRejectedBeforeAnythingRuns) {
  LinRegOptions o;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto trainer, module->NewTrainer({.seed = 4}));
  const LinRegData data = testing::MakeLinRegData(o.batch, o.in, o.out, 8);
  const Inputs good = Batch(data, o, 0);
  const std::vector<float> w = Download(trainer->Parameter("w"));

  auto expect = [&](Inputs inputs, const std::string& message) {
    auto result = trainer->Step(inputs, 0.1f);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << result.status();
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(message));
  };
  Inputs unknown = good;
  unknown.emplace("z", Input::F32({1}, {0.0f}));
  expect(unknown, "entry 'train_step' has no input 'z'");
  Inputs missing = good;
  missing.erase("y");
  expect(missing, "entry 'train_step' is missing input 'y' (f32[16, 3])");
  Inputs shape = good;
  shape.erase("x");
  shape.emplace("x", Input::F32({o.batch, o.in + 1},
                                std::vector<float>(o.batch * (o.in + 1))));
  expect(shape,
         "input 'x' of entry 'train_step' must be f32[16, 5], got "
         "f32[16, 6]");
  Inputs dtype = good;
  dtype.erase("x");
  dtype.emplace("x",
                Input(HostTensor::I32({o.batch, o.in},
                                      std::vector<int32_t>(o.batch * o.in))));
  expect(dtype, "must be f32[16, 5], got i32[16, 5]");
  Inputs param = good;
  param.emplace("w", Input::F32({o.in, o.out}, w));
  expect(param, "input 'w' of entry 'train_step' is supplied by the runtime");
  Inputs lr = good;
  lr.emplace("lr", Input::F32({}, {1.0f}));
  expect(lr, "input 'lr' of entry 'train_step' is supplied by the runtime");
  Inputs short_data = good;
  short_data.erase("y");
  short_data.emplace("y", Input(HostTensor{DType::kF32, {o.batch, o.out}, {}}));
  expect(short_data, "has 0 bytes of host data");

  EXPECT_EQ(trainer->step(), 0);
  EXPECT_EQ(trainer->stats().calls, 0);
  EXPECT_EQ(Download(trainer->Parameter("w")), w);
  EXPECT_EQ(trainer->ForwardBackward(unknown).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Download(trainer->Parameter("w")), w);

  ASSERT_OK_AND_ASSIGN(auto inputs, trainer->InputsOf("train_step"));
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].name, "x");
  EXPECT_EQ(inputs[1].name, "y");
  EXPECT_EQ(trainer->InputsOf("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(SessionGpuTest, DeviceTensorInputsEqualHostInputs) {
  LinRegOptions o;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  const LinRegData data = testing::MakeLinRegData(o.batch, o.in, o.out, 10);
  ASSERT_OK_AND_ASSIGN(auto host, module->NewTrainer({.seed = 4}));
  ASSERT_OK_AND_ASSIGN(auto device, module->NewTrainer({.seed = 4}));
  ASSERT_OK_AND_ASSIGN(Tensor x,
                       rt().Upload(HostTensor::F32({o.batch, o.in}, data.x)));
  ASSERT_OK_AND_ASSIGN(Tensor y,
                       rt().Upload(HostTensor::F32({o.batch, o.out}, data.y)));
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(float a, host->Step(Batch(data, o, 0), 0.05f));
    ASSERT_OK_AND_ASSIGN(float b, device->Step({{"x", x}, {"y", y}}, 0.05f));
    EXPECT_EQ(a, b);
  }
  // A transposed view of the right shape is not contiguous: rejected.
  ASSERT_OK_AND_ASSIGN(Tensor xt,
                       rt().Upload(HostTensor::F32({o.in, o.batch}, data.x)));
  ASSERT_OK_AND_ASSIGN(Tensor view, xt.Transpose({1, 0}));
  auto result = device->Step({{"x", view}, {"y", y}}, 0.05f);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("non-contiguous device tensor"));
}

TEST_F(SessionGpuTest, InferenceSessionAndParametersFromACheckpoint) {
  LinRegOptions o;
  auto trainable = LoadLinReg(o);
  ASSERT_NE(trainable, nullptr);
  ASSERT_OK_AND_ASSIGN(auto trainer, trainable->NewTrainer({.seed = 21}));
  const LinRegData data = testing::MakeLinRegData(o.batch, o.in, o.out, 12);
  for (int i = 0; i < 3; ++i)
    ASSERT_OK(trainer->Step(Batch(data, o, 0), 0.05f).status());
  const std::string path = TempPath("for_inference.safetensors");
  ASSERT_OK(trainer->Save(path));

  LinRegOptions io = o;
  io.inference_only = true;
  auto model = LoadLinReg(io);
  ASSERT_NE(model, nullptr);
  ASSERT_OK_AND_ASSIGN(auto session, model->NewSession());
  ASSERT_OK(session->LoadParameters(path));
  EXPECT_EQ(Download(session->Parameter("w")),
            Download(trainer->Parameter("w")));
  ASSERT_OK_AND_ASSIGN(
      Outputs out,
      session->Run("predict", {{"x", Input::F32({o.batch, o.in}, data.x)}}));
  ASSERT_EQ(out.count("pred"), 1u);
  const std::vector<float> pred = Download(out.at("pred"));
  const std::vector<float> w = Download(trainer->Parameter("w"));
  const std::vector<float> b = Download(trainer->Parameter("b"));
  for (int i = 0; i < o.batch; ++i) {
    for (int k = 0; k < o.out; ++k) {
      double acc = b[k];
      for (int j = 0; j < o.in; ++j)
        acc += double(data.x[i * o.in + j]) * w[j * o.out + k];
      EXPECT_NEAR(pred[i * o.out + k], acc, 1e-5) << i << "," << k;
    }
  }
  ASSERT_OK_AND_ASSIGN(
      std::vector<float> ms,
      session->Benchmark("predict",
                         {{"x", Input::F32({o.batch, o.in}, data.x)}}, 2, 5));
  EXPECT_EQ(ms.size(), 5u);
  for (float t : ms) EXPECT_GE(t, 0.0f);
  EXPECT_EQ(session->stats().graph_captures, 1);
  EXPECT_EQ(session->Run("forward", {}).status().code(),
            absl::StatusCode::kNotFound);
}

// Writes rows of `data` as a KILNDATA file with fields x [in] and y [out].
std::string WriteLinRegDataset(const std::string& name, const LinRegData& data,
                               const LinRegOptions& o) {
  const std::string path = TempPath(name);
  auto writer = io::DatasetWriter::Create(
      path, {{"x", DType::kF32, {o.in}}, {"y", DType::kF32, {o.out}}});
  EXPECT_TRUE(writer.ok()) << writer.status();
  const size_t rows = data.x.size() / o.in;
  for (size_t r = 0; r < rows; ++r) {
    std::vector<float> record(data.x.begin() + r * o.in,
                              data.x.begin() + (r + 1) * o.in);
    record.insert(record.end(), data.y.begin() + r * o.out,
                  data.y.begin() + (r + 1) * o.out);
    EXPECT_TRUE((*writer)->Append(record.data(), record.size() * 4).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return path;
}

TEST_F(SessionGpuTest, DeviceBatchLoaderUploadsBatchesInOrder) {
  LinRegOptions o;
  const int batches = 5;
  const LinRegData data =
      testing::MakeLinRegData(o.batch * batches, o.in, o.out, 13);
  const std::string path = WriteLinRegDataset("linreg.kilndata", data, o);
  ASSERT_OK_AND_ASSIGN(auto dataset, io::MappedDataset::Open(path));
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto with_loader, module->NewTrainer({.seed = 8}));
  ASSERT_OK_AND_ASSIGN(auto with_host, module->NewTrainer({.seed = 8}));

  DeviceBatchLoaderOptions options;
  options.batch.batch_size = o.batch;
  options.batch.shuffle = false;
  options.batch.num_epochs = 1;
  options.fields = {"x", "y"};
  ASSERT_OK_AND_ASSIGN(auto loader,
                       DeviceBatchLoader::Create(rt(), dataset.get(), options,
                                                 with_loader->stream()));
  for (int i = 0; i < batches; ++i) {
    ASSERT_OK_AND_ASSIGN(DeviceBatch batch, loader->Next());
    EXPECT_EQ(batch.sequence, static_cast<uint64_t>(i));
    EXPECT_EQ(batch.num_records, static_cast<uint64_t>(o.batch));
    // Batch i + 1 is on its way while batch i is used.
    EXPECT_EQ(loader->uploads(),
              static_cast<uint64_t>(std::min(i + 2, batches)));
    ASSERT_EQ(batch.fields.at("x").shape(), (Shape{o.batch, o.in}));
    const std::vector<float> x = Download(batch.fields.at("x"));
    const std::vector<float> y = Download(batch.fields.at("y"));
    const Inputs host = Batch(data, o, i);
    const float* hx = static_cast<const float*>(host.at("x").host_data());
    const float* hy = static_cast<const float*>(host.at("y").host_data());
    EXPECT_EQ(x, std::vector<float>(hx, hx + x.size())) << "batch " << i;
    EXPECT_EQ(y, std::vector<float>(hy, hy + y.size())) << "batch " << i;
    ASSERT_OK_AND_ASSIGN(float a, with_loader->Step(batch.inputs(), 0.05f));
    ASSERT_OK_AND_ASSIGN(float b, with_host->Step(host, 0.05f));
    EXPECT_EQ(a, b) << "batch " << i;
  }
  EXPECT_EQ(loader->Next().status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Download(with_loader->Parameter("w")),
            Download(with_host->Parameter("w")));

  // Shuffled: each batch holds the records of the epoch's permutation.
  options.batch.shuffle = true;
  options.batch.seed = 77;
  ASSERT_OK_AND_ASSIGN(auto shuffled,
                       DeviceBatchLoader::Create(rt(), dataset.get(), options,
                                                 with_loader->stream()));
  const std::vector<uint64_t> order =
      io::BatchSampler::EpochPermutation(o.batch * batches, 77, 0);
  for (int i = 0; i < batches; ++i) {
    ASSERT_OK_AND_ASSIGN(DeviceBatch batch, shuffled->Next());
    const std::vector<float> y = Download(batch.fields.at("y"));
    for (int r = 0; r < o.batch; ++r) {
      const uint64_t row = order[i * o.batch + r];
      for (int k = 0; k < o.out; ++k) {
        ASSERT_EQ(y[r * o.out + k], data.y[row * o.out + k]) << i << "," << r;
      }
    }
  }

  options.fields = {"x", "label"};
  auto bad = DeviceBatchLoader::Create(rt(), dataset.get(), options,
                                       with_loader->stream());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("no field 'label' (fields: x, y)"));
}

// i64 labels, as PyTorch and NumPy write them, arrive as i32 tensors; a
// value past the i32 range, and the caller's check, stop the batches with
// the record named.
TEST_F(SessionGpuTest, DeviceBatchLoaderNarrowsI64Fields) {
  const std::string path = TempPath("labels.kilndata");
  {
    auto writer = io::DatasetWriter::Create(
        path, {{"x", DType::kF32, {2}}, {"label", DType::kI64, {3}}});
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int64_t r = 0; r < 12; ++r) {
      struct {
        float x[2];
        int64_t label[3];
      } record = {{1.0f * r, -1.0f * r}, {r, -r, r == 9 ? int64_t{1} << 33 : 7}};
      ASSERT_TRUE((*writer)->Append(&record, sizeof(record)).ok());
    }
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  ASSERT_OK_AND_ASSIGN(auto dataset, io::MappedDataset::Open(path));
  LinRegOptions o;
  auto module = LoadLinReg(o);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto trainer, module->NewTrainer({.seed = 1}));
  DeviceBatchLoaderOptions options;
  options.batch.batch_size = 4;
  options.batch.shuffle = false;
  options.batch.num_epochs = 1;
  options.narrow_i64 = true;
  ASSERT_OK_AND_ASSIGN(std::vector<io::DatasetField> fields,
                       LoaderFields(*dataset, options));
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[1].dtype, DType::kI32);
  EXPECT_EQ(fields[1].offset, 8u);
  EXPECT_EQ(fields[1].bytes, 12u);
  int checked = 0;
  options.check = [&](uint8_t* records, absl::Span<const uint64_t> indices) {
    ++checked;  // the narrowed values, where the layout says
    int32_t first;
    std::memcpy(&first, records + fields[1].offset, 4);
    EXPECT_EQ(first, static_cast<int32_t>(indices[0]));
    return absl::OkStatus();
  };
  ASSERT_OK_AND_ASSIGN(auto loader,
                       DeviceBatchLoader::Create(rt(), dataset.get(), options,
                                                 trainer->stream()));
  ASSERT_OK_AND_ASSIGN(DeviceBatch batch, loader->Next());
  const Tensor& labels = batch.fields.at("label");
  EXPECT_EQ(labels.dtype(), DType::kI32);
  ASSERT_EQ(labels.shape(), (Shape{4, 3}));
  ASSERT_OK_AND_ASSIGN(HostTensor host, rt().Download(labels));
  std::vector<int32_t> values(12);
  std::memcpy(values.data(), host.data.data(), 48);
  EXPECT_EQ(values, (std::vector<int32_t>{0, 0, 7, 1, -1, 7, 2, -2, 7, 3, -3,
                                          7}));
  ASSERT_OK(loader->Next().status());
  absl::Status third = loader->Next().status();
  EXPECT_EQ(third.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(third.message()),
              HasSubstr("labels.kilndata: record 9 field 'label' element 2 "
                        "[2] is 8589934592, which does not fit the i32 the "
                        "model takes"));
  EXPECT_GE(checked, 2);

  // The caller's check refuses a batch like a read error.
  options.narrow_i64 = false;
  options.fields = {"x"};
  options.check = [](uint8_t*, absl::Span<const uint64_t> indices) {
    return indices[0] == 4 ? absl::InvalidArgumentError("record 4 refused")
                           : absl::OkStatus();
  };
  ASSERT_OK_AND_ASSIGN(auto checked_loader,
                       DeviceBatchLoader::Create(rt(), dataset.get(), options,
                                                 trainer->stream()));
  ASSERT_OK(checked_loader->Next().status());
  EXPECT_EQ(checked_loader->Next().status().message(), "record 4 refused");
}

// A bf16 parameter with an f32 master copy: both start from the same
// doubles, rounded to their own type; optimizer state and constants too.
TEST_F(SessionGpuTest, MasterWeightsAndConstantsStartRight) {
  artifact::ArtifactWriter w({"sm_90"});
  w.AddParameter("e", DType::kBF16, {7, 9}, InitKind::kNormal, 0.5f, 2.0f, 3);
  w.AddBuffer("master.e", artifact::BufferRole::kMasterWeight, DType::kF32,
              {7, 9});
  w.AddBuffer("momentum.e", artifact::BufferRole::kOptimizerState, DType::kF32,
              {7, 9});
  std::vector<uint8_t> bytes(4 * 3);
  const float c[3] = {1.5f, -2.0f, 0.25f};
  std::memcpy(bytes.data(), c, sizeof(c));
  w.AddConstant("c", DType::kF32, {3}, bytes);
  ASSERT_OK_AND_ASSIGN(std::string file, w.Finish());
  ASSERT_OK_AND_ASSIGN(auto module, rt().LoadFromMemory(file));
  ASSERT_OK_AND_ASSIGN(auto session, module->NewSession({.seed = 17}));
  const std::vector<double> v =
      InitialValues(InitKind::kNormal, 0.5, 2.0, {7, 9}, 17, 3);
  ASSERT_OK_AND_ASSIGN(Tensor e, session->Parameter("e"));
  ASSERT_OK_AND_ASSIGN(HostTensor he, rt().Download(e));
  ASSERT_EQ(he.data.size(), v.size() * 2);
  const std::vector<float> master = Download(session->Buffer("master.e"));
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, he.data.data() + 2 * i, 2);
    EXPECT_EQ(bits, F32ToBf16(static_cast<float>(v[i]))) << i;
    EXPECT_EQ(master[i], static_cast<float>(v[i])) << i;
  }
  for (float m : Download(session->Buffer("momentum.e"))) EXPECT_EQ(m, 0.0f);
  EXPECT_EQ(Download(session->Buffer("c")), std::vector<float>(c, c + 3));
  EXPECT_EQ(session->Buffer("nope").status().code(),
            absl::StatusCode::kNotFound);
}

// Values the artifact carries (an imported model's weights) are what the
// buffers hold when a session starts, whatever its seed, after the file's
// round trip; optimizer state beside them starts from zeros, and a parameter
// without a value still starts from its initialiser.
TEST_F(SessionGpuTest, CarriedValuesStartRight) {
  uint32_t stream = 0;
  auto draw = [&](size_t count) {
    const RandomStream r{29, stream++, 0};
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i)
      v[i] = static_cast<float>(r.Uniform(i) * 4 - 2);
    return v;
  };
  auto bytes_of = [](const void* data, size_t size) {
    return artifact::InitialValue::Copy(
        absl::string_view(static_cast<const char*>(data), size));
  };
  const std::vector<float> master = draw(7 * 9), running = draw(5),
                           table = draw(33);
  std::vector<uint16_t> weight(master.size());
  for (size_t i = 0; i < master.size(); ++i) weight[i] = F32ToBf16(master[i]);
  artifact::ArtifactWriter w({"sm_90"});
  const uint32_t e =
      w.AddBuffer("e", artifact::BufferRole::kParameter, DType::kBF16, {7, 9});
  w.SetInitialValue(e, bytes_of(weight.data(), weight.size() * 2));
  w.SetInitialValue(w.AddBuffer("master.e", artifact::BufferRole::kMasterWeight,
                                DType::kF32, {7, 9}),
                    bytes_of(master.data(), master.size() * 4));
  w.AddBuffer("adam_m.e", artifact::BufferRole::kOptimizerState, DType::kF32,
              {7, 9});
  w.SetInitialValue(w.AddBuffer("bn.running_var", artifact::BufferRole::kState,
                                DType::kF32, {5}),
                    bytes_of(running.data(), running.size() * 4));
  w.SetInitialValue(
      w.AddBuffer("table", artifact::BufferRole::kConstant, DType::kF32, {33}),
      bytes_of(table.data(), table.size() * 4));
  w.AddParameter("b", DType::kF32, {4}, InitKind::kNormal, 0.0f, 1.0f, 1);
  ASSERT_OK_AND_ASSIGN(std::string file, w.Finish());
  ASSERT_OK_AND_ASSIGN(auto module, rt().LoadFromMemory(file));
  for (uint64_t seed : {3u, 4u}) {
    ASSERT_OK_AND_ASSIGN(auto session, module->NewSession({.seed = seed}));
    ASSERT_OK_AND_ASSIGN(Tensor te, session->Parameter("e"));
    ASSERT_OK_AND_ASSIGN(HostTensor he, rt().Download(te));
    ASSERT_EQ(he.data.size(), weight.size() * 2);
    EXPECT_EQ(std::memcmp(he.data.data(), weight.data(), he.data.size()), 0);
    EXPECT_EQ(Download(session->Buffer("master.e")), master);
    EXPECT_EQ(Download(session->Buffer("bn.running_var")), running);
    EXPECT_EQ(Download(session->Buffer("table")), table);
    for (float m : Download(session->Buffer("adam_m.e"))) EXPECT_EQ(m, 0.0f);
    const std::vector<double> b =
        InitialValues(InitKind::kNormal, 0.0, 1.0, {4}, seed, 1);
    const std::vector<float> got_b = Download(session->Parameter("b"));
    ASSERT_EQ(got_b.size(), b.size());
    for (size_t i = 0; i < b.size(); ++i)
      EXPECT_EQ(got_b[i], static_cast<float>(b[i])) << i;
  }
}

// A parameter larger than the host memory the runtime initialises through
// at a time (64 MiB) starts from the same values as a small one, in its own
// dtype and in its f32 master copy.
TEST_F(SessionGpuTest, LargeParametersStartFromTheirInitialisers) {
  const std::vector<int64_t> shape = {4100, 4100};  // 67 MB as f32
  artifact::ArtifactWriter w({"sm_90"});
  w.AddParameter("w", DType::kF32, shape, InitKind::kKaiming, 1.0f, 0.0f, 0);
  w.AddParameter("e", DType::kBF16, shape, InitKind::kNormal, 0.5f, 2.0f, 1);
  w.AddBuffer("master.e", artifact::BufferRole::kMasterWeight, DType::kF32,
              shape);
  ASSERT_OK_AND_ASSIGN(std::string file, w.Finish());
  ASSERT_OK_AND_ASSIGN(auto module, rt().LoadFromMemory(file));
  ASSERT_OK_AND_ASSIGN(auto session, module->NewSession({.seed = 23}));
  const std::vector<double> vw =
      InitialValues(InitKind::kKaiming, 1.0, 0.0, shape, 23, 0);
  const std::vector<double> ve =
      InitialValues(InitKind::kNormal, 0.5, 2.0, shape, 23, 1);
  const std::vector<float> got_w = Download(session->Parameter("w"));
  const std::vector<float> master = Download(session->Buffer("master.e"));
  ASSERT_OK_AND_ASSIGN(Tensor e, session->Parameter("e"));
  ASSERT_OK_AND_ASSIGN(HostTensor he, rt().Download(e));
  ASSERT_EQ(got_w.size(), vw.size());
  ASSERT_EQ(master.size(), ve.size());
  ASSERT_EQ(he.data.size(), ve.size() * 2);
  size_t wrong = 0;
  for (size_t i = 0; i < vw.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, he.data.data() + 2 * i, 2);
    wrong += got_w[i] != static_cast<float>(vw[i]) ||
             master[i] != static_cast<float>(ve[i]) ||
             bits != F32ToBf16(static_cast<float>(ve[i]));
  }
  EXPECT_EQ(wrong, 0u);
}

// Resident buffers larger than the device are refused before anything is
// allocated or initialised, naming the largest buffer and its bytes.
TEST_F(SessionGpuTest, ResidentBuffersPastTheDeviceAreRefusedFirst) {
  artifact::ArtifactWriter w({"sm_90"});
  w.AddParameter("b", DType::kF32, {4}, InitKind::kZeros, 0.0f, 0.0f, 0);
  // 640 GB: more than any GPU holds.
  w.AddParameter("w", DType::kF32, {400000, 400000}, InitKind::kXavier, 1.0f,
                 0.0f, 1);
  ASSERT_OK_AND_ASSIGN(std::string file, w.Finish());
  ASSERT_OK_AND_ASSIGN(auto module, rt().LoadFromMemory(file));
  const int64_t allocations = rt().pool().stats().device_allocations;
  const auto session = module->NewSession({});
  EXPECT_EQ(session.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(session.status().message()),
              HasSubstr("resident buffer 'w' (640000000000 bytes) is larger "
                        "than the whole memory of"));
  EXPECT_EQ(rt().pool().stats().device_allocations, allocations);
}

}  // namespace
}  // namespace kiln
