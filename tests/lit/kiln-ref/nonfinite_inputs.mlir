// A NaN or infinity in --inputs is an error naming the tensor, the element
// and its file offset (exit 1), as kiln-run's is; --allow-nonfinite-inputs
// passes them on. Drawn inputs are always finite.
// RUN: python3 %S/Inputs/write_f32_safetensors.py %t.nan.safetensors x=1,nan,3,4 y=0.5,-1
// RUN: python3 %S/Inputs/write_f32_safetensors.py %t.inf.safetensors x=1,2,3,4 y=0.5,-inf
// RUN: python3 %S/Inputs/write_f32_safetensors.py %t.fine.safetensors x=1,2,3,4 y=0.5,-1
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref %s --function f --inputs %t.nan.safetensors --print | FileCheck %s --check-prefix=NAN
// NAN: error: input 'x' in {{.*}}nan.safetensors: element 1 [0, 1] is NaN (file offset {{[0-9]+}}) (--allow-nonfinite-inputs passes it on)
// NAN-NEXT: exit status 1
// RUN: not kiln-ref %s --function f --inputs %t.inf.safetensors -o %t.o.safetensors 2>&1 | FileCheck %s --check-prefix=INF
// INF: error: input 'y' in {{.*}}inf.safetensors: element 1 [1] is -inf (file offset {{[0-9]+}})
// RUN: kiln-ref %s --function f --inputs %t.nan.safetensors --allow-nonfinite-inputs --print | FileCheck %s --check-prefix=ALLOWED
// ALLOWED: z: tensor<2x2xf32> = [1.5, nan, 3.5, 3]
// RUN: kiln-ref %s --function f --inputs %t.fine.safetensors --print | FileCheck %s --check-prefix=FINE
// FINE: z: tensor<2x2xf32> = [1.5, 1, 3.5, 3]
// The flag sets how --inputs is checked: without --inputs it is a usage error.
// RUN: sh %S/../tools/Inputs/exit_status.sh kiln-ref %s --function f --random-seed 1 --allow-nonfinite-inputs --print | FileCheck %s --check-prefix=USAGE
// USAGE: --allow-nonfinite-inputs sets how --inputs is checked: give --inputs
// USAGE: exit status 2

func.func @f(%x: tensor<2x2xf32> {kiln.name = "x"}, %y: tensor<2xf32> {kiln.name = "y"})
    -> (tensor<2x2xf32> {kiln.name = "z"}) {
  %z = kiln.add %x, %y : tensor<2x2xf32>, tensor<2xf32>
  return %z : tensor<2x2xf32>
}
