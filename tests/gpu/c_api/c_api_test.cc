// The C API (kiln/kiln.h) on the CPU stand-in driver: the MLP sample's
// artifact (argv[1]; listed, its parameters read, written and checkpointed;
// the stand-in cannot run its kernels) and linear-regression artifacts whose
// kernels it runs (training, inference, the gradient tools); misuse of every
// kind returns a status and a message.
#include "kiln/kiln.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/gpu/linreg_artifact.h"

namespace {

std::string mlp_path;  // argv[1]

#define ASSERT_KILN_OK(call) ASSERT_EQ((call), KILN_OK) << kiln_last_error()
#define EXPECT_KILN_OK(call) EXPECT_EQ((call), KILN_OK) << kiln_last_error()

// Expects `call` to fail with `code` and a message containing `text`.
#define EXPECT_KILN_ERROR(call, code, text)                          \
  do {                                                               \
    EXPECT_EQ((call), (code));                                       \
    EXPECT_NE(std::string(kiln_last_error()).find(text),             \
              std::string::npos)                                     \
        << kiln_last_error();                                        \
  } while (0)

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_KILN_OK(kiln_runtime_open(0, &runtime_)); }
  void TearDown() override {
    kiln_trainer_close(trainer_);
    kiln_module_close(module_);
    kiln_runtime_close(runtime_);
  }

  void LoadLinReg(const kiln::testing::LinRegOptions& options = {}) {
    auto bytes = kiln::testing::LinRegArtifactBytes(options);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    ASSERT_KILN_OK(kiln_module_load_from_memory(runtime_, bytes->data(),
                                                bytes->size(), &module_));
  }
  void NewLinRegTrainer() {
    LoadLinReg();
    ASSERT_KILN_OK(kiln_trainer_new(module_, 0, &trainer_));
  }

  kiln_runtime* runtime_ = nullptr;
  kiln_module* module_ = nullptr;
  kiln_trainer* trainer_ = nullptr;
};

// One batch of the linear-regression problem: x [16, 5], y [16, 3].
struct Batch {
  explicit Batch(uint64_t seed = 7)
      : data(kiln::testing::MakeLinRegData(16, 5, 3, seed)) {
    inputs[0] = {"x", KILN_F32, 2, x_shape, data.x.data(),
                 data.x.size() * sizeof(float)};
    inputs[1] = {"y", KILN_F32, 2, y_shape, data.y.data(),
                 data.y.size() * sizeof(float)};
  }
  kiln::testing::LinRegData data;
  int64_t x_shape[2] = {16, 5};
  int64_t y_shape[2] = {16, 3};
  kiln_input inputs[2];
};

// A fresh seed for each run (printed, so that a failure can be replayed).
uint64_t FreshSeed() {
  const uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

// A device tensor of `runtime` holding `values` (f32, `shape`).
kiln_tensor* DeviceCopy(kiln_runtime* runtime,
                        const std::vector<int64_t>& shape,
                        const std::vector<float>& values) {
  kiln_tensor* tensor = nullptr;
  EXPECT_EQ(kiln_tensor_new(runtime, KILN_F32,
                            static_cast<int32_t>(shape.size()), shape.data(),
                            &tensor),
            KILN_OK)
      << kiln_last_error();
  EXPECT_EQ(kiln_tensor_write(tensor, values.data(), values.size() * 4),
            KILN_OK)
      << kiln_last_error();
  return tensor;
}

// The bytes of resident buffer `name` of `trainer`.
std::vector<uint8_t> ReadBytes(kiln_trainer* trainer, const char* name,
                               size_t bytes) {
  std::vector<uint8_t> data(bytes);
  EXPECT_EQ(kiln_trainer_read(trainer, name, data.data(), bytes), KILN_OK)
      << kiln_last_error();
  return data;
}

TEST(CApiVersion, ReportsLibraryAndFormatVersions) {
  EXPECT_STREQ(kiln_version(), "0.2.0");
  EXPECT_EQ(kiln_artifact_format_version(), 3u);
  EXPECT_EQ(kiln_artifact_oldest_format_version(), 2u);
}

TEST_F(CApiTest, ListsTheMlpEntriesBindingsAndBuffers) {
  ASSERT_KILN_OK(kiln_module_load(runtime_, mlp_path.c_str(), &module_));
  size_t entries = 0;
  ASSERT_KILN_OK(kiln_module_entry_count(module_, &entries));
  std::vector<std::string> names;
  for (size_t i = 0; i < entries; ++i) {
    const char* name = nullptr;
    ASSERT_KILN_OK(kiln_module_entry_name(module_, i, &name));
    names.push_back(name);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "train_step"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "forward"), names.end());

  size_t inputs = 0;
  ASSERT_KILN_OK(kiln_module_input_count(module_, "forward", &inputs));
  bool saw_x = false, saw_w1 = false;
  for (size_t i = 0; i < inputs; ++i) {
    kiln_tensor_info info;
    ASSERT_KILN_OK(kiln_module_input(module_, "forward", i, &info));
    if (std::string(info.name) == "x") {
      saw_x = true;
      EXPECT_EQ(info.role, KILN_ROLE_IO);
      EXPECT_EQ(info.dtype, KILN_F32);
      ASSERT_EQ(info.rank, 2);
      EXPECT_EQ(info.shape[0], 64);
      EXPECT_EQ(info.shape[1], 8);
      EXPECT_EQ(info.size_bytes, 64u * 8 * 4);
    }
    if (std::string(info.name) == "w1") {
      saw_w1 = true;
      EXPECT_EQ(info.role, KILN_ROLE_PARAMETER);
    }
  }
  EXPECT_TRUE(saw_x);
  EXPECT_TRUE(saw_w1);

  size_t outputs = 0;
  ASSERT_KILN_OK(kiln_module_output_count(module_, "train_step", &outputs));
  bool saw_loss = false;
  for (size_t i = 0; i < outputs; ++i) {
    kiln_tensor_info info;
    ASSERT_KILN_OK(kiln_module_output(module_, "train_step", i, &info));
    if (std::string(info.name) == "loss") {
      saw_loss = true;
      EXPECT_EQ(info.rank, 0);
      EXPECT_EQ(info.role, KILN_ROLE_IO);
    }
  }
  EXPECT_TRUE(saw_loss);

  size_t buffers = 0;
  ASSERT_KILN_OK(kiln_module_buffer_count(module_, &buffers));
  int parameters = 0, gradients = 0;
  for (size_t i = 0; i < buffers; ++i) {
    kiln_tensor_info info;
    ASSERT_KILN_OK(kiln_module_buffer(module_, i, &info));
    parameters += info.role == KILN_ROLE_PARAMETER;
    gradients += info.role == KILN_ROLE_GRADIENT;
    if (std::string(info.name) == "w2") {
      ASSERT_EQ(info.rank, 2);
      EXPECT_EQ(info.shape[0], 64);
      EXPECT_EQ(info.shape[1], 1);
    }
  }
  EXPECT_EQ(parameters, 4);
  EXPECT_EQ(gradients, 4);
}

