#include "kiln/dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/artifact/checksum.h"
#include "runtime/io/atomic_file.h"
#include "runtime/io/dtype.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace kiln {
namespace io {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'D', 'A', 'T', 'A'};
constexpr uint64_t kDataAlignment = 64;
constexpr uint64_t kMaxLayoutBytes = 1 << 20;

template <typename... Args>
absl::Status Invalid(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  const int err = errno;
  const std::string msg =
      absl::StrCat(what, " ", path, ": ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  return absl::InternalError(msg);
}

void PutU16(std::string* s, uint16_t v) {
  for (int i = 0; i < 2; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void PutU64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t GetLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

uint64_t RoundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Checks fields, fills their offsets and sizes, and returns the record size.
absl::StatusOr<uint64_t> LayOut(std::vector<DatasetField>* fields) {
  uint64_t offset = 0;
  for (size_t i = 0; i < fields->size(); ++i) {
    DatasetField& f = (*fields)[i];
    if (f.name.empty() || f.name.size() > 0xffff) {
      return Invalid("fields[", i, "].name: length ", f.name.size(),
                     " is outside [1, 65535]");
    }
    if (f.shape.size() > 255) {
      return Invalid("fields[", i, "].shape: rank ", f.shape.size(),
                     " exceeds 255");
    }
    absl::StatusOr<uint64_t> bytes = TensorBytes(f.dtype, f.shape);
    if (!bytes.ok()) {
      return Invalid("fields[", i, "] '", f.name,
                     "': ", bytes.status().message());
    }
    f.offset = offset;
    f.bytes = *bytes;
    if (__builtin_add_overflow(offset, *bytes, &offset)) {
      return Invalid("fields: record size overflows 64 bits");
    }
  }
  return offset;
}

std::string EncodeLayout(const std::vector<DatasetField>& fields) {
  std::string out;
  for (const DatasetField& f : fields) {
    PutU16(&out, static_cast<uint16_t>(f.name.size()));
    out += f.name;
    out.push_back(static_cast<char>(DatasetDTypeCode(f.dtype)));
    out.push_back(static_cast<char>(f.shape.size()));
    for (int64_t d : f.shape) PutU64(&out, static_cast<uint64_t>(d));
  }
  return out;
}

absl::StatusOr<std::vector<DatasetField>> DecodeLayout(const uint8_t* p,
                                                       uint64_t size,
                                                       uint32_t count) {
  std::vector<DatasetField> fields;
  uint64_t at = 0;
  for (uint32_t i = 0; i < count; ++i) {
    DatasetField f;
    if (size - at < 2) return Invalid("layout: field ", i, " is truncated");
    const uint64_t name_len = GetLE(p + at, 2);
    at += 2;
    if (size - at < name_len + 2) {
      return Invalid("layout: field ", i, " is truncated");
    }
    f.name.assign(reinterpret_cast<const char*>(p + at), name_len);
    at += name_len;
    absl::StatusOr<DType> dtype = DTypeFromDatasetCode(p[at]);
    const uint64_t rank = p[at + 1];
    at += 2;
    if (!dtype.ok()) {
      return Invalid("layout: field ", i, " '", f.name, "' has unknown dtype ",
                     static_cast<int>(p[at - 2]));
    }
    f.dtype = *dtype;
    if ((size - at) / 8 < rank) {
      return Invalid("layout: field ", i, " is truncated");
    }
    for (uint64_t d = 0; d < rank; ++d) {
      const uint64_t extent = GetLE(p + at, 8);
      at += 8;
      if (extent > static_cast<uint64_t>(INT64_MAX)) {
        return Invalid("layout: field ", i, " '", f.name,
                       "' has a negative extent");
      }
      f.shape.push_back(static_cast<int64_t>(extent));
    }
    fields.push_back(std::move(f));
  }
  if (at != size) {
    return Invalid("layout: ", size - at, " bytes after the last field");
  }
  return fields;
}

// Debian's Abseil is not built with ThreadSanitizer, so TSan cannot see that
// absl::Mutex orders memory. Under TSan, every lock and unlock of the mutexes
// here is also announced as an acquire and a release, which is exactly the
// ordering a mutex gives; in other builds this is a plain absl::MutexLock.
class Locked {
 public:
  explicit Locked(absl::Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu), lock_(mu) {
    Acquired(mu_);
  }
  ~Locked() ABSL_UNLOCK_FUNCTION() { Releasing(mu_); }

  static void Acquired(absl::Mutex* mu) {
#if defined(__SANITIZE_THREAD__)
    __tsan_acquire(mu);
#endif
  }
  static void Releasing(absl::Mutex* mu) {
#if defined(__SANITIZE_THREAD__)
    __tsan_release(mu);
#endif
  }

 private:
  absl::Mutex* mu_;
  absl::MutexLock lock_;
};

// CondVar::Wait with the same announcements around the unlock and relock.
void Wait(absl::CondVar* cv, absl::Mutex* mu) {
  Locked::Releasing(mu);
  cv->Wait(mu);
  Locked::Acquired(mu);
}

uint64_t PageSize() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// SplitMix64 (Steele, Lea, Flood 2014): a small, well-mixed generator whose
// output is the same everywhere.
struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0, without modulo bias (Lemire's method).
  uint64_t Below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
};

}  // namespace

// ---------------------------------------------------------------------------
// DatasetWriter

absl::StatusOr<std::unique_ptr<DatasetWriter>> DatasetWriter::Create(
    const std::string& path, std::vector<DatasetField> fields) {
  absl::StatusOr<uint64_t> record_bytes = LayOut(&fields);
  if (!record_bytes.ok()) return record_bytes.status();
  if (*record_bytes == 0) return Invalid("fields: a record must not be empty");
  std::unique_ptr<DatasetWriter> w(new DatasetWriter());
  w->layout_ = EncodeLayout(fields);
  if (w->layout_.size() > kMaxLayoutBytes) {
    return Invalid("fields: layout of ", w->layout_.size(), " bytes exceeds ",
                   kMaxLayoutBytes);
  }
  w->fields_ = std::move(fields);
  w->record_bytes_ = *record_bytes;
  w->path_ = path;
  w->data_offset_ =
      RoundUp(kDatasetHeaderBytes + w->layout_.size(), kDataAlignment);
  // The file is renamed into place at the end: never over a device node.
  if (IsSpecialFile(path)) {
    return Invalid(path,
                   ": not a regular file (a dataset is written to a "
                   "temporary file and renamed into place)");
  }
  std::string tmpl = path + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  w->fd_ = ::mkstemp(name.data());
  if (w->fd_ < 0) return Errno("cannot create a temporary file for", path);
  w->tmp_path_ = name.data();
  // Header placeholder and layout; the header is rewritten by Finish().
  w->buffer_.assign(kDatasetHeaderBytes, '\0');
  w->buffer_ += w->layout_;
  w->buffer_.resize(w->data_offset_, '\0');
  return w;
}

absl::StatusOr<std::unique_ptr<DatasetWriter>> DatasetWriter::CreateRaw(
    const std::string& path, uint64_t record_bytes) {
  if (record_bytes == 0) return Invalid("record_bytes must be positive");
  absl::StatusOr<std::unique_ptr<DatasetWriter>> w = Create(
      path, {DatasetField{
                "record", DType::kI1, {static_cast<int64_t>(record_bytes)}}});
  if (!w.ok()) return w;
  // No field list: the caller defines the record.
  (*w)->fields_.clear();
  (*w)->layout_.clear();
  (*w)->data_offset_ = kDatasetHeaderBytes;
  (*w)->buffer_.assign(kDatasetHeaderBytes, '\0');
  return w;
}

DatasetWriter::~DatasetWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_ && !tmp_path_.empty()) ::unlink(tmp_path_.c_str());
}

