// Bad input: a clear message and a non-zero exit, never a crash.
// RUN: not kilnc %s.missing -o %t 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kilnc %s --train=lion -o %t 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not kilnc %s --emit=sass -o %t 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not kilnc %s --no-such-flag -o %t 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not kilnc %s --precision=fp8 -o %t 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not kilnc %s --train=sgd --nesterov -o %t 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not kilnc %s --function nope -o %t 2>&1 | FileCheck %s --check-prefix=FN
// RUN: not kilnc %S/Inputs/bad_ir.mlir -o %t 2>&1 | FileCheck %s --check-prefix=IR
// RUN: not kilnc %s --memory-budget=12XB -o %t 2>&1 | FileCheck %s --check-prefix=BYTES
// RUN: not kilnc %s --memory-budget=MiB -o %t 2>&1 | FileCheck %s --check-prefix=NODIGITS
// RUN: not kilnc %s --memory-budget=99999999999999999999GiB -o %t 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not kilnc %s --gemm-cluster=4 -o %t 2>&1 | FileCheck %s --check-prefix=CLUSTER

// MISSING: kilnc: error: {{.*}}errors.mlir.missing
// OPT: kilnc: error: --train must be adamw, adam or sgd, got 'lion'
// EMIT: kilnc: error: --emit must be mlir, cuda, ptx, artifact or header, got 'sass'
// FLAG: kilnc: error: unknown option '--no-such-flag'
// PRECISION: kilnc: error: --precision must be f32, bf16 or f16, got 'fp8'
// NESTEROV: kilnc: error: --nesterov needs --momentum > 0
// FN: error: kiln-make-train-step: no function named 'nope'
// IR: bad_ir.mlir:3:8: error: shapes [4, 8] and [3] are not broadcast-compatible
// BYTES: kilnc: error: --memory-budget must be a number of bytes, optionally with B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), got '12XB'
// NODIGITS: kilnc: error: --memory-budget must be a number of bytes{{.*}}, got 'MiB'
// HUGE: kilnc: error: --memory-budget must be a number of bytes{{.*}}, got '99999999999999999999GiB'
// CLUSTER: kilnc: error: --gemm-cluster must be auto, 1 or 2, got '4'
func.func @loss(%w: tensor<3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "w"}) -> tensor<f32> {
  %0 = kiln.reduce_sum %w dims = [0] : tensor<3xf32>
  return %0 : tensor<f32>
}
