// A large bf16 GEMM: on sm_90 its kernel uses wgmma and is built for the
// arch-specific sm_90a (the artifact still targets sm_90); other targets keep
// mma.sync.
// RUN: kilnc %s --inference --function f --emit=ptx | FileCheck %s --check-prefix=SM90
// RUN: kilnc %s --inference --function f --emit=ptx --arch=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: kilnc %s --inference --function f -o %t.kiln --stats 2>&1 | FileCheck %s --check-prefix=STATS

// SM90: .target sm_90a
// SM90: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// SM90-NOT: mma.sync

// SM80: .target sm_80
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SM80-NOT: wgmma

// STATS: kernels: 1 distinct
func.func @f(%x: tensor<2048x1024xbf16> {kiln.name = "x"},
             %w: tensor<1024x2048xbf16> {kiln.name = "w"},
             %b: tensor<2048xbf16> {kiln.name = "b"})
    -> (tensor<2048x2048xbf16> {kiln.name = "y"}) {
  %0 = kiln.matmul %x, %w : tensor<2048x1024xbf16>, tensor<1024x2048xbf16>
  %1 = kiln.add %0, %b : tensor<2048x2048xbf16>, tensor<2048xbf16>
  return %1 : tensor<2048x2048xbf16>
}
