#include "runtime/io/safetensors.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/io/atomic_file.h"

namespace kiln {
namespace io {
namespace {

using ::testing::HasSubstr;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

Safetensors Sample() {
  Safetensors st;
  st.tensors["a"] = HostTensor::F32({2}, {1.0f, -2.0f});
  st.tensors["b"] = HostTensor{DType::kBF16, {1, 2}, {0x80, 0x3f, 0x00, 0x40}};
  st.tensors["m"] = HostTensor{DType::kI1, {}, {1}};
  st.metadata["format"] = "pt";
  return st;
}

// The expected file for Sample(), spelled out from the format's definition.
std::string GoldenBytes() {
  // The metadata carries each tensor's FNV-1a 64 (the checksums).
  const std::string header =
      "{\"__metadata__\":{\"format\":\"pt\","
      "\"kiln.fnv1a64.a\":\"0979e9ee2da22858\","
      "\"kiln.fnv1a64.b\":\"5324b5aabd93ee60\","
      "\"kiln.fnv1a64.m\":\"af63bc4c8601b62c\"},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"BF16\",\"shape\":[1,2],\"data_offsets\":[8,12]},"
      "\"m\":{\"dtype\":\"BOOL\",\"shape\":[],\"data_offsets\":[12,13]}}"
      "       ";  // 305 bytes of JSON + 7 spaces: data starts at 8 + 312
  EXPECT_EQ(header.size(), 312u);
  std::string out;
  out += std::string("\x38\x01\0\0\0\0\0\0", 8);  // 312, little endian
  out += header;
  out += std::string("\x00\x00\x80\x3f", 4);  // 1.0f
  out += std::string("\x00\x00\x00\xc0", 4);  // -2.0f
  out += std::string("\x80\x3f\x00\x40", 4);  // bf16 1.0, 2.0
  out += std::string("\x01", 1);              // true
  return out;
}

// A header and data put together by hand, for malformed inputs.
std::string Make(const std::string& header, const std::string& data) {
  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(n >> (8 * i)));
  return out + header + data;
}

TEST(SafetensorsTest, ValuesOfTheTensorsType) {
  const HostTensor labels = HostTensor::I32({3}, {7, -2, 40});
  absl::StatusOr<std::vector<int32_t>> values = labels.Values<int32_t>();
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (std::vector<int32_t>{7, -2, 40}));
  absl::StatusOr<std::vector<float>> wrong = labels.Values<float>();
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(),
            "the tensor holds i32 elements, not f32");
  const HostTensor empty = HostTensor::F32({0, 4}, {});
  ASSERT_TRUE(empty.Values<float>().ok());
  EXPECT_TRUE(empty.Values<float>()->empty());
}

TEST(SafetensorsTest, GoldenBytes) {
  absl::StatusOr<std::string> bytes = SerializeSafetensors(Sample());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, GoldenBytes());
  absl::StatusOr<Safetensors> parsed = ParseSafetensors(GoldenBytes());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(*parsed == Sample());
}

TEST(SafetensorsTest, DamagedDataIsFoundByItsChecksum) {
  absl::StatusOr<std::string> bytes = SerializeSafetensors(Sample());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // Every byte of the data buffer, flipped, is reported with its tensor.
  const size_t data = bytes->size() - 13;
  for (size_t i = data; i < bytes->size(); ++i) {
    std::string damaged = *bytes;
    damaged[i] ^= 0x10;
    absl::StatusOr<Safetensors> parsed = ParseSafetensors(damaged);
    ASSERT_FALSE(parsed.ok()) << "byte " << i;
    const char* tensor = i < data + 8 ? "\"a\"" : i < data + 12 ? "\"b\"" : "\"m\"";
    EXPECT_THAT(std::string(parsed.status().message()),
                HasSubstr(absl::StrCat("tensor ", tensor)));
    EXPECT_THAT(std::string(parsed.status().message()),
                HasSubstr("do not match their checksum"));
  }
  std::string damaged = *bytes;
  damaged[data + 9] ^= 1;
  EXPECT_THAT(std::string(ParseSafetensors(damaged).status().message()),
              HasSubstr("4 bytes at file offset " + std::to_string(data + 8)));
  // A checksum that names no tensor.
  Safetensors st = Sample();
  st.tensors.erase("m");
  absl::StatusOr<std::string> fewer = SerializeSafetensors(st);
  ASSERT_TRUE(fewer.ok());
  std::string renamed = *fewer;
  renamed.replace(renamed.find("kiln.fnv1a64.b"), 14, "kiln.fnv1a64.z");
  EXPECT_THAT(std::string(ParseSafetensors(renamed).status().message()),
              HasSubstr("a checksum of no tensor"));
  // Stale checksums in the caller's metadata are replaced by the writer.
  st.metadata["kiln.fnv1a64.a"] = "0000000000000000";
  absl::StatusOr<std::string> rewritten = SerializeSafetensors(st);
  ASSERT_TRUE(rewritten.ok());
  EXPECT_TRUE(ParseSafetensors(*rewritten).ok());
}

