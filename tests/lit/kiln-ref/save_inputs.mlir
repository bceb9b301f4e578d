// Inputs drawn with --random-seed are saved as used; feeding them back gives
// the same outputs.
// RUN: kiln-ref %s --function f --random-seed 11 --save-inputs %t.in.safetensors --print > %t.drawn
// RUN: kiln-ref %s --function f --inputs %t.in.safetensors --print > %t.fed
// RUN: diff %t.drawn %t.fed
// RUN: FileCheck %s < %t.fed
// CHECK: y: tensor<3xbf16> = [{{.*}}]
func.func @f(%a: tensor<3xbf16> {kiln.name = "a"}) -> (tensor<3xbf16> {kiln.name = "y"}) {
  %0 = kiln.exp %a : tensor<3xbf16>
  return %0 : tensor<3xbf16>
}
