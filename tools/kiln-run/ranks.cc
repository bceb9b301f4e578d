#include "tools/kiln-run/ranks.h"

#include <stdio.h>
#include <sys/types.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "kiln/status.h"

namespace kiln {

absl::StatusOr<std::optional<distributed::DistributedConfig>> RanksOf(
    const Flags& f) {
  if (f.distributed == "off") return std::nullopt;
  KILN_ASSIGN_OR_RETURN(std::optional<distributed::DistributedConfig> config,
                        distributed::ConfigFromEnvironment());
  if (!config && f.distributed == "nccl") {
    config = distributed::DistributedConfig();  // rank 0 of 1
  }
  if (config && config->world_size == 1 && f.distributed != "nccl") {
    return std::nullopt;
  }
  if (config && f.nproc > 1 && f.nproc != config->world_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--nproc ", f.nproc, " but WORLD_SIZE is ", config->world_size));
  }
  if (config && !f.steps) {
    return absl::InvalidArgumentError(
        "data-parallel ranks train: give --steps (inference and evaluation "
        "run as one process, --distributed=off)");
  }
  return config;
}

// A stream of its own rather than /dev/null, which may be unavailable (as in
// sandboxes).
absl::Status SilenceStdout() {
  cookie_io_functions_t discard = {};
  discard.write = [](void*, const char*, size_t size) -> ssize_t {
    return static_cast<ssize_t>(size);
  };
  FILE* quiet = fopencookie(nullptr, "w", discard);
  if (quiet == nullptr) return absl::InternalError("cannot silence stdout");
  std::fflush(stdout);
  stdout = quiet;
  return absl::OkStatus();
}

}  // namespace kiln
