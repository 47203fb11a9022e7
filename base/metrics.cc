#include "base/metrics.h"

#include <sstream>

#include "prometheus/text_serializer.h"

namespace kq {
namespace {

prometheus::Labels ToLabels(const MetricLabels& labels) {
  return prometheus::Labels(labels.begin(), labels.end());
}

}  // namespace

std::string SerializeText(
    const std::vector<prometheus::MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return std::move(out).str();
}

Metrics& Metrics::Global() {
  static auto* metrics = new Metrics();
  return *metrics;
}

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {}

Metrics::Family& Metrics::FamilyOf(absl::string_view name,
                                   absl::string_view type,
                                   absl::string_view help) {
  auto it = families_.find(name);
  if (it != families_.end()) return it->second;
  const std::string help_text(help.empty() ? name : help);
  Family family;
  if (type == "gauge") {
    family = &prometheus::BuildGauge()
                  .Name(std::string(name))
                  .Help(help_text)
                  .Register(*registry_);
  } else {
    family = &prometheus::BuildCounter()
                  .Name(std::string(name))
                  .Help(help_text)
                  .Register(*registry_);
  }
  return families_.emplace(std::string(name), family).first->second;
}

void Metrics::Describe(absl::string_view name, absl::string_view type,
                       absl::string_view help) {
  absl::MutexLock lock(&mu_);
  FamilyOf(name, type, help);
}

void Metrics::Increment(absl::string_view name, const MetricLabels& labels,
                        double by) {
  if (!(by >= 0)) return;
  absl::MutexLock lock(&mu_);
  Family& family = FamilyOf(name, "counter", "");
  if (auto* counters =
          std::get_if<prometheus::Family<prometheus::Counter>*>(&family)) {
    (*counters)->Add(ToLabels(labels)).Increment(by);
  } else {
    std::get<prometheus::Family<prometheus::Gauge>*>(family)
        ->Add(ToLabels(labels))
        .Increment(by);
  }
}

void Metrics::Set(absl::string_view name, const MetricLabels& labels,
                  double value) {
  absl::MutexLock lock(&mu_);
  Family& family = FamilyOf(name, "gauge", "");
  if (auto* gauges =
          std::get_if<prometheus::Family<prometheus::Gauge>*>(&family)) {
    (*gauges)->Add(ToLabels(labels)).Set(value);
  }
  // A counter cannot be set: Prometheus's rate() would read the drop as a
  // reset. The shim only sets gauges.
}

double Metrics::Value(absl::string_view name,
                      const MetricLabels& labels) const {
  absl::MutexLock lock(&mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  const prometheus::Labels want = ToLabels(labels);
  auto read = [&want](auto* family) -> double {
    // Has() before Add(): a read must not create the series.
    if (!family->Has(want)) return 0;
    return family->Add(want).Value();
  };
  return std::visit(read, it->second);
}

std::string Metrics::RenderPrometheus() const {
  return SerializeText(registry_->Collect());
}

}  // namespace kq
