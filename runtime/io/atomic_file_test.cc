#include "runtime/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "kiln/dataset.h"

namespace kiln {
namespace io {
namespace {

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

TEST(AtomicFileTest, ReplacesARegularFile) {
  const std::string path = TempPath("replaced.bin");
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new contents").ok());
  absl::StatusOr<std::string> read = ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "new contents");
}

// A FIFO stands for /dev/null and terminals: written through, never renamed
// over (which would leave a regular file where the node was).
TEST(AtomicFileTest, WritesThroughAFifo) {
  const std::string path = TempPath("pipe");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // Held open for reading (O_RDWR does not block on Linux), so the writer's
  // open succeeds at once and what it writes waits in the pipe's buffer.
  const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  absl::Status written = WriteFileAtomically(path, "through the pipe");
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  ASSERT_TRUE(written.ok()) << written;
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "through the pipe");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(IsSpecialFile(path));
  EXPECT_FALSE(IsSpecialFile(TempPath("missing")));
  EXPECT_FALSE(IsSpecialFile(std::getenv("TEST_TMPDIR")));
}

TEST(AtomicFileTest, RefusesAFolder) {
  EXPECT_FALSE(WriteFileAtomically(std::getenv("TEST_TMPDIR"), "x").ok());
}

TEST(AtomicFileTest, DatasetWriterRefusesADeviceNode) {
  const std::string path = TempPath("dataset_pipe");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  DatasetField field;
  field.name = "x";
  field.shape = {2};
  auto writer = DatasetWriter::Create(path, {field});
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find("not a regular file"),
            std::string::npos)
      << writer.status();
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

}  // namespace
}  // namespace io
}  // namespace kiln
