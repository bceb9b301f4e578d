// The typed header kilnc writes for samples/mlp.mlir (//samples:mlp_typed,
// built at build time): its static types, its identity check against the
// artifact written with it (no GPU needed) and, where a driver exists, a few
// training steps through it.
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/strings/match.h"
#include "kiln/runtime.h"
#include "kiln/typed.h"
#include "runtime/artifact/artifact.h"
#include "runtime/artifact/artifact_writer.h"
#include "runtime/artifact/interface.h"
#include "runtime/artifact/test_artifacts.h"
#include "samples/mlp_typed.h"
#include "gtest/gtest.h"

namespace kiln {
namespace embedded {
extern const unsigned char kMlpTypedArtifact[];
extern const size_t kMlpTypedArtifact_size;
} // namespace embedded
} // namespace kiln

namespace {

using kiln::DType;
using kiln::TypedInput;
using kiln::TypedTensor;
using kiln_samples::Mlp;

// Inputs, outputs and buffers carry the model's shapes and dtypes.
static_assert(std::is_same_v<decltype(Mlp::TrainStepInputs::x),
                             TypedInput<DType::kF32, 64, 8>>);
static_assert(std::is_same_v<decltype(Mlp::TrainStepInputs::y),
                             TypedInput<DType::kF32, 64, 1>>);
static_assert(std::is_same_v<decltype(Mlp::ForwardInputs::x),
                             TypedInput<DType::kF32, 64, 8>>);
static_assert(std::is_same_v<decltype(Mlp::ForwardBackwardInputs::y),
                             TypedInput<DType::kF32, 64, 1>>);
static_assert(std::is_same_v<decltype(Mlp::ForwardOutputs::loss),
                             TypedTensor<DType::kF32>>);
static_assert(
    std::is_same_v<Mlp::BufferTypes::w1, TypedTensor<DType::kF32, 8, 64>>);
static_assert(Mlp::BufferTypes::b1::kRank == 1 &&
              Mlp::BufferTypes::b1::kShape[0] == 64);
static_assert(
    std::is_same_v<Mlp::BufferTypes::grad_w2, TypedTensor<DType::kF32, 64, 1>>);
static_assert(
    std::is_same_v<Mlp::BufferTypes::adam_v_b2, TypedTensor<DType::kF32, 1>>);
static_assert(decltype(Mlp::TrainStepInputs::x)::kNumElements == 512);
static_assert(Mlp::kTrains);
static_assert(Mlp::kArtifactChecksum != 0, "-H pins the header");

// Methods per entry, with the Trainer's results.
static_assert(
    std::is_same_v<decltype(std::declval<Mlp &>().TrainStep(
                       std::declval<const Mlp::TrainStepInputs &>(), 0.1f)),
                   absl::StatusOr<float>>);
static_assert(std::is_same_v<decltype(std::declval<Mlp &>().ApplyUpdate(0.1f)),
                             absl::Status>);
static_assert(std::is_same_v<decltype(std::declval<Mlp &>().Forward(
                                 std::declval<const Mlp::ForwardInputs &>())),
                             absl::StatusOr<Mlp::ForwardOutputs>>);
static_assert(std::is_same_v<decltype(std::declval<const Mlp &>().grad_w1()),
                             absl::StatusOr<Mlp::BufferTypes::grad_w1>>);

// Values of the right static type convert; others do not
// (misuse_does_not_compile_test checks the compiler's errors).
using X = decltype(Mlp::TrainStepInputs::x);
using Y = decltype(Mlp::TrainStepInputs::y);
static_assert(std::is_convertible_v<std::array<float, 512>, X>);
static_assert(!std::is_convertible_v<std::array<float, 64>, X>);
static_assert(!std::is_convertible_v<std::array<int32_t, 512>, X>);
static_assert(!std::is_convertible_v<Y, X>);
static_assert(!std::is_convertible_v<Mlp::BufferTypes::w1, X>);
template <typename T, typename = void> struct HasMemberZ : std::false_type {};
template <typename T>
struct HasMemberZ<T, std::void_t<decltype(std::declval<T &>().z)>>
    : std::true_type {};
static_assert(!HasMemberZ<Mlp::TrainStepInputs>::value);

absl::string_view EmbeddedArtifact() {
  return absl::string_view(
      reinterpret_cast<const char *>(kiln::embedded::kMlpTypedArtifact),
      kiln::embedded::kMlpTypedArtifact_size);
}

kiln::artifact::Artifact LoadEmbedded() {
  absl::StatusOr<kiln::artifact::Artifact> artifact =
      kiln::artifact::LoadArtifact(EmbeddedArtifact());
  EXPECT_TRUE(artifact.ok()) << artifact.status();
  return artifact.ok() ? *std::move(artifact) : kiln::artifact::Artifact();
}

TEST(MlpTypedHeaderTest, FitsTheArtifactWrittenWithIt) {
  kiln::artifact::Artifact artifact = LoadEmbedded();
  EXPECT_EQ(artifact.checksum, Mlp::kArtifactChecksum);
  EXPECT_EQ(kiln::artifact::InterfaceFingerprint(artifact),
            Mlp::kInterfaceFingerprint);
  EXPECT_EQ(kiln::artifact::InterfaceSignature(artifact), Mlp::kInterface);
  EXPECT_TRUE(Mlp::Check(artifact).ok());
  EXPECT_TRUE(Mlp::Check(artifact, kiln::typed::Match::kInterface).ok());
}

TEST(MlpTypedHeaderTest, RefusesAnotherBuildOfTheModelUnlessAsked) {
  kiln::artifact::Artifact artifact = LoadEmbedded();
  // Another build: the same interface, other code.
  ASSERT_FALSE(artifact.kernels.empty());
  artifact.kernels[0].images[0].ptx += "\n// another build\n";
  absl::StatusOr<std::string> bytes = kiln::artifact::WriteArtifact(artifact);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<kiln::artifact::Artifact> other =
      kiln::artifact::LoadArtifact(*bytes);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_NE(other->checksum, Mlp::kArtifactChecksum);

  absl::Status status = Mlp::Check(*other);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(
      status.message(),
      "artifact does not match the typed header mlp_typed.h: its checksum is"))
      << status;
  EXPECT_TRUE(Mlp::Check(*other, kiln::typed::Match::kInterface).ok());
}

