// kiln-opt's command line: --help shows mlir-opt's options, MLIR's, the ONNX
// importer's and the passes, none of libLLVM's; a bad command line exits
// with status 2.

// RUN: kiln-opt --help | FileCheck %s --check-prefix=HELP
// RUN: kiln-opt --help > %t.help
// RUN: kiln-opt -h > %t.h
// RUN: diff %t.help %t.h
// HELP: usage: kiln-opt [options] [<input.mlir|input.onnx>] [-o output.mlir]
// HELP: mlir-opt's options:
// HELP: -o PATH {{ *}}output file (default: -)
// HELP: --split-input-file
// HELP: --verify-diagnostics
// HELP: Model:
// HELP: --trainable all|NAME,...
// HELP: MLIR's printing, pass-manager and timing options:
// HELP: --mlir-print-ir-after-all
// HELP: Passes:
// HELP: --kiln-fuse
// HELP: --kiln-recompute
// HELP: memory-budget=
// HELP: Pass Pipelines:
// HELP-NEXT: --kiln-cuda
// HELP: --kiln-pipeline
// HELP: Generic options:

// RUN: kiln-opt --help | FileCheck %s --check-prefix=NOLLVM
// NOLLVM-NOT: amdgpu
// NOLLVM-NOT: --print-after-all
// NOLLVM-NOT: polly

// RUN: kiln-opt --version | FileCheck %s --check-prefix=VERSION
// VERSION: kiln-opt {{[0-9]+\.[0-9]+\.[0-9]+}} (kiln, commit {{[0-9a-f]+|unknown}})

// RUN: sh %S/Inputs/exit_status.sh kiln-opt %s --kiln-fusee | FileCheck %s --check-prefix=CLOSE
// CLOSE: kiln-opt: error: unknown option '--kiln-fusee'; did you mean '--kiln-fuse'?
// CLOSE: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kiln-opt %s --trainable=all | FileCheck %s --check-prefix=ONNX
// ONNX: kiln-opt: error: --trainable is an option of the ONNX importer, and {{.*}}kiln_opt_options.mlir is not an .onnx model
// ONNX: exit status 2

// The passes still run as flags.
// RUN: kiln-opt %s --kiln-fuse | FileCheck %s --check-prefix=FUSE
// FUSE: kiln.fusion
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.add %x, %x : tensor<4xf32>, tensor<4xf32>
  return %0 : tensor<4xf32>
}
