// A large bf16 GEMM: on sm_90 its kernel uses wgmma on operands the tensor
// memory accelerator copies and is built for the arch-specific sm_90a (the
// artifact still targets sm_90); other targets keep mma.sync. K = 1024 is
// short enough for the ping-pong schedule (128x128 tiles), which
// --gemm-schedule=cooperative replaces by the shared 128x256 tile.
// RUN: kilnc %s --inference --function f --emit=ptx | FileCheck %s --check-prefix=SM90
// RUN: kilnc %s --inference --function f --emit=ptx --arch=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: kilnc %s --inference --function f --emit=ptx --gemm-schedule=cooperative | FileCheck %s --check-prefix=COOP
// RUN: kilnc %s --inference --function f -o %t.kiln --stats 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: not kilnc %s --inference --function f --gemm-schedule=fast -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=BAD

// SM90: .target sm_90a
// SM90-DAG: bar.arrive
// SM90-DAG: cp.async.bulk.tensor.2d
// SM90-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90-NOT: mma.sync

// COOP: .target sm_90a
// COOP-DAG: cp.async.bulk.tensor.2d
// COOP-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16

// BAD: kilnc: error: --gemm-schedule must be auto, cooperative or pingpong, got 'fast'


// SM80: .target sm_80
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SM80-NOT: wgmma

// STATS: kernels: 1 distinct
// STATS: gemm_tma [bf16 128x128x64 ping-pong warpgroups 2 + TMA producer stages 6
func.func @f(%x: tensor<2048x1024xbf16> {kiln.name = "x"},
             %w: tensor<1024x2048xbf16> {kiln.name = "w"},
             %b: tensor<2048xbf16> {kiln.name = "b"})
    -> (tensor<2048x2048xbf16> {kiln.name = "y"}) {
  %0 = kiln.matmul %x, %w : tensor<2048x1024xbf16>, tensor<1024x2048xbf16>
  %1 = kiln.add %0, %b : tensor<2048x2048xbf16>, tensor<2048xbf16>
  return %1 : tensor<2048x2048xbf16>
}
