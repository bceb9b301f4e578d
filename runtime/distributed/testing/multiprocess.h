// Runs one function as several processes (the ranks of a test job).
#ifndef KILN_RUNTIME_DISTRIBUTED_TESTING_MULTIPROCESS_H_
#define KILN_RUNTIME_DISTRIBUTED_TESTING_MULTIPROCESS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace kiln {
namespace distributed {
namespace testing {

struct RankResult {
  // The exit status; -SIGNAL when killed by a signal; -1000 when the rank
  // was killed for passing the time limit.
  int status = 0;
  // What it wrote through `report` (testing messages, errors).
  std::string report;
};

// Forks `world_size` processes; process r runs `body(r, report)`, whose
// return value is its exit status (a process that throws or crashes shows
// as a signal). Processes still running after `limit` are killed.
std::vector<RankResult> RunRanks(
    int world_size, absl::Duration limit,
    const std::function<int(int rank, std::string* report)>& body);

}  // namespace testing
}  // namespace distributed
}  // namespace kiln

#endif  // KILN_RUNTIME_DISTRIBUTED_TESTING_MULTIPROCESS_H_
