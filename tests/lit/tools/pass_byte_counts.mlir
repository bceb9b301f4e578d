// The passes' byte-count options take units as kilnc's flags do
// (tools/common/byte_count.h): memory-budget, bucket-bytes,
// first-bucket-bytes; pipelines print them back in the largest binary unit.

// RUN: kiln-opt %s --kiln-pipeline="memory-budget=1KiB" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: kiln-recompute{memory-budget=1KiB reuse-delay=1}
// The pass runs after the pipeline is printed, on a model without a memory
// plan.
// RUN: not kiln-opt %s --kiln-emit-cuda="bucket-bytes=2MiB first-bucket-bytes=65536 compile=false" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=CODEGEN
// CODEGEN: bucket-bytes=2MiB
// CODEGEN-SAME: first-bucket-bytes=64KiB

// The same budget, in bytes and with a unit, recomputes the same.
// RUN: kiln-opt %s --kiln-make-train-step=optimizer=sgd '--kiln-recompute=memory-budget=1000' -o %t.bytes.mlir
// RUN: kiln-opt %s --kiln-make-train-step=optimizer=sgd '--kiln-recompute=memory-budget=1KB' -o %t.unit.mlir
// RUN: diff %t.bytes.mlir %t.unit.mlir

// RUN: not kiln-opt %s '--kiln-recompute=memory-budget=12XB' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: for the --memory-budget option: '12XB' is not a number of bytes, optionally with B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024)

func.func @loss(%w: tensor<4x8xf32> {kiln.param = #kiln.init<uniform, low = -1.0, high = 1.0>, kiln.name = "w"},
                %x: tensor<16x4xf32> {kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w : tensor<16x4xf32>, tensor<4x8xf32>
  %1 = kiln.tanh %0 : tensor<16x8xf32>
  %2 = kiln.mul %1, %1 : tensor<16x8xf32>, tensor<16x8xf32>
  %3 = kiln.reduce_sum %2 dims = [0, 1] : tensor<16x8xf32>
  return %3 : tensor<f32>
}
