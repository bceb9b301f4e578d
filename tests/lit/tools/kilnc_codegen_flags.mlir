// kilnc's code-generation flags are the options of kiln-select-kernels and
// kiln-emit-cuda (Passes.td):
// their help is the pass option's, and an enumerated one takes only the
// names its parser knows; a bad value is a bad command line (status 2)
// naming the flag and every accepted value, before anything is read.

// RUN: kilnc --help | FileCheck %s --check-prefix=HELP
// HELP: --attention-schedule auto|cooperative|pingpong
// HELP-NEXT: The Hopper attention forward's schedule (sm_90)
// HELP: --gemm-cluster auto|1|2 {{ *}}Blocks per thread-block cluster of the TMA GEMM
// HELP: rows to pair (default: 1)
// HELP: --gemm-schedule auto|cooperative|pingpong
// HELP-NEXT: How the TMA GEMM kernel's consumer warpgroups share
// HELP: --data-parallel {{ *}}Data-parallel training: the gradients are averaged

// RUN: sh %S/Inputs/exit_status.sh kilnc %s --gemm-schedule=fast -o %t.kiln | FileCheck %s --check-prefix=GEMM
// GEMM: kilnc: error: --gemm-schedule must be auto, cooperative or pingpong, got 'fast'
// GEMM: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --attention-schedule=turns -o %t.kiln | FileCheck %s --check-prefix=ATTENTION
// ATTENTION: kilnc: error: --attention-schedule must be auto, cooperative or pingpong, got 'turns'
// ATTENTION: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --gemm-cluster=4 -o %t.kiln | FileCheck %s --check-prefix=CLUSTER
// CLUSTER: kilnc: error: --gemm-cluster must be auto, 1 or 2, got '4'
// CLUSTER: exit status 2
// The first bad value is the one reported.
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --gemm-cluster=3 --gemm-schedule=x -o %t.kiln | FileCheck %s --check-prefix=FIRST
// FIRST: kilnc: error: --gemm-cluster must be auto, 1 or 2, got '3'
// FIRST-NOT: gemm-schedule
// FIRST: exit status 2

// Each accepted value reaches the pass: the pipeline prints it by name.
// RUN: kilnc %s --inference --gemm-schedule=pingpong --gemm-cluster=auto --attention-schedule=cooperative --emit=cuda --mlir-print-ir-before=kiln-emit-cuda -o %t.cu 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: IR Dump Before KilnEmitCuda (kiln-emit-cuda)

func.func @loss(%a: tensor<4x8xf32> {kiln.name = "a"}, %b: tensor<8xf32> {kiln.name = "b"})
    -> (tensor<4x8xf32> {kiln.name = "y"}) {
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.tanh %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
