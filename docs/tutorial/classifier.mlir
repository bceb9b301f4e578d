// 8x8 grey images (pixels 0-16, scaled to [0, 1]) -> 32 ReLU units -> 3
// classes, batches of 32; weights [in, out]. Results: the loss, the batch's
// accuracy, each image's class.
func.func @loss(
    %w1: tensor<64x32xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "w1"},
    %b1: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b1"},
    %w2: tensor<32x3xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w2"},
    %b2: tensor<3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b2"},
    %images: tensor<32x1x8x8xf32> {kiln.name = "images"},
    %labels: tensor<32xi32> {kiln.name = "labels"})
    -> (tensor<f32> {kiln.name = "loss"}, tensor<f32> {kiln.name = "accuracy"},
        tensor<32xi32> {kiln.name = "predicted"}) {
  %pixels = kiln.reshape %images : tensor<32x1x8x8xf32> -> tensor<32x64xf32>
  %scale = kiln.constant dense<6.250000e-02> : tensor<f32>
  %x = kiln.mul %pixels, %scale : tensor<32x64xf32>, tensor<f32>
  %h0 = kiln.matmul %x, %w1 : tensor<32x64xf32>, tensor<64x32xf32>
  %h1 = kiln.add %h0, %b1 : tensor<32x32xf32>, tensor<32xf32>
  %h = kiln.relu %h1 : tensor<32x32xf32>
  %z = kiln.matmul %h, %w2 : tensor<32x32xf32>, tensor<32x3xf32>
  %logits = kiln.add %z, %b2 : tensor<32x3xf32>, tensor<3xf32>
  %loss = kiln.cross_entropy %logits, %labels : tensor<32x3xf32>, tensor<32xi32>
  %predicted = kiln.argmax %logits dim = 1 : tensor<32x3xf32>
  %hit = kiln.compare eq, %predicted, %labels : tensor<32xi32>, tensor<32xi32>
  %hits = kiln.cast %hit : tensor<32xi1> to tensor<32xf32>
  %accuracy = kiln.reduce_mean %hits dims = [0] : tensor<32xf32>
  return %loss, %accuracy, %predicted : tensor<f32>, tensor<f32>, tensor<32xi32>
}
