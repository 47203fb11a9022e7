#include "server/cache/cache.h"

#include "gtest/gtest.h"

#include "tests/testing/builders.h"

namespace kq::cache {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;

const FlavorResource kRedCpu{"red", "cpu"};

// Kueue's resource_test.go "lending and borrowing limits respected"
// (KUEUE.md A.1): available and potentialAvailable with cohort quota, a
// borrowing limit and a lending limit.
TEST(CacheTest, LendingAndBorrowingLimitsRespected) {
  std::map<std::string, ClusterQueue> cqs{
      {"cq1", ClusterQueueBuilder("cq1")
                  .Cohort("cohort")
                  .Quota("red", "cpu", "10")
                  .Build()},
      {"cq2", ClusterQueueBuilder("cq2")
                  .Cohort("cohort")
                  .Quota("red", "cpu", "10")
                  .BorrowingLimit("2")
                  .Build()},
      {"cq3", ClusterQueueBuilder("cq3")
                  .Cohort("cohort")
                  .Quota("red", "cpu", "10")
                  .LendingLimit("5")
                  .Build()},
  };
  std::map<std::string, Cohort> cohorts{
      {"cohort", CohortBuilder("cohort").Quota("red", "cpu", "10").Build()}};
  Cache cache;
  cache.Rebuild(cqs, cohorts, {"red"}, {});
  cache.FindClusterQueue("cq1")->AddUsage({{kRedCpu, 20'000}});
  cache.FindClusterQueue("cq2")->AddUsage({{kRedCpu, 10'000}});
  cache.FindClusterQueue("cq3")->AddUsage({{kRedCpu, 6'000}});

  const CohortSnapshot* cohort = cache.FindCohort("cohort");
  EXPECT_EQ(cohort->node.subtree_quota.at(kRedCpu), 35'000);
  EXPECT_EQ(cohort->node.usage.at(kRedCpu), 31'000);
  EXPECT_EQ(cache.FindClusterQueue("cq1")->Available(kRedCpu), 4'000);
  EXPECT_EQ(cache.FindClusterQueue("cq2")->Available(kRedCpu), 2'000);
  EXPECT_EQ(cache.FindClusterQueue("cq3")->Available(kRedCpu), 4'000);
  EXPECT_EQ(cache.FindClusterQueue("cq1")->PotentialAvailable(kRedCpu), 35'000);
  EXPECT_EQ(cache.FindClusterQueue("cq2")->PotentialAvailable(kRedCpu), 12'000);
  EXPECT_EQ(cache.FindClusterQueue("cq3")->PotentialAvailable(kRedCpu), 40'000);
}

TEST(CacheTest, RemoveUsageRestoresAvailable) {
  std::map<std::string, ClusterQueue> cqs{
      {"a", ClusterQueueBuilder("a")
                .Cohort("c")
                .Quota("red", "cpu", "4")
                .LendingLimit("1")
                .Build()},
      {"b",
       ClusterQueueBuilder("b").Cohort("c").Quota("red", "cpu", "4").Build()}};
  Cache cache;
  cache.Rebuild(cqs, {}, {"red"}, {});
  ClusterQueueSnapshot* a = cache.FindClusterQueue("a");
  int64_t before = a->Available(kRedCpu);
  a->AddUsage({{kRedCpu, 6'000}});
  EXPECT_EQ(a->Available(kRedCpu), before - 6'000);
  a->RemoveUsage({{kRedCpu, 6'000}});
  EXPECT_EQ(a->Available(kRedCpu), before);
  EXPECT_EQ(cache.FindCohort("c")->node.usage.at(kRedCpu), 0);
}

TEST(CacheTest, WithoutCohortLimitsHaveNoEffect) {
  std::map<std::string, ClusterQueue> cqs{{"a", ClusterQueueBuilder("a")
                                                    .Quota("red", "cpu", "4")
                                                    .BorrowingLimit("8")
                                                    .Build()}};
  Cache cache;
  cache.Rebuild(cqs, {}, {"red"}, {});
  EXPECT_EQ(cache.FindClusterQueue("a")->PotentialAvailable(kRedCpu), 4'000);
}

TEST(CacheTest, OmittedCoveredResourceHasZeroQuota) {
  std::map<std::string, ClusterQueue> cqs{
      {"a", ClusterQueueBuilder("a")
                .ResourceGroup({"cpu", "nvidia.com/gpu"})
                .Flavor("red")
                .Quota("cpu", "4")
                .Build()}};
  Cache cache;
  cache.Rebuild(cqs, {}, {"red"}, {});
  const ClusterQueueSnapshot* a = cache.FindClusterQueue("a");
  EXPECT_TRUE(a->HasQuota({"red", "nvidia.com/gpu"}));
  EXPECT_EQ(a->PotentialAvailable({"red", "nvidia.com/gpu"}), 0);
}

TEST(CacheTest, ActiveConditionReasons) {
  std::map<std::string, ClusterQueue> cqs{
      {"ok", ClusterQueueBuilder("ok").Quota("red", "cpu", "1").Build()},
      {"noflavor",
       ClusterQueueBuilder("noflavor").Quota("blue", "cpu", "1").Build()},
      {"stopped", ClusterQueueBuilder("stopped")
                      .Quota("red", "cpu", "1")
                      .StopPolicy(StopPolicy::kHold)
                      .Build()},
      {"nocheck", ClusterQueueBuilder("nocheck")
                      .Quota("red", "cpu", "1")
                      .AdmissionCheck("prov")
                      .Build()}};
  Cache cache;
  cache.Rebuild(cqs, {}, {"red"}, {});
  EXPECT_TRUE(cache.FindClusterQueue("ok")->active);
  EXPECT_EQ(cache.FindClusterQueue("ok")->active_message,
            "Can admit new workloads");
  const ClusterQueueSnapshot* noflavor = cache.FindClusterQueue("noflavor");
  EXPECT_FALSE(noflavor->active);
  EXPECT_EQ(noflavor->active_reason, "FlavorNotFound");
  // Kueue prints the list joined with "," and no brackets
  // (clusterqueue.go inactiveReason; cache_test.go "flavor not found").
  EXPECT_EQ(noflavor->active_message,
            "Can't admit new workloads: references missing ResourceFlavor(s): "
            "blue.");
  EXPECT_EQ(cache.FindClusterQueue("stopped")->active_reason, "Stopped");
  EXPECT_EQ(cache.FindClusterQueue("nocheck")->active_reason,
            "AdmissionCheckNotFound");
}

TEST(CacheTest, CohortCycleDeactivatesMembers) {
  std::map<std::string, ClusterQueue> cqs{
      {"a",
       ClusterQueueBuilder("a").Cohort("x").Quota("red", "cpu", "1").Build()}};
  std::map<std::string, Cohort> cohorts{
      {"x", CohortBuilder("x").Parent("y").Build()},
      {"y", CohortBuilder("y").Parent("x").Build()}};
  Cache cache;
  cache.Rebuild(cqs, cohorts, {"red"}, {});
  EXPECT_FALSE(cache.FindClusterQueue("a")->active);
}

TEST(CacheTest, UsageOfAdmission) {
  Admission admission = AdmissionBuilder("cq")
                            .PodSet("main", 4)
                            .Assign("cpu", "red", "32")
                            .Assign("memory", "red", "128Gi")
                            .PodSet("aux", 1)
                            .Assign("cpu", "red", "500m")
                            .Build();
  FlavorResourceQuantities usage = UsageOf(admission);
  EXPECT_EQ(usage.at(kRedCpu), 32'500);
  EXPECT_EQ(usage.at({"red", "memory"}), int64_t{128} << 30);
}

}  // namespace
}  // namespace kq::cache
