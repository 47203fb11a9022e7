#pragma once

// Kueue's gauges that follow the state (pending, reserving and admitted
// workloads, ClusterQueue and LocalQueue status, the ClusterQueue resource
// gauges, weighted shares), captured from the committed state on the engine
// thread at most once an interval while it changes, and served from that
// capture: a scrape costs the engine nothing, a restart recomputes them from
// the store, and a deleted queue's series are simply not captured again.

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "prometheus/metric_family.h"
#include "server/admission/state.h"
#include "server/engine/batch_observer.h"
#include "server/engine/engine.h"

namespace kq::metrics {

// The gauges of `state` (pure: no clock, no I/O). O(workloads) for the
// LocalQueue tallies, O(queues x flavors x resources) for the rest.
std::vector<prometheus::MetricFamily> CaptureQueueGauges(
    const admission::AdmissionState& state);

class QueueGauges : public engine::BatchObserver {
 public:
  // Captures at most once per `interval` while batches change the state.
  // Add it as an observer of `engine` before the engine starts, then call
  // Start() once it has.
  QueueGauges(engine::Engine& engine, absl::Duration interval);
  ~QueueGauges() override;

  // Engine thread: notes that the state may have changed.
  void OnCommitted(const engine::CommittedBatch& batch) override;

  void Start();
  void Stop();

  // The last capture, and how long it held the engine thread.
  std::vector<prometheus::MetricFamily> Collect() const;
  absl::Duration last_capture_duration() const;

 private:
  void Loop();

  engine::Engine& engine_;
  const absl::Duration interval_;
  std::atomic<bool> dirty_{true};

  mutable absl::Mutex mu_;
  std::shared_ptr<const std::vector<prometheus::MetricFamily>> captured_
      ABSL_GUARDED_BY(mu_);
  absl::Duration capture_duration_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kq::metrics
