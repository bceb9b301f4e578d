// --kiln-select-kernels records the GEMM kernel the cost model chooses for
// each gemm fusion as its kiln_cuda.kernel (a #kiln_cuda.gemm).
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="gemm-schedule=cooperative gemm-cluster=auto" | FileCheck %s --check-prefix=COOP
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="tma=false" | FileCheck %s --check-prefix=NOTMA
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="arch=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="tf32=true" | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="gemm-tma-store=true" | FileCheck %s --check-prefix=STORE

// A deep product: the cooperative 128x256 TMA tile (its faster main loop
// outweighs the epilogue ping-pong would hide); clusters of two where asked
// for; the cp.async wgmma kernel without TMA; mma.sync before sm_90.
// CHECK-LABEL: func.func @deep
// CHECK: kiln.fusion "gemm"{{.*}}kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x256x64, stages = 4>
// COOP-LABEL: func.func @deep
// COOP: kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x256x64, stages = 4, cluster = 2>
// NOTMA-LABEL: func.func @deep
// NOTMA: kiln_cuda.kernel = #kiln_cuda.gemm<wgmma, tile = 128x256x64, stages = 4>
// SM80-LABEL: func.func @deep
// SM80: kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 128x256x32, stages = 4>
// STORE-LABEL: func.func @deep
// STORE: kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x256x64, stages = 4, tma_store>
func.func @deep(%x: tensor<8192x4096xbf16>, %w: tensor<4096x4096xbf16>,
                %b: tensor<4096xbf16>) -> tensor<8192x4096xbf16> {
  %m = kiln.matmul %x, %w : tensor<8192x4096xbf16>, tensor<4096x4096xbf16>
  %s = kiln.add %m, %b : tensor<8192x4096xbf16>, tensor<4096xbf16>
  %g = kiln.gelu %s approximate = tanh : tensor<8192x4096xbf16>
  return %g : tensor<8192x4096xbf16>
}

// A short product (K = 1024): the ping-pong schedule hides the epilogue;
// cooperative, the 128x256 tile again.
// CHECK-LABEL: func.func @short
// CHECK: kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x128x64, stages = 6, pingpong>
// COOP-LABEL: func.func @short
// COOP: kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x256x64, stages = 4, cluster = 2>
func.func @short(%x: tensor<8192x1024xbf16>, %w: tensor<1024x4096xbf16>,
                 %b: tensor<4096xbf16>) -> tensor<8192x4096xbf16> {
  %m = kiln.matmul %x, %w : tensor<8192x1024xbf16>, tensor<1024x4096xbf16>
  %s = kiln.add %m, %b : tensor<8192x4096xbf16>, tensor<4096xbf16>
  %g = kiln.gelu %s approximate = tanh : tensor<8192x4096xbf16>
  return %g : tensor<8192x4096xbf16>
}

// Few output tiles over a long K: K splits across blocks.
// CHECK-LABEL: func.func @few_tiles
// CHECK: kiln_cuda.kernel = #kiln_cuda.gemm<{{.*}}, split = {{[2-9]|1[0-9]}}>
func.func @few_tiles(%x: tensor<512x4096xbf16>, %w: tensor<1024x4096xbf16>,
                     %b: tensor<1024xbf16>) -> tensor<512x1024xbf16> {
  %m = kiln.matmul %x, %w transpose_rhs : tensor<512x4096xbf16>, tensor<1024x4096xbf16>
  %s = kiln.add %m, %b : tensor<512x1024xbf16>, tensor<1024xbf16>
  return %s : tensor<512x1024xbf16>
}

// K not a multiple of 8 (no whole 16-byte chunks of the lhs): mma.sync.
// CHECK-LABEL: func.func @unaligned
// CHECK: kiln_cuda.kernel = #kiln_cuda.gemm<mma,
func.func @unaligned(%x: tensor<2048x1020xbf16>, %w: tensor<1020x1024xbf16>)
    -> tensor<2048x1024xbf16> {
  %m = kiln.matmul %x, %w : tensor<2048x1020xbf16>, tensor<1020x1024xbf16>
  return %m : tensor<2048x1024xbf16>
}

// A small product: the small mma.sync tile wins over wgmma's.
// CHECK-LABEL: func.func @small
// CHECK: kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>
func.func @small(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>)
    -> tensor<64x64xbf16> {
  %m = kiln.matmul %x, %w : tensor<64x64xbf16>, tensor<64x64xbf16>
  return %m : tensor<64x64xbf16>
}

// f32: exact FMA (simt), or tf32 tensor cores where allowed.
// CHECK-LABEL: func.func @exact
// CHECK: kiln_cuda.kernel = #kiln_cuda.gemm<simt, tile = 128x128x8>
// TF32-LABEL: func.func @exact
// TF32: kiln_cuda.kernel = #kiln_cuda.gemm<tf32, tile = 128x128x32, stages = 3>
func.func @exact(%x: tensor<2048x1024xf32>, %w: tensor<1024x1024xf32>)
    -> tensor<2048x1024xf32> {
  %m = kiln.matmul %x, %w : tensor<2048x1024xf32>, tensor<1024x1024xf32>
  return %m : tensor<2048x1024xf32>
}

// Clusters pair adjacent tile rows: one tile row has none to pair; nine
// do (the last cluster's second block lies past the rows).
// COOP-LABEL: func.func @one_row
// COOP: kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x128x64, stages = 6, split = {{[0-9]+}}>
// COOP-LABEL: func.func @nine_rows
// COOP: kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x128x64, stages = 6, cluster = 2>
func.func @one_row(%x: tensor<128x4096xbf16>, %w: tensor<4096x4096xbf16>,
                   %b: tensor<4096xbf16>) -> tensor<128x4096xbf16> {
  %m = kiln.matmul %x, %w transpose_rhs : tensor<128x4096xbf16>, tensor<4096x4096xbf16>
  %s = kiln.add %m, %b : tensor<128x4096xbf16>, tensor<4096xbf16>
  return %s : tensor<128x4096xbf16>
}
func.func @nine_rows(%x: tensor<1152x4096xbf16>, %w: tensor<4096x4096xbf16>,
                     %b: tensor<4096xbf16>) -> tensor<1152x4096xbf16> {
  %m = kiln.matmul %x, %w transpose_rhs : tensor<1152x4096xbf16>, tensor<4096x4096xbf16>
  %s = kiln.add %m, %b : tensor<1152x4096xbf16>, tensor<4096xbf16>
  return %s : tensor<1152x4096xbf16>
}
