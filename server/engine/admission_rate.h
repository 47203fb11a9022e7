#pragma once

// How fast each ClusterQueue has admitted workloads lately, from which
// Explain estimates when a pending workload will start. It observes the
// engine's committed batches (so a batch whose commit failed counts for
// nothing). Thread-compatible (the engine thread owns it).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"

#include "server/engine/batch_observer.h"

namespace kq::engine {

// How far back the rate looks.
inline constexpr absl::Duration kAdmissionRateWindow = absl::Minutes(15);

class AdmissionRate : public BatchObserver {
 public:
  explicit AdmissionRate(absl::Duration window = kAdmissionRateWindow)
      : window_(window) {}

  // Records the batch's admissions: its workloads that hold quota reserved
  // at the batch's time, then forgets what left the window.
  void OnCommitted(const CommittedBatch& batch) override;

  // Notes one admission in `cluster_queue` at `at` (times do not go back).
  void Record(const std::string& cluster_queue, absl::Time at);
  // Forgets the admissions older than the window ending at `now`.
  void Forget(absl::Time now);

  // Admissions per minute in `cluster_queue` over the window ending at `now`.
  double PerMinute(const std::string& cluster_queue, absl::Time now) const;
  // When a workload with `ahead` workloads before it in `cluster_queue`
  // starts if admissions go on at the recent rate; nullopt when there were
  // none in the window.
  std::optional<absl::Time> EstimatedStart(const std::string& cluster_queue,
                                           int64_t ahead, absl::Time now) const;

 private:
  const absl::Duration window_;
  // Admission times per ClusterQueue, oldest first.
  std::map<std::string, std::deque<absl::Time>> times_;
};

}  // namespace kq::engine