TEST(MlpTypedHeaderTest, RefusesAnotherInterfaceNamingTheDifference) {
  kiln::artifact::Artifact artifact = LoadEmbedded();
  // x as [8, 64]: the same bytes, another shape.
  bool changed = false;
  for (kiln::artifact::Entry &entry : artifact.entries)
    for (kiln::artifact::TensorBinding &input : entry.inputs)
      if (entry.name == "forward" && input.name == "x") {
        input.shape = {8, 64};
        changed = true;
      }
  ASSERT_TRUE(changed);
  absl::Status status = Mlp::Check(artifact, kiln::typed::Match::kInterface);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(
      status.message(),
      "artifact does not match the typed header mlp_typed.h: its interface "
      "differs (entry forward): the header has 'input x f32[64,8]', the "
      "artifact 'input x f32[8,64]'"))
      << status;

  status = Mlp::Check(kiln::artifact::testing::TrainingArtifact(),
                      kiln::typed::Match::kInterface);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "its interface differs"))
      << status;
}

TEST(MlpTypedHeaderTest, InputsMapToTheArtifactsNames) {
  Mlp::TrainStepInputs inputs;
  inputs.x = std::array<float, 512>{};
  absl::StatusOr<kiln::Inputs> unset = inputs.ToInputs();
  EXPECT_EQ(unset.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unset.status().message(), "input 'y' of train_step is not set");

  inputs.y = std::array<float, 64>{};
  absl::StatusOr<kiln::Inputs> all = inputs.ToInputs();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at("x").shape(), (kiln::Shape{64, 8}));
  EXPECT_EQ(all->at("y").shape(), (kiln::Shape{64, 1}));
  EXPECT_EQ(all->at("y").dtype(), DType::kF32);
}

// Needs a driver: trains a few steps through the header.
TEST(MlpTypedHeaderTest, TrainsOnTheGpu) {
  absl::StatusOr<std::unique_ptr<kiln::Runtime>> runtime =
      kiln::Runtime::Open(0);
  if (!runtime.ok() &&
      runtime.status().code() == absl::StatusCode::kUnavailable) {
    GTEST_SKIP() << "no GPU driver, training through the typed header is "
                    "checked on the GPU machine: "
                 << runtime.status();
  }
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  absl::StatusOr<std::unique_ptr<Mlp>> mlp =
      Mlp::LoadFromMemory(**runtime, EmbeddedArtifact(), {.seed = 1});
  ASSERT_TRUE(mlp.ok()) << mlp.status();

  // y = sum of x's features: learnable by the MLP.
  std::array<float, 512> x;
  std::array<float, 64> y{};
  for (int i = 0; i < 512; ++i) {
    x[i] = std::sin(0.37f * i);
    y[i / 8] += x[i] / 8;
  }
  Mlp::TrainStepInputs inputs;
  inputs.x = x;
  inputs.y = y;
  absl::StatusOr<float> first = (*mlp)->TrainStep(inputs, 1e-2f);
  ASSERT_TRUE(first.ok()) << first.status();
  float last = *first;
  for (int step = 0; step < 30; ++step) {
    absl::StatusOr<float> loss = (*mlp)->TrainStep(inputs, 1e-2f);
    ASSERT_TRUE(loss.ok()) << loss.status();
    last = *loss;
  }
  EXPECT_LT(last, *first);
  EXPECT_EQ((*mlp)->GetTrainer().step(), 31);

  absl::StatusOr<Mlp::BufferTypes::w1> w1 = (*mlp)->w1();
  ASSERT_TRUE(w1.ok()) << w1.status();
  EXPECT_EQ(w1->tensor().shape(), (kiln::Shape{8, 64}));

  Mlp::ForwardInputs forward;
  forward.x = inputs.x;
  forward.y = inputs.y;
  absl::StatusOr<Mlp::ForwardOutputs> outputs = (*mlp)->Forward(forward);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ(outputs->loss.tensor().shape(), kiln::Shape{});

  Mlp::TrainStepInputs unset;
  absl::StatusOr<float> refused = (*mlp)->TrainStep(unset, 1e-2f);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*mlp)->GetTrainer().step(), 31);
}

} // namespace
