// Open: a constant operand of an index-remapping op is copied into the
// op's kernel, and no kernel family takes the group: "no GPU kernel for
// 'kiln.concat' yet: it needs an element-wise kernel", in every mode, though
// the op compiles with the same operand as an argument (and likewise for an
// embedding's table: embedding_constant_table.mlir). Found by the graph
// fuzzer (tests/fuzz/graph); the fuzzer counts these refusals as known
// until this test passes.
// XFAIL: *
// RUN: kilnc %s --inference --emit=cuda -o %t.cu
func.func @loss(
    %x: tensor<1x8xf32> {kiln.name = "x"},
    %t: tensor<1x9xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %c = kiln.constant dense<1.5> : tensor<1x1xf32>
  %y = kiln.concat %x, %c dim = 1 : tensor<1x8xf32>, tensor<1x1xf32>
  %loss = kiln.mse_loss %y, %t : tensor<1x9xf32>
  return %loss : tensor<f32>
}
