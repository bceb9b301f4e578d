// Every kiln-ref error names what is wrong and exits with a non-zero status.
// RUN: kiln-ref %S/Inputs/funcs.mlir --function make -o %t.all.safetensors
// RUN: kiln-ref %S/Inputs/funcs.mlir --function make_x -o %t.x.safetensors
// RUN: kiln-ref %S/Inputs/funcs.mlir --function wrong_shape -o %t.shape.safetensors
// RUN: kiln-ref %S/Inputs/funcs.mlir --function wrong_dtype -o %t.dtype.safetensors

// A missing input, from a file or with nothing given.
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function use --inputs %t.x.safetensors \
// RUN:   -o %t.o 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: missing input 'y' of 'use' in {{.*}}x.safetensors
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function use -o %t.o 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOINPUTS
// NOINPUTS: error: missing input 'x' of 'use' (give --inputs or --random-seed)

// An input that names no argument.
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function only_x --inputs %t.all.safetensors \
// RUN:   -o %t.o 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: error: input 'h' in {{.*}}all.safetensors names no argument of 'only_x'

// Wrong shape and wrong dtype.
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function only_x --inputs %t.shape.safetensors \
// RUN:   -o %t.o 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: input 'x' must be f32 [2, 3], got f32 [3, 2]
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function only_x --inputs %t.dtype.safetensors \
// RUN:   -o %t.o 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: input 'x' must be f32 [2, 3], got i32 [2, 3]

// An unknown function.
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function nope -o %t.o 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FN
// FN: error: no function 'nope' in {{.*}}funcs.mlir (functions: make, use, reread, unnamed, precision, wrong_shape, wrong_dtype, only_x, make_x, scalar)

// IR that does not parse or does not verify: MLIR's diagnostics with
// file:line:col.
// RUN: not kiln-ref %S/Inputs/bad.mlir --function f --random-seed 1 -o %t.o 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PARSE
// PARSE: bad.mlir:3:8: error: custom op 'kiln.frobnicate' is unknown
// RUN: not kiln-ref %S/Inputs/invalid.mlir --function f --random-seed 1 -o %t.o 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VERIFY
// VERIFY: invalid.mlir:2:8: error: shapes [4] and [5] are not broadcast-compatible

// Files that cannot be read or are not safetensors, an output that cannot
// be written.
// RUN: not kiln-ref %t.nonexistent.mlir --function f -o %t.o 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOMODEL
// NOMODEL: error: cannot open input file '{{.*}}nonexistent.mlir'
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function only_x --inputs %t.nonexistent \
// RUN:   -o %t.o 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: cannot read inputs '{{.*}}nonexistent':
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function only_x --inputs %S/Inputs/bad.mlir \
// RUN:   -o %t.o 2>&1 | FileCheck %s --check-prefix=NOTST
// NOTST: error: cannot read inputs '{{.*}}bad.mlir':
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function make -o %t.nodir/out.safetensors \
// RUN:   2>&1 | FileCheck %s --check-prefix=NOWRITE
// NOWRITE: error: cannot write '{{.*}}nodir/out.safetensors':

// Bad options.
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function make --precision f16 -o %t.o 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PREC
// PREC: error: --precision must be f32 or f64, got 'f16'
// RUN: not kiln-ref %S/Inputs/funcs.mlir --function make 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOOUT
// NOOUT: error: nothing to do: give -o out.safetensors and/or --print
