// The Active condition of ClusterQueues and cohort membership, ported from
// Kueue's pkg/cache/scheduler tests:
//   clusterqueue_test.go  TestClusterQueueUpdateWithFlavors,
//                         TestClusterQueueUpdateWithAdmissionCheck
//   cache_test.go         TestClusterQueueReadiness,
//                         TestCacheClusterQueueOperations
// Kueue applies add/update/delete events to a stateful cache; kq rebuilds
// the tree from the whole configuration, so a case gives the configuration
// the events leave behind (its "current status" is the previous
// configuration, which cannot change the outcome).
//
// Not ported, and why:
//   - Terminating ClusterQueues (every "Terminating ..." case, "terminating"):
//     kq deletes a ClusterQueue at once, there is no finalizer phase.
//   - TestClusterQueueReadinessWithTAS: TAS is out of scope.
//   - "queue not found" (TestClusterQueueReadiness): answered by the engine
//     (NotFound), not by the cache.
//   - TestClusterQueueUpdate (AllocatableResourceGeneration): kq has no flavor
//     scan bookmarks to invalidate.
//   - TestCacheClusterQueueOperations "add ClusterQueue with preemption
//     policies", "... with fair sharing weight", "add CQ with multiple
//     resource groups and flavors" (flavors without names) and "add cluster
//     queue after finished workloads" (which workloads hold quota is the
//     engine's to say), and every field of the expected clusterQueue other
//     than its status, cohort and usage.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "tests/server/cache/cache_test_util.h"
#include "tests/testing/builders.h"

namespace kq::cache {
namespace {

using ::kq::cache::test_util::ByName;
using ::kq::cache::test_util::CohortMembers;
using ::kq::cache::test_util::InactiveClusterQueues;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;

// ---------------------------------------------------------------------------
// The Active condition of one ClusterQueue.

struct ActiveCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const ActiveCase& c, std::ostream* os) { *os << c.name; }
  ClusterQueue cluster_queue;
  std::set<std::string> flavors;
  std::set<std::string> admission_checks;
  std::set<std::string> inactive_admission_checks;
  // Check name -> spec.controllerName (Kueue's AdmissionCheck.Controller).
  std::map<std::string, std::string> check_controllers;
  bool want_active = false;
  std::string want_reason;
  std::string want_message;
};

class ActiveConditionTest : public ::testing::TestWithParam<ActiveCase> {};

TEST_P(ActiveConditionTest, ReasonAndMessage) {
  const ActiveCase& tc = GetParam();
  Cache cache;
  cache.Rebuild(ByName(std::vector<ClusterQueue>{tc.cluster_queue}), {},
                tc.flavors, tc.admission_checks, tc.inactive_admission_checks,
                tc.check_controllers);
  const ClusterQueueSnapshot* cq =
      cache.FindClusterQueue(tc.cluster_queue.meta.name);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq->active, tc.want_active);
  EXPECT_EQ(cq->active_reason, tc.want_reason);
  EXPECT_EQ(cq->active_message, tc.want_message);
}

// clusterqueue_test.go's cqWithAC and cqWithACStrategy: kq keeps
// spec.admissionChecks and admissionChecksStrategy as one list of rules.
ClusterQueue CqWithAc() {
  return ClusterQueueBuilder("cq")
      .AdmissionCheck("check1")
      .AdmissionCheck("check2")
      .AdmissionCheck("check3")
      .Build();
}
ClusterQueue CqWithAcStrategy() {
  return ClusterQueueBuilder("cq2")
      .AdmissionCheck("check1")
      .AdmissionCheck("check2")
      .AdmissionCheck("check3")
      .Build();
}
// cache_test.go's baseQueue.
ClusterQueue BaseQueue() {
  return ClusterQueueBuilder("queue1")
      .Quota("flavor1", "cpu", "10")
      .BorrowingLimit("10")
      .AdmissionCheck("check1")
      .Build();
}

constexpr char kReadyMessage[] = "Can admit new workloads";