TEST_F(CApiTest, MlpParametersReadWriteAndCheckpoint) {
  ASSERT_KILN_OK(kiln_module_load(runtime_, mlp_path.c_str(), &module_));
  ASSERT_KILN_OK(kiln_trainer_new(module_, 42, &trainer_));
  std::vector<float> w1(8 * 64);
  ASSERT_KILN_OK(
      kiln_trainer_read(trainer_, "w1", w1.data(), w1.size() * sizeof(float)));
  double sum = 0;
  for (float v : w1) sum += std::fabs(v);
  EXPECT_GT(sum, 0) << "xavier initialisation gave zeros";

  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/mlp.ckpt";
  ASSERT_KILN_OK(kiln_trainer_save(trainer_, path.c_str()));
  std::vector<float> zeros(w1.size(), 0.0f);
  ASSERT_KILN_OK(kiln_trainer_write(trainer_, "w1", zeros.data(),
                                    zeros.size() * sizeof(float)));
  std::vector<float> back(w1.size(), 1.0f);
  ASSERT_KILN_OK(kiln_trainer_read(trainer_, "w1", back.data(),
                                   back.size() * sizeof(float)));
  EXPECT_EQ(back, zeros);
  ASSERT_KILN_OK(kiln_trainer_restore(trainer_, path.c_str()));
  ASSERT_KILN_OK(kiln_trainer_read(trainer_, "w1", back.data(),
                                   back.size() * sizeof(float)));
  EXPECT_EQ(back, w1);

  // A session loads the checkpoint's parameters.
  kiln_session* session = nullptr;
  ASSERT_KILN_OK(kiln_session_new(module_, 0, &session));
  ASSERT_KILN_OK(kiln_session_load_parameters(session, path.c_str()));
  ASSERT_KILN_OK(kiln_session_read(session, "w1", back.data(),
                                   back.size() * sizeof(float)));
  EXPECT_EQ(back, w1);
  kiln_session_close(session);
}

TEST_F(CApiTest, MlpStepOnTheStandInFailsCleanly) {
  // The stand-in driver runs only its own test kernels: the MLP's launch is
  // an error, returned as a status.
  ASSERT_KILN_OK(kiln_module_load(runtime_, mlp_path.c_str(), &module_));
  ASSERT_KILN_OK(kiln_trainer_new(module_, 0, &trainer_));
  std::vector<float> x(64 * 8, 0.5f), y(64, 1.0f);
  int64_t x_shape[] = {64, 8}, y_shape[] = {64, 1};
  kiln_input in[] = {{"x", KILN_F32, 2, x_shape, x.data(), x.size() * 4},
                     {"y", KILN_F32, 2, y_shape, y.data(), y.size() * 4}};
  float loss = 0;
  EXPECT_NE(kiln_trainer_step(trainer_, in, 2, 0.01f, &loss), KILN_OK);
  EXPECT_STRNE(kiln_last_error(), "");
}

