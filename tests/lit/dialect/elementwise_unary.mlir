// Unary elementwise ops and cast: custom assembly round-trips, also through
// the generic form; the result type is the operand's.
// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @numeric
// CHECK: kiln.neg %arg0 : tensor<3x5x7xf32>
// CHECK: kiln.neg %arg1 : tensor<2x9xbf16>
// CHECK: kiln.neg %arg2 : tensor<6xf16>
// CHECK: kiln.neg %arg3 : tensor<4x1x3xi32>
// CHECK: kiln.abs %arg0 : tensor<3x5x7xf32>
// CHECK: kiln.abs %arg1 : tensor<2x9xbf16>
// CHECK: kiln.abs %arg2 : tensor<6xf16>
// CHECK: kiln.abs %arg3 : tensor<4x1x3xi32>
// CHECK: kiln.sign %arg0 : tensor<3x5x7xf32>
// CHECK: kiln.sign %arg1 : tensor<2x9xbf16>
// CHECK: kiln.sign %arg2 : tensor<6xf16>
// CHECK: kiln.sign %arg3 : tensor<4x1x3xi32>
// CHECK: kiln.relu %arg0 : tensor<3x5x7xf32>
// CHECK: kiln.relu %arg1 : tensor<2x9xbf16>
// CHECK: kiln.relu %arg2 : tensor<6xf16>
// CHECK: kiln.relu %arg3 : tensor<4x1x3xi32>
// GENERIC-LABEL: sym_name = "numeric"
// GENERIC: "kiln.neg"(%{{[^,)]+}}) : (tensor<3x5x7xf32>) -> tensor<3x5x7xf32>
// GENERIC: "kiln.neg"(%{{[^,)]+}}) : (tensor<4x1x3xi32>) -> tensor<4x1x3xi32>
func.func @numeric(%a0: tensor<3x5x7xf32>, %a1: tensor<2x9xbf16>, %a2: tensor<6xf16>, %a3: tensor<4x1x3xi32>) -> (tensor<3x5x7xf32>, tensor<4x1x3xi32>) {
  %0 = kiln.neg %a0 : tensor<3x5x7xf32>
  %1 = kiln.neg %a1 : tensor<2x9xbf16>
  %2 = kiln.neg %a2 : tensor<6xf16>
  %3 = kiln.neg %a3 : tensor<4x1x3xi32>
  %4 = kiln.abs %a0 : tensor<3x5x7xf32>
  %5 = kiln.abs %a1 : tensor<2x9xbf16>
  %6 = kiln.abs %a2 : tensor<6xf16>
  %7 = kiln.abs %a3 : tensor<4x1x3xi32>
  %8 = kiln.sign %a0 : tensor<3x5x7xf32>
  %9 = kiln.sign %a1 : tensor<2x9xbf16>
  %10 = kiln.sign %a2 : tensor<6xf16>
  %11 = kiln.sign %a3 : tensor<4x1x3xi32>
  %12 = kiln.relu %a0 : tensor<3x5x7xf32>
  %13 = kiln.relu %a1 : tensor<2x9xbf16>
  %14 = kiln.relu %a2 : tensor<6xf16>
  %15 = kiln.relu %a3 : tensor<4x1x3xi32>
  return %0, %15 : tensor<3x5x7xf32>, tensor<4x1x3xi32>
}

