//===- TrainableInitializers.h - Which initializers --trainable makes params -===//
//
// The initializers an import turns into parameters: those --trainable names,
// or with "all" every floating-point initializer that some op reads as a
// weight. Floating-point initializers an op reads as a setting (batch
// norm's running statistics, Clip's bounds, Resize's scales, a Pad's
// value, a Dropout's ratio) stay constants: PyTorch has no parameter for
// them, and kiln needs most of them at compile time. (The importer also
// keeps an initializer holding an infinity, a mask's fill value, a
// constant under "all".) Naming a setting, or a name that is not an
// initializer, is an error at the graph's file.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_ONNX_TRAINABLEINITIALIZERS_H
#define KILN_COMPILER_IMPORT_ONNX_TRAINABLEINITIALIZERS_H

#include "compiler/import/onnx/FunctionInliner.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringSet.h"
#include "onnx/onnx_pb.h"

namespace mlir::kiln::onnx_import {

/// The names of `graph`'s initializers that `trainable` (empty, "all" or a
/// comma-separated list) makes parameters, given the graph's nodes after
/// inlining; errors at `fileLoc`.
FailureOr<llvm::StringSet<>>
selectTrainable(llvm::StringRef trainable, const onnx::GraphProto &graph,
                llvm::ArrayRef<FlatNode> nodes, Location fileLoc);

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_TRAINABLEINITIALIZERS_H