TEST_F(CApiTest, TrainsLinearRegression) {
  NewLinRegTrainer();
  Batch batch;
  float first = 0, loss = 0;
  ASSERT_KILN_OK(kiln_trainer_step(trainer_, batch.inputs, 2, 0.05f, &first));
  for (int i = 0; i < 100; ++i) {
    ASSERT_KILN_OK(kiln_trainer_step(trainer_, batch.inputs, 2, 0.05f, &loss));
  }
  EXPECT_LT(loss, first / 10) << "first " << first << ", last " << loss;
  int64_t step = 0;
  ASSERT_KILN_OK(kiln_trainer_step_count(trainer_, &step));
  EXPECT_EQ(step, 101);

  kiln_outputs* outputs = nullptr;
  ASSERT_KILN_OK(kiln_trainer_forward(trainer_, batch.inputs, 2, &outputs));
  float forward_loss = -1;
  ASSERT_KILN_OK(kiln_outputs_read(outputs, "loss", &forward_loss, 4));
  EXPECT_GE(forward_loss, 0);
  EXPECT_KILN_ERROR(kiln_outputs_read(outputs, "nope", &forward_loss, 4),
                    KILN_NOT_FOUND, "no output nope");
  EXPECT_KILN_ERROR(kiln_outputs_read(outputs, "loss", &forward_loss, 8),
                    KILN_INVALID_ARGUMENT, "holds 4 bytes");
  kiln_outputs_free(outputs);
}

TEST_F(CApiTest, GradientToolsBetweenForwardBackwardAndUpdate) {
  NewLinRegTrainer();
  Batch batch;
  float loss = 0;
  ASSERT_KILN_OK(kiln_trainer_forward_backward(trainer_, batch.inputs, 2,
                                               &loss));
  kiln_grad_stats stats;
  ASSERT_KILN_OK(kiln_trainer_grad_stats(trainer_, &stats));
  EXPECT_GT(stats.global_norm, 0);
  EXPECT_EQ(stats.nonfinite_count, 0);

  double norm = 0;
  ASSERT_KILN_OK(kiln_trainer_clip_grad_norm(trainer_, stats.global_norm / 2,
                                             &norm));
  EXPECT_NEAR(norm, stats.global_norm, 1e-4 * norm);
  kiln_grad_stats clipped;
  ASSERT_KILN_OK(kiln_trainer_grad_stats(trainer_, &clipped));
  EXPECT_NEAR(clipped.global_norm, stats.global_norm / 2, 1e-3 * norm);

  ASSERT_KILN_OK(kiln_trainer_scale_grads(trainer_, 0.5f));
  ASSERT_KILN_OK(kiln_trainer_clip_grad_value(trainer_, 1e-3f));
  ASSERT_KILN_OK(kiln_trainer_grad_stats(trainer_, &clipped));
  EXPECT_LE(clipped.max_abs, 1e-3f);
  ASSERT_KILN_OK(kiln_trainer_add_grad_noise(trainer_, 0.1f, 5));

  std::vector<float> grad(5 * 3);
  ASSERT_KILN_OK(kiln_trainer_read_gradient(trainer_, "w", grad.data(),
                                            grad.size() * 4));
  std::vector<float> set(grad.size(), 0.25f);
  ASSERT_KILN_OK(kiln_trainer_write_gradient(trainer_, "w", set.data(),
                                             set.size() * 4));
  ASSERT_KILN_OK(kiln_trainer_read(trainer_, "grad.w", grad.data(),
                                   grad.size() * 4));
  EXPECT_EQ(grad, set);
  ASSERT_KILN_OK(kiln_trainer_apply_update(trainer_, 0.01f));
  int64_t step = 0;
  ASSERT_KILN_OK(kiln_trainer_step_count(trainer_, &step));
  EXPECT_EQ(step, 1);
}

TEST_F(CApiTest, SessionRunsAnEntry) {
  kiln::testing::LinRegOptions options;
  options.inference_only = true;
  LoadLinReg(options);
  kiln_session* session = nullptr;
  ASSERT_KILN_OK(kiln_session_new(module_, 0, &session));
  Batch batch;
  kiln_outputs* outputs = nullptr;
  ASSERT_KILN_OK(kiln_session_run(session, "predict", batch.inputs, 1,
                                  &outputs));
  size_t count = 0;
  ASSERT_KILN_OK(kiln_outputs_count(outputs, &count));
  ASSERT_EQ(count, 1u);
  kiln_tensor_info info;
  ASSERT_KILN_OK(kiln_outputs_info(outputs, 0, &info));
  EXPECT_STREQ(info.name, "pred");
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.shape[0], 16);
  EXPECT_EQ(info.shape[1], 3);
  std::vector<float> pred(16 * 3);
  ASSERT_KILN_OK(kiln_outputs_read(outputs, "pred", pred.data(), 16 * 3 * 4));
  // pred = x W + b with the session's parameters.
  std::vector<float> w(15), b(3);
  ASSERT_KILN_OK(kiln_session_read(session, "w", w.data(), 60));
  ASSERT_KILN_OK(kiln_session_read(session, "b", b.data(), 12));
  for (int j = 0; j < 3; ++j) {
    float want = b[j];
    for (int k = 0; k < 5; ++k) want += batch.data.x[k] * w[k * 3 + j];
    EXPECT_NEAR(pred[j], want, 1e-5);
  }
  EXPECT_KILN_ERROR(kiln_session_run(session, "forward", batch.inputs, 1,
                                     &outputs),
                    KILN_NOT_FOUND, "forward");
  kiln_outputs_free(outputs);
  kiln_session_close(session);
}

