#include "codegen/header/HeaderEmitter.h"

#include "runtime/artifact/interface.h"
#include "runtime/artifact/test_artifacts.h"

#include "gtest/gtest.h"

namespace mlir::kiln::codegen {
namespace {

namespace art = ::kiln::artifact;

HeaderOptions optionsFor(std::string className) {
  HeaderOptions options;
  options.className = std::move(className);
  options.headerName = "linear.h";
  options.source = "linear.mlir";
  return options;
}

bool contains(const std::string &text, const std::string &piece) {
  return text.find(piece) != std::string::npos;
}

TEST(HeaderEmitterTest, TrainingArtifact) {
  art::Artifact artifact = art::testing::TrainingArtifact();
  artifact.checksum = 0xabc;
  std::string text, error;
  ASSERT_TRUE(emitHeader(artifact, optionsFor("models::Linear"), text, error))
      << error;
  EXPECT_TRUE(contains(text, "#ifndef KILN_TYPED_MODELS_LINEAR_H_")) << text;
  EXPECT_TRUE(contains(text, "namespace models {\n\nclass Linear {")) << text;
  EXPECT_TRUE(contains(text, "kArtifactChecksum = 0x0000000000000abcULL;"));
  EXPECT_TRUE(contains(text, "struct TrainStepInputs {\n"
                             "    ::kiln::TypedInput<::kiln::DType::kF32, 32, "
                             "16> x;\n"
                             "    ::kiln::TypedInput<::kiln::DType::kF32, 32, "
                             "8> y;\n"))
      << text;
  EXPECT_TRUE(contains(text, "::absl::StatusOr<float> TrainStep(const "
                             "TrainStepInputs& inputs, float lr) {"))
      << text;
  EXPECT_TRUE(contains(text, "::absl::Status ApplyUpdate(float lr) {"));
  EXPECT_TRUE(contains(text, "::absl::StatusOr<ForwardOutputs> Forward("));
  EXPECT_TRUE(contains(text, "    using grad_w = ::kiln::TypedTensor<"
                             "::kiln::DType::kF32, 16, 8>;\n"))
      << text;
  EXPECT_TRUE(contains(text, "  ::absl::StatusOr<BufferTypes::momentum_w> "
                             "momentum_w() const {\n"
                             "    return BufferTypes::momentum_w::Wrap(\n"
                             "        trainer_->Buffer(\"momentum/w\"), "
                             "\"optimizer state 'momentum/w'\");\n"))
      << text;
  // The interface is the runtime's, line by line.
  EXPECT_TRUE(contains(text, "      \"kiln-interface 1\\n\"\n"
                             "      \"entry forward\\n\"\n"))
      << text;
}

TEST(HeaderEmitterTest, UnpinnedHeadersFitAnyArtifactOfTheInterface) {
  art::Artifact artifact = art::testing::TrainingArtifact();
  artifact.checksum = 0xabc;
  HeaderOptions options = optionsFor("Linear");
  options.pinChecksum = false;
  std::string text, error;
  ASSERT_TRUE(emitHeader(artifact, options, text, error)) << error;
  EXPECT_TRUE(contains(text, "kArtifactChecksum = 0x0000000000000000ULL;"));
}

TEST(HeaderEmitterTest, InferenceArtifactWrapsASession) {
  std::string text, error;
  ASSERT_TRUE(emitHeader(art::testing::MinimalArtifact(), optionsFor("Tiny"),
                         text, error))
      << error;
  EXPECT_TRUE(contains(text, "static constexpr bool kTrains = false;"));
  EXPECT_TRUE(contains(text, "session_->Run(\"forward\", *runtime_inputs_);"))
      << text;
  EXPECT_TRUE(contains(text, "::kiln::Session& GetSession()"));
}

TEST(HeaderEmitterTest, RefusesTwoNamesWithOneIdentifier) {
  art::Artifact artifact = art::testing::TrainingArtifact();
  for (art::ResidentBuffer &buffer : artifact.resident_buffers)
    if (buffer.name == "momentum/b")
      buffer.name = "grad.w";
  std::string text, error;
  EXPECT_FALSE(emitHeader(artifact, optionsFor("Linear"), text, error));
  EXPECT_EQ(error.substr(0, error.find(" (")),
            "optimizer state 'grad.w' and gradient 'grad/w' both map to the "
            "C++ name 'grad_w' in class Linear");
}

TEST(HeaderEmitterTest, RefusesInputsThatClashInTheirStruct) {
  art::Artifact artifact = art::testing::TrainingArtifact();
  for (art::Entry &entry : artifact.entries)
    for (art::TensorBinding &input : entry.inputs)
      if (input.name == "y")
        input.name = "x.";
  std::string text, error;
  EXPECT_FALSE(emitHeader(artifact, optionsFor("Linear"), text, error));
  EXPECT_TRUE(contains(error, "input 'x.' of forward_backward and input 'x' of "
                              "forward_backward both map to the C++ name 'x' "
                              "in struct ForwardBackwardInputs ("))
      << error;
}

TEST(HeaderEmitterTest, RefusesMembersItWritesItself) {
  art::Artifact artifact = art::testing::TrainingArtifact();
  artifact.resident_buffers[0].name = "Load";
  std::string text, error;
  EXPECT_FALSE(emitHeader(artifact, optionsFor("Linear"), text, error));
  EXPECT_TRUE(contains(error, "and its member Load both map")) << error;
}

TEST(HeaderEmitterTest, RefusesBadClassNames) {
  std::string text, error;
  EXPECT_FALSE(emitHeader(art::testing::MinimalArtifact(), optionsFor("a::1b"),
                          text, error));
  EXPECT_EQ(error, "the class name 'a::1b' is not a C++ name (identifiers "
                   "separated by '::')");
}

} // namespace
} // namespace mlir::kiln::codegen
