// The attention planner's kernels recorded as #kiln_cuda.attention: the
// Hopper tensor-core kernels (the forward's consumers taking turns where it
// is causal; the backward's dq and dk/dv kernels, dK and dV apart for wide
// heads, or the one-pass backward), persistent unless told otherwise; the
// SIMT kernels' tile off sm_90 and for f32.
// RUN: kilnc %s --inference --function f --emit=cuda -o %t.cu --mlir-print-ir-after=kiln-select-kernels 2>&1 | FileCheck %s --check-prefix=IR
// RUN: kilnc %s --inference --function f --emit=mlir -o %t.planned.mlir
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels | FileCheck %s
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels=arch=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %t.planned.mlir '--kiln-select-kernels=fused-attention-backward=true persistent-attention=false attention-schedule=cooperative' | FileCheck %s --check-prefix=OPTS
// The recorded choices generate what kilnc does; a forced one is rendered,
// and one its fusion cannot run is an error at the fusion.
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels -o %t.auto.mlir
// RUN: kilnc %t.auto.mlir --planned --emit=cuda -o %t.auto.cu
// RUN: diff %t.auto.cu %t.cu
// RUN: sed -e '0,/#kiln_cuda.attention<[^>]*>/s//#kiln_cuda.attention<simt, tile = 16>/' %t.auto.mlir > %t.forced.mlir
// RUN: kilnc %t.forced.mlir --planned --emit=cuda -o %t.forced.cu
// RUN: FileCheck %s --check-prefix=FORCED < %t.forced.cu
// RUN: not kiln-opt %S/Inputs/bad_attention.mlir --split-input-file --kiln-select-kernels 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %S/Inputs/bad_attention.mlir --split-input-file --kiln-select-kernels=arch=sm_80 2>&1 | FileCheck %s --check-prefix=BAD80

// IR: IR Dump After KilnSelectKernels
// IR: kiln.fusion "attention"{{.*}}kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 128x128x4, pingpong, persistent = 132>

// CHECK: kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 128x128x4, pingpong, persistent = 132>
// CHECK: kiln_cuda.kernel = #kiln_cuda.attention<wgmma, dq = 128x64x4, dkdv = 128x64x4, persistent = 132>
// CHECK: kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 128x64x2, persistent = 132>
// CHECK: kiln_cuda.kernel = #kiln_cuda.attention<wgmma, dq = 64x64x2, dkdv = 64x64x2, separate_dkdv, persistent = 132>
// CHECK: kiln_cuda.kernel = #kiln_cuda.attention<simt, tile = 32>
// CHECK: kiln_cuda.kernel = #kiln_cuda.attention<simt, tile = 32>

// SM80-COUNT-2: #kiln_cuda.attention<simt, tile = 64>
// SM80-COUNT-4: #kiln_cuda.attention<simt, tile = 32>

// OPTS: kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 128x128x4>
// OPTS: kiln_cuda.kernel = #kiln_cuda.attention<wgmma, dkdv = 128x64x4, fused>
// OPTS: kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 128x64x2>
// OPTS: kiln_cuda.kernel = #kiln_cuda.attention<wgmma, dq = 64x64x2, dkdv = 64x64x2, separate_dkdv>
// OPTS-COUNT-2: kiln_cuda.kernel = #kiln_cuda.attention<simt, tile = 32>
// FORCED: ===== kiln_attention_fwd
// FORCED: static constexpr bool causal = true;
// FORCED: static constexpr int tile = 16;
// FORCED: ===== kiln_attention_wgmma_bwd_dq

// BAD: bad_attention.mlir:{{[0-9]+ offset :2:8}}: error: 'kiln.fusion' op kiln_cuda.kernel: the simt kernels' tiles are 64, 32 or 16 rows, got 48
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: the tensor-core attention kernels take bf16/f16
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: a forward attention's wgmma kernel is forward = BMxBNxS
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: forward = 128x256x2: a wgmma kernel keeps 64 or 128 rows, streams 64 or 128 and takes 2 to 4 stages
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: pingpong needs two consumer warpgroups: forward keeps 128 rows
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: the forward kernel's 590960 bytes of shared memory exceed the 232448 of sm_90
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: the fused backward takes every gradient, the forward's row log-sum-exp and head dims of at most 128
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: head dims 256/256 need separate_dkdv: both gradients' accumulators do not fit in registers
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: an attention fusion's kernel is a #kiln_cuda.attention, got #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>
// BAD80: error: 'kiln.fusion' op kiln_cuda.kernel: the tensor-core attention kernels need sm_90 with TMA

func.func @f(%q: tensor<2x4x256x64xbf16> {kiln.name = "q"}, %k: tensor<2x4x256x64xbf16> {kiln.name = "k"},
             %v: tensor<2x4x256x64xbf16> {kiln.name = "v"}, %g: tensor<2x4x256x64xbf16> {kiln.name = "g"},
             %wq: tensor<1x2x128x256xbf16> {kiln.name = "wq"}, %wg: tensor<1x2x128x256xbf16> {kiln.name = "wg"},
             %fq: tensor<1x2x32x32xf32> {kiln.name = "fq"}, %fg: tensor<1x2x32x32xf32> {kiln.name = "fg"})
    -> (tensor<2x4x256x64xbf16> {kiln.name = "o"}, tensor<2x4x256x64xbf16> {kiln.name = "dq"}, tensor<2x4x256x64xbf16> {kiln.name = "dk"},
        tensor<2x4x256x64xbf16> {kiln.name = "dv"},
        tensor<1x2x128x256xbf16> {kiln.name = "wo"}, tensor<1x2x128x256xbf16> {kiln.name = "wdk"},
        tensor<1x2x32x32xf32> {kiln.name = "fo"}, tensor<1x2x32x32xf32> {kiln.name = "fdq"}) {
  %o = kiln.attention %q, %k, %v causal : tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>
  %d:3 = kiln.attention_backward %q, %k, %v, %o, %g causal : tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>
  %wo = kiln.attention %wq, %wq, %wq : tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>
  %wd:3 = kiln.attention_backward %wq, %wq, %wq, %wo, %wg : tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>
  %fo = kiln.attention %fq, %fq, %fq : tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>
  %fd:3 = kiln.attention_backward %fq, %fq, %fq, %fo, %fg : tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>
  return %o, %d#0, %d#1, %d#2, %wo, %wd#1, %fo, %fd#0 : tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>,
         tensor<2x4x256x64xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>
}