TEST_F(CApiTest, BadHandlesAreErrors) {
  size_t count = 0;
  EXPECT_KILN_ERROR(kiln_module_entry_count(nullptr, &count),
                    KILN_INVALID_ARGUMENT, "module is null");
  int not_a_handle = 0;
  EXPECT_KILN_ERROR(
      kiln_module_entry_count(reinterpret_cast<kiln_module*>(&not_a_handle),
                              &count),
      KILN_INVALID_ARGUMENT, "not an open handle");
  // A handle of another kind.
  EXPECT_KILN_ERROR(
      kiln_module_entry_count(reinterpret_cast<kiln_module*>(runtime_), &count),
      KILN_INVALID_ARGUMENT, "not an open handle");
  EXPECT_KILN_ERROR(kiln_trainer_step(nullptr, nullptr, 0, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "trainer is null");
  EXPECT_KILN_ERROR(kiln_module_load(runtime_, "x.kiln", nullptr),
                    KILN_INVALID_ARGUMENT, "out is null");
  EXPECT_KILN_ERROR(kiln_module_load(runtime_, nullptr, &module_),
                    KILN_INVALID_ARGUMENT, "path is null");
  EXPECT_EQ(module_, nullptr);
  // Closing null or twice is harmless.
  kiln_module_close(nullptr);
  kiln_outputs_free(nullptr);
}

TEST_F(CApiTest, ClosedModuleIsAnErrorButItsTrainerLivesOn) {
  NewLinRegTrainer();
  kiln_module_close(module_);
  size_t count = 0;
  EXPECT_KILN_ERROR(kiln_module_entry_count(module_, &count),
                    KILN_INVALID_ARGUMENT, "not an open handle");
  kiln_trainer* another = nullptr;
  EXPECT_KILN_ERROR(kiln_trainer_new(module_, 0, &another),
                    KILN_INVALID_ARGUMENT, "module");
  module_ = nullptr;
  kiln_runtime_close(runtime_);
  runtime_ = nullptr;
  Batch batch;
  EXPECT_KILN_OK(kiln_trainer_step(trainer_, batch.inputs, 2, 0.01f, nullptr));
}

TEST_F(CApiTest, BadFilesAreErrors) {
  const char garbage[] = "not an artifact at all";
  EXPECT_KILN_ERROR(
      kiln_module_load_from_memory(runtime_, garbage, sizeof garbage, &module_),
      KILN_INVALID_ARGUMENT, "");
  EXPECT_KILN_ERROR(kiln_module_load_from_memory(runtime_, nullptr, 10,
                                                 &module_),
                    KILN_INVALID_ARGUMENT, "data is null");
  EXPECT_NE(kiln_module_load(runtime_, "/nonexistent/m.kiln", &module_),
            KILN_OK);
  EXPECT_NE(std::string(kiln_last_error()).find("/nonexistent/m.kiln"),
            std::string::npos)
      << kiln_last_error();
  EXPECT_EQ(module_, nullptr);
}

TEST_F(CApiTest, BadInputsAreRejectedBeforeAnyUpdate) {
  NewLinRegTrainer();
  Batch batch;
  float w_before[15], w_after[15];
  ASSERT_KILN_OK(kiln_trainer_read(trainer_, "w", w_before, sizeof w_before));

  kiln_input bad[2] = {batch.inputs[0], batch.inputs[1]};
  bad[0].dtype = KILN_I32;  // same size, wrong dtype
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, bad, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "x");
  int64_t wrong_shape[2] = {5, 16};
  bad[0] = batch.inputs[0];
  bad[0].shape = wrong_shape;
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, bad, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "x");
  bad[0] = batch.inputs[0];
  bad[0].size_bytes -= 4;
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, bad, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "size_bytes");
  bad[0] = batch.inputs[0];
  bad[0].dtype = static_cast<kiln_dtype>(99);
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, bad, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "unknown dtype 99");
  bad[0] = batch.inputs[0];
  bad[0].rank = 40;
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, bad, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "rank 40");
  bad[0] = batch.inputs[0];
  bad[0].data = nullptr;
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, bad, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "data is null");
  bad[0] = batch.inputs[0];
  bad[0].name = nullptr;
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, bad, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "null name");
  bad[0] = batch.inputs[1];  // y twice, x missing
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, bad, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "given twice");
  EXPECT_NE(kiln_trainer_step(trainer_, batch.inputs, 1, 0.1f, nullptr),
            KILN_OK);  // y missing
  EXPECT_KILN_ERROR(kiln_trainer_step(trainer_, nullptr, 2, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "inputs is null");

  int64_t step = -1;
  ASSERT_KILN_OK(kiln_trainer_step_count(trainer_, &step));
  EXPECT_EQ(step, 0);
  ASSERT_KILN_OK(kiln_trainer_read(trainer_, "w", w_after, sizeof w_after));
  EXPECT_EQ(0, std::memcmp(w_before, w_after, sizeof w_before));
}

