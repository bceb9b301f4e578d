// kilnc writes the typed C++ header of an artifact: alone (--emit=header,
// it fits any artifact of the interface) or beside the artifact (-H, pinned
// to that artifact's checksum).
// RUN: kilnc %samples/mlp.mlir --emit=header -o %t.h
// RUN: FileCheck %s --input-file=%t.h
// RUN: FileCheck %s --check-prefix=UNPINNED --input-file=%t.h
// RUN: kilnc %samples/mlp.mlir -o %t.kiln -H %t.pinned.h --header-class=models::Mlp
// RUN: test -s %t.kiln
// RUN: FileCheck %s --check-prefix=PINNED --input-file=%t.pinned.h
// RUN: kilnc %samples/mlp.mlir --inference -o %t.inference.kiln --header=%t.inference.h
// RUN: FileCheck %s --check-prefix=INFERENCE --input-file=%t.inference.h
// This file is a model with names that are no C++ names.
// RUN: kilnc %s --emit=header -o - | FileCheck %s --check-prefix=NAMES

// CHECK: // header.mlir.tmp.h: the typed host API of the kiln artifact compiled from mlp.mlir.
// CHECK: #ifndef KILN_TYPED_MLP_H_
// CHECK: #include "kiln/runtime.h"
// CHECK-NEXT: #include "kiln/typed.h"
// CHECK: class Mlp {
// CHECK: static constexpr bool kTrains = true;
// CHECK: static constexpr const char* kInterface =
// CHECK-NEXT: "kiln-interface 1\n"
// CHECK-NEXT: "entry forward\n"
// CHECK-NEXT: "  input x f32[64,8]\n"
// CHECK-NEXT: "  input y f32[64,1]\n"
// CHECK-NEXT: "  output loss f32[]\n"
// CHECK: "buffer w1 parameter f32[8,64]\n"

// CHECK: struct ForwardInputs {
// CHECK-NEXT: ::kiln::TypedInput<::kiln::DType::kF32, 64, 8> x;
// CHECK-NEXT: ::kiln::TypedInput<::kiln::DType::kF32, 64, 1> y;
// CHECK: ::kiln::typed::InputsBuilder builder_("forward");
// CHECK-NEXT: builder_.Add("x", x);
// CHECK-NEXT: builder_.Add("y", y);
// CHECK: struct ForwardOutputs {
// CHECK-NEXT: ::kiln::TypedTensor<::kiln::DType::kF32> loss;
// CHECK: struct ForwardBackwardInputs {
// CHECK: struct TrainStepInputs {
// CHECK-NEXT: ::kiln::TypedInput<::kiln::DType::kF32, 64, 8> x;
// CHECK-NEXT: ::kiln::TypedInput<::kiln::DType::kF32, 64, 1> y;

// CHECK: static ::absl::StatusOr<::std::unique_ptr<Mlp>> Load(
// CHECK: ::kiln::typed::LoadModuleFile(runtime, path, Identity(), match);
// CHECK: static ::absl::StatusOr<::std::unique_ptr<Mlp>> LoadFromMemory(
// CHECK: static ::absl::StatusOr<::std::unique_ptr<Mlp>> FromModule(
// CHECK: auto held_ = module->NewTrainer(options);

// CHECK: ::absl::StatusOr<ForwardOutputs> Forward(const ForwardInputs& inputs) {
// CHECK: auto outputs_ = trainer_->Forward(*runtime_inputs_);
// CHECK: ::absl::StatusOr<float> ForwardBackward(const ForwardBackwardInputs& inputs) {
// CHECK: return trainer_->ForwardBackward(*runtime_inputs_);
// CHECK: ::absl::Status ApplyUpdate(float lr) {
// CHECK-NEXT: return trainer_->ApplyUpdate(lr);
// CHECK: ::absl::StatusOr<float> TrainStep(const TrainStepInputs& inputs, float lr) {
// CHECK: return trainer_->Step(*runtime_inputs_, lr);

