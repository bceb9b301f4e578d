#include "kiln/batch_loader.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kiln/status.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/stream.h"
#include "runtime/io/dtype.h"
#include "runtime/io/finite.h"
#include "runtime/memory/cuda_allocator.h"

namespace kiln {

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

absl::StatusOr<io::RecordHook> LoaderHook(
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
  std::unique_ptr<DeviceBatchLoader> loader(
      new DeviceBatchLoader(runtime, compute));
  KILN_ASSIGN_OR_RETURN(loader->fields_, LoaderFields(*dataset, options));
  KILN_ASSIGN_OR_RETURN(io::RecordHook hook, LoaderHook(*dataset, options));
  loader->batch_size_ = options.batch.batch_size;
  loader->record_bytes_ = dataset->record_bytes();
  const Device& device = runtime.device();
  KILN_ASSIGN_OR_RETURN(loader->copy_, Stream::Create(device));
  for (Slot& slot : loader->slots_) {
    for (const io::DatasetField& f : loader->fields_) {
      KILN_ASSIGN_OR_RETURN(
          DeviceBuffer buffer,
          runtime.pool().Allocate(f.bytes * loader->batch_size_,
                                  StreamIdOf(*loader->copy_)));
      slot.buffers.push_back(std::move(buffer));
    }
    KILN_ASSIGN_OR_RETURN(slot.uploaded, Event::Create(device, false));
    KILN_ASSIGN_OR_RETURN(slot.consumed, Event::Create(device, false));
  }
  loader->pinned_ = std::make_unique<PinnedHostAllocator>(device);
  KILN_ASSIGN_OR_RETURN(
      loader->producer_,
      io::BatchProducer::Start(dataset, options.batch, loader->pinned_.get(),
                               std::move(hook)));
  return loader;
}

DeviceBatchLoader::~DeviceBatchLoader() {
  // Uploads in flight read the producer's pinned slots: finish them first.
  if (copy_ != nullptr) (void)copy_->Synchronize();
  producer_.reset();
}

absl::Status DeviceBatchLoader::FetchAndUpload() {
  absl::StatusOr<io::Batch> batch = producer_->Next();
  if (absl::IsOutOfRange(batch.status())) {
    ended_ = true;
    return absl::OkStatus();
  }
  KILN_RETURN_IF_ERROR(batch.status());
  const int slot_index = static_cast<int>(batch->sequence % 2);
  Slot& slot = slots_[slot_index];
  // The slot's previous batch may still be in use on the compute stream.
  KILN_RETURN_IF_ERROR(copy_->Wait(*slot.consumed));
  const CudaDriver* driver = &runtime_.device().driver();
  for (size_t f = 0; f < fields_.size(); ++f) {
    const io::DatasetField& field = fields_[f];
    if (field.bytes == 0 || batch->num_records == 0) continue;
    CUDA_MEMCPY2D copy;
    std::memset(&copy, 0, sizeof(copy));
    copy.srcMemoryType = CU_MEMORYTYPE_HOST;
    copy.srcHost = batch->data + field.offset;
    copy.srcPitch = record_bytes_;
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.dstDevice = slot.buffers[f].data();
    copy.dstPitch = field.bytes;
    copy.WidthInBytes = field.bytes;
    copy.Height = batch->num_records;
    KILN_RETURN_IF_ERROR(
        Annotate(KILN_CU(driver, cuMemcpy2DAsync, &copy, copy_->handle()),
                 absl::StrCat("uploading field '", field.name, "'")));
  }
  KILN_RETURN_IF_ERROR(slot.uploaded->Record(*copy_));
  pending_.batch = std::move(*batch);
  pending_.slot = slot_index;
  has_pending_ = true;
  ++uploads_;
  return absl::OkStatus();
}

absl::StatusOr<DeviceBatch> DeviceBatchLoader::Next() {
  KILN_RETURN_IF_ERROR(error_);
  KILN_RETURN_IF_ERROR(runtime_.device().MakeCurrent());
  // Everything the caller enqueued on the last batch is before this point of
  // the compute stream.
  if (returned_slot_ >= 0) {
    KILN_RETURN_IF_ERROR(slots_[returned_slot_].consumed->Record(compute_));
  }
  if (!has_pending_ && !ended_) {
    absl::Status fetched = FetchAndUpload();
    if (!fetched.ok()) {
      error_ = fetched;
      return fetched;
    }
  }
  if (!has_pending_) {
    return absl::OutOfRangeError("the dataset has no more batches");
  }
  Pending current = std::move(pending_);
  has_pending_ = false;
  KILN_RETURN_IF_ERROR(compute_.Wait(*slots_[current.slot].uploaded));
  // The producer reuses the host slot of `current` once asked for the next
  // batch: its upload must be complete by then.
  KILN_RETURN_IF_ERROR(slots_[current.slot].uploaded->Synchronize());
  if (!ended_) {
    absl::Status fetched = FetchAndUpload();
    if (!fetched.ok()) error_ = fetched;  // reported by the next call
  }

  DeviceBatch out;
  out.num_records = current.batch.num_records;
  out.sequence = current.batch.sequence;
  out.epoch = current.batch.epoch;
  out.batch_in_epoch = current.batch.batch_in_epoch;
  for (size_t f = 0; f < fields_.size(); ++f) {
    Shape shape = {static_cast<int64_t>(current.batch.num_records)};
    shape.insert(shape.end(), fields_[f].shape.begin(), fields_[f].shape.end());
    KILN_ASSIGN_OR_RETURN(
        Tensor t, Tensor::FromBuffer(slots_[current.slot].buffers[f],
                                     fields_[f].dtype, std::move(shape)));
    out.fields.emplace(fields_[f].name, std::move(t));
  }
  returned_slot_ = current.slot;
  return out;
}

}  // namespace kiln
