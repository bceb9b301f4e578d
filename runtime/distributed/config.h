// Where this process stands in a data-parallel job, as launchers describe
// it in the environment (torchrun's variables, and kiln-run --nproc's).
#ifndef KILN_RUNTIME_DISTRIBUTED_CONFIG_H_
#define KILN_RUNTIME_DISTRIBUTED_CONFIG_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kiln {
namespace distributed {

struct DistributedConfig {
  int rank = 0;
  int world_size = 1;
  // The CUDA device this rank binds.
  int local_rank = 0;
  // How the ranks exchange NCCL's unique id: a file every rank can reach
  // (KILN_RENDEZVOUS_FILE), or rank 0's TCP listener at
  // MASTER_ADDR:MASTER_PORT. One of the two is set.
  std::string rendezvous_file;
  std::string master_addr;
  int master_port = 0;
  // The longest wait for the rendezvous and for any collective
  // (KILN_DISTRIBUTED_TIMEOUT_S, seconds; default 300).
  absl::Duration timeout = absl::Seconds(300);
};

// Reads the environment through `getenv` (std::getenv by default):
// RANK, WORLD_SIZE, LOCAL_RANK (default: RANK), KILN_RENDEZVOUS_FILE or
// MASTER_ADDR and MASTER_PORT, KILN_DISTRIBUTED_TIMEOUT_S. nullopt when
// neither RANK nor WORLD_SIZE is set (a single process); InvalidArgument
// naming the variable when one is missing, not a number or out of range.
absl::StatusOr<std::optional<DistributedConfig>> ConfigFromEnvironment(
    const std::function<const char*(const char*)>& getenv = nullptr);

}  // namespace distributed
}  // namespace kiln

#endif  // KILN_RUNTIME_DISTRIBUTED_CONFIG_H_
