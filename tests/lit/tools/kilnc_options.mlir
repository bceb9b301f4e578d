// kilnc's command line: --help shows kilnc's own options by topic, each with
// its default, and none of LLVM's; -h is --help; --version names kiln's
// version and commit; a bad command line exits with status 2 and says why,
// before anything is read.

// RUN: kilnc --help | FileCheck %s --check-prefix=HELP
// RUN: kilnc --help > %t.help
// RUN: kilnc -h > %t.h
// RUN: diff %t.help %t.h
// HELP: usage: kilnc [options] <model.mlir|model.onnx> -o model.kiln
// HELP: Output:
// HELP: -o PATH {{.*}}(default: -)
// HELP: --stats {{ *}}print to stderr what was compiled: each kernel
// HELP: Training:
// HELP: --beta1 X {{ *}}Adam(W) beta1, in [0, 1) (default: 0.9)
// HELP: --train adamw|adam|sgd    the optimizer (default: adamw)
// HELP: Precision and memory:
// HELP: --memory-budget BYTES
// HELP: Data-parallel training:
// HELP: --bucket-bytes BYTES
// HELP: (default: 25MiB)
// HELP: Model:
// HELP-NEXT: --fresh-params {{ *}}.onnx: trainable initializers start from a fresh
// HELP: --function NAME
// HELP: --loss mse|cross_entropy
// HELP-NEXT: --target
// HELP: --onnx-weights PATH
// HELP: --target NAME
// HELP: --trainable all|NAME,...
// HELP: Pipeline (MLIR's options):
// HELP: --mlir-print-ir-after-all
// HELP: Generic options:
// HELP-NEXT: -h, --help
// HELP-NEXT: --help-hidden
// HELP-NEXT: --version

// LLVM's own options are under --help-hidden only.
// RUN: kilnc --help | FileCheck %s --check-prefix=NOLLVM
// NOLLVM-NOT: --print-after-all
// NOLLVM-NOT: amdgpu
// NOLLVM-NOT: Enable statistics output
// RUN: kilnc --help-hidden | FileCheck %s --check-prefix=HIDDEN
// HIDDEN: --print-after-all

// RUN: kilnc --version | FileCheck %s --check-prefix=VERSION
// VERSION: kilnc {{[0-9]+\.[0-9]+\.[0-9]+}} (kiln, commit {{[0-9a-f]+|unknown}})

// Unknown options: where they belong, no nonsense suggestion.
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --lr=0.1 -o %t.kiln | FileCheck %s --check-prefix=LR
// LR: kilnc: error: unknown option '--lr': the learning rate is a run-time flag of kiln-run and train_reference (--lr), not of the compiler
// LR-NOT: did you mean
// LR: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --infrence -o %t.kiln | FileCheck %s --check-prefix=CLOSE
// CLOSE: kilnc: error: unknown option '--infrence'; did you mean '--inference'?
// CLOSE: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --beta1=high -o %t.kiln | FileCheck %s --check-prefix=NOTREAL
// NOTREAL: kilnc: for the --beta1 option: 'high' value invalid for floating point argument!
// NOTREAL: exit status 2

