//===- LayoutAssignment.h - convolutional graphs channels-last ---*- C++ -*-===//
//
// Runs the convolutional parts of a function channels-last (NHWC), whatever
// layout its source wrote. ONNX and PyTorch write NCHW; the convolution
// kernels that read through the tensor memory accelerator want the channels
// innermost. See --kiln-assign-layouts.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_LAYOUTASSIGNMENT_H
#define KILN_COMPILER_TRANSFORMS_LAYOUTASSIGNMENT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln {

/// Rewrites every region of `function` that holds an NCHW convolution to
/// run channels-last; returns how many ops now run channels-last.
int64_t assignChannelsLast(func::FuncOp function);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_LAYOUTASSIGNMENT_H
