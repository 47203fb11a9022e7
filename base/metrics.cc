#include "base/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace kq {

Metrics& Metrics::Global() {
  static auto* metrics = new Metrics();
  return *metrics;
}

void Metrics::Describe(absl::string_view name, absl::string_view type,
                       absl::string_view help) {
  absl::MutexLock lock(&mu_);
  Family& family = families_[std::string(name)];
  family.type = std::string(type);
  family.help = std::string(help);
}

void Metrics::Increment(absl::string_view name, const MetricLabels& labels,
                        double by) {
  absl::MutexLock lock(&mu_);
  families_[std::string(name)].series[labels] += by;
}

void Metrics::Set(absl::string_view name, const MetricLabels& labels,
                  double value) {
  absl::MutexLock lock(&mu_);
  families_[std::string(name)].series[labels] = value;
}

double Metrics::Value(absl::string_view name,
                      const MetricLabels& labels) const {
  absl::MutexLock lock(&mu_);
  auto family = families_.find(name);
  if (family == families_.end()) return 0;
  auto series = family->second.series.find(labels);
  return series == family->second.series.end() ? 0 : series->second;
}

namespace {

// Label values escape backslash, double quote and newline.
std::string EscapeLabelValue(absl::string_view value) {
  return absl::StrReplaceAll(value,
                             {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

}  // namespace

std::string Metrics::RenderPrometheus() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    if (!family.help.empty()) {
      absl::StrAppend(&out, "# HELP ", name, " ",
                      absl::StrReplaceAll(family.help, {{"\n", " "}}), "\n");
    }
    absl::StrAppend(&out, "# TYPE ", name, " ",
                    family.type.empty() ? "untyped" : family.type, "\n");
    for (const auto& [labels, value] : family.series) {
      absl::StrAppend(&out, name);
      if (!labels.empty()) {
        out += '{';
        for (size_t i = 0; i < labels.size(); ++i) {
          if (i > 0) out += ',';
          absl::StrAppend(&out, labels[i].first, "=\"",
                          EscapeLabelValue(labels[i].second), "\"");
        }
        out += '}';
      }
      absl::StrAppend(&out, " ", value, "\n");
    }
  }
  return out;
}

}  // namespace kq
