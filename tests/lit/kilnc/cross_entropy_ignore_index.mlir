// ignore_index on the GPU: with the mean, one block counts the rows whose
// label is not ignored, and the loss-and-gradient kernel and the total divide
// by that count; with the sum there is no count.
// RUN: kilnc %s --train=sgd --stats -o %t.kiln 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: kilnc %s --inference --stats -o %t.inf.kiln 2>&1 | FileCheck %s --check-prefix=INFER
// TRAIN: cross_entropy_count [n=64 ignore=-100]
// TRAIN: cross_entropy_fused [rows=64 m=1000 {{.*}} ignore=-100 counted]
// TRAIN: cross_entropy_total [n=64 mean counted]
// INFER: cross_entropy_rows [{{.*}} ignore=-100 counted]
// INFER: cross_entropy_count [n=64 ignore=-100]
// INFER: cross_entropy_total [n=64 mean counted]
func.func @loss(%logits: tensor<64x1000xf32> {kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "logits"},
                %labels: tensor<64xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels ignore_index = -100 : tensor<64x1000xf32>, tensor<64xi32>
  return %loss : tensor<f32>
}
