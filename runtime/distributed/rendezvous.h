// The ranks' meeting point: rank 0 hands every rank a few bytes (NCCL's
// unique id) once all ranks have arrived, or every rank gets a clear error
// within the timeout.
//
// Two transports, as launchers set them up (config.h):
// - a file every rank can reach (KILN_RENDEZVOUS_FILE): rank 0 writes the
//   bytes to it (aside, then renamed: whole once seen), every rank then
//   checks in with FILE.rank<r> holding a digest of what it read, and waits
//   for all check-ins; the file must not exist when the job starts.
// - TCP (MASTER_ADDR, MASTER_PORT): rank 0 listens, every other rank
//   connects (retrying until rank 0 is up) and sends its rank; once all are
//   in, rank 0 sends the bytes to each.
#ifndef KILN_RUNTIME_DISTRIBUTED_RENDEZVOUS_H_
#define KILN_RUNTIME_DISTRIBUTED_RENDEZVOUS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/distributed/config.h"

namespace kiln {
namespace distributed {

// Rank 0 passes `payload`, the others anything (ignored); every rank gets
// rank 0's payload. DeadlineExceeded naming the ranks that did not arrive
// (or, on ranks other than 0, rank 0) within config.timeout.
absl::StatusOr<std::string> Rendezvous(const DistributedConfig& config,
                                       absl::string_view payload);

}  // namespace distributed
}  // namespace kiln

#endif  // KILN_RUNTIME_DISTRIBUTED_RENDEZVOUS_H_
