//===- OnnxTypes.cpp - ONNX element types and tensors in kiln terms -------===//

#include "compiler/import/onnx/OnnxTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <iterator>
#include <limits>

namespace mlir::kiln::onnx_import {

using onnx::TensorProto;

std::string onnxTypeName(int32_t elemType) {
  if (TensorProto::DataType_IsValid(elemType))
    return TensorProto::DataType_Name(
        static_cast<TensorProto::DataType>(elemType));
  // The types of IR versions 9 to 13, which libonnx 1.12 does not name.
  static const char *const newer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",
      "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0", "UINT2",          "INT2"};
  if (elemType >= 17 && elemType < 17 + static_cast<int32_t>(std::size(newer)))
    return newer[elemType - 17];
  return "element type " + std::to_string(elemType);
}

Type kilnElementType(MLIRContext *context, int32_t elemType) {
  Builder b(context);
  switch (elemType) {
  case TensorProto::FLOAT:
    return b.getF32Type();
  case TensorProto::FLOAT16:
    return b.getF16Type();
  case TensorProto::BFLOAT16:
    return b.getBF16Type();
  case TensorProto::INT32:
  case TensorProto::INT64:
    return b.getI32Type();
  case TensorProto::BOOL:
    return b.getI1Type();
  default:
    return Type();
  }
}

FailureOr<llvm::SmallVector<int64_t>>
staticShape(const onnx::TensorShapeProto &shape, Location loc,
            llvm::StringRef what) {
  llvm::SmallVector<int64_t> dims;
  for (const auto &dim : shape.dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      return emitError(loc)
             << what << " has a "
             << (dim.has_dim_param()
                     ? "symbolic dimension '" + dim.dim_param() + "'"
                     : std::string("dimension of unknown size"))
             << ": kiln compiles static shapes only";
    dims.push_back(dim.dim_value());
  }
  return dims;
}

FailureOr<RankedTensorType> kilnTypeOf(const onnx::TypeProto &type,
                                       Location loc, llvm::StringRef what) {
  if (!type.has_tensor_type())
    return emitError(loc) << what
                          << " is not a tensor (sequences, maps and "
                             "optionals are not supported)";
  const auto &tensor = type.tensor_type();
  Type element = kilnElementType(loc.getContext(), tensor.elem_type());
  if (!element)
    return emitError(loc) << what << " has element type "
                          << onnxTypeName(tensor.elem_type())
                          << ", which kiln does not support (FLOAT, FLOAT16, "
                             "BFLOAT16, INT32, INT64 and BOOL)";
  if (!tensor.has_shape())
    return emitError(loc) << what
                          << " has no shape: kiln compiles static shapes only";
  auto dims = staticShape(tensor.shape(), loc, what);
  if (failed(dims))
    return failure();
  return RankedTensorType::get(*dims, element);
}

