#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kq {

// A Kubernetes resource quantity ("500m", "2Gi", "1.5", "1e3"), held exactly
// as a signed count of milli-units. Values finer than a milli-unit round up,
// as Kubernetes' MilliValue() does. Values beyond int64 milli-units (about
// 9.2e15 base units) saturate to Quantity::Max(), which kq reads as
// unlimited, like Kueue's Amount.
//
// Thread-compatible value type.
class Quantity {
 public:
  constexpr Quantity() = default;

  static constexpr Quantity FromMilli(int64_t milli) { return Quantity(milli); }
  static constexpr Quantity FromUnits(int64_t units) {
    return Quantity(units * 1000);
  }
  static constexpr Quantity Max() {
    return Quantity(std::numeric_limits<int64_t>::max());
  }

  // Parses the Kubernetes quantity grammar:
  //   <sign><digits>[.<digits>][<suffix>]
  //   suffix: Ki Mi Gi Ti Pi Ei | n u m k M G T P E | e<int> | E<int>
  // Returns InvalidArgument naming the problem for anything else.
  static absl::StatusOr<Quantity> Parse(absl::string_view text);

  int64_t milli() const { return milli_; }
  // The value in whole units, rounded up (Kubernetes' Value()).
  int64_t Value() const;
  bool IsNegative() const { return milli_ < 0; }
  bool IsZero() const { return milli_ == 0; }

  // Kubernetes' canonical form: the largest exact suffix, binary ("Gi") when
  // `binary` and the value is a whole multiple of 1024, decimal otherwise.
  std::string ToString(bool binary = false) const;

  friend bool operator==(Quantity a, Quantity b) = default;
  friend auto operator<=>(Quantity a, Quantity b) = default;

 private:
  constexpr explicit Quantity(int64_t milli) : milli_(milli) {}
  int64_t milli_ = 0;
};

// Kueue's integer amount of a resource: milli-units for "cpu", whole units
// (rounded up) for every other resource (pkg/resources/requests.go).
int64_t ResourceAmount(absl::string_view resource, Quantity q);

// The inverse of ResourceAmount, for printing usage in Kubernetes form.
Quantity QuantityFromAmount(absl::string_view resource, int64_t amount);

// Whether Kueue prints `resource` in binary form ("2Gi"): memory,
// ephemeral-storage and hugepages-* (pkg/resources/resource_formatter.go).
bool UsesBinaryFormat(absl::string_view resource);

// An amount of `resource` printed as Kueue prints it in messages and status:
// "500m" CPU, "256Gi" memory, "8" GPUs.
std::string FormatAmount(absl::string_view resource, int64_t amount);

// Saturating int64 arithmetic: Kueue's Amount, where INT64_MAX is unlimited.
int64_t SaturatingAdd(int64_t a, int64_t b);
int64_t SaturatingSub(int64_t a, int64_t b);
int64_t SaturatingMul(int64_t a, int64_t b);

}  // namespace kq
