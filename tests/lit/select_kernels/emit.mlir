// --kiln-emit-cuda renders the kernels the IR records, edits included, and
// chooses none: kiln-opt --kiln-select-kernels records the planners'
// choices, an edit replaces one (a pointwise block size, a pooling
// vector), and kilnc --planned (which keeps a recorded choice once it is
// checked) generates what the edited module records.
// RUN: kilnc %s --inference --function f --emit=mlir -o %t.planned.mlir
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels -o %t.auto.mlir
// RUN: FileCheck %s --check-prefix=AUTO < %t.auto.mlir
// RUN: kilnc %t.auto.mlir --planned --emit=cuda --no-merge-launches -o %t.auto.cu --stats 2>&1 | FileCheck %s --check-prefix=AUTO-STATS
// RUN: sed -e 's/#kiln_cuda.pointwise<threads = \[256\], widths = \[1\], blocks = \[32\]>/#kiln_cuda.pointwise<threads = [128], widths = [1], blocks = [20]>/' -e 's/#kiln_cuda.pool<vector = 4,/#kiln_cuda.pool<vector = 2,/' %t.auto.mlir > %t.edited.mlir
// RUN: kilnc %t.edited.mlir --planned --emit=cuda --no-merge-launches -o %t.edited.cu --stats 2>&1 | FileCheck %s --check-prefix=EDITED-STATS
// RUN: FileCheck %s --check-prefix=EDITED < %t.edited.cu

// AUTO: module attributes {kiln_cuda.target = #kiln_cuda.target<"sm_90">}
// AUTO: kiln.fusion "pointwise"{{.*}}kiln_cuda.kernel = #kiln_cuda.pointwise<threads = [256], widths = [1], blocks = [32]>
// AUTO: kiln.fusion "pool"{{.*}}kiln_cuda.kernel = #kiln_cuda.pool<vector = 4, threads = [256], blocks = [32]>
// AUTO-STATS: 8192 elements, width 1, 32 blocks of 256 threads
// EDITED-STATS: 8192 elements, width 1, 20 blocks of 128 threads
// EDITED: kiln::pool::config<idx_t, true, 2, 64, 32, 32, 16, 16, 2, 2, 2, 2, 0, 0, 2, false>

// A malformed attribute is an error where it is written; one the fusion
// cannot take, an error at the fusion naming the user's op.
// RUN: sed -e 's/#kiln_cuda.pointwise<threads = \[256\]/#kiln_cuda.pointwise<threads = [100]/' %t.auto.mlir > %t.bad_threads.mlir
// RUN: not kilnc %t.bad_threads.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD-THREADS
// RUN: sed -e 's/#kiln_cuda.pool<vector = 4,/#kiln_cuda.pool<vector = 8,/' %t.auto.mlir > %t.bad_vector.mlir
// RUN: not kilnc %t.bad_vector.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD-VECTOR
// RUN: not kiln-opt %t.bad_vector.mlir --kiln-emit-cuda=compile=false 2>&1 | FileCheck %s --check-prefix=BAD-VECTOR
// RUN: sed -e 's/, threads = \[256\], blocks = \[32\]>/, threads = [256, 256], blocks = [32, 32]>/' %t.auto.mlir > %t.bad_launches.mlir
// RUN: not kilnc %t.bad_launches.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD-LAUNCHES

// BAD-THREADS: bad_threads.mlir:{{[0-9]+}}:{{[0-9]+}}: error: #kiln_cuda.pointwise threads are block sizes of whole warps, at most 1024, one per kernel
// BAD-VECTOR: bad_vector.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kiln.fusion' op kiln_cuda.kernel of 'kiln.max_pool2d': a thread takes 4 channels or a power of two fewer, not 8
// BAD-LAUNCHES: bad_launches.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kiln.fusion' op kiln_cuda.kernel of 'kiln.max_pool2d': the kernels take 1 launches, not 2

// Emission chooses nothing: a module without its target, or a fusion
// without its kernel, asks for --kiln-select-kernels first.
// RUN: not kiln-opt %t.planned.mlir --kiln-emit-cuda=compile=false 2>&1 | FileCheck %s --check-prefix=NO-TARGET
// RUN: sed -e 's/, kiln_cuda.kernel = #kiln_cuda.pool<[^>]*>//' %t.auto.mlir > %t.missing.mlir
// RUN: not kiln-opt %t.missing.mlir --kiln-emit-cuda=compile=false 2>&1 | FileCheck %s --check-prefix=MISSING
// NO-TARGET: error: kiln-emit-cuda: the module has no kiln_cuda.target (a #kiln_cuda.target): run --kiln-select-kernels first
// MISSING: missing.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kiln.fusion' op has no kiln_cuda.kernel: kiln-emit-cuda renders the recorded kernels; run --kiln-select-kernels first
func.func @f(%x: tensor<64x128xf32> {kiln.name = "x"}, %b: tensor<128xf32> {kiln.name = "b"},
             %i: tensor<2x32x32x64xf32> {kiln.name = "i"})
    -> (tensor<64x128xf32> {kiln.name = "y"}, tensor<2x16x16x64xf32> {kiln.name = "p"}) {
  %0 = kiln.add %x, %b : tensor<64x128xf32>, tensor<128xf32>
  %1 = kiln.tanh %0 : tensor<64x128xf32>
  %2 = kiln.max_pool2d %i layout = nhwc kernel = [2, 2] stride = [2, 2] : tensor<2x32x32x64xf32>
  return %1, %2 : tensor<64x128xf32>, tensor<2x16x16x64xf32>
}
