// A parameter of 160 GB, more than any sm_90 GPU has (device_memory.mlir).
func.func @huge(%w: tensor<200000x200000xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w"},
                %x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<1x4xf32> {kiln.name = "y"}) {
  %s = kiln.slice %w start = [0, 0] limit = [1, 4] step = [1, 1] : tensor<200000x200000xf32>
  %y = kiln.add %s, %x : tensor<1x4xf32>, tensor<4xf32>
  return %y : tensor<1x4xf32>
}
