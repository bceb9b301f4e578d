// The path of the ONNX sample (samples/onnx) without PyTorch: an MLP as
// torch.onnx exports it, trained 50 SGD steps through kilnc's fused
// train_step on the CPU reference, matches f64 SGD in numpy step for step.
// RUN: python3 %S/Inputs/sgd_against_numpy.py %t.dir --steps 50 | FileCheck %s
// CHECK: sgd_against_numpy: 50 steps, largest relative loss difference
// CHECK-NEXT: PASS
