// Index-remapping ops: transpose, slice, concat, pad, flip, triu, rope.
func.func @f(%x: tensor<2x5x3x8xf32> {kiln.name = "x"}, %m: tensor<6x9xf32> {kiln.name = "m"})
    -> (tensor<2x3x5x8xf32> {kiln.name = "t"}, tensor<2x5x3x8xf32> {kiln.name = "r"},
        tensor<8x10xf32> {kiln.name = "p"}, tensor<6x9xf32> {kiln.name = "u"},
        tensor<12x9xf32> {kiln.name = "c"}, tensor<3x3xf32> {kiln.name = "s"}) {
  %t = kiln.transpose %x perm = [0, 2, 1, 3] : tensor<2x5x3x8xf32>
  %r = kiln.rope %x : tensor<2x5x3x8xf32>
  %p = kiln.pad %m low = [1, 0] high = [1, 1] value = 0.5 : tensor<6x9xf32>
  %f = kiln.flip %m dims = [1] : tensor<6x9xf32>
  %u = kiln.triu %f diagonal = 1 : tensor<6x9xf32>
  %c = kiln.concat %m, %f dim = 0 : tensor<6x9xf32>, tensor<6x9xf32>
  %s = kiln.slice %m start = [1, 0] limit = [6, 9] step = [2, 3] : tensor<6x9xf32>
  return %t, %r, %p, %u, %c, %s : tensor<2x3x5x8xf32>, tensor<2x5x3x8xf32>, tensor<8x10xf32>, tensor<6x9xf32>, tensor<12x9xf32>, tensor<3x3xf32>
}
