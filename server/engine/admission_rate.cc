#include "server/engine/admission_rate.h"

#include <variant>

#include "server/core/objects.h"

namespace kq::engine {

void AdmissionRate::OnCommitted(const CommittedBatch& batch) {
  for (const store::Event& event : batch.events) {
    const Workload* wl = std::get_if<Workload>(&event.object);
    if (wl == nullptr || !HoldsQuota(*wl)) continue;
    const Condition* reserved =
        FindCondition(wl->conditions, kConditionQuotaReserved);
    if (reserved == nullptr || reserved->last_transition_time != batch.time) {
      continue;
    }
    Record(wl->admission->cluster_queue, batch.time);
  }
  Forget(batch.time);
}

void AdmissionRate::Record(const std::string& cluster_queue, absl::Time at) {
  times_[cluster_queue].push_back(at);
}

void AdmissionRate::Forget(absl::Time now) {
  for (auto it = times_.begin(); it != times_.end();) {
    std::deque<absl::Time>& times = it->second;
    while (!times.empty() && times.front() < now - window_) times.pop_front();
    // A ClusterQueue that admitted nothing in the window costs nothing.
    it = times.empty() ? times_.erase(it) : std::next(it);
  }
}

double AdmissionRate::PerMinute(const std::string& cluster_queue,
                                absl::Time now) const {
  auto times = times_.find(cluster_queue);
  if (times == times_.end()) return 0;
  int64_t count = 0;
  for (absl::Time t : times->second) count += t >= now - window_;
  return count / absl::ToDoubleMinutes(window_);
}

std::optional<absl::Time> AdmissionRate::EstimatedStart(
    const std::string& cluster_queue, int64_t ahead, absl::Time now) const {
  const double per_minute = PerMinute(cluster_queue, now);
  if (per_minute == 0) return std::nullopt;
  // The workloads ahead, then this one.
  return now + absl::Minutes((static_cast<double>(ahead) + 1) / per_minute);
}

}  // namespace kq::engine