namespace {

/// Size in bytes of one element of raw_data for the supported decodings.
int rawWidth(int32_t elemType) {
  switch (elemType) {
  case TensorProto::FLOAT:
  case TensorProto::INT32:
  case TensorProto::UINT32:
    return 4;
  case TensorProto::DOUBLE:
  case TensorProto::INT64:
  case TensorProto::UINT64:
    return 8;
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
  case TensorProto::INT16:
  case TensorProto::UINT16:
    return 2;
  case TensorProto::INT8:
  case TensorProto::UINT8:
  case TensorProto::BOOL:
    return 1;
  default:
    return 0;
  }
}

/// The length of the typed field that holds `tensor`'s elements when it has
/// no raw_data (float_data for FLOAT, int32_data for the narrow types, ...).
int64_t typedFieldSize(const TensorProto &tensor) {
  switch (tensor.data_type()) {
  case TensorProto::FLOAT:
    return tensor.float_data_size();
  case TensorProto::DOUBLE:
    return tensor.double_data_size();
  case TensorProto::INT64:
    return tensor.int64_data_size();
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return tensor.uint64_data_size();
  default: // INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16
    return tensor.int32_data_size();
  }
}

std::string dimsText(const TensorProto &tensor) {
  std::string text = "[";
  for (int i = 0; i < tensor.dims_size(); ++i)
    text += (i ? ", " : "") + std::to_string(tensor.dims(i));
  return text + "]";
}

double halfBitsToDouble(uint16_t bits, bool bfloat) {
  llvm::APFloat value(bfloat ? llvm::APFloat::BFloat()
                             : llvm::APFloat::IEEEhalf(),
                      llvm::APInt(16, bits));
  return value.convertToFloat();
}

/// Element `i` of raw little-endian data of `elemType` as a double, and as an
/// exact integer through `asInt` where integral.
double rawElement(const std::string &raw, int32_t elemType, int64_t i,
                  int64_t *asInt) {
  const char *p = raw.data() + i * rawWidth(elemType);
  auto load = [&](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (elemType) {
  case TensorProto::FLOAT:
    return load(float());
  case TensorProto::DOUBLE:
    return load(double());
  case TensorProto::FLOAT16:
    return halfBitsToDouble(load(uint16_t()), false);
  case TensorProto::BFLOAT16:
    return halfBitsToDouble(load(uint16_t()), true);
  case TensorProto::INT32:
    return static_cast<double>(*asInt = load(int32_t()));
  case TensorProto::UINT32:
    return static_cast<double>(*asInt = load(uint32_t()));
  case TensorProto::INT64:
    return static_cast<double>(*asInt = load(int64_t()));
  case TensorProto::UINT64:
    return static_cast<double>(*asInt = static_cast<int64_t>(load(uint64_t())));
  case TensorProto::INT16:
    return static_cast<double>(*asInt = load(int16_t()));
  case TensorProto::UINT16:
    return static_cast<double>(*asInt = load(uint16_t()));
  case TensorProto::INT8:
    return static_cast<double>(*asInt = load(int8_t()));
  case TensorProto::UINT8:
  case TensorProto::BOOL:
    return static_cast<double>(*asInt = load(uint8_t()));
  default:
    return 0;
  }
}

/// Decodes every element as a double and, for integer types, exactly.
LogicalResult decode(const TensorProto &tensor, Location loc,
                     llvm::StringRef what, std::vector<double> &numbers,
                     llvm::SmallVector<int64_t> *ints) {
  int32_t type = tensor.data_type();
  if (tensor.data_location() == TensorProto::EXTERNAL)
    return emitError(loc) << what
                          << " keeps its data in an external file, which was "
                             "not loaded";
  if (type == TensorProto::STRING || type == TensorProto::COMPLEX64 ||
      type == TensorProto::COMPLEX128 || rawWidth(type) == 0)
    return emitError(loc) << what << " has element type " << onnxTypeName(type)
                          << ", which kiln does not support";
  // Sizes are checked before anything is allocated.
  if (failed(checkTensorData(tensor, loc, what)))
    return failure();
  int64_t count = 1;
  for (int64_t dim : tensor.dims())
    count *= dim;
  numbers.resize(count);
  if (ints)
    ints->assign(count, 0);
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    for (int64_t i = 0; i < count; ++i) {
      int64_t asInt = 0;
      numbers[i] = rawElement(raw, type, i, &asInt);
      if (ints)
        (*ints)[i] = asInt;
    }
    return success();
  }
  auto fill = [&](const auto &field, auto convert) -> LogicalResult {
    for (int64_t i = 0; i < count; ++i) {
      int64_t asInt = 0;
      numbers[i] = convert(field.Get(i), &asInt);
      if (ints)
        (*ints)[i] = asInt;
    }
    return success();
  };
  switch (type) {
  case TensorProto::FLOAT:
    return fill(tensor.float_data(), [](float v, int64_t *) { return v; });
  case TensorProto::DOUBLE:
    return fill(tensor.double_data(), [](double v, int64_t *) { return v; });
  case TensorProto::INT64:
    return fill(tensor.int64_data(), [](int64_t v, int64_t *i) {
      return static_cast<double>(*i = v);
    });
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    return fill(tensor.uint64_data(), [](uint64_t v, int64_t *i) {
      return static_cast<double>(*i = static_cast<int64_t>(v));
    });
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16: {
    bool bfloat = type == TensorProto::BFLOAT16;
    return fill(tensor.int32_data(), [bfloat](int32_t v, int64_t *) {
      return halfBitsToDouble(static_cast<uint16_t>(v), bfloat);
    });
  }
  default: // INT32, INT16, INT8, UINT16, UINT8, BOOL
    return fill(tensor.int32_data(), [](int32_t v, int64_t *i) {
      return static_cast<double>(*i = v);
    });
  }
}

bool isIntegral(int32_t type) {
  return type != TensorProto::FLOAT && type != TensorProto::DOUBLE &&
         type != TensorProto::FLOAT16 && type != TensorProto::BFLOAT16;
}

} // namespace