absl::Status DatasetWriter::Flush() {
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", tmp_path_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.clear();
  return absl::OkStatus();
}

absl::Status DatasetWriter::Append(const void* data, size_t bytes) {
  if (finished_ || fd_ < 0) {
    return absl::FailedPreconditionError("dataset writer is finished");
  }
  if (bytes % record_bytes_ != 0) {
    return Invalid("append: ", bytes,
                   " bytes is not a multiple of the record "
                   "size ",
                   record_bytes_);
  }
  buffer_.append(static_cast<const char*>(data), bytes);
  record_count_ += bytes / record_bytes_;
  // The data's chunk checksums, as the bytes arrive.
  const char* p = static_cast<const char*>(data);
  for (size_t left = bytes; left > 0;) {
    if (chunk_fill_ == 0) chunk_sum_ = Fnv1a64(nullptr, 0);
    const size_t n = static_cast<size_t>(
        std::min<uint64_t>(left, kDatasetChunkBytes - chunk_fill_));
    chunk_sum_ = Fnv1a64(p, n, chunk_sum_);
    chunk_fill_ += n;
    p += n;
    left -= n;
    if (chunk_fill_ == kDatasetChunkBytes) {
      chunk_sums_.push_back(chunk_sum_);
      chunk_fill_ = 0;
    }
  }
  if (buffer_.size() >= (4u << 20)) return Flush();
  return absl::OkStatus();
}

