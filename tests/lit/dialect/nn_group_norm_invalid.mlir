// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op 'input' must be [N, C, ...] (rank >= 2), got [8]}}
  %0 = kiln.group_norm %x groups = 2 : tensor<8xf32>
  return
}

// -----

func.func @groups(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op 'groups' = 4 must divide the 6 channels (dim 1) of 'input'}}
  %0 = kiln.group_norm %x groups = 4 : tensor<2x6x4xf32>
  return
}

// -----

func.func @zero_groups(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op 'groups' must be positive, got 0}}
  %0 = kiln.group_norm %x groups = 0 : tensor<2x6x4xf32>
  return
}

// -----

func.func @weight_shape(%x: tensor<2x6x4xf32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op 'weight' must have shape [6] (the channels of 'input'), got [3]}}
  %0 = kiln.group_norm %x, %w groups = 3 : tensor<2x6x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @eps(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op 'eps' must be positive, got 0.000000e+00}}
  %0 = kiln.group_norm %x groups = 3 eps = 0.0 : tensor<2x6x4xf32>
  return
}

// -----

func.func @backward_weight_type(%g: tensor<2x6x4xf32>, %x: tensor<2x6x4xf32>, %w: tensor<6xbf16>) {
  // expected-error @+1 {{'kiln.group_norm_backward' op 'weight' must have element type 'f32' like 'input', got 'bf16'}}
  %0:3 = kiln.group_norm_backward %g, %x, %w groups = 3 : tensor<2x6x4xf32>, tensor<6xbf16>
  return
}

// -----

func.func @dim(%x: tensor<2x6x4x4xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op 'dim' must be 1 or the last dim (3), got 2}}
  %0 = kiln.group_norm %x groups = 3 dim = 2 : tensor<2x6x4x4xf32>
  return
}

// -----

func.func @dim_rank2(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op 'dim' must be 1, got 0}}
  %0 = kiln.group_norm %x groups = 3 dim = 0 : tensor<2x6xf32>
  return
}

// -----

func.func @groups_last(%x: tensor<2x4x4x6xf32>) {
  // expected-error @+1 {{'kiln.group_norm' op 'groups' = 4 must divide the 6 channels (dim 3) of 'input'}}
  %0 = kiln.group_norm %x groups = 4 dim = 3 : tensor<2x4x4x6xf32>
  return
}

// -----

func.func @backward_dim(%g: tensor<2x6x4x4xf32>, %x: tensor<2x6x4x4xf32>) {
  // expected-error @+1 {{'dim' must be 1 or the last dim, got 2}}
  %0:3 = kiln.group_norm_backward %g, %x groups = 3 dim = 2 : tensor<2x6x4x4xf32>
  return
}
