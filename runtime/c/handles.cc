#include "runtime/c/handles.h"

#include <exception>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace kiln {
namespace c_api {
namespace {

struct Entry {
  std::shared_ptr<void> object;
  std::type_index type;
};

struct Registry {
  absl::Mutex mutex;
  absl::flat_hash_map<const void*, Entry> handles ABSL_GUARDED_BY(mutex);
};

// Never destroyed: handles may be closed from static destructors.
Registry& Handles() {
  static Registry* registry = new Registry;
  return *registry;
}

thread_local std::string last_error;

}  // namespace

void* RegisterHandle(std::shared_ptr<void> object, std::type_index type) {
  void* handle = object.get();
  Registry& registry = Handles();
  absl::MutexLock lock(&registry.mutex);
  registry.handles.insert_or_assign(handle, Entry{std::move(object), type});
  return handle;
}

absl::StatusOr<std::shared_ptr<void>> LookupHandle(const void* handle,
                                                   std::type_index type,
                                                   const char* what) {
  if (handle == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is null"));
  }
  Registry& registry = Handles();
  absl::MutexLock lock(&registry.mutex);
  auto it = registry.handles.find(handle);
  if (it == registry.handles.end() || it->second.type != type) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not an open handle of its kind (closed, or "
                           "not made by this library)"));
  }
  return it->second.object;
}

void CloseHandle(const void* handle) {
  if (handle == nullptr) return;
  std::shared_ptr<void> object;  // destroyed after the lock is released
  Registry& registry = Handles();
  absl::MutexLock lock(&registry.mutex);
  auto it = registry.handles.find(handle);
  if (it == registry.handles.end()) return;
  object = std::move(it->second.object);
  registry.handles.erase(it);
}

kiln_status Call(const std::function<absl::Status()>& body) {
  absl::Status status;
  try {
    status = body();
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("unexpected exception: ",
                                              e.what()));
  } catch (...) {
    status = absl::InternalError("unexpected exception");
  }
  last_error = status.ok() ? "" : std::string(status.message());
  return static_cast<kiln_status>(status.code());
}

const char* LastError() { return last_error.c_str(); }

}  // namespace c_api
}  // namespace kiln