// One accessor per resident buffer, named by the rule ("grad.w1" -> grad_w1).
// CHECK: struct BufferTypes {
// CHECK-NEXT: using w1 = ::kiln::TypedTensor<::kiln::DType::kF32, 8, 64>;
// CHECK-NEXT: using b1 = ::kiln::TypedTensor<::kiln::DType::kF32, 64>;
// CHECK: using grad_w1 = ::kiln::TypedTensor<::kiln::DType::kF32, 8, 64>;
// CHECK: using adam_m_w1 = ::kiln::TypedTensor<::kiln::DType::kF32, 8, 64>;
// CHECK: // parameter 'w1', f32[8, 64]
// CHECK-NEXT: ::absl::StatusOr<BufferTypes::w1> w1() const {
// CHECK-NEXT: return BufferTypes::w1::Wrap(
// CHECK-NEXT: trainer_->Buffer("w1"), "parameter 'w1'");
// CHECK: // gradient 'grad.w1', f32[8, 64]
// CHECK-NEXT: ::absl::StatusOr<BufferTypes::grad_w1> grad_w1() const {
// CHECK: trainer_->Buffer("grad.w1"), "gradient 'grad.w1'");
// CHECK: // optimizer state 'adam_v.b2', f32[1]
// CHECK-NEXT: ::absl::StatusOr<BufferTypes::adam_v_b2> adam_v_b2() const {
// CHECK: ::kiln::Trainer& GetTrainer() { return *trainer_; }
// CHECK: #endif  // KILN_TYPED_MLP_H_

// UNPINNED: kArtifactChecksum = 0x0000000000000000ULL;

// PINNED: #ifndef KILN_TYPED_MODELS_MLP_H_
// PINNED: namespace models {
// PINNED-EMPTY:
// PINNED-NEXT: class Mlp {
// PINNED: kArtifactChecksum = 0x{{[0-9a-f]*[1-9a-f][0-9a-f]*}}ULL;
// PINNED: }  // namespace models

// An inference artifact wraps a Session; its only entry returns result0.
// INFERENCE: static constexpr bool kTrains = false;
// INFERENCE: struct ForwardOutputs {
// INFERENCE-NEXT: ::kiln::TypedTensor<::kiln::DType::kF32> result0;
// INFERENCE: auto held_ = module->NewSession(options);
// INFERENCE: auto outputs_ = session_->Run("forward", *runtime_inputs_);
// INFERENCE-NOT: TrainStep

// NAMES: class Header {
// NAMES: struct TrainStepInputs {
// NAMES-NEXT: ::kiln::TypedInput<::kiln::DType::kI32, 3> new_;  // "new"
// NAMES-NEXT: ::kiln::TypedInput<::kiln::DType::kF32, 3> t_2x;  // "2x"
// NAMES: builder_.Add("new", new_);
// NAMES-NEXT: builder_.Add("2x", t_2x);
// NAMES: using layer_0_w = ::kiln::TypedTensor<::kiln::DType::kF32, 3>;
// NAMES: using grad_layer_0_w = ::kiln::TypedTensor<::kiln::DType::kF32, 3>;
// NAMES: ::absl::StatusOr<BufferTypes::layer_0_w> layer_0_w() const {
// NAMES-NEXT: return BufferTypes::layer_0_w::Wrap(
// NAMES-NEXT: trainer_->Buffer("layer.0/w"), "parameter 'layer.0/w'");
func.func @loss(%w: tensor<3xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer.0/w"},
                %i: tensor<3xi32> {kiln.name = "new"},
                %x: tensor<3xf32> {kiln.name = "2x"}) -> tensor<f32> {
  %f = kiln.cast %i : tensor<3xi32> to tensor<3xf32>
  %0 = kiln.mul %w, %x : tensor<3xf32>, tensor<3xf32>
  %1 = kiln.mul %0, %f : tensor<3xf32>, tensor<3xf32>
  %2 = kiln.reduce_sum %1 dims = [0] : tensor<3xf32>
  return %2 : tensor<f32>
}
