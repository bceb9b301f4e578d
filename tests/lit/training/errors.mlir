// RUN: not kiln-opt %s --kiln-make-train-step="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not kiln-opt %s --kiln-make-train-step="function=nope" 2>&1 | FileCheck %s --check-prefix=FN
// RUN: not kiln-opt %s --kiln-make-train-step="optimizer=sgd nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not kiln-opt %s --kiln-make-train-step 2>&1 | FileCheck %s --check-prefix=NOPARAM

// OPT: error: kiln-make-train-step: unknown optimizer 'lion'; expected sgd, adam or adamw
// FN: error: kiln-make-train-step: no function named 'nope'
// NESTEROV: error: kiln-make-train-step: nesterov needs momentum > 0
// NOPARAM: error: 'func.func' op has no kiln.param arguments to train
func.func @loss(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = kiln.reduce_sum %x dims = [0] : tensor<3xf32>
  return %0 : tensor<f32>
}
