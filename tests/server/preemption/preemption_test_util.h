#pragma once

// Helpers shared by the ported preemption tables (classical, hierarchical,
// fair): workloads holding quota, Kueue's incoming workload and
// single-pod-set assignment, the preemptor's requests, and a picture of the
// quota tree's usage to check that a search leaves it as it was.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "server/core/objects.h"
#include "server/core/quantity.h"
#include "server/preemption/classical.h"
#include "tests/testing/builders.h"

namespace kq::preemption::test_util {

inline const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

inline constexpr char kLowerPriority[] = "LowerPriority";
inline constexpr char kLowerOrNewer[] = "LowerOrNewerEqualPriority";
inline constexpr char kNever[] = "Never";
inline constexpr char kAny[] = "Any";

// One resource a workload holds: (resource, flavor, quantity).
struct Use {
  std::string resource;
  std::string flavor;
  std::string quantity;
};

// A workload of one pod with `priority` holding `uses` in `cluster_queue`
// since `reserved_at` (Kueue's MakeWorkload...ReserveQuotaAt).
inline Workload Holding(const std::string& name, int32_t priority,
                        const std::string& cluster_queue, std::vector<Use> uses,
                        absl::Time reserved_at = kNow) {
  ::kq::testing::WorkloadBuilder workload(name);
  ::kq::testing::AdmissionBuilder admission(cluster_queue);
  workload.Priority(priority);
  for (const Use& use : uses) {
    workload.Request(use.resource, use.quantity);
    admission.Assign(use.resource, use.flavor, use.quantity);
  }
  workload.ReserveQuota(admission.Build(), reserved_at);
  return workload.Build();
}

// A CPU-only workload holding `cpu` of flavor "default".
inline Workload HoldingCpu(const std::string& name, int32_t priority,
                           const std::string& cluster_queue,
                           const std::string& cpu) {
  return Holding(name, priority, cluster_queue, {{"cpu", "default", cpu}});
}

// Kueue's baseIncomingWl: one pod set "main" of one pod.
inline ::kq::testing::WorkloadBuilder Incoming(
    int32_t priority,
    std::vector<std::pair<std::string, std::string>> requests) {
  ::kq::testing::WorkloadBuilder workload("in");
  workload.Uid("wl-in").Label("kueue.x-k8s.io/job-uid", "job-in");
  workload.Priority(priority);
  for (const auto& [resource, quantity] : requests) {
    workload.Request(resource, quantity);
  }
  return workload;
}

// The flavor chosen for one resource of the preemptor, and whether its
// mode is Preempt (else Fit).
struct FlavorChoice {
  std::string resource;
  std::string flavor;
  bool preempt = true;
};

// The assignment of one pod set of the preemptor.
struct PodSetChoice {
  int32_t count = 1;
  std::vector<FlavorChoice> flavors;
};

// Kueue's singlePodSetAssignment.
inline std::vector<PodSetChoice> Single(std::vector<FlavorChoice> flavors) {
  return {{.count = 1, .flavors = std::move(flavors)}};
}

// Kueue's assignment.TotalRequestsFor: each pod set's per-pod requests
// times the assigned count, on the chosen flavors; zero requests skipped.
inline cache::FlavorResourceQuantities TotalRequests(
    const Workload& workload, const std::vector<PodSetChoice>& assignment) {
  cache::FlavorResourceQuantities usage;
  for (size_t i = 0; i < assignment.size() && i < workload.pod_sets.size();
       ++i) {
    for (const auto& [resource, quantity] : workload.pod_sets[i].requests) {
      const int64_t amount = ResourceAmount(resource, quantity);
      if (amount == 0) continue;
      for (const FlavorChoice& choice : assignment[i].flavors) {
        if (choice.resource != resource) continue;
        cache::FlavorResource fr{choice.flavor, resource};
        usage[fr] = SaturatingAdd(usage[fr],
                                  SaturatingMul(amount, assignment[i].count));
      }
    }
  }
  return usage;
}

// Kueue's flavorResourcesNeedPreemption.
inline std::set<cache::FlavorResource> NeedPreemption(
    const std::vector<PodSetChoice>& assignment) {
  std::set<cache::FlavorResource> frs;
  for (const PodSetChoice& ps : assignment) {
    for (const FlavorChoice& choice : ps.flavors) {
      if (choice.preempt) frs.insert({choice.flavor, choice.resource});
    }
  }
  return frs;
}

// Every node's non-zero usage, to check the tree is restored.
inline std::map<std::string, cache::FlavorResourceQuantities> UsageOfTree(
    const cache::Cache& cache) {
  std::map<std::string, cache::FlavorResourceQuantities> usage;
  auto non_zero = [](const cache::FlavorResourceQuantities& m) {
    cache::FlavorResourceQuantities out;
    for (const auto& [fr, v] : m) {
      if (v != 0) out[fr] = v;
    }
    return out;
  };
  for (const auto& [name, cq] : cache.cluster_queues()) {
    usage["cq/" + name] = non_zero(cq->node.usage);
  }
  for (const auto& [name, cohort] : cache.cohorts()) {
    usage["cohort/" + name] = non_zero(cohort->node.usage);
  }
  return usage;
}

// Builds `cache` from the objects and adds the usage of every workload of
// `admitted` (which must each have an admission to a known ClusterQueue);
// returns pointers to them, the workloads holding quota.
inline std::vector<const Workload*> BuildTree(
    cache::Cache& cache, const std::vector<ClusterQueue>& cluster_queues,
    const std::vector<Cohort>& cohorts, const std::set<std::string>& flavors,
    const std::vector<Workload>& admitted) {
  std::map<std::string, ClusterQueue> cqs;
  for (const ClusterQueue& cq : cluster_queues) cqs[cq.meta.name] = cq;
  std::map<std::string, Cohort> cohort_map;
  for (const Cohort& cohort : cohorts) cohort_map[cohort.meta.name] = cohort;
  cache.Rebuild(cqs, cohort_map, flavors, {});
  std::vector<const Workload*> holding;
  for (const Workload& wl : admitted) {
    cache.FindClusterQueue(wl.admission->cluster_queue)
        ->AddUsage(cache::UsageOf(*wl.admission));
    holding.push_back(&wl);
  }
  return holding;
}

// The same classical search through a WithinNominalMemo, once filling it
// and once answering from it, chooses `targets` in the same order and
// leaves the tree as it was.
inline void ExpectSameTargetsThroughMemo(
    cache::Cache& cache, const Preemptor& preemptor,
    const std::vector<const Workload*>& holding,
    const std::vector<Target>& targets) {
  const auto before = UsageOfTree(cache);
  WithinNominalMemo memo;
  for (int round = 0; round < 2; ++round) {
    std::vector<Target> memoised =
        ClassicalTargets(cache, preemptor, holding, kNow, {}, &memo);
    ASSERT_EQ(memoised.size(), targets.size()) << "round " << round;
    for (size_t i = 0; i < targets.size(); ++i) {
      EXPECT_EQ(memoised[i].workload, targets[i].workload) << "round " << round;
      EXPECT_EQ(memoised[i].reason, targets[i].reason) << "round " << round;
    }
  }
  EXPECT_EQ(UsageOfTree(cache), before) << "the quota tree was not restored";
}

}  // namespace kq::preemption::test_util
