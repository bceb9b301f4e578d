// What the C API's opaque handles are. Each holds a reference to what it was
// made from, so handles may be closed in any order.
#ifndef KILN_RUNTIME_C_OBJECTS_H_
#define KILN_RUNTIME_C_OBJECTS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kiln/kiln.h"
#include "kiln/runtime.h"

namespace kiln {
namespace c_api {

// The Runtime and what uses it beyond a Session or Trainer (loading,
// creating sessions and trainers, copies on its stream), one thread at a
// time: the C++ API promises no more.
struct SharedRuntime {
  std::unique_ptr<Runtime> runtime;
  absl::Mutex mutex;
};

}  // namespace c_api
}  // namespace kiln

struct kiln_runtime {
  std::shared_ptr<kiln::c_api::SharedRuntime> shared;
};

struct kiln_module {
  std::shared_ptr<kiln::c_api::SharedRuntime> shared;
  std::unique_ptr<kiln::Module> module;
};

// A Session or Trainer is used by one thread at a time: `mutex` serializes
// the calls on one handle.
struct kiln_session {
  std::shared_ptr<kiln_module> module;
  absl::Mutex mutex;
  std::unique_ptr<kiln::Session> session ABSL_PT_GUARDED_BY(mutex);
};

struct kiln_trainer {
  std::shared_ptr<kiln_module> module;
  absl::Mutex mutex;
  std::unique_ptr<kiln::Trainer> trainer ABSL_PT_GUARDED_BY(mutex);
};

// A device tensor of its runtime (dense, from the runtime's pool).
struct kiln_tensor {
  std::shared_ptr<kiln::c_api::SharedRuntime> shared;
  kiln::Tensor tensor;
};

// Host copies of a call's outputs, in name order.
struct kiln_outputs {
  std::vector<std::string> names;
  std::vector<kiln::HostTensor> tensors;
};

#endif  // KILN_RUNTIME_C_OBJECTS_H_