INSTANTIATE_TEST_SUITE_P(
    UpdateWithFlavors, ActiveConditionTest,
    ::testing::ValuesIn(std::vector<ActiveCase>{
        {
            .name = "pending_clusterqueue_updated_existent_flavors",
            .cluster_queue =
                ClusterQueueBuilder("cq").Quota("x86", "cpu", "5").Build(),
            .flavors = {"x86"},
            .want_active = true,
            .want_reason = "Ready",
            .want_message = kReadyMessage,
        },
        {
            .name = "active_clusterqueue_updated_with_not_found_flavors",
            .cluster_queue =
                ClusterQueueBuilder("cq").Quota("x86", "cpu", "5").Build(),
            .flavors = {},
            .want_active = false,
            .want_reason = "FlavorNotFound",
            .want_message = "Can't admit new workloads: references missing "
                            "ResourceFlavor(s): x86.",
        },
    }),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    UpdateWithAdmissionCheck, ActiveConditionTest,
    ::testing::ValuesIn(std::vector<ActiveCase>{
        {
            .name = "pending_clusterqueue_updated_valid_ac_list",
            .cluster_queue = CqWithAc(),
            .admission_checks = {"check1", "check2", "check3"},
            .want_active = true,
            .want_reason = "Ready",
            .want_message = kReadyMessage,
        },
        {
            .name = "pending_clusterqueue_with_an_ac_strategy_updated_valid_ac_"
                    "list",
            .cluster_queue = CqWithAcStrategy(),
            .admission_checks = {"check1", "check2", "check3"},
            .want_active = true,
            .want_reason = "Ready",
            .want_message = kReadyMessage,
        },
        {
            .name = "active_clusterqueue_updated_with_not_found_ac",
            .cluster_queue = CqWithAc(),
            .admission_checks = {"check1", "check2"},
            .want_active = false,
            .want_reason = "AdmissionCheckNotFound",
            .want_message = "Can't admit new workloads: references missing "
                            "AdmissionCheck(s): check3.",
        },
        {
            .name = "active_clusterqueue_with_an_ac_strategy_updated_with_not_"
                    "found_ac",
            .cluster_queue = CqWithAcStrategy(),
            .admission_checks = {"check1", "check2"},
            .want_active = false,
            .want_reason = "AdmissionCheckNotFound",
            .want_message = "Can't admit new workloads: references missing "
                            "AdmissionCheck(s): check3.",
        },
        {
            .name = "active_clusterqueue_updated_with_inactive_ac",
            .cluster_queue = CqWithAc(),
            .admission_checks = {"check1", "check2", "check3"},
            .inactive_admission_checks = {"check3"},
            .want_active = false,
            .want_reason = "AdmissionCheckInactive",
            .want_message = "Can't admit new workloads: references inactive "
                            "AdmissionCheck(s): check3.",
        },
        {
            .name = "active_clusterqueue_with_an_ac_strategy_updated_with_"
                    "inactive_ac",
            .cluster_queue = CqWithAcStrategy(),
            .admission_checks = {"check1", "check2", "check3"},
            .inactive_admission_checks = {"check3"},
            .want_active = false,
            .want_reason = "AdmissionCheckInactive",
            .want_message = "Can't admit new workloads: references inactive "
                            "AdmissionCheck(s): check3.",
        },
        {
            // Two checks with the same (non-MultiKueue) controller are fine.
            .name = "active_clusterqueue_with_an_ac_strategy_updated",
            .cluster_queue = CqWithAcStrategy(),
            .admission_checks = {"check1", "check2", "check3"},
            .want_active = true,
            .want_reason = "Ready",
            .want_message = kReadyMessage,
        },
        {
            .name = "active_clusterqueue_with_an_multikueue_ac_strategy_"
                    "updated_with_duplicate_single_instance_ac_controller",
            .cluster_queue = CqWithAcStrategy(),
            .admission_checks = {"check1", "check2", "check3"},
            .check_controllers = {{"check1", kMultiKueueControllerName},
                                  {"check2", "controller2"},
                                  {"check3", kMultiKueueControllerName}},
            .want_active = false,
            .want_reason = "MultipleMultiKueueAdmissionChecks",
            .want_message = "Can't admit new workloads: Cannot use multiple "
                            "MultiKueue AdmissionChecks on the same "
                            "ClusterQueue, found: check1,check3.",
        },
        {
            .name = "active_clusterqueue_with_both_multikueue_and_"
                    "provisioningrequest_acs",
            .cluster_queue = CqWithAc(),
            .admission_checks = {"check1", "check2", "check3"},
            .check_controllers = {{"check1", kMultiKueueControllerName},
                                  {"check2", "controller2"},
                                  {"check3",
                                   kProvisioningRequestControllerName}},
            .want_active = false,
            .want_reason = "MultiKueueWithProvisioningRequest",
            .want_message = "Can't admit new workloads: Cannot use both "
                            "MultiKueue and ProvisioningRequest "
                            "AdmissionChecks together, found: check1, check3.",
        },
        {
            // clusterqueue_controller_test.go, "Only one MultiKueue flavor
            // dependent admission check assigned to cluster queue".
            .name = "multikueue_check_applied_per_flavor",
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Quota("arch-a", "cpu", "5")
                                 .Quota("arch-b", "cpu", "5")
                                 .AdmissionCheck("check1", {"arch-a"})
                                 .Build(),
            .flavors = {"arch-a", "arch-b"},
            .admission_checks = {"check1"},
            .check_controllers = {{"check1", kMultiKueueControllerName}},
            .want_active = false,
            .want_reason = "MultiKueueAdmissionCheckAppliedPerFlavor",
            .want_message = "Can't admit new workloads: Cannot specify "
                            "MultiKueue AdmissionCheck per flavor, found: "
                            "check1.",
        },
        {
            // kq: onFlavors naming every flavor is no per-flavor rule
            // (Kueue compares the sets).
            .name = "multikueue_check_on_every_flavor",
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Quota("arch-a", "cpu", "5")
                                 .Quota("arch-b", "cpu", "5")
                                 .AdmissionCheck("check1", {"arch-b", "arch-a"})
                                 .Build(),
            .flavors = {"arch-a", "arch-b"},
            .admission_checks = {"check1"},
            .check_controllers = {{"check1", kMultiKueueControllerName}},
            .want_active = true,
            .want_reason = "Ready",
            .want_message = kReadyMessage,
        },
        {
            // kq: the three MultiKueue reasons follow the others, in
            // Kueue's order; the first is the condition's reason.
            .name = "multikueue_reasons_after_inactive",
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Quota("arch-a", "cpu", "5")
                                 .Quota("arch-b", "cpu", "5")
                                 .AdmissionCheck("mk1", {"arch-a"})
                                 .AdmissionCheck("mk2")
                                 .AdmissionCheck("prov")
                                 .Build(),
            .flavors = {"arch-a", "arch-b"},
            .admission_checks = {"mk1", "mk2", "prov"},
            .inactive_admission_checks = {"mk2"},
            .check_controllers = {{"mk1", kMultiKueueControllerName},
                                  {"mk2", kMultiKueueControllerName},
                                  {"prov", kProvisioningRequestControllerName}},
            .want_active = false,
            .want_reason = "AdmissionCheckInactive",
            .want_message =
                "Can't admit new workloads: references inactive "
                "AdmissionCheck(s): mk2, Cannot use multiple MultiKueue "
                "AdmissionChecks on the same ClusterQueue, found: mk1,mk2, "
                "Cannot specify MultiKueue AdmissionCheck per flavor, found: "
                "mk1, Cannot use both MultiKueue and ProvisioningRequest "
                "AdmissionChecks together, found: mk1,mk2, prov.",
        },
        {
            // kq: missing and inactive checks are listed sorted, whatever
            // the order of the rules (Kueue keeps them in a map).
            .name = "missing_and_inactive_checks_sorted",
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .AdmissionCheck("zeta")
                                 .AdmissionCheck("beta")
                                 .AdmissionCheck("alpha")
                                 .AdmissionCheck("gamma")
                                 .Build(),
            .admission_checks = {"alpha", "zeta"},
            .inactive_admission_checks = {"zeta", "alpha"},
            .want_active = false,
            .want_reason = "AdmissionCheckNotFound",
            .want_message = "Can't admit new workloads: references missing "
                            "AdmissionCheck(s): beta,gamma, references "
                            "inactive AdmissionCheck(s): alpha,zeta.",
        },
    }),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Readiness, ActiveConditionTest,
    ::testing::ValuesIn(std::vector<ActiveCase>{
        {
            .name = "flavor_not_found",
            .cluster_queue = BaseQueue(),
            .admission_checks = {"check1"},
            .want_active = false,
            .want_reason = "FlavorNotFound",
            .want_message = "Can't admit new workloads: references missing "
                            "ResourceFlavor(s): flavor1.",
        },
        {
            .name = "check_not_found",
            .cluster_queue = BaseQueue(),
            .flavors = {"flavor1"},
            .want_active = false,
            .want_reason = "AdmissionCheckNotFound",
            .want_message = "Can't admit new workloads: references missing "
                            "AdmissionCheck(s): check1.",
        },
        {
            .name = "check_inactive",
            .cluster_queue = BaseQueue(),
            .flavors = {"flavor1"},
            .admission_checks = {"check1"},
            .inactive_admission_checks = {"check1"},
            .want_active = false,
            .want_reason = "AdmissionCheckInactive",
            .want_message = "Can't admit new workloads: references inactive "
                            "AdmissionCheck(s): check1.",
        },
        {
            .name = "flavor_and_check_not_found",
            .cluster_queue = BaseQueue(),
            .want_active = false,
            .want_reason = "FlavorNotFound",
            .want_message = "Can't admit new workloads: references missing "
                            "ResourceFlavor(s): flavor1, references missing "
                            "AdmissionCheck(s): check1.",
        },
        {
            .name = "ready",
            .cluster_queue = BaseQueue(),
            .flavors = {"flavor1"},
            .admission_checks = {"check1"},
            .want_active = true,
            .want_reason = "Ready",
            .want_message = kReadyMessage,
        },
        {
            .name = "stopped",
            .cluster_queue = ClusterQueueBuilder("queue1")
                                 .StopPolicy(StopPolicy::kHoldAndDrain)
                                 .Build(),
            .want_active = false,
            .want_reason = "Stopped",
            .want_message = "Can't admit new workloads: is stopped.",
        },
        {
            // kq: every reason is listed, the first one is the reason; the
            // missing flavors follow resource-group order.
            .name = "stopped_with_missing_flavors_and_checks",
            .cluster_queue = ClusterQueueBuilder("queue1")
                                 .StopPolicy(StopPolicy::kHold)
                                 .ResourceGroup({"cpu"})
                                 .Quota("zz", "cpu", "1")
                                 .Quota("aa", "cpu", "1")
                                 .ResourceGroup({"memory"})
                                 .Quota("mm", "memory", "1")
                                 .AdmissionCheck("check1")
                                 .Build(),
            .want_active = false,
            .want_reason = "Stopped",
            .want_message =
                "Can't admit new workloads: is stopped, references missing "
                "ResourceFlavor(s): zz,aa,mm, references missing "
                "AdmissionCheck(s): check1.",
        },
    }),
    [](const auto& info) { return info.param.name; });

