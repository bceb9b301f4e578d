#include "kiln/typed.h"

#include <type_traits>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "runtime/artifact/artifact.h"
#include "runtime/artifact/artifact_writer.h"
#include "runtime/artifact/interface.h"
#include "runtime/artifact/test_artifacts.h"
#include "runtime/io/safetensors.h"

namespace kiln {
namespace {

using artifact::testing::TrainingArtifact;

using X = TypedInput<DType::kF32, 4, 3>;
static_assert(X::kDType == DType::kF32);
static_assert(X::kRank == 2);
static_assert(X::kShape[0] == 4 && X::kShape[1] == 3);
static_assert(X::kNumElements == 12);
static_assert(std::is_same_v<X::Element, float>);
static_assert(TypedInput<DType::kI32>::kNumElements == 1);
static_assert(std::is_same_v<TypedInput<DType::kI32, 2>::Element, int32_t>);
static_assert(std::is_same_v<TypedInput<DType::kBF16, 2>::Element, uint16_t>);
static_assert(std::is_same_v<TypedInput<DType::kI1, 2>::Element, uint8_t>);
// The static shape and dtype are the type: values of another size, element
// type or static type do not convert.
static_assert(std::is_convertible_v<std::array<float, 12>, X>);
static_assert(!std::is_convertible_v<std::array<float, 11>, X>);
static_assert(!std::is_convertible_v<std::array<int32_t, 12>, X>);
static_assert(!std::is_convertible_v<std::vector<float>, X>);
static_assert(!std::is_convertible_v<TypedInput<DType::kF32, 3, 4>, X>);
static_assert(!std::is_convertible_v<TypedInput<DType::kBF16, 4, 3>, X>);
static_assert(std::is_convertible_v<TypedTensor<DType::kF32, 4, 3>, X>);
static_assert(!std::is_convertible_v<TypedTensor<DType::kF32, 12>, X>);

TEST(TypedInputTest, HoldsHostValuesWithItsStaticType) {
  X unset;
  EXPECT_FALSE(unset.has_value());
  std::array<float, 12> values{};
  values[5] = 2.5f;
  X x = values;
  ASSERT_TRUE(x.has_value());
  EXPECT_FALSE(x.input().on_device());
  EXPECT_EQ(x.input().dtype(), DType::kF32);
  EXPECT_EQ(x.input().shape(), (Shape{4, 3}));
  EXPECT_EQ(x.input().host_bytes(), 48u);
  float read;
  std::memcpy(&read, static_cast<const char*>(x.input().host_data()) + 5 * 4,
              4);
  EXPECT_EQ(read, 2.5f);

  X view = X::View(values);
  EXPECT_EQ(view.input().host_data(), values.data());
}

TEST(TypedInputTest, RunTimeConversionsCheckSizeDtypeAndShape) {
  EXPECT_TRUE(X::FromValues(std::vector<float>(12)).ok());
  absl::StatusOr<X> few = X::FromValues(std::vector<float>(11));
  ASSERT_FALSE(few.ok());
  EXPECT_EQ(few.status().message(),
            "expected 12 elements for f32[4, 3], got 11");

  EXPECT_TRUE(
      X::FromHost(io::HostTensor::F32({4, 3}, std::vector<float>(12))).ok());
  absl::StatusOr<X> shape =
      X::FromHost(io::HostTensor::F32({3, 4}, std::vector<float>(12)));
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(shape.status().message(),
            "host tensor is f32[3, 4], expected f32[4, 3]");
  absl::StatusOr<X> dtype =
      X::FromHost(io::HostTensor::I32({4, 3}, std::vector<int32_t>(12)));
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.status().message(),
            "host tensor is i32[4, 3], expected f32[4, 3]");
}

TEST(TypedTensorTest, WrapChecksDtypeAndShape) {
  absl::StatusOr<TypedTensor<DType::kF32>> scalar =
      TypedTensor<DType::kF32>::Wrap(Tensor(), "output 'loss' of forward");
  EXPECT_TRUE(scalar.ok()) << scalar.status();
  absl::StatusOr<TypedTensor<DType::kF32, 2>> vector =
      TypedTensor<DType::kF32, 2>::Wrap(Tensor(), "parameter 'b'");
  ASSERT_FALSE(vector.ok());
  EXPECT_EQ(vector.status().message(),
            "parameter 'b' is f32[], expected f32[2]");
  absl::StatusOr<TypedTensor<DType::kF32>> error =
      TypedTensor<DType::kF32>::Wrap(
          absl::StatusOr<Tensor>(absl::NotFoundError("no parameter 'q'")));
  EXPECT_EQ(error.status().code(), absl::StatusCode::kNotFound);
}

TEST(InputsBuilderTest, NamesTheFirstUnsetInput) {
  typed::InputsBuilder complete("train_step");
  complete.Add("x", X(std::array<float, 12>{}));
  absl::StatusOr<Inputs> inputs = std::move(complete).Finish();
  ASSERT_TRUE(inputs.ok());
  EXPECT_EQ(inputs->size(), 1u);
  EXPECT_EQ(inputs->count("x"), 1u);

  typed::InputsBuilder partial("train_step");
  partial.Add("x", X(std::array<float, 12>{}));
  partial.Add("y", X());
  partial.Add("z", X());
  absl::StatusOr<Inputs> missing = std::move(partial).Finish();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "input 'y' of train_step is not set");
}