// CHECK-LABEL: func.func @float
// CHECK: kiln.exp %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.exp %arg1 : tensor<7x4xbf16>
// CHECK: kiln.exp %arg2 : tensor<3xf16>
// CHECK: kiln.log %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.log %arg1 : tensor<7x4xbf16>
// CHECK: kiln.log %arg2 : tensor<3xf16>
// CHECK: kiln.sqrt %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.sqrt %arg1 : tensor<7x4xbf16>
// CHECK: kiln.sqrt %arg2 : tensor<3xf16>
// CHECK: kiln.rsqrt %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.rsqrt %arg1 : tensor<7x4xbf16>
// CHECK: kiln.rsqrt %arg2 : tensor<3xf16>
// CHECK: kiln.sin %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.sin %arg1 : tensor<7x4xbf16>
// CHECK: kiln.sin %arg2 : tensor<3xf16>
// CHECK: kiln.cos %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.cos %arg1 : tensor<7x4xbf16>
// CHECK: kiln.cos %arg2 : tensor<3xf16>
// CHECK: kiln.tanh %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.tanh %arg1 : tensor<7x4xbf16>
// CHECK: kiln.tanh %arg2 : tensor<3xf16>
// CHECK: kiln.sigmoid %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.sigmoid %arg1 : tensor<7x4xbf16>
// CHECK: kiln.sigmoid %arg2 : tensor<3xf16>
// CHECK: kiln.silu %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.silu %arg1 : tensor<7x4xbf16>
// CHECK: kiln.silu %arg2 : tensor<3xf16>
// CHECK: kiln.gelu %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.gelu %arg1 : tensor<7x4xbf16>
// CHECK: kiln.gelu %arg2 : tensor<3xf16>
// CHECK: kiln.leaky_relu %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.leaky_relu %arg1 : tensor<7x4xbf16>
// CHECK: kiln.leaky_relu %arg2 : tensor<3xf16>
// CHECK: kiln.floor %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.floor %arg1 : tensor<7x4xbf16>
// CHECK: kiln.floor %arg2 : tensor<3xf16>
// CHECK: kiln.ceil %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.ceil %arg1 : tensor<7x4xbf16>
// CHECK: kiln.ceil %arg2 : tensor<3xf16>
// CHECK: kiln.round %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.round %arg1 : tensor<7x4xbf16>
// CHECK: kiln.round %arg2 : tensor<3xf16>
// CHECK: kiln.erf %arg0 : tensor<2x3x5xf32>
// CHECK: kiln.erf %arg1 : tensor<7x4xbf16>
// CHECK: kiln.erf %arg2 : tensor<3xf16>
// GENERIC-LABEL: sym_name = "float"
// GENERIC: "kiln.exp"(%{{[^,)]+}}) : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
// GENERIC: "kiln.round"(%{{[^,)]+}}) : (tensor<3xf16>) -> tensor<3xf16>
func.func @float(%x0: tensor<2x3x5xf32>, %x1: tensor<7x4xbf16>, %x2: tensor<3xf16>) -> (tensor<2x3x5xf32>, tensor<3xf16>) {
  %0 = kiln.exp %x0 : tensor<2x3x5xf32>
  %1 = kiln.exp %x1 : tensor<7x4xbf16>
  %2 = kiln.exp %x2 : tensor<3xf16>
  %3 = kiln.log %x0 : tensor<2x3x5xf32>
  %4 = kiln.log %x1 : tensor<7x4xbf16>
  %5 = kiln.log %x2 : tensor<3xf16>
  %6 = kiln.sqrt %x0 : tensor<2x3x5xf32>
  %7 = kiln.sqrt %x1 : tensor<7x4xbf16>
  %8 = kiln.sqrt %x2 : tensor<3xf16>
  %9 = kiln.rsqrt %x0 : tensor<2x3x5xf32>
  %10 = kiln.rsqrt %x1 : tensor<7x4xbf16>
  %11 = kiln.rsqrt %x2 : tensor<3xf16>
  %12 = kiln.sin %x0 : tensor<2x3x5xf32>
  %13 = kiln.sin %x1 : tensor<7x4xbf16>
  %14 = kiln.sin %x2 : tensor<3xf16>
  %15 = kiln.cos %x0 : tensor<2x3x5xf32>
  %16 = kiln.cos %x1 : tensor<7x4xbf16>
  %17 = kiln.cos %x2 : tensor<3xf16>
  %18 = kiln.tanh %x0 : tensor<2x3x5xf32>
  %19 = kiln.tanh %x1 : tensor<7x4xbf16>
  %20 = kiln.tanh %x2 : tensor<3xf16>
  %21 = kiln.sigmoid %x0 : tensor<2x3x5xf32>
  %22 = kiln.sigmoid %x1 : tensor<7x4xbf16>
  %23 = kiln.sigmoid %x2 : tensor<3xf16>
  %24 = kiln.silu %x0 : tensor<2x3x5xf32>
  %25 = kiln.silu %x1 : tensor<7x4xbf16>
  %26 = kiln.silu %x2 : tensor<3xf16>
  %27 = kiln.gelu %x0 : tensor<2x3x5xf32>
  %28 = kiln.gelu %x1 : tensor<7x4xbf16>
  %29 = kiln.gelu %x2 : tensor<3xf16>
  %30 = kiln.leaky_relu %x0 : tensor<2x3x5xf32>
  %31 = kiln.leaky_relu %x1 : tensor<7x4xbf16>
  %32 = kiln.leaky_relu %x2 : tensor<3xf16>
  %33 = kiln.floor %x0 : tensor<2x3x5xf32>
  %34 = kiln.floor %x1 : tensor<7x4xbf16>
  %35 = kiln.floor %x2 : tensor<3xf16>
  %36 = kiln.ceil %x0 : tensor<2x3x5xf32>
  %37 = kiln.ceil %x1 : tensor<7x4xbf16>
  %38 = kiln.ceil %x2 : tensor<3xf16>
  %39 = kiln.round %x0 : tensor<2x3x5xf32>
  %40 = kiln.round %x1 : tensor<7x4xbf16>
  %41 = kiln.round %x2 : tensor<3xf16>
  %42 = kiln.erf %x0 : tensor<2x3x5xf32>
  %43 = kiln.erf %x1 : tensor<7x4xbf16>
  %44 = kiln.erf %x2 : tensor<3xf16>
  return %0, %41 : tensor<2x3x5xf32>, tensor<3xf16>
}

