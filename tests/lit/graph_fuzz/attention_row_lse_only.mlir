// Open: an attention whose output nothing uses, only its row log-sum-exp,
// becomes a fusion that yields the row log-sum-exp alone, which the
// attention kernels cannot emit: "no GPU kernel for 'kiln.attention' yet:
// it needs an attention kernel", in every mode. Found while reducing a
// graph fuzzer finding (tests/fuzz/graph); the fuzzer counts these
// refusals as known until this test passes.
// XFAIL: *
// RUN: kilnc %s --inference --emit=cuda -o %t.cu
func.func @loss(
    %q: tensor<1x2x4x8xf32> {kiln.name = "q"},
    %k: tensor<1x2x4x8xf32> {kiln.name = "k"},
    %v: tensor<1x2x4x8xf32> {kiln.name = "v"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %o, %lse = kiln.attention %q, %k, %v with_row_lse : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
  %loss = kiln.reduce_sum %lse dims = [0, 1, 2] : tensor<1x2x4xf32>
  return %loss : tensor<f32>
}
