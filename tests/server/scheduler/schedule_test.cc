// One scheduling pass, table-driven: each case is a cluster state, the
// heads of the pass, and what must be admitted (with which flavors) and why
// the others are not. Case names follow Kueue's TestSchedule where a case
// is a port of one.

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "server/scheduler/scheduler.h"
#include "tests/testing/builders.h"

namespace kq::scheduler {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::NamespaceBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

struct Head {
  Workload workload;
  std::string cluster_queue;
};

struct ScheduleCase {
  std::string name;
  std::vector<ResourceFlavor> flavors;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  std::vector<Namespace> namespaces;
  // Workloads already holding quota.
  std::vector<Workload> admitted;
  std::vector<Head> heads;
  // Workload name -> resource -> flavor, for each admitted head (pod set
  // "main").
  std::map<std::string, std::map<std::string, std::string>> want_flavors;
  // Workload name -> QuotaReserved=False reason for each head not admitted.
  std::map<std::string, std::string> want_reasons;
  // Workload name -> message for heads not admitted (exact), when given.
  std::map<std::string, std::string> want_messages;
  // Workload name -> the whole admission (all pod sets, counts, usage),
  // when given.
  std::map<std::string, Admission> want_admissions;
  // Run once more with a NominationMemo (set by the instantiation).
  bool with_memo = false;
};

// Prints the case name when a case fails.
void PrintTo(const ScheduleCase& c, std::ostream* os) { *os << c.name; }

class ScheduleTest : public ::testing::TestWithParam<ScheduleCase> {};

TEST_P(ScheduleTest, OnePass) {
  const ScheduleCase& tc = GetParam();
  std::map<std::string, ClusterQueue> cqs;
  for (const ClusterQueue& cq : tc.cluster_queues) cqs[cq.meta.name] = cq;
  std::map<std::string, Cohort> cohorts;
  for (const Cohort& c : tc.cohorts) cohorts[c.meta.name] = c;
  std::map<std::string, ResourceFlavor> flavors;
  std::set<std::string> flavor_names;
  for (const ResourceFlavor& f : tc.flavors) {
    flavors[f.meta.name] = f;
    flavor_names.insert(f.meta.name);
  }
  std::map<std::string, Namespace> namespaces;
  for (const Namespace& ns : tc.namespaces) namespaces[ns.meta.name] = ns;

  auto build_cache = [&](cache::Cache& cache) {
    cache.Rebuild(cqs, cohorts, flavor_names, {});
    for (const Workload& wl : tc.admitted) {
      cache.FindClusterQueue(wl.admission->cluster_queue)
          ->AddUsage(cache::UsageOf(*wl.admission));
    }
  };
  cache::Cache cache;
  build_cache(cache);
  std::vector<scheduler::Head> heads;
  for (const Head& h : tc.heads)
    heads.push_back({&h.workload, h.cluster_queue});

  SchedulingContext context{&flavors, &namespaces};
  // With the memo: filled by the same pass over an identical tree first,
  // the pass must decide exactly as without it (every wanted value below).
  NominationMemo memo;
  if (GetParam().with_memo) {
    cache::Cache twin;
    build_cache(twin);
    context.nomination_memo = &memo;
    // The twin's trees, as they were before its pass, are this cache's.
    std::map<std::string, uint64_t> twin_generations;
    for (const auto& [name, cq] : twin.cluster_queues()) {
      twin_generations[name] = cq->tree_generation();
    }
    Schedule(twin, heads, context, kNow);
    for (const auto& [name, generation] : twin_generations) {
      memo.Rebase(generation, cache.FindClusterQueue(name)->tree_generation());
    }
  }
  CycleResult result = Schedule(cache, heads, context, kNow);
  if (GetParam().with_memo && memo.size() > 0) {
    EXPECT_GT(memo.hits(), 0);
  }

  std::map<std::string, std::map<std::string, std::string>> got_flavors;
  std::map<std::string, std::string> got_reasons;
  std::map<std::string, std::string> got_messages;
  std::map<std::string, Admission> got_admissions;
  for (const EntryResult& e : result.entries) {
    const std::string& name = e.workload->meta.name;
    if (e.status == EntryResult::Status::kAdmitted) {
      ASSERT_EQ(e.admission.cluster_queue, e.cluster_queue);
      got_flavors[name] = e.admission.pod_set_assignments.at(0).flavors;
      got_admissions[name] = e.admission;
    } else {
      got_reasons[name] = e.reason;
      got_messages[name] = e.message;
    }
  }
  EXPECT_EQ(got_flavors, tc.want_flavors);
  EXPECT_EQ(got_reasons, tc.want_reasons);
  for (const auto& [name, message] : tc.want_messages) {
    EXPECT_EQ(got_messages[name], message) << name;
  }
  for (const auto& [name, admission] : tc.want_admissions) {
    EXPECT_EQ(got_admissions[name], admission) << name;
  }
}

ClusterQueue SimpleCq(std::string name, std::string cpu) {
  return ClusterQueueBuilder(std::move(name))
      .ResourceGroup({"cpu"})
      .Flavor("default")
      .Quota("cpu", cpu)
      .Build();
}

// Kueue's TestSchedule "sales" ClusterQueue.
ClusterQueue SalesCq() {
  return ClusterQueueBuilder("sales")
      .QueueingStrategy(QueueingStrategy::kStrictFIFO)
      .ResourceGroup({"cpu"})
      .Flavor("default")
      .Quota("cpu", "50")
      .Build();
}

// Kueue's "capacity (not) blocked when lending clusterqueue ..." cases:
// ClusterQueueA (2 GPUs, one used by a1) has a2 pending for 2 GPUs;
// ClusterQueueB (0 GPUs, same cohort) has b1 pending for 1 GPU, created
// later.
ScheduleCase CapacityCase(std::string name, std::string reclaim, bool blocked) {
  ScheduleCase tc{
      .name = std::move(name),
      .flavors = {ResourceFlavorBuilder("on-demand").Build()},
      .cluster_queues = {ClusterQueueBuilder("ClusterQueueA")
                             .Cohort("root")
                             .ResourceGroup({"gpu"})
                             .Flavor("on-demand")
                             .Quota("gpu", "2")
                             .ReclaimWithinCohort(std::move(reclaim))
                             .Build(),
                         ClusterQueueBuilder("ClusterQueueB")
                             .Cohort("root")
                             .ResourceGroup({"gpu"})
                             .Flavor("on-demand")
                             .Quota("gpu", "0")
                             .Build()},
      .admitted = {WorkloadBuilder("a1-admitted")
                       .Request("gpu", "1")
                       .ReserveQuota(AdmissionBuilder("ClusterQueueA")
                                         .Assign("gpu", "on-demand", "1")
                                         .Build())
                       .Build()},
      .heads = {{WorkloadBuilder("a2-pending").Request("gpu", "2").Build(),
                 "ClusterQueueA"},
                {WorkloadBuilder("b1-pending")
                     .Created(kNow)
                     .Request("gpu", "1")
                     .Build(),
                 "ClusterQueueB"}},
      .want_reasons = {{"a2-pending", "WaitingForQuota"}},
      .want_messages = {{"a2-pending",
                         "couldn't assign flavors to pod set main: "
                         "insufficient unused quota for gpu in flavor "
                         "on-demand, 1 more needed"}},
  };
  if (blocked) {
    tc.want_reasons["b1-pending"] = "WaitingForQuota";
    tc.want_messages["b1-pending"] =
        "Workload no longer fits after processing another workload";
  } else {
    tc.want_flavors["b1-pending"] = {{"gpu", "on-demand"}};
  }
  return tc;
}

std::vector<ScheduleCase> ScheduleCases() {
  return std::vector<ScheduleCase>{
      {.name = "single_flavor_fits",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SimpleCq("cq", "4")},
       .heads =
           {{WorkloadBuilder("a").PodSet("main", 2).Request("cpu", "2").Build(),
             "cq"}},
       .want_flavors = {{"a", {{"cpu", "default"}}}}},
      {.name = "exceeds_nominal_quota",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SimpleCq("cq", "4")},
       .heads =
           {{WorkloadBuilder("a").PodSet("main", 5).Request("cpu", "1").Build(),
             "cq"}},
       .want_reasons = {{"a", "ExceedsMaxQuota"}},
       .want_messages =
           {{"a",
             "couldn't assign flavors to pod set main: insufficient quota "
             "for cpu in flavor default, previously considered podsets "
             "requests (0) + current podset request (5) > maximum capacity "
             "(4)"}}},
      {.name = "waiting_for_quota_held_by_others",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SimpleCq("cq", "4")},
       .admitted = {WorkloadBuilder("running")
                        .ReserveQuota(AdmissionBuilder("cq")
                                          .Assign("cpu", "default", "3")
                                          .Build())
                        .Build()},
       .heads = {{WorkloadBuilder("a").Request("cpu", "2").Build(), "cq"}},
       .want_reasons = {{"a", "WaitingForQuota"}},
       .want_messages = {{"a",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "default, 1 more needed"}}},
      {.name = "second_flavor_when_first_is_full",
       .flavors = {ResourceFlavorBuilder("on-demand").Build(),
                   ResourceFlavorBuilder("spot").Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu", "memory"})
                              .Flavor("on-demand")
                              .Quota("cpu", "2")
                              .Quota("memory", "4Gi")
                              .Flavor("spot")
                              .Quota("cpu", "8")
                              .Quota("memory", "32Gi")
                              .Build()},
       .heads = {{WorkloadBuilder("a")
                      .PodSet("main", 2)
                      .Request("cpu", "2")
                      .Request("memory", "1Gi")
                      .Build(),
                  "cq"}},
       .want_flavors = {{"a", {{"cpu", "spot"}, {"memory", "spot"}}}}},
      {.name = "multiple_resource_groups",
       .flavors = {ResourceFlavorBuilder("default").Build(),
                   ResourceFlavorBuilder("a100").Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "8")
                              .ResourceGroup({"nvidia.com/gpu"})
                              .Flavor("a100")
                              .Quota("nvidia.com/gpu", "4")
                              .Build()},
       .heads = {{WorkloadBuilder("a")
                      .Request("cpu", "1")
                      .Request("nvidia.com/gpu", "2")
                      .Build(),
                  "cq"}},
       .want_flavors = {{"a",
                         {{"cpu", "default"}, {"nvidia.com/gpu", "a100"}}}}},
      // Kueue walks resources in FNV-1a hash order (nvidia.com/gpu before
      // cpu): the gpu has no resource group, so the group fails before
      // cpu is rated and no flavor attempt is recorded, which
      // resolveNoFitReason reports as NoMatchingFlavor.
      {.name = "resource_not_in_cluster_queue",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SimpleCq("cq", "4")},
       .heads = {{WorkloadBuilder("a")
                      .Request("cpu", "1")
                      .Request("nvidia.com/gpu", "1")
                      .Build(),
                  "cq"}},
       .want_reasons = {{"a", "NoMatchingFlavor"}},
       .want_messages = {{"a",
                          "couldn't assign flavors to pod set main: "
                          "resource nvidia.com/gpu unavailable in "
                          "ClusterQueue"}}},
      // Kueue "cannot borrow resource not listed in clusterQueue": no
      // flavor can be tried at all, so NoMatchingFlavor.
      {.name = "cannot_borrow_resource_not_listed_in_cluster_queue",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SimpleCq("cq", "4")},
       .heads = {{WorkloadBuilder("a").Request("nvidia.com/gpu", "1").Build(),
                  "cq"}},
       .want_reasons = {{"a", "NoMatchingFlavor"}},
       .want_messages = {{"a",
                          "couldn't assign flavors to pod set main: "
                          "resource nvidia.com/gpu unavailable in "
                          "ClusterQueue"}}},
      {.name = "zero_request_of_uncovered_resource_is_ignored",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SimpleCq("cq", "4")},
       .heads = {{WorkloadBuilder("a")
                      .Request("cpu", "1")
                      .Request("example.com/foo", "0")
                      .Build(),
                  "cq"}},
       .want_flavors = {{"a", {{"cpu", "default"}}}}},
      {.name = "untolerated_taint_skips_flavor",
       .flavors = {ResourceFlavorBuilder("spot")
                       .Taint("spot", "true", "NoSchedule")
                       .Build(),
                   ResourceFlavorBuilder("on-demand").Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu"})
                              .Flavor("spot")
                              .Quota("cpu", "8")
                              .Flavor("on-demand")
                              .Quota("cpu", "8")
                              .Build()},
       .heads = {{WorkloadBuilder("a").Request("cpu", "1").Build(), "cq"}},
       .want_flavors = {{"a", {{"cpu", "on-demand"}}}}},
      {.name = "tolerated_taint_uses_first_flavor",
       .flavors = {ResourceFlavorBuilder("spot")
                       .Taint("spot", "true", "NoSchedule")
                       .Build(),
                   ResourceFlavorBuilder("on-demand").Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu"})
                              .Flavor("spot")
                              .Quota("cpu", "8")
                              .Flavor("on-demand")
                              .Quota("cpu", "8")
                              .Build()},
       .heads = {{WorkloadBuilder("a")
                      .Request("cpu", "1")
                      .Toleration({.key = "spot",
                                   .op = "Equal",
                                   .value = "true",
                                   .effect = "NoSchedule"})
                      .Build(),
                  "cq"}},
       .want_flavors = {{"a", {{"cpu", "spot"}}}}},
      {.name = "flavor_tolerations_tolerate_own_taints",
       .flavors = {ResourceFlavorBuilder("spot")
                       .Taint("spot", "true", "NoSchedule")
                       .Toleration({.key = "spot", .op = "Exists"})
                       .Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu"})
                              .Flavor("spot")
                              .Quota("cpu", "8")
                              .Build()},
       .heads = {{WorkloadBuilder("a").Request("cpu", "1").Build(), "cq"}},
       .want_flavors = {{"a", {{"cpu", "spot"}}}}},
      {.name = "node_selector_picks_matching_flavor",
       .flavors = {ResourceFlavorBuilder("x86")
                       .NodeLabel("kubernetes.io/arch", "amd64")
                       .Build(),
                   ResourceFlavorBuilder("arm")
                       .NodeLabel("kubernetes.io/arch", "arm64")
                       .Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu"})
                              .Flavor("x86")
                              .Quota("cpu", "8")
                              .Flavor("arm")
                              .Quota("cpu", "8")
                              .Build()},
       .heads = {{WorkloadBuilder("a")
                      .Request("cpu", "1")
                      .NodeSelector("kubernetes.io/arch", "arm64")
                      .NodeSelector("other-key", "ignored")
                      .Build(),
                  "cq"}},
       .want_flavors = {{"a", {{"cpu", "arm"}}}}},
      {.name = "required_affinity_on_foreign_keys_matches_all",
       .flavors = {ResourceFlavorBuilder("x86")
                       .NodeLabel("kubernetes.io/arch", "amd64")
                       .Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu"})
                              .Flavor("x86")
                              .Quota("cpu", "8")
                              .Build()},
       .heads = {{WorkloadBuilder("a")
                      .Request("cpu", "1")
                      .RequiredNodeAffinity("zone", "In", {"us-east"})
                      .Build(),
                  "cq"}},
       .want_flavors = {{"a", {{"cpu", "x86"}}}}},
      {.name = "required_affinity_excludes_flavor",
       .flavors = {ResourceFlavorBuilder("x86")
                       .NodeLabel("kubernetes.io/arch", "amd64")
                       .Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu"})
                              .Flavor("x86")
                              .Quota("cpu", "8")
                              .Build()},
       .heads = {{WorkloadBuilder("a")
                      .Request("cpu", "1")
                      .RequiredNodeAffinity("kubernetes.io/arch", "NotIn",
                                            {"amd64"})
                      .Build(),
                  "cq"}},
       .want_reasons = {{"a", "NoMatchingFlavor"}},
       .want_messages = {{"a",
                          "couldn't assign flavors to pod set main: flavor "
                          "x86 doesn't match node affinity"}}},
      {.name = "missing_flavor_is_reported",
       .flavors = {},
       .cluster_queues = {SimpleCq("cq", "4")},
       .heads = {{WorkloadBuilder("a").Request("cpu", "1").Build(), "cq"}},
       .want_reasons = {{"a", "Suspended"}},
       .want_messages = {{"a", "ClusterQueue cq is inactive"}}},
      {.name = "no_namespace_selector_admits_nothing",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .NoNamespaceSelector()
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "4")
                              .Build()},
       .heads = {{WorkloadBuilder("a").Request("cpu", "1").Build(), "cq"}},
       .want_reasons = {{"a", "Misconfigured"}},
       .want_messages = {{"a",
                          "workload namespace doesn't match ClusterQueue "
                          "selector"}}},
      {.name = "namespace_selector_matches_labels",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .NamespaceSelector(
                                  {.match_labels = {{"team", "ml"}}})
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "4")
                              .Build()},
       .namespaces = {NamespaceBuilder("ml").Label("team", "ml").Build()},
       .heads =
           {{WorkloadBuilder("a").Namespace("ml").Request("cpu", "1").Build(),
             "cq"},
            {WorkloadBuilder("b").Namespace("web").Request("cpu", "1").Build(),
             "cq"}},
       .want_flavors = {{"a", {{"cpu", "default"}}}},
       .want_reasons = {{"b", "Misconfigured"}}},
      {.name = "metadata_name_label_selects_unknown_namespace",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .NamespaceSelector(
                                  {.match_labels = {{"kubernetes.io/"
                                                     "metadata.name",
                                                     "team-a"}}})
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "4")
                              .Build()},
       .heads = {{WorkloadBuilder("a")
                      .Namespace("team-a")
                      .Request("cpu", "1")
                      .Build(),
                  "cq"}},
       .want_flavors = {{"a", {{"cpu", "default"}}}}},
      {.name = "failed_admission_checks_are_not_evaluated",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SimpleCq("cq", "4")},
       .heads = {{WorkloadBuilder("a")
                      .Request("cpu", "1")
                      .AdmissionCheck("prov", "Retry")
                      .Build(),
                  "cq"}},
       .want_reasons = {{"a", "PendingEvaluation"}}},
      // Kueue "two workloads in a cohort can't over-admit": both fit
      // when nominated, only the first processed is admitted.
      {.name = "cohort_prevents_over_admission_in_one_pass",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {ClusterQueueBuilder("a")
                              .Cohort("c")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "2")
                              .Build(),
                          ClusterQueueBuilder("b")
                              .Cohort("c")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "2")
                              .Build()},
       .heads = {{WorkloadBuilder("wa").Priority(1).Request("cpu", "3").Build(),
                  "a"},
                 {WorkloadBuilder("wb").Request("cpu", "3").Build(), "b"}},
       .want_flavors = {{"wa", {{"cpu", "default"}}}},
       .want_reasons = {{"wb", "WaitingForQuota"}},
       .want_messages = {{"wb",
                          "Workload no longer fits after processing another "
                          "workload"}}},
      {.name = "borrowing_limit_caps_borrowing",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {ClusterQueueBuilder("a")
                              .Cohort("c")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "2")
                              .BorrowingLimit("1")
                              .Build(),
                          ClusterQueueBuilder("b")
                              .Cohort("c")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "10")
                              .Build()},
       .heads = {{WorkloadBuilder("wa").Request("cpu", "4").Build(), "a"}},
       .want_reasons = {{"wa", "ExceedsMaxQuota"}}},
      {.name = "cohort_quota_is_shared",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {ClusterQueueBuilder("a")
                              .Cohort("c")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "0")
                              .Build()},
       .cohorts = {CohortBuilder("c")
                       .ResourceGroup({"cpu"})
                       .Flavor("default")
                       .Quota("cpu", "6")
                       .Build()},
       .heads = {{WorkloadBuilder("wa").Request("cpu", "5").Build(), "a"}},
       .want_flavors = {{"wa", {{"cpu", "default"}}}}},
      {.name = "pods_resource_counts_pods",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {ClusterQueueBuilder("cq")
                              .ResourceGroup({"cpu", "pods"})
                              .Flavor("default")
                              .Quota("cpu", "100")
                              .Quota("pods", "3")
                              .Build()},
       .heads =
           {{WorkloadBuilder("a").PodSet("main", 4).Request("cpu", "1").Build(),
             "cq"}},
       .want_reasons = {{"a", "ExceedsMaxQuota"}}},
      // Kueue "partial admission single variable pod set": 50 pods of 2
      // CPUs do not fit in 50 CPUs; the largest count down to minCount
      // 20 that fits is 25.
      {.name = "partial_admission_single_variable_pod_set",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SalesCq()},
       .heads = {{WorkloadBuilder("new")
                      .PodSet("one", 50)
                      .MinCount(20)
                      .Request("cpu", "2")
                      .Build(),
                  "sales"}},
       .want_flavors = {{"new", {{"cpu", "default"}}}},
       .want_admissions = {{"new", AdmissionBuilder("sales")
                                       .PodSet("one", 25)
                                       .Assign("cpu", "default", "50")
                                       .Build()}}},
      // Kueue "partial admission multiple variable pod sets".
      {.name = "partial_admission_multiple_variable_pod_sets",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {SalesCq()},
       .heads = {{WorkloadBuilder("new")
                      .PodSet("one", 20)
                      .Request("cpu", "1")
                      .PodSet("two", 30)
                      .MinCount(10)
                      .Request("cpu", "1")
                      .PodSet("three", 15)
                      .MinCount(5)
                      .Request("cpu", "1")
                      .Build(),
                  "sales"}},
       .want_flavors = {{"new", {{"cpu", "default"}}}},
       .want_admissions = {{"new", AdmissionBuilder("sales")
                                       .PodSet("one", 20)
                                       .Assign("cpu", "default", "20")
                                       .PodSet("two", 20)
                                       .Assign("cpu", "default", "20")
                                       .PodSet("three", 10)
                                       .Assign("cpu", "default", "10")
                                       .Build()}}},
      // Kueue "capacity not blocked when lending clusterqueue can reclaim
      // (ReclaimWithinCohort=Any)": a2 needs preemption and has no
      // candidates; A can always reclaim, so nothing is held and B
      // borrows.
      CapacityCase("capacity_not_blocked_when_lending_clusterqueue_can_"
                   "reclaim_reclaimwithincohort_any",
                   "Any", /*blocked=*/false),
      // Kueue "capacity blocked when lending clusterqueue not guaranteed
      // to reclaim (ReclaimWithinCohort=LowerPriority)": a2 holds the
      // capacity it would take for the rest of the pass.
      CapacityCase("capacity_blocked_when_lending_clusterqueue_not_"
                   "guaranteed_to_reclaim_reclaimwithincohort_lowerpriority",
                   "LowerPriority", /*blocked=*/true),
      // Kueue "... (ReclaimWithinCohort=Never)".
      CapacityCase("capacity_blocked_when_lending_clusterqueue_not_"
                   "guaranteed_to_reclaim_reclaimwithincohort_never",
                   "Never", /*blocked=*/true),
      // Kueue "in a hierarchical cohort, workload borrowing less is
      // scheduled first": guaranteed borrows from its own cohort (level 1),
      // best-effort from the root (level 2); the borrowing level beats the
      // higher priority of best-effort.
      {.name = "in_a_hierarchical_cohort_workload_borrowing_less_is_"
               "scheduled_first",
       .flavors = {ResourceFlavorBuilder("default").Build()},
       .cluster_queues = {ClusterQueueBuilder("guaranteed")
                              .Cohort("guaranteed")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "0")
                              .Build(),
                          ClusterQueueBuilder("best-effort")
                              .Cohort("root")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "0")
                              .Build()},
       .cohorts = {CohortBuilder("root").Build(), CohortBuilder("guaranteed")
                                                      .Parent("root")
                                                      .ResourceGroup({"cpu"})
                                                      .Flavor("default")
                                                      .Quota("cpu", "4")
                                                      .Build()},
       .heads = {{WorkloadBuilder("guaranteed")
                      .Priority(0)
                      .PodSet("one", 1)
                      .Request("cpu", "4")
                      .Build(),
                  "guaranteed"},
                 {WorkloadBuilder("best-effort")
                      .Priority(3)
                      .PodSet("one", 1)
                      .Request("cpu", "4")
                      .Build(),
                  "best-effort"}},
       .want_flavors = {{"guaranteed", {{"cpu", "default"}}}},
       .want_reasons = {{"best-effort", "WaitingForQuota"}},
       .want_messages = {{"best-effort",
                          "Workload no longer fits after processing another "
                          "workload"}}},
  };
}