// Options that do not go together or are out of range.
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --inference --train=sgd -o %t.kiln | FileCheck %s --check-prefix=INFTRAIN
// INFTRAIN: kilnc: error: --inference compiles no training entries: drop --train
// INFTRAIN: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --inference --clip-norm=1 -o %t.kiln | FileCheck %s --check-prefix=INFCLIP
// INFCLIP: kilnc: error: --clip-norm is a training setting; --inference compiles no training entries
// INFCLIP: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --beta1=5 -o %t.kiln | FileCheck %s --check-prefix=BETA1
// BETA1: kilnc: error: --beta1 must be in [0, 1), got 5
// BETA1: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --beta2=-0.5 -o %t.kiln | FileCheck %s --check-prefix=BETA2
// BETA2: kilnc: error: --beta2 must be in [0, 1), got -0.5
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --beta1=nan -o %t.kiln | FileCheck %s --check-prefix=NAN
// NAN: kilnc: error: --beta1 must be a finite number
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --epsilon=0 -o %t.kiln | FileCheck %s --check-prefix=EPS
// EPS: kilnc: error: --epsilon must be > 0
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --weight-decay=-0.1 -o %t.kiln | FileCheck %s --check-prefix=DECAY
// DECAY: kilnc: error: --weight-decay must be >= 0
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --grad-scale=0 -o %t.kiln | FileCheck %s --check-prefix=SCALE
// SCALE: kilnc: error: --grad-scale must be > 0
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --train=sgd --beta1=0.8 -o %t.kiln | FileCheck %s --check-prefix=SGDBETA
// SGDBETA: kilnc: error: --beta1 is a setting of adam and adamw, not of sgd
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --momentum=0.9 -o %t.kiln | FileCheck %s --check-prefix=ADAMMOM
// ADAMMOM: kilnc: error: --momentum is a setting of sgd, not of adamw
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --train=sgd --momentum=1 -o %t.kiln | FileCheck %s --check-prefix=MOM
// MOM: kilnc: error: --momentum must be in [0, 1), got 1
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --grad-noise-seed=3 -o %t.kiln | FileCheck %s --check-prefix=SEED
// SEED: kilnc: error: --grad-noise-seed seeds the noise of --grad-noise, which is off
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --loss-scale-init=1024 -o %t.kiln | FileCheck %s --check-prefix=LSINIT
// LSINIT: kilnc: error: --loss-scale-init needs --loss-scale=dynamic
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --loss-scale=dynamic --nonfinite-grads=apply -o %t.kiln | FileCheck %s --check-prefix=LSAPPLY
// LSAPPLY: kilnc: error: --loss-scale=dynamic skips the updates of non-finite gradients; it cannot go with --nonfinite-grads=apply
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --header-class=Model -o %t.kiln | FileCheck %s --check-prefix=CLASS
// CLASS: kilnc: error: --header-class names the class of the typed header: give --header or --emit=header
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --arch=hopper -o %t.kiln | FileCheck %s --check-prefix=ARCH
// ARCH: kilnc: error: --arch must be an SM architecture such as sm_90 or sm_90a, got 'hopper'
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --kernel-cache=%t.cache --no-kernel-cache -o %t.kiln | FileCheck %s --check-prefix=CACHE
// CACHE: kilnc: error: --kernel-cache and --no-kernel-cache contradict each other
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --bucket-bytes=12XB --data-parallel -o %t.kiln | FileCheck %s --check-prefix=BYTES
// BYTES: kilnc: error: --bucket-bytes must be a number of bytes, optionally with B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), got '12XB'
// BYTES: exit status 2

// The ONNX importer's options are for .onnx models.
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --trainable=all -o %t.kiln | FileCheck %s --check-prefix=TRAINABLE
// TRAINABLE: kilnc: error: --trainable is an option of the ONNX importer, and {{.*}}kilnc_options.mlir is not an .onnx model
// TRAINABLE: exit status 2
// RUN: sh %S/Inputs/exit_status.sh kilnc %s --loss=mse -o %t.kiln | FileCheck %s --check-prefix=ONNXLOSS
// ONNXLOSS: kilnc: error: --loss is an option of the ONNX importer

// Byte counts take units everywhere.
// RUN: kilnc %s --memory-budget=1GiB --emit=mlir -o %t.mlir
// RUN: kilnc %s --data-parallel --bucket-bytes=2MiB --first-bucket-bytes=64KiB --emit=mlir -o %t.dp.mlir

// The binary artifact is not written to a terminal; text is.
// RUN: python3 %S/Inputs/with_tty.py kilnc %s | FileCheck %s --check-prefix=TTY
// TTY: kilnc: error: the artifact is binary and standard output is a terminal: give -o model.kiln (or redirect the output)
// TTY: 0 bytes on the terminal
// TTY: exit status 2
// RUN: python3 %S/Inputs/with_tty.py kilnc %s --emit=mlir | FileCheck %s --check-prefix=TTYTEXT
// TTYTEXT-NOT: error
// TTYTEXT: exit status 0

func.func @loss(%w: tensor<3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "w"}) -> tensor<f32> {
  %0 = kiln.reduce_sum %w dims = [0] : tensor<3xf32>
  return %0 : tensor<f32>
}
