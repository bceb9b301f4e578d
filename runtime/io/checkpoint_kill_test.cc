// A process killed with SIGKILL at a random point of a checkpoint write
// leaves the previous checkpoint whole. A child process writes checkpoints
// of steps 1, 2, ... in a loop (each a few MiB whose bytes follow from the
// step) and reports each finished step through a pipe; the parent kills it
// after a random delay. The file must then parse with every checksum intact
// and hold exactly the bytes of the step its metadata names: the last step
// reported or the one after it (renamed before the child could report it).
// A later write over it must succeed. Repeated at delays spread over the
// whole write (serialising, writing, fsync, rename), with a fresh seed per
// run that the log names.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/io/safetensors.h"

namespace kiln {
namespace io {
namespace {

// The checkpoint of `step`: 2 MiB of f32 weights, an i32 tensor and the step
// in the metadata, every byte a function of the step.
Safetensors CheckpointOf(int step) {
  Safetensors st;
  std::vector<float> w(1 << 19);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(step) + static_cast<float>(i % 977) * 1e-3f;
  st.tensors["w"] = HostTensor::F32({512, 1024}, w);
  st.tensors["step"] = HostTensor::I32({1}, {step});
  st.metadata["step"] = std::to_string(step);
  return st;
}

// Writes checkpoints of steps 1, 2, ... to `path` until killed, writing each
// finished step to `report`.
[[noreturn]] void WriteForever(const std::string& path, int report) {
  for (int step = 1;; ++step) {
    if (!WriteSafetensorsFile(path, CheckpointOf(step)).ok()) _exit(3);
    if (write(report, &step, sizeof step) != sizeof step) _exit(4);
  }
}

// The last step the child reported (0 if none).
int LastReported(int report) {
  int last = 0, step;
  while (read(report, &step, sizeof step) == sizeof step) last = step;
  return last;
}

TEST(CheckpointKillTest, KilledWriterLeavesTheLastCheckpointWhole) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/kill";
  mkdir(dir.c_str(), 0755);
  const std::string path = dir + "/ckpt.safetensors";
  const unsigned seed = std::random_device{}();
  std::mt19937 random(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Delays up to four writes long (the slowest of three writes on this
  // machine): most kills land inside a write after the first.
  int64_t write_us = 0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(
        WriteSafetensorsFile(dir + "/timing.safetensors", CheckpointOf(1))
            .ok());
    write_us = std::max<int64_t>(
        write_us, std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count());
  }
  std::uniform_int_distribution<int64_t> delay_us(0, 4 * write_us + 1000);
  int kills_after_a_write = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    unlink(path.c_str());
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      WriteForever(path, fds[1]);
    }
    close(fds[1]);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(random)));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer failed: " << status;
    const int reported = LastReported(fds[0]);
    close(fds[0]);

    absl::StatusOr<Safetensors> read = ReadSafetensorsFile(path);
    if (reported == 0 && !read.ok()) {
      // Killed before its first rename: no checkpoint at all, not a part.
      EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound)
          << read.status();
      continue;
    }
    ASSERT_TRUE(read.ok()) << read.status();
    const int step = std::stoi(read->metadata.at("step"));
    EXPECT_TRUE(step == reported || step == reported + 1)
        << "step " << step << " after " << reported << " reported";
    EXPECT_TRUE(*read == CheckpointOf(step)) << "step " << step;
    kills_after_a_write += reported > 0;

    // Training resumes from it: the next checkpoint replaces it whole.
    ASSERT_TRUE(WriteSafetensorsFile(path, CheckpointOf(step + 1)).ok());
    absl::StatusOr<Safetensors> next = ReadSafetensorsFile(path);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_TRUE(*next == CheckpointOf(step + 1));
  }
  // Many kills land after a first checkpoint, inside a later write (about
  // three in four where writes take as long as the slowest measured).
  EXPECT_GE(kills_after_a_write, 5);
}

}  // namespace
}  // namespace io
}  // namespace kiln