std::vector<ScheduleCase> WithMemo(std::vector<ScheduleCase> cases) {
  for (ScheduleCase& c : cases) c.with_memo = true;
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ScheduleTest, ::testing::ValuesIn(ScheduleCases()),
    [](const ::testing::TestParamInfo<ScheduleCase>& info) {
      return info.param.name;
    });
INSTANTIATE_TEST_SUITE_P(
    WithNominationMemo, ScheduleTest,
    ::testing::ValuesIn(WithMemo(ScheduleCases())),
    [](const ::testing::TestParamInfo<ScheduleCase>& info) {
      return info.param.name;
    });

TEST(ScheduleOrderTest, HigherPriorityIsProcessedFirst) {
  std::map<std::string, ClusterQueue> cqs;
  for (const char* name : {"a", "b"}) {
    cqs[name] = ClusterQueueBuilder(name)
                    .Cohort("c")
                    .ResourceGroup({"cpu"})
                    .Flavor("default")
                    .Quota("cpu", "2")
                    .Build();
  }
  cache::Cache cache;
  cache.Rebuild(cqs, {}, {"default"}, {});
  std::map<std::string, ResourceFlavor> flavors{
      {"default", ResourceFlavorBuilder("default").Build()}};
  std::map<std::string, Namespace> namespaces;
  Workload low = WorkloadBuilder("low")
                     .Priority(1)
                     .Created(kNow - absl::Hours(1))
                     .Request("cpu", "3")
                     .Build();
  Workload high = WorkloadBuilder("high")
                      .Priority(5)
                      .Created(kNow)
                      .Request("cpu", "3")
                      .Build();
  CycleResult result = Schedule(cache, {{&low, "a"}, {&high, "b"}},
                                SchedulingContext{&flavors, &namespaces}, kNow);
  ASSERT_EQ(result.entries.size(), 2u);
  EXPECT_EQ(result.entries[0].workload->meta.name, "high");
  EXPECT_EQ(result.entries[0].status, EntryResult::Status::kAdmitted);
  EXPECT_EQ(result.entries[1].status, EntryResult::Status::kSkipped);
  // The admitted workload's usage is in the cache.
  EXPECT_EQ(cache.FindClusterQueue("b")->node.usage.at({"default", "cpu"}),
            3000);
}

