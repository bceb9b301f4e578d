// kiln-ref's command line: --function (--fn still works, unlisted), every
// option with its default, and exit status 2 for a bad command line.

// RUN: kiln-ref --help | FileCheck %s --check-prefix=HELP
// RUN: kiln-ref -h | FileCheck %s --check-prefix=HELP
// HELP: usage: kiln-ref [options] <model.mlir|model.onnx> --function NAME
// HELP: Model:
// HELP-NEXT: --fresh-params {{ *}}.onnx: trainable initializers start from a fresh
// HELP: --function NAME           the function to run (required unless --batch)
// HELP: --trainable
// HELP: Inputs:
// HELP: --int-range N
// HELP-NEXT: (default: 4)
// HELP: --random-seed N
// HELP: --batch PATH {{ *}}evaluate the runs a file lists
// HELP: Output:
// HELP: -o PATH
// HELP: --print-count N {{.*}}(default: 8)
// HELP: --version
// RUN: kiln-ref --help | FileCheck %s --check-prefix=NOFN
// NOFN-NOT: --fn
// RUN: kiln-ref --version | FileCheck %s --check-prefix=VERSION
// VERSION: kiln-ref {{[0-9]+\.[0-9]+\.[0-9]+}} (kiln, commit {{[0-9a-f]+|unknown}})

// --fn is --function.
// RUN: kiln-ref %s --function f --random-seed 3 -o %t.function.safetensors
// RUN: kiln-ref %s --fn f --random-seed 3 -o %t.fn.safetensors
// RUN: cmp %t.function.safetensors %t.fn.safetensors

// RUN: sh %S/Inputs/exit_status.sh kiln-ref %s --random-seed 3 --print | FileCheck %s --check-prefix=NOFUNCTION
// NOFUNCTION: kiln-ref: error: give --function NAME
// NOFUNCTION: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %s --function f --random-seed 3 | FileCheck %s --check-prefix=NOTHING
// NOTHING: kiln-ref: error: nothing to do: give -o out.safetensors and/or --print
// NOTHING: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %s --function f --init-params --print | FileCheck %s --check-prefix=INIT
// INIT: kiln-ref: error: --init-params sets how arguments are drawn: give --random-seed
// INIT: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %s --function f --random-seed 3 --print-count 3 -o %t.out | FileCheck %s --check-prefix=COUNT
// COUNT: kiln-ref: error: --print-count sets what --print shows: give --print
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %s --function f --random-seed 3 --print --int-range 0 | FileCheck %s --check-prefix=RANGE
// RANGE: kiln-ref: error: --int-range must be at least 1
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %s --function f --random-seed 3 --print --precision=f16 | FileCheck %s --check-prefix=PRECISION
// PRECISION: kiln-ref: error: --precision must be f32 or f64, got 'f16'
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %s --function f --random-seed 3 --print --trainable=all | FileCheck %s --check-prefix=ONNX
// ONNX: kiln-ref: error: --trainable is an option of the ONNX importer, and {{.*}}kiln_ref_options.mlir is not an .onnx model
// ONNX: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %s --function f --seed 3 --print | FileCheck %s --check-prefix=SEED
// SEED: kiln-ref: error: unknown option '--seed': kiln-ref draws its inputs with --random-seed
// SEED: exit status 2

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.add %x, %x : tensor<4xf32>, tensor<4xf32>
  return %0 : tensor<4xf32>
}
