// kiln-opt --kiln-pipeline: the pipeline's options are checked when it is
// built; it ends before code generation unless codegen=true, which
// generates (here without compiling) the kernels as a check and leaves the
// IR as it is.
// RUN: kiln-opt %s --kiln-pipeline="train=none" | FileCheck %s
// RUN: kiln-opt %s --kiln-pipeline="train=none codegen=true compile=false" | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-make-forward,kiln-fuse,kiln-plan-memory,kiln-select-kernels,kiln-emit-cuda{compile=false})" | FileCheck %s
// RUN: not kiln-opt %s --kiln-pipeline="train=lion" 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: not kiln-opt %s --kiln-pipeline="precision=fp8" 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not kiln-opt %s --kiln-select-kernels --kiln-emit-cuda 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(kiln-make-forward,kiln-fuse,kiln-plan-memory,kiln-select-kernels{gemm-schedule=fast})" 2>&1 | FileCheck %s --check-prefix=GEMM-SCHEDULE
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(kiln-make-forward,kiln-fuse,kiln-plan-memory,kiln-select-kernels{attention-schedule=turns})" 2>&1 | FileCheck %s --check-prefix=ATTENTION-SCHEDULE
// The kernel-choice options are kiln-select-kernels' alone.
// RUN: not kiln-opt %s --pass-pipeline="builtin.module(kiln-emit-cuda{compile=false tf32=true})" 2>&1 | FileCheck %s --check-prefix=EMIT-OPTION
// kiln-pipeline runs kiln-select-kernels then kiln-emit-cuda, and hands
// each the options it does not declare itself that the pass declares.
// RUN: kiln-opt %s --kiln-pipeline="train=none codegen=true compile=false gemm-schedule=pingpong gemm-cluster=auto" | FileCheck %s
// RUN: kiln-opt %s --kiln-pipeline="train=none codegen=true compile=false arch=sm_80 merge-launches=false" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not kiln-opt %s --kiln-pipeline="train=none codegen=true compile=false gemm-cluster=3" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not kiln-opt %s --kiln-pipeline="train=none gemm-schedule=pingpong" 2>&1 | FileCheck %s --check-prefix=WITHOUT-CODEGEN

// STAGES: kiln-plan-memory{reuse-delay=1},kiln-select-kernels{arch=sm_80
// STAGES-SAME: kiln-emit-cuda{
// STAGES-NOT: arch=
// STAGES-SAME: merge-launches=false

// CHECK: func.func @forward
// CHECK-SAME: kiln.arena_size
// CHECK: kiln.fusion "pointwise"

// TRAIN: error: kiln-pipeline: train must be adamw, adam, sgd or none, got 'lion'
// PRECISION: error: kiln-pipeline: precision must be f32, bf16 or f16, got 'fp8'
// UNPLANNED: error: 'func.func' op has no memory plan (run --kiln-plan-memory)
// GEMM-SCHEDULE: for the --gemm-schedule option: must be auto, cooperative or pingpong, got 'fast'
// ATTENTION-SCHEDULE: for the --attention-schedule option: must be auto, cooperative or pingpong, got 'turns'
// CLUSTER: for the --gemm-cluster option: must be auto, 1 or 2, got '3'
// EMIT-OPTION: no such option tf32
// WITHOUT-CODEGEN: error: kiln-pipeline: 'gemm-schedule=pingpong': not options of kiln-pipeline (those of code generation need codegen=true)
func.func @loss(%a: tensor<4x8xf32> {kiln.name = "a"}, %b: tensor<8xf32> {kiln.name = "b"})
    -> (tensor<4x8xf32> {kiln.name = "y"}) {
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.tanh %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