TEST_F(CApiTest, UnknownNamesAndWrongSizes) {
  NewLinRegTrainer();
  float w[15];
  EXPECT_KILN_ERROR(kiln_trainer_read(trainer_, "nope", w, sizeof w),
                    KILN_NOT_FOUND, "nope");
  EXPECT_KILN_ERROR(kiln_trainer_read(trainer_, "w", w, 12),
                    KILN_INVALID_ARGUMENT, "w holds 60 bytes");
  EXPECT_KILN_ERROR(kiln_trainer_write(trainer_, "w", nullptr, sizeof w),
                    KILN_INVALID_ARGUMENT, "buffer is null");
  EXPECT_KILN_ERROR(kiln_trainer_read_gradient(trainer_, "nope", w, sizeof w),
                    KILN_NOT_FOUND, "nope");
  EXPECT_KILN_ERROR(kiln_trainer_read(trainer_, nullptr, w, sizeof w),
                    KILN_INVALID_ARGUMENT, "name is null");
  size_t count = 0;
  EXPECT_KILN_ERROR(kiln_module_input_count(module_, "nope", &count),
                    KILN_NOT_FOUND, "no entry nope; the artifact has");
  kiln_tensor_info info;
  EXPECT_KILN_ERROR(kiln_module_input(module_, "train_step", 1000, &info),
                    KILN_OUT_OF_RANGE, "1000");
  EXPECT_KILN_ERROR(kiln_trainer_restore(trainer_, "/nonexistent/ckpt"),
                    KILN_NOT_FOUND, "");
  int64_t step = 0;
  EXPECT_KILN_OK(kiln_trainer_step_count(trainer_, &step));
  EXPECT_STREQ(kiln_last_error(), "");
}

TEST_F(CApiTest, ThreadsTrainTheirOwnAndShareOneTrainer) {
  NewLinRegTrainer();
  constexpr int kThreads = 4, kSteps = 20;
  std::vector<std::thread> threads;
  std::vector<kiln_status> own(kThreads, KILN_UNKNOWN);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Batch batch;
      kiln_trainer* mine = nullptr;
      kiln_status status = kiln_trainer_new(module_, t, &mine);
      for (int i = 0; i < kSteps && status == KILN_OK; ++i) {
        status = kiln_trainer_step(mine, batch.inputs, 2, 0.01f, nullptr);
        if (status == KILN_OK) {
          status = kiln_trainer_step(trainer_, batch.inputs, 2, 0.01f,
                                     nullptr);
        }
      }
      kiln_trainer_close(mine);
      own[t] = status;
    });
  }
  for (auto& thread : threads) thread.join();
  for (kiln_status status : own) EXPECT_EQ(status, KILN_OK);
  int64_t step = 0;
  ASSERT_KILN_OK(kiln_trainer_step_count(trainer_, &step));
  EXPECT_EQ(step, kThreads * kSteps);
}

TEST_F(CApiTest, DeviceTensorsRoundTrip) {
  std::mt19937 random(FreshSeed());
  std::uniform_int_distribution<int32_t> draw(-1000000, 1000000);
  std::vector<int32_t> values(4 * 3 * 2);
  for (int32_t& v : values) v = draw(random);
  const int64_t shape[] = {4, 3, 2};
  kiln_tensor* tensor = nullptr;
  ASSERT_KILN_OK(kiln_tensor_new(runtime_, KILN_I32, 3, shape, &tensor));
  std::vector<int32_t> back(values.size(), 1);
  ASSERT_KILN_OK(kiln_tensor_read(tensor, back.data(), back.size() * 4));
  EXPECT_EQ(back, std::vector<int32_t>(values.size(), 0)) << "not zeroed";
  ASSERT_KILN_OK(kiln_tensor_write(tensor, values.data(), values.size() * 4));
  ASSERT_KILN_OK(kiln_tensor_read(tensor, back.data(), back.size() * 4));
  EXPECT_EQ(back, values);

  kiln_tensor_info info;
  ASSERT_KILN_OK(kiln_tensor_describe(tensor, &info));
  EXPECT_STREQ(info.name, "");
  EXPECT_EQ(info.dtype, KILN_I32);
  EXPECT_EQ(info.role, KILN_ROLE_IO);
  ASSERT_EQ(info.rank, 3);
  EXPECT_EQ(info.shape[0], 4);
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_EQ(info.shape[2], 2);
  EXPECT_EQ(info.size_bytes, values.size() * 4);
  uint64_t pointer = 0;
  size_t size = 0;
  ASSERT_KILN_OK(kiln_tensor_device_pointer(tensor, &pointer, &size));
  EXPECT_NE(pointer, 0u);
  EXPECT_EQ(size, values.size() * 4);

  // A new tensor in the block of a closed one holds zeros, not its values.
  kiln_tensor_close(tensor);
  ASSERT_KILN_OK(kiln_tensor_new(runtime_, KILN_I32, 3, shape, &tensor));
  ASSERT_KILN_OK(kiln_tensor_read(tensor, back.data(), back.size() * 4));
  EXPECT_EQ(back, std::vector<int32_t>(values.size(), 0));

  // A scalar, and a tensor that outlives its runtime's handle.
  kiln_tensor* scalar = nullptr;
  ASSERT_KILN_OK(kiln_tensor_new(runtime_, KILN_F32, 0, nullptr, &scalar));
  kiln_runtime_close(runtime_);
  runtime_ = nullptr;
  const float pi = 3.25f;
  float got = 0;
  ASSERT_KILN_OK(kiln_tensor_write(scalar, &pi, 4));
  ASSERT_KILN_OK(kiln_tensor_read(scalar, &got, 4));
  EXPECT_EQ(got, pi);
  kiln_tensor_close(scalar);
  kiln_tensor_close(tensor);
}

