// kilnc generates only the stub of a user kernel: the user's file at file
// scope (with its own line numbers), an Args struct with the op's
// parameters as constants and its tensors with their static shapes, and the
// call of the user's entry; the launch has the op's block size and a
// grid-stride grid. The backward kernel gets the forward inputs and outputs,
// the output gradients and the input gradient. The file is found beside
// this IR file.
// RUN: kilnc %s --train=sgd --emit=cuda | FileCheck %s
// RUN: kilnc %s --train=sgd --no-kernel-cache -o %t.kiln --stats 2>&1 | FileCheck %s --check-prefix=STATS
// CHECK-LABEL: ===== kiln_custom_lit__axpb_
// CHECK: #include "kiln/custom_op.cuh"
// CHECK: #line 1 "Inputs/custom/axpb.cu"
// CHECK: template <class Args> __device__ void axpb(const Args &args) {
// CHECK: #line {{[0-9]+}} "kiln_custom_lit__axpb_{{[0-9a-f]+}}.cu"
// CHECK: struct args_t {
// CHECK-NEXT: static constexpr int num_inputs = 1;
// CHECK-NEXT: static constexpr int num_outputs = 1;
// CHECK-NEXT: static constexpr int block_size = 64;
// CHECK-NEXT: struct params {
// CHECK-NEXT: static constexpr double a = 2.5;
// CHECK-NEXT: static constexpr long long b = -3LL;
// CHECK-NEXT: };
// CHECK-NEXT: kiln::launch_ctx ctx;
// CHECK-NEXT: kiln::custom::tensor<const float> in0;
// CHECK-NEXT: kiln::custom::tensor<float> out0;
// CHECK: const args_t args{ctx,
// CHECK-NEXT: {in0, 96LL, 3, {2LL, 3LL, 16LL}},
// CHECK-NEXT: {out0, 96LL, 3, {2LL, 3LL, 16LL}}};
// CHECK-NEXT: ::lit::axpb<args_t>(args);
// CHECK: __launch_bounds__(64)
// CHECK: kiln_wait_for_predecessor();
// CHECK-NEXT: kiln_kernel::run(kiln::this_launch(), in0, out0);
// CHECK-LABEL: ===== kiln_custom_lit__axpb_grad_
// CHECK: kiln::custom::tensor<const float> in0;
// CHECK-NEXT: kiln::custom::tensor<const float> out0;
// CHECK-NEXT: kiln::custom::tensor<const float> grad_out0;
// CHECK-NEXT: kiln::custom::tensor<float> grad_in0;
// CHECK: ::lit::axpb_grad<args_t>(args);
// A result that nothing reads is still written, to scratch after the
// planned tensors (the arena holds x, the read result and the scratch).
// RUN: kilnc %S/Inputs/custom/two_outputs.mlir --function f --inference --emit=cuda | FileCheck %s --check-prefix=TWO
// RUN: kilnc %S/Inputs/custom/two_outputs.mlir --function f --inference --no-kernel-cache -o %t.two.kiln --stats 2>&1 | FileCheck %s --check-prefix=TWOSTATS
// TWO: kiln::custom::tensor<float> out0;
// TWO-NEXT: kiln::custom::tensor<float> out1;
// TWO: kiln_kernel::run(kiln::this_launch(), in0, out0, out1);
// TWOSTATS: entry forward: 1 launches, arena 768 bytes
// STATS: custom lit::axpb [file=Inputs/custom/axpb.cu block=64 blocks=2]
// STATS: custom lit::axpb_grad [file=Inputs/custom/axpb.cu block=64 blocks=2]
// STATS: entry forward_backward:
// STATS: kiln_custom_lit__axpb 1, kiln_custom_lit__axpb_grad 1
func.func @loss(%x: tensor<2x3x16xf32> {kiln.param = #kiln.init<normal>, kiln.name = "x"}) -> tensor<f32> {
  %y = kiln.custom "lit::axpb" from "Inputs/custom/axpb.cu" (%x)
      backward "lit::axpb_grad" params {a = 2.5 : f64, b = -3 : i64}
      block_size = 64 : (tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %l = kiln.mse_loss %y, %x : tensor<2x3x16xf32>
  return %l : tensor<f32>
}
