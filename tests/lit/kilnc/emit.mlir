// kilnc stops after any stage and shows it.
// RUN: kilnc %s --inference --function f --emit=mlir | FileCheck %s --check-prefix=MLIR
// RUN: kilnc %s --inference --function f --emit=cuda | FileCheck %s --check-prefix=CUDA
// RUN: kilnc %s --inference --function f --emit=cuda --emit-templates | FileCheck %s --check-prefix=TEMPLATES
// RUN: not kilnc %s --inference --function f --emit-templates -o %t.none 2>&1 | FileCheck %s --check-prefix=NOCUDA
// RUN: kilnc %s --inference --function f --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: kilnc %s --inference --function f -o %t.kiln --stats 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: kilnc %s --inference --function f --arch=sm_80 -o %t80.kiln --stats 2>&1 | FileCheck %s --check-prefix=STATS80

// MLIR: func.func @forward
// MLIR-SAME: kiln.arena_size
// MLIR: kiln.fusion "pointwise"
// MLIR-SAME: kiln.buffers = [{buffer = "arena"

// CUDA: #include "kiln/prelude.cuh"
// CUDA: extern "C" __global__ void
// Every kernel waits for its predecessor before touching memory (so the
// runtime may launch it early on sm_90 and newer).
// CUDA: ) {
// CUDA-NEXT: kiln_wait_for_predecessor();

// The templates the stubs include follow them, each after those it includes.
// TEMPLATES: extern "C" __global__ void
// TEMPLATES: // ===== template kiln/prelude.cuh =====
// TEMPLATES: struct launch_ctx {
// TEMPLATES: // ===== template kiln/pointwise.cuh =====
// NOCUDA: kilnc: error: --emit-templates needs --emit=cuda

// PTX: .target sm_90
// PTX: .visible .entry

// STATS: kernels: 1 distinct ({{.*}}; 1 may launch before their predecessor ends)
// STATS80: kernels: 1 distinct ({{.*}}; 0 may launch before their predecessor ends)
// STATS: kernel kiln_pointwise_{{[0-9a-f]+}} (sm_90): pointwise [32 elements, width {{[0-9]}}
// STATS: entry forward: 1 launches, arena {{[0-9]+}} bytes
func.func @f(%a: tensor<4x8xf32> {kiln.name = "a"}, %b: tensor<8xf32> {kiln.name = "b"})
    -> (tensor<4x8xf32> {kiln.name = "y"}) {
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.tanh %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
