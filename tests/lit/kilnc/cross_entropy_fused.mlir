// A training step computes cross entropy's loss and its gradient in one
// kernel that reads each row of logits once, in f32 and in bf16; the
// inference entry keeps the forward kernel alone.
// RUN: kilnc %s --train=sgd --stats -o %t.f32.kiln 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: kilnc %s --train=adamw --precision=bf16 --stats -o %t.bf16.kiln 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: kilnc %s --inference --stats -o %t.inf.kiln 2>&1 | FileCheck %s --check-prefix=INFER
// TRAIN: cross_entropy_fused [rows=64 m=4096 group=512 rows_per_block=1 width={{4|8}} cached smoothing]
// TRAIN-NOT: cross_entropy_backward [
// INFER-NOT: cross_entropy_fused
// INFER: cross_entropy_rows [
func.func @loss(%logits: tensor<64x4096xf32> {kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "logits"},
                %labels: tensor<64xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels label_smoothing = 0.1 : tensor<64x4096xf32>, tensor<64xi32>
  return %loss : tensor<f32>
}
