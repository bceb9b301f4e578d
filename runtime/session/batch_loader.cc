#include "kiln/batch_loader.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/dataset.h"
#include "kiln/status.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/stream.h"
#include "runtime/io/dtype.h"
#include "runtime/io/finite.h"
#include "runtime/memory/cuda_allocator.h"
#include "runtime/memory/pool.h"

namespace kiln {
namespace {

// Page-locked host memory (cuMemAllocHost) for io::BatchProducer slots.
class PinnedHostAllocator : public io::HostAllocator {
 public:
  // `device` must outlive the allocator.
  explicit PinnedHostAllocator(const Device& device) : device_(device) {}
  absl::StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* ptr, size_t bytes) override;

 private:
  const Device& device_;
};

absl::StatusOr<void*> PinnedHostAllocator::Allocate(size_t bytes) {
  KILN_RETURN_IF_ERROR(device_.MakeCurrent());
  void* ptr = nullptr;
  KILN_RETURN_IF_ERROR(
      KILN_CU(&device_.driver(), cuMemAllocHost, &ptr, bytes == 0 ? 1 : bytes));
  return ptr;
}

void PinnedHostAllocator::Free(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  (void)device_.MakeCurrent();
  (void)device_.driver().api().cuMemFreeHost(ptr);
}

}  // namespace

struct DeviceBatchLoader::State {
  State(const Runtime& runtime, const Stream& compute)
      : runtime(runtime), compute(compute) {}
  // Takes the producer's next batch and enqueues its upload.
  absl::Status FetchAndUpload();

  struct Slot {
    std::vector<DeviceBuffer> buffers;  // one per field
    std::unique_ptr<Event> uploaded;    // recorded on the copy stream
    std::unique_ptr<Event> consumed;    // recorded on the compute stream
  };
  struct Pending {
    io::Batch batch;
    int slot = 0;
  };

  const Runtime& runtime;
  const Stream& compute;
  std::vector<io::DatasetField> fields;
  uint64_t batch_size = 0;
  uint64_t record_bytes = 0;
  std::unique_ptr<PinnedHostAllocator> pinned;
  std::unique_ptr<Stream> copy;
  Slot slots[2];
  std::unique_ptr<io::BatchProducer> producer;
  bool has_pending = false;
  Pending pending;
  bool ended = false;
  absl::Status error;
  int returned_slot = -1;  // slot of the batch handed out last
  uint64_t uploads = 0;
};

Inputs DeviceBatch::inputs() const {
  Inputs out;
  for (const auto& [name, tensor] : fields) out.emplace(name, Input(tensor));
  return out;
}

absl::StatusOr<std::vector<io::DatasetField>> LoaderFields(
    const io::MappedDataset& dataset, const DeviceBatchLoaderOptions& options) {
  std::vector<io::DatasetField> fields;
  if (options.fields.empty()) {
    fields = dataset.fields();
  } else {
    for (const std::string& name : options.fields) {
      const io::DatasetField* f = dataset.FindField(name);
      if (f == nullptr) {
        std::vector<std::string> names;
        for (const io::DatasetField& g : dataset.fields()) {
          names.push_back(g.name);
        }
        return absl::InvalidArgumentError(
            absl::StrCat("the dataset has no field '", name,
                         "' (fields: ", absl::StrJoin(names, ", "), ")"));
      }
      fields.push_back(*f);
    }
  }
  if (options.narrow_i64) {
    for (io::DatasetField& f : fields) {
      if (f.dtype != DType::kI64) continue;
      f.dtype = DType::kI32;
      f.bytes /= 2;
    }
  }
  return fields;
}

