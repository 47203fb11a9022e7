#pragma once

// A small, private Kubernetes quantity parser for the manifest library.
// kq's server has its own (server/core/quantity.h); client-lib must not
// depend on server code, and PodRequests only needs exact sums and maxima,
// so this one parses to int64 milli-units and prints canonical strings.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kq::manifest::internal {

// How a quantity was written, which decides how a result prints: Kubernetes
// keeps binary suffixes ("Gi") only when every contributing value used one.
enum class QuantityFormat {
  // No non-zero value contributed yet; prints as decimal.
  kNone,
  // Written with a binary suffix (Ki, Mi, Gi, Ti, Pi, Ei).
  kBinary,
  // Written as a plain number, with a decimal suffix or an exponent.
  kDecimal,
};

// An exact quantity in milli-units (1 == "1m"; "1" == 1000), plus the format
// it prints in. Values that are not whole milli-units ("1n") are rounded up,
// as Kubernetes' MilliValue() does. Plain value type.
struct MilliQuantity {
  int64_t milli = 0;
  QuantityFormat format = QuantityFormat::kNone;
};

// Parses a Kubernetes quantity ("500m", "2Gi", "1.5", "1e3", "+4k").
// Returns InvalidArgument when the text is not a quantity or does not fit in
// int64 milli-units. The message describes the problem without a field path.
absl::StatusOr<MilliQuantity> ParseQuantity(absl::string_view text);

// Prints a quantity canonically, like Kubernetes: "1500m", "16", "32Gi",
// "2k". Binary format uses the largest power-of-1024 suffix that divides the
// value exactly, decimal the largest power-of-1000 suffix.
std::string FormatQuantity(const MilliQuantity& quantity);

// Returns a + b, or InvalidArgument on int64 overflow.
absl::StatusOr<MilliQuantity> AddQuantities(const MilliQuantity& a,
                                            const MilliQuantity& b);

// Returns the larger of a and b (a when equal).
MilliQuantity MaxQuantity(const MilliQuantity& a, const MilliQuantity& b);

}  // namespace kq::manifest::internal
