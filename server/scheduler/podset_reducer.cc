#include "server/scheduler/podset_reducer.h"

namespace kq::scheduler {

void FillPodSetSizesForSearchIndex(absl::Span<int32_t> out,
                                   absl::Span<const int32_t> full_counts,
                                   absl::Span<const int32_t> deltas, int32_t up,
                                   int32_t down) {
  for (size_t i = 0; i < deltas.size(); ++i) {
    // 64-bit product: delta * up overflows int32 for large pod sets.
    int32_t shrink =
        static_cast<int32_t>(int64_t{deltas[i]} * int64_t{up} / int64_t{down});
    out[i] = full_counts[i] - shrink;
  }
}

}  // namespace kq::scheduler
