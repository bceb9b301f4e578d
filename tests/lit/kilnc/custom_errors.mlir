// Every problem with a user kernel is an error at the user's kiln.custom,
// and kilnc exits with status 1. The models are in Inputs/custom/, their
// kernel files beside them.

// STATUS: exit status 1

// A missing file names the directories it was looked for in: the model's.
// RUN: not kilnc %S/Inputs/custom/missing_file.mlir --function f --inference -o %t 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: bash %S/Inputs/exit_status.sh kilnc %S/Inputs/custom/missing_file.mlir --function f --inference -o %t | FileCheck %s --check-prefix=STATUS
// MISSING: missing_file.mlir:2:8: error: 'kiln.custom' op: kernel file 'no_such_kernel.cu' not found (looked in {{.*}}Inputs/custom)

// The entry must be in the file.
// RUN: not kilnc %S/Inputs/custom/missing_entry.mlir --function f --inference --emit=cuda 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: bash %S/Inputs/exit_status.sh kilnc %S/Inputs/custom/missing_entry.mlir --function f --inference -o %t | FileCheck %s --check-prefix=STATUS
// ENTRY: missing_entry.mlir:2:8: error: 'kiln.custom' op: the kernel file '{{.*}}Inputs/custom/axpb.cu' defines no function 'lit::axpy'

// A file that does not compile: NVRTC's log, with the file's own line
// numbers.
// RUN: not kilnc %S/Inputs/custom/broken.mlir --function f --inference --no-kernel-cache -o %t 2>&1 | FileCheck %s --check-prefix=BROKEN
// RUN: bash %S/Inputs/exit_status.sh kilnc %S/Inputs/custom/broken.mlir --function f --inference --no-kernel-cache -o %t | FileCheck %s --check-prefix=STATUS
// BROKEN: broken.mlir:2:8: error: 'kiln.custom' op: generated kernel 'kiln_custom_broken_{{[0-9a-f]+}}' does not compile: NVRTC_ERROR_COMPILATION
// BROKEN: broken.cu(6): error: class "kiln::custom::tensor<const float>" has no member "no_such_member"
// BROKEN: detected during instantiation of "void broken(const Args &) [with Args=kiln_kernel::args_t]"

// Found through -I: not beside the model, but in a directory of the command
// line (after the model's own).
// RUN: not kilnc %S/Inputs/custom/include_dir.mlir --function f --inference --emit=cuda 2>&1 | FileCheck %s --check-prefix=NOINCLUDE
// RUN: kilnc %S/Inputs/custom/include_dir.mlir --function f --inference --emit=cuda -I %S/Inputs -I%S/Inputs/custom/lib | FileCheck %s --check-prefix=INCLUDE
// kiln-opt's pipeline takes the directories as custom-kernel-dir.
// RUN: kiln-opt %S/Inputs/custom/include_dir.mlir --kiln-pipeline="train=none function=f codegen=true compile=false custom-kernel-dir=%S/Inputs/custom/lib" -o %t.mlir
// NOINCLUDE: include_dir.mlir:2:8: error: 'kiln.custom' op: kernel file 'axpb_elsewhere.cu' not found (looked in {{.*}}Inputs/custom)
// INCLUDE: #line 1 "axpb_elsewhere.cu"
// INCLUDE: ::twice<args_t>(args);

// A gradient without a backward entry.
// RUN: not kilnc %S/Inputs/custom/no_backward.mlir --train=sgd -o %t 2>&1 | FileCheck %s --check-prefix=NOBACKWARD
// RUN: bash %S/Inputs/exit_status.sh kilnc %S/Inputs/custom/no_backward.mlir --train=sgd -o %t | FileCheck %s --check-prefix=STATUS
// NOBACKWARD: no_backward.mlir:3:8: error: 'kiln.custom' op has no 'backward' function, but the loss is differentiated through it: name the backward template of "axpb.cu" with `backward "NAME"`

// A backward entry that the file lacks, reported as the gradient of the
// user's op.
// RUN: not kilnc %S/Inputs/custom/missing_backward.mlir --train=sgd --emit=cuda 2>&1 | FileCheck %s --check-prefix=NOGRAD
// NOGRAD: missing_backward.mlir:3:8: error: the gradient of 'kiln.custom' op: the kernel file '{{.*}}Inputs/custom/axpb.cu' defines no function 'lit::axpb_gradient'

// The CPU reference cannot run CUDA, and says so at the op.
// RUN: not kiln-ref %S/Inputs/custom/include_dir.mlir --function f --random-seed 1 -o %t.safetensors 2>&1 | FileCheck %s --check-prefix=REF
// REF: include_dir.mlir:2:8: error: 'kiln.custom' op runs the CUDA function 'twice' of "axpb_elsewhere.cu", which the CPU reference cannot execute: check this model on the GPU (kilnc and kiln-run), or compare the kernel against finite differences of its forward there (tests/gpu/custom)
// REF-NOT: wrote

// Nor its backward (a training step kilnc built, as kiln-ref would get it).
// RUN: kilnc %S/Inputs/custom/axpb_train.mlir --train=sgd --emit=mlir -o %t.step.mlir
// RUN: not kiln-ref %t.step.mlir --function forward_backward --random-seed 1 -o %t.safetensors 2>&1 | FileCheck %s --check-prefix=REFBACK
// REFBACK: error: 'kiln.custom' op runs the CUDA function 'lit::axpb' of "axpb.cu", which the CPU reference cannot execute
