// Ports Kueue's fair-sharing preemption tests
// (pkg/scheduler/preemption/preemption_fair_test.go):
// - TestFairPreemptions: all 35 cases at the snapshot's HEAD. Each checks
//   which workloads are chosen with which Preempted reason, and that the
//   quota tree is left exactly as it was (Kueue's "snapshot was modified"
//   check).
// - TestFairPreemptionSkipsUnsatisfiableTournament: both cases. Kueue
//   counts its verbosity-4 log entries; kq counts the same events in
//   FairSearchStats.
// Both run with Kueue's default feature gates (FairSharingPreemptWithinNominal
// on) and without admission fair sharing, as Kueue's tests do.
//
// Skipped cases: none. Not ported: nothing depends on TAS, DRA, elastic
// slices or concurrent admission. In "can reclaim from queue using less,
// if taking the latest workload from user using the most isn't enough"
// Kueue's incoming workload carries an admission to "a" that its test
// never reads (the preemptor's ClusterQueue is "c"); it is left out here.
//
// The Oracle's dispatch to the fair search when fair sharing is configured
// is checked at the end.

#include "server/preemption/fair.h"

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "server/core/config.h"
#include "server/preemption/oracle.h"
#include "server/scheduler/flavor_assigner.h"
#include "tests/server/preemption/preemption_test_util.h"
#include "tests/testing/builders.h"