TEST(AdmissionTest, ResourceUsageIsTotalForAllPods) {
  std::map<std::string, ClusterQueue> cqs{{"cq", SimpleCq("cq", "64")}};
  cache::Cache cache;
  cache.Rebuild(cqs, {}, {"default"}, {});
  std::map<std::string, ResourceFlavor> flavors{
      {"default", ResourceFlavorBuilder("default").Build()}};
  std::map<std::string, Namespace> namespaces;
  Workload wl =
      WorkloadBuilder("a").PodSet("main", 4).Request("cpu", "8").Build();
  CycleResult result = Schedule(cache, {{&wl, "cq"}},
                                SchedulingContext{&flavors, &namespaces}, kNow);
  ASSERT_EQ(result.entries.size(), 1u);
  const Admission& admission = result.entries[0].admission;
  EXPECT_EQ(admission, AdmissionBuilder("cq")
                           .PodSet("main", 4)
                           .Assign("cpu", "default", "32")
                           .Build());
}

// The capacity a Preempt head without candidates holds is only held for the
// pass: the live cache is back to the admitted usage afterwards, and the
// entry says why it was not admitted.
TEST(ScheduleReservationTest, HeldCapacityIsReleasedAfterThePass) {
  ScheduleCase tc = CapacityCase("held", "Never", /*blocked=*/true);
  std::map<std::string, ClusterQueue> cqs;
  for (const ClusterQueue& cq : tc.cluster_queues) cqs[cq.meta.name] = cq;
  cache::Cache cache;
  cache.Rebuild(cqs, {}, {"on-demand"}, {});
  for (const Workload& wl : tc.admitted) {
    cache.FindClusterQueue(wl.admission->cluster_queue)
        ->AddUsage(cache::UsageOf(*wl.admission));
  }
  std::map<std::string, ResourceFlavor> flavors{
      {"on-demand", ResourceFlavorBuilder("on-demand").Build()}};
  std::map<std::string, Namespace> namespaces;
  std::vector<scheduler::Head> heads;
  for (const Head& h : tc.heads)
    heads.push_back({&h.workload, h.cluster_queue});

  CycleResult result =
      Schedule(cache, heads, SchedulingContext{&flavors, &namespaces}, kNow);

  ASSERT_EQ(result.entries.size(), 2u);
  const EntryResult& a2 = result.entries[0];
  EXPECT_EQ(a2.workload->meta.name, "a2-pending");
  EXPECT_EQ(a2.status, EntryResult::Status::kNoFit);
  EXPECT_TRUE(a2.no_preemption_candidates);
  EXPECT_EQ(a2.mode, AssignmentMode::kPreempt);
  EXPECT_EQ(a2.borrowing, 1);
  EXPECT_EQ(result.entries[1].status, EntryResult::Status::kSkipped);
  const cache::FlavorResource gpu{"on-demand", "gpu"};
  EXPECT_EQ(cache.FindClusterQueue("ClusterQueueA")->node.usage.at(gpu), 1);
  EXPECT_EQ(cache.FindCohort("root")->node.usage.at(gpu), 1);
}

