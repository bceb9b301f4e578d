#include "tools/kiln-run/rank_launcher.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace kiln {
namespace {

// The signal that asked the launcher to stop (0: none yet).
volatile sig_atomic_t stop_signal = 0;

void OnStopSignal(int signal) { stop_signal = signal; }

std::string Describe(int wstatus) {
  if (WIFEXITED(wstatus)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(wstatus));
  }
  if (WIFSIGNALED(wstatus)) {
    return absl::StrCat("was killed by signal ", WTERMSIG(wstatus), " (",
                        strsignal(WTERMSIG(wstatus)), ")");
  }
  return "ended";
}

bool Failed(int wstatus) {
  return !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0;
}

}  // namespace

int LaunchRanks(char** argv, const LaunchOptions& options) {
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = absl::StrCat(
      tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/kiln-run-XXXXXX");
  if (mkdtemp(folder.data()) == nullptr) {
    std::perror("kiln-run: creating the rendezvous folder");
    return 1;
  }
  const std::string rendezvous = folder + "/rendezvous";
  // Interrupted or terminated, the launcher stops its ranks first.
  struct sigaction stop = {};
  stop.sa_handler = OnStopSignal;
  sigemptyset(&stop.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP})
    sigaction(signal, &stop, nullptr);
  std::fflush(nullptr);
  const pid_t launcher = getpid();
  std::vector<pid_t> pids(options.nproc, -1);
  for (int r = 0; r < options.nproc; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("kiln-run: fork");
      for (int k = 0; k < r; ++k) kill(pids[k], SIGTERM);
      break;
    }
    if (pid == 0) {
      // A rank does not outlive its launcher (killed, it cannot stop them).
      // (exec resets the launcher's handlers to the default actions.)
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != launcher) _exit(1);
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(options.nproc).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(options.nproc).c_str(), 1);
      setenv("KILN_RENDEZVOUS_FILE", rendezvous.c_str(), 1);
      // NVLink SHARP stays off: NCCL would create multicast objects
      // (cuMulticastCreate) for it.
      setenv("NCCL_NVLS_ENABLE", "0", 0);
      unsetenv("MASTER_ADDR");
      unsetenv("MASTER_PORT");
      execv("/proc/self/exe", argv);
      std::perror("kiln-run: starting a rank");
      _exit(127);
    }
    pids[r] = pid;
  }

  std::vector<bool> running(options.nproc);
  int left = 0;
  for (int r = 0; r < options.nproc; ++r) {
    running[r] = pids[r] > 0;
    left += running[r] ? 1 : 0;
  }
  // Ranks that failed. Which one failed first is not known here (they may
  // end within one poll); the survivors' own errors name the rank they lost.
  int failed = 0;
  absl::Time terminate_at = absl::InfiniteFuture();
  bool terminated = false;
  while (left > 0) {
    int wstatus = 0;
    const pid_t pid = waitpid(-1, &wstatus, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < options.nproc; ++r) {
        if (pids[r] != pid || !running[r]) continue;
        running[r] = false;
        --left;
        if (!Failed(wstatus)) continue;
        ++failed;
        std::fprintf(stderr, "kiln-run: rank %d of %d (pid %d) %s\n", r,
                     options.nproc, static_cast<int>(pid),
                     Describe(wstatus).c_str());
        if (failed == 1 && left > 0 && stop_signal == 0) {
          std::fprintf(stderr, "kiln-run: the other ranks have %.0f s to end\n",
                       absl::ToDoubleSeconds(options.grace));
          terminate_at = absl::Now() + options.grace;
        }
      }
      continue;
    }
    if (stop_signal != 0 && terminate_at == absl::InfiniteFuture()) {
      std::fprintf(stderr, "kiln-run: %s: stopping the ranks\n",
                   strsignal(stop_signal));
      terminate_at = absl::Now();
    }
    if (absl::Now() > terminate_at) {
      // SIGTERM first; SIGKILL for ranks that are still there 5 s later.
      for (int r = 0; r < options.nproc; ++r) {
        if (running[r]) kill(pids[r], terminated ? SIGKILL : SIGTERM);
      }
      if (!terminated) {
        std::fprintf(stderr, "kiln-run: terminating the remaining ranks\n");
      }
      terminated = true;
      terminate_at = absl::Now() + absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  for (int r = 0; r < options.nproc; ++r) {
    unlink(absl::StrCat(rendezvous, ".rank", r).c_str());
  }
  unlink(rendezvous.c_str());
  rmdir(folder.c_str());
  if (stop_signal != 0) return 128 + stop_signal;
  if (failed > 0) {
    std::fprintf(stderr, "kiln-run: %d of %d ranks failed\n", failed,
                 options.nproc);
    return 1;
  }
  return 0;
}

}  // namespace kiln
