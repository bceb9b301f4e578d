// RUN: kiln-opt %s -split-input-file -verify-diagnostics
// Tensors too large for a device buffer, and initialiser bounds that are no
// finite f32, are errors at the user's own op or parameter.

func.func @overflows_64_bits(%a: tensor<4x9223372036854775807xf32>) {
  // expected-error @+1 {{'kiln.relu' op operand #0 of type 'tensor<4x9223372036854775807xf32>' holds more bytes than 64 bits count, more than the 2^48 one device buffer may hold}}
  %0 = kiln.relu %a : tensor<4x9223372036854775807xf32>
  return
}

// -----

func.func @past_a_buffer(%a: tensor<1099511627776x1024xbf16>) {
  // expected-error @+1 {{'kiln.relu' op operand #0 of type 'tensor<1099511627776x1024xbf16>' holds 2251799813685248 bytes, more than the 2^48 one device buffer may hold}}
  %0 = kiln.relu %a : tensor<1099511627776x1024xbf16>
  return
}

// -----

// expected-error @+1 {{uniform initialiser's high = 1.000000e+39 is not a finite f32}}
func.func @huge_bound(%w: tensor<4xf32> {kiln.param = #kiln.init<uniform, low = 0.0, high = 1.0e+39>}) {
  return
}
