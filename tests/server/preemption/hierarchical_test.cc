// Ports Kueue's TestHierarchicalPreemptions
// (pkg/scheduler/preemption/preemption_hierarchical_test.go): classical
// preemption in trees of cohorts, all 15 cases at the snapshot's HEAD
// (Kueue runs the table without fair sharing). Each case checks which
// workloads are chosen, with which Preempted reason, in which ClusterQueue
// (the last element of Kueue's "preemptee path"), and that the quota tree
// is left exactly as it was.
//
// What is not ported, and why:
// - Kueue's IssuePreemptions half of each case (the Evicted/Preempted
//   conditions, their message and the schedulingStats eviction count): kq
//   issues evictions in the engine, not here. The victims and reasons
//   below are the workloads Kueue's cases mark Preempted, with the
//   condition's reason; wantPreempted equals their number in every case.
// - The WorkloadRequestUseMergePatch variants (a patch-encoding detail).
//
// "prefer to preempt evicted workloads": the victim is already Evicted, so
// Kueue counts it as preempted without patching it and its table shows no
// reason. The reason asserted here is the one Kueue's
// classifyPreemptionVariant gives it (a lower-priority candidate below
// maxPriorityThreshold, found before the preemptor has a hierarchical
// advantage): InCohortReclaimWhileBorrowing.

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "server/preemption/classical.h"
#include "tests/server/preemption/preemption_test_util.h"
#include "tests/testing/builders.h"

