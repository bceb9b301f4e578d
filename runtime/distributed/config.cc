#include "runtime/distributed/config.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace distributed {
namespace {

absl::StatusOr<int> ReadInt(
    const std::function<const char*(const char*)>& getenv, const char* name,
    int low, int high) {
  const char* value = getenv(name);
  if (value == nullptr || *value == '\0') {
    return absl::InvalidArgumentError(
        absl::StrCat(name,
                     " is not set (a distributed run needs RANK, "
                     "WORLD_SIZE and a rendezvous)"));
  }
  int parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed < low || parsed > high) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, "='", value, "' must be an integer in [", low, ", ", high, "]"));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<std::optional<DistributedConfig>> ConfigFromEnvironment(
    const std::function<const char*(const char*)>& getenv_in) {
  const std::function<const char*(const char*)> getenv =
      getenv_in ? getenv_in
                : [](const char* name) { return std::getenv(name); };
  auto set = [&](const char* name) {
    const char* v = getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (!set("RANK") && !set("WORLD_SIZE")) return std::nullopt;
  DistributedConfig config;
  constexpr int kMaxRanks = 1 << 16;
  auto world = ReadInt(getenv, "WORLD_SIZE", 1, kMaxRanks);
  if (!world.ok()) return world.status();
  config.world_size = *world;
  auto rank = ReadInt(getenv, "RANK", 0, config.world_size - 1);
  if (!rank.ok()) return rank.status();
  config.rank = *rank;
  config.local_rank = config.rank;
  if (set("LOCAL_RANK")) {
    auto local = ReadInt(getenv, "LOCAL_RANK", 0, kMaxRanks);
    if (!local.ok()) return local.status();
    config.local_rank = *local;
  }
  if (set("KILN_DISTRIBUTED_TIMEOUT_S")) {
    auto seconds = ReadInt(getenv, "KILN_DISTRIBUTED_TIMEOUT_S", 1, 86400);
    if (!seconds.ok()) return seconds.status();
    config.timeout = absl::Seconds(*seconds);
  }
  if (set("KILN_RENDEZVOUS_FILE")) {
    config.rendezvous_file = getenv("KILN_RENDEZVOUS_FILE");
    return config;
  }
  if (!set("MASTER_ADDR") || !set("MASTER_PORT")) {
    return absl::InvalidArgumentError(
        "RANK and WORLD_SIZE are set but no rendezvous: set "
        "KILN_RENDEZVOUS_FILE, or MASTER_ADDR and MASTER_PORT");
  }
  config.master_addr = getenv("MASTER_ADDR");
  auto port = ReadInt(getenv, "MASTER_PORT", 1, 65535);
  if (!port.ok()) return port.status();
  config.master_port = *port;
  return config;
}

}  // namespace distributed
}  // namespace kiln