TEST(InterfaceTest, SignatureListsCallerInputsOutputsAndBuffers) {
  artifact::Artifact training = TrainingArtifact();
  std::string signature = artifact::InterfaceSignature(training);
  EXPECT_TRUE(absl::StartsWith(signature, "kiln-interface 1\nentry "))
      << signature;
  EXPECT_TRUE(absl::StrContains(signature, "\nentry train_step\n"))
      << signature;
  EXPECT_TRUE(absl::StrContains(signature, "\n  lr\n")) << signature;
  EXPECT_TRUE(absl::StrContains(signature, "\nbuffer w parameter f32["))
      << signature;
  EXPECT_EQ(artifact::InterfaceFingerprint(training),
            artifact::InterfaceFingerprint(TrainingArtifact()));
  EXPECT_NE(
      artifact::InterfaceFingerprint(training),
      artifact::InterfaceFingerprint(artifact::testing::MinimalArtifact()));
}

typed::ArtifactIdentity IdentityOf(const artifact::Artifact& artifact,
                                   const std::string& signature,
                                   uint64_t checksum) {
  typed::ArtifactIdentity identity;
  identity.header = "model.h";
  identity.checksum = checksum;
  identity.interface_fingerprint = artifact::InterfaceFingerprint(artifact);
  identity.interface_signature = signature.c_str();
  return identity;
}

TEST(CheckArtifactTest, AcceptsItsArtifact) {
  absl::StatusOr<std::string> bytes = WriteArtifact(TrainingArtifact());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<artifact::Artifact> loaded = artifact::LoadArtifact(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::string signature = artifact::InterfaceSignature(*loaded);
  EXPECT_TRUE(typed::CheckArtifact(
                  *loaded, IdentityOf(*loaded, signature, loaded->checksum))
                  .ok());
  // A header written without an artifact accepts any with its interface.
  EXPECT_TRUE(
      typed::CheckArtifact(*loaded, IdentityOf(*loaded, signature, 0)).ok());
}

TEST(CheckArtifactTest, RefusesAnotherBuildUnlessTheInterfaceIsEnough) {
  artifact::Artifact loaded = TrainingArtifact();
  loaded.checksum = 0x1234;
  std::string signature = artifact::InterfaceSignature(loaded);
  typed::ArtifactIdentity identity = IdentityOf(loaded, signature, 0x5678);
  absl::Status status = typed::CheckArtifact(loaded, identity);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(
      status.message(),
      "artifact does not match the typed header model.h: its checksum is "
      "0x0000000000001234, the header was written with the artifact "
      "0x0000000000005678"))
      << status;
  EXPECT_TRUE(
      typed::CheckArtifact(loaded, identity, typed::Match::kInterface).ok());
}

TEST(CheckArtifactTest, NamesTheFirstDifferenceOfTheInterface) {
  artifact::Artifact expected = TrainingArtifact();
  std::string signature = artifact::InterfaceSignature(expected);
  typed::ArtifactIdentity identity = IdentityOf(expected, signature, 0);

  artifact::Artifact other = expected;
  artifact::Entry* step = nullptr;
  for (artifact::Entry& entry : other.entries)
    if (entry.name == "train_step") step = &entry;
  ASSERT_NE(step, nullptr);
  artifact::TensorBinding* x = nullptr;
  for (artifact::TensorBinding& input : step->inputs)
    if (input.name == "x") x = &input;
  ASSERT_NE(x, nullptr);
  x->shape[0] += 1;
  absl::Status status =
      typed::CheckArtifact(other, identity, typed::Match::kInterface);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(
      status.message(),
      "artifact does not match the typed header model.h: its interface "
      "differs (entry train_step): the header has 'input x f32["))
      << status;
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "regenerate the header from this artifact's"))
      << status;

  status = typed::CheckArtifact(artifact::testing::MinimalArtifact(), identity,
                                typed::Match::kInterface);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace kiln
