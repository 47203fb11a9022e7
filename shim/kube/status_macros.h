#pragma once

// Status propagation inside the Kubernetes client. shim/ must not include
// server/ headers, so these mirror server/common/status_macros.h under their
// own names (no clash when a binary includes both).

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function when `expr` is not OK.
#define KQ_KUBE_RETURN_IF_ERROR(expr)        \
  do {                                       \
    ::absl::Status kq_kube_status_ = (expr); \
    if (!kq_kube_status_.ok()) {             \
      return kq_kube_status_;                \
    }                                        \
  } while (false)

#define KQ_KUBE_CONCAT_INNER_(a, b) a##b
#define KQ_KUBE_CONCAT_(a, b) KQ_KUBE_CONCAT_INNER_(a, b)

// Assigns the value of a StatusOr expression to `lhs`, or returns its error.
#define KQ_KUBE_ASSIGN_OR_RETURN(lhs, expr)                                    \
  KQ_KUBE_ASSIGN_OR_RETURN_IMPL_(KQ_KUBE_CONCAT_(kq_kube_statusor_, __LINE__), \
                                 lhs, expr)

#define KQ_KUBE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) {                                     \
    return statusor.status();                               \
  }                                                         \
  lhs = std::move(statusor).value()
