// Open: in bf16 AdamW training, pointwise code generation refuses a kernel
// whose smaller result (a broadcast_to in the step's gradient) would be
// written over an input the kernel still reads: "'kiln.broadcast_to' op:
// pointwise codegen: result #1 has fewer elements than its kernel's root
// and is written over an input the kernel reads"; f32 SGD compiles. Found
// by the graph fuzzer (tests/fuzz/graph, graph 20261207:76, reduced); the
// fuzzer counts these refusals as known until this test passes.
// XFAIL: *
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.cu
func.func @loss(
    %p0: tensor<4x1x5xf32> {kiln.param = #kiln.init<uniform, low = -1.0, high = 1.0>, kiln.name = "p0"},
    %x1: tensor<10x2x1x1xf32> {kiln.name = "x1"},
    %p2: tensor<2x1xf32> {kiln.param = #kiln.init<constant, value = 0.25>, kiln.name = "p2"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %v0 = kiln.reshape %p0 : tensor<4x1x5xf32> -> tensor<10x2x1x1xf32>
  %v1 = kiln.matmul %v0, %x1 transpose_lhs : tensor<10x2x1x1xf32>, tensor<10x2x1x1xf32>
  %v2 = kiln.reduce_mean %p2 dims = [0, 1] : tensor<2x1xf32>
  %v3 = kiln.broadcast_to %v2 : tensor<f32> -> tensor<1x1xf32>
  %v9 = kiln.reduce_max %v3 dims = [0, 1] : tensor<1x1xf32>
  %v10 = kiln.reduce_max %v1 dims = [2, 1] : tensor<10x2x1x1xf32>
  %v11 = kiln.dropout %v9 rate = 0.5 seed = 42 : tensor<f32>
  %v14 = kiln.reduce_sum %v10 dims = [0, 1] : tensor<10x1xf32>
  %v17 = kiln.add %v14, %v11 : tensor<f32>, tensor<f32>
  return %v17 : tensor<f32>
}