namespace {

// Narrows the i64 fields of `narrowed` (laid out as loaded, DType::kI32) in
// place in each record, on the producer thread.
io::RecordHook NarrowingHook(const io::MappedDataset& dataset,
                             std::vector<io::DatasetField> narrowed) {
  return [&dataset, narrowed = std::move(narrowed)](
             uint8_t* records, absl::Span<const uint64_t> indices) {
    for (size_t r = 0; r < indices.size(); ++r) {
      uint8_t* record = records + r * dataset.record_bytes();
      for (const io::DatasetField& f : narrowed) {
        uint8_t* values = record + f.offset;
        const size_t count = f.bytes / 4;
        const size_t bad = io::NarrowI64ToI32(values, values, count);
        if (bad == count) continue;
        // Element `bad` has not been overwritten yet.
        int64_t value;
        std::memcpy(&value, values + 8 * bad, 8);
        // A scalar field is one value: no element to name.
        const std::string element =
            f.shape.empty() ? "" : " " + io::ElementText(f.shape, bad);
        return absl::InvalidArgumentError(absl::StrCat(
            dataset.path(), ": record ", indices[r], " field '", f.name, "'",
            element, " is ", value, ", which does not fit the i32 the model "
            "takes"));
      }
    }
    return absl::OkStatus();
  };
}

}  // namespace

absl::StatusOr<RecordHook> LoaderHook(
    const io::MappedDataset& dataset, const DeviceBatchLoaderOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::vector<io::DatasetField> loaded,
                        LoaderFields(dataset, options));
  std::vector<io::DatasetField> narrowed;
  for (const io::DatasetField& f : loaded) {
    const io::DatasetField* stored = dataset.FindField(f.name);
    if (stored != nullptr && stored->dtype != f.dtype) narrowed.push_back(f);
  }
  if (narrowed.empty()) return options.check;
  return io::RecordHook(
      [narrow = NarrowingHook(dataset, std::move(narrowed)),
       check = options.check](uint8_t* records,
                              absl::Span<const uint64_t> indices) {
        KILN_RETURN_IF_ERROR(narrow(records, indices));
        return check ? check(records, indices) : absl::OkStatus();
      });
}

absl::StatusOr<std::unique_ptr<DeviceBatchLoader>> DeviceBatchLoader::Create(
    const Runtime& runtime, io::MappedDataset* dataset,
    const DeviceBatchLoaderOptions& options, const Stream& compute) {
  if (dataset->fields().empty()) {
    return absl::InvalidArgumentError(
        "DeviceBatchLoader needs a dataset with named fields (a KILNDATA "
        "file with a layout)");
  }
  if (options.batch.batch_size == 0) {
    return absl::InvalidArgumentError("batch_size must be positive");
  }
  auto state = std::make_unique<State>(runtime, compute);
  KILN_ASSIGN_OR_RETURN(state->fields, LoaderFields(*dataset, options));
  KILN_ASSIGN_OR_RETURN(RecordHook hook, LoaderHook(*dataset, options));
  state->batch_size = options.batch.batch_size;
  state->record_bytes = dataset->record_bytes();
  const Device& device = runtime.device();
  KILN_ASSIGN_OR_RETURN(state->copy, Stream::Create(device));
  for (State::Slot& slot : state->slots) {
    for (const io::DatasetField& f : state->fields) {
      KILN_ASSIGN_OR_RETURN(
          DeviceBuffer buffer,
          runtime.pool().Allocate(f.bytes * state->batch_size,
                                  StreamIdOf(*state->copy)));
      slot.buffers.push_back(std::move(buffer));
    }
    KILN_ASSIGN_OR_RETURN(slot.uploaded, Event::Create(device, false));
    KILN_ASSIGN_OR_RETURN(slot.consumed, Event::Create(device, false));
  }
  state->pinned = std::make_unique<PinnedHostAllocator>(device);
  KILN_ASSIGN_OR_RETURN(
      state->producer,
      io::BatchProducer::Start(dataset, options.batch, state->pinned.get(),
                               std::move(hook)));
  return std::unique_ptr<DeviceBatchLoader>(
      new DeviceBatchLoader(std::move(state)));
}

DeviceBatchLoader::DeviceBatchLoader(std::unique_ptr<State> state)
    : state_(std::move(state)) {}

DeviceBatchLoader::~DeviceBatchLoader() {
  // Uploads in flight read the producer's pinned slots: finish them first.
  if (state_->copy != nullptr) (void)state_->copy->Synchronize();
  state_->producer.reset();
}