LogicalResult checkTensorData(const TensorProto &tensor, Location loc,
                              llvm::StringRef what,
                              std::optional<uint64_t> externalBytes) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return emitError(loc) << what << " has a negative dimension in its dims "
                            << dimsText(tensor);
    if (llvm::MulOverflow(count, dim, count))
      return emitError(loc) << what << " has dims " << dimsText(tensor)
                            << ", more than 2^63 elements";
  }
  int width = rawWidth(tensor.data_type());
  int64_t bytes = 0;
  if (width == 0) // strings and unsupported types: their readers say so
    return success();
  if (llvm::MulOverflow(count, static_cast<int64_t>(width), bytes))
    return emitError(loc) << what << " has dims " << dimsText(tensor)
                          << ", more than 2^63 bytes of "
                          << onnxTypeName(tensor.data_type());
  auto mismatch = [&](llvm::StringRef where, uint64_t have, llvm::StringRef unit,
                      int64_t need) {
    return emitError(loc) << what << " holds " << have << " " << unit << " in "
                          << where << " but its dims " << dimsText(tensor)
                          << " of " << onnxTypeName(tensor.data_type())
                          << " need " << need << " " << unit;
  };
  if (externalBytes) {
    if (*externalBytes != static_cast<uint64_t>(bytes))
      return mismatch("its external data", *externalBytes, "bytes", bytes);
    return success();
  }
  if (tensor.data_location() == TensorProto::EXTERNAL)
    return success(); // checked with its length when it is loaded
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != static_cast<uint64_t>(bytes))
      return mismatch("raw_data", tensor.raw_data().size(), "bytes", bytes);
    return success();
  }
  if (typedFieldSize(tensor) != count)
    return mismatch("its typed data", typedFieldSize(tensor), "elements",
                    count);
  return success();
}

FailureOr<std::vector<double>> readNumbers(const TensorProto &tensor,
                                           Location loc, llvm::StringRef what) {
  std::vector<double> numbers;
  if (failed(decode(tensor, loc, what, numbers, nullptr)))
    return failure();
  return numbers;
}

FailureOr<llvm::SmallVector<int64_t>>
readInt64s(const TensorProto &tensor, Location loc, llvm::StringRef what) {
  if (!isIntegral(tensor.data_type()))
    return emitError(loc) << what << " must be an integer tensor, not "
                          << onnxTypeName(tensor.data_type());
  std::vector<double> numbers;
  llvm::SmallVector<int64_t> ints;
  if (failed(decode(tensor, loc, what, numbers, &ints)))
    return failure();
  return ints;
}

DenseElementsAttr elementsFromNumbers(RankedTensorType type,
                                      llvm::ArrayRef<double> values) {
  Type element = type.getElementType();
  if (auto floatType = llvm::dyn_cast<FloatType>(element)) {
    llvm::SmallVector<llvm::APFloat> floats;
    floats.reserve(values.size());
    for (double v : values) {
      llvm::APFloat f(v);
      bool lost = false;
      f.convert(floatType.getFloatSemantics(),
                llvm::APFloat::rmNearestTiesToEven, &lost);
      floats.push_back(f);
    }
    return DenseElementsAttr::get(type, floats);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  llvm::SmallVector<llvm::APInt> ints;
  ints.reserve(values.size());
  for (double v : values)
    ints.push_back(width == 1 ? llvm::APInt(1, v != 0)
                              : llvm::APInt(width, static_cast<int64_t>(v),
                                            /*isSigned=*/true));
  return DenseElementsAttr::get(type, ints);
}

FailureOr<DenseElementsAttr>
toElementsAttr(const TensorProto &tensor, Location loc, llvm::StringRef what) {
  Type element = kilnElementType(loc.getContext(), tensor.data_type());
  if (!element)
    return emitError(loc) << what << " has element type "
                          << onnxTypeName(tensor.data_type())
                          << ", which kiln does not support (FLOAT, FLOAT16, "
                             "BFLOAT16, INT32, INT64 and BOOL)";
  for (int64_t dim : tensor.dims())
    if (dim < 0)
      return emitError(loc) << what << " has a negative dimension";
  llvm::SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(dims, element);
  if (tensor.data_type() == TensorProto::INT64) {
    auto ints = readInt64s(tensor, loc, what);
    if (failed(ints))
      return failure();
    std::vector<double> values;
    values.reserve(ints->size());
    for (int64_t v : *ints) {
      if (v < std::numeric_limits<int32_t>::min() ||
          v > std::numeric_limits<int32_t>::max())
        return emitError(loc) << what << " holds the INT64 value " << v
                              << ", beyond kiln's i32 range";
      values.push_back(static_cast<double>(v));
    }
    return elementsFromNumbers(type, values);
  }
  auto numbers = readNumbers(tensor, loc, what);
  if (failed(numbers))
    return failure();
  return elementsFromNumbers(type, *numbers);
}

llvm::SmallVector<int64_t> intsOf(DenseElementsAttr attr) {
  llvm::SmallVector<int64_t> ints;
  if (attr.getElementType().isInteger(1)) {
    for (bool v : attr.getValues<bool>())
      ints.push_back(v);
    return ints;
  }
  for (const llvm::APInt &v : attr.getValues<llvm::APInt>())
    ints.push_back(v.getSExtValue());
  return ints;
}

} // namespace mlir::kiln::onnx_import
