// RUN: kiln-opt %s --kiln-autodiff -split-input-file -verify-diagnostics

// expected-error @+1 {{'func.func' op must return a scalar loss (a rank-0 float tensor) as its first result to be differentiated}}
func.func @not_scalar(%w: tensor<3xf32> {kiln.param = #kiln.init<zeros>}) -> tensor<3xf32> {
  return %w : tensor<3xf32>
}

// -----

// expected-error @+1 {{kiln-autodiff: the module has 2 functions; name the loss function with function=NAME}}
module {
  func.func @a(%w: tensor<3xf32>) -> tensor<3xf32> {
    return %w : tensor<3xf32>
  }
  func.func @b(%w: tensor<3xf32>) -> tensor<3xf32> {
    return %w : tensor<3xf32>
  }
}
