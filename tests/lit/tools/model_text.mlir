// What the tools read as a model is checked before MLIR's parser sees it,
// the same way by kilnc, kiln-opt and kiln-ref: a binary file is named as
// such, never echoed; an empty file is an error; brackets nested past the
// parser's limit are an error at the bracket (file:line:col), not a stack
// overflow; so is an integer in an array of i1, which MLIR 19 parses into
// an attribute that crashes its printer. Every failure exits with 1.

// A binary file (an ELF executable) given as .mlir: one line of error.
// RUN: python3 -c "import shutil, sys; shutil.copy(sys.executable, sys.argv[1])" %t.elf.mlir
// RUN: sh %S/Inputs/exit_status.sh kilnc %t.elf.mlir --inference -o %t.kiln | FileCheck %s --check-prefix=ELF
// RUN: sh %S/Inputs/exit_status.sh kiln-opt %t.elf.mlir | FileCheck %s --check-prefix=ELF
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %t.elf.mlir --function f --random-seed 1 --print | FileCheck %s --check-prefix=ELF
// ELF: error: {{.*}}elf.mlir is not a text file (it looks like an ELF executable or library)
// ELF-NEXT: exit status 1
// RUN: not kiln-opt %t.elf.mlir 2>&1 | wc -l | FileCheck %s --check-prefix=ONELINE
// RUN: not kilnc %t.elf.mlir --inference -o %t.kiln 2>&1 | wc -l | FileCheck %s --check-prefix=ONELINE
// ONELINE: {{^ *}}1{{$}}

// A NUL byte in a text file, and bytes that are not UTF-8.
// RUN: printf 'func.func @f() {\0}\n' > %t.nul.mlir
// RUN: sh %S/Inputs/exit_status.sh kiln-opt %t.nul.mlir | FileCheck %s --check-prefix=NUL
// NUL: error: {{.*}}nul.mlir is not a text file (it looks like binary data)
// NUL-NEXT: exit status 1
// RUN: printf 'func.func @f() {\n// \377\376\n}\n' > %t.latin.mlir
// RUN: not kiln-opt %t.latin.mlir 2>&1 | FileCheck %s --check-prefix=LATIN
// LATIN: error: {{.*}}latin.mlir is not a text file

// An empty file, and one of comments only: MLIR alone would take either for
// an empty module and print it with exit status 0.
// RUN: printf '' > %t.empty.mlir
// RUN: sh %S/Inputs/exit_status.sh kiln-opt %t.empty.mlir | FileCheck %s --check-prefix=EMPTY
// RUN: sh %S/Inputs/exit_status.sh kilnc %t.empty.mlir --inference -o %t.kiln | FileCheck %s --check-prefix=EMPTY
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %t.empty.mlir --function f --random-seed 1 --print | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: {{.*}}empty.mlir is empty: a kiln model defines at least one func.func
// EMPTY-NEXT: exit status 1
// RUN: printf '  \n// only a comment\n\n' > %t.comment.mlir
// RUN: not kiln-opt %t.comment.mlir 2>&1 | FileCheck %s --check-prefix=COMMENT
// COMMENT: error: {{.*}}comment.mlir is empty
// A module with no function.
// RUN: printf 'module {\n}\n' > %t.nofunc.mlir
// RUN: sh %S/Inputs/exit_status.sh kiln-opt %t.nofunc.mlir | FileCheck %s --check-prefix=NOFUNC
// RUN: sh %S/Inputs/exit_status.sh kilnc %t.nofunc.mlir --inference -o %t.kiln | FileCheck %s --check-prefix=NOFUNC
// NOFUNC: nofunc.mlir:1:1: error: no functions: a kiln model defines at least one func.func
// NOFUNC: exit status 1

// An attribute nested 100,000 brackets deep: an error at the first bracket
// past the limit (the attribute dictionary's brace counts).
// RUN: python3 %S/Inputs/nested_model.py 100000 %t.deep.mlir
// RUN: sh %S/Inputs/exit_status.sh kilnc %t.deep.mlir --inference -o %t.kiln | FileCheck %s --check-prefix=DEEP
// RUN: sh %S/Inputs/exit_status.sh kiln-opt %t.deep.mlir | FileCheck %s --check-prefix=DEEP
// RUN: sh %S/Inputs/exit_status.sh kiln-ref %t.deep.mlir --function f --random-seed 1 --print | FileCheck %s --check-prefix=DEEP
// DEEP: error: {{.*}}deep.mlir:1:284: brackets nest more than 256 levels deep here, past what kiln parses
// DEEP-NOT: {{\[\[}}
// DEEP: exit status 1
// Within the limit the same model parses and runs.
// RUN: python3 %S/Inputs/nested_model.py 250 %t.shallow.mlir
// RUN: kiln-opt %t.shallow.mlir | FileCheck %s --check-prefix=SHALLOW
// SHALLOW: func.func @f
// RUN: kiln-ref %t.shallow.mlir --function f --random-seed 1 --print | FileCheck %s --check-prefix=RUNS
// RUNS: result0: tensor<2xf32> = [
// Brackets in comments and strings do not count.
// RUN: python3 -c "print('// ' + '[' * 1000); print('func.func @f(%%x: tensor<2xf32> {kiln.name = \"' + '[' * 1000 + '\"}) -> tensor<2xf32> {'); print('  return %%x : tensor<2xf32>'); print('}')" > %t.quoted.mlir
// RUN: kiln-opt %t.quoted.mlir | FileCheck %s --check-prefix=SHALLOW

// An array of i1 takes true and false; the integers MLIR would take there
// are an error at the first one.
// RUN: sh %S/Inputs/exit_status.sh kiln-opt %S/Inputs/integer_bool_array.mlir | FileCheck %s --check-prefix=BOOLS
// RUN: sh %S/Inputs/exit_status.sh kilnc %S/Inputs/integer_bool_array.mlir --inference -o %t.kiln | FileCheck %s --check-prefix=BOOLS
// BOOLS: error: {{.*}}integer_bool_array.mlir:1:49: an array of i1 takes true and false, not integers
// BOOLS-NEXT: exit status 1
