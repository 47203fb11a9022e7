#pragma once

// A process's Prometheus metrics: counters and gauges by name and labels,
// rendered in the text exposition format for GET /metrics. One process-wide
// registry; every call is thread-safe and cheap (one mutex, no allocation
// once a series exists). The shim exports it today.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace kq {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  static Metrics& Global();

  // Declares a metric's type ("counter" or "gauge") and help text; series
  // of undeclared names render as untyped.
  void Describe(absl::string_view name, absl::string_view type,
                absl::string_view help);
  void Increment(absl::string_view name, const MetricLabels& labels = {},
                 double by = 1);
  void Set(absl::string_view name, const MetricLabels& labels, double value);
  // The value of one series (0 when absent); for tests.
  double Value(absl::string_view name, const MetricLabels& labels = {}) const;

  // Text exposition format 0.0.4, names sorted, series sorted by labels.
  std::string RenderPrometheus() const;

 private:
  struct Family {
    std::string type;
    std::string help;
    std::map<MetricLabels, double> series;
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Family, std::less<>> families_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kq
