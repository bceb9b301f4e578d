#ifndef KILN_DATASET_H_
#define KILN_DATASET_H_

// Memory-mapped datasets of fixed-size records, batch sampling, and a
// double-buffered background batch producer.
//
// File format "KILNDATA", version 2 (kDatasetVersion; version 1 files are
// still read), specified byte by byte in docs/data-formats.md, with its
// checksums and a NumPy writer (runtime/io/dataset_doc_test.cc holds the two
// to each other). In short: a 64-byte header (magic "KILNDATA", u32 version,
// u32 field_count, u64 record_bytes, record_count, data_offset, layout_bytes,
// header checksum, chunk_bytes), the layout of the fields (name, dtype code,
// per-record shape), fixed-size records of the fields packed in order from
// data_offset, then one FNV-1a 64 checksum per chunk_bytes of data. A reader
// checks each chunk the first time a record in it is read: a flipped byte is
// an error that names the bytes, records and file offset.
//
// The file may be larger than memory: MappedDataset maps a window of it
// (read-only) and moves the window as records are read. Headerless files of
// fixed-size records can be opened with MappedDataset::OpenRaw.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "kiln/batch_options.h"
#include "kiln/dtype.h"

namespace kiln {
namespace io {

inline constexpr uint32_t kDatasetVersion = 2;
inline constexpr size_t kDatasetHeaderBytes = 64;
// The checksum granule DatasetWriter writes.
inline constexpr uint64_t kDatasetChunkBytes = 1 << 20;

struct DatasetField {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  // Derived when a layout is read or written: where the field starts in a
  // record and how many bytes it has.
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// Writes a KILNDATA file: records are appended, Finish() writes the header and
// moves the file into place (temporary file, fsync, rename, fsync folder), so a
// reader never sees a half-written dataset.
class DatasetWriter {
 public:
  // Records made of `fields` (record_bytes = sum of their sizes).
  static absl::StatusOr<std::unique_ptr<DatasetWriter>> Create(
      const std::string& path, std::vector<DatasetField> fields);
  // Records of `record_bytes` opaque bytes.
  static absl::StatusOr<std::unique_ptr<DatasetWriter>> CreateRaw(
      const std::string& path, uint64_t record_bytes);
  // Removes the temporary file if Finish() was not called or failed.
  ~DatasetWriter();

  uint64_t record_bytes() const { return record_bytes_; }
  const std::vector<DatasetField>& fields() const { return fields_; }

  // Appends one record (exactly record_bytes() bytes) or several (a multiple).
  absl::Status Append(const void* data, size_t bytes);
  absl::Status Finish();

 private:
  DatasetWriter() = default;
  absl::Status Flush();

  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  std::vector<DatasetField> fields_;
  std::string layout_;
  uint64_t record_bytes_ = 0;
  uint64_t record_count_ = 0;
  uint64_t data_offset_ = 0;
  std::string buffer_;
  bool finished_ = false;
  // Checksums of the finished data chunks, and the running one of the
  // chunk being written (`chunk_fill_` bytes so far).
  std::vector<uint64_t> chunk_sums_;
  uint64_t chunk_sum_ = 0;
  uint64_t chunk_fill_ = 0;
};

struct DatasetOptions {
  // Bytes of the file mapped at a time; 0 maps the whole file at once. Raised
  // to at least one record plus a page.
  uint64_t window_bytes = 1ULL << 30;
  // A NaN or infinity in a float field of a record read is an error naming
  // the record, the field, the element and its file offset.
  bool check_finite = true;
};

// A read-only, memory-mapped dataset. Thread-safe: reads are serialised by a
// mutex (the mapping window is shared state).
class MappedDataset {
 public:
  static absl::StatusOr<std::unique_ptr<MappedDataset>> Open(
      const std::string& path, const DatasetOptions& options = {});
  // A file without header: records of `record_bytes` from `data_offset` to the
  // end of the file, which must hold a whole number of them.
  static absl::StatusOr<std::unique_ptr<MappedDataset>> OpenRaw(
      const std::string& path, uint64_t record_bytes, uint64_t data_offset = 0,
      const DatasetOptions& options = {});
  ~MappedDataset();
  MappedDataset(const MappedDataset&) = delete;
  MappedDataset& operator=(const MappedDataset&) = delete;

  const std::string& path() const { return path_; }
  uint64_t record_count() const { return record_count_; }
  uint64_t record_bytes() const { return record_bytes_; }
  const std::vector<DatasetField>& fields() const { return fields_; }
  // The field called `name`, or nullptr.
  const DatasetField* FindField(absl::string_view name) const;

  // Copies record indices[i] to dst + i * record_bytes().
  absl::Status ReadRecords(absl::Span<const uint64_t> indices, void* dst);
  // Copies records [first, first + count).
  absl::Status ReadRange(uint64_t first, uint64_t count, void* dst);
  // How many times a window was mapped (for tests and statistics).
  uint64_t map_count() const;

