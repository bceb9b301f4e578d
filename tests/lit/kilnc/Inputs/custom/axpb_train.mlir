func.func @loss(%x: tensor<8xf32> {kiln.param = #kiln.init<normal>, kiln.name = "x"},
                %t: tensor<8xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.custom "lit::axpb" from "axpb.cu" (%x) backward "lit::axpb_grad"
      params {a = 2.0 : f32, b = 1 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  %l = kiln.mse_loss %y, %t : tensor<8xf32>
  return %l : tensor<f32>
}
