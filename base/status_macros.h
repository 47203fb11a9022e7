#pragma once

// Status propagation for all of kq: server, client-lib, cli and shim include
// this one header (base/ is below them all).

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function when `expr` is not OK. Shaped like
// abseil's later ABSL_RETURN_IF_ERROR so an upgrade is a rename.
#define KQ_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status kq_status_ = (expr);      \
    if (!kq_status_.ok()) return kq_status_; \
  } while (false)

#define KQ_STATUS_CONCAT_INNER_(a, b) a##b
#define KQ_STATUS_CONCAT_(a, b) KQ_STATUS_CONCAT_INNER_(a, b)

// Assigns the value of a StatusOr expression to `lhs`, or returns its error.
#define KQ_ASSIGN_OR_RETURN(lhs, expr)                                      \
  KQ_ASSIGN_OR_RETURN_IMPL_(KQ_STATUS_CONCAT_(kq_statusor_, __LINE__), lhs, \
                            expr)

#define KQ_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) return statusor.status();        \
  lhs = std::move(statusor).value()
