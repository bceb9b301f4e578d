// kiln-run --describe shows what an artifact holds, without a GPU: the
// entries' inputs and outputs with their roles, the values kilnc lets the
// label and index inputs hold, the parameters, kernels and memory.
// RUN: kilnc %s --train=sgd -o %t.kiln
// RUN: kiln-run %t.kiln --describe | FileCheck %s
// RUN: not kiln-run %t.kiln --describe --steps 3 2>&1 | FileCheck %s --check-prefix=ALONE
// RUN: not kiln-run %t.missing.kiln --describe 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: kiln artifact, format 3,
// CHECK-NEXT: compiled by: kilnc 0.{{[0-9]+}}.{{[0-9]+}} (kiln, commit
// CHECK-NEXT: target: sm_90 (PTX for sm_90;
// CHECK-NEXT: precision: f32 parameters
// CHECK-NEXT: weights: none carried (parameters start from their initialisers)
// CHECK: entry forward: {{[0-9]+}} launches
// CHECK-NEXT: in   table   f32[16,3]  parameter, supplied by the runtime
// CHECK-NEXT: in   tokens  i32[2,2]   batch input, values in [0, 16) (indices of kiln.embedding of 16 rows)
// CHECK-NEXT: in   labels  i32[4]     batch input, values in [0, 3) or -100 (labels of kiln.cross_entropy over 3 classes with ignore_index -100)
// CHECK-NEXT: in   scale   f32[]      batch input
// CHECK-NEXT: out  loss    f32[]      returned
// CHECK: entry train_step:
// CHECK: in   lr      f32[]      learning rate, supplied by the runtime
// CHECK: out  table   f32[16,3]  parameter, updated in place
// CHECK: parameters and state: 2 resident buffers, 384 bytes
// CHECK-NEXT: table       f32[16,3]  parameter  normal (mean 0, std 0.5)
// CHECK-NEXT: grad.table  f32[16,3]  gradient
// CHECK: kernels: {{[0-9]+}} in {{[0-9]+}} families
// CHECK: kiln_embedding_rows (1): kiln_embedding_rows_{{[0-9a-f]+}}
// CHECK: memory: resident 384 bytes (parameter 192 bytes, gradient 192 bytes)
// CHECK: train_step  arena

// ALONE: kiln-run: --describe takes no other flags (got --steps)
// MISSING: kiln-run: {{.*}}missing.kiln

func.func @loss(
    %table: tensor<16x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "table"},
    %tokens: tensor<2x2xi32> {kiln.name = "tokens"},
    %labels: tensor<4xi32> {kiln.name = "labels"},
    %scale: tensor<f32> {kiln.name = "scale"}) -> tensor<f32> {
  %flat = kiln.reshape %tokens : tensor<2x2xi32> -> tensor<4xi32>
  %logits = kiln.embedding %table, %flat : tensor<16x3xf32>, tensor<4xi32>
  %scaled = kiln.mul %logits, %scale : tensor<4x3xf32>, tensor<f32>
  %l = kiln.cross_entropy %scaled, %labels ignore_index = -100 : tensor<4x3xf32>, tensor<4xi32>
  return %l : tensor<f32>
}