TEST(SafetensorsTest, RoundTripLargerSet) {
  Safetensors st;
  std::vector<float> w(3 * 5 * 7);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f * i - 3;
  st.tensors["layer.0/weight"] = HostTensor::F32({3, 5, 7}, w);
  st.tensors["labels"] = HostTensor::I32({4}, {0, -1, 7, 1 << 30});
  // What PyTorch and NumPy write for integer tensors.
  const int64_t wide[] = {-1, int64_t{1} << 40};
  st.tensors["targets"] = HostTensor{
      DType::kI64, {2}, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(wide),
                                             reinterpret_cast<const uint8_t*>(wide) + 16)};
  st.tensors["empty"] = HostTensor{DType::kF16, {0, 4}, {}};
  st.tensors["h"] = HostTensor{DType::kF16, {3}, {1, 2, 3, 4, 5, 6}};
  st.tensors["mask"] = HostTensor{DType::kI1, {2, 2}, {1, 0, 0, 1}};
  st.tensors["\xc3\xa9t\xc3\xa9 \"quoted\"\\"] = HostTensor::F32({1}, {7.f});
  st.metadata["step"] = "1200";
  st.metadata["note"] = "line\nbreak \"and\" tab\t";
  absl::StatusOr<std::string> bytes = SerializeSafetensors(st);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // The data buffer starts 8-aligned.
  uint64_t n = 0;
  std::memcpy(&n, bytes->data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u);
  absl::StatusOr<Safetensors> parsed = ParseSafetensors(*bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(*parsed == st);
}

