#pragma once

// Helpers shared by the cache tests: configuration maps from builder
// output, and normalised views of the tree for comparisons.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "server/cache/cache.h"
#include "server/core/objects.h"

namespace kq::cache::test_util {

// Indexes objects by name, as the engine hands them to Cache::Rebuild.
template <typename T>
std::map<std::string, T> ByName(const std::vector<T>& objects) {
  std::map<std::string, T> out;
  for (const T& o : objects) out[o.meta.name] = o;
  return out;
}

// Drops zero entries: Kueue and kq differ in whether a node's usage map
// keeps a flavor-resource whose usage went back to 0, and the difference
// carries no meaning.
inline FlavorResourceQuantities NonZero(const FlavorResourceQuantities& m) {
  FlavorResourceQuantities out;
  for (const auto& [fr, v] : m) {
    if (v != 0) out[fr] = v;
  }
  return out;
}

// The child ClusterQueues of every cohort, by cohort name (Kueue's
// wantCohorts in cache_test.go).
inline std::map<std::string, std::set<std::string>> CohortMembers(
    const Cache& cache) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [name, cohort] : cache.cohorts()) {
    std::set<std::string>& members = out[name];
    for (const ClusterQueueSnapshot* cq : cohort->child_cluster_queues) {
      members.insert(cq->name());
    }
  }
  return out;
}

// Names of the ClusterQueues whose Active condition is False.
inline std::set<std::string> InactiveClusterQueues(const Cache& cache) {
  std::set<std::string> out;
  for (const auto& [name, cq] : cache.cluster_queues()) {
    if (!cq->active) out.insert(name);
  }
  return out;
}

}  // namespace kq::cache::test_util
