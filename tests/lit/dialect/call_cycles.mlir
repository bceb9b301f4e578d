// A function that reaches itself through calls is an error at the call
// that closes the cycle, naming every function on it, in every tool (the
// reference interpreter would recurse without end). Calls without a cycle
// run.
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref %S/Inputs/calls_self.mlir --function f --random-seed 1 --print | FileCheck %s --check-prefix=SELF
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-opt %S/Inputs/calls_self.mlir | FileCheck %s --check-prefix=SELF
// RUN: sh %S/../tools/Inputs/exit_status.sh kilnc %S/Inputs/calls_self.mlir --inference --function f -o %t.kiln | FileCheck %s --check-prefix=SELF
// SELF: calls_self.mlir:5:8: error: 'func.call' op closes the call cycle @f -> @f: a kiln function may call others but not itself, directly or through others
// SELF: exit status 1

// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref %S/Inputs/calls_mutual.mlir --function f --random-seed 1 --print | FileCheck %s --check-prefix=MUTUAL
// MUTUAL: calls_mutual.mlir:12:8: error: 'func.call' op closes the call cycle @g -> @h -> @g
// MUTUAL: exit status 1

// RUN: kiln-ref %S/Inputs/calls_acyclic.mlir --function f --random-seed 1 --print | FileCheck %s --check-prefix=ACYCLIC
// ACYCLIC: y: tensor<2xf32> = [