absl::Status DatasetWriter::Finish() {
  if (finished_ || fd_ < 0) {
    return absl::FailedPreconditionError("dataset writer is finished");
  }
  // The checksums follow the data.
  if (chunk_fill_ > 0) {
    chunk_sums_.push_back(chunk_sum_);
    chunk_fill_ = 0;
  }
  for (uint64_t sum : chunk_sums_) PutU64(&buffer_, sum);
  absl::Status s = Flush();
  if (!s.ok()) return s;
  std::string header(kMagic, 8);
  header.push_back(static_cast<char>(kDatasetVersion));
  header.append(3, '\0');
  const uint32_t count = static_cast<uint32_t>(fields_.size());
  for (int i = 0; i < 4; ++i)
    header.push_back(static_cast<char>(count >> (8 * i)));
  PutU64(&header, record_bytes_);
  PutU64(&header, record_count_);
  PutU64(&header, data_offset_);
  PutU64(&header, layout_.size());
  std::string chunk;
  PutU64(&chunk, kDatasetChunkBytes);
  const uint64_t sum =
      Fnv1a64(layout_.data(), layout_.size(),
              Fnv1a64(chunk.data(), chunk.size(),
                      Fnv1a64(header.data(), header.size())));
  PutU64(&header, sum);
  header += chunk;
  if (::pwrite(fd_, header.data(), header.size(), 0) !=
      static_cast<ssize_t>(header.size())) {
    return Errno("cannot write the header of", tmp_path_);
  }
  if (::fsync(fd_) != 0) return Errno("cannot fsync", tmp_path_);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Errno("cannot close", tmp_path_);
  }
  fd_ = -1;
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    return Errno(absl::StrCat("cannot rename ", tmp_path_, " to"), path_);
  }
  finished_ = true;
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path_.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// MappedDataset

MappedDataset::~MappedDataset() {
  Locked lock(&mu_);
  if (window_ != nullptr) ::munmap(window_, window_size_);
  if (fd_ >= 0) ::close(fd_);
}