// The bookmark round trip through Schedule(): each entry returns the scan
// state to keep, a head passed back resumes after the flavor it last tried,
// and an old bookmark is dropped once the ClusterQueue's generation moved.
TEST(ScheduleBookmarkTest, ResumesAndExpires) {
  std::map<std::string, ClusterQueue> cqs{{"cq", ClusterQueueBuilder("cq")
                                                     .ResourceGroup({"cpu"})
                                                     .Flavor("one")
                                                     .Quota("cpu", "4")
                                                     .Flavor("two")
                                                     .Quota("cpu", "4")
                                                     .Build()}};
  std::map<std::string, ResourceFlavor> flavors{
      {"one", ResourceFlavorBuilder("one").Build()},
      {"two", ResourceFlavorBuilder("two").Build()}};
  std::map<std::string, Namespace> namespaces;
  std::map<std::string, int64_t> generations{{"cq", 1}};
  Workload wl = WorkloadBuilder("a").Request("cpu", "1").Build();
  auto run = [&](const LastAssignment* last, int64_t cycle) {
    cache::Cache cache;
    cache.Rebuild(cqs, {}, {"one", "two"}, {});
    SchedulingContext context{&flavors, &namespaces};
    context.scheduling_cycle = cycle;
    context.cluster_queue_generations = &generations;
    CycleResult result = Schedule(cache, {{&wl, "cq", last}}, context, kNow);
    EXPECT_EQ(result.entries.size(), 1u);
    return result.entries.at(0);
  };

  EntryResult first = run(nullptr, 1);
  ASSERT_EQ(first.status, EntryResult::Status::kAdmitted);
  EXPECT_EQ(first.admission.pod_set_assignments[0].flavors.at("cpu"), "one");
  ASSERT_TRUE(first.last_assignment.has_value());
  EXPECT_EQ(*first.last_assignment,
            (LastAssignment{.last_tried_flavor_idx = {{{"cpu", 0}}},
                            .cluster_queue_generation = 1,
                            .scheduling_cycle = 1}));

  // The next cycle resumes after flavor one.
  EntryResult second = run(&*first.last_assignment, 2);
  EXPECT_EQ(second.admission.pod_set_assignments[0].flavors.at("cpu"), "two");

  // Two cycles later with the generation moved: outdated, start over.
  generations["cq"] = 2;
  EntryResult third = run(&*first.last_assignment, 3);
  EXPECT_EQ(third.admission.pod_set_assignments[0].flavors.at("cpu"), "one");
}