TEST_F(CApiTest, DeviceTensorMisuseIsAnError) {
  const int64_t shape[] = {2, 3};
  kiln_tensor* tensor = nullptr;
  EXPECT_KILN_ERROR(kiln_tensor_new(nullptr, KILN_F32, 2, shape, &tensor),
                    KILN_INVALID_ARGUMENT, "runtime is null");
  EXPECT_KILN_ERROR(kiln_tensor_new(runtime_, KILN_F32, 2, shape, nullptr),
                    KILN_INVALID_ARGUMENT, "out is null");
  EXPECT_KILN_ERROR(kiln_tensor_new(runtime_, static_cast<kiln_dtype>(42), 2,
                                    shape, &tensor),
                    KILN_INVALID_ARGUMENT, "unknown dtype 42");
  EXPECT_KILN_ERROR(kiln_tensor_new(runtime_, KILN_F32, 17, shape, &tensor),
                    KILN_INVALID_ARGUMENT, "rank 17");
  EXPECT_KILN_ERROR(kiln_tensor_new(runtime_, KILN_F32, 2, nullptr, &tensor),
                    KILN_INVALID_ARGUMENT, "shape is null");
  const int64_t negative[] = {2, -3};
  EXPECT_KILN_ERROR(kiln_tensor_new(runtime_, KILN_F32, 2, negative, &tensor),
                    KILN_INVALID_ARGUMENT, "bad dimension -3");
  const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_KILN_ERROR(kiln_tensor_new(runtime_, KILN_F32, 2, huge, &tensor),
                    KILN_INVALID_ARGUMENT, "bad dimension");
  EXPECT_EQ(tensor, nullptr);

  ASSERT_KILN_OK(kiln_tensor_new(runtime_, KILN_F32, 2, shape, &tensor));
  float data[6] = {};
  EXPECT_KILN_ERROR(kiln_tensor_write(tensor, data, 20), KILN_INVALID_ARGUMENT,
                    "tensor holds 24 bytes, the caller's buffer 20");
  EXPECT_KILN_ERROR(kiln_tensor_read(tensor, data, 28), KILN_INVALID_ARGUMENT,
                    "holds 24 bytes");
  EXPECT_KILN_ERROR(kiln_tensor_read(tensor, nullptr, 24),
                    KILN_INVALID_ARGUMENT, "buffer is null");
  EXPECT_KILN_ERROR(kiln_tensor_describe(tensor, nullptr),
                    KILN_INVALID_ARGUMENT, "info is null");
  uint64_t pointer = 0;
  size_t size = 0;
  EXPECT_KILN_ERROR(kiln_tensor_device_pointer(tensor, nullptr, &size),
                    KILN_INVALID_ARGUMENT, "pointer is null");
  EXPECT_KILN_ERROR(kiln_tensor_device_pointer(tensor, &pointer, nullptr),
                    KILN_INVALID_ARGUMENT, "size_bytes is null");
  EXPECT_EQ(pointer, 0u);
  EXPECT_KILN_ERROR(kiln_tensor_read(nullptr, data, 24),
                    KILN_INVALID_ARGUMENT, "tensor is null");
  // Handles of another kind, both ways.
  EXPECT_KILN_ERROR(
      kiln_tensor_read(reinterpret_cast<kiln_tensor*>(runtime_), data, 24),
      KILN_INVALID_ARGUMENT, "not an open handle");
  EXPECT_KILN_ERROR(
      kiln_runtime_open(0, nullptr), KILN_INVALID_ARGUMENT, "out is null");
  size_t count = 0;
  EXPECT_KILN_ERROR(
      kiln_module_entry_count(reinterpret_cast<kiln_module*>(tensor), &count),
      KILN_INVALID_ARGUMENT, "not an open handle");
  kiln_tensor_close(tensor);
  EXPECT_KILN_ERROR(kiln_tensor_read(tensor, data, 24), KILN_INVALID_ARGUMENT,
                    "not an open handle");
  EXPECT_KILN_ERROR(kiln_tensor_device_pointer(tensor, &pointer, &size),
                    KILN_INVALID_ARGUMENT, "not an open handle");
  kiln_tensor_close(tensor);  // twice: harmless
  kiln_tensor_close(nullptr);
}

