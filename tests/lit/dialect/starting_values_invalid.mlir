// RUN: kiln-opt %s -split-input-file -verify-diagnostics
// kiln.value: the values a parameter, state or constant argument starts
// from, of its shape and a type that rounds to its own.

// expected-error @+1 {{argument 0 has a 'kiln.value' but is not a parameter ('kiln.param'), state ('kiln.state') or constant (kiln.role = "constant")}}
func.func @input(%x: tensor<2xf32> {kiln.value = dense<[1.0, 2.0]> : tensor<2xf32>}) {
  return
}

// -----

// expected-error @+1 {{'kiln.value' of type 'tensor<3xf32>' does not fit an argument of type 'tensor<2xf32>'}}
func.func @shape(%w: tensor<2xf32> {kiln.param = #kiln.init<zeros>, kiln.value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>}) {
  return
}

// -----

// expected-error @+1 {{'kiln.value' of type 'tensor<2xi32>' does not fit an argument of type 'tensor<2xf32>'}}
func.func @type(%w: tensor<2xf32> {kiln.param = #kiln.init<zeros>, kiln.value = dense<[1, 2]> : tensor<2xi32>}) {
  return
}

// -----

// expected-error @+1 {{'kiln.value' must be a dense elements attribute for a tensor argument, got 1.000000e+00 : f32}}
func.func @scalar(%w: tensor<2xf32> {kiln.param = #kiln.init<zeros>, kiln.value = 1.0 : f32}) {
  return
}

// -----

// expected-error @+1 {{'kiln.value' may only mark a function argument, not a result}}
func.func @result() -> (tensor<2xf32> {kiln.value = dense<1.0> : tensor<2xf32>}) {
  %c = kiln.constant dense<1.0> : tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// A bf16 parameter may take f32 values (its master weight's); a constant
// of role constant its own.
func.func @fine(%w: tensor<2xbf16> {kiln.param = #kiln.init<zeros>, kiln.value = dense<[1.0, 2.5]> : tensor<2xf32>},
                %c: tensor<2xi32> {kiln.role = "constant", kiln.value = dense<[3, 4]> : tensor<2xi32>}) {
  return
}
