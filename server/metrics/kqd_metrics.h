#pragma once

// Everything kqd exports on /metrics, in one place: Kueue's counters and
// histograms (recorded as batches commit), Kueue's queue gauges (captured
// from the committed state), kq's gRPC and engine metrics, the process
// metrics and kueue_build_info. Render() is what a scrape gets; it never
// waits for the engine.

#include <memory>
#include <string>

#include "absl/time/time.h"

#include "prometheus/registry.h"
#include "server/engine/engine.h"
#include "server/metrics/grpc_metrics.h"
#include "server/metrics/kueue_metrics.h"
#include "server/metrics/metrics_observer.h"
#include "server/metrics/queue_gauges.h"

namespace kq::metrics {

struct KqdMetricsOptions {
  // How often the queue gauges are captured while the state changes.
  absl::Duration gauge_interval = absl::Milliseconds(500);
  // The longest one step of a capture holds the engine thread.
  absl::Duration gauge_step = absl::Milliseconds(1);
};

class KqdMetrics {
 public:
  // Observes `engine`, which must not have started yet and must outlive
  // this.
  KqdMetrics(engine::Engine& engine, KqdMetricsOptions options = {});
  ~KqdMetrics();

  // Once the engine has started: begins capturing the gauges.
  void Start();
  // Before the engine stops.
  void Stop();

  GrpcMetrics& grpc() { return grpc_; }
  // For the families other modules register (server/auth's); rendered
  // with the rest.
  prometheus::Registry& registry() { return registry_; }
  // Text exposition format 0.0.4 (serve with kPrometheusContentType).
  std::string Render() const;
  // How long the last gauge capture held the engine thread.
  absl::Duration last_capture_duration() const {
    return gauges_.last_capture_duration();
  }

 private:
  prometheus::Registry registry_;
  KueueMetrics kueue_;
  MetricsObserver observer_;
  QueueGauges gauges_;
  GrpcMetrics grpc_;
};

}  // namespace kq::metrics
