// RUN: kiln-opt %s --kiln-make-train-step -split-input-file -verify-diagnostics

// The training step updates a state argument in place with its batch
// norm's updated statistic: it may have no other use.
func.func @loss(%x: tensor<4x3xf32>, %g: tensor<3xf32> {kiln.param = #kiln.init<ones>},
                // expected-error @+1 {{state argument 'rm' of @loss must be used only as the running mean or variance of one kiln.batch_norm (the training step updates it in place), but 'kiln.add' uses it}}
                %rm: tensor<3xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "rm"},
                %rv: tensor<3xf32> {kiln.state = #kiln.init<ones>}) -> tensor<f32> {
  // expected-note @+1 {{used here}}
  %s = kiln.add %x, %rm : tensor<4x3xf32>, tensor<3xf32>
  %y:5 = kiln.batch_norm %s, %g, %g running %rm, %rv
      : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = kiln.reduce_sum %y#0 dims = [0, 1] : tensor<4x3xf32>
  return %l : tensor<f32>
}

// -----

// A state argument that is not a running statistic.
func.func @loss(%x: tensor<3xf32>, %w: tensor<3xf32> {kiln.param = #kiln.init<ones>},
                // expected-error @+1 {{state argument 'arg2' of @loss must be used only as the running mean or variance of one kiln.batch_norm (the training step updates it in place), but 'kiln.mul' uses it}}
                %s: tensor<3xf32> {kiln.state = #kiln.init<zeros>}) -> tensor<f32> {
  // expected-note @+1 {{used here}}
  %0 = kiln.mul %x, %s : tensor<3xf32>, tensor<3xf32>
  %1 = kiln.mul %0, %w : tensor<3xf32>, tensor<3xf32>
  %l = kiln.reduce_sum %1 dims = [0] : tensor<3xf32>
  return %l : tensor<f32>
}

// -----

// Two batch norms cannot share running statistics.
func.func @loss(%x: tensor<4x3xf32>, %g: tensor<3xf32> {kiln.param = #kiln.init<ones>},
                // expected-error @+1 {{state argument 'rm' of @loss must be used only as the running mean or variance of one kiln.batch_norm (the training step updates it in place), but it is 2 running-statistic operands}}
                %rm: tensor<3xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "rm"},
                %rv: tensor<3xf32> {kiln.state = #kiln.init<ones>, kiln.name = "rv"}) -> tensor<f32> {
  %y:5 = kiln.batch_norm %x, %g, %g running %rm, %rv
      : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %z:5 = kiln.batch_norm %y#0, %g, %g running %rm, %rv
      : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = kiln.reduce_sum %z#0 dims = [0, 1] : tensor<4x3xf32>
  return %l : tensor<f32>
}
