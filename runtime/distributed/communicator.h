// One rank's NCCL communicator: created through the rendezvous, collectives
// enqueued on CUDA streams with absl::Status results, and a watchdog wait
// that turns a failed or stalled peer into an error instead of a hang.
#ifndef KILN_RUNTIME_DISTRIBUTED_COMMUNICATOR_H_
#define KILN_RUNTIME_DISTRIBUTED_COMMUNICATOR_H_

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "kiln/dtype.h"
#include "runtime/distributed/config.h"
#include "runtime/distributed/nccl.h"

namespace kiln {
namespace distributed {

enum class ReduceOp { kSum, kAvg, kMax, kMin };

class Communicator {
 public:
  // Opens NCCL, has rank 0 make the unique id and hand it to every rank
  // (rendezvous.h, within config.timeout), and joins the communicator on the
  // current CUDA context's device.
  static absl::StatusOr<std::unique_ptr<Communicator>> Create(
      const DistributedConfig& config);
  // ncclCommDestroy, or ncclCommAbort after a failure (which may have left
  // NCCL's kernels waiting for a peer that is gone).
  ~Communicator();

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  absl::Duration timeout() const { return timeout_; }

  // Enqueue on `stream` (all ranks must call them in the same order).
  // Counts are elements; `recv` of AllGather holds world_size() * `count`,
  // `send` of ReduceScatter world_size() * `count`. Every call after a
  // failure is FailedPrecondition naming it.
  absl::Status AllReduce(CUdeviceptr send, CUdeviceptr recv, size_t count,
                         DType dtype, ReduceOp op, CUstream stream);
  absl::Status ReduceScatter(CUdeviceptr send, CUdeviceptr recv, size_t count,
                             DType dtype, ReduceOp op, CUstream stream);
  absl::Status AllGather(CUdeviceptr send, CUdeviceptr recv, size_t count,
                         DType dtype, CUstream stream);
  absl::Status Broadcast(CUdeviceptr send, CUdeviceptr recv, size_t count,
                         DType dtype, int root, CUstream stream);
  // Collectives between GroupStart and GroupEnd are issued together.
  absl::Status GroupStart();
  absl::Status GroupEnd();

  // Waits until `done()` is true (e.g. an event recorded after the
  // collectives completed), checking NCCL's asynchronous error meanwhile.
  // An asynchronous error, an error of `done` or the timeout passing aborts
  // the communicator and returns an error naming this rank and `what`.
  absl::Status WaitUntil(const std::function<absl::StatusOr<bool>()>& done,
                         absl::string_view what);
  // The asynchronous error, as a Status (aborting as WaitUntil does).
  absl::Status CheckAsyncError();

 private:
  Communicator(const NcclLibrary* nccl, ncclComm_t comm,
               const DistributedConfig& config)
      : nccl_(nccl),
        comm_(comm),
        rank_(config.rank),
        world_size_(config.world_size),
        timeout_(config.timeout) {}
  // FailedPrecondition after a failure, else OK.
  absl::Status Usable(absl::string_view call) const;
  // NCCL's asynchronous error as a Status (without failing).
  absl::Status AsyncError() const;
  // Records `status` (annotated with the rank) as the failure and aborts.
  absl::Status Fail(absl::Status status);

  const NcclLibrary* nccl_;
  ncclComm_t comm_;
  int rank_;
  int world_size_;
  absl::Duration timeout_;
  absl::Status failure_;
};

// NCCL's element type for `dtype` (i1 travels as uint8).
ncclDataType_t NcclType(DType dtype);

}  // namespace distributed
}  // namespace kiln

#endif  // KILN_RUNTIME_DISTRIBUTED_COMMUNICATOR_H_
