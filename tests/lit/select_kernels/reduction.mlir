// The generic reduction's choice recorded as #kiln_cuda.reduction: rows
// where the innermost elements are reduced, columns where they are kept,
// and the blocks each output's reduced range is split over (as many as fill
// the target: 5 on sm_90's 132 SMs, 4 on sm_80's 108), for single reduce
// ops and a composed one; a softmax's row kernel records the blocks it is
// sized for, #kiln_cuda.row_reduction.
// RUN: kilnc %s --inference --function f --emit=cuda -o %t.cu --mlir-print-ir-after=kiln-select-kernels 2>&1 | FileCheck %s --check-prefix=IR
// RUN: kilnc %s --inference --function f --emit=mlir -o %t.planned.mlir
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels -o %t.auto.mlir
// RUN: FileCheck %s < %t.auto.mlir
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels=arch=sm_80 | FileCheck %s --check-prefix=SM80
// The recorded choices generate what kilnc does; forced splits are
// rendered (a second pass where there are several), and choices the
// fusion cannot take are errors at the fusion.
// RUN: kilnc %t.auto.mlir --planned --emit=cuda -o %t.auto.cu
// RUN: diff %t.auto.cu %t.cu
// RUN: sed -e 's/#kiln_cuda.reduction<rows, splits = 5>/#kiln_cuda.reduction<rows, splits = 2>/' -e 's/#kiln_cuda.reduction<columns, splits = 16>/#kiln_cuda.reduction<columns, splits = 1>/' -e 's/#kiln_cuda.reduction<rows, splits = 1>/#kiln_cuda.reduction<rows, splits = 4>/' %t.auto.mlir > %t.forced.mlir
// RUN: kilnc %t.forced.mlir --planned --emit=cuda -o %t.forced.cu
// RUN: FileCheck %s --check-prefix=FORCED < %t.forced.cu
// RUN: sed -e 's/#kiln_cuda.reduction<rows, splits = 5>/#kiln_cuda.reduction<columns, splits = 5>/' %t.auto.mlir > %t.bad1.mlir
// RUN: not kilnc %t.bad1.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD1
// RUN: not kiln-opt %t.bad1.mlir --kiln-select-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD1
// RUN: sed -e 's/#kiln_cuda.reduction<columns, splits = 16>/#kiln_cuda.reduction<rows, splits = 16>/' %t.auto.mlir > %t.bad2.mlir
// RUN: not kilnc %t.bad2.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD2
// RUN: sed -e 's/#kiln_cuda.reduction<rows, splits = 1>/#kiln_cuda.reduction<rows, splits = 300>/' %t.auto.mlir > %t.bad3.mlir
// RUN: not kilnc %t.bad3.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD3
// RUN: sed -e 's/#kiln_cuda.reduction<columns, splits = 16>/#kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>/' %t.auto.mlir > %t.bad4.mlir
// RUN: not kilnc %t.bad4.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD4
// RUN: sed -e 's/#kiln_cuda.row_reduction<blocks = 264>/#kiln_cuda.reduction<rows, splits = 1>/' %t.auto.mlir > %t.bad5.mlir
// RUN: not kilnc %t.bad5.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD5

// IR: IR Dump After KilnSelectKernels
// IR: kiln.fusion "reduction"{{.*}}kiln_cuda.kernel = #kiln_cuda.reduction<rows, splits = 5>

// CHECK: kiln.fusion "reduction"{{.*}}kiln_cuda.kernel = #kiln_cuda.reduction<rows, splits = 5>{{.*}}-> tensor<64xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.reduce_sum
// CHECK: kiln.fusion "reduction"{{.*}}kiln_cuda.kernel = #kiln_cuda.reduction<columns, splits = 16>{{.*}}-> tensor<256xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.reduce_max
// CHECK: kiln.fusion "reduction"{{.*}}kiln_cuda.kernel = #kiln_cuda.reduction<rows, splits = 1>{{.*}}-> tensor<32xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.reduce_mean
// CHECK: kiln.fusion "reduction"{{.*}}kiln_cuda.kernel = #kiln_cuda.row_reduction<blocks = 264>{{.*}}-> tensor<32x512xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.softmax

// SM80: #kiln_cuda.reduction<rows, splits = 4>
// SM80: #kiln_cuda.reduction<columns, splits = 16>
// SM80: #kiln_cuda.reduction<rows, splits = 1>

// FORCED: ===== kiln_reduce_sum_
// FORCED: reduce_rows_config<idx_t, 64, 65536, 32768>
// FORCED: reduce_rows_config<idx_t, 32, 512, 128>
// FORCED: reduce_final_config<idx_t, 64, 2>
// FORCED: reduce_columns_config<idx_t, 256, 4096, 256, 4096>
// FORCED: reduce_final_config<idx_t, 32, 4>

// BAD1: reduction.mlir.tmp.bad1.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kiln.fusion' op kiln_cuda.kernel: a reduction of the innermost elements runs in rows, not columns
// BAD2: error: 'kiln.fusion' op kiln_cuda.kernel: a reduction keeping the innermost elements runs in columns, not rows
// BAD3: error: 'kiln.fusion' op kiln_cuda.kernel: 300 splits of 512 reduced elements leave a split empty
// BAD4: error: 'kiln.fusion' op kiln_cuda.kernel: a reduction fusion's kernel is a #kiln_cuda.reduction, got #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>
// BAD5: error: 'kiln.fusion' op kiln_cuda.kernel of 'kiln.softmax': a reduction fusion's kernel is a #kiln_cuda.row_reduction, got #kiln_cuda.reduction<rows, splits = 1>
func.func @f(%x: tensor<64x65536xf32>, %y: tensor<4096x256xf32>, %z: tensor<32x512xf32>) -> (tensor<64xf32>, tensor<256xf32>, tensor<32xf32>, tensor<32x512xf32>) {
  %a = kiln.reduce_sum %x dims = [1] : tensor<64x65536xf32>
  %b = kiln.reduce_max %y dims = [0] : tensor<4096x256xf32>
  %sq = kiln.mul %z, %z : tensor<32x512xf32>, tensor<32x512xf32>
  %c = kiln.reduce_mean %sq dims = [1] : tensor<32x512xf32>
  %s = kiln.softmax %z dim = 1 : tensor<32x512xf32>
  return %a, %b, %c, %s : tensor<64xf32>, tensor<256xf32>, tensor<32xf32>, tensor<32x512xf32>
}
