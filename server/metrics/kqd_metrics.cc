#include "server/metrics/kqd_metrics.h"

#include <utility>
#include <vector>

#include "base/metrics.h"
#include "prometheus/gauge.h"
#include "server/metrics/process_metrics.h"

#ifndef KQ_VERSION
#define KQ_VERSION "unknown"
#endif
#ifndef KQ_GIT_COMMIT
#define KQ_GIT_COMMIT ""
#endif
#if defined(__x86_64__)
#define KQ_PLATFORM "linux/amd64"
#elif defined(__aarch64__)
#define KQ_PLATFORM "linux/arm64"
#else
#define KQ_PLATFORM "linux/unknown"
#endif

namespace kq::metrics {

KqdMetrics::KqdMetrics(engine::Engine& engine, KqdMetricsOptions options)
    : kueue_(registry_),
      observer_(kueue_),
      gauges_(engine, options.gauge_interval, options.gauge_step),
      grpc_(registry_) {
  engine.AddObserver(&observer_);
  engine.AddObserver(&gauges_);
  // Kueue's labels, with what stands for Go's in a C++ build.
  prometheus::BuildGauge()
      .Name("kueue_build_info")
      .Help(
          "1, labelled with the build of kqd: version, commit, compiler "
          "and platform (go_version is empty: kqd is C++).")
      .Register(registry_)
      .Add({{"git_version", "v" KQ_VERSION},
            {"git_commit", KQ_GIT_COMMIT},
            {"build_date", __DATE__},
            {"go_version", ""},
            {"compiler", "gcc " __VERSION__},
            {"platform", KQ_PLATFORM},
            {kReplicaRole, kStandalone}})
      .Set(1);
}

KqdMetrics::~KqdMetrics() { Stop(); }

void KqdMetrics::Start() { gauges_.Start(); }

void KqdMetrics::Stop() { gauges_.Stop(); }

std::string KqdMetrics::Render() const {
  std::vector<prometheus::MetricFamily> families = registry_.Collect();
  auto append = [&families](std::vector<prometheus::MetricFamily> more) {
    for (prometheus::MetricFamily& family : more) {
      families.push_back(std::move(family));
    }
  };
  append(gauges_.Collect());
  append(CollectProcessMetrics());
  prometheus::ClientMetric capture;
  capture.label.push_back({kReplicaRole, kStandalone});
  capture.gauge.value = absl::ToDoubleSeconds(gauges_.last_capture_duration());
  families.push_back(
      {"kq_metrics_capture_step_seconds",
       "The longest one step of the last queue-gauge capture held the engine "
       "thread (scrapes never do).",
       prometheus::MetricType::Gauge,
       {capture}});
  return SerializeText(families);
}

}  // namespace kq::metrics
