#include "tools/kiln-run/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace kiln {

std::string Duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) return absl::StrCat(std::round(seconds * 10) / 10, "s");
  const int64_t s = static_cast<int64_t>(seconds);
  if (s < 3600) return absl::StrCat(s / 60, "m", s % 60, "s");
  return absl::StrCat(s / 3600, "h", (s % 3600) / 60, "m");
}

double MiB(size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

size_t HostResidentBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long pages = 0, resident = 0;
  const int read = std::fscanf(statm, "%lu %lu", &pages, &resident);
  std::fclose(statm);
  if (read != 2) return 0;
  return static_cast<size_t>(resident) *
         static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t HostPeakResidentBytes() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  unsigned long kib = 0;
  while (std::fgets(line, sizeof(line), status) != nullptr) {
    if (std::sscanf(line, "VmHWM: %lu kB", &kib) == 1) break;
  }
  std::fclose(status);
  return static_cast<size_t>(kib) << 10;
}

}  // namespace kiln