namespace kq::preemption {
namespace {

using ::kq::cache::Cache;
using ::kq::preemption::test_util::BuildTree;
using ::kq::preemption::test_util::Holding;
using ::kq::preemption::test_util::kAny;
using ::kq::preemption::test_util::kLowerPriority;
using ::kq::preemption::test_util::kNow;
using ::kq::preemption::test_util::NeedPreemption;
using ::kq::preemption::test_util::Single;
using ::kq::preemption::test_util::TotalRequests;
using ::kq::preemption::test_util::UsageOfTree;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::WorkloadBuilder;

constexpr FairSharingStrategy kS2a =
    FairSharingStrategy::kLessThanOrEqualToFinalShare;
constexpr FairSharingStrategy kS2b = FairSharingStrategy::kLessThanInitialShare;

// A workload requesting `cpu` of `flavor` and holding it in
// `cluster_queue` since kNow, with its name as UID as Kueue's test sets it
// (so candidates sort predictably); Kueue's SimpleReserveQuota.
Workload Reserved(const std::string& name, const std::string& cluster_queue,
                  const std::string& cpu = "1", int32_t priority = 0,
                  const std::string& flavor = "default") {
  Workload wl =
      Holding(name, priority, cluster_queue, {{"cpu", flavor, cpu}}, kNow);
  wl.meta.uid = name;
  return wl;
}

// Kueue's unitWl at another priority.
Workload Unit(const std::string& name, const std::string& cluster_queue,
              int32_t priority = 0) {
  return Reserved(name, cluster_queue, "1", priority);
}

// A preemptor requesting `cpu` (no UID, as in Kueue's table).
Workload In(const std::string& name, const std::string& cpu = "1",
            int32_t priority = 0) {
  return WorkloadBuilder(name).Priority(priority).Request("cpu", cpu).Build();
}

// Kueue's baseCQs of TestFairPreemptions.
std::vector<ClusterQueue> BaseClusterQueues() {
  auto cq = [](const std::string& name) {
    return ClusterQueueBuilder(name)
        .Cohort("all")
        .Quota("default", "cpu", "3")
        .WithinClusterQueue(kLowerPriority)
        .ReclaimWithinCohort(kAny)
        .BorrowWithinCohort(kLowerPriority, -3)
        .Build();
  };
  return {cq("a"), cq("b"), cq("c"),
          ClusterQueueBuilder("preemptible")
              .Cohort("all")
              .Quota("default", "cpu", "0")
              .Build()};
}

// ClusterQueue `name` in `cohort` with `cpu` of "default",
// withinClusterQueue LowerPriority and reclaimWithinCohort Any (the
// ClusterQueues of the weight cases), and fair-sharing `weight` if given.
ClusterQueue WeightedQueue(const std::string& name, const std::string& cohort,
                           const std::string& cpu,
                           const std::string& weight = "") {
  ClusterQueueBuilder b(name);
  b.Cohort(cohort)
      .Quota("default", "cpu", cpu)
      .WithinClusterQueue(kLowerPriority)
      .ReclaimWithinCohort(kAny);
  if (!weight.empty()) b.FairSharingWeight(weight);
  return b.Build();
}

// ClusterQueue `name` in `cohort` with `cpu` of "default" and
// reclaimWithinCohort Any only, and fair-sharing `weight` if given.
ClusterQueue ReclaimingQueue(const std::string& name, const std::string& cohort,
                             const std::string& cpu,
                             const std::string& weight = "") {
  ClusterQueueBuilder b(name);
  b.Cohort(cohort).Quota("default", "cpu", cpu).ReclaimWithinCohort(kAny);
  if (!weight.empty()) b.FairSharingWeight(weight);
  return b.Build();
}

// ClusterQueue `name` in `cohort` with `cpu` of "default", no preemption.
ClusterQueue PlainQueue(const std::string& name, const std::string& cohort,
                        const std::string& cpu,
                        const std::string& weight = "") {
  ClusterQueueBuilder b(name);
  b.Cohort(cohort).Quota("default", "cpu", cpu);
  if (!weight.empty()) b.FairSharingWeight(weight);
  return b.Build();
}

struct FairCase {
  std::string name;
  // Empty means BaseClusterQueues().
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  // Empty means {"default"}.
  std::set<std::string> flavors;
  std::string assignment_flavor = "default";
  // Empty means Kueue's default [S2-a, S2-b].
  std::vector<FairSharingStrategy> strategies;
  std::vector<Workload> admitted;
  Workload incoming;
  std::string target_cq;
  // Victim name -> Preempted reason.
  std::map<std::string, std::string> want;
};

void PrintTo(const FairCase& tc, std::ostream* os) { *os << tc.name; }

class FairPreemptionsTest : public ::testing::TestWithParam<FairCase> {};

TEST_P(FairPreemptionsTest, MatchesKueue) {
  const FairCase& tc = GetParam();
  Cache cache;
  std::vector<const Workload*> holding = BuildTree(
      cache,
      tc.cluster_queues.empty() ? BaseClusterQueues() : tc.cluster_queues,
      tc.cohorts,
      tc.flavors.empty() ? std::set<std::string>{"default"} : tc.flavors,
      tc.admitted);
  const auto before = UsageOfTree(cache);

  const auto assignment = Single({{"cpu", tc.assignment_flavor}});
  const Preemptor preemptor{.workload = &tc.incoming,
                            .cluster_queue = tc.target_cq,
                            .requests = TotalRequests(tc.incoming, assignment),
                            .frs_need_preemption = NeedPreemption(assignment)};
  FairSharingConfig config;
  config.preemption_strategies = tc.strategies;
  std::vector<Target> targets =
      FairTargets(cache, preemptor, holding, kNow, {}, config);

  std::map<std::string, std::string> got;
  for (const Target& target : targets) {
    EXPECT_EQ(target.cluster_queue, target.workload->admission->cluster_queue)
        << target.workload->meta.name;
    EXPECT_TRUE(got.emplace(target.workload->meta.name, target.reason).second)
        << "chosen twice: " << target.workload->meta.name;
  }
  EXPECT_EQ(got, tc.want);
  EXPECT_EQ(UsageOfTree(cache), before) << "the quota tree was not restored";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FairPreemptionsTest,
    ::testing::ValuesIn(std::vector<FairCase>{
        {.name = "reclaim_nominal_from_user_using_the_most",
         .admitted = {Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
                      Unit("b4", "b"), Unit("b5", "b"), Unit("c1", "c")},
         .incoming = In("c_incoming"),
         .target_cq = "c",
         .want = {{"b1", kReasonInCohortReclamation}}},
        {.name = "can_reclaim_from_queue_using_less_if_taking_the_latest_"
                 "workload_from_user_using_the_most_isnt_enough",
         .admitted = {Reserved("a1", "a", "3"), Reserved("a2", "a", "1"),
                      Reserved("b1", "b", "2"), Reserved("b2", "b", "3")},
         .incoming = In("c_incoming", "3"),
         .target_cq = "c",
         // b1 is tried first, but it is not enough.
         .want = {{"a1", kReasonInCohortReclamation}}},
        {.name = "reclaim_borrowable_quota_from_user_using_the_most",
         .admitted = {Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
                      Unit("b4", "b"), Unit("b5", "b"), Unit("c1", "c")},
         .incoming = In("a_incoming"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing}}},
        {.name = "preempt_one_from_each_CQ_borrowing",
         .admitted = {Reserved("a1", "a", "0.5"), Reserved("a2", "a", "0.5"),
                      Reserved("a3", "a", "3"), Reserved("b1", "b", "0.5"),
                      Reserved("b2", "b", "0.5"), Reserved("b3", "b", "3")},
         .incoming = In("c_incoming", "2"),
         .target_cq = "c",
         .want = {{"a1", kReasonInCohortReclamation},
                  {"b1", kReasonInCohortReclamation}}},
        {.name = "cant_preempt_when_everyone_under_nominal",
         .admitted = {Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
                      Unit("c1", "c"), Unit("c2", "c"), Unit("c3", "c")},
         .incoming = In("c_incoming"),
         .target_cq = "c",
         .want = {}},
        {.name = "cant_preempt_when_it_would_switch_the_imbalance",
         .admitted = {Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
                      Unit("b4", "b"), Unit("b5", "b")},
         .incoming = In("a_incoming", "2"),
         .target_cq = "a",
         .want = {}},
        {.name = "can_preempt_lower_priority_workloads_from_same_CQ",
         .admitted = {Unit("a1_low", "a", -1), Unit("a2_low", "a", -1),
                      Unit("a3", "a"), Unit("a4", "a"), Unit("b1", "b"),
                      Unit("b2", "b"), Unit("b3", "b"), Unit("b4", "b"),
                      Unit("b5", "b")},
         .incoming = In("a_incoming", "2"),
         .target_cq = "a",
         .want = {{"a1_low", kReasonInClusterQueue},
                  {"a2_low", kReasonInClusterQueue}}},
        {.name = "can_preempt_a_combination_of_same_CQ_and_highest_user",
         .admitted = {Unit("a_low", "a", -1), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
                      Unit("b4", "b"), Unit("b5", "b"), Unit("b6", "b")},
         .incoming = In("a_incoming", "2"),
         .target_cq = "a",
         .want = {{"a_low", kReasonInClusterQueue},
                  {"b1", kReasonInCohortFairSharing}}},
        {.name = "preempt_huge_workload_if_there_is_no_other_option_as_long_"
                 "as_the_target_CQ_gets_a_lower_share",
         .admitted = {Reserved("b1", "b", "9")},
         .incoming = In("a_incoming", "2"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortReclamation}}},
        {.name = "cant_preempt_huge_workload_if_the_incoming_is_also_huge",
         .admitted = {Reserved("a1", "a", "2"), Reserved("b1", "b", "7")},
         .incoming = In("a_incoming", "5"),
         .target_cq = "a",
         .want = {}},
        {.name = "cant_preempt_2_smaller_workloads_if_the_incoming_is_huge",
         .admitted = {Reserved("b1", "b", "2"), Reserved("b2", "b", "2"),
                      Reserved("b3", "b", "3")},
         .incoming = In("a_incoming", "6"),
         .target_cq = "a",
         .want = {}},
        {.name = "preempt_from_target_and_others_even_if_over_nominal",
         .admitted = {Reserved("a1_low", "a", "2", -1),
                      Reserved("a2_low", "a", "1", -1),
                      Reserved("b1", "b", "3"), Reserved("b2", "b", "3")},
         .incoming = In("a_incoming", "4"),
         .target_cq = "a",
         .want = {{"a1_low", kReasonInClusterQueue},
                  {"b1", kReasonInCohortFairSharing}}},
        {.name = "prefer_to_preempt_workloads_that_dont_make_the_target_CQ_"
                 "have_the_biggest_share",
         .admitted = {Reserved("b1", "b", "2"), Reserved("b2", "b", "1"),
                      Reserved("b3", "b", "2"), Reserved("c1", "c", "1")},
         .incoming = In("a_incoming", "3.5"),
         .target_cq = "a",
         // b1 could have gone under rule S2-b, but S2-a applied first.
         .want = {{"b2", kReasonInCohortFairSharing}}},
        {.name = "preempt_from_different_cluster_queues_if_the_end_result_has_"
                 "a_smaller_max_share",
         .admitted = {Reserved("b1", "b", "2"), Reserved("b2", "b", "2.5"),
                      Reserved("c1", "c", "2"), Reserved("c2", "c", "2.5")},
         .incoming = In("a_incoming", "3.5"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing},
                  {"c1", kReasonInCohortFairSharing}}},
        {.name = "scenario_above_does_not_flap",
         .admitted = {Reserved("a1", "a", "3.5"), Reserved("b2", "b", "2.5"),
                      Reserved("c2", "c", "2.5")},
         .incoming = In("b_incoming", "2"),
         .target_cq = "b",
         .want = {}},
        {.name = "cannot_preempt_if_it_would_make_the_candidate_CQ_go_under_"
                 "nominal_after_preempting_one_element",
         .admitted = {Reserved("b1", "b", "3"), Reserved("b2", "b", "3"),
                      Reserved("c1", "c", "3")},
         .incoming = In("a_incoming", "4"),
         .target_cq = "a",
         .want = {}},
        // borrowWithinCohort plays no part in fair sharing: lower-priority
        // workloads are preempted only when the shares say so.
        {.name = "workloads_under_priority_threshold_not_capriciously_"
                 "preempted",
         .admitted = {Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
                      Unit("preemptible1", "preemptible", -3),
                      Unit("preemptible2", "preemptible", -3),
                      Unit("preemptible3", "preemptible", -3)},
         .incoming = In("a_incoming", "2"),
         .target_cq = "a",
         .want = {}},
        {.name = "preempt_lower_priority_first_even_if_big",
         .strategies = {kS2b},
         .admitted = {Reserved("a1", "a", "3"), Reserved("b_low", "b", "5", 0),
                      Reserved("b_high", "b", "1", 1)},
         .incoming = In("a_incoming", "1"),
         .target_cq = "a",
         .want = {{"b_low", kReasonInCohortFairSharing}}},
        {.name = "preempt_workload_that_doesnt_transfer_the_imbalance_even_if_"
                 "high_priority",
         .strategies = {kS2a},
         .admitted = {Reserved("a1", "a", "3"), Reserved("b_low", "b", "5", 0),
                      Reserved("b_high", "b", "1", 1)},
         .incoming = In("a_incoming", "1"),
         .target_cq = "a",
         .want = {{"b_high", kReasonInCohortFairSharing}}},
        {.name = "CQ_with_higher_weight_can_preempt_more",
         .cluster_queues = {WeightedQueue("a", "all", "3", "2"),
                            WeightedQueue("b", "all", "3"),
                            WeightedQueue("c", "all", "3")},
         .admitted = {Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
                      Unit("b4", "b"), Unit("b5", "b"), Unit("b6", "b")},
         .incoming = In("a_incoming", "2"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing},
                  {"b2", kReasonInCohortFairSharing}}},
        {.name = "can_preempt_anything_borrowing_from_CQ_with_0_weight",
         .cluster_queues = {WeightedQueue("a", "all", "3"),
                            WeightedQueue("b", "all", "3", "0"),
                            WeightedQueue("c", "all", "3")},
         .admitted = {Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
                      Unit("b4", "b"), Unit("b5", "b"), Unit("b6", "b")},
         .incoming = In("a_incoming", "3"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing},
                  {"b2", kReasonInCohortFairSharing},
                  {"b3", kReasonInCohortFairSharing}}},
        {.name = "cant_preempt_nominal_from_CQ_with_0_weight",
         .cluster_queues = {WeightedQueue("a", "all", "3"),
                            WeightedQueue("b", "all", "3", "0")},
         .admitted = {Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
                      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b")},
         .incoming = In("a_incoming"),
         .target_cq = "a",
         .want = {}},
        {.name = "cant_preempt_nominal_from_Cohort_with_0_weight",
         .cluster_queues = {ReclaimingQueue("left-cq", "root", "0"),
                            ReclaimingQueue("right-cq", "right-cohort", "0",
                                            "0")},
         .cohorts = {CohortBuilder("right-cohort")
                         .FairSharingWeight("0")
                         .Quota("default", "cpu", "1")
                         .Parent("root")
                         .Build()},
         .admitted = {Unit("right-1", "right-cq")},
         .incoming = In("left-1"),
         .target_cq = "left-cq",
         .want = {}},
        {.name = "can_preempt_within_cluster_queue_when_no_cohort",
         .cluster_queues = {ClusterQueueBuilder("a")
                                .Quota("default", "cpu", "1")
                                .WithinClusterQueue(kLowerPriority)
                                .Build()},
         .admitted = {Unit("a1", "a")},
         .incoming = In("a_incoming", "1", 1000),
         .target_cq = "a",
         .want = {{"a1", kReasonInClusterQueue}}},
        /*
           Each Cohort provides 5 capacity, each ClusterQueue 1. As
           (Usage, Quota, SubtreeQuota):

                          ROOT(20,5,20)
                       /       |         \
                 LEFT(5,5,7)  c(5,1,1)   RIGHT(10,5,7)
                 /       \               /      \
               a(0,1,1)    b(5,1,1)   d(5,1,1)    e(5,1,1)

           a can preempt in all of them: a and LEFT weigh 2.0; e weighs 0.99
           so that preemptions are deterministic.
        */
        {.name = "hierarchical_preemption",
         .cluster_queues = {ReclaimingQueue("a", "LEFT", "1", "2"),
                            PlainQueue("b", "LEFT", "1"),
                            PlainQueue("c", "ROOT", "1"),
                            PlainQueue("d", "RIGHT", "1"),
                            PlainQueue("e", "RIGHT", "1", "0.99")},
         .cohorts = {CohortBuilder("ROOT").Quota("default", "cpu", "5").Build(),
                     CohortBuilder("LEFT")
                         .FairSharingWeight("2")
                         .Parent("ROOT")
                         .Quota("default", "cpu", "5")
                         .Build(),
                     CohortBuilder("RIGHT")
                         .Parent("ROOT")
                         .Quota("default", "cpu", "5")
                         .Build()},
         .admitted =
             {Unit("b1", "b", 1), Unit("b2", "b", 2), Unit("b3", "b", 3),
              Unit("b4", "b", 4), Unit("b5", "b", 5), Unit("c1", "c", 1),
              Unit("c2", "c", 2), Unit("c3", "c", 3), Unit("c4", "c", 4),
              Unit("c5", "c", 5), Unit("d1", "d", 1), Unit("d2", "d", 2),
              Unit("d3", "d", 3), Unit("d4", "d", 4), Unit("d5", "d", 5),
              Unit("e1", "e", 1), Unit("e2", "e", 2), Unit("e3", "e", 3),
              Unit("e4", "e", 4), Unit("e5", "e", 5)},
         .incoming = In("unit", "5"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing},
                  {"b2", kReasonInCohortFairSharing},
                  {"c1", kReasonInCohortFairSharing},
                  {"c2", kReasonInCohortFairSharing},
                  {"e1", kReasonInCohortFairSharing}}},
        /*
           b borrows, but RIGHT does not, so b is protected:
                       ROOT
                     /      \
                 a(3,5,5)   RIGHT(1,1,1)
                                  \
                                   b(1,0,0)
           The incoming workload of size 5 must preempt a's own workloads,
           though a weighs much more than RIGHT and b.
        */
        {.name = "borrowing_cq_in_non-borrowing_cohort_is_protected",
         .cluster_queues = {ClusterQueueBuilder("a")
                                .Cohort("ROOT")
                                .FairSharingWeight("10")
                                .Quota("default", "cpu", "5")
                                .ReclaimWithinCohort(kAny)
                                .WithinClusterQueue(kLowerPriority)
                                .Build(),
                            ClusterQueueBuilder("b")
                                .Cohort("RIGHT")
                                .FairSharingWeight("0.1")
                                .Build()},
         .cohorts = {CohortBuilder("ROOT").Build(),
                     CohortBuilder("RIGHT")
                         .Parent("ROOT")
                         .FairSharingWeight("0.1")
                         .Quota("default", "cpu", "1")
                         .Build()},
         .admitted = {Unit("a1", "a", -1), Unit("a2", "a", -1),
                      Unit("a3", "a", -1), Unit("b1", "b", -1)},
         .incoming = In("unit", "5"),
         .target_cq = "a",
         .want = {{"a1", kReasonInClusterQueue},
                  {"a2", kReasonInClusterQueue},
                  {"a3", kReasonInClusterQueue}}},
        /*
           Preempting the small workload would bring RIGHT to a share of 0,
           and the higher-priority one cannot be considered; the incoming
           workload of size 4 must preempt a's own workloads.
                       ROOT
                     /      \
                 a(3,5,5)   RIGHT(4,3,3)
                                  \
                                   b(4,0,0)
        */
        {.name = "forced_to_preempt_within_clusterqueue_because_borrowing_"
                 "workload_too_important",
         .cluster_queues = {ClusterQueueBuilder("a")
                                .Cohort("ROOT")
                                .FairSharingWeight("10")
                                .Quota("default", "cpu", "5")
                                .ReclaimWithinCohort(kLowerPriority)
                                .WithinClusterQueue(kLowerPriority)
                                .Build(),
                            ClusterQueueBuilder("b")
                                .Cohort("RIGHT")
                                .FairSharingWeight("0.1")
                                .Build()},
         .cohorts = {CohortBuilder("ROOT").Build(),
                     CohortBuilder("RIGHT")
                         .Parent("ROOT")
                         .FairSharingWeight("0.1")
                         .Quota("default", "cpu", "3")
                         .Build()},
         .admitted = {Unit("a1", "a", -1), Unit("a2", "a", -1),
                      Unit("a3", "a", -1), Reserved("b1", "b", "4", 100)},
         .incoming = In("unit", "4"),
         .target_cq = "a",
         .want = {{"a1", kReasonInClusterQueue},
                  {"a2", kReasonInClusterQueue},
                  {"a3", kReasonInClusterQueue}}},
        /*
                                ROOT
                              /   |   \
                             A    B    C
                             |    |    |
                             AA   BB   CC
                             |    |    |
                            AAA  BBB  CCC
                             |    |    |
                             a    b   CCCC
           a wants capacity, b uses it, CCCC provides it. A weighs more
           than B (the almost-LCAs compared), so the preemption happens.
        */
        {.name = "deep_preemption",
         .cluster_queues = {ReclaimingQueue("a", "AAA", "0"),
                            PlainQueue("b", "BBB", "0")},
         .cohorts = {CohortBuilder("ROOT").Build(),
                     CohortBuilder("A")
                         .Parent("ROOT")
                         .FairSharingWeight("1.01")
                         .Build(),
                     CohortBuilder("AA").Parent("A").Build(),
                     CohortBuilder("AAA").Parent("AA").Build(),
                     CohortBuilder("B")
                         .Parent("ROOT")
                         .FairSharingWeight("0.99")
                         .Build(),
                     CohortBuilder("BB").Parent("B").Build(),
                     CohortBuilder("BBB").Parent("BB").Build(),
                     CohortBuilder("C").Parent("ROOT").Build(),
                     CohortBuilder("CC").Parent("C").Build(),
                     CohortBuilder("CCC").Parent("CC").Build(),
                     CohortBuilder("CCCC")
                         .Parent("CCC")
                         .Quota("default", "cpu", "1")
                         .Build()},
         .admitted = {Unit("b1", "b")},
         .incoming = In("a1"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing}}},
        {.name = "cq_with_zero_weight_can_reclaim_nominal_quota",
         .cluster_queues = {ReclaimingQueue("a", "ROOT", "1", "0.0"),
                            PlainQueue("b", "ROOT", "0", "1.0")},
         .admitted = {Unit("b1", "b")},
         .incoming = In("a1"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortReclamation}}},
        {.name = "cohort_with_zero_weight_can_reclaim_nominal_quota",
         .cluster_queues = {ReclaimingQueue("a", "A", "0", "0.0"),
                            PlainQueue("b", "ROOT", "0", "1.0")},
         .cohorts = {CohortBuilder("A")
                         .Parent("ROOT")
                         .FairSharingWeight("0.0")
                         .Quota("default", "cpu", "1")
                         .Build()},
         .admitted = {Unit("b1", "b")},
         .incoming = In("a1"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing}}},
        // a: 3 CPUs of premium, 0 of cheap; b: 0 of premium, 6 of cheap.
        // a holds 2 premium (within nominal) and 5 cheap (borrowed): a high
        // share. b borrows 1 premium: a low share. a's incoming premium CPU
        // keeps it within nominal on premium, so it may reclaim whatever
        // the shares.
        {.name = "nominal_first_workload_fitting_within_nominal_can_preempt_"
                 "despite_high_aggregate_DRS",
         .cluster_queues = {ClusterQueueBuilder("a")
                                .Cohort("all")
                                .ResourceGroup({"cpu"})
                                .Quota("premium", "cpu", "3")
                                .Quota("cheap", "cpu", "0")
                                .ReclaimWithinCohort(kAny)
                                .Build(),
                            ClusterQueueBuilder("b")
                                .Cohort("all")
                                .ResourceGroup({"cpu"})
                                .Quota("premium", "cpu", "0")
                                .Quota("cheap", "cpu", "6")
                                .Build()},
         .flavors = {"premium", "cheap"},
         .assignment_flavor = "premium",
         .admitted = {Reserved("a_prem1", "a", "1", 0, "premium"),
                      Reserved("a_prem2", "a", "1", 0, "premium"),
                      Reserved("a_cheap1", "a", "1", 0, "cheap"),
                      Reserved("a_cheap2", "a", "1", 0, "cheap"),
                      Reserved("a_cheap3", "a", "1", 0, "cheap"),
                      Reserved("a_cheap4", "a", "1", 0, "cheap"),
                      Reserved("a_cheap5", "a", "1", 0, "cheap"),
                      Reserved("b_prem1", "b", "1", 0, "premium")},
         .incoming = In("a_incoming"),
         .target_cq = "a",
         .want = {{"b_prem1", kReasonInCohortReclamation}}},
        // The preemptor borrows on a weight of 0 (share +Inf); the target
        // borrows on a non-zero weight (finite share): neither strategy can
        // pass, whichever workload of the target goes.
        {.name = "zero_weight_borrowing_preemptor_cannot_preempt_from_a_"
                 "borrowing_CQ_with_a_non-zero_weight",
         .cluster_queues = {ReclaimingQueue("a", "all", "1", "0"),
                            PlainQueue("b", "all", "1", "1")},
         .admitted = {Unit("a1", "a"), Unit("b1", "b"), Unit("b2", "b")},
         .incoming = In("a_incoming"),
         .target_cq = "a",
         .want = {}},
        // Both borrow on a weight of 0: both shares are +Inf and CompareDRS
        // falls back to the unweighted ratios, so a candidate can win.
        {.name = "zero_weight_borrowing_preemptor_can_preempt_from_a_"
                 "borrowing_CQ_which_also_has_zero_weight",
         .cluster_queues = {ReclaimingQueue("a", "all", "1", "0"),
                            PlainQueue("b", "all", "0", "0")},
         .cohorts = {CohortBuilder("all").Quota("default", "cpu", "3").Build()},
         .admitted = {Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b")},
         .incoming = In("a_incoming", "2"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing}}},
        // As above with non-zero weights: no share is +Inf, same outcome.
        {.name = "non-zero_weight_borrowing_preemptor_preempts_from_a_"
                 "borrowing_CQ",
         .cluster_queues = {ReclaimingQueue("a", "all", "1", "1"),
                            PlainQueue("b", "all", "0", "1")},
         .cohorts = {CohortBuilder("all").Quota("default", "cpu", "3").Build()},
         .admitted = {Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b")},
         .incoming = In("a_incoming", "2"),
         .target_cq = "a",
         .want = {{"b1", kReasonInCohortFairSharing}}},
        //   ROOT ── A (weight 0, 1 CPU) ── p (weight 1, 2 CPU, preemptor)
        //        │                      └─ y (weight 1, 2 CPU)
        //        └─ x (weight 1, 1 CPU)
        // The preemptor's almost-LCA is p against y and A against x. A
        // borrows on a weight of 0, so no candidate of x passes the first
        // strategy; they must be kept for the second: once y1 is preempted
        // A stops borrowing and a candidate of x wins.
        {.name = "candidates_skipped_by_the_first_strategy_are_still_"
                 "available_to_the_second_strategy",
         .cluster_queues = {ReclaimingQueue("p", "A", "2", "1"),
                            PlainQueue("y", "A", "2", "1"),
                            PlainQueue("x", "ROOT", "1", "1")},
         .cohorts = {CohortBuilder("A")
                         .Parent("ROOT")
                         .FairSharingWeight("0")
                         .Quota("default", "cpu", "1")
                         .Build()},
         .admitted = {Reserved("p1", "p", "2"), Reserved("y1", "y", "2"),
                      Reserved("y2", "y", "2"), Unit("x1", "x"),
                      Unit("x2", "x")},
         .incoming = In("p_incoming"),
         .target_cq = "p",
         .want = {{"y1", kReasonInCohortFairSharing},
                  {"x1", kReasonInCohortFairSharing}}},
    }),
    [](const auto& info) {
      std::string name = info.param.name;
      // GoogleTest names allow only letters, digits and underscores.
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name;
    });