// Two trainers of one seed, one fed host data, the other the same data in
// device tensors (or both kinds at once): every loss, gradient, parameter and
// output agrees to the bit.
TEST_F(CApiTest, DeviceInputsGiveTheStepsOfHostInputs) {
  LoadLinReg();
  kiln_trainer* device_fed = nullptr;
  ASSERT_KILN_OK(kiln_trainer_new(module_, 3, &trainer_));
  ASSERT_KILN_OK(kiln_trainer_new(module_, 3, &device_fed));
  Batch batch(FreshSeed());
  kiln_tensor* x = DeviceCopy(runtime_, {16, 5}, batch.data.x);
  kiln_tensor* y = DeviceCopy(runtime_, {16, 3}, batch.data.y);
  const kiln_device_input both[] = {{"x", x}, {"y", y}};
  const kiln_device_input only_x[] = {{"x", x}};

  for (int i = 0; i < 5; ++i) {
    float host_loss = 0, device_loss = 1;
    ASSERT_KILN_OK(kiln_trainer_step(trainer_, batch.inputs, 2, 0.05f,
                                     &host_loss));
    if (i % 2 == 0) {
      ASSERT_KILN_OK(kiln_trainer_step_device(device_fed, nullptr, 0, both, 2,
                                              0.05f, &device_loss));
    } else {
      ASSERT_KILN_OK(kiln_trainer_step_device(device_fed, &batch.inputs[1], 1,
                                              only_x, 1, 0.05f, &device_loss));
    }
    EXPECT_EQ(0, std::memcmp(&host_loss, &device_loss, 4)) << "step " << i;
  }
  float host_loss = 0, device_loss = 1;
  ASSERT_KILN_OK(kiln_trainer_forward_backward(trainer_, batch.inputs, 2,
                                               &host_loss));
  ASSERT_KILN_OK(kiln_trainer_forward_backward_device(
      device_fed, nullptr, 0, both, 2, &device_loss));
  EXPECT_EQ(0, std::memcmp(&host_loss, &device_loss, 4));
  for (const char* name : {"w", "b", "grad.w", "grad.b", "adam_m.w"}) {
    const size_t bytes = name[std::strlen(name) - 1] == 'w' ? 60 : 12;
    EXPECT_EQ(ReadBytes(trainer_, name, bytes),
              ReadBytes(device_fed, name, bytes))
        << name;
  }

  kiln_outputs* host_out = nullptr;
  kiln_outputs* device_out = nullptr;
  ASSERT_KILN_OK(kiln_trainer_forward(trainer_, batch.inputs, 2, &host_out));
  ASSERT_KILN_OK(kiln_trainer_forward_device(device_fed, &batch.inputs[0], 1,
                                             &both[1], 1, &device_out));
  std::vector<float> host_pred(48), device_pred(48, -1);
  ASSERT_KILN_OK(kiln_outputs_read(host_out, "pred", host_pred.data(), 192));
  ASSERT_KILN_OK(
      kiln_outputs_read(device_out, "pred", device_pred.data(), 192));
  EXPECT_EQ(0, std::memcmp(host_pred.data(), device_pred.data(), 192));
  kiln_outputs_free(host_out);
  kiln_outputs_free(device_out);
  kiln_trainer_close(device_fed);
  kiln_tensor_close(x);
  kiln_tensor_close(y);
}

TEST_F(CApiTest, SessionRunsOnDeviceInputs) {
  kiln::testing::LinRegOptions options;
  options.inference_only = true;
  LoadLinReg(options);
  kiln_session* session = nullptr;
  ASSERT_KILN_OK(kiln_session_new(module_, 0, &session));
  Batch batch(FreshSeed());
  kiln_tensor* x = DeviceCopy(runtime_, {16, 5}, batch.data.x);
  const kiln_device_input device_x = {"x", x};
  kiln_outputs* host_out = nullptr;
  kiln_outputs* device_out = nullptr;
  ASSERT_KILN_OK(kiln_session_run(session, "predict", batch.inputs, 1,
                                  &host_out));
  ASSERT_KILN_OK(kiln_session_run_device(session, "predict", nullptr, 0,
                                         &device_x, 1, &device_out));
  std::vector<float> host_pred(48), device_pred(48, -1);
  ASSERT_KILN_OK(kiln_outputs_read(host_out, "pred", host_pred.data(), 192));
  ASSERT_KILN_OK(
      kiln_outputs_read(device_out, "pred", device_pred.data(), 192));
  EXPECT_EQ(0, std::memcmp(host_pred.data(), device_pred.data(), 192));
  EXPECT_KILN_ERROR(kiln_session_run_device(session, "predict", nullptr, 0,
                                            &device_x, 1, nullptr),
                    KILN_INVALID_ARGUMENT, "out is null");
  kiln_outputs_free(host_out);
  kiln_outputs_free(device_out);
  kiln_session_close(session);
  kiln_tensor_close(x);
}