// A head that is not evaluated keeps the bookmark it came with.
TEST(ScheduleBookmarkTest, InadmissibleHeadKeepsItsBookmark) {
  std::map<std::string, ClusterQueue> cqs{{"cq", SimpleCq("cq", "4")}};
  cache::Cache cache;
  cache.Rebuild(cqs, {}, {"default"}, {});
  std::map<std::string, ResourceFlavor> flavors{
      {"default", ResourceFlavorBuilder("default").Build()}};
  std::map<std::string, Namespace> namespaces;
  Workload wl = WorkloadBuilder("a")
                    .Request("cpu", "1")
                    .AdmissionCheck("prov", "Retry")
                    .Build();
  LastAssignment last{.last_tried_flavor_idx = {{{"cpu", 0}}}};
  CycleResult result = Schedule(cache, {{&wl, "cq", &last}},
                                SchedulingContext{&flavors, &namespaces}, kNow);
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].status, EntryResult::Status::kInadmissible);
  EXPECT_EQ(result.entries[0].last_assignment, last);
}

// A scripted oracle: every simulated preemption is possible in the
// preemptor's own ClusterQueue, and the targets of each preemptor are
// given by name. Schedule() is what is under test.
class ScriptedOracle : public PreemptionOracle {
 public:
  explicit ScriptedOracle(
      std::map<std::string, std::vector<PreemptionTarget>> targets)
      : targets_(std::move(targets)) {}
  PreemptionSimulation SimulatePreemption(const cache::ClusterQueueSnapshot& cq,
                                          const Workload& workload,
                                          const cache::FlavorResource& fr,
                                          int64_t quantity) const override {
    return {PreemptionPossibility::kPreempt, 0};
  }
  std::vector<PreemptionTarget> GetTargets(
      const cache::ClusterQueueSnapshot& cq, const Workload& workload,
      const Assignment& assignment) const override {
    auto it = targets_.find(workload.meta.name);
    return it == targets_.end() ? std::vector<PreemptionTarget>{} : it->second;
  }

