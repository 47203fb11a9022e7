#pragma once

// Records Kueue's workload counters and histograms, and kq's engine
// metrics, from each committed batch (engine::BatchObserver): the engine
// stays unaware of metrics, and a scrape never waits for the engine.

#include "server/engine/batch_observer.h"
#include "server/metrics/kueue_metrics.h"

namespace kq::metrics {

class MetricsObserver : public engine::BatchObserver {
 public:
  // `metrics` must outlive this.
  explicit MetricsObserver(KueueMetrics& metrics) : metrics_(metrics) {}

  void OnCommitted(const engine::CommittedBatch& batch) override;

 private:
  void OnWorkload(const engine::CommittedBatch& batch, const Workload& wl);

  KueueMetrics& metrics_;
};

}  // namespace kq::metrics
