// A failing pass leaves a reproducer of the whole kiln pipeline, which
// kiln-opt runs again (here the loss has no kiln.param: kiln-make-train-step
// fails).
// RUN: not kilnc %s --no-kernel-cache -o %t.kiln --mlir-pass-pipeline-crash-reproducer=%t.repro 2>&1 | FileCheck %s --check-prefix=KILNC
// RUN: FileCheck %s --check-prefix=REPRO < %t.repro
// RUN: not kiln-opt --run-reproducer %t.repro 2>&1 | FileCheck %s --check-prefix=AGAIN

// KILNC: error: 'func.func' op has no kiln.param arguments to train
// KILNC: note: Pipeline failed while executing [`KilnMakeTrainStep` on 'builtin.module' operation]: reproducer generated at

// REPRO: func.func @loss
// REPRO: mlir_reproducer:
// REPRO-NEXT: pipeline: "builtin.module(kiln-make-train-step{{[{].*}}optimizer=adamw{{.*}}}, kiln-fuse, kiln-plan-memory{reuse-delay=1}, kiln-select-kernels{arch=sm_90 attention-schedule=auto fused-attention-backward=false gemm-cluster=1 gemm-schedule=auto gemm-tma-store=false persistent-attention=true tf32=false tma=true}, kiln-emit-cuda{bucket-bytes=25MiB compile=true data-parallel=false first-bucket-bytes=1MiB kernel-cache= merge-launches=true})"

// AGAIN: error: 'func.func' op has no kiln.param arguments to train

// A local reproducer holds the failing pass only.
// RUN: not kilnc %s -o %t.kiln --mlir-pass-pipeline-crash-reproducer=%t.local.repro --mlir-pass-pipeline-local-reproducer 2>&1 | FileCheck %s --check-prefix=KILNC-LOCAL
// RUN: FileCheck %s --check-prefix=LOCAL < %t.local.repro
// RUN: not kiln-opt --run-reproducer %t.local.repro 2>&1 | FileCheck %s --check-prefix=AGAIN

// KILNC-LOCAL: note: Pipeline failed while executing `KilnMakeTrainStep` on 'builtin.module' operation: reproducer generated at
// LOCAL: pipeline: "builtin.module(kiln-make-train-step{{[{][^,]*}})"
func.func @loss(%x: tensor<3xf32> {kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.reduce_sum %x dims = [0] : tensor<3xf32>
  return %0 : tensor<f32>
}