uint64_t DeviceBatchLoader::uploads() const { return state_->uploads; }

absl::Status DeviceBatchLoader::State::FetchAndUpload() {
  absl::StatusOr<io::Batch> batch = producer->Next();
  if (absl::IsOutOfRange(batch.status())) {
    ended = true;
    return absl::OkStatus();
  }
  KILN_RETURN_IF_ERROR(batch.status());
  const int slot_index = static_cast<int>(batch->sequence % 2);
  Slot& slot = slots[slot_index];
  // The slot's previous batch may still be in use on the compute stream.
  KILN_RETURN_IF_ERROR(copy->Wait(*slot.consumed));
  const CudaDriver* driver = &runtime.device().driver();
  for (size_t f = 0; f < fields.size(); ++f) {
    const io::DatasetField& field = fields[f];
    if (field.bytes == 0 || batch->num_records == 0) continue;
    CUDA_MEMCPY2D upload;
    std::memset(&upload, 0, sizeof(upload));
    upload.srcMemoryType = CU_MEMORYTYPE_HOST;
    upload.srcHost = batch->data + field.offset;
    upload.srcPitch = record_bytes;
    upload.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    upload.dstDevice = slot.buffers[f].data();
    upload.dstPitch = field.bytes;
    upload.WidthInBytes = field.bytes;
    upload.Height = batch->num_records;
    KILN_RETURN_IF_ERROR(
        Annotate(KILN_CU(driver, cuMemcpy2DAsync, &upload, copy->handle()),
                 absl::StrCat("uploading field '", field.name, "'")));
  }
  KILN_RETURN_IF_ERROR(slot.uploaded->Record(*copy));
  pending.batch = std::move(*batch);
  pending.slot = slot_index;
  has_pending = true;
  ++uploads;
  return absl::OkStatus();
}

absl::StatusOr<DeviceBatch> DeviceBatchLoader::Next() {
  State& s = *state_;
  KILN_RETURN_IF_ERROR(s.error);
  KILN_RETURN_IF_ERROR(s.runtime.device().MakeCurrent());
  // Everything the caller enqueued on the last batch is before this point of
  // the compute stream.
  if (s.returned_slot >= 0) {
    KILN_RETURN_IF_ERROR(s.slots[s.returned_slot].consumed->Record(s.compute));
  }
  if (!s.has_pending && !s.ended) {
    absl::Status fetched = s.FetchAndUpload();
    if (!fetched.ok()) {
      s.error = fetched;
      return fetched;
    }
  }
  if (!s.has_pending) {
    return absl::OutOfRangeError("the dataset has no more batches");
  }
  State::Pending current = std::move(s.pending);
  s.has_pending = false;
  KILN_RETURN_IF_ERROR(s.compute.Wait(*s.slots[current.slot].uploaded));
  // The producer reuses the host slot of `current` once asked for the next
  // batch: its upload must be complete by then.
  KILN_RETURN_IF_ERROR(s.slots[current.slot].uploaded->Synchronize());
  if (!s.ended) {
    absl::Status fetched = s.FetchAndUpload();
    if (!fetched.ok()) s.error = fetched;  // reported by the next call
  }

  DeviceBatch out;
  out.num_records = current.batch.num_records;
  out.sequence = current.batch.sequence;
  out.epoch = current.batch.epoch;
  out.batch_in_epoch = current.batch.batch_in_epoch;
  for (size_t f = 0; f < s.fields.size(); ++f) {
    Shape shape = {static_cast<int64_t>(current.batch.num_records)};
    const io::DatasetField& field = s.fields[f];
    shape.insert(shape.end(), field.shape.begin(), field.shape.end());
    KILN_ASSIGN_OR_RETURN(
        Tensor t, Tensor::FromBuffer(s.slots[current.slot].buffers[f],
                                     field.dtype, std::move(shape)));
    out.fields.emplace(field.name, std::move(t));
  }
  s.returned_slot = current.slot;
  return out;
}

}  // namespace kiln