// Attributes at their defaults are left out; other values are printed.
// CHECK-LABEL: func.func @attributes
// CHECK: kiln.gelu %arg0 approximate = tanh : tensor<8x3x5xf32>
// CHECK: kiln.gelu %arg0 : tensor<8x3x5xf32>
// CHECK: kiln.gelu %arg1 : tensor<11xbf16>
// CHECK: kiln.leaky_relu %arg0 alpha = 2.000000e-01 : tensor<8x3x5xf32>
// CHECK: kiln.leaky_relu %arg1 : tensor<11xbf16>
// CHECK: kiln.leaky_relu %arg1 : tensor<11xbf16>
// GENERIC-LABEL: sym_name = "attributes"
// GENERIC: "kiln.gelu"(%{{[^,)]+}}) <{approximate = #kiln<gelu_approximation tanh>}> : (tensor<8x3x5xf32>) -> tensor<8x3x5xf32>
// GENERIC: "kiln.gelu"(%{{[^,)]+}}) <{approximate = #kiln<gelu_approximation none>}>
// GENERIC: "kiln.leaky_relu"(%{{[^,)]+}}) <{alpha = 2.000000e-01 : f64}>
// GENERIC: "kiln.leaky_relu"(%{{[^,)]+}}) <{alpha = 1.000000e-02 : f64}>
func.func @attributes(%x: tensor<8x3x5xf32>, %y: tensor<11xbf16>) -> (tensor<8x3x5xf32>, tensor<11xbf16>) {
  %0 = kiln.gelu %x approximate = tanh : tensor<8x3x5xf32>
  %1 = kiln.gelu %x approximate = none : tensor<8x3x5xf32>
  %2 = kiln.gelu %y : tensor<11xbf16>
  %3 = kiln.leaky_relu %x alpha = 0.2 : tensor<8x3x5xf32>
  %4 = kiln.leaky_relu %y : tensor<11xbf16>
  %5 = kiln.leaky_relu %y alpha = 0.01 : tensor<11xbf16>
  return %0, %5 : tensor<8x3x5xf32>, tensor<11xbf16>
}

// Every kiln element type converts to every other, masks included.
// CHECK-LABEL: func.func @cast
// CHECK: kiln.cast %arg0 : tensor<4x3x5xf32> to tensor<4x3x5xbf16>
// CHECK: kiln.cast %arg0 : tensor<4x3x5xf32> to tensor<4x3x5xi1>
// CHECK: kiln.cast %arg0 : tensor<4x3x5xf32> to tensor<4x3x5xi32>
// CHECK: kiln.cast %arg1 : tensor<4x3x5xi1> to tensor<4x3x5xf16>
// CHECK: kiln.cast %arg2 : tensor<7xi32> to tensor<7xf32>
// CHECK: kiln.cast %arg2 : tensor<7xi32> to tensor<7xi32>
// GENERIC-LABEL: sym_name = "cast"
// GENERIC: "kiln.cast"(%{{[^,)]+}}) : (tensor<4x3x5xf32>) -> tensor<4x3x5xbf16>
func.func @cast(%x: tensor<4x3x5xf32>, %m: tensor<4x3x5xi1>, %i: tensor<7xi32>) -> (tensor<4x3x5xbf16>, tensor<7xi32>) {
  %0 = kiln.cast %x : tensor<4x3x5xf32> to tensor<4x3x5xbf16>
  %1 = kiln.cast %x : tensor<4x3x5xf32> to tensor<4x3x5xi1>
  %2 = kiln.cast %x : tensor<4x3x5xf32> to tensor<4x3x5xi32>
  %3 = kiln.cast %m : tensor<4x3x5xi1> to tensor<4x3x5xf16>
  %4 = kiln.cast %i : tensor<7xi32> to tensor<7xf32>
  %5 = kiln.cast %i : tensor<7xi32> to tensor<7xi32>
  return %0, %5 : tensor<4x3x5xbf16>, tensor<7xi32>
}
