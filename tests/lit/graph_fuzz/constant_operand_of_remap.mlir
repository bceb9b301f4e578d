// A constant operand of an index-remapping op is copied into the op's
// kernel; no kernel family took that group ("no GPU kernel for
// 'kiln.concat' yet: it needs an element-wise kernel") until the loop kernel
// took every group of element-wise, layout and gather ops, whatever computes
// their operands (likewise an embedding's table:
// embedding_constant_table.mlir). Found by the graph fuzzer
// (tests/fuzz/graph).
// RUN: kilnc %s --inference --emit=cuda -o %t.cu
func.func @loss(
    %x: tensor<1x8xf32> {kiln.name = "x"},
    %t: tensor<1x9xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %c = kiln.constant dense<1.5> : tensor<1x1xf32>
  %y = kiln.concat %x, %c dim = 1 : tensor<1x8xf32>, tensor<1x1xf32>
  %loss = kiln.mse_loss %y, %t : tensor<1x9xf32>
  return %loss : tensor<f32>
}
