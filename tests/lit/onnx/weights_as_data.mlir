// An imported model's weights travel as data: the inference artifact holds
// the initializers' values in its data section and the kernels read them
// as resident buffers (no table of them in the CUDA source); a training
// artifact starts its parameters (and a bf16 model's f32 master weights)
// from them, its AdamW moments from zeros; kiln-ref takes them from the
// model. Fresh random weights every run.
// RUN: rm -rf %t.dir
// RUN: python3 %S/Inputs/weights_as_data.py make %t.dir
// RUN: kilnc %t.dir/cnn.onnx --inference -o %t.dir/inference.kiln
// RUN: kilnc %t.dir/cnn.onnx --inference --emit=cuda -o %t.dir/inference.cu
// RUN: kilnc %t.dir/cnn.onnx --trainable=all --loss=cross_entropy --target=labels --train=adamw -o %t.dir/train.kiln
// RUN: kilnc %t.dir/cnn.onnx --trainable=all --loss=cross_entropy --target=labels --train=adamw --precision=bf16 -o %t.dir/bf16.kiln
// RUN: kiln-ref %t.dir/cnn.onnx --trainable=all --loss=cross_entropy --target=labels --function loss --precision f64 --inputs %t.dir/batch.safetensors -o %t.dir/loss.safetensors
// RUN: python3 %S/Inputs/weights_as_data.py check %t.dir | FileCheck %s
// RUN: kiln-run %t.dir/inference.kiln --describe | FileCheck %s --check-prefix=INFER
// RUN: kiln-run %t.dir/train.kiln --describe | FileCheck %s --check-prefix=TRAIN
// RUN: kiln-run %t.dir/bf16.kiln --describe | FileCheck %s --check-prefix=BF16
// RUN: kilnc %t.dir/cnn.onnx --trainable=all --loss=cross_entropy --target=labels --train=sgd --fresh-params -o %t.dir/fresh.kiln
// RUN: kiln-run %t.dir/fresh.kiln --describe | FileCheck %s --check-prefix=FRESH

// CHECK: weights_as_data: {{[0-9]+}} bytes of weights found in the data sections
// CHECK: weights_as_data: {{[0-9]+}} bytes of CUDA, the largest table {{([0-9]|1[0-6])}} elements
// CHECK: weights_as_data: inference artifact
// CHECK: weights_as_data: kiln-ref loss at the model's weights
// CHECK-NEXT: PASS

// The weights are constants of the inference entry, not its inputs.
// INFER: weights: 2 buffers start from values the artifact carries, 6624 bytes (6.47 KiB)
// INFER: entry forward:
// INFER-NEXT: in   x       f32[2,3,6,6]  batch input
// INFER-NEXT: out  logits  f32[2,5]      returned
// INFER: conv.weight  f32[8,3,3,3]  constant  carried:
// INFER-NEXT: fc.weight    f32[5,288]    constant  carried:

// Every parameter starts from the model's values; AdamW's moments from zeros.
// TRAIN: weights: 4 buffers start from values the artifact carries, 6676 bytes (6.52 KiB)
// TRAIN: conv.weight         f32[8,3,3,3]  parameter         carried:
// TRAIN-NEXT: conv.bias           f32[8]        parameter         carried:
// TRAIN: adam_m.conv.weight  f32[8,3,3,3]  optimizer moment{{$}}

// bf16 parameters and their f32 master weights both carry the values.
// BF16: precision: bf16 parameters with f32 master weights
// BF16-NEXT: weights: 8 buffers start from values the artifact carries, 10014 bytes (9.78 KiB)
// BF16: conv.weight         bf16[8,3,3,3]  parameter         carried:
// BF16: master.conv.weight  f32[8,3,3,3]   master weight     carried:
// BF16-NEXT: adam_m.conv.weight  f32[8,3,3,3]   optimizer moment{{$}}

// --fresh-params: a fresh initialisation, no weights carried.
// FRESH: weights: none carried (parameters start from their initialisers)
// FRESH: conv.weight       f32[8,3,3,3]  parameter  xavier (gain 1)
// FRESH-NEXT: conv.bias         f32[8]        parameter  zeros
