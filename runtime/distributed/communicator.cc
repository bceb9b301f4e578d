#include "runtime/distributed/communicator.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kiln/status.h"
#include "runtime/distributed/rendezvous.h"

namespace kiln {
namespace distributed {
namespace {

ncclRedOp_t NcclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAvg:
      return ncclAvg;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
  }
  return ncclSum;
}

const void* Ptr(CUdeviceptr p) { return reinterpret_cast<const void*>(p); }
void* MutablePtr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

}  // namespace

ncclDataType_t NcclType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return ncclFloat32;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF16:
      return ncclFloat16;
    case DType::kI32:
      return ncclInt32;
    case DType::kI1:
      return ncclUint8;
    case DType::kI64:
      return ncclInt64;
  }
  return ncclFloat32;
}

absl::StatusOr<std::unique_ptr<Communicator>> Communicator::Create(
    const DistributedConfig& config) {
  const std::string who = absl::StrCat("rank ", config.rank);
  auto nccl = NcclLibrary::Get();
  if (!nccl.ok()) return Annotate(nccl.status(), who);
  const NcclLibrary* library = *nccl;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (config.rank == 0) {
    KILN_RETURN_IF_ERROR(
        Annotate(KILN_NCCL(library, ncclGetUniqueId, &id), who));
  }
  KILN_ASSIGN_OR_RETURN(
      std::string shared,
      Rendezvous(config, absl::string_view(id.internal, sizeof(id.internal))));
  if (shared.size() != sizeof(id.internal)) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, ": the rendezvous passed ", shared.size(),
        " bytes, not an NCCL unique id (", sizeof(id.internal), ")"));
  }
  std::memcpy(id.internal, shared.data(), sizeof(id.internal));
  ncclComm_t comm = nullptr;
  KILN_RETURN_IF_ERROR(Annotate(KILN_NCCL(library, ncclCommInitRank, &comm,
                                          config.world_size, id, config.rank),
                                absl::StrCat(who, " of ", config.world_size,
                                             ": joining the NCCL "
                                             "communicator")));
  return std::unique_ptr<Communicator>(new Communicator(library, comm, config));
}

Communicator::~Communicator() {
  if (comm_ == nullptr) return;
  if (failure_.ok()) {
    (void)nccl_->api().ncclCommDestroy(comm_);
  } else {
    (void)nccl_->api().ncclCommAbort(comm_);
  }
}

absl::Status Communicator::Usable(absl::string_view call) const {
  if (failure_.ok()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      call, " on a communicator that failed: ", failure_.message()));
}

absl::Status Communicator::Fail(absl::Status status) {
  status = Annotate(status, absl::StrCat("rank ", rank_));
  if (failure_.ok()) {
    failure_ = status;
    // Aborting stops NCCL's kernels that wait for the peer, so the streams
    // (and this process) can finish.
    (void)nccl_->api().ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  return status;
}

absl::Status Communicator::AllReduce(CUdeviceptr send, CUdeviceptr recv,
                                     size_t count, DType dtype, ReduceOp op,
                                     CUstream stream) {
  KILN_RETURN_IF_ERROR(Usable("ncclAllReduce"));
  absl::Status s = nccl_->Check(
      nccl_->api().ncclAllReduce(Ptr(send), MutablePtr(recv), count,
                                 NcclType(dtype), NcclOp(op), comm_, stream),
      "ncclAllReduce", comm_);
  return s.ok() ? s : Fail(s);
}

absl::Status Communicator::ReduceScatter(CUdeviceptr send, CUdeviceptr recv,
                                         size_t count, DType dtype, ReduceOp op,
                                         CUstream stream) {
  KILN_RETURN_IF_ERROR(Usable("ncclReduceScatter"));
  absl::Status s = nccl_->Check(nccl_->api().ncclReduceScatter(
                                    Ptr(send), MutablePtr(recv), count,
                                    NcclType(dtype), NcclOp(op), comm_, stream),
                                "ncclReduceScatter", comm_);
  return s.ok() ? s : Fail(s);
}

absl::Status Communicator::AllGather(CUdeviceptr send, CUdeviceptr recv,
                                     size_t count, DType dtype,
                                     CUstream stream) {
  KILN_RETURN_IF_ERROR(Usable("ncclAllGather"));
  absl::Status s = nccl_->Check(
      nccl_->api().ncclAllGather(Ptr(send), MutablePtr(recv), count,
                                 NcclType(dtype), comm_, stream),
      "ncclAllGather", comm_);
  return s.ok() ? s : Fail(s);
}

absl::Status Communicator::Broadcast(CUdeviceptr send, CUdeviceptr recv,
                                     size_t count, DType dtype, int root,
                                     CUstream stream) {
  KILN_RETURN_IF_ERROR(Usable("ncclBroadcast"));
  absl::Status s = nccl_->Check(
      nccl_->api().ncclBroadcast(Ptr(send), MutablePtr(recv), count,
                                 NcclType(dtype), root, comm_, stream),
      "ncclBroadcast", comm_);
  return s.ok() ? s : Fail(s);
}

absl::Status Communicator::GroupStart() {
  KILN_RETURN_IF_ERROR(Usable("ncclGroupStart"));
  absl::Status s = KILN_NCCL(nccl_, ncclGroupStart);
  return s.ok() ? s : Fail(s);
}

absl::Status Communicator::GroupEnd() {
  KILN_RETURN_IF_ERROR(Usable("ncclGroupEnd"));
  absl::Status s = KILN_NCCL(nccl_, ncclGroupEnd);
  return s.ok() ? s : Fail(s);
}

absl::Status Communicator::AsyncError() const {
  ncclResult_t async = ncclSuccess;
  KILN_RETURN_IF_ERROR(
      nccl_->Check(nccl_->api().ncclCommGetAsyncError(comm_, &async),
                   "ncclCommGetAsyncError", comm_));
  if (async == ncclSuccess || async == ncclInProgress) return absl::OkStatus();
  return nccl_->Check(async, "the collectives", comm_);
}

absl::Status Communicator::CheckAsyncError() {
  KILN_RETURN_IF_ERROR(Usable("ncclCommGetAsyncError"));
  absl::Status s = AsyncError();
  return s.ok() ? s : Fail(s);
}

absl::Status Communicator::WaitUntil(
    const std::function<absl::StatusOr<bool>()>& done, absl::string_view what) {
  KILN_RETURN_IF_ERROR(Usable(what));
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + timeout_;
  absl::Duration pause = absl::Microseconds(20);
  while (true) {
    if (absl::Status s = AsyncError(); !s.ok()) return Fail(Annotate(s, what));
    absl::StatusOr<bool> finished = done();
    if (!finished.ok()) return Fail(Annotate(finished.status(), what));
    if (*finished) return absl::OkStatus();
    if (absl::Now() > deadline) {
      return Fail(absl::DeadlineExceededError(absl::StrCat(
          what, " did not complete within ", absl::ToDoubleSeconds(timeout_),
          " s: another rank failed or stalls (the NCCL communicator is "
          "aborted)")));
    }
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Milliseconds(2));
  }
}

}  // namespace distributed
}  // namespace kiln