 private:
  MappedDataset() = default;
  absl::Status Init(const std::string& path, uint64_t data_offset,
                    const DatasetOptions& options);
  // Makes [offset, offset + size) of the file visible; returns its address.
  absl::StatusOr<const uint8_t*> Map(uint64_t offset, uint64_t size)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Checks the data chunks that hold data bytes [begin, end) against their
  // checksums, each once (version 2 files).
  absl::Status Verify(uint64_t begin, uint64_t end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::string path_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  uint64_t data_offset_ = 0;
  uint64_t record_bytes_ = 0;
  uint64_t record_count_ = 0;
  uint64_t window_bytes_ = 0;
  bool check_finite_ = true;
  std::vector<DatasetField> fields_;
  // Version 2: the checksum granule (0: none) and every chunk's checksum.
  uint64_t chunk_bytes_ = 0;
  std::vector<uint64_t> chunk_sums_;

  mutable absl::Mutex mu_;
  std::vector<bool> chunk_verified_ ABSL_GUARDED_BY(mu_);
  uint8_t* window_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t window_offset_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t window_size_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t map_count_ ABSL_GUARDED_BY(mu_) = 0;
};

using ::kiln::BatchOptions;

// Which records make up each batch. Deterministic: the same (record count,
// options) give the same sequence on every machine. Keeps one epoch's order in
// memory (8 bytes per record).
class BatchSampler {
 public:
  BatchSampler(uint64_t record_count, const BatchOptions& options);

  // The next batch's record indices; false when num_epochs are done (or the
  // dataset cannot fill a batch).
  bool Next(std::vector<uint64_t>* indices, uint64_t* epoch,
            uint64_t* batch_in_epoch);

  // The order of epoch `epoch` under `seed`: a permutation of [0, count)
  // (Fisher-Yates driven by SplitMix64).
  static std::vector<uint64_t> EpochPermutation(uint64_t count, uint64_t seed,
                                                uint64_t epoch);

 private:
  void StartEpoch();

  uint64_t record_count_;
  BatchOptions options_;  // batch_size: the global batch of all shards
  uint64_t shard_size_ = 1;
  uint64_t epoch_ = 0;
  uint64_t position_ = 0;
  uint64_t batch_in_epoch_ = 0;
  bool started_ = false;
  std::vector<uint64_t> order_;
};

// Host memory for batch slots. The default uses aligned malloc; the GPU layer
// can pass one that uses cuMemAllocHost so that uploads are asynchronous.
class HostAllocator {
 public:
  virtual ~HostAllocator() = default;
  virtual absl::StatusOr<void*> Allocate(size_t bytes) = 0;
  virtual void Free(void* ptr, size_t bytes) = 0;
};
// 4096-byte aligned heap memory. A process-wide instance.
HostAllocator* DefaultHostAllocator();

// One batch in a producer slot. `data` holds num_records records of
// record_bytes each, and stays valid and unchanged until the next call to
// BatchProducer::Next() or Release().
struct Batch {
  const uint8_t* data = nullptr;
  uint64_t num_records = 0;
  uint64_t record_bytes = 0;
  uint64_t sequence = 0;  // 0, 1, 2, ... over the producer's life
  uint64_t epoch = 0;
  uint64_t batch_in_epoch = 0;
  int slot = 0;  // 0 or 1
  std::vector<uint64_t> record_indices;
};

using ::kiln::RecordHook;

// Fills batches on a background thread into two alternating slots (double
// buffering): while the consumer holds batch n in slot n % 2, the producer
// fills batch n + 1 into the other. Slots are handed over under a mutex, so the
// producer never writes a slot the consumer holds.
class BatchProducer {
 public:
  // `dataset` and `allocator` must outlive the producer; `hook`, when given,
  // runs over every batch's records on the producer thread.
  static absl::StatusOr<std::unique_ptr<BatchProducer>> Start(
      MappedDataset* dataset, const BatchOptions& options,
      HostAllocator* allocator = DefaultHostAllocator(),
      RecordHook hook = nullptr);
  // Stops the thread and frees the slots.
  ~BatchProducer();

  // Gives back the batch held (if any) and waits for the next one. OutOfRange
  // after the last batch; the read error if filling a batch failed.
  absl::StatusOr<Batch> Next();
  // Gives back the batch held, so the producer may refill its slot now.
  void Release();

 private:
  enum class SlotState { kFree, kFilling, kReady, kHeld };
  struct Slot {
    void* memory = nullptr;
    SlotState state = SlotState::kFree;
    Batch batch;
    absl::Status status;
  };

  BatchProducer(MappedDataset* dataset, const BatchOptions& options,
                HostAllocator* allocator, RecordHook hook);
  void Run();
  void ReleaseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  MappedDataset* const dataset_;
  const BatchOptions options_;
  HostAllocator* const allocator_;
  const RecordHook hook_;
  size_t slot_bytes_ = 0;

  absl::Mutex mu_;
  absl::CondVar changed_;
  Slot slots_[2] ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // the producer has finished
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;  // sequence the consumer gets next
  int held_ ABSL_GUARDED_BY(mu_) = -1;      // slot the consumer holds
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace io
}  // namespace kiln

#endif  // KILN_DATASET_H_