// Kueue's TestFairPreemptionSkipsUnsatisfiableTournament: a target
// ClusterQueue whose candidates cannot pass either strategy is skipped
// without simulating each candidate, which changes neither the targets
// nor the progress of the ordering. With a preemptor weight of 0 its share
// is +Inf and the tournament is skipped; with 1 every candidate is
// simulated. Nothing is preempted either way.
struct SkipCase {
  std::string name;
  std::string preemptor_fair_weight;
  int want_first_strategy_evaluations = 0;
  int want_second_strategy_evaluations = 0;
  int want_skipped_queues = 0;
};

void PrintTo(const SkipCase& tc, std::ostream* os) { *os << tc.name; }

class FairPreemptionSkipsUnsatisfiableTournamentTest
    : public ::testing::TestWithParam<SkipCase> {};

TEST_P(FairPreemptionSkipsUnsatisfiableTournamentTest, MatchesKueue) {
  const SkipCase& tc = GetParam();
  Cache cache;
  const std::vector<Workload> admitted = {Unit("a1", "a"), Unit("b1", "b"),
                                          Unit("b2", "b")};
  std::vector<const Workload*> holding =
      BuildTree(cache,
                {ReclaimingQueue("a", "all", "1", tc.preemptor_fair_weight),
                 PlainQueue("b", "all", "1", "1")},
                {}, {"default"}, admitted);
  const auto before = UsageOfTree(cache);

  const Workload incoming = In("a_incoming");
  const auto assignment = Single({{"cpu", "default"}});
  const Preemptor preemptor{.workload = &incoming,
                            .cluster_queue = "a",
                            .requests = TotalRequests(incoming, assignment),
                            .frs_need_preemption = NeedPreemption(assignment)};
  FairSearchStats stats;
  std::vector<Target> targets = FairTargets(cache, preemptor, holding, kNow, {},
                                            FairSharingConfig{}, &stats);

  EXPECT_TRUE(targets.empty());
  EXPECT_EQ(stats.first_strategy_evaluations,
            tc.want_first_strategy_evaluations);
  EXPECT_EQ(stats.second_strategy_evaluations,
            tc.want_second_strategy_evaluations);
  EXPECT_EQ(stats.skipped_target_cluster_queues, tc.want_skipped_queues);
  EXPECT_EQ(UsageOfTree(cache), before) << "the quota tree was not restored";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FairPreemptionSkipsUnsatisfiableTournamentTest,
    ::testing::ValuesIn(std::vector<SkipCase>{
        {.name = "zero_weight_preemptor_share_is_Inf_and_the_tournament_is_"
                 "skipped",
         .preemptor_fair_weight = "0",
         .want_first_strategy_evaluations = 0,
         // The candidates still reach the second strategy, which evaluates
         // the target ClusterQueue once.
         .want_second_strategy_evaluations = 1,
         .want_skipped_queues = 1},
        {.name = "non_zero_weight_preemptor_share_is_finite_so_the_"
                 "tournament_runs",
         .preemptor_fair_weight = "1",
         // Both candidates of "b" are evaluated in one visit.
         .want_first_strategy_evaluations = 1,
         .want_second_strategy_evaluations = 1,
         .want_skipped_queues = 0},
    }),
    [](const auto& info) { return info.param.name; });

