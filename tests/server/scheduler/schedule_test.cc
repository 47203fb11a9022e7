// One scheduling pass, table-driven: each case is a cluster state, the
// heads of the pass, and what must be admitted (with which flavors) and why
// the others are not. Case names follow Kueue's TestSchedule where a case
// is a port of one.

#include <map>
#include <string>
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
};

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

  cache::Cache cache;
  cache.Rebuild(cqs, cohorts, flavor_names, {});
  for (const Workload& wl : tc.admitted) {
    cache.FindClusterQueue(wl.admission->cluster_queue)
        ->AddUsage(cache::UsageOf(*wl.admission));
  }
  std::vector<scheduler::Head> heads;
  for (const Head& h : tc.heads)
    heads.push_back({&h.workload, h.cluster_queue});

  CycleResult result =
      Schedule(cache, heads, SchedulingContext{&flavors, &namespaces}, kNow);

  std::map<std::string, std::map<std::string, std::string>> got_flavors;
  std::map<std::string, std::string> got_reasons;
  std::map<std::string, std::string> got_messages;
  for (const EntryResult& e : result.entries) {
    const std::string& name = e.workload->meta.name;
    if (e.status == EntryResult::Status::kAdmitted) {
      ASSERT_EQ(e.admission.cluster_queue, e.cluster_queue);
      got_flavors[name] = e.admission.pod_set_assignments.at(0).flavors;
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
}

ClusterQueue SimpleCq(std::string name, std::string cpu) {
  return ClusterQueueBuilder(std::move(name))
      .ResourceGroup({"cpu"})
      .Flavor("default")
      .Quota("cpu", cpu)
      .Build();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ScheduleTest,
    ::testing::ValuesIn(std::vector<ScheduleCase>{
        {.name = "single_flavor_fits",
         .flavors = {ResourceFlavorBuilder("default").Build()},
         .cluster_queues = {SimpleCq("cq", "4")},
         .heads = {{WorkloadBuilder("a")
                        .PodSet("main", 2)
                        .Request("cpu", "2")
                        .Build(),
                    "cq"}},
         .want_flavors = {{"a", {{"cpu", "default"}}}}},
        {.name = "exceeds_nominal_quota",
         .flavors = {ResourceFlavorBuilder("default").Build()},
         .cluster_queues = {SimpleCq("cq", "4")},
         .heads = {{WorkloadBuilder("a")
                        .PodSet("main", 5)
                        .Request("cpu", "1")
                        .Build(),
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
                                .NamespaceSelector({.match_labels = {{"team",
                                                                      "ml"}}})
                                .ResourceGroup({"cpu"})
                                .Flavor("default")
                                .Quota("cpu", "4")
                                .Build()},
         .namespaces = {NamespaceBuilder("ml").Label("team", "ml").Build()},
         .heads =
             {{WorkloadBuilder("a").Namespace("ml").Request("cpu", "1").Build(),
               "cq"},
              {WorkloadBuilder("b")
                   .Namespace("web")
                   .Request("cpu", "1")
                   .Build(),
               "cq"}},
         .want_flavors = {{"a", {{"cpu", "default"}}}},
         .want_reasons = {{"b", "Misconfigured"}}},
        {.name = "metadata_name_label_selects_unknown_namespace",
         .flavors = {ResourceFlavorBuilder("default").Build()},
         .cluster_queues =
             {ClusterQueueBuilder("cq")
                  .NamespaceSelector({.match_labels = {{"kubernetes.io/"
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
         .heads =
             {{WorkloadBuilder("wa").Priority(1).Request("cpu", "3").Build(),
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
         .heads = {{WorkloadBuilder("a")
                        .PodSet("main", 4)
                        .Request("cpu", "1")
                        .Build(),
                    "cq"}},
         .want_reasons = {{"a", "ExceedsMaxQuota"}}},
    }),
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

}  // namespace
}  // namespace kq::scheduler
