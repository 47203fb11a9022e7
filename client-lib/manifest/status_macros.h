#pragma once

// Status propagation for the manifest library. client-lib must not include
// server/ headers, so these mirror server/common/status_macros.h under their
// own names (no clash when a binary includes both).

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function when `expr` is not OK.
#define KQ_MANIFEST_RETURN_IF_ERROR(expr)        \
  do {                                           \
    ::absl::Status kq_manifest_status_ = (expr); \
    if (!kq_manifest_status_.ok()) {             \
      return kq_manifest_status_;                \
    }                                            \
  } while (false)

#define KQ_MANIFEST_CONCAT_INNER_(a, b) a##b
#define KQ_MANIFEST_CONCAT_(a, b) KQ_MANIFEST_CONCAT_INNER_(a, b)

// Assigns the value of a StatusOr expression to `lhs`, or returns its error.
#define KQ_MANIFEST_ASSIGN_OR_RETURN(lhs, expr) \
  KQ_MANIFEST_ASSIGN_OR_RETURN_IMPL_(           \
      KQ_MANIFEST_CONCAT_(kq_manifest_statusor_, __LINE__), lhs, expr)

#define KQ_MANIFEST_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                       \
  if (!statusor.ok()) {                                         \
    return statusor.status();                                   \
  }                                                             \
  lhs = std::move(statusor).value()
