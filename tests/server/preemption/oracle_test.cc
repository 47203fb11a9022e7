// Oracle: Kueue's SimulatePreemption outcomes (Preempt,
// Reclaim, NoCandidates with their borrowing levels) and GetTargets over a
// flavor assignment, on a small cohort; the quota tree must be left as it
// was after every call.

#include "server/preemption/oracle.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "server/preemption/classical.h"
#include "server/scheduler/flavor_assigner.h"
#include "tests/testing/builders.h"

namespace kq::preemption {
namespace {

using ::kq::cache::FlavorResource;
using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::WorkloadBuilder;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
const FlavorResource kCpu{"default", "cpu"};

// Cohort "co": ClusterQueue "a" (4 CPUs; preempts lower priorities within
// itself and reclaims from the cohort) and "b" (4 CPUs, may borrow).
class OracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::map<std::string, ClusterQueue> cqs;
    cqs["a"] = ClusterQueueBuilder("a")
                   .Cohort("co")
                   .WithinClusterQueue("LowerPriority")
                   .ReclaimWithinCohort("Any")
                   .ResourceGroup({"cpu"})
                   .Quota("default", "cpu", "4")
                   .Build();
    cqs["b"] = ClusterQueueBuilder("b")
                   .Cohort("co")
                   .ResourceGroup({"cpu"})
                   .Quota("default", "cpu", "4")
                   .Build();
    cache_.Rebuild(cqs, {}, {"default"}, {});
  }

  // Adds a workload holding `cpus` CPUs in `cq`.
  void Hold(const std::string& name, const std::string& cq, int32_t priority,
            const std::string& cpus) {
    holding_.push_back(
        WorkloadBuilder(name)
            .Priority(priority)
            .Request("cpu", cpus)
            .ReserveQuota(
                AdmissionBuilder(cq).Assign("cpu", "default", cpus).Build(),
                kNow)
            .Build());
  }

  // Adds the holders' usage to the cache and returns the oracle over them.
  Oracle MakeOracle() {
    for (const Workload& wl : holding_) {
      cache_.FindClusterQueue(wl.admission->cluster_queue)
          ->AddUsage(cache::UsageOf(*wl.admission));
      holders_.Add(&wl);
    }
    return Oracle(cache_, holders_, kNow);
  }

  int64_t CohortUsage() {
    return cache_.FindClusterQueue("a")->parent->node.Get(
        cache_.FindClusterQueue("a")->parent->node.usage, kCpu);
  }

  cache::Cache cache_;
  std::vector<Workload> holding_;
  HoldingQuota holders_;
  Workload incoming_ = WorkloadBuilder("incoming").Priority(10).Build();
};

TEST_F(OracleTest, LowerPriorityInOwnQueueIsPreempt) {
  Hold("low", "a", 0, "4");
  Oracle oracle = MakeOracle();
  const int64_t before = CohortUsage();
  scheduler::PreemptionSimulation got = oracle.SimulatePreemption(
      *cache_.FindClusterQueue("a"), incoming_, kCpu, 4'000);
  EXPECT_EQ(got.possibility, scheduler::PreemptionPossibility::kPreempt);
  EXPECT_EQ(got.borrowing_level, 0);
  EXPECT_EQ(CohortUsage(), before);
}

TEST_F(OracleTest, BorrowerInOtherQueueIsReclaim) {
  Hold("borrower", "b", 100, "8");
  Oracle oracle = MakeOracle();
  scheduler::PreemptionSimulation got = oracle.SimulatePreemption(
      *cache_.FindClusterQueue("a"), incoming_, kCpu, 4'000);
  EXPECT_EQ(got.possibility, scheduler::PreemptionPossibility::kReclaim);
  EXPECT_EQ(got.borrowing_level, 0);
  EXPECT_EQ(CohortUsage(), 8'000);
}

TEST_F(OracleTest, HigherPriorityIsNoCandidates) {
  Hold("high", "a", 100, "4");
  Hold("b-own", "b", 0, "4");
  Oracle oracle = MakeOracle();
  const cache::ClusterQueueSnapshot& a = *cache_.FindClusterQueue("a");
  scheduler::PreemptionSimulation got =
      oracle.SimulatePreemption(a, incoming_, kCpu, 4'000);
  EXPECT_EQ(got.possibility, scheduler::PreemptionPossibility::kNoCandidates);
  EXPECT_EQ(got.borrowing_level,
            cache::FindHeightOfLowestSubtreeThatFits(a, kCpu, 4'000).first);
}

// The searches remember which queues are within nominal (WithinNominalMemo)
// only while the tree's usage stays as it was: here b starts borrowing between
// two searches of the same oracle, and its new workload becomes reclaimable.
TEST_F(OracleTest, UsageChangedBetweenSearchesIsSeen) {
  Hold("high", "a", 100, "2");
  Hold("b-own", "b", 100, "4");
  Oracle oracle = MakeOracle();
  const cache::ClusterQueueSnapshot& a = *cache_.FindClusterQueue("a");
  EXPECT_EQ(oracle.SimulatePreemption(a, incoming_, kCpu, 4'000).possibility,
            scheduler::PreemptionPossibility::kNoCandidates);

  const Workload borrower =
      WorkloadBuilder("b-borrower")
          .Priority(0)
          .Request("cpu", "2")
          .ReserveQuota(
              AdmissionBuilder("b").Assign("cpu", "default", "2").Build(), kNow)
          .Build();
  cache_.FindClusterQueue("b")->AddUsage(cache::UsageOf(*borrower.admission));
  holders_.Add(&borrower);
  EXPECT_EQ(oracle.SimulatePreemption(a, incoming_, kCpu, 2'000).possibility,
            scheduler::PreemptionPossibility::kReclaim);
  EXPECT_EQ(oracle.SimulatePreemption(a, incoming_, kCpu, 4'000).possibility,
            scheduler::PreemptionPossibility::kNoCandidates);
}

TEST_F(OracleTest, GetTargetsUsesPreemptModeResources) {
  Hold("low", "a", 0, "3");
  Hold("lowest", "a", -5, "1");
  Oracle oracle = MakeOracle();
  scheduler::Assignment assignment;
  scheduler::PodSetAssignmentResult pod_set;
  pod_set.name = "main";
  pod_set.flavors["cpu"] = scheduler::FlavorAssignment{
      .name = "default", .mode = scheduler::AssignmentMode::kPreempt};
  assignment.pod_sets.push_back(pod_set);
  assignment.usage = {{kCpu, 1'000}};
  EXPECT_EQ(FlavorResourcesNeedPreemption(assignment),
            std::set<FlavorResource>{kCpu});

  std::vector<scheduler::PreemptionTarget> got =
      oracle.GetTargets(*cache_.FindClusterQueue("a"), incoming_, assignment);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].workload->meta.name, "lowest");
  EXPECT_EQ(got[0].reason, kReasonInClusterQueue);
  EXPECT_EQ(got[0].cluster_queue, "a");
  EXPECT_EQ(CohortUsage(), 4'000);

  // A Fit-mode resource needs no preemption, so nothing is a candidate.
  assignment.pod_sets[0].flavors["cpu"].mode = scheduler::AssignmentMode::kFit;
  EXPECT_TRUE(FlavorResourcesNeedPreemption(assignment).empty());
  EXPECT_TRUE(
      oracle.GetTargets(*cache_.FindClusterQueue("a"), incoming_, assignment)
          .empty());
}

}  // namespace
}  // namespace kq::preemption
