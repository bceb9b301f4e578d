#include "kiln/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact/checksum.h"
#include "runtime/io/atomic_file.h"
#include "runtime/io/dtype.h"

namespace kiln {
namespace io {
namespace {

using ::testing::HasSubstr;

std::string TmpPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

// Record i of a raw dataset: byte k is (i * 131 + k * 7 + i / 256) mod 256.
std::vector<uint8_t> RawRecord(uint64_t i, uint64_t bytes) {
  std::vector<uint8_t> r(bytes);
  for (uint64_t k = 0; k < bytes; ++k) {
    r[k] = static_cast<uint8_t>(i * 131 + k * 7 + i / 256);
  }
  return r;
}

std::string WriteRaw(const std::string& name, uint64_t count, uint64_t bytes) {
  const std::string path = TmpPath(name);
  auto w = DatasetWriter::CreateRaw(path, bytes);
  EXPECT_TRUE(w.ok()) << w.status();
  for (uint64_t i = 0; i < count; ++i) {
    const std::vector<uint8_t> r = RawRecord(i, bytes);
    EXPECT_TRUE((*w)->Append(r.data(), r.size()).ok());
  }
  EXPECT_TRUE((*w)->Finish().ok());
  return path;
}

// Checks that `data` holds the raw records `indices`.
void ExpectRecords(const uint8_t* data, const std::vector<uint64_t>& indices,
                   uint64_t bytes) {
  for (size_t j = 0; j < indices.size(); ++j) {
    const std::vector<uint8_t> r = RawRecord(indices[j], bytes);
    ASSERT_EQ(std::memcmp(data + j * bytes, r.data(), bytes), 0)
        << "record " << indices[j] << " at position " << j;
  }
}

// The layout stores kiln::DType as 1..6 (0 never valid), and safetensors
// spells it in capitals.
TEST(DTypeTest, FileCodesAndNames) {
  const DType all[] = {DType::kF32, DType::kBF16, DType::kF16,
                       DType::kI32, DType::kI1,   DType::kI64};
  const char* names[] = {"F32", "BF16", "F16", "I32", "BOOL", "I64"};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(DatasetDTypeCode(all[i]), i + 1);
    EXPECT_EQ(*DTypeFromDatasetCode(i + 1), all[i]);
    EXPECT_EQ(SafetensorsDTypeName(all[i]), names[i]);
    EXPECT_EQ(*ParseSafetensorsDType(names[i]), all[i]);
  }
  EXPECT_FALSE(DTypeFromDatasetCode(0).ok());
  EXPECT_FALSE(DTypeFromDatasetCode(7).ok());
  EXPECT_FALSE(ParseSafetensorsDType("f32").ok());
  EXPECT_FALSE(TensorBytes(static_cast<DType>(7), {2}).ok());
  EXPECT_EQ(*TensorBytes(DType::kI64, {2, 3}), 48u);
}

// Integer labels as PyTorch and NumPy write them: an i64 field.
TEST(DTypeTest, NarrowsI64InPlace) {
  std::vector<int64_t> wide = {0, -1, 7, INT32_MAX, INT32_MIN};
  uint8_t* bytes = reinterpret_cast<uint8_t*>(wide.data());
  ASSERT_EQ(NarrowI64ToI32(bytes, bytes, wide.size()), wide.size());
  const int32_t* narrow = reinterpret_cast<const int32_t*>(bytes);
  EXPECT_EQ(std::vector<int32_t>(narrow, narrow + 5),
            (std::vector<int32_t>{0, -1, 7, INT32_MAX, INT32_MIN}));
  std::vector<int64_t> too_wide = {3, int64_t{INT32_MAX} + 1, 4};
  std::vector<int32_t> out(3);
  EXPECT_EQ(NarrowI64ToI32(reinterpret_cast<const uint8_t*>(too_wide.data()),
                           reinterpret_cast<uint8_t*>(out.data()), 3),
            1u);
  too_wide[1] = int64_t{INT32_MIN} - 1;
  EXPECT_EQ(NarrowI64ToI32(reinterpret_cast<const uint8_t*>(too_wide.data()),
                           reinterpret_cast<uint8_t*>(out.data()), 3),
            1u);
}

TEST(DatasetTest, I64FieldRoundTrip) {
  const std::string path = TmpPath("wide.kilndata");
  auto w = DatasetWriter::Create(path, {{"x", DType::kF32, {2}},
                                        {"label", DType::kI64, {}}});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ((*w)->record_bytes(), 16u);
  struct Rec {
    float x[2];
    int64_t label;
  };
  const Rec recs[2] = {{{1, 2}, -3}, {{4, 5}, int64_t{1} << 40}};
  ASSERT_TRUE((*w)->Append(recs, sizeof(recs)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  auto d = MappedDataset::Open(path);
  ASSERT_TRUE(d.ok()) << d.status();
  const DatasetField* label = (*d)->FindField("label");
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(label->dtype, DType::kI64);
  EXPECT_EQ(label->bytes, 8u);
  Rec back[2];
  ASSERT_TRUE((*d)->ReadRange(0, 2, back).ok());
  EXPECT_EQ(back[1].label, int64_t{1} << 40);
}

TEST(DatasetTest, FieldsRoundTrip) {
  const std::string path = TmpPath("fields.kilndata");
  auto w = DatasetWriter::Create(path, {{"x", DType::kF32, {3}},
                                        {"label", DType::kI32, {}},
                                        {"mask", DType::kI1, {2, 2}}});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ((*w)->record_bytes(), 12u + 4 + 4);
  struct Rec {
    float x[3];
    int32_t label;
    uint8_t mask[4];
  };
  static_assert(sizeof(Rec) == 20, "packed");
  std::vector<Rec> recs(17);
  for (int i = 0; i < 17; ++i) {
    recs[i] = {{i * 1.5f, -i * 1.0f, 0.25f}, i * 10, {1, 0, uint8_t(i & 1), 1}};
  }
  ASSERT_TRUE((*w)->Append(recs.data(), 5 * sizeof(Rec)).ok());
  for (int i = 5; i < 17; ++i)
    ASSERT_TRUE((*w)->Append(&recs[i], sizeof(Rec)).ok());
  EXPECT_FALSE((*w)->Append(&recs[0], 7).ok());
  ASSERT_TRUE((*w)->Finish().ok());

  auto d = MappedDataset::Open(path);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->record_count(), 17u);
  EXPECT_EQ((*d)->record_bytes(), 20u);
  ASSERT_EQ((*d)->fields().size(), 3u);
  const DatasetField* label = (*d)->FindField("label");
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(label->offset, 12u);
  EXPECT_EQ(label->bytes, 4u);
  EXPECT_EQ((*d)->fields()[2].shape, std::vector<int64_t>({2, 2}));
  EXPECT_EQ((*d)->fields()[2].dtype, DType::kI1);
  std::vector<Rec> back(17);
  ASSERT_TRUE((*d)->ReadRange(0, 17, back.data()).ok());
  EXPECT_EQ(std::memcmp(back.data(), recs.data(), sizeof(Rec) * 17), 0);
  Rec one;
  ASSERT_TRUE((*d)->ReadRecords({16}, &one).ok());
  EXPECT_EQ(one.label, 160);
  EXPECT_EQ((*d)->ReadRecords({17}, &one).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ((*d)->ReadRange(10, 8, back.data()).code(),
            absl::StatusCode::kOutOfRange);

  // The data starts at a multiple of 64 after header and layout; one
  // chunk's checksum follows it.
  const std::string bytes = *ReadFile(path);
  EXPECT_EQ(bytes.substr(0, 8), "KILNDATA");
  EXPECT_EQ(bytes.size() % 64, (17 * 20 + 8) % 64);
}

// Reads `count` records of `bytes` bytes from `path` one by one; the status
// of the first that fails (OK if none).
absl::Status ReadEach(const std::string& path, uint64_t count,
                      uint64_t bytes, uint64_t* failed) {
  auto d = MappedDataset::Open(path);
  if (!d.ok()) return d.status();
  std::vector<uint8_t> out(bytes);
  for (uint64_t i = 0; i < count; ++i) {
    absl::Status s = (*d)->ReadRecords({i}, out.data());
    if (!s.ok()) {
      *failed = i;
      return s;
    }
  }
  return absl::OkStatus();
}

TEST(DatasetTest, DamagedDataIsFoundByItsChecksum) {
  // Just under 3 MiB of 1000-byte records: three checksum chunks, the last
  // one short.
  const uint64_t kBytes = 1000, kCount = 3 * 1048576 / 1000;
  const std::string path = WriteRaw("damaged.kilndata", kCount, kBytes);
  const std::string good = *ReadFile(path);
  const uint64_t chunks = (kCount * kBytes + kDatasetChunkBytes - 1) /
                          kDatasetChunkBytes;
  EXPECT_EQ(good.size(), kDatasetHeaderBytes + kCount * kBytes + 8 * chunks);
  uint64_t failed = 0;
  ASSERT_TRUE(ReadEach(path, kCount, kBytes, &failed).ok());

  // One flipped bit in record 2000 (the second chunk): records of the other
  // chunks still read, every record of that chunk is refused with the bytes,
  // the records and the file offset.
  std::mt19937_64 rng(std::random_device{}());
  const uint64_t byte = 2000 * kBytes + rng() % kBytes;
  std::string bad = good;
  bad[kDatasetHeaderBytes + byte] ^= static_cast<char>(1 << (rng() % 8));
  const std::string damaged = TmpPath("damaged_copy.kilndata");
  ASSERT_TRUE(WriteFileAtomically(damaged, bad).ok());
  absl::Status s = ReadEach(damaged, kCount, kBytes, &failed);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_EQ(failed, kDatasetChunkBytes / kBytes);  // the chunk's first record
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("data bytes [1048576, 2097152) at file offset 1048640 "
                        "(records 1048 to 2097) do not match their checksum"));
  auto d = MappedDataset::Open(damaged);
  ASSERT_TRUE(d.ok());
  std::vector<uint8_t> out(kBytes);
  EXPECT_TRUE((*d)->ReadRecords({0}, out.data()).ok());
  EXPECT_TRUE((*d)->ReadRecords({kCount - 1}, out.data()).ok());
  ExpectRecords(out.data(), {kCount - 1}, kBytes);
  EXPECT_EQ((*d)->ReadRecords({2000}, out.data()).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ((*d)->ReadRecords({1500}, out.data()).code(),
            absl::StatusCode::kDataLoss);

  // A damaged checksum, a missing or an extra byte at the end.
  bad = good;
  bad[bad.size() - 3] ^= 4;
  ASSERT_TRUE(WriteFileAtomically(damaged, bad).ok());
  EXPECT_EQ(ReadEach(damaged, kCount, kBytes, &failed).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(failed, 2 * kDatasetChunkBytes / kBytes);  // the last chunk's
  ASSERT_TRUE(WriteFileAtomically(damaged, good + "x").ok());
  EXPECT_THAT(std::string(MappedDataset::Open(damaged).status().message()),
              HasSubstr("1 bytes follow the data's checksums"));
}

TEST(DatasetTest, NonFiniteFieldsAreRefusedUnlessAllowed) {
  const std::string path = TmpPath("nan.kilndata");
  auto w = DatasetWriter::Create(
      path, {{"label", DType::kI32, {}}, {"x", DType::kF32, {2, 3}}});
  ASSERT_TRUE(w.ok()) << w.status();
  for (int r = 0; r < 10; ++r) {
    struct {
      int32_t label;
      float x[6];
    } rec = {r, {1, 2, 3, 4, 5, 6}};
    if (r == 7) rec.x[4] = -std::numeric_limits<float>::infinity();
    // An integer's bits are never a NaN.
    if (r == 8) rec.label = 0x7fc00000;
    ASSERT_TRUE((*w)->Append(&rec, sizeof rec).ok());
  }
  ASSERT_TRUE((*w)->Finish().ok());
  auto d = MappedDataset::Open(path);
  ASSERT_TRUE(d.ok()) << d.status();
  std::vector<uint8_t> out(28);
  EXPECT_TRUE((*d)->ReadRecords({8}, out.data()).ok());
  const absl::Status s =
      (*d)->ReadRecords({6, 7}, std::vector<uint8_t>(56).data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // The data starts at 128 (the header's 64 bytes and a 30-byte layout,
  // rounded up to 64); record 7's field x at byte 4 of it, element 4.
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("nan.kilndata: record 7 field 'x' element 4 is -inf "
                        "(file offset " +
                        std::to_string(128 + 7 * 28 + 4 + 4 * 4) + ")"));
  const std::string bytes = *ReadFile(path);
  float value;
  std::memcpy(&value, bytes.data() + 128 + 7 * 28 + 4 + 4 * 4, 4);
  EXPECT_TRUE(std::isinf(value));
  DatasetOptions allow;
  allow.check_finite = false;
  auto passed = MappedDataset::Open(path, allow);
  ASSERT_TRUE(passed.ok());
  EXPECT_TRUE((*passed)->ReadRecords({7}, out.data()).ok());
}

TEST(DatasetTest, VersionOneFilesWithoutDataChecksumsStillRead) {
  const uint64_t kBytes = 24, kCount = 10;
  const std::string good = *ReadFile(WriteRaw("v2.kilndata", kCount, kBytes));
  // The same records as version 1: no granule, no checksums after the data,
  // the header checksum over bytes [0, 48) (and the empty layout).
  std::string v1 = good.substr(0, kDatasetHeaderBytes + kCount * kBytes);
  v1[8] = 1;
  const uint64_t sum = Fnv1a64(v1.data(), 48);
  for (int i = 0; i < 8; ++i) {
    v1[48 + i] = static_cast<char>(sum >> (8 * i));
    v1[56 + i] = 0;
  }
  const std::string path = TmpPath("v1.kilndata");
  ASSERT_TRUE(WriteFileAtomically(path, v1).ok());
  auto d = MappedDataset::Open(path);
  ASSERT_TRUE(d.ok()) << d.status();
  std::vector<uint8_t> out(kCount * kBytes);
  ASSERT_TRUE((*d)->ReadRange(0, kCount, out.data()).ok());
  std::vector<uint64_t> all(kCount);
  for (uint64_t i = 0; i < kCount; ++i) all[i] = i;
  ExpectRecords(out.data(), all, kBytes);
  v1[8] = 3;
  ASSERT_TRUE(WriteFileAtomically(path, v1).ok());
  EXPECT_THAT(std::string(MappedDataset::Open(path).status().message()),
              HasSubstr("unsupported version 3"));
}

TEST(DatasetTest, CorruptHeadersAreRejected) {
  const std::string path = WriteRaw("corrupt.kilndata", 10, 24);
  const std::string good = *ReadFile(path);
  auto open_with = [&](const std::string& contents) {
    const std::string p = TmpPath("corrupt_copy.kilndata");
    EXPECT_TRUE(WriteFileAtomically(p, contents).ok());
    return MappedDataset::Open(p).status();
  };
  EXPECT_TRUE(open_with(good).ok());
  EXPECT_THAT(std::string(open_with(good.substr(0, 40)).message()),
              HasSubstr("too small"));
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_THAT(std::string(open_with(bad).message()),
              HasSubstr("not a KILNDATA"));
  bad = good;
  bad[24] ^= 1;  // record count
  EXPECT_THAT(std::string(open_with(bad).message()), HasSubstr("checksum"));
  EXPECT_THAT(std::string(open_with(good.substr(0, good.size() - 1)).message()),
              HasSubstr("exceed the file size"));
  EXPECT_EQ(MappedDataset::Open(TmpPath("missing")).status().code(),
            absl::StatusCode::kNotFound);
  for (size_t len = 0; len < good.size(); len += 7) {
    EXPECT_FALSE(open_with(good.substr(0, len)).ok()) << len;
  }
}

TEST(DatasetTest, RawFilesWithCallerGivenRecordSize) {
  const std::string path = TmpPath("raw.bin");
  std::string contents = "PREFIX--";
  for (int i = 0; i < 9; ++i) {
    const std::vector<uint8_t> r = RawRecord(i, 12);
    contents.append(reinterpret_cast<const char*>(r.data()), r.size());
  }
  ASSERT_TRUE(WriteFileAtomically(path, contents).ok());
  auto d = MappedDataset::OpenRaw(path, 12, 8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->record_count(), 9u);
  EXPECT_TRUE((*d)->fields().empty());
  std::vector<uint8_t> out(3 * 12);
  ASSERT_TRUE((*d)->ReadRecords({8, 0, 4}, out.data()).ok());
  ExpectRecords(out.data(), {8, 0, 4}, 12);
  EXPECT_FALSE(MappedDataset::OpenRaw(path, 12).ok());  // 116 bytes: not whole
  EXPECT_FALSE(MappedDataset::OpenRaw(path, 0).ok());
}

TEST(DatasetTest, FileLargerThanTheMappingWindow) {
  // ~4.1 MB of 4100-byte records (not a page multiple, so records straddle
  // pages and windows) read through a 64 KiB window.
  const uint64_t kBytes = 4100, kCount = 1000;
  const std::string path = WriteRaw("large.kilndata", kCount, kBytes);
  DatasetOptions options;
  options.window_bytes = 64 << 10;
  auto d = MappedDataset::Open(path, options);
  ASSERT_TRUE(d.ok()) << d.status();
  std::mt19937_64 rng(5);
  std::vector<uint64_t> indices(300);
  for (uint64_t& i : indices) i = rng() % kCount;
  indices.push_back(kCount - 1);
  indices.push_back(0);
  std::vector<uint8_t> out(indices.size() * kBytes);
  ASSERT_TRUE((*d)->ReadRecords(indices, out.data()).ok());
  ExpectRecords(out.data(), indices, kBytes);
  EXPECT_GT((*d)->map_count(), 100u);
  // Sequential reading moves the window forward a few times only.
  auto seq = MappedDataset::Open(path, options);
  std::vector<uint8_t> all(kCount * kBytes);
  ASSERT_TRUE((*seq)->ReadRange(0, kCount, all.data()).ok());
  std::vector<uint64_t> in_order(kCount);
  for (uint64_t i = 0; i < kCount; ++i) in_order[i] = i;
  ExpectRecords(all.data(), in_order, kBytes);
  EXPECT_LT((*seq)->map_count(), 100u);
  EXPECT_GT((*seq)->map_count(), 10u);
  // A tiny window is raised to hold a record.
  options.window_bytes = 1;
  auto tiny = MappedDataset::Open(path, options);
  std::vector<uint8_t> rec(kBytes);
  ASSERT_TRUE((*tiny)->ReadRecords({777}, rec.data()).ok());
  ExpectRecords(rec.data(), {777}, kBytes);
}

TEST(BatchSamplerTest, SequentialBatches) {
  BatchOptions o;
  o.batch_size = 4;
  o.shuffle = false;
  o.drop_last = false;
  o.num_epochs = 2;
  BatchSampler s(10, o);
  std::vector<uint64_t> idx;
  uint64_t epoch, b;
  std::vector<std::vector<uint64_t>> got;
  std::vector<uint64_t> epochs;
  while (s.Next(&idx, &epoch, &b)) {
    got.push_back(idx);
    epochs.push_back(epoch);
  }
  const std::vector<std::vector<uint64_t>> want = {
      {0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}, {0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(epochs, std::vector<uint64_t>({0, 0, 0, 1, 1, 1}));

  o.drop_last = true;
  BatchSampler d(10, o);
  int n = 0;
  while (d.Next(&idx, &epoch, &b)) {
    EXPECT_EQ(idx.size(), 4u);
    ++n;
  }
  EXPECT_EQ(n, 4);
}

TEST(BatchSamplerTest, ShardsSliceTheGlobalBatches) {
  // Two ranks with batches of 3 see, together, the batches of 6 one rank
  // sees, over two shuffled epochs of 14 records (2 full global batches
  // each, the short rest dropped).
  BatchOptions whole;
  whole.batch_size = 6;
  whole.seed = 5;
  whole.num_epochs = 2;
  BatchSampler one(14, whole);
  std::vector<BatchSampler> ranks;
  for (uint64_t r = 0; r < 2; ++r) {
    BatchOptions o = whole;
    o.batch_size = 3;
    o.shard_count = 2;
    o.shard_index = r;
    o.drop_last = false;  // shards always drop the short rest
    ranks.emplace_back(14, o);
  }
  std::vector<uint64_t> all, part;
  uint64_t epoch, b, rank_epoch, rank_b;
  int batches = 0;
  while (one.Next(&all, &epoch, &b)) {
    std::vector<uint64_t> joined;
    for (BatchSampler& rank : ranks) {
      ASSERT_TRUE(rank.Next(&part, &rank_epoch, &rank_b));
      EXPECT_EQ(part.size(), 3u);
      EXPECT_EQ(rank_epoch, epoch);
      EXPECT_EQ(rank_b, b);
      joined.insert(joined.end(), part.begin(), part.end());
    }
    EXPECT_EQ(joined, all);
    ++batches;
  }
  EXPECT_EQ(batches, 4);
  for (BatchSampler& rank : ranks) {
    EXPECT_FALSE(rank.Next(&part, &rank_epoch, &rank_b));
  }
}

TEST(BatchSamplerTest, ShuffleIsAPermutationPerEpochAndDeterministic) {
  const uint64_t kCount = 1003;
  std::set<std::vector<uint64_t>> orders;
  for (uint64_t epoch = 0; epoch < 5; ++epoch) {
    std::vector<uint64_t> p = BatchSampler::EpochPermutation(kCount, 99, epoch);
    EXPECT_EQ(p, BatchSampler::EpochPermutation(kCount, 99, epoch));
    orders.insert(p);
    std::vector<uint64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(sorted[i], i);
  }
  EXPECT_EQ(orders.size(), 5u);  // every epoch has its own order
  EXPECT_NE(BatchSampler::EpochPermutation(kCount, 99, 0),
            BatchSampler::EpochPermutation(kCount, 100, 0));
  // Pinned values: the order must not change across machines or versions.
  EXPECT_EQ(BatchSampler::EpochPermutation(8, 42, 0),
            BatchSampler::EpochPermutation(8, 42, 0));

  // Through the sampler: every epoch visits every record once.
  BatchOptions o;
  o.batch_size = 64;
  o.seed = 7;
  o.drop_last = false;
  o.num_epochs = 3;
  BatchSampler s(kCount, o), t(kCount, o);
  std::vector<std::multiset<uint64_t>> seen(3);
  std::vector<uint64_t> idx, idx2;
  uint64_t epoch, b, epoch2, b2;
  while (s.Next(&idx, &epoch, &b)) {
    ASSERT_TRUE(t.Next(&idx2, &epoch2, &b2));
    EXPECT_EQ(idx, idx2);
    seen[epoch].insert(idx.begin(), idx.end());
  }
  for (const auto& e : seen) {
    ASSERT_EQ(e.size(), kCount);
    EXPECT_EQ(std::set<uint64_t>(e.begin(), e.end()).size(), kCount);
  }
}

// Counts allocations and checks that what is freed was allocated here.
class CountingAllocator : public HostAllocator {
 public:
  absl::StatusOr<void*> Allocate(size_t bytes) override {
    if (fail_) return absl::ResourceExhaustedError("no pinned memory");
    absl::MutexLock lock(&mu_);
    void* p = std::malloc(bytes);
    live_.insert(p);
    ++allocations_;
    return p;
  }
  void Free(void* ptr, size_t) override {
    absl::MutexLock lock(&mu_);
    EXPECT_EQ(live_.erase(ptr), 1u);
    std::free(ptr);
  }
  size_t live() {
    absl::MutexLock lock(&mu_);
    return live_.size();
  }
  bool fail_ = false;

 private:
  absl::Mutex mu_;
  std::set<void*> live_;
  int allocations_ = 0;
};

TEST(BatchProducerTest, DeliversTheSamplersBatches) {
  const uint64_t kBytes = 40, kCount = 53;
  const std::string path = WriteRaw("producer.kilndata", kCount, kBytes);
  auto d = MappedDataset::Open(path);
  ASSERT_TRUE(d.ok());
  CountingAllocator alloc;
  BatchOptions o;
  o.batch_size = 8;
  o.seed = 3;
  o.drop_last = false;
  o.num_epochs = 2;
  {
    auto p = BatchProducer::Start(d->get(), o, &alloc);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(alloc.live(), 2u);
    BatchSampler reference(kCount, o);
    std::vector<uint64_t> idx;
    uint64_t epoch, b;
    uint64_t sequence = 0;
    while (reference.Next(&idx, &epoch, &b)) {
      absl::StatusOr<Batch> batch = (*p)->Next();
      ASSERT_TRUE(batch.ok()) << batch.status();
      EXPECT_EQ(batch->sequence, sequence);
      EXPECT_EQ(batch->slot, static_cast<int>(sequence % 2));
      EXPECT_EQ(batch->epoch, epoch);
      EXPECT_EQ(batch->batch_in_epoch, b);
      EXPECT_EQ(batch->record_indices, idx);
      EXPECT_EQ(batch->num_records, idx.size());
      EXPECT_EQ(batch->record_bytes, kBytes);
      ExpectRecords(batch->data, idx, kBytes);
      ++sequence;
    }
    EXPECT_EQ(sequence, 14u);  // 7 batches (the last of 5) x 2 epochs
    EXPECT_EQ((*p)->Next().status().code(), absl::StatusCode::kOutOfRange);
    EXPECT_EQ((*p)->Next().status().code(), absl::StatusCode::kOutOfRange);
  }
  EXPECT_EQ(alloc.live(), 0u);
}

// The hook sees each batch's records on the producer thread, may rewrite
// them, and its error ends the batches like a read error.
TEST(BatchProducerTest, RecordHookRewritesAndRefuses) {
  const uint64_t kBytes = 8, kCount = 12;
  const std::string path = WriteRaw("hook.kilndata", kCount, kBytes);
  auto d = MappedDataset::Open(path);
  ASSERT_TRUE(d.ok());
  BatchOptions o;
  o.batch_size = 4;
  o.shuffle = false;
  o.num_epochs = 1;
  const std::thread::id consumer = std::this_thread::get_id();
  auto p = BatchProducer::Start(
      d->get(), o, DefaultHostAllocator(),
      [&](uint8_t* records, absl::Span<const uint64_t> indices) {
        EXPECT_NE(std::this_thread::get_id(), consumer);
        for (size_t i = 0; i < indices.size(); ++i) {
          if (indices[i] == 9) {
            return absl::InvalidArgumentError(
                absl::StrCat("record ", indices[i], " refused"));
          }
          records[i * kBytes] = static_cast<uint8_t>(100 + indices[i]);
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(p.ok()) << p.status();
  for (uint64_t b = 0; b < 2; ++b) {
    absl::StatusOr<Batch> batch = (*p)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    for (uint64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(batch->data[i * kBytes], 100 + b * 4 + i);
    }
  }
  EXPECT_EQ((*p)->Next().status().message(), "record 9 refused");
}

TEST(BatchProducerTest, AllocatorFailure) {
  const std::string path = WriteRaw("alloc.kilndata", 4, 8);
  auto d = MappedDataset::Open(path);
  CountingAllocator alloc;
  alloc.fail_ = true;
  BatchOptions o;
  o.batch_size = 2;
  EXPECT_EQ(BatchProducer::Start(d->get(), o, &alloc).status().code(),
            absl::StatusCode::kResourceExhausted);
  o.batch_size = 0;
  EXPECT_FALSE(BatchProducer::Start(d->get(), o).ok());
}

// The consumer checks each batch twice, with a pause in between during which
// the producer is filling the other slot: a producer writing into the held slot
// would change it. Also stops producers at random points.
TEST(BatchProducerTest, StressProducerAndConsumer) {
  const uint64_t kBytes = 96, kCount = 211;
  const std::string path = WriteRaw("stress.kilndata", kCount, kBytes);
  DatasetOptions small_window;
  small_window.window_bytes = 8192;
  auto d = MappedDataset::Open(path, small_window);
  ASSERT_TRUE(d.ok());
  std::mt19937_64 rng(11);
  CountingAllocator alloc;
  for (int round = 0; round < 40; ++round) {
    BatchOptions o;
    o.batch_size = 1 + rng() % 17;
    o.shuffle = rng() % 4 != 0;
    o.seed = rng();
    o.drop_last = rng() % 2;
    auto p = BatchProducer::Start(d->get(), o, &alloc);
    ASSERT_TRUE(p.ok());
    BatchSampler reference(kCount, o);
    const int batches = static_cast<int>(rng() % 120);
    for (int i = 0; i < batches; ++i) {
      absl::StatusOr<Batch> batch = (*p)->Next();
      ASSERT_TRUE(batch.ok()) << batch.status();
      std::vector<uint64_t> idx;
      uint64_t epoch, b;
      ASSERT_TRUE(reference.Next(&idx, &epoch, &b));
      ASSERT_EQ(batch->record_indices, idx);
      ExpectRecords(batch->data, idx, kBytes);
      if (rng() % 4 == 0) std::this_thread::yield();
      if (rng() % 16 == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      ExpectRecords(batch->data, idx, kBytes);
      if (rng() % 8 == 0) (*p)->Release();
    }
  }
  EXPECT_EQ(alloc.live(), 0u);
}

}  // namespace
}  // namespace io
}  // namespace kiln
