// An attention's row log-sum-exp is f32 whatever the storage type: mixed
// precision keeps it f32 (the host reads it so) and converts it for the
// other ops that use it. Found by the graph fuzzer (tests/fuzz/graph).
// RUN: kiln-opt %s --kiln-mixed-precision="function=loss precision=bf16" | FileCheck %s
// RUN: kilnc %s --inference --precision=bf16 --emit=cuda -o %t.inference.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.bf16.cu
// RUN: kilnc %s --train=adamw --precision=f16 --emit=cuda -o %t.f16.cu

// CHECK: %{{.*}}, %[[LSE:.*]] = kiln.attention %arg0, %{{.*}}, %{{.*}} with_row_lse : tensor<1x2x4x8xbf16>
// CHECK: %{{.*}}, %[[LSE2:.*]] = kiln.attention %{{.*}}, %{{.*}}, %{{.*}} causal with_row_lse
// CHECK: %[[NARROW:.*]] = kiln.cast %[[LSE2]] : tensor<1x2x4xf32> to tensor<1x2x4xbf16>
// CHECK: kiln.reduce_mean %[[NARROW]]
// CHECK: return %{{.*}}, %[[LSE]] : tensor<f32>, tensor<1x2x4xf32>
func.func @loss(
    %q: tensor<1x2x4x8xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "q"},
    %k: tensor<1x2x4x8xf32> {kiln.name = "k"},
    %v: tensor<1x2x4x8xf32> {kiln.name = "v"},
    %t: tensor<1x2x4x8xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}, tensor<1x2x4xf32> {kiln.name = "lse"}) {
  %o, %lse = kiln.attention %q, %k, %v with_row_lse : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
  %l = kiln.mse_loss %o, %t : tensor<1x2x4x8xf32>
  // A row log-sum-exp that no parameter reaches may feed the loss.
  %o2, %lse2 = kiln.attention %k, %v, %t causal with_row_lse : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
  %m = kiln.reduce_mean %lse2 dims = [0, 1, 2] : tensor<1x2x4xf32>
  %m2 = kiln.mse_loss %o2, %t : tensor<1x2x4x8xf32>
  %l2 = kiln.add %l, %m : tensor<f32>, tensor<f32>
  %loss = kiln.add %l2, %m2 : tensor<f32>, tensor<f32>
  return %loss, %lse : tensor<f32>, tensor<1x2x4xf32>
}
