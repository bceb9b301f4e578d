// Reductions, softmax, norms and losses.
func.func @f(%x: tensor<6x37xf32> {kiln.name = "x"}, %w: tensor<37xf32> {kiln.name = "w"},
             %b: tensor<37xf32> {kiln.name = "b"}, %t: tensor<6x37xf32> {kiln.name = "t"},
             %labels: tensor<6xi32> {kiln.name = "labels"})
    -> (tensor<37xf32> {kiln.name = "sum0"}, tensor<6xf32> {kiln.name = "max1"},
        tensor<6xi32> {kiln.name = "argmax"}, tensor<6x37xf32> {kiln.name = "softmax"},
        tensor<6x37xf32> {kiln.name = "log_softmax0"}, tensor<6x37xf32> {kiln.name = "rms"},
        tensor<6x37xf32> {kiln.name = "ln"}, tensor<f32> {kiln.name = "mse"},
        tensor<f32> {kiln.name = "ce"}, tensor<f32> {kiln.name = "mean_all"}) {
  %0 = kiln.reduce_sum %x dims = [0] : tensor<6x37xf32>
  %1 = kiln.reduce_max %x dims = [1] : tensor<6x37xf32>
  %2 = kiln.argmax %x dim = 1 : tensor<6x37xf32>
  %3 = kiln.softmax %x dim = 1 : tensor<6x37xf32>
  %4 = kiln.log_softmax %x dim = 0 : tensor<6x37xf32>
  %5 = kiln.rms_norm %x, %w eps = 1.0e-05 : tensor<6x37xf32>, tensor<37xf32>
  %6 = kiln.layer_norm %x, %w, %b : tensor<6x37xf32>, tensor<37xf32>, tensor<37xf32>
  %7 = kiln.mse_loss %x, %t reduction = mean : tensor<6x37xf32>
  %8 = kiln.cross_entropy %x, %labels label_smoothing = 0.1 : tensor<6x37xf32>, tensor<6xi32>
  %9 = kiln.reduce_mean %t dims = [0, 1] : tensor<6x37xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<37xf32>, tensor<6xf32>, tensor<6xi32>, tensor<6x37xf32>, tensor<6x37xf32>, tensor<6x37xf32>, tensor<6x37xf32>, tensor<f32>, tensor<f32>, tensor<f32>
}
