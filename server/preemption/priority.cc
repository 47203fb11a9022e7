#include "server/preemption/priority.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kq::preemption {
namespace {

// Go's strconv.ParseInt(text, 10, 32): an optional sign then at least one
// decimal digit, nothing else (no spaces, unlike absl::SimpleAtoi), within
// int32.
bool ParseGoInt32(const std::string& text, int32_t* value) {
  size_t digits_start = 0;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) digits_start = 1;
  if (digits_start == text.size()) return false;
  for (size_t i = digits_start; i < text.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) {
      return false;
    }
  }
  int64_t wide = 0;
  if (!absl::SimpleAtoi(text, &wide)) return false;
  if (wide < std::numeric_limits<int32_t>::min() ||
      wide > std::numeric_limits<int32_t>::max()) {
    return false;
  }
  *value = static_cast<int32_t>(wide);
  return true;
}

}  // namespace

int32_t BasePriority(const Workload& workload) { return workload.priority; }

absl::StatusOr<int32_t> PriorityBoost(const Workload& workload,
                                      const Features& features) {
  if (!features.priority_boost) return 0;
  auto it = workload.meta.annotations.find(kPriorityBoostAnnotation);
  if (it == workload.meta.annotations.end() || it->second.empty()) return 0;
  int32_t boost = 0;
  if (!ParseGoInt32(it->second, &boost)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "annotation ", kPriorityBoostAnnotation, " of ",
        Describe(KeyOf(workload)), ": \"", it->second, "\" is not an int32"));
  }
  return boost;
}

PriorityInfo PriorityInfoOf(const Workload& workload,
                            const Features& features) {
  PriorityInfo info;
  info.base = BasePriority(workload);
  // Kueue's webhook rejects an invalid boost; should one get through anyway,
  // the base priority stands alone, as in Kueue's EffectivePriority.
  info.boost = PriorityBoost(workload, features).value_or(0);
  info.effective = int64_t{info.base} + int64_t{info.boost};
  return info;
}

int64_t EffectivePriority(const Workload& workload, const Features& features) {
  return PriorityInfoOf(workload, features).effective;
}

}  // namespace kq::preemption
