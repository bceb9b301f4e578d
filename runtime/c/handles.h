// The C API's handles and errors: every handle given out is registered, so
// that a null, closed or foreign pointer is an error instead of a crash, and
// every call runs through Call, which turns statuses and exceptions into a
// kiln_status and this thread's last error.
#ifndef KILN_RUNTIME_C_HANDLES_H_
#define KILN_RUNTIME_C_HANDLES_H_

#include <functional>
#include <memory>
#include <typeindex>
#include <typeinfo>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/kiln.h"

namespace kiln {
namespace c_api {

// Registers `object`; returns its address, the handle the caller sees.
void* RegisterHandle(std::shared_ptr<void> object, std::type_index type);
// The object behind `handle` if it is a live handle of `type`; the returned
// reference keeps it alive through the call even if another thread closes
// it meanwhile.
absl::StatusOr<std::shared_ptr<void>> LookupHandle(const void* handle,
                                                   std::type_index type,
                                                   const char* what);
// Forgets `handle` (no-op for null or unknown pointers).
void CloseHandle(const void* handle);

template <typename T>
T* Register(std::shared_ptr<T> object) {
  return static_cast<T*>(RegisterHandle(object, typeid(T)));
}

template <typename T>
absl::StatusOr<std::shared_ptr<T>> Lookup(const T* handle, const char* what) {
  auto object = LookupHandle(handle, typeid(T), what);
  if (!object.ok()) return object.status();
  return std::static_pointer_cast<T>(*std::move(object));
}

// Runs `body`, records its error (or clears the last error) and returns its
// code; exceptions become KILN_INTERNAL.
kiln_status Call(const std::function<absl::Status()>& body);

// The message of this thread's last failed call.
const char* LastError();

}  // namespace c_api
}  // namespace kiln

#endif  // KILN_RUNTIME_C_HANDLES_H_