// Kueue truncates condition messages to 32 KiB with a " ..." suffix.
TEST(ActiveConditionMessageTest, TruncatedAt32KiB) {
  ClusterQueueBuilder builder("cq");
  for (int i = 0; i < 2000; ++i) {
    builder.AdmissionCheck("a-rather-long-admission-check-name-" +
                           std::to_string(10000 + i));
  }
  Cache cache;
  cache.Rebuild(ByName(std::vector<ClusterQueue>{builder.Build()}), {}, {}, {});
  const std::string& message = cache.FindClusterQueue("cq")->active_message;
  EXPECT_EQ(message.size(), 32u * 1024);
  EXPECT_EQ(message.substr(message.size() - 4), " ...");
  EXPECT_EQ(message.rfind("Can't admit new workloads: references missing "
                          "AdmissionCheck(s): a-rather-long",
                          0),
            0u);
}

// ---------------------------------------------------------------------------
// TestCacheClusterQueueOperations: which queues are active and which
// queues each cohort holds once the operations are applied.

struct OperationsCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const OperationsCase& c, std::ostream* os) {
    *os << c.name;
  }
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  std::set<std::string> flavors;
  std::set<std::string> admission_checks;
  std::set<std::string> inactive_admission_checks;
  std::set<std::string> want_active;
  std::set<std::string> want_inactive;
  std::map<std::string, std::set<std::string>> want_cohorts;
};