 private:
  std::map<std::string, std::vector<PreemptionTarget>> targets_;
};

// Two preemptors of one pass name the same victim: the first (higher
// priority) preempts, the second is skipped (Kueue's overlapping-targets
// rule); the capacity the first holds for the pass is released after it.
TEST(SchedulePreemptionTest, OverlappingTargetsAreSkipped) {
  std::map<std::string, ClusterQueue> cqs{{"cq1", SimpleCq("cq1", "2")},
                                          {"cq2", SimpleCq("cq2", "2")}};
  cqs["cq1"].cohort_name = "co";
  cqs["cq2"].cohort_name = "co";
  cache::Cache cache;
  cache.Rebuild(cqs, {}, {"default"}, {});
  std::map<std::string, ResourceFlavor> flavors{
      {"default", ResourceFlavorBuilder("default").Build()}};
  std::map<std::string, Namespace> namespaces;
  const Workload victim =
      WorkloadBuilder("victim")
          .Request("cpu", "2")
          .ReserveQuota(
              AdmissionBuilder("cq1").Assign("cpu", "default", "2").Build(),
              kNow)
          .Build();
  const Workload holder =
      WorkloadBuilder("holder")
          .Request("cpu", "2")
          .ReserveQuota(
              AdmissionBuilder("cq2").Assign("cpu", "default", "2").Build(),
              kNow)
          .Build();
  cache.FindClusterQueue("cq1")->AddUsage(cache::UsageOf(*victim.admission));
  cache.FindClusterQueue("cq2")->AddUsage(cache::UsageOf(*holder.admission));
  const Workload first =
      WorkloadBuilder("first").Priority(10).Request("cpu", "2").Build();
  const Workload second =
      WorkloadBuilder("second").Priority(5).Request("cpu", "2").Build();
  const PreemptionTarget target{&victim, "InClusterQueue", "cq1"};
  ScriptedOracle oracle({{"first", {target}}, {"second", {target}}});
  SchedulingContext context{&flavors, &namespaces};
  context.oracle = &oracle;

  CycleResult result =
      Schedule(cache, {{&second, "cq2", nullptr}, {&first, "cq1", nullptr}},
               context, kNow);

  ASSERT_EQ(result.entries.size(), 2u);
  const EntryResult& got_first = result.entries[0];
  EXPECT_EQ(got_first.workload, &first);
  EXPECT_EQ(got_first.status, EntryResult::Status::kPreempting);
  EXPECT_EQ(got_first.reason, "WaitingForPreemptedWorkloads");
  EXPECT_EQ(got_first.message,
            "couldn't assign flavors to pod set main: insufficient unused "
            "quota for cpu in flavor default, 2 more needed. Pending the "
            "preemption of 1 workload(s)");
  EXPECT_EQ(got_first.victims, std::vector<PreemptionTarget>{target});
  EXPECT_FALSE(got_first.last_assignment.has_value());
  const EntryResult& got_second = result.entries[1];
  EXPECT_EQ(got_second.workload, &second);
  EXPECT_EQ(got_second.status, EntryResult::Status::kSkipped);
  EXPECT_EQ(got_second.reason, kReasonWaitingForQuota);
  EXPECT_EQ(got_second.message,
            "Workload has overlapping preemption targets with another "
            "workload");
  EXPECT_TRUE(got_second.victims.empty());
  // Nothing was evicted or admitted: the usage is what the holders hold.
  const cache::FlavorResource cpu{"default", "cpu"};
  const cache::ClusterQueueSnapshot& cq1 = *cache.FindClusterQueue("cq1");
  EXPECT_EQ(cq1.node.Get(cq1.node.usage, cpu), 2'000);
  EXPECT_EQ(cq1.parent->node.Get(cq1.parent->node.usage, cpu), 4'000);
}

// A preemptor whose targets would not free enough quota once the pass's
// earlier admissions are counted is skipped, not preempting.
TEST(SchedulePreemptionTest, PreemptorThatNoLongerFitsIsSkipped) {
  std::map<std::string, ClusterQueue> cqs{{"cq", SimpleCq("cq", "4")}};
  cache::Cache cache;
  cache.Rebuild(cqs, {}, {"default"}, {});
  std::map<std::string, ResourceFlavor> flavors{
      {"default", ResourceFlavorBuilder("default").Build()}};
  std::map<std::string, Namespace> namespaces;
  const Workload victim =
      WorkloadBuilder("victim")
          .Request("cpu", "1")
          .ReserveQuota(
              AdmissionBuilder("cq").Assign("cpu", "default", "1").Build(),
              kNow)
          .Build();
  cache.FindClusterQueue("cq")->AddUsage(cache::UsageOf(*victim.admission));
  // 3 CPUs free: "small" fits and, with the higher priority, goes first;
  // "big" needs 4 and names a 1-CPU victim, which is enough only before
  // "small" takes 3.
  const Workload small =
      WorkloadBuilder("small").Priority(0).Request("cpu", "3").Build();
  const Workload big =
      WorkloadBuilder("big").Priority(-1).Request("cpu", "4").Build();
  ScriptedOracle oracle({{"big", {{&victim, "InClusterQueue", "cq"}}}});
  SchedulingContext context{&flavors, &namespaces};
  context.oracle = &oracle;

  CycleResult result = Schedule(
      cache, {{&big, "cq", nullptr}, {&small, "cq", nullptr}}, context, kNow);

  ASSERT_EQ(result.entries.size(), 2u);
  EXPECT_EQ(result.entries[0].workload, &small);
  EXPECT_EQ(result.entries[0].status, EntryResult::Status::kAdmitted);
  EXPECT_EQ(result.entries[1].workload, &big);
  EXPECT_EQ(result.entries[1].mode, AssignmentMode::kPreempt);
  EXPECT_EQ(result.entries[1].status, EntryResult::Status::kSkipped);
  EXPECT_EQ(result.entries[1].message,
            "Workload no longer fits after processing another workload");
  EXPECT_TRUE(result.entries[1].victims.empty());
}

}  // namespace
}  // namespace kq::scheduler
