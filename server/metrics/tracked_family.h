#pragma once

// A prometheus-cpp family whose series are looked up without building a
// metric (Family::Add allocates one, buckets and all, on every call) and
// removed by the object they belong to, as Kueue's ClearClusterQueueMetrics
// and ClearLocalQueueMetrics drop a deleted queue's series. Engine thread
// only; prometheus-cpp's own lock orders it with scrapes.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/family.h"
#include "prometheus/labels.h"

namespace kq::metrics {

template <typename T>
class TrackedFamily {
 public:
  explicit TrackedFamily(prometheus::Family<T>& family) : family_(&family) {}

  // The series of `labels`, made with `args` (a histogram's buckets) when
  // new, and remembered as `owner`'s.
  template <typename... Args>
  T& Get(const std::string& owner, const prometheus::Labels& labels,
         Args&&... args) {
    auto it = series_.find(labels);
    if (it != series_.end()) return *it->second;
    T& made = family_->Add(labels, std::forward<Args>(args)...);
    series_.emplace(labels, &made);
    owned_[owner].push_back(labels);
    return made;
  }

  // Drops every series made for `owner`.
  void RemoveOwner(const std::string& owner) {
    auto it = owned_.find(owner);
    if (it == owned_.end()) return;
    for (const prometheus::Labels& labels : it->second) {
      auto series = series_.find(labels);
      if (series == series_.end()) continue;
      family_->Remove(series->second);
      series_.erase(series);
    }
    owned_.erase(it);
  }

 private:
  prometheus::Family<T>* family_;
  std::map<prometheus::Labels, T*> series_;
  std::map<std::string, std::vector<prometheus::Labels>> owned_;
};

}  // namespace kq::metrics
