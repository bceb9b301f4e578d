// The samples parse, verify and round-trip.
// RUN: kiln-opt %samples/sine_block.mlir | kiln-opt | FileCheck %s --check-prefix=SINE
// RUN: kiln-opt %samples/mlp.mlir | kiln-opt | FileCheck %s --check-prefix=MLP

// SINE-LABEL: func.func @loss
// SINE-COUNT-15: kiln.param
// SINE: kiln.attention %{{.*}}, %{{.*}}, %{{.*}} :
// SINE: kiln.mse_loss
// SINE: return %{{.*}} : tensor<f32>

// MLP-LABEL: func.func @loss
// MLP: kiln.tanh
// MLP: kiln.mse_loss
