// kilnc refuses a typed header it cannot write, and writes neither the
// header nor the artifact.
// RUN: not kilnc %s --emit=header -o %t.h 2>&1 | FileCheck %s --check-prefix=CLASH
// RUN: not test -e %t.h
// RUN: not kilnc %s -o %t.kiln -H %t.beside.h 2>&1 | FileCheck %s --check-prefix=CLASH
// RUN: not test -e %t.kiln
// RUN: not test -e %t.beside.h
// RUN: not kilnc %samples/mlp.mlir --emit=header --header-class=models::2mlp -o %t.h 2>&1 | FileCheck %s --check-prefix=CLASS
// RUN: not kilnc %samples/mlp.mlir --emit=mlir -H %t.h 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not test -e %t.h

// CLASH: kilnc: error: typed header: parameter 'w_1' and parameter 'w.1' both map to the C++ name 'w_1' in class HeaderErrors (every character outside [A-Za-z0-9_] becomes '_', runs of '_' one; rename one of them)
// CLASS: kilnc: error: typed header: the class name 'models::2mlp' is not a C++ name (identifiers separated by '::')
// EMIT: kilnc: error: --header writes the header beside the artifact; with --emit=mlir there is none (--emit=header writes only a header)
func.func @loss(%w: tensor<3xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w.1"},
                %v: tensor<3xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w_1"},
                %x: tensor<3xf32> {kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.mul %w, %x : tensor<3xf32>, tensor<3xf32>
  %1 = kiln.mul %0, %v : tensor<3xf32>, tensor<3xf32>
  %2 = kiln.reduce_sum %1 dims = [0] : tensor<3xf32>
  return %2 : tensor<f32>
}