TEST(SafetensorsTest, ReadsOtherWritersLayout) {
  // Spaces, another key order, no padding, tensors out of name order.
  const std::string data("\x01\x00\x00\x00\x02\x00\x00\x00\x05\x00\x06\x00",
                         12);
  const std::string header =
      "{ \"z\" : {\"data_offsets\": [0, 8], \"shape\": [2], \"dtype\": "
      "\"I32\"},"
      " \"a\": {\"shape\": [2], \"dtype\": \"F16\", \"data_offsets\": [8, 12]} "
      "}";
  absl::StatusOr<Safetensors> st = ParseSafetensors(Make(header, data));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->tensors.at("z").data,
            std::vector<uint8_t>({1, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(st->tensors.at("a").dtype, DType::kF16);
  EXPECT_TRUE(st->metadata.empty());
}

TEST(SafetensorsTest, EmptyFile) {
  absl::StatusOr<std::string> bytes = SerializeSafetensors(Safetensors());
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, Make("{}      ", ""));
  EXPECT_TRUE(ParseSafetensors(*bytes).ok());
}

TEST(SafetensorsTest, EveryTruncationIsRejected) {
  const std::string golden = GoldenBytes();
  for (size_t len = 0; len < golden.size(); ++len) {
    absl::StatusOr<Safetensors> st = ParseSafetensors(golden.substr(0, len));
    ASSERT_FALSE(st.ok()) << len;
    EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

struct BadCase {
  const char* name;
  std::string bytes;
  const char* message;
};

TEST(SafetensorsTest, MalformedInputsAreRejected) {
  const std::string t8 = "{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":";
  const std::vector<BadCase> cases = {
      {"short", std::string(5, '\0'),
       "file: 5 bytes is too small for the 8-byte header length"},
      {"length past end", Make("{}", "").substr(0, 9),
       "header: length 2 exceeds the 1 bytes after the length"},
      {"huge length", std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8),
       "header: length 18446744073709551615 exceeds the limit 104857600"},
      {"not an object", Make("[1,2]", ""), "header: must begin with '{'"},
      {"bad json", Make("{\"a\":", ""), "header: not valid JSON"},
      {"bad utf8", Make("{\"\xff\":{}}", ""), "header: not valid JSON"},
      {"trailing garbage", Make("{} x", ""), "header: not valid JSON"},
      {"duplicate",
       Make("{\"a\":" + t8 + "[0,8]},\"a\":" + t8 + "[0,8]}}",
            std::string(8, '\0')),
       "header: duplicate key \"a\""},
      {"duplicate inner",
       Make("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[],"
            "\"data_offsets\":[0,4]}}",
            std::string(4, '\0')),
       "header: duplicate key \"dtype\""},
      {"overlap",
       Make("{\"a\":" + t8 + "[0,8]},\"b\":" + t8 + "[4,12]}}",
            std::string(12, '\0')),
       "data: tensors \"a\" [0, 8) and \"b\" [4, 12) overlap"},
      {"same range",
       Make("{\"a\":" + t8 + "[0,8]},\"b\":" + t8 + "[0,8]}}",
            std::string(8, '\0')),
       "data: tensors \"a\" [0, 8) and \"b\" [0, 8) overlap"},
      {"hole",
       Make("{\"a\":" + t8 + "[0,8]},\"b\":" + t8 + "[12,20]}}",
            std::string(20, '\0')),
       "data: bytes [8, 12) belong to no tensor"},
      {"trailing data", Make("{\"a\":" + t8 + "[0,8]}}", std::string(9, '\0')),
       "data: bytes [8, 9) belong to no tensor"},
      {"wrong size", Make("{\"a\":" + t8 + "[0,6]}}", std::string(6, '\0')),
       "header[\"a\"]: data_offsets [0, 6) hold 6 bytes, but F32[2] needs 8"},
      {"past end", Make("{\"a\":" + t8 + "[0,8]}}", std::string(7, '\0')),
       "header[\"a\"].data_offsets: end 8 exceeds the data buffer of 7 bytes"},
      {"reversed", Make("{\"a\":" + t8 + "[8,0]}}", std::string(8, '\0')),
       "header[\"a\"].data_offsets: begin 8 > end 0"},
      {"offsets arity", Make("{\"a\":" + t8 + "[0]}}", ""),
       "header[\"a\"].data_offsets: must be [begin, end], non-negative "
       "integers"},
      {"dtype",
       Make("{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}",
            std::string(8, '\0')),
       "header[\"a\"].dtype: unsupported dtype \"F64\" (expected F32, BF16, "
       "F16, I32, BOOL or I64)"},
      {"negative extent",
       Make("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,0]}}",
            ""),
       "header[\"a\"].shape: extents must be non-negative integers"},
      {"float extent",
       Make(
           "{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}",
           std::string(8, '\0')),
       "header[\"a\"].shape: extents must be non-negative integers"},
      {"shape overflow",
       Make("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
            "\"data_offsets\":[0,0]}}",
            ""),
       "header[\"a\"].shape: byte size of shape [4294967296,4294967296] "
       "overflows 64 bits"},
      {"missing shape",
       Make("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,0]}}", ""),
       "header[\"a\"].shape: missing or not an array"},
      {"extra key",
       Make("{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4],"
            "\"x\":1}}",
            std::string(4, '\0')),
       "header[\"a\"]: unexpected key \"x\""},
      {"metadata value", Make("{\"__metadata__\":{\"k\":1}}", ""),
       "header[\"__metadata__\"][\"k\"]: metadata values must be strings"},
      {"tensor not object", Make("{\"a\":3}", ""),
       "header[\"a\"]: must be an object"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Safetensors> st = ParseSafetensors(c.bytes);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(st.status().message()), c.message);
  }
}

TEST(SafetensorsTest, HeaderLimit) {
  SafetensorsLimits limits;
  limits.max_header_bytes = 64;
  absl::StatusOr<Safetensors> st = ParseSafetensors(GoldenBytes(), limits);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(std::string(st.status().message()),
            "header: length 312 exceeds the limit 64");
}

TEST(SafetensorsTest, WriterRejectsInconsistentTensors) {
  Safetensors st;
  st.tensors["a"] = HostTensor{DType::kF32, {3}, {1, 2, 3}};
  EXPECT_THAT(std::string(SerializeSafetensors(st).status().message()),
              HasSubstr("3 data bytes, but F32[3] needs 12"));
  st.tensors.clear();
  st.tensors["__metadata__"] = HostTensor::F32({}, {1});
  EXPECT_FALSE(SerializeSafetensors(st).ok());
  st.tensors.clear();
  st.tensors["bad\xff"] = HostTensor::F32({}, {1});
  EXPECT_THAT(std::string(SerializeSafetensors(st).status().message()),
              HasSubstr("not valid UTF-8"));
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(SafetensorsTest, FileRoundTrip) {
  const std::string dir = TmpDir() + "/roundtrip";
  mkdir(dir.c_str(), 0755);
  const std::string path = dir + "/ckpt.safetensors";
  ASSERT_TRUE(WriteSafetensorsFile(path, Sample()).ok());
  EXPECT_EQ(*ReadFile(path), GoldenBytes());
  absl::StatusOr<Safetensors> st = ReadSafetensorsFile(path);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_TRUE(*st == Sample());
  // Overwrite with other contents; no temporary files remain.
  Safetensors other;
  other.tensors["x"] = HostTensor::I32({1}, {5});
  ASSERT_TRUE(WriteSafetensorsFile(path, other).ok());
  EXPECT_TRUE(*ReadSafetensorsFile(path) == other);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>({"ckpt.safetensors"}));
  struct stat s;
  ASSERT_EQ(stat(path.c_str(), &s), 0);
  EXPECT_NE(s.st_mode & 0044, 0u);  // not mkstemp's 0600
  EXPECT_EQ(ReadSafetensorsFile(dir + "/missing").status().code(),
            absl::StatusCode::kNotFound);
}

// A write that fails part way (the file size limit makes write(2) fail with
// EFBIG, even as root) leaves the old file as it was and no temporary file.
TEST(SafetensorsTest, FailedWriteLeavesExistingFileUntouched) {
  const std::string dir = TmpDir() + "/crash";
  mkdir(dir.c_str(), 0755);
  const std::string path = dir + "/ckpt.safetensors";
  ASSERT_TRUE(WriteSafetensorsFile(path, Sample()).ok());

  Safetensors big;
  big.tensors["w"] = HostTensor::F32({1 << 16}, std::vector<float>(1 << 16, 1));
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct sigaction ignore = {}, old_action;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &old_action), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status status = WriteSafetensorsFile(path, big);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ASSERT_EQ(sigaction(SIGXFSZ, &old_action, nullptr), 0);

  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_EQ(*ReadFile(path), GoldenBytes());
  EXPECT_EQ(ListDir(dir), std::vector<std::string>({"ckpt.safetensors"}));
}

TEST(SafetensorsTest, FailedRenameLeavesTargetUntouched) {
  // The target is a non-empty folder: rename(2) fails after the data is
  // written.
  const std::string dir = TmpDir() + "/rename";
  mkdir(dir.c_str(), 0755);
  const std::string target = dir + "/ckpt.safetensors";
  mkdir(target.c_str(), 0755);
  ASSERT_TRUE(WriteFileAtomically(target + "/keep", "kept").ok());
  EXPECT_FALSE(WriteSafetensorsFile(target, Sample()).ok());
  EXPECT_EQ(ListDir(dir), std::vector<std::string>({"ckpt.safetensors"}));
  EXPECT_EQ(*ReadFile(target + "/keep"), "kept");
}

TEST(SafetensorsTest, MissingFolder) {
  const absl::Status s = WriteSafetensorsFile(
      TmpDir() + "/no/such/folder/x.safetensors", Sample());
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
}

}  // namespace
}  // namespace io
}  // namespace kiln
