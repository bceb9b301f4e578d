// CUDA graphs: a stream's work captured once, replayed many times.
#ifndef KILN_RUNTIME_CUDA_GRAPH_H_
#define KILN_RUNTIME_CUDA_GRAPH_H_

#include <cuda.h>

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/stream.h"

namespace kiln {

class Graph {
 public:
  // Captures everything `record` enqueues on `stream` (kernel launches,
  // copies, memsets) and instantiates it. Nothing runs during capture. The
  // capture is thread-local: `record` must not allocate device memory or
  // synchronise (allocate buffers first). If `record` fails, the capture is
  // ended and its error returned.
  static absl::StatusOr<std::unique_ptr<Graph>> Capture(
      const Stream& stream, const std::function<absl::Status()>& record);

  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  // Enqueues one replay of the captured work on `stream`.
  absl::Status Launch(const Stream& stream) const;

 private:
  Graph(const CudaDriver* driver, CUgraph graph, CUgraphExec exec)
      : driver_(driver), graph_(graph), exec_(exec) {}
  const CudaDriver* driver_;
  CUgraph graph_;
  CUgraphExec exec_;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_CUDA_GRAPH_H_
