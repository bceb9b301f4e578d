#include "samples/data/reference_batch.h"

#include <cstring>
#include <string>
#include <vector>

#include "compiler/interpreter/IndexInputs.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "runtime/io/dtype.h"

namespace kiln::samples {
namespace {

using mlir::RankedTensorType;
using mlir::StringAttr;
using mlir::func::FuncOp;
using mlir::kiln::KilnDialect;
namespace ref = mlir::kiln::ref;

llvm::Error Error(const llvm::Twine& message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// "FILE: record R, field 'NAME' element [i, j]" of the flat position `flat`
// of a batch input made of `field`, whose records start at `first`.
std::string Where(const io::MappedDataset& data, const io::DatasetField& field,
                  uint64_t first, int64_t flat) {
  int64_t per_record = 1;
  for (int64_t d : field.shape) per_record *= d;
  const uint64_t record = first + flat / per_record;
  return data.path() + ": record " + std::to_string(record) + ", field '" +
         field.name + "' element " +
         mlir::kiln::formatShape(
             ref::unflatIndex(field.shape, flat % per_record));
}

// Fills `t` from the field's bytes in `records` (B records of the file).
llvm::Error Decode(const io::MappedDataset& data, const io::DatasetField& field,
                   const std::vector<uint8_t>& records, uint64_t first,
                   ref::Tensor& t) {
  const uint64_t size = t.shape[0];
  const int element = static_cast<int>(DTypeSize(field.dtype));
  const int64_t per_record = static_cast<int64_t>(field.bytes) / element;
  for (uint64_t r = 0; r < size; ++r) {
    const uint8_t* p = records.data() + r * data.record_bytes() + field.offset;
    double* out = t.data.data() + r * per_record;
    if (field.dtype == DType::kI64) {
      if (std::optional<int64_t> bad = ref::readI64AsI32(p, per_record, out)) {
        int64_t value;
        std::memcpy(&value, p + 8 * *bad, 8);
        return Error(Where(data, field, first, r * per_record + *bad) +
                     ": i64 value " + std::to_string(value) +
                     " is outside the i32 range");
      }
      continue;
    }
    for (int64_t j = 0; j < per_record; ++j) {
      if (field.dtype == DType::kF32) {
        float v;
        std::memcpy(&v, p + 4 * j, 4);
        out[j] = v;
      } else {
        int32_t v;
        std::memcpy(&v, p + 4 * j, 4);
        out[j] = v;
      }
    }
  }
  return llvm::Error::success();
}

}  // namespace

bool HeldByTrainer(FuncOp forward, unsigned i) {
  return forward.getArgAttr(i, KilnDialect::kParamAttrName) ||
         forward.getArgAttr(i, KilnDialect::kStateAttrName);
}

uint64_t BatchRecords(FuncOp forward) {
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i)
    if (!HeldByTrainer(forward, i))
      return mlir::cast<RankedTensorType>(forward.getArgumentTypes()[i])
          .getShape()[0];
  return 0;
}

llvm::Expected<mlir::kiln::NamedTensors> ReadReferenceBatch(
    io::MappedDataset& data, FuncOp forward, uint64_t index) {
  mlir::kiln::NamedTensors batch;
  const uint64_t size = BatchRecords(forward), first = index * size;
  std::vector<uint8_t> records(size * data.record_bytes());
  if (absl::Status read = data.ReadRange(first, size, records.data());
      !read.ok()) {
    return Error(std::string(read.message()));
  }
  // The field each argument came from, for the index checks.
  llvm::DenseMap<unsigned, const io::DatasetField*> field_of;
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    if (HeldByTrainer(forward, i)) continue;
    auto name =
        forward.getArgAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
    auto type = mlir::cast<RankedTensorType>(forward.getArgumentTypes()[i]);
    const io::DatasetField* field =
        name ? data.FindField(name.getValue().str()) : nullptr;
    if (!field) {
      return Error(data.path() + " has no field for input " +
                   std::to_string(i) +
                   (name ? " '" + name.getValue().str() + "'" : ""));
    }
    ref::Tensor t(type.getShape(), *ref::elementKindOf(type.getElementType()));
    const bool is_f32 = t.kind == ref::ElementKind::F32;
    const bool dtype_fits = is_f32 ? field->dtype == DType::kF32
                                   : t.kind == ref::ElementKind::I32 &&
                                         (field->dtype == DType::kI32 ||
                                          field->dtype == DType::kI64);
    if (!dtype_fits ||
        llvm::ArrayRef<int64_t>(field->shape) != type.getShape().drop_front()) {
      return Error(
          data.path() + ": field '" + field->name + "' (" +
          std::string(DTypeName(field->dtype)) + io::ShapeString(field->shape) +
          " per record) does not hold records of input " + t.typeString() +
          (is_f32 ? "" : " (i32 or i64 fields feed i32 inputs)"));
    }
    if (llvm::Error error = Decode(data, *field, records, first, t))
      return std::move(error);
    field_of[i] = field;
    batch[name.getValue()] = std::move(t);
  }
  for (const ref::IndexInput& use : ref::findIndexInputs(forward)) {
    auto it = field_of.find(use.argument);
    if (it == field_of.end()) continue;
    const ref::Tensor& values = batch[it->second->name];
    if (std::optional<int64_t> bad = ref::firstBadIndex(use, values)) {
      return Error(Where(data, *it->second, first, *bad) + ": " +
                   ref::describeBadIndex(use, values.data[*bad]));
    }
  }
  return batch;
}

std::string DescribeBatch(const io::MappedDataset& data, FuncOp forward,
                          uint64_t index) {
  const uint64_t size = BatchRecords(forward), first = index * size;
  return "records " + std::to_string(first) + " to " +
         std::to_string(first + size - 1) + " of " + data.path() +
         " (row r of the batch is record " + std::to_string(first) + " + r)";
}

}  // namespace kiln::samples