// The Oracle searches the fair way once fair sharing is configured: in
// "reclaim_borrowable_quota_from_user_using_the_most" the classical search
// finds no victim (b's workloads have the preemptor's priority and the
// preemptor would borrow), the fair one takes b1.
TEST(FairOracleTest, UsesFairSearchWhenFairSharingIsConfigured) {
  const std::vector<Workload> admitted = {
      Unit("a1", "a"), Unit("a2", "a"), Unit("a3", "a"),
      Unit("b1", "b"), Unit("b2", "b"), Unit("b3", "b"),
      Unit("b4", "b"), Unit("b5", "b"), Unit("c1", "c")};
  const Workload incoming = In("a_incoming");
  scheduler::Assignment assignment;
  scheduler::PodSetAssignmentResult pod_set;
  pod_set.name = "main";
  pod_set.flavors["cpu"] = scheduler::FlavorAssignment{
      .name = "default", .mode = scheduler::AssignmentMode::kPreempt};
  assignment.pod_sets.push_back(pod_set);
  assignment.usage = {{{"default", "cpu"}, 1'000}};

  Cache cache;
  std::vector<const Workload*> holding =
      BuildTree(cache, BaseClusterQueues(), {}, {"default"}, admitted);
  const auto before = UsageOfTree(cache);
  const cache::ClusterQueueSnapshot& a = *cache.FindClusterQueue("a");
  const HoldingQuota holders(holding);

  Oracle classical(cache, holders, kNow);
  EXPECT_TRUE(classical.GetTargets(a, incoming, assignment).empty());
  EXPECT_EQ(classical.SimulatePreemption(a, incoming, {"default", "cpu"}, 1'000)
                .possibility,
            scheduler::PreemptionPossibility::kNoCandidates);

  Oracle fair(cache, holders, kNow, {}, FairSharingConfig{});
  std::vector<scheduler::PreemptionTarget> got =
      fair.GetTargets(a, incoming, assignment);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].workload->meta.name, "b1");
  EXPECT_EQ(got[0].reason, kReasonInCohortFairSharing);
  EXPECT_EQ(got[0].cluster_queue, "b");
  const scheduler::PreemptionSimulation simulation =
      fair.SimulatePreemption(a, incoming, {"default", "cpu"}, 1'000);
  EXPECT_EQ(simulation.possibility, scheduler::PreemptionPossibility::kReclaim);
  // Without b1, a's 4 CPUs exceed its nominal 3 but fit in the cohort.
  EXPECT_EQ(simulation.borrowing_level, 1);
  EXPECT_EQ(UsageOfTree(cache), before) << "the quota tree was not restored";
}

}  // namespace
}  // namespace kq::preemption
