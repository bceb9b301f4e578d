// kiln-opt --kiln-pipeline is the pipeline kilnc runs: on the shipped
// samples both print the same IR (kiln-opt's output only ends with an extra
// blank line, which diff -I '^$' ignores).
// RUN: kilnc %samples/mlp.mlir --emit=mlir -o %t.mlp.kilnc.mlir
// RUN: kiln-opt %samples/mlp.mlir --kiln-pipeline="train=adamw" -o %t.mlp.opt.mlir
// RUN: diff -I '^$' %t.mlp.kilnc.mlir %t.mlp.opt.mlir
// RUN: kilnc %samples/mlp.mlir --emit=mlir --precision=bf16 -o %t.mlp16.kilnc.mlir
// RUN: kiln-opt %samples/mlp.mlir --kiln-pipeline="train=adamw precision=bf16" -o %t.mlp16.opt.mlir
// RUN: diff -I '^$' %t.mlp16.kilnc.mlir %t.mlp16.opt.mlir
// RUN: kilnc %samples/sine_block.mlir --emit=mlir -o %t.sine.kilnc.mlir
// RUN: kiln-opt %samples/sine_block.mlir --kiln-pipeline="train=adamw" -o %t.sine.opt.mlir
// RUN: diff -I '^$' %t.sine.kilnc.mlir %t.sine.opt.mlir
// RUN: kilnc %samples/sine_block.mlir --emit=mlir --precision=bf16 -o %t.sine16.kilnc.mlir
// RUN: kiln-opt %samples/sine_block.mlir --kiln-pipeline="train=adamw precision=bf16" -o %t.sine16.opt.mlir
// RUN: diff -I '^$' %t.sine16.kilnc.mlir %t.sine16.opt.mlir

// The other flags map onto the options of the same names: inference is
// train=none, --no-merge-launches is reuse-delay=0 (and merge-launches=false
// for code generation).
// RUN: kilnc %samples/mlp.mlir --emit=mlir --inference --precision=f16 --no-merge-launches -o %t.inf.kilnc.mlir
// RUN: kiln-opt %samples/mlp.mlir --kiln-pipeline="train=none precision=f16 reuse-delay=0" -o %t.inf.opt.mlir
// RUN: diff -I '^$' %t.inf.kilnc.mlir %t.inf.opt.mlir
// RUN: kilnc %samples/mlp.mlir --emit=mlir --train=sgd --momentum=0.9 --nesterov --weight-decay=0.01 --clip-norm=1 --grad-stats -o %t.sgd.kilnc.mlir
// RUN: kiln-opt %samples/mlp.mlir --kiln-pipeline="train=sgd momentum=0.9 nesterov=true weight-decay=0.01 clip-norm=1 grad-stats=true" -o %t.sgd.opt.mlir
// RUN: diff -I '^$' %t.sgd.kilnc.mlir %t.sgd.opt.mlir
// RUN: kilnc %samples/mlp.mlir --emit=mlir --train=adam --clip-value=0.5 --grad-scale=0.5 --grad-noise=0.1 --grad-noise-seed=7 --beta1=0.8 -o %t.adam.kilnc.mlir
// RUN: kiln-opt %samples/mlp.mlir --kiln-pipeline="train=adam clip-value=0.5 grad-scale=0.5 grad-noise=0.1 grad-noise-seed=7 beta1=0.8" -o %t.adam.opt.mlir
// RUN: diff -I '^$' %t.adam.kilnc.mlir %t.adam.opt.mlir