namespace kq::preemption {
namespace {

using ::kq::cache::Cache;
using ::kq::preemption::test_util::BuildTree;
using ::kq::preemption::test_util::ExpectSameTargetsThroughMemo;
using ::kq::preemption::test_util::Holding;
using ::kq::preemption::test_util::HoldingCpu;
using ::kq::preemption::test_util::Incoming;
using ::kq::preemption::test_util::kAny;
using ::kq::preemption::test_util::kLowerPriority;
using ::kq::preemption::test_util::kNow;
using ::kq::preemption::test_util::NeedPreemption;
using ::kq::preemption::test_util::PodSetChoice;
using ::kq::preemption::test_util::Single;
using ::kq::preemption::test_util::TotalRequests;
using ::kq::preemption::test_util::UsageOfTree;
using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::WorkloadBuilder;

// Most ClusterQueues of the table: in `cohort`, no quota of their own,
// withinClusterQueue LowerPriority and reclaimWithinCohort Any.
ClusterQueueBuilder Queue(const std::string& name, const std::string& cohort) {
  ClusterQueueBuilder b(name);
  b.Cohort(cohort).WithinClusterQueue(kLowerPriority).ReclaimWithinCohort(kAny);
  return b;
}

// A cohort with `cpu` of flavor "default" (none when empty).
Cohort CohortWithCpu(const std::string& name, const std::string& parent,
                     const std::string& cpu) {
  CohortBuilder b(name);
  if (!parent.empty()) b.Parent(parent);
  if (!cpu.empty()) b.Quota("default", "cpu", cpu);
  return b.Build();
}

// The victim of a case.
struct Victim {
  std::string reason;
  std::string cluster_queue;
  friend bool operator==(const Victim&, const Victim&) = default;
  friend void PrintTo(const Victim& v, std::ostream* os) {
    *os << v.reason << " in " << v.cluster_queue;
  }
};

struct HierarchicalCase {
  std::string name;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  std::vector<Workload> admitted;
  Workload incoming;
  std::string target_cq;
  std::vector<PodSetChoice> assignment;
  // Victim name -> reason and ClusterQueue.
  std::map<std::string, Victim> want;
};

void PrintTo(const HierarchicalCase& tc, std::ostream* os) { *os << tc.name; }

class HierarchicalPreemptionTest
    : public ::testing::TestWithParam<HierarchicalCase> {};

TEST_P(HierarchicalPreemptionTest, MatchesKueue) {
  const HierarchicalCase& tc = GetParam();
  Cache cache;
  std::vector<const Workload*> holding =
      BuildTree(cache, tc.cluster_queues, tc.cohorts, {"default"}, tc.admitted);
  const auto before = UsageOfTree(cache);

  const Preemptor preemptor{
      .workload = &tc.incoming,
      .cluster_queue = tc.target_cq,
      .requests = TotalRequests(tc.incoming, tc.assignment),
      .frs_need_preemption = NeedPreemption(tc.assignment)};
  std::vector<Target> targets =
      ClassicalTargets(cache, preemptor, holding, kNow, {});

  std::map<std::string, Victim> got;
  for (const Target& target : targets) {
    EXPECT_EQ(target.cluster_queue, target.workload->admission->cluster_queue)
        << target.workload->meta.name;
    EXPECT_TRUE(got.emplace(target.workload->meta.name,
                            Victim{target.reason, target.cluster_queue})
                    .second)
        << "chosen twice: " << target.workload->meta.name;
  }
  EXPECT_EQ(got, tc.want);
  EXPECT_EQ(UsageOfTree(cache), before) << "the quota tree was not restored";

  ExpectSameTargetsThroughMemo(cache, preemptor, holding, targets);
}

Victim Reclamation(const std::string& cq) {
  return {kReasonInCohortReclamation, cq};
}
Victim WhileBorrowing(const std::string& cq) {
  return {kReasonInCohortReclaimWhileBorrowing, cq};
}
Victim InQueue(const std::string& cq) { return {kReasonInClusterQueue, cq}; }

// Kueue's "admitted_preemptible" of "preempt in cohort and own CQ": it
// requests 1 CPU but its admission charges 2.
Workload AdmittedPreemptible() {
  return WorkloadBuilder("admitted_preemptible")
      .Priority(0)
      .Request("cpu", "1")
      .ReserveQuota(AdmissionBuilder("q_same_cohort")
                        .Assign("cpu", "default", "2")
                        .Build(),
                    kNow)
      .Build();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HierarchicalPreemptionTest,
    ::testing::ValuesIn(std::vector<HierarchicalCase>{
        //            R
        //      /      |
        //   C(2) q_borrowing(0)
        //  /
        // q
        {.name = "preempt_with_hierarchical_advantage",
         .cluster_queues = {Queue("q", "c").Build(),
                            Queue("q_borrowing", "r").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2")},
         .admitted = {HoldingCpu("admitted2", 0, "q_borrowing", "2")},
         .incoming = Incoming(0, {{"cpu", "2"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted2", Reclamation("q_borrowing")}}},
        /*
                       R
                /      |         \
             C(2) q_borrowing(0)  q_nominal(2)
            /
           q
        */
        {.name = "avoid_queues_within_nominal_quota",
         .cluster_queues =
             {Queue("q_nominal", "r").Quota("default", "cpu", "2").Build(),
              Queue("q", "c").Build(), Queue("q_borrowing", "r").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2")},
         .admitted = {HoldingCpu("admitted1", -10, "q_nominal", "2"),
                      HoldingCpu("admitted2", 0, "q_borrowing", "2")},
         .incoming = Incoming(0, {{"cpu", "2"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted2", Reclamation("q_borrowing")}}},
        //            R(0)
        //      /      |
        //   C(2) q_borrowing(0)
        //  /
        // q(0)
        {.name = "preempt_multiple_with_hierarchical_advantage",
         .cluster_queues = {Queue("q", "c").Build(),
                            Queue("q_borrowing", "r").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2")},
         .admitted = {HoldingCpu("admitted1", 1, "q_borrowing", "1"),
                      HoldingCpu("admitted2", 2, "q_borrowing", "1")},
         .incoming = Incoming(0, {{"cpu", "2"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted1", Reclamation("q_borrowing")},
                  {"admitted2", Reclamation("q_borrowing")}}},
        /*
                  R(0)
                /
             C(3)
            /   \
           q(0) q_same_cohort(0)
        */
        {.name = "preempt_in_cohort_and_own_CQ",
         .cluster_queues =
             {Queue("q", "c").BorrowWithinCohort(kLowerPriority, 0).Build(),
              Queue("q_same_cohort", "c").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "3")},
         .admitted = {HoldingCpu("admitted_not_preemptible", 1, "q_same_cohort",
                                 "1"),
                      AdmittedPreemptible(),
                      HoldingCpu("admitted_own_queue", -1, "q", "1")},
         .incoming = Incoming(1, {{"cpu", "2"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted_own_queue", InQueue("q")},
                  {"admitted_preemptible", WhileBorrowing("q_same_cohort")}}},
        //            R(0)
        //      /      |
        //   C(2) q_borrowing(0)
        //  /
        // q(0)
        {.name = "prefer_to_preempt_hierarchical_candidate",
         .cluster_queues = {Queue("q", "c").Build(),
                            Queue("q_borrowing", "r").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2")},
         .admitted = {HoldingCpu("admitted_borrowing", 1, "q_borrowing", "1"),
                      HoldingCpu("admitted_same_queue", -2, "q", "1")},
         .incoming = Incoming(0, {{"cpu", "1"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted_borrowing", Reclamation("q_borrowing")}}},
        /*
                     R(0)
                /      |
             C(2)   q_nominal(2)
            /   \
           q(0) q_same_cohort(0)
        */
        {.name = "forced_to_preempt_priority_candidate",
         .cluster_queues =
             {Queue("q", "c").BorrowWithinCohort(kLowerPriority, 0).Build(),
              Queue("q_nominal", "r").Quota("default", "cpu", "2").Build(),
              Queue("q_same_cohort", "c").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2")},
         .admitted = {HoldingCpu("admitted_nominal", -10, "q_nominal", "2"),
                      HoldingCpu("admitted_same_cohort", -1, "q_same_cohort",
                                 "2")},
         .incoming = Incoming(0, {{"cpu", "2"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted_same_cohort", WhileBorrowing("q_same_cohort")}}},
        /*
                     R(0)
                /      |
             C(2)   q_borrowing(0)
            /    \
           q(4)  q_same_cohort(0)
        */
        {.name = "incoming_workload_fits_in_CQ_nominal_quota",
         .cluster_queues =
             {Queue("q", "c").Quota("default", "cpu", "4").Build(),
              Queue("q_borrowing", "r").Build(),
              Queue("q_same_cohort", "c").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2")},
         .admitted = {HoldingCpu("admitted_borrowing", 10, "q_borrowing", "3"),
                      HoldingCpu("admitted_same_cohort", 10, "q_same_cohort",
                                 "3")},
         .incoming = Incoming(0, {{"cpu", "4"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted_borrowing", Reclamation("q_borrowing")},
                  {"admitted_same_cohort", Reclamation("q_same_cohort")}}},
        /*
                     R(1)
                /      |
             C(4)   q_borrowing(0)
            /    \
           q(0)  q_same_cohort(0)
        */
        {.name = "preempt_hierarchical_and_priority_candidates",
         .cluster_queues = {Queue("q", "c")
                                .ReclaimWithinCohort(kLowerPriority)
                                .BorrowWithinCohort(kLowerPriority, 0)
                                .Build(),
                            Queue("q_borrowing", "r").Build(),
                            Queue("q_same_cohort", "c").Build()},
         .cohorts = {CohortWithCpu("r", "", "1"), CohortWithCpu("c", "r", "4")},
         .admitted = {HoldingCpu("admitted_borrowing", -1, "q_borrowing", "2"),
                      HoldingCpu("admitted_same_cohort_preemptible", -1,
                                 "q_same_cohort", "1"),
                      HoldingCpu("admitted_borrowing_not_preemptible", 1,
                                 "q_borrowing", "2")},
         .incoming = Incoming(0, {{"cpu", "3"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted_borrowing", Reclamation("q_borrowing")},
                  {"admitted_same_cohort_preemptible",
                   WhileBorrowing("q_same_cohort")}}},
        /*
                     R(1)
                /      |
             C(4)   q_borrowing(0)
            /    \
           q(0)  q_same_cohort(0)
        */
        {.name = "preempt_hierarchical_candidates_and_inside_CQ",
         .cluster_queues = {Queue("q", "c")
                                .ReclaimWithinCohort(kLowerPriority)
                                .BorrowWithinCohort(kLowerPriority, 0)
                                .Build(),
                            Queue("q_borrowing", "r").Build(),
                            Queue("q_same_cohort", "c").Build()},
         .cohorts = {CohortWithCpu("r", "", "1"), CohortWithCpu("c", "r", "4")},
         .admitted = {HoldingCpu("admitted_borrowing", -1, "q_borrowing", "2"),
                      HoldingCpu("admitted_same_queue_preemptible", -1, "q",
                                 "1"),
                      HoldingCpu("admitted_borrowing_not_preemptible", 1,
                                 "q_borrowing", "2")},
         .incoming = Incoming(0, {{"cpu", "3"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted_borrowing", Reclamation("q_borrowing")},
                  {"admitted_same_queue_preemptible", InQueue("q")}}},
        /*
                      R(0)
                /      |          \
             C(3) q_borrowing(0)  q_nominal(2)
            /
           q(0)
        */
        {.name = "reclaim_nominal_quota_from_lowest_priority_workload_"
                 "excluding_non_borrowing",
         .cluster_queues =
             {Queue("q", "c").Build(), Queue("q_borrowing", "r").Build(),
              Queue("q_nominal", "r").Quota("default", "cpu", "2").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "3")},
         .admitted =
             {HoldingCpu("admitted_borrowing_prio_8", 8, "q_borrowing", "1"),
              HoldingCpu("admitted_borrowing_prio_9", 9, "q_borrowing", "1"),
              HoldingCpu("admitted_borrowing_prio_10", 9, "q_borrowing", "1"),
              HoldingCpu("admitted_nominal", -2, "q_nominal", "2")},
         .incoming = Incoming(0, {{"cpu", "1"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted_borrowing_prio_8", Reclamation("q_borrowing")}}},
        /*
                            R
                      /            \
                C(2)                   C_other(2)
               /    \                     |
              q(0)  q_same_cohort(0)   q_other(0)
        */
        {.name = "infeasible_preemption_all_available_workloads_in_pruned_"
                 "subtrees",
         .cluster_queues = {Queue("q_other", "c_other").Build(),
                            Queue("q", "c").Build(),
                            Queue("q_same_cohort", "c").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2"),
                     CohortWithCpu("c_other", "r", "2")},
         .admitted = {HoldingCpu("admitted_other_1", -10, "q_other", "1"),
                      HoldingCpu("admitted_other_2", -10, "q_other", "1"),
                      HoldingCpu("admitted_same_cohort", 0, "q_same_cohort",
                                 "2")},
         .incoming = Incoming(0, {{"cpu", "2"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {}},
        /*
                    R(3CPU, 0Gi)
                /      |
             C(4CPU,4Gi) q_borrowing(0)
            /    \
           q(0)   q_same_cohort(0)
        */
        {.name = "hiearchical_preemption_with_multiple_resources",
         .cluster_queues = {Queue("q", "c").Build(),
                            Queue("q_borrowing", "r").Build(),
                            Queue("q_same_cohort", "c").Build()},
         .cohorts = {CohortWithCpu("r", "", "3"),
                     CohortBuilder("c")
                         .Parent("r")
                         .Quota("default", "cpu", "4")
                         .Quota("memory", "4Gi")
                         .Build()},
         .admitted =
             {Holding("admitted_borrowing", 0, "q_borrowing",
                      {{"cpu", "default", "3"}, {"memory", "default", "1Gi"}}),
              Holding("admitted_same_cohort", -2, "q_same_cohort",
                      {{"cpu", "default", "1"}, {"memory", "default", "3Gi"}})},
         .incoming = Incoming(-2, {{"cpu", "2"}, {"memory", "1Gi"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}, {"memory", "default"}}),
         .want = {{"admitted_borrowing", Reclamation("q_borrowing")}}},
        /*
                     R(0)
                /      |
             C(2)   q_borrowing(0)
            /    \
           q(0)  q_same_cohort(0)
        */
        {.name = "prefer_to_preempt_evicted_workloads",
         .cluster_queues =
             {Queue("q", "c").BorrowWithinCohort(kLowerPriority, 0).Build(),
              Queue("q_borrowing", "r").Build(),
              Queue("q_same_cohort", "c").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2")},
         .admitted = {HoldingCpu("admitted_borrowing", -10, "q_borrowing", "1"),
                      WorkloadBuilder("evicted_same_cohort")
                          .Priority(-1)
                          .Request("cpu", "1")
                          .ReserveQuota(AdmissionBuilder("q_same_cohort")
                                            .Assign("cpu", "default", "1")
                                            .Build(),
                                        kNow)
                          .Condition(kConditionEvicted, "True", "", "", kNow)
                          .Build()},
         .incoming = Incoming(0, {{"cpu", "1"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"evicted_same_cohort", WhileBorrowing("q_same_cohort")}}},
        //           R(0)
        //      /      |
        //   C(2)   q_borrowing(0)
        //  /
        // q(3, lending limit 2)
        {.name = "respect_lending_limits",
         .cluster_queues = {Queue("q", "c")
                                .Quota("default", "cpu", "3")
                                .LendingLimit("2")
                                .Build(),
                            Queue("q_borrowing", "r").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c", "r", "2")},
         .admitted = {HoldingCpu("admitted_borrowing", 0, "q_borrowing", "4")},
         .incoming = Incoming(-2, {{"cpu", "5"}}).Build(),
         .target_cq = "q",
         .assignment = Single({{"cpu", "default"}}),
         .want = {{"admitted_borrowing", Reclamation("q_borrowing")}}},
        /*
                                          r
                                       /      \
                                    c11        c12
                                 /   |   \       \
                              c21   c22    c23    q1
                            /  |     |     |
                          c31  c32   q3    q2
                        /      |
                      q5       q4
           quotas: 4 for every cohort but r; 0 for every ClusterQueue.
        */
        {.name = "reclaim_in_complex_hierarchy",
         .cluster_queues = {Queue("q1", "c12").Build(),
                            Queue("q2", "c23").Build(),
                            Queue("q3", "c22").Build(),
                            Queue("q4", "c32").Build(),
                            Queue("q5", "c31").Build()},
         .cohorts = {CohortWithCpu("r", "", ""), CohortWithCpu("c11", "r", "4"),
                     CohortWithCpu("c12", "r", "4"),
                     CohortWithCpu("c21", "c11", "4"),
                     CohortWithCpu("c22", "c11", "4"),
                     CohortWithCpu("c23", "c11", "4"),
                     CohortWithCpu("c31", "c21", "4"),
                     CohortWithCpu("c32", "c21", "4")},
         .admitted = {HoldingCpu("admitted_borrowing_1", -6, "q1", "4"),
                      HoldingCpu("admitted_borrowing_2", -5, "q1", "4"),
                      HoldingCpu("admitted_borrowing_3", -9, "q2", "4"),
                      HoldingCpu("admitted_borrowing_4", -10, "q2", "4"),
                      HoldingCpu("admitted_borrowing_5", -4, "q3", "4"),
                      HoldingCpu("admitted_borrowing_6", -3, "q3", "3"),
                      HoldingCpu("admitted_borrowing_7", 4, "q4", "2"),
                      HoldingCpu("admitted_borrowing_8", 2, "q4", "3")},
         .incoming = Incoming(-2, {{"cpu", "7"}}).Build(),
         .target_cq = "q5",
         .assignment = Single({{"cpu", "default"}}),
         // Only one workload of q2 goes: once the first is preempted, c23 is
         // back within its nominal quota.
         .want = {{"admitted_borrowing_1", Reclamation("q1")},
                  {"admitted_borrowing_4", Reclamation("q2")}}},
    }),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kq::preemption
