// Datasets on the device: batches of a memory-mapped dataset uploaded ahead
// of the compute that uses them.
//
//   KILN_ASSIGN_OR_RETURN(auto data,
//                         io::MappedDataset::Open("train.kilndata"));
//   KILN_ASSIGN_OR_RETURN(auto loader, DeviceBatchLoader::Create(
//       *rt, data.get(), {.batch = {.batch_size = 64}, .fields = {"x", "y"}},
//       trainer->stream()));
//   while (true) {
//     auto batch = loader->Next();
//     if (absl::IsOutOfRange(batch.status())) break;
//     KILN_RETURN_IF_ERROR(batch.status());
//     KILN_ASSIGN_OR_RETURN(float loss, trainer->Step(batch->inputs(), lr));
//   }
//
// A background thread (io::BatchProducer) gathers each batch's records into
// page-locked host memory (cuMemAllocHost, through io::HostAllocator); the
// loader copies each field out of the packed records into a dense device
// tensor with one 2-D copy on its own copy stream. Next() hands out batch i
// after having enqueued the upload of batch i + 1, so that upload overlaps the
// compute of batch i. Events order everything: the compute stream waits for a
// batch's upload before its first use, and an upload into a device slot waits
// for the compute work that was enqueued on the previous batch of that slot
// (everything enqueued on the compute stream before the next call of Next()).
//
// The datasets themselves (io::MappedDataset, io::DatasetWriter) are
// kiln/dataset.h, which this header only declares.
#ifndef KILN_BATCH_LOADER_H_
#define KILN_BATCH_LOADER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/batch_options.h"
#include "kiln/runtime.h"
#include "kiln/tensor.h"

namespace kiln {

class Stream;

namespace io {
class MappedDataset;  // kiln/dataset.h
struct DatasetField;
}  // namespace io

// One batch on the device: each field as a dense tensor of shape
// [num_records, field shape...]. The tensors stay valid and unchanged until
// the second call of Next() after the one that returned them.
struct DeviceBatch {
  std::map<std::string, Tensor> fields;
  uint64_t num_records = 0;
  uint64_t sequence = 0;  // 0, 1, 2, ...
  uint64_t epoch = 0;
  uint64_t batch_in_epoch = 0;

  // The fields as entry inputs (by field name).
  Inputs inputs() const;
};

struct DeviceBatchLoaderOptions {
  BatchOptions batch;
  // The dataset fields to upload; empty: all of them.
  std::vector<std::string> fields;
  // i64 fields (as PyTorch and NumPy write labels and tokens) become i32
  // tensors, what the compiler's index inputs take: each value is narrowed
  // on the producer thread, and one outside the i32 range is an error naming
  // the dataset, the record, the field, the element and the value.
  bool narrow_i64 = false;
  // Runs on the producer thread over each batch's records after narrowing,
  // laid out as LoaderFields() says (e.g. to check labels against a model's
  // classes); its error is Next()'s.
  RecordHook check;
};

// The fields a loader with `options` uploads, as they lie in each record
// once narrowed (an i64 field narrowed to i32 keeps its offset and takes
// half its bytes); InvalidArgument naming an unknown field.
absl::StatusOr<std::vector<io::DatasetField>> LoaderFields(
    const io::MappedDataset& dataset, const DeviceBatchLoaderOptions& options);

// What a loader with `options` runs over each batch's records on the
// producer thread: the narrowing, then options.check (null when there is
// nothing to run). For host-side readers of the same batches
// (io::BatchProducer). `dataset` must outlive it.
absl::StatusOr<RecordHook> LoaderHook(
    const io::MappedDataset& dataset, const DeviceBatchLoaderOptions& options);

class DeviceBatchLoader {
 public:
  // `dataset` must outlive the loader; `compute` is the stream that uses the
  // batches (e.g. Trainer::stream()) and must outlive it too.
  static absl::StatusOr<std::unique_ptr<DeviceBatchLoader>> Create(
      const Runtime& runtime, io::MappedDataset* dataset,
      const DeviceBatchLoaderOptions& options, const Stream& compute);
  ~DeviceBatchLoader();

  // The next batch, ordered on the compute stream; OutOfRange after the last
  // one (BatchOptions::num_epochs), or the error of reading the dataset.
  absl::StatusOr<DeviceBatch> Next();

  // Batches whose upload has been enqueued so far.
  uint64_t uploads() const;

 private:
  struct State;  // batch_loader.cc
  explicit DeviceBatchLoader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kiln

#endif  // KILN_BATCH_LOADER_H_
