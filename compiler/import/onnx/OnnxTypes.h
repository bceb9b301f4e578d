//===- OnnxTypes.h - ONNX element types and tensors -------------*- C++ -*-===//
//
// The mapping of ONNX element types onto kiln's (f32, f16, bf16, i32, i1) and
// the conversion of ONNX TensorProtos into MLIR elements attributes. ONNX's
// int64 (shapes, indices, labels) is narrowed to kiln's i32: every value is
// checked to fit, so narrowing never changes a number.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXTYPES_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXTYPES_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::kiln::onnx_import {

/// ONNX's name of an element type ("FLOAT", "INT64", ...).
std::string onnxTypeName(int32_t elemType);

/// The kiln element type of an ONNX element type, or null where kiln has
/// none (double, the 8- and 16-bit integers, unsigned types, strings, ...).
Type kilnElementType(MLIRContext *context, int32_t elemType);

/// The static shape of a TensorShapeProto, or failure (with a diagnostic at
/// `loc` naming `what`) for a symbolic or unknown dimension.
FailureOr<llvm::SmallVector<int64_t>>
staticShape(const onnx::TensorShapeProto &shape, Location loc,
            llvm::StringRef what);

/// The kiln tensor type of a graph input or output, with a diagnostic at
/// `loc` for a non-tensor, dynamically shaped or unsupported type.
FailureOr<RankedTensorType> kilnTypeOf(const onnx::TypeProto &type,
                                       Location loc, llvm::StringRef what);

/// Checks, before anything is read or allocated, that the data of `tensor`
/// fits its dims: no negative dimension, an element and byte count within
/// 2^63, and exactly that many elements in its typed field, in its raw_data
/// or, for data in an external file not loaded yet, in `externalBytes`
/// (tensors without external bytes are checked once loaded). Types without
/// a fixed width are left to the readers, which reject them.
LogicalResult
checkTensorData(const onnx::TensorProto &tensor, Location loc,
                llvm::StringRef what,
                std::optional<uint64_t> externalBytes = std::nullopt);

/// The elements of `tensor` as doubles in row-major order (int64 values
/// beyond 2^53 are rounded; use readInt64s for exact integers). Reads the
/// typed fields and raw_data; external data is an error.
FailureOr<std::vector<double>> readNumbers(const onnx::TensorProto &tensor,
                                           Location loc, llvm::StringRef what);

/// The exact integer elements of an integer or bool tensor.
FailureOr<llvm::SmallVector<int64_t>>
readInt64s(const onnx::TensorProto &tensor, Location loc, llvm::StringRef what);

/// `tensor` as a kiln elements attribute (int64 narrowed to i32, checked).
FailureOr<DenseElementsAttr> toElementsAttr(const onnx::TensorProto &tensor,
                                            Location loc, llvm::StringRef what);

/// Builds an elements attribute of `type` from doubles (floats rounded to
/// the element type, integers converted exactly: the caller checks range).
DenseElementsAttr elementsFromNumbers(RankedTensorType type,
                                      llvm::ArrayRef<double> values);

/// The elements of an integer or bool elements attribute as int64.
llvm::SmallVector<int64_t> intsOf(DenseElementsAttr attr);

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXTYPES_H
