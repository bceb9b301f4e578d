// kiln-run's place in data-parallel training: the configuration a rank finds
// in its environment (torchrun's variables, or those of kiln-run --nproc)
// and --distributed.
#ifndef KILN_TOOLS_KILN_RUN_RANKS_H_
#define KILN_TOOLS_KILN_RUN_RANKS_H_

#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/distributed/communicator.h"
#include "runtime/distributed/config.h"
#include "tools/kiln-run/flags.h"

namespace kiln {

// This process's place in data-parallel training (one rank of one without).
struct Ranks {
  std::shared_ptr<distributed::Communicator> communicator;
  int rank = 0;
  int world_size = 1;
  // Rank 0 writes the checkpoints, the logs and the checks.
  bool leader() const { return rank == 0; }
};

// The data-parallel configuration from the environment and --distributed:
// nullopt for one process.
absl::StatusOr<std::optional<distributed::DistributedConfig>> RanksOf(
    const Flags& f);

// Points stdout at a stream that discards what it is given, for the ranks
// after the first: one progress report, rank 0's, and the others print only
// errors.
absl::Status SilenceStdout();

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_RANKS_H_
