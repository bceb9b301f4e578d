// Constants that autodiff introduces reach a kernel: the seed of a loss whose
// gradient a reduction kernel reads from memory is filled by a kernel of its
// own,
// and a parameter that the loss does not use gets a zero gradient filled by
// one. A gradient that is a view of another value is computed into its own
// buffer. Every model compiles to an artifact for the GPU.
// RUN: kilnc %s --function ce --train=sgd -o %t.ce.kiln
// RUN: kilnc %s --function ce --train=sgd --emit=mlir -o - | FileCheck %s --check-prefix=CE
// RUN: kilnc %s --function unused --train=adamw -o %t.unused.kiln
// RUN: kilnc %s --function unused --train=sgd --emit=mlir -o - | FileCheck %s --check-prefix=UNUSED
// RUN: kilnc %s --function view --train=sgd -o %t.view.kiln
// RUN: kilnc %s --function view --train=sgd --emit=mlir -o - | FileCheck %s --check-prefix=VIEW
// RUN: kilnc %s --function sum_all --train=sgd -o %t.sum.kiln
// RUN: kilnc %s --function bce --train=sgd -o %t.bce.kiln
// RUN: kilnc %s --function bce --train=sgd --emit=mlir -o - | FileCheck %s --check-prefix=BCE

// The seed of a cross entropy loss is a constant of the kernel that computes
// the loss and its gradient together; binary cross entropy's gradient kernel
// reads its seed from a buffer that a fill kernel writes (BCE below).
// CE-LABEL: func.func @forward_backward
// CE: kiln.fusion "reduction" (%arg0, %arg1)
// CE-NEXT: ^bb0
// CE-NEXT: %[[SEED:.*]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// CE-NEXT: kiln.cross_entropy
// CE-NEXT: kiln.cross_entropy_backward %[[SEED]]
func.func @ce(%logits: tensor<12x10xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
              %labels: tensor<12xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels label_smoothing = 0.1 : tensor<12x10xf32>, tensor<12xi32>
  return %loss : tensor<f32>
}

// The zero gradient's fill joins the kernel of p's gradient.
// UNUSED-LABEL: func.func @forward_backward
// UNUSED: %[[G:.*]]:2 = kiln.fusion "pointwise"
// UNUSED: %[[ZERO:.*]] = kiln.constant dense<0.000000e+00> : tensor<5xf32>
// UNUSED-NEXT: kiln.yield %{{.*}}, %[[ZERO]] :
// UNUSED: return %{{.*}}, %[[G]]#0, %[[G]]#1 :
func.func @unused(%p: tensor<4x5xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
                  %q: tensor<5xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "q"},
                  %t: tensor<4x5xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.tanh %p : tensor<4x5xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<4x5xf32>
  return %loss : tensor<f32>
}

// The gradient of p is the reshape of the MSE gradient: one kernel computes
// it into grad.p's buffer.
// VIEW-LABEL: func.func @forward_backward
// VIEW: %[[G:.*]] = kiln.fusion "pointwise"
// VIEW: kiln.reshape
// VIEW: kiln.yield
// VIEW: return %{{.*}}, %[[G]] :
func.func @view(%p: tensor<6x4xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
                %t: tensor<3x8xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.reshape %p : tensor<6x4xf32> -> tensor<3x8xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<3x8xf32>
  return %loss : tensor<f32>
}

func.func @sum_all(%p: tensor<3x5xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"}) -> tensor<f32> {
  %e = kiln.exp %p : tensor<3x5xf32>
  %loss = kiln.reduce_sum %e dims = [0, 1] : tensor<3x5xf32>
  return %loss : tensor<f32>
}

// BCE-LABEL: func.func @forward_backward
// BCE: %[[SEED:.*]] = kiln.fusion "pointwise" ()
// BCE-NEXT: kiln.constant dense<1.000000e+00> : tensor<f32>
// BCE: kiln.fusion "reduction" (%[[SEED]], %arg0, %arg1)
// BCE: kiln.binary_cross_entropy_backward
func.func @bce(%logits: tensor<12x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
               %t: tensor<12x3xf32> {kiln.name = "t"}) -> tensor<f32> {
  %loss = kiln.binary_cross_entropy %logits, %t : tensor<12x3xf32>
  return %loss : tensor<f32>
}
