// The training step of the sine block and of the MLP, in launches per
// kernel family (a guard against regressions of fusion, launch merging and
// code generation; the step is launch-bound on the GPU). UNMERGED shows the
// fusions' own launches; the others, what kilnc emits by default, where
// launches that may run at once share one kernel (kiln_merged).
// RUN: kilnc %samples/sine_block.mlir -o %t.sine.kiln --stats 2>&1 | FileCheck %s --check-prefix=SINE
// RUN: kilnc %samples/sine_block.mlir --no-merge-launches -o %t.unmerged.kiln --stats 2>&1 | FileCheck %s --check-prefix=UNMERGED
// RUN: kilnc %samples/sine_block.mlir --precision=bf16 -o %t.sine16.kiln --stats 2>&1 | FileCheck %s --check-prefix=SINE16
// RUN: kilnc %samples/mlp.mlir -o %t.mlp.kiln --stats 2>&1 | FileCheck %s --check-prefix=MLP

// Every kernel of the samples may be launched before its predecessor ends.
// SINE: kernels: [[SINE_KERNELS:[0-9]+]] distinct ({{.*}}; [[SINE_KERNELS]] may launch before their predecessor ends)
// SINE-NOT: kept apart
// SINE: entry train_step: 29 launches
// SINE-NEXT: kiln_attention_bwd_dkdv 1, kiln_attention_bwd_dq 1, kiln_attention_fwd 1, kiln_gemm 5, kiln_gemm_splitk 1, kiln_merged 10,
// SINE-SAME: kiln_optimizer 1, kiln_pointwise 3, kiln_rms_norm 3, kiln_rms_norm_backward 3

// UNMERGED: entry train_step: 40 launches
// UNMERGED-NEXT: kiln_attention_bwd_dkdv 1, kiln_attention_bwd_dq 1, kiln_attention_fwd 1, kiln_fused_reduce_sum 2, kiln_gemm 15, kiln_gemm_splitk 2,
// UNMERGED-SAME: kiln_optimizer 1, kiln_pointwise 5,

// SINE16: entry apply_update: 1 launches
// SINE16: entry train_step: 28 launches

// MLP: kernels: [[MLP_KERNELS:[0-9]+]] distinct ({{.*}}; [[MLP_KERNELS]] may launch before their predecessor ends)
// MLP: entry train_step: 6 launches
// MLP-NEXT: kiln_fused_reduce_sum 1, kiln_gemm 2, kiln_merged 2, kiln_optimizer 1
