#pragma once

// Kueue's gauges that follow the state (pending, reserving and admitted
// workloads, ClusterQueue and LocalQueue status, the ClusterQueue resource
// gauges, weighted shares), captured from the committed state on the engine
// thread at most once an interval while it changes, and served from that
// capture: a scrape costs the engine nothing, a restart recomputes them from
// the store, and a deleted queue's series are simply not captured again.

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "prometheus/metric_family.h"
#include "server/admission/state.h"
#include "server/cache/cache.h"
#include "server/core/names.h"
#include "server/core/objects.h"
#include "server/core/unadmitted.h"
#include "server/engine/batch_observer.h"
#include "server/engine/engine.h"

namespace kq::metrics {

class GaugeFamilies;

// One LocalQueue's workloads.
struct LocalQueueTally {
  int active = 0;
  int inadmissible = 0;
  int reserving = 0;
  int admitted = 0;
  cache::FlavorResourceQuantities reserved;
  cache::FlavorResourceQuantities used;
  // Kueue's kueue_unadmitted_workloads labels, counted.
  std::map<UnadmittedReason, int64_t> unadmitted;
};

// One capture of the gauges, taken in steps on the engine thread so that a
// large state (O(workloads) for the LocalQueue tallies, O(queues x flavors
// x resources) for the rest) never holds the engine for long: between
// steps the engine serves other commands. A workload created or deleted
// between two steps may be missed or counted once more in that capture;
// the next capture counts it right.
class GaugeCapture {
 public:
  GaugeCapture();
  ~GaugeCapture();
  // Captures from where the last step stopped for about `budget`; true once
  // the capture is complete.
  bool Step(const admission::AdmissionState& state, absl::Duration budget);
  // The captured families; once, after Step returned true.
  std::vector<prometheus::MetricFamily> Take();

 private:
  enum class Phase { kWorkloads, kObjects, kDone };
  Phase phase_ = Phase::kWorkloads;
  bool started_ = false;
  NamespacedName next_workload_;
  ObjectKey next_object_;
  std::map<std::pair<std::string, std::string>, LocalQueueTally> tallies_;
  // kueue_unadmitted_workloads by ClusterQueue, summed from the
  // LocalQueues' tallies once the objects are captured.
  std::map<std::string, std::map<UnadmittedReason, int64_t>> unadmitted_;
  std::unique_ptr<GaugeFamilies> out_;
};

// The gauges of `state` in one step.
std::vector<prometheus::MetricFamily> CaptureQueueGauges(
    const admission::AdmissionState& state);

class QueueGauges : public engine::BatchObserver {
 public:
  // Captures at most once per `interval` while batches change the state,
  // holding the engine thread for about `step` at a time. Add it as an
  // observer of `engine` before the engine starts, then call Start() once
  // it has.
  QueueGauges(engine::Engine& engine, absl::Duration interval,
              absl::Duration step);
  ~QueueGauges() override;

  // Engine thread: notes that the state may have changed.
  void OnCommitted(const engine::CommittedBatch& batch) override;

  void Start();
  void Stop();

  // The last capture, and the longest it held the engine thread at once.
  std::vector<prometheus::MetricFamily> Collect() const;
  absl::Duration last_capture_duration() const;

 private:
  void Loop();
  void Capture();

  engine::Engine& engine_;
  const absl::Duration interval_;
  const absl::Duration step_;
  std::atomic<bool> dirty_{true};

  mutable absl::Mutex mu_;
  std::shared_ptr<const std::vector<prometheus::MetricFamily>> captured_
      ABSL_GUARDED_BY(mu_);
  absl::Duration capture_duration_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kq::metrics
