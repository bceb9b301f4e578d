// kiln-run --nproc N: starts N ranks of the same command line as processes
// of this binary and watches them, as torchrun does for PyTorch.
#ifndef KILN_TOOLS_KILN_RUN_RANK_LAUNCHER_H_
#define KILN_TOOLS_KILN_RUN_RANK_LAUNCHER_H_

#include "absl/time/time.h"

namespace kiln {

struct LaunchOptions {
  int nproc = 1;
  // After the first rank fails, how long the others have to end by
  // themselves (each reports its own view of the failure) before they are
  // terminated.
  absl::Duration grace = absl::Seconds(10);
};

// Runs /proc/self/exe with `argv` in `options.nproc` processes, rank r with
// RANK=r, LOCAL_RANK=r, WORLD_SIZE, LOCAL_WORLD_SIZE, KILN_RENDEZVOUS_FILE
// (a file in a fresh folder under $TMPDIR, removed at the end) and
// NCCL_NVLS_ENABLE=0 unless set. Returns the exit status for the launcher:
// 0 when every rank exits 0; otherwise 1, after a line on stderr for each
// rank that failed (how it ended) and after the others ended. SIGINT,
// SIGTERM or SIGHUP stop the ranks (SIGTERM, then SIGKILL 5 s later) and
// return 128 + the signal; a rank gets SIGTERM when the launcher dies.
int LaunchRanks(char** argv, const LaunchOptions& options);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_RANK_LAUNCHER_H_
