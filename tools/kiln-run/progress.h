// The figures of kiln-run's training progress lines besides the loss:
// durations, sizes and the host memory of the process.
#ifndef KILN_TOOLS_KILN_RUN_PROGRESS_H_
#define KILN_TOOLS_KILN_RUN_PROGRESS_H_

#include <cstddef>
#include <string>

namespace kiln {

// "12.5s", "3m20s", "2h5m"; "?" for a negative or non-finite time.
std::string Duration(double seconds);

double MiB(size_t bytes);

// The resident set of this process, from /proc (0 where there is none): a
// long run's progress lines show that host memory stays flat.
size_t HostResidentBytes();

// The process's peak resident set (VmHWM), 0 where /proc has none.
size_t HostPeakResidentBytes();

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_PROGRESS_H_
