#include "server/cache/cache.h"

#include <compare>
#include <string>
#include <tuple>
#include <vector>

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

// What NominationMemo relies on: a tree's generation moves with every
// usage change in that tree, not with changes in other trees, not with
// changes a Simulation puts back, and is new after a rebuild.
TEST(CacheTest, TreeGenerationMovesOnlyWithItsTree) {
  std::map<std::string, ClusterQueue> cqs{
      {"a1", ClusterQueueBuilder("a1")
                 .Cohort("a-child")
                 .Quota("red", "cpu", "4")
                 .Build()},
      {"a2",
       ClusterQueueBuilder("a2").Cohort("a").Quota("red", "cpu", "4").Build()},
      {"b",
       ClusterQueueBuilder("b").Cohort("b").Quota("red", "cpu", "4").Build()},
      {"alone", ClusterQueueBuilder("alone").Quota("red", "cpu", "4").Build()},
  };
  std::map<std::string, Cohort> cohorts{
      {"a-child", CohortBuilder("a-child").Parent("a").Build()}};
  Cache cache;
  cache.Rebuild(cqs, cohorts, {"red"}, {});
  auto generation = [&](const std::string& name) {
    return cache.FindClusterQueue(name)->tree_generation();
  };
  // One tree, through the child cohort.
  EXPECT_EQ(generation("a1"), generation("a2"));
  EXPECT_NE(generation("a1"), generation("b"));
  EXPECT_NE(generation("alone"), generation("b"));
  const uint64_t a = generation("a1");
  const uint64_t b = generation("b");
  const uint64_t alone = generation("alone");

  cache.FindClusterQueue("a2")->AddUsage({{kRedCpu, 1'000}});
  EXPECT_NE(generation("a1"), a);
  EXPECT_EQ(generation("a1"), generation("a2"));
  EXPECT_EQ(generation("b"), b);
  EXPECT_EQ(generation("alone"), alone);

  const uint64_t a_after_add = generation("a1");
  const uint64_t cache_generation = cache.generation();
  {
    Cache::Simulation simulation(cache);
    cache.FindClusterQueue("a1")->AddUsage({{kRedCpu, 1'000}});
    cache.FindClusterQueue("a1")->RemoveUsage({{kRedCpu, 1'000}});
    EXPECT_EQ(generation("a1"), a_after_add);
    // The cache's own generation still moves.
    EXPECT_NE(cache.generation(), cache_generation);
    cache.FindClusterQueue("alone")->MarkTreeChanged();
    EXPECT_NE(generation("alone"), alone);
  }
  cache.FindClusterQueue("a1")->RemoveUsage({{kRedCpu, 1'000}});
  EXPECT_NE(generation("a1"), a_after_add);

  const uint64_t before_rebuild = generation("b");
  cache.Rebuild(cqs, cohorts, {"red"}, {});
  EXPECT_NE(generation("b"), before_rebuild);
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

// FlavorResource orders its names itself (CompareName) instead of through
// std::string: the order of every quota and usage map, and so of what kq
// prints from them, must stay std::string's.
TEST(FlavorResourceTest, OrdersAsStdStringDoes) {
  const std::vector<std::string> names = {"",
                                          "a",
                                          "ab",
                                          "abc",
                                          "b",
                                          "cpu",
                                          "cpu2",
                                          "default",
                                          "defaulu",
                                          "memory",
                                          "nvidia.com/gpu",
                                          "spot",
                                          std::string("\x80", 1),
                                          std::string("a\xff", 2),
                                          std::string("a\0", 2)};
  for (const std::string& fa : names) {
    for (const std::string& ra : names) {
      for (const std::string& fb : names) {
        for (const std::string& rb : names) {
          const FlavorResource a{fa, ra};
          const FlavorResource b{fb, rb};
          const auto want = std::tie(fa, ra) <=> std::tie(fb, rb);
          EXPECT_EQ(a <=> b, want)
              << fa << "/" << ra << " vs " << fb << "/" << rb;
          EXPECT_EQ(a == b, want == 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kq::cache
