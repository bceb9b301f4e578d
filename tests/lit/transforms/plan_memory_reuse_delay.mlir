// With reuse-delay=1 a tensor's bytes stay reserved through the kernel after
// its last reader, so that kernel never writes over what that reader reads
// (and the two may run as one merged launch); the arena grows to match.
// RUN: kiln-opt %s --kiln-fuse --kiln-plan-memory | FileCheck %s --check-prefix=NOW
// RUN: kiln-opt %s --kiln-fuse --kiln-plan-memory=reuse-delay=1 | FileCheck %s --check-prefix=DELAY

// x dies in the first kernel, a in the second, b in the third.
// NOW-LABEL: func.func @chain
// NOW-SAME: kiln.arena_size = 512 : i64, kiln.peak_live_bytes = 512 : i64
// NOW: kiln.fusion "gemm" {{.*}}offset = [[A:[0-9]+]] : i64
// NOW: kiln.fusion "gemm" {{.*}}offset = [[B:[0-9]+]] : i64
// NOW: kiln.fusion "gemm" {{.*}}offset = [[A]] : i64

// DELAY-LABEL: func.func @chain
// DELAY-SAME: kiln.buffer = {buffer = "arena", offset = [[X:[0-9]+]] : i64, size = 128 : i64}, kiln.name = "x"
// DELAY-SAME: kiln.arena_size = 768 : i64, kiln.peak_live_bytes = 768 : i64
// DELAY: kiln.fusion "gemm" {{.*}}offset = [[A:[0-9]+]] : i64
// DELAY: kiln.fusion "gemm" {{.*}}offset = [[B:[0-9]+]] : i64
// DELAY: kiln.fusion "gemm" {{.*}}offset = [[X]] : i64
func.func @chain(%x: tensor<4x8xf32> {kiln.role = "input", kiln.name = "x"},
                 %w: tensor<8x8xf32> {kiln.role = "param", kiln.name = "w"})
    -> (tensor<4x8xf32> {kiln.role = "output", kiln.name = "y"}) {
  %a = kiln.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %b = kiln.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %c = kiln.matmul %b, %w : tensor<4x8xf32>, tensor<8x8xf32>
  return %c : tensor<4x8xf32>
}

// Tensors over 1 MiB (2 MiB each here) are reused at once even with the
// delay: the kernels that read them are not launch-bound, so merging gains
// little, and their bytes are what the arena is made of.
// NOW-LABEL: func.func @large_chain
// NOW-SAME: kiln.arena_size = 4194304 : i64
// DELAY-LABEL: func.func @large_chain
// DELAY-SAME: kiln.arena_size = 4194304 : i64, kiln.peak_live_bytes = 4194304 : i64
func.func @large_chain(%x: tensor<1024x512xf32> {kiln.role = "input", kiln.name = "x"},
                       %w: tensor<512x512xf32> {kiln.role = "param", kiln.name = "w"})
    -> (tensor<1024x512xf32> {kiln.role = "output", kiln.name = "y"}) {
  %a = kiln.matmul %x, %w : tensor<1024x512xf32>, tensor<512x512xf32>
  %b = kiln.matmul %a, %w : tensor<1024x512xf32>, tensor<512x512xf32>
  %c = kiln.matmul %b, %w : tensor<1024x512xf32>, tensor<512x512xf32>
  return %c : tensor<1024x512xf32>
}
