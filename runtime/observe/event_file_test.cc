#include "runtime/observe/event_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/observe/crc32c.h"

namespace kiln::observe {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(RecordTest, FramingIsTfRecords) {
  const std::string record = FrameRecord("abc");
  ASSERT_EQ(record.size(), 3u + 16u);
  // uint64 length, little-endian.
  EXPECT_EQ(record.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) {
      v = (v << 8) | static_cast<unsigned char>(record[at + i]);
    }
    return v;
  };
  EXPECT_EQ(u32(8), MaskCrc(Crc32c(record.substr(0, 8))));
  EXPECT_EQ(record.substr(12, 3), "abc");
  EXPECT_EQ(u32(15), MaskCrc(Crc32c("abc")));
  auto records = SplitRecords(record + FrameRecord("") + FrameRecord("xyz"));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(*records, (std::vector<std::string>{"abc", "", "xyz"}));
}

TEST(RecordTest, EveryFlippedByteIsDetected) {
  const std::string bytes = FrameRecord("hello") + FrameRecord("world!");
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string damaged = bytes;
    damaged[i] ^= 0x10;
    EXPECT_FALSE(SplitRecords(damaged).ok()) << "byte " << i;
  }
  auto truncated = SplitRecords(bytes.substr(0, bytes.size() - 1));
  EXPECT_THAT(truncated.status().message(), HasSubstr("record 1 at offset 21"));
}

TEST(EventFileTest, NameIsTensorBoards) {
  EXPECT_EQ(EventFileName(1700000000, "gpu1"),
            "events.out.tfevents.1700000000.gpu1");
}

TEST(EventFileTest, WritesAndReadsBackScalars) {
  const std::string dir = TempDir() + "/events/run1";
  std::string path;
  {
    auto writer = EventFileWriter::Open(dir);
    ASSERT_TRUE(writer.ok()) << writer.status();
    path = (*writer)->path();
    EXPECT_THAT(path, StartsWith(dir + "/events.out.tfevents."));
    ASSERT_TRUE((*writer)
                    ->AddScalars(1, {{"loss", 2.5}, {"learning_rate", 1e-3}},
                                 1700000000.25)
                    .ok());
    ASSERT_TRUE((*writer)->AddScalar(20, "loss", 0.125).ok());
    ASSERT_TRUE((*writer)->Close().ok());
    EXPECT_FALSE((*writer)->AddScalar(21, "loss", 0).ok());
  }
  auto contents = ReadEventFile(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->file_version, "brain.Event:2");
  EXPECT_EQ(contents->events, 3);
  ASSERT_EQ(contents->scalars.size(), 3u);
  EXPECT_EQ(contents->scalars[0].step, 1);
  EXPECT_EQ(contents->scalars[0].tag, "loss");
  EXPECT_EQ(contents->scalars[0].value, 2.5f);
  EXPECT_EQ(contents->scalars[0].wall_time, 1700000000.25);
  EXPECT_EQ(contents->scalars[1].tag, "learning_rate");
  EXPECT_EQ(contents->scalars[1].value, 1e-3f);
  EXPECT_EQ(contents->scalars[2].step, 20);
  EXPECT_EQ(contents->scalars[2].value, 0.125f);
  EXPECT_GT(contents->scalars[2].wall_time, 1.6e9);
}

// The wire format, byte for byte: the encoding of TensorFlow's field numbers
// (Event.wall_time = 1, step = 2, summary = 5; Summary.value = 1;
// Value.tag = 1, simple_value = 2).
TEST(EventFileTest, EventEncodingUsesTensorFlowsFieldNumbers) {
  const std::string dir = TempDir() + "/events/wire";
  auto writer = EventFileWriter::Open(dir);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->AddScalars(3, {{"a", 1.0}}, 0.5).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  auto records = SplitRecords(Slurp((*writer)->path()));
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  // The first: wall_time (tag 0x09, 8 bytes), then file_version (0x1a).
  EXPECT_EQ((*records)[0][0], '\x09');
  EXPECT_EQ((*records)[0].substr(9), std::string("\x1a\x0d") + "brain.Event:2");
  const std::string expected =
      std::string("\x09\0\0\0\0\0\0\xe0\x3f", 9) +  // wall_time 0.5
      "\x10\x03" +                                  // step 3
      "\x2a\x0a" + "\x0a\x08" +                     // summary { value {
      "\x0a\x01" + "a" +                            //   tag "a"
      std::string("\x15\0\0\x80\x3f", 5);           //   simple_value 1.0 } }
  EXPECT_EQ((*records)[1], expected);
}

TEST(EventFileTest, FlippedByteInAFileIsDetected) {
  const std::string dir = TempDir() + "/events/flip";
  auto writer = EventFileWriter::Open(dir);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->AddScalar(1, "loss", 1.5).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  const std::string path = (*writer)->path();
  const std::string bytes = Slurp(path);
  ASSERT_TRUE(ReadEventFile(path).ok());
  std::string damaged = bytes;
  damaged[damaged.size() - 6] ^= 0x01;  // inside the last event's value
  Spit(path, damaged);
  auto contents = ReadEventFile(path);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(contents.status().message(), HasSubstr("data CRC mismatch"));
}

TEST(EventFileTest, OpenRefusesAFileAsDirectory) {
  const std::string file = TempDir() + "/not_a_dir";
  Spit(file, "x");
  EXPECT_FALSE(EventFileWriter::Open(file).ok());
  EXPECT_FALSE(EventFileWriter::Open("").ok());
}

}  // namespace
}  // namespace kiln::observe