absl::Status MappedDataset::Init(const std::string& path, uint64_t data_offset,
                                 const DatasetOptions& options) {
  path_ = path;
  data_offset_ = data_offset;
  const uint64_t page = PageSize();
  uint64_t window = options.window_bytes;
  if (window != 0) {
    window = std::max(window, RoundUp(record_bytes_, page) + page);
    window = RoundUp(window, page);
  }
  window_bytes_ = window;
  check_finite_ = options.check_finite;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MappedDataset>> MappedDataset::Open(
    const std::string& path, const DatasetOptions& options) {
  std::unique_ptr<MappedDataset> d(new MappedDataset());
  d->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (d->fd_ < 0) return Errno("cannot open", path);
  struct stat st;
  if (::fstat(d->fd_, &st) != 0) return Errno("cannot stat", path);
  d->file_size_ = static_cast<uint64_t>(st.st_size);
  auto bad = [&](const auto&... args) { return Invalid(path, ": ", args...); };
  if (d->file_size_ < kDatasetHeaderBytes) {
    return bad("file of ", d->file_size_, " bytes is too small for the ",
               kDatasetHeaderBytes, "-byte header");
  }
  uint8_t h[kDatasetHeaderBytes];
  if (::pread(d->fd_, h, sizeof(h), 0) != static_cast<ssize_t>(sizeof(h))) {
    return Errno("cannot read the header of", path);
  }
  if (std::memcmp(h, kMagic, 8) != 0) return bad("not a KILNDATA file");
  const uint64_t version = GetLE(h + 8, 4);
  if (version != 1 && version != kDatasetVersion) {
    return bad("unsupported version ", version, " (this runtime reads 1 to ",
               kDatasetVersion, ")");
  }
  const uint64_t chunk_bytes = version >= 2 ? GetLE(h + 56, 8) : 0;
  const uint32_t field_count = static_cast<uint32_t>(GetLE(h + 12, 4));
  d->record_bytes_ = GetLE(h + 16, 8);
  d->record_count_ = GetLE(h + 24, 8);
  const uint64_t data_offset = GetLE(h + 32, 8);
  const uint64_t layout_bytes = GetLE(h + 40, 8);
  const uint64_t checksum = GetLE(h + 48, 8);
  if (layout_bytes > kMaxLayoutBytes ||
      layout_bytes > d->file_size_ - kDatasetHeaderBytes) {
    return bad("layout of ", layout_bytes, " bytes does not fit");
  }
  std::string layout(layout_bytes, '\0');
  if (layout_bytes > 0 &&
      ::pread(d->fd_, &layout[0], layout_bytes, kDatasetHeaderBytes) !=
          static_cast<ssize_t>(layout_bytes)) {
    return Errno("cannot read the layout of", path);
  }
  const uint64_t head = Fnv1a64(h, 48);
  const uint64_t sum = Fnv1a64(layout.data(), layout.size(),
                               version >= 2 ? Fnv1a64(h + 56, 8, head) : head);
  if (sum != checksum) return bad("header checksum mismatch");
  if (version >= 2 && (chunk_bytes == 0 || chunk_bytes > (1ULL << 40))) {
    return bad("bad checksum granule of ", chunk_bytes, " bytes");
  }
  if (d->record_bytes_ == 0) return bad("record size is 0");
  if (data_offset % kDataAlignment != 0 ||
      data_offset < kDatasetHeaderBytes + layout_bytes) {
    return bad("bad data offset ", data_offset);
  }
  uint64_t data_bytes = 0;
  if (__builtin_mul_overflow(d->record_count_, d->record_bytes_, &data_bytes) ||
      data_offset > d->file_size_ || data_bytes > d->file_size_ - data_offset) {
    return bad(d->record_count_, " records of ", d->record_bytes_,
               " bytes from offset ", data_offset, " exceed the file size ",
               d->file_size_);
  }
  absl::StatusOr<std::vector<DatasetField>> fields =
      DecodeLayout(reinterpret_cast<const uint8_t*>(layout.data()),
                   layout_bytes, field_count);
  if (!fields.ok()) return bad(fields.status().message());
  if (!fields->empty()) {
    absl::StatusOr<uint64_t> rb = LayOut(&*fields);
    if (!rb.ok()) return bad(rb.status().message());
    if (*rb != d->record_bytes_) {
      return bad("fields add up to ", *rb, " bytes, but records have ",
                 d->record_bytes_);
    }
  }
  if (chunk_bytes > 0) {
    // The checksums take the rest of the file, exactly.
    const uint64_t chunks = (data_bytes + chunk_bytes - 1) / chunk_bytes;
    const uint64_t table = data_offset + data_bytes;
    if (chunks > (d->file_size_ - table) / 8) {
      return bad(d->record_count_, " records of ", d->record_bytes_,
                 " bytes from offset ", data_offset, " and their ", chunks,
                 " checksums exceed the file size ", d->file_size_);
    }
    if (d->file_size_ != table + 8 * chunks) {
      return bad(d->file_size_ - table - 8 * chunks,
                 " bytes follow the data's checksums");
    }
    std::string sums(8 * chunks, '\0');
    if (chunks > 0 && ::pread(d->fd_, &sums[0], sums.size(), table) !=
                          static_cast<ssize_t>(sums.size())) {
      return Errno("cannot read the checksums of", path);
    }
    d->chunk_bytes_ = chunk_bytes;
    d->chunk_sums_.resize(chunks);
    for (uint64_t i = 0; i < chunks; ++i)
      d->chunk_sums_[i] =
          GetLE(reinterpret_cast<const uint8_t*>(sums.data()) + 8 * i, 8);
    Locked lock(&d->mu_);
    d->chunk_verified_.assign(chunks, false);
  }
  d->fields_ = std::move(*fields);
  absl::Status s = d->Init(path, data_offset, options);
  if (!s.ok()) return s;
  return d;
}

absl::StatusOr<std::unique_ptr<MappedDataset>> MappedDataset::OpenRaw(
    const std::string& path, uint64_t record_bytes, uint64_t data_offset,
    const DatasetOptions& options) {
  if (record_bytes == 0) return Invalid("record_bytes must be positive");
  std::unique_ptr<MappedDataset> d(new MappedDataset());
  d->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (d->fd_ < 0) return Errno("cannot open", path);
  struct stat st;
  if (::fstat(d->fd_, &st) != 0) return Errno("cannot stat", path);
  d->file_size_ = static_cast<uint64_t>(st.st_size);
  if (data_offset > d->file_size_ ||
      (d->file_size_ - data_offset) % record_bytes != 0) {
    return Invalid(
        path, ": ", d->file_size_ - std::min(data_offset, d->file_size_),
        " bytes after offset ", data_offset, " are not a whole number of ",
        record_bytes, "-byte records");
  }
  d->record_bytes_ = record_bytes;
  d->record_count_ = (d->file_size_ - data_offset) / record_bytes;
  absl::Status s = d->Init(path, data_offset, options);
  if (!s.ok()) return s;
  return d;
}

const DatasetField* MappedDataset::FindField(absl::string_view name) const {
  for (const DatasetField& f : fields_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

uint64_t MappedDataset::map_count() const {
  Locked lock(&mu_);
  return map_count_;
}

absl::StatusOr<const uint8_t*> MappedDataset::Map(uint64_t offset,
                                                  uint64_t size) {
  if (window_ != nullptr && offset >= window_offset_ &&
      offset + size <= window_offset_ + window_size_) {
    return window_ + (offset - window_offset_);
  }
  if (window_ != nullptr) {
    ::munmap(window_, window_size_);
    window_ = nullptr;
  }
  uint64_t start = 0;
  uint64_t length = file_size_;
  if (window_bytes_ != 0 && window_bytes_ < file_size_) {
    start = offset / PageSize() * PageSize();
    length = std::min(window_bytes_, file_size_ - start);
  }
  if (length == 0) return absl::InternalError("empty mapping");
  void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd_,
                   static_cast<off_t>(start));
  if (p == MAP_FAILED) return Errno("cannot mmap", path_);
  window_ = static_cast<uint8_t*>(p);
  window_offset_ = start;
  window_size_ = length;
  ++map_count_;
  return window_ + (offset - window_offset_);
}

absl::Status MappedDataset::ReadRecords(absl::Span<const uint64_t> indices,
                                        void* dst) {
  Locked lock(&mu_);
  uint8_t* out = static_cast<uint8_t*>(dst);
  for (uint64_t index : indices) {
    if (index >= record_count_) {
      return absl::OutOfRangeError(
          absl::StrCat("record ", index, " of ", record_count_, " in ", path_));
    }
    absl::Status checked =
        Verify(index * record_bytes_, (index + 1) * record_bytes_);
    if (!checked.ok()) return checked;
    absl::StatusOr<const uint8_t*> src =
        Map(data_offset_ + index * record_bytes_, record_bytes_);
    if (!src.ok()) return src.status();
    std::memcpy(out, *src, record_bytes_);
    if (check_finite_) {
      for (const DatasetField& field : fields_) {
        size_t i = 0;
        const char* kind = nullptr;
        const uint64_t element = std::max<size_t>(1, DTypeSize(field.dtype));
        if (FindNonFinite(field.dtype, out + field.offset,
                          field.bytes / element, &i, &kind)) {
          return absl::InvalidArgumentError(absl::StrCat(
              path_, ": record ", index, " field '", field.name, "' element ",
              i, " is ", kind, " (file offset ",
              data_offset_ + index * record_bytes_ + field.offset + i * element,
              ")"));
        }
      }
    }
    out += record_bytes_;
  }
  return absl::OkStatus();
}

absl::Status MappedDataset::Verify(uint64_t begin, uint64_t end) {
  if (chunk_bytes_ == 0 || begin >= end) return absl::OkStatus();
  const uint64_t data_bytes = record_count_ * record_bytes_;
  std::string bytes;
  for (uint64_t c = begin / chunk_bytes_; c <= (end - 1) / chunk_bytes_; ++c) {
    if (chunk_verified_[c]) continue;
    // Read apart from the mapping window: a chunk may be larger than it.
    const uint64_t first = c * chunk_bytes_;
    const uint64_t size = std::min(chunk_bytes_, data_bytes - first);
    bytes.resize(size);
    for (uint64_t done = 0; done < size;) {
      const ssize_t n = ::pread(fd_, &bytes[done], size - done,
                                static_cast<off_t>(data_offset_ + first + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Errno("cannot read the data of", path_);
      done += static_cast<uint64_t>(n);
    }
    if (Fnv1a64(bytes.data(), bytes.size()) != chunk_sums_[c]) {
      return absl::DataLossError(absl::StrCat(
          path_, ": data bytes [", first, ", ", first + size,
          ") at file offset ", data_offset_ + first, " (records ",
          first / record_bytes_, " to ", (first + size - 1) / record_bytes_,
          ") do not match their checksum: the file is damaged"));
    }
    chunk_verified_[c] = true;
  }
  return absl::OkStatus();
}

absl::Status MappedDataset::ReadRange(uint64_t first, uint64_t count,
                                      void* dst) {
  if (first > record_count_ || count > record_count_ - first) {
    return absl::OutOfRangeError(absl::StrCat("records [", first, ", ",
                                              first + count, ") of ",
                                              record_count_, " in ", path_));
  }
  std::vector<uint64_t> indices(count);
  for (uint64_t i = 0; i < count; ++i) indices[i] = first + i;
  return ReadRecords(indices, dst);
}

// ---------------------------------------------------------------------------
// BatchSampler

BatchSampler::BatchSampler(uint64_t record_count, const BatchOptions& options)
    : record_count_(record_count), options_(options) {
  if (options_.batch_size == 0) options_.batch_size = 1;
  if (options_.shard_count == 0) options_.shard_count = 1;
  if (options_.shard_index >= options_.shard_count) options_.shard_index = 0;
  if (options_.shard_count > 1) options_.drop_last = true;
  shard_size_ = options_.batch_size;
  // Below, batch_size is the global batch.
  options_.batch_size *= options_.shard_count;
}

std::vector<uint64_t> BatchSampler::EpochPermutation(uint64_t count,
                                                     uint64_t seed,
                                                     uint64_t epoch) {
  std::vector<uint64_t> order(count);
  for (uint64_t i = 0; i < count; ++i) order[i] = i;
  SplitMix64 rng{seed ^ (0xd1b54a32d192ed03ULL * (epoch + 1))};
  for (uint64_t i = count; i > 1; --i) {
    std::swap(order[i - 1], order[rng.Below(i)]);
  }
  return order;
}

void BatchSampler::StartEpoch() {
  position_ = 0;
  batch_in_epoch_ = 0;
  if (options_.shuffle) {
    order_ = EpochPermutation(record_count_, options_.seed, epoch_);
  } else {
    order_.resize(record_count_);
    for (uint64_t i = 0; i < record_count_; ++i) order_[i] = i;
  }
}

bool BatchSampler::Next(std::vector<uint64_t>* indices, uint64_t* epoch,
                        uint64_t* batch_in_epoch) {
  if (record_count_ == 0 ||
      (options_.drop_last && record_count_ < options_.batch_size)) {
    return false;
  }
  if (!started_) {
    started_ = true;
    StartEpoch();
  }
  uint64_t left = record_count_ - position_;
  if (left == 0 || (options_.drop_last && left < options_.batch_size)) {
    ++epoch_;
    if (options_.num_epochs != 0 && epoch_ >= options_.num_epochs) {
      return false;
    }
    StartEpoch();
    left = record_count_;
  }
  if (options_.num_epochs != 0 && epoch_ >= options_.num_epochs) return false;
  const uint64_t n = std::min(left, options_.batch_size);
  // This shard's slice of the global batch (all of it with one shard).
  const uint64_t first = options_.shard_count > 1
                             ? position_ + options_.shard_index * shard_size_
                             : position_;
  const uint64_t count = options_.shard_count > 1 ? shard_size_ : n;
  indices->assign(order_.begin() + first, order_.begin() + first + count);
  position_ += n;
  *epoch = epoch_;
  *batch_in_epoch = batch_in_epoch_++;
  return true;
}

// ---------------------------------------------------------------------------
// HostAllocator

namespace {
class AlignedHostAllocator : public HostAllocator {
 public:
  absl::StatusOr<void*> Allocate(size_t bytes) override {
    void* p = nullptr;
    if (::posix_memalign(&p, 4096, std::max<size_t>(bytes, 1)) != 0) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes, " bytes of host memory"));
    }
    return p;
  }
  void Free(void* ptr, size_t) override { std::free(ptr); }
};
}  // namespace

HostAllocator* DefaultHostAllocator() {
  static AlignedHostAllocator* allocator = new AlignedHostAllocator();
  return allocator;
}

// ---------------------------------------------------------------------------
// BatchProducer

BatchProducer::BatchProducer(MappedDataset* dataset,
                             const BatchOptions& options,
                             HostAllocator* allocator, RecordHook hook)
    : dataset_(dataset),
      options_(options),
      allocator_(allocator),
      hook_(std::move(hook)) {}

absl::StatusOr<std::unique_ptr<BatchProducer>> BatchProducer::Start(
    MappedDataset* dataset, const BatchOptions& options,
    HostAllocator* allocator, RecordHook hook) {
  if (options.batch_size == 0) return Invalid("batch_size must be positive");
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(options.batch_size, dataset->record_bytes(),
                             &bytes)) {
    return Invalid("batch of ", options.batch_size, " records overflows");
  }
  std::unique_ptr<BatchProducer> p(
      new BatchProducer(dataset, options, allocator, std::move(hook)));
  p->slot_bytes_ = bytes;
  {
    Locked lock(&p->mu_);
    for (Slot& s : p->slots_) {
      absl::StatusOr<void*> mem = allocator->Allocate(bytes);
      if (!mem.ok()) return mem.status();  // the destructor frees the other
      s.memory = *mem;
    }
  }
  p->thread_ = std::thread([raw = p.get()] { raw->Run(); });
  return p;
}

