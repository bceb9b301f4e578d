#include "runtime/distributed/testing/multiprocess.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "absl/time/clock.h"

namespace kiln {
namespace distributed {
namespace testing {

std::vector<RankResult> RunRanks(
    int world_size, absl::Duration limit,
    const std::function<int(int rank, std::string* report)>& body) {
  std::vector<RankResult> results(world_size);
  std::vector<pid_t> pids(world_size, -1);
  std::vector<int> pipes(world_size, -1);
  std::fflush(nullptr);
  for (int r = 0; r < world_size; ++r) {
    int fds[2];
    if (pipe(fds) != 0) {
      results[r].status = -2000;
      continue;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      std::string report;
      const int status = body(r, &report);
      const char* p = report.data();
      size_t left = report.size();
      while (left > 0) {
        const ssize_t n = write(fds[1], p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<size_t>(n);
      }
      close(fds[1]);
      std::fflush(nullptr);
      _exit(status);
    }
    close(fds[1]);
    pids[r] = pid;
    pipes[r] = fds[0];
  }
  // Every rank is reaped as soon as it ends (a dead rank must not linger
  // as a zombie that its peers still see as alive).
  const absl::Time deadline = absl::Now() + limit;
  std::vector<bool> running(world_size);
  int left = 0;
  for (int r = 0; r < world_size; ++r) {
    running[r] = pids[r] >= 0;
    left += running[r] ? 1 : 0;
  }
  while (left > 0) {
    for (int r = 0; r < world_size; ++r) {
      if (!running[r]) continue;
      int wstatus = 0;
      if (waitpid(pids[r], &wstatus, WNOHANG) == pids[r]) {
        results[r].status =
            WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -WTERMSIG(wstatus);
      } else if (absl::Now() > deadline) {
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &wstatus, 0);
        results[r].status = -1000;
      } else {
        continue;
      }
      running[r] = false;
      --left;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  for (int r = 0; r < world_size; ++r) {
    if (pipes[r] < 0) continue;
    char buffer[4096];
    ssize_t n;
    while ((n = read(pipes[r], buffer, sizeof(buffer))) > 0) {
      results[r].report.append(buffer, static_cast<size_t>(n));
    }
    close(pipes[r]);
  }
  return results;
}

}  // namespace testing
}  // namespace distributed
}  // namespace kiln