class CacheClusterQueueOperationsTest
    : public ::testing::TestWithParam<OperationsCase> {};

TEST_P(CacheClusterQueueOperationsTest, StatusAndCohorts) {
  const OperationsCase& tc = GetParam();
  Cache cache;
  cache.Rebuild(ByName(tc.cluster_queues), ByName(tc.cohorts), tc.flavors,
                tc.admission_checks, tc.inactive_admission_checks);
  std::set<std::string> got_active;
  for (const auto& [name, cq] : cache.cluster_queues()) {
    if (cq->active) got_active.insert(name);
  }
  EXPECT_EQ(got_active, tc.want_active);
  EXPECT_EQ(InactiveClusterQueues(cache), tc.want_inactive);
  EXPECT_EQ(CohortMembers(cache), tc.want_cohorts);
}

// The ClusterQueues of Kueue's setup (initialClusterQueues).
ClusterQueue InitialA() {
  return ClusterQueueBuilder("a")
      .Quota("default", "cpu", "10")
      .BorrowingLimit("10")
      .Cohort("one")
      .NoNamespaceSelector()
      .Build();
}
ClusterQueue InitialB() {
  return ClusterQueueBuilder("b")
      .Quota("default", "cpu", "15")
      .Cohort("one")
      .NoNamespaceSelector()
      .Build();
}
ClusterQueue InitialC() {
  return ClusterQueueBuilder("c").Cohort("two").NoNamespaceSelector().Build();
}
ClusterQueue InitialD() {
  return ClusterQueueBuilder("d").NoNamespaceSelector().Build();
}
ClusterQueue InitialE() {
  return ClusterQueueBuilder("e")
      .Quota("nonexistent-flavor", "cpu", "15")
      .Cohort("two")
      .NoNamespaceSelector()
      .Build();
}
ClusterQueue InitialF() {
  return ClusterQueueBuilder("f")
      .Cohort("two")
      .NoNamespaceSelector()
      .WhenCanBorrow(FungibilityPolicy::kTryNextFlavor)
      .Build();
}
std::vector<ClusterQueue> InitialClusterQueues() {
  return {InitialA(), InitialB(), InitialC(),
          InitialD(), InitialE(), InitialF()};
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, CacheClusterQueueOperationsTest,
    ::testing::ValuesIn(std::vector<OperationsCase>{
        {
            .name = "add",
            .cluster_queues = InitialClusterQueues(),
            .flavors = {"default"},
            .want_active = {"a", "b", "c", "d", "f"},
            .want_inactive = {"e"},
            .want_cohorts = {{"one", {"a", "b"}}, {"two", {"c", "e", "f"}}},
        },
        {
            // The flavor arrives after the queues: same end state.
            .name = "add_flavors_after_queue_capacities",
            .cluster_queues = InitialClusterQueues(),
            .flavors = {"default"},
            .want_active = {"a", "b", "c", "d", "f"},
            .want_inactive = {"e"},
            .want_cohorts = {{"one", {"a", "b"}}, {"two", {"c", "e", "f"}}},
        },
        {
            .name = "update",
            .cluster_queues = {ClusterQueueBuilder("a")
                                   .Quota("default", "cpu", "5")
                                   .BorrowingLimit("5")
                                   .Cohort("two")
                                   .NoNamespaceSelector()
                                   .Build(),
                               // The only resource group removed.
                               ClusterQueueBuilder("b").Cohort("one").Build(),
                               InitialC(), InitialD(),
                               ClusterQueueBuilder("e")
                                   .Quota("default", "cpu", "5")
                                   .BorrowingLimit("5")
                                   .LendingLimit("4")
                                   .Cohort("two")
                                   .NoNamespaceSelector()
                                   .Build(),
                               InitialF()},
            .flavors = {"default"},
            .want_active = {"a", "b", "c", "d", "e", "f"},
            .want_cohorts = {{"one", {"b"}}, {"two", {"a", "c", "e", "f"}}},
        },
        {
            // Cohort one goes as its members move to another cohort (or
            // none); cohort two goes as all its members are deleted.
            .name = "implicit_cohorts_created_and_deleted",
            .cluster_queues =
                {ClusterQueueBuilder("a")
                     .NoNamespaceSelector()
                     .Cohort("three")
                     .Build(),
                 ClusterQueueBuilder("b").NoNamespaceSelector().Build(),
                 ClusterQueueBuilder("c")
                     .NoNamespaceSelector()
                     .Cohort("three")
                     .Build()},
            .flavors = {"default"},
            .want_active = {"a", "b", "c"},
            .want_cohorts = {{"three", {"a", "c"}}},
        },
        {
            .name = "delete",
            .cluster_queues = {InitialB(), InitialC(), InitialE(), InitialF()},
            .flavors = {"default"},
            .want_active = {"b", "c", "f"},
            .want_inactive = {"e"},
            .want_cohorts = {{"one", {"b"}}, {"two", {"c", "e", "f"}}},
        },
        {
            .name = "add_resource_flavors",
            .cluster_queues = InitialClusterQueues(),
            .flavors = {"default", "nonexistent-flavor"},
            .want_active = {"a", "b", "c", "d", "e", "f"},
            .want_cohorts = {{"one", {"a", "b"}}, {"two", {"c", "e", "f"}}},
        },
        {
            .name = "add_clusterqueue_with_multiple_resource_groups",
            .cluster_queues = {ClusterQueueBuilder("foo")
                                   .ResourceGroup({"cpu", "memory"})
                                   .Flavor("foo")
                                   .Quota("cpu", "0")
                                   .Quota("memory", "0")
                                   .Flavor("bar")
                                   .Quota("cpu", "0")
                                   .Quota("memory", "0")
                                   .ResourceGroup({"example.com/gpu"})
                                   .Quota("theta", "example.com/gpu", "0")
                                   .Quota("gamma", "example.com/gpu", "0")
                                   .Build()},
            .want_inactive = {"foo"},
        },
        {
            .name = "add_cluster_queue_with_missing_check",
            .cluster_queues = {ClusterQueueBuilder("foo")
                                   .AdmissionCheck("check1")
                                   .AdmissionCheck("check2")
                                   .Build()},
            .want_inactive = {"foo"},
        },
        {
            .name = "add_check_after_queue_creation",
            .cluster_queues = {ClusterQueueBuilder("foo")
                                   .AdmissionCheck("check1")
                                   .AdmissionCheck("check2")
                                   .Build()},
            .admission_checks = {"check1", "check2"},
            .want_active = {"foo"},
        },
        {
            .name = "remove_check_after_queue_creation",
            .cluster_queues = {ClusterQueueBuilder("foo")
                                   .AdmissionCheck("check1")
                                   .AdmissionCheck("check2")
                                   .Build()},
            .admission_checks = {"check1"},
            .want_inactive = {"foo"},
        },
        {
            .name = "inactivate_check_after_queue_creation",
            .cluster_queues = {ClusterQueueBuilder("foo")
                                   .AdmissionCheck("check1")
                                   .AdmissionCheck("check2")
                                   .Build()},
            .admission_checks = {"check1", "check2"},
            .inactive_admission_checks = {"check2"},
            .want_inactive = {"foo"},
        },
        {
            .name = "create_cohort",
            .cohorts = {CohortBuilder("cohort").Build()},
            .want_cohorts = {{"cohort", {}}},
        },
        {
            .name = "create_and_delete_cohort",
        },
        {
            .name = "cohort_remains_after_deletion_when_child_exists",
            .cluster_queues =
                {ClusterQueueBuilder("cq").Cohort("cohort").Build()},
            .want_active = {"cq"},
            .want_cohorts = {{"cohort", {"cq"}}},
        },
    }),
    [](const auto& info) { return info.param.name; });

