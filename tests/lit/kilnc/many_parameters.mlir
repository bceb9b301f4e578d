// A model of 200 parameter tensors, trained with AdamW on bf16 storage: the
// optimizer update reads and writes more tensors (each parameter, its f32
// master weight, both moments and its gradient) than one launch passes, so
// it runs as several kernels of whole shape groups, and the artifact is
// valid (kilnc checks it before it writes the file: no kernel takes more
// than 512 parameters). The models of 2,000 tensors that
// Inputs/many_parameters.py also writes compile the same way, more slowly.
// RUN: python3 %S/Inputs/many_parameters.py 200 > %t.mlir
// RUN: kilnc %t.mlir --train=adamw --precision=bf16 --stats -o %t.kiln 2>&1 | FileCheck %s
// CHECK: entry apply_update: {{[2-9][0-9]*}} launches
// CHECK-NEXT: kiln_optimizer
// CHECK: entry train_step:

// The fused training step, as kilnc compiles it, runs on the CPU reference:
// a finite loss and finite gradients for every parameter.
// RUN: kilnc %t.mlir --train=adamw --precision=bf16 --emit=mlir -o %t.step.mlir
// RUN: kiln-ref %t.step.mlir --function forward_backward --init-params --random-seed 7 --print --print-count 64 | FileCheck %s --check-prefix=REF
// REF: loss: tensor<f32> = [{{[0-9]}}
// REF-NOT: nan
// REF-NOT: inf
// REF: grad.v99: tensor<8xbf16> = [{{-?[0-9]}}
