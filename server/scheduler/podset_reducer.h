#pragma once

// Partial admission's search (Kueue's
// pkg/scheduler/flavorassigner/podset_reducer.go): walk every pod set's
// count from `count` down towards `minCount` in lockstep and binary-search
// the largest counts that an admission check accepts.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/types/span.h"

#include "server/core/objects.h"

namespace kq::scheduler {

// Writes into `out` the counts at search index `up` of `down`: for each pod
// set, full_counts[i] - floor(deltas[i] * up / down), in 64-bit arithmetic so
// large counts cannot overflow. `out` must be as long as `deltas`.
void FillPodSetSizesForSearchIndex(absl::Span<int32_t> out,
                                   absl::Span<const int32_t> full_counts,
                                   absl::Span<const int32_t> deltas, int32_t up,
                                   int32_t down);

// Searches the pod counts between each pod set's count and its minCount
// (count when unset). Index k of T = sum(count - minCount) gives
// count_i - floor(delta_i * k / T), so k = 0 is the full workload and k = T
// every pod set at its minimum. `fits` returns a result for counts it
// accepts and nullopt otherwise; it must be monotone (accepting counts
// implies accepting smaller ones), as Kueue's sort.Search assumes.
// Holds no references after construction. Thread-compatible.
//
// Example:
//   PodSetReducer<Assignment> reducer(workload.pod_sets,
//       [&](const std::vector<int32_t>& counts) -> std::optional<Assignment> {
//         Assignment a = assigner.Assign(counts);
//         if (a.RepresentativeMode() != AssignmentMode::kFit) return {};
//         return a;
//       });
//   std::optional<Assignment> partial = reducer.Search();
template <typename R>
class PodSetReducer {
 public:
  using FitsFunc = std::function<std::optional<R>(const std::vector<int32_t>&)>;

  PodSetReducer(const CompactVector<PodSet>& pod_sets, FitsFunc fits)
      : fits_(std::move(fits)) {
    for (const PodSet& ps : pod_sets) {
      full_counts_.push_back(ps.count);
      int32_t delta = ps.count - ps.min_count.value_or(ps.count);
      deltas_.push_back(delta);
      total_delta_ += delta;
    }
  }

  // The result of `fits` for the largest counts it accepts (the smallest
  // search index), or nullopt when it accepts none or no pod set can shrink.
  std::optional<R> Search() const {
    if (total_delta_ == 0) return std::nullopt;
    std::vector<int32_t> current(full_counts_.size());
    std::optional<R> last_good;
    int64_t last_good_idx = 0;
    // sort.Search over [0, total_delta_]: the smallest index that fits.
    int64_t lo = 0;
    int64_t hi = int64_t{total_delta_} + 1;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      FillPodSetSizesForSearchIndex(absl::MakeSpan(current), full_counts_,
                                    deltas_, static_cast<int32_t>(mid),
                                    total_delta_);
      std::optional<R> r = fits_(current);
      if (r.has_value()) {
        last_good = std::move(r);
        last_good_idx = mid;
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    // As Kueue: only found when the index the search settled on is the last
    // one that was accepted.
    if (lo != last_good_idx) return std::nullopt;
    return last_good;
  }

 private:
  std::vector<int32_t> full_counts_;
  std::vector<int32_t> deltas_;
  int32_t total_delta_ = 0;
  FitsFunc fits_;
};

}  // namespace kq::scheduler