// "shouldn't delete usage resources on update ClusterQueue": the queue
// loses the quota a workload holds; the usage stays, on a flavor-resource
// the queue no longer has quota for, and is all stored in the cohort.
TEST(CacheClusterQueueOperationsTest,
     ShouldntDeleteUsageResourcesOnUpdateClusterQueue) {
  const FlavorResource kDefaultCpu{"default", "cpu"};
  Cache cache;
  cache.Rebuild(ByName(std::vector<ClusterQueue>{ClusterQueueBuilder("a")
                                                     .ResourceGroup({})
                                                     .Flavor("default")
                                                     .Cohort("one")
                                                     .Build()}),
                {}, {"default"}, {});
  ClusterQueueSnapshot* a = cache.FindClusterQueue("a");
  EXPECT_TRUE(a->active);
  EXPECT_FALSE(a->HasQuota(kDefaultCpu));
  a->AddUsage({{kDefaultCpu, 5'000}});
  EXPECT_EQ(a->node.usage.at(kDefaultCpu), 5'000);
  EXPECT_EQ(cache.FindCohort("one")->node.usage.at(kDefaultCpu), 5'000);
  EXPECT_EQ(a->Available(kDefaultCpu), 0);
  a->RemoveUsage({{kDefaultCpu, 5'000}});
  EXPECT_EQ(cache.FindCohort("one")->node.usage.at(kDefaultCpu), 0);
}

}  // namespace
}  // namespace kq::cache
