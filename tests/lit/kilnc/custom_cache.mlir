// A user kernel's file is part of its kernel's source: a second build takes
// both kernels from the kernel cache, and an edit of the file (here only a
// comment) compiles that kernel again while the others stay cached.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %S/Inputs/custom/axpb_train.mlir %S/Inputs/custom/axpb.cu %t/
// RUN: kilnc %t/axpb_train.mlir --inference --kernel-cache=%t/cache -o %t/a.kiln --stats 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: kilnc %t/axpb_train.mlir --inference --kernel-cache=%t/cache -o %t/b.kiln --stats 2>&1 | FileCheck %s --check-prefix=AGAIN
// RUN: echo "// an edit" >> %t/axpb.cu
// RUN: kilnc %t/axpb_train.mlir --inference --kernel-cache=%t/cache -o %t/c.kiln --stats 2>&1 | FileCheck %s --check-prefix=EDITED
// FIRST: kernels: 2 distinct (2 compiled, 0 from the kernel cache
// AGAIN: kernels: 2 distinct (0 compiled, 2 from the kernel cache
// EDITED: kernels: 2 distinct (1 compiled, 1 from the kernel cache
