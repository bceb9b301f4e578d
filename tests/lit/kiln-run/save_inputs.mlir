// What kiln-ref --save-inputs writes (every argument of the function: the
// parameters and model state with the batch) is what kiln-run --inputs
// takes: the tensors named as parameters or state set those buffers, the
// rest are the entry's inputs. Checked with --dry-run, without a GPU, for the
// digits sample compiled for inference and for training; labels outside the
// ten classes are named before anything runs.
// RUN: kilnc %samples/digits_cnn.mlir --inference -o %t.infer.kiln
// RUN: kilnc %samples/digits_cnn.mlir -o %t.train.kiln
// RUN: kiln-ref %samples/digits_cnn.mlir --function loss --random-seed 3 --init-params --int-range 10 --save-inputs %t.in.safetensors -o %t.out.safetensors
// RUN: kiln-run %t.infer.kiln --inputs %t.in.safetensors --check %t.out.safetensors --dry-run | FileCheck %s --check-prefix=INFER
// RUN: kiln-run %t.train.kiln --steps 2 --inputs %t.in.safetensors --dry-run | FileCheck %s --check-prefix=TRAIN
// RUN: not kiln-ref %samples/digits_cnn.mlir --function loss --random-seed 3 --init-params --int-range 12 --save-inputs %t.bad.safetensors -o %t.bad.out.safetensors 2>&1 | FileCheck %s --check-prefix=REF
// RUN: not kiln-run %t.infer.kiln --inputs %t.bad.safetensors 2>&1 | FileCheck %s --check-prefix=LABEL

// INFER: dry run: {{.*}}infer.kiln would run
// INFER-NEXT: inference: forward
// INFER-NEXT: input: images f32[64,1,8,8] from
// INFER-NEXT: input: labels i32[64] from
// INFER: sets: bn1_running_mean f32[16] from
// INFER: sets: conv1_w f32[16,3,3,1] from
// INFER: checks against: {{.*}}out.safetensors

// TRAIN: training: train_step, steps 1 to 2
// TRAIN: sets: fc_w f32[32,10] from

// REF: error: input 'labels' element [{{[0-9]+}}]: label 1{{[01]}} is outside the 10 classes [0, 10) of kiln.cross_entropy at {{.*}}digits_cnn.mlir:{{[0-9]+}}:{{[0-9]+}}

// LABEL: kiln-run: INVALID_ARGUMENT: {{.*}}bad.safetensors: input 'labels': element {{[0-9]+}} [{{[0-9]+}}] is 1{{[01]}}, outside [0, 10) (labels of kiln.cross_entropy over 10 classes)
// LABEL-NOT: driver
