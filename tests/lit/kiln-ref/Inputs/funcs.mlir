// Functions the kiln-ref tests run. @make writes known tensors of every
// dtype; @use reads them back by name.
func.func @make() -> (tensor<2x3xf32> {kiln.name = "x"},
                      tensor<3xf32> {kiln.name = "y"},
                      tensor<4xi32> {kiln.name = "idx"},
                      tensor<2xbf16> {kiln.name = "h"},
                      tensor<3xi1> {kiln.name = "m"}) {
  %x = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = kiln.constant dense<[0.5, -1.0, 0.25]> : tensor<3xf32>
  %i = kiln.constant dense<[3, 0, 2, 1]> : tensor<4xi32>
  %h = kiln.constant dense<[1.5, -0.375]> : tensor<2xbf16>
  %m = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  return %x, %y, %i, %h, %m : tensor<2x3xf32>, tensor<3xf32>, tensor<4xi32>, tensor<2xbf16>, tensor<3xi1>
}

// Takes all of @make's outputs; results named and unnamed.
func.func @use(%x: tensor<2x3xf32> {kiln.name = "x"},
               %y: tensor<3xf32> {kiln.name = "y"},
               %idx: tensor<4xi32> {kiln.name = "idx"},
               %h: tensor<2xbf16> {kiln.name = "h"},
               %m: tensor<3xi1> {kiln.name = "m"})
    -> (tensor<2x3xf32> {kiln.name = "sum"}, tensor<2xbf16>, tensor<4xi32>,
        tensor<3xi1>) {
  %s = kiln.add %x, %y : tensor<2x3xf32>, tensor<3xf32>
  %d = kiln.add %h, %h : tensor<2xbf16>, tensor<2xbf16>
  return %s, %d, %idx, %m : tensor<2x3xf32>, tensor<2xbf16>, tensor<4xi32>, tensor<3xi1>
}

// Reads @use's outputs back (named by result name or resultN).
func.func @reread(%sum: tensor<2x3xf32> {kiln.name = "sum"},
                  %a: tensor<2xbf16> {kiln.name = "result1"},
                  %b: tensor<4xi32> {kiln.name = "result2"},
                  %c: tensor<3xi1> {kiln.name = "result3"})
    -> (tensor<2x3xf32> {kiln.name = "sum"}, tensor<2xbf16> {kiln.name = "doubled"}) {
  return %sum, %a : tensor<2x3xf32>, tensor<2xbf16>
}

// Unnamed arguments are arg0, arg1, ...; random draws.
func.func @unnamed(%a: tensor<2x5xf32>, %b: tensor<6xi32>, %c: tensor<4xi1>)
    -> (tensor<2x5xf32>, tensor<6xi32>, tensor<4xi1>) {
  return %a, %b, %c : tensor<2x5xf32>, tensor<6xi32>, tensor<4xi1>
}

// (1 + 1e-8) - 1: 0 when rounded to f32, 1e-8 in f64.
func.func @precision() -> tensor<f32> {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %tiny = kiln.constant dense<1.0e-08> : tensor<f32>
  %s = kiln.add %one, %tiny : tensor<f32>, tensor<f32>
  %d = kiln.sub %s, %one : tensor<f32>, tensor<f32>
  return %d : tensor<f32>
}

// Other shapes and dtypes of "x" for the error tests.
func.func @wrong_shape() -> (tensor<3x2xf32> {kiln.name = "x"}) {
  %x = kiln.constant dense<0.0> : tensor<3x2xf32>
  return %x : tensor<3x2xf32>
}
func.func @wrong_dtype() -> (tensor<2x3xi32> {kiln.name = "x"}) {
  %x = kiln.constant dense<0> : tensor<2x3xi32>
  return %x : tensor<2x3xi32>
}
func.func @only_x(%x: tensor<2x3xf32> {kiln.name = "x"}) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
func.func @make_x() -> (tensor<2x3xf32> {kiln.name = "x"}) {
  %x = kiln.constant dense<1.0> : tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}
func.func @scalar(%r: tensor<f32> {kiln.name = "result0"}) -> tensor<f32> {
  return %r : tensor<f32>
}
