// kiln-ref --batch evaluates the runs a file lists (model, function,
// precision, inputs, output; tab-separated) in one process, with the same
// results as one run each; a failed run names its line and the rest go on.
// RUN: kiln-ref %S/Inputs/funcs.mlir --function make -o %t.in.safetensors
// RUN: kiln-ref %S/Inputs/funcs.mlir --function use --inputs %t.in.safetensors -o %t.use32.single
// RUN: kiln-ref %S/Inputs/funcs.mlir --function use --inputs %t.in.safetensors --precision f64 -o %t.use64.single
// RUN: kiln-ref %S/Inputs/funcs.mlir --function precision --precision f64 -o %t.prec.single
// RUN: kiln-ref %s --function twice --inputs %t.in.safetensors -o %t.twice.single
// RUN: printf '# model\tfunction\tprecision\tinputs\toutput\n' > %t.runs
// RUN: printf '%%s\tuse\tf32\t%%s\t%%s\n' %S/Inputs/funcs.mlir %t.in.safetensors %t.use32.batch >> %t.runs
// RUN: printf '\n%%s\tuse\tf64\t%%s\t%%s\n' %S/Inputs/funcs.mlir %t.in.safetensors %t.use64.batch >> %t.runs
// RUN: printf '%%s\ttwice\tf32\t%%s\t%%s\n' %s %t.in.safetensors %t.twice.batch >> %t.runs
// RUN: printf '%%s\tprecision\tf64\t-\t%%s\n' %S/Inputs/funcs.mlir %t.prec.batch >> %t.runs
// RUN: kiln-ref --batch %t.runs
// RUN: cmp %t.use32.single %t.use32.batch
// RUN: cmp %t.use64.single %t.use64.batch
// RUN: cmp %t.twice.single %t.twice.batch
// RUN: cmp %t.prec.single %t.prec.batch

// Failed runs: each prints its errors as a single run does, then its line;
// the runs after it are still made, and the status is 1.
// RUN: printf '%%s\tnope\tf64\t-\t%%s\n' %S/Inputs/funcs.mlir %t.o > %t.bad
// RUN: printf '%%s\tf\tf64\t-\t%%s\n' %S/Inputs/bad.mlir %t.o >> %t.bad
// RUN: printf '%%s\tuse\tf32\t-\t%%s\n' %S/Inputs/funcs.mlir %t.o >> %t.bad
// RUN: printf '%%s\tf\tf64\t-\t%%s\n' %S/Inputs/bad.mlir %t.o >> %t.bad
// RUN: printf '%%s\tuse\tf32\t%%s\t%%s\n' %S/Inputs/funcs.mlir %t.in.safetensors %t.after >> %t.bad
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref --batch %t.bad | FileCheck %s --check-prefix=FAILED
// RUN: cmp %t.use32.single %t.after
// FAILED: error: no function 'nope' in {{.*}}funcs.mlir
// FAILED-NEXT: kiln-ref: batch line 1 failed
// FAILED-NEXT: bad.mlir:3:8: error: custom op 'kiln.frobnicate' is unknown
// FAILED: kiln-ref: batch line 2 failed
// FAILED-NEXT: error: missing input 'x' of 'use' (give --inputs or --random-seed)
// FAILED-NEXT: kiln-ref: batch line 3 failed
// FAILED-NEXT: bad.mlir:3:8: error: custom op 'kiln.frobnicate' is unknown
// FAILED: kiln-ref: batch line 4 failed
// FAILED-NEXT: exit status 1

// A bad line of the file: its location, status 1, nothing run.
// RUN: printf '# runs\n%%s\tuse\tf16\t-\t%%s\n' %S/Inputs/funcs.mlir %t.o > %t.badline
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref --batch %t.badline | FileCheck %s --check-prefix=LINE
// LINE: error: {{.*}}.badline:2: precision must be f32 or f64, got 'f16'
// LINE-NEXT: exit status 1
// RUN: printf '%%s use f64 - out\n' %S/Inputs/funcs.mlir > %t.spaces
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref --batch %t.spaces | FileCheck %s --check-prefix=FIELDS
// FIELDS: error: {{.*}}.spaces:1: expected 5 tab-separated fields (model, function, precision, inputs, output), got 1
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref --batch %t.nonexistent | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: cannot read batch file '{{.*}}nonexistent': No such file or directory
// NOFILE-NEXT: exit status 1

// The single-run options do not go with --batch (status 2).
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref --batch %t.runs --precision f64 | FileCheck %s --check-prefix=OPTION
// OPTION: kiln-ref: error: --batch lists each run's model, function, precision, inputs and output: give --precision in a single run only
// OPTION: exit status 2
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref %s --batch %t.runs | FileCheck %s --check-prefix=MODEL
// MODEL: kiln-ref: error: --batch lists each run's model: give no model '{{.*}}batch.mlir' with it
// MODEL: exit status 2
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref --function use | FileCheck %s --check-prefix=NOMODEL
// NOMODEL: kiln-ref: error: give a model (or --batch FILE)
// NOMODEL: exit status 2

func.func @twice(%x: tensor<2x3xf32> {kiln.name = "x"}, %y: tensor<3xf32> {kiln.name = "y"},
                 %idx: tensor<4xi32> {kiln.name = "idx"}, %h: tensor<2xbf16> {kiln.name = "h"},
                 %m: tensor<3xi1> {kiln.name = "m"}) -> (tensor<2x3xf32> {kiln.name = "x2"}) {
  %0 = kiln.add %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