BatchProducer::~BatchProducer() {
  {
    Locked lock(&mu_);
    stop_ = true;
    changed_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  Locked lock(&mu_);
  for (Slot& s : slots_) {
    if (s.memory != nullptr) allocator_->Free(s.memory, slot_bytes_);
    s.memory = nullptr;
  }
}

void BatchProducer::Run() {
  BatchSampler sampler(dataset_->record_count(), options_);
  std::vector<uint64_t> indices;
  for (uint64_t sequence = 0;; ++sequence) {
    uint64_t epoch = 0, batch_in_epoch = 0;
    if (!sampler.Next(&indices, &epoch, &batch_in_epoch)) break;
    Slot* slot;
    void* memory;
    {
      Locked lock(&mu_);
      slot = &slots_[sequence & 1];
      while (!stop_ && slot->state != SlotState::kFree) Wait(&changed_, &mu_);
      if (stop_) return;
      slot->state = SlotState::kFilling;
      memory = slot->memory;
    }
    // The slot is ours while it is kFilling: the consumer only takes kReady
    // slots, so this copy needs no lock.
    absl::Status status = dataset_->ReadRecords(indices, memory);
    if (status.ok() && hook_) {
      status = hook_(static_cast<uint8_t*>(memory), indices);
    }
    Locked lock(&mu_);
    Batch& b = slot->batch;
    b.data = static_cast<const uint8_t*>(memory);
    b.num_records = indices.size();
    b.record_bytes = dataset_->record_bytes();
    b.sequence = sequence;
    b.epoch = epoch;
    b.batch_in_epoch = batch_in_epoch;
    b.slot = static_cast<int>(sequence & 1);
    b.record_indices = indices;
    slot->status = status;
    slot->state = SlotState::kReady;
    changed_.SignalAll();
    if (!status.ok()) break;
  }
  Locked lock(&mu_);
  done_ = true;
  changed_.SignalAll();
}

void BatchProducer::ReleaseLocked() {
  if (held_ >= 0) {
    slots_[held_].state = SlotState::kFree;
    held_ = -1;
    changed_.SignalAll();
  }
}

void BatchProducer::Release() {
  Locked lock(&mu_);
  ReleaseLocked();
}

absl::StatusOr<Batch> BatchProducer::Next() {
  Locked lock(&mu_);
  ReleaseLocked();
  if (!error_.ok()) return error_;
  Slot& slot = slots_[next_ & 1];
  while (slot.state != SlotState::kReady && !done_) Wait(&changed_, &mu_);
  if (slot.state != SlotState::kReady) {
    return absl::OutOfRangeError(absl::StrCat("no more batches after ", next_));
  }
  if (!slot.status.ok()) {
    error_ = slot.status;
    slot.state = SlotState::kFree;
    return error_;
  }
  slot.state = SlotState::kHeld;
  held_ = static_cast<int>(next_ & 1);
  ++next_;
  return slot.batch;
}

}  // namespace io
}  // namespace kiln
