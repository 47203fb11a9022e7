#pragma once

// A process's Prometheus metrics on prometheus-cpp (Debian's
// prometheus-cpp-dev), the one way kq's binaries export metrics: kqd's
// server/metrics registers its typed families in the registry below, and the
// shim counts through the by-name calls. Serve RenderPrometheus() (or
// SerializeText() of families collected elsewhere) with
// kPrometheusContentType.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace kq {

// Prometheus's text exposition format 0.0.4. Prometheus 3 refuses a scrape
// whose Content-Type names no format, so every /metrics answers with this.
inline constexpr char kPrometheusContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";

// The text format of `families`, as Prometheus reads it.
std::string SerializeText(
    const std::vector<prometheus::MetricFamily>& families);

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  static Metrics& Global();

  Metrics();

  // Declares a metric's type ("counter" or "gauge") and help text. A name
  // first used undeclared becomes a counter (Increment) or gauge (Set)
  // with its name as help; redeclaring keeps the first declaration.
  void Describe(absl::string_view name, absl::string_view type,
                absl::string_view help);
  // Counters only go up: a negative `by` is ignored.
  void Increment(absl::string_view name, const MetricLabels& labels = {},
                 double by = 1);
  void Set(absl::string_view name, const MetricLabels& labels, double value);
  // The value of one series (0 when absent); for tests.
  double Value(absl::string_view name, const MetricLabels& labels = {}) const;

  // Typed families (histograms, families with their own lifetime) go here
  // directly; they are rendered with the rest.
  prometheus::Registry& registry() { return *registry_; }

  // Text exposition format 0.0.4 of every family in the registry.
  std::string RenderPrometheus() const;

 private:
  using Family = std::variant<prometheus::Family<prometheus::Counter>*,
                              prometheus::Family<prometheus::Gauge>*>;
  Family& FamilyOf(absl::string_view name, absl::string_view type,
                   absl::string_view help) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::shared_ptr<prometheus::Registry> registry_;
  mutable absl::Mutex mu_;
  std::map<std::string, Family, std::less<>> families_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kq
