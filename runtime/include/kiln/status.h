// Status helpers shared by the kiln runtime.
//
// The runtime reports every failure as an absl::Status; these macros keep the
// propagation short:
//
//   KILN_RETURN_IF_ERROR(stream.Synchronize());
//   KILN_ASSIGN_OR_RETURN(auto module, Module::Load(device, images));
//   KILN_ASSIGN_OR_RETURN(buffer, pool->Allocate(bytes, stream));
#ifndef KILN_STATUS_H_
#define KILN_STATUS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace status_internal {

inline const absl::Status& AsStatus(const absl::Status& status) {
  return status;
}
template <typename T>
const absl::Status& AsStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace status_internal

// Returns `status` with `context` prepended to its message ("context:
// message"), keeping the code. An OK status is returned unchanged.
inline absl::Status Annotate(const absl::Status& status,
                             absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

}  // namespace kiln

#define KILN_STATUS_CONCAT_INNER_(a, b) a##b
#define KILN_STATUS_CONCAT_(a, b) KILN_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status or absl::StatusOr<T>) and returns its
// status from the enclosing function if it is not OK.
#define KILN_RETURN_IF_ERROR(expr)                               \
  do {                                                           \
    const auto& kiln_status_ = (expr);                           \
    if (!::kiln::status_internal::AsStatus(kiln_status_).ok()) { \
      return ::kiln::status_internal::AsStatus(kiln_status_);    \
    }                                                            \
  } while (false)

#define KILN_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                \
  if (!statusor.ok()) return statusor.status();           \
  lhs = std::move(statusor).value()

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status from
// the enclosing function, otherwise assigns (or declares, with `auto x`) `lhs`.
// Expands to several statements: do not use it as the body of an unbraced if.
#define KILN_ASSIGN_OR_RETURN(lhs, rexpr)                                    \
  KILN_ASSIGN_OR_RETURN_IMPL_(KILN_STATUS_CONCAT_(kiln_statusor_, __LINE__), \
                              lhs, rexpr)

#endif  // KILN_STATUS_H_
