#include "runtime/cuda/graph.h"

#include "kiln/status.h"

namespace kiln {

absl::StatusOr<std::unique_ptr<Graph>> Graph::Capture(
    const Stream& stream, const std::function<absl::Status()>& record) {
  const CudaDriver* driver = &stream.device().driver();
  KILN_RETURN_IF_ERROR(KILN_CU(driver, cuStreamBeginCapture, stream.handle(),
                               CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  absl::Status recorded = record();
  CUgraph graph = nullptr;
  // Always end the capture, so the stream is usable again whatever happened.
  absl::Status ended =
      KILN_CU(driver, cuStreamEndCapture, stream.handle(), &graph);
  if (!recorded.ok() || !ended.ok()) {
    if (graph != nullptr) (void)driver->api().cuGraphDestroy(graph);
    return !recorded.ok() ? Annotate(recorded, "while capturing a graph")
                          : ended;
  }
  CUgraphExec exec = nullptr;
  absl::Status instantiated =
      KILN_CU(driver, cuGraphInstantiate, &exec, graph, 0);
  if (!instantiated.ok()) {
    (void)driver->api().cuGraphDestroy(graph);
    return instantiated;
  }
  return std::unique_ptr<Graph>(new Graph(driver, graph, exec));
}

Graph::~Graph() {
  (void)driver_->api().cuGraphExecDestroy(exec_);
  (void)driver_->api().cuGraphDestroy(graph_);
}

absl::Status Graph::Launch(const Stream& stream) const {
  return KILN_CU(driver_, cuGraphLaunch, exec_, stream.handle());
}

}  // namespace kiln
