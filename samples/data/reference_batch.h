// Batches of a KILNDATA file as the inputs of a model's forward entry on the
// CPU reference (train_reference --dataset): every input that is neither a
// parameter nor model state is the field of its name, with its values
// checked where the model needs them in range.

#ifndef KILN_SAMPLES_DATA_REFERENCE_BATCH_H_
#define KILN_SAMPLES_DATA_REFERENCE_BATCH_H_

#include <cstdint>
#include <string>

#include "compiler/training/ReferenceTrainer.h"
#include "kiln/dataset.h"
#include "llvm/Support/Error.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::samples {

// Whether argument `i` of `forward` is a parameter or model state (batch
// norm running statistics), which the trainer holds, rather than an input.
bool HeldByTrainer(mlir::func::FuncOp forward, unsigned i);

// The number of records of one batch: the first dimension of the inputs.
uint64_t BatchRecords(mlir::func::FuncOp forward);

// Batch `index` of `data` (records index*B ... index*B+B-1, in file order)
// as the inputs of `forward`, by name. An f32 input takes an f32 field; an
// i32 input an i32 field or an i64 one (what PyTorch and NumPy write),
// narrowed; each field's shape is the input's without the batch dimension.
// A label of a kiln.cross_entropy outside its classes (and not its
// ignore_index) or an index of a kiln.embedding outside its table, when the
// input feeds the op directly or through reshapes, is an error. Every error
// names the file, and for values the record, field, element and value.
llvm::Expected<mlir::kiln::NamedTensors> ReadReferenceBatch(
    io::MappedDataset& data, mlir::func::FuncOp forward, uint64_t index);

// "records 64 to 127 of FILE (row r of the batch is record 64 + r)": what
// batch `index` was read from, for a failure inside the model on it (a value
// the checks above cannot trace to an input).
std::string DescribeBatch(const io::MappedDataset& data,
                          mlir::func::FuncOp forward, uint64_t index);

}  // namespace kiln::samples

#endif  // KILN_SAMPLES_DATA_REFERENCE_BATCH_H_