TEST_F(CApiTest, BadDeviceInputsAreRejectedBeforeAnyUpdate) {
  NewLinRegTrainer();
  Batch batch(FreshSeed());
  kiln_tensor* x = DeviceCopy(runtime_, {16, 5}, batch.data.x);
  const std::vector<uint8_t> w_before = ReadBytes(trainer_, "w", 60);
  const kiln_input* y_host = &batch.inputs[1];
  auto step = [&](kiln_tensor* tensor) {
    const kiln_device_input in = {"x", tensor};
    return kiln_trainer_step_device(trainer_, y_host, 1, &in, 1, 0.1f,
                                    nullptr);
  };

  kiln_tensor* wrong = nullptr;
  const int64_t x_shape[] = {16, 5}, transposed[] = {5, 16};
  ASSERT_KILN_OK(kiln_tensor_new(runtime_, KILN_I32, 2, x_shape, &wrong));
  EXPECT_KILN_ERROR(step(wrong), KILN_INVALID_ARGUMENT, "must be f32[16, 5]");
  kiln_tensor_close(wrong);
  ASSERT_KILN_OK(kiln_tensor_new(runtime_, KILN_F32, 2, transposed, &wrong));
  EXPECT_KILN_ERROR(step(wrong), KILN_INVALID_ARGUMENT, "must be f32[16, 5]");
  kiln_tensor_close(wrong);
  ASSERT_KILN_OK(kiln_tensor_new(runtime_, KILN_F32, 1, x_shape, &wrong));
  EXPECT_KILN_ERROR(step(wrong), KILN_INVALID_ARGUMENT, "must be f32[16, 5]");
  kiln_tensor_close(wrong);
  EXPECT_KILN_ERROR(step(wrong), KILN_INVALID_ARGUMENT,
                    "device input x: its tensor is not an open handle");
  EXPECT_KILN_ERROR(step(nullptr), KILN_INVALID_ARGUMENT,
                    "device input x: its tensor is null");
  EXPECT_KILN_ERROR(step(reinterpret_cast<kiln_tensor*>(trainer_)),
                    KILN_INVALID_ARGUMENT, "not an open handle");

  // A tensor of another runtime.
  kiln_runtime* other = nullptr;
  ASSERT_KILN_OK(kiln_runtime_open(0, &other));
  kiln_tensor* foreign = DeviceCopy(other, {16, 5}, batch.data.x);
  EXPECT_KILN_ERROR(step(foreign), KILN_INVALID_ARGUMENT,
                    "device input x: its tensor belongs to another runtime");
  kiln_tensor_close(foreign);
  kiln_runtime_close(other);

  // Names: twice (host and device), none, unknown; null arrays.
  const kiln_device_input x_device = {"x", x}, y_device = {"y", x};
  EXPECT_KILN_ERROR(kiln_trainer_step_device(trainer_, batch.inputs, 2,
                                             &x_device, 1, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "input x is given twice");
  const kiln_device_input unnamed = {nullptr, x};
  EXPECT_KILN_ERROR(kiln_trainer_step_device(trainer_, y_host, 1, &unnamed, 1,
                                             0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "device input 0: null name");
  EXPECT_KILN_ERROR(kiln_trainer_step_device(trainer_, y_host, 1, nullptr, 1,
                                             0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "device_inputs is null");
  EXPECT_KILN_ERROR(kiln_trainer_step_device(trainer_, &batch.inputs[0], 1,
                                             &y_device, 1, 0.1f, nullptr),
                    KILN_INVALID_ARGUMENT, "y");  // x's tensor as y
  EXPECT_KILN_ERROR(kiln_trainer_forward_backward_device(
                        trainer_, nullptr, 0, &x_device, 1, nullptr),
                    KILN_INVALID_ARGUMENT, "missing input 'y'");
  kiln_outputs* out = nullptr;
  EXPECT_KILN_ERROR(kiln_trainer_forward_device(trainer_, y_host, 1, &x_device,
                                                1, nullptr),
                    KILN_INVALID_ARGUMENT, "out is null");
  EXPECT_KILN_ERROR(kiln_trainer_forward_device(nullptr, y_host, 1, &x_device,
                                                1, &out),
                    KILN_INVALID_ARGUMENT, "trainer is null");
  EXPECT_EQ(out, nullptr);

  int64_t steps = -1;
  ASSERT_KILN_OK(kiln_trainer_step_count(trainer_, &steps));
  EXPECT_EQ(steps, 0);
  EXPECT_EQ(ReadBytes(trainer_, "w", 60), w_before);
  // The right tensor still works; closing it after the call is fine.
  EXPECT_KILN_OK(step(x));
  kiln_tensor_close(x);
}

TEST_F(CApiTest, LastErrorIsPerThread) {
  size_t count = 0;
  EXPECT_NE(kiln_module_entry_count(nullptr, &count), KILN_OK);
  std::string other;
  std::thread([&] {
    other = kiln_last_error();
    kiln_runtime* rt = nullptr;
    kiln_runtime_open(0, &rt);
    kiln_runtime_close(rt);
  }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(kiln_last_error()).find("module is null"),
            std::string::npos);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MLP_ARTIFACT\n", argv[0]);
    return 2;
  }
  mlp_path = argv[1];
  return RUN_ALL_TESTS();
}
