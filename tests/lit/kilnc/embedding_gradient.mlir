// Models that train an embedding table compile in every mode, the table's
// gradient becoming the embedding kernels, and every kernel assembles.
// RUN: kilnc %s --inference -o %t.inference.kiln
// RUN: kilnc %s --train=sgd -o %t.sgd.kiln --stats 2>&1 | FileCheck %s --check-prefix=SGD
// RUN: kilnc %s --train=adamw --precision=bf16 -o %t.bf16.kiln --stats 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: kilnc %S/Inputs/embedding_argmax.mlir --inference -o %t.argmax.kiln
// RUN: kilnc %S/Inputs/embedding_argmax.mlir --train=sgd -o %t.argmax_sgd.kiln
// RUN: kilnc %S/Inputs/embedding_argmax.mlir --train=adamw --precision=bf16 -o %t.argmax_bf16.kiln
// RUN: kilnc %s --train=sgd --emit=ptx > %t.sgd.ptx
// RUN: bash %S/Inputs/assemble_each.sh %t.sgd.ptx | FileCheck %s --check-prefix=PTX
// RUN: kilnc %S/Inputs/embedding_argmax.mlir --train=adamw --precision=bf16 --emit=ptx > %t.argmax.ptx
// RUN: bash %S/Inputs/assemble_each.sh %t.argmax.ptx | FileCheck %s --check-prefix=PTX

// One radix pass for a 4-row table, then the runs and the rows.
// SGD: embedding_radix_scatter [n=35 v=4 pass=1/1 tiles=1 items=4]
// SGD: embedding_segment_heads [n=35 d=24 w=4 chunks=2]
// SGD: embedding_table_rows [v=4 d=24 w=4 group=2 steps=3 cached]
// SGD: entry forward_backward:
// SGD-NEXT: kiln_embedding_rows 1, kiln_embedding_runs 1, kiln_embedding_scatter 1,

// bf16 gradients: 16-byte steps are 8 elements, which 24 is a multiple of.
// BF16: embedding_table_rows [v=4 d=24 w=8 group=1 steps=3 cached]

// PTX: assembled {{[1-9][0-9]*}} kernels

// Repeated tokens accumulate into the same row.
func.func @loss(
    %table: tensor<4x24xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "table"},
    %tokens: tensor<5x7xi32> {kiln.name = "tokens"},
    %t: tensor<5x7x24xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.embedding %table, %tokens : tensor<4x24xf32>, tensor<5x7xi32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<5x7x24xf32>
  return %loss : tensor<f32>
}
