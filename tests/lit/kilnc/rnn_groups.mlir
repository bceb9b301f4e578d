// Heads too large for one block run as thread-block clusters (256 units in
// bf16) or as cooperative grid groups (768 units), forward and backward.
// RUN: kilnc %s --train=sgd --function=loss256 --stats -o %t.256.kiln 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: kilnc %s --train=sgd --function=loss768 --stats -o %t.768.kiln 2>&1 | FileCheck %s --check-prefix=GRID
// CLUSTER: rnn_forward [{{.*}} sync=cluster {{.*}}], cluster {{[2-8]}}x1x1
// CLUSTER: rnn_backward [{{.*}} sync=cluster {{.*}}], cluster {{[2-8]}}x1x1
// GRID: rnn_zero_counters [
// GRID: rnn_forward [{{.*}} sync=grid {{.*}}], cooperative
// GRID: rnn_backward [{{.*}} sync=grid {{.*}}], cooperative
func.func @loss256(
    %wx: tensor<4x3x1x1x256xbf16> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "wx"},
    %r: tensor<1x1x256x256xbf16> {kiln.param = #kiln.init<normal, std = 0.03>, kiln.name = "r"},
    %b: tensor<1x1x256xbf16> {kiln.param = #kiln.init<zeros>, kiln.name = "b"}) -> tensor<bf16> {
  %s0 = kiln.constant dense<0.0> : tensor<1x4x1x256xbf16>
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = elman : tensor<4x3x1x1x256xbf16>, tensor<1x1x256x256xbf16>, tensor<1x1x256xbf16>, tensor<1x4x1x256xbf16>
  %loss = kiln.reduce_mean %all dims = [0, 1, 2, 3, 4] : tensor<1x4x3x1x256xbf16>
  return %loss : tensor<bf16>
}
func.func @loss768(
    %wx: tensor<4x3x1x1x768xbf16> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "wx"},
    %r: tensor<1x1x768x768xbf16> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "r"},
    %b: tensor<1x1x768xbf16> {kiln.param = #kiln.init<zeros>, kiln.name = "b"}) -> tensor<bf16> {
  %s0 = kiln.constant dense<0.0> : tensor<1x4x1x768xbf16>
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = elman : tensor<4x3x1x1x768xbf16>, tensor<1x1x768x768xbf16>, tensor<1x1x768xbf16>, tensor<1x4x1x768xbf16>
  %loss = kiln.reduce_mean %all dims = [0, 1, 2, 3, 4] : tensor<1x4x3x1x768xbf16>
  return %loss : tensor<bf16>
}
