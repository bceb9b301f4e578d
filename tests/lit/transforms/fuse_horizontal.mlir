// RUN: kiln-opt %s --kiln-fuse | FileCheck %s

// The q, k and v projections of one input are one grouped gemm launch (one
// of them with its bias epilogue); so are the weight gradients that
// contract that input (through reshapes of it) with the three output
// gradients. A product of the same shape that shares no operand stays apart.
// CHECK-LABEL: func.func @projections
// CHECK: %[[P:.*]]:3 = kiln.fusion "gemm" (%arg0, %arg1, %arg2, %arg3, %arg4)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.yield
// CHECK: %[[O:.*]] = kiln.fusion "gemm" (%arg5, %arg9)
// CHECK: %[[W:.*]]:3 = kiln.fusion "gemm"
// CHECK-COUNT-3: kiln.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NEXT: kiln.yield
// CHECK: return %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[O]], %[[W]]#0, %[[W]]#1, %[[W]]#2
func.func @projections(%x: tensor<2x4x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>,
                       %bk: tensor<16xf32>, %wv: tensor<16x16xf32>, %z: tensor<2x4x16xf32>,
                       %dq: tensor<8x16xf32>, %dk: tensor<8x16xf32>, %dv: tensor<8x16xf32>,
                       %wo: tensor<16x16xf32>)
    -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>,
        tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %q = kiln.matmul %x, %wq : tensor<2x4x16xf32>, tensor<16x16xf32>
  %k0 = kiln.matmul %x, %wk : tensor<2x4x16xf32>, tensor<16x16xf32>
  %k = kiln.add %k0, %bk : tensor<2x4x16xf32>, tensor<16xf32>
  %v = kiln.matmul %x, %wv : tensor<2x4x16xf32>, tensor<16x16xf32>
  %o = kiln.matmul %z, %wo : tensor<2x4x16xf32>, tensor<16x16xf32>
  %x1 = kiln.reshape %x : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %gq = kiln.matmul %x1, %dq transpose_lhs : tensor<8x16xf32>, tensor<8x16xf32>
  %x2 = kiln.reshape %x : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %gk = kiln.matmul %x2, %dk transpose_lhs : tensor<8x16xf32>, tensor<8x16xf32>
  %x3 = kiln.reshape %x : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %gv = kiln.matmul %x3, %dv transpose_lhs : tensor<8x16xf32>, tensor<8x16xf32>
  return %q, %k, %v, %o, %gq, %gk, %gv
      : tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>,
        tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// A reshape right after each projection (a transformer's heads split) is a
// view that nothing reads before the rope after all three: it does not keep
// the projections apart.
// CHECK-LABEL: func.func @projections_with_views
// CHECK: %[[P:.*]]:3 = kiln.fusion "gemm" (%arg0, %arg1, %arg2, %arg3)
// CHECK-COUNT-3: kiln.matmul
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.fusion "gemm"
// CHECK: kiln.reshape %[[P]]#0
// CHECK: kiln.reshape %[[P]]#1
// CHECK: kiln.reshape %[[P]]#2
func.func @projections_with_views(%x: tensor<2x4x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x16xf32>,
                                  %wv: tensor<16x16xf32>)
    -> (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) {
  %q0 = kiln.matmul %x, %wq : tensor<2x4x16xf32>, tensor<16x16xf32>
  %q1 = kiln.reshape %q0 : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
  %k0 = kiln.matmul %x, %wk : tensor<2x4x16xf32>, tensor<16x16xf32>
  %k1 = kiln.reshape %k0 : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
  %v0 = kiln.matmul %x, %wv : tensor<2x4x16xf32>, tensor<16x16xf32>
  %v1 = kiln.reshape %v0 : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
  %q = kiln.rope %q1 : tensor<2x4x4x4xf32>
  %k = kiln.rope %k1 : tensor<2x4x4x4xf32>
  return %q, %k, %v1 : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
}

// The sum of two products of one shape (the gradient of an input that two
// projections read) is one product over their concatenated K: the second
// matmul joins the first's group through the add.
// CHECK-LABEL: func.func @summed
// CHECK: %[[S:.*]] = kiln.fusion "gemm" (%arg0, %arg1, %arg2)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.yield
// CHECK: return %[[S]]
func.func @summed(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %a = kiln.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>
  %b = kiln.matmul %x, %w2 : tensor<4x8xf32>, tensor<8x8xf32>
  %c = kiln.add %b, %a : tensor<4x8xf32>, tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// A product also needed by itself is not summed into another (it is an
// input of that epilogue), nor grouped with it (the sum reads it).
// CHECK-LABEL: func.func @dependent
// CHECK: %[[B:.*]] = kiln.fusion "gemm" (%arg0, %arg2)
// CHECK: %[[A:.*]] = kiln.fusion "gemm" (%arg0, %arg1, %[[B]])
// CHECK: return %[[A]], %[[B]]
func.func @dependent(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = kiln.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>
  %b = kiln.matmul %x, %w2 : tensor<4x8xf32>, tensor<8x8xf32>
  %c = kiln.add %b, %a : tensor<4x8xf32>, tensor<4x8xf32>
  return %c, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// Independent element-wise kernels (rope of q and of k, and a cast of
// another shape) share one launch, with a loop per shape.
// CHECK-LABEL: func.func @independent_pointwise
// CHECK: %[[R:.*]]:3 = kiln.fusion "pointwise" (%arg0, %arg1, %arg2)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.rope
// CHECK-NEXT: kiln.rope
// CHECK-NEXT: kiln.cast
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.fusion "pointwise"
// CHECK: kiln.fusion "attention" (%[[R]]#0, %[[R]]#1, %arg3)
func.func @independent_pointwise(%q0: tensor<1x2x8x16xf32>, %k0: tensor<1x2x8x16xf32>,
                                 %s: tensor<4xf32>, %v: tensor<1x2x8x16xf32>)
    -> (tensor<1x2x8x16xf32>, tensor<4xbf16>) {
  %q = kiln.rope %q0 : tensor<1x2x8x16xf32>
  %k = kiln.rope %k0 : tensor<1x2x8x16xf32>
  %c = kiln.cast %s : tensor<4xf32> to tensor<4xbf16>
  %o = kiln.attention %q, %k, %v : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %o, %c : tensor<1x2x8x16xf32>, tensor<4xbf16>
}

// A kernel that reads a parameter stays apart from the one that overwrites
// it in place (the update); an independent one joins the former.
// CHECK-LABEL: func.func @in_place_update
// CHECK: kiln.fusion "pointwise" (%arg0, %arg2)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.yield
// CHECK: kiln.fusion "pointwise" (%arg0, %arg1)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.sub
// CHECK-NEXT: kiln.yield
func.func @in_place_update(%w: tensor<8xf32>, %g: tensor<8xf32>, %x: tensor<4xf32>)
    -> (tensor<8xf32> {kiln.updates = 0 : i64}, tensor<8xf32>, tensor<4xf32>) {
  %n = kiln.mul %w, %w : tensor<8xf32>, tensor<8xf32>
  %e = kiln.exp %x : tensor<4xf32>
  %w2 = kiln.sub %w, %g : tensor<8xf32>, tensor<8xf32>
  return %w2, %n, %e : tensor<8xf32>, tensor<8xf32>, tensor<4xf32>
}
