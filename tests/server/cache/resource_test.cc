// Quota arithmetic of the cohort tree, ported from Kueue's
// pkg/cache/scheduler tests:
//   resource_test.go       TestAvailable (every case)
//   resource_node_test.go  TestCohortLendable
//   snapshot_test.go       TestSnapshot (the resource nodes of the cases
//                          about quota), TestSnapshotAddRemoveWorkload,
//                          TestSnapshotAddRemoveWorkloadWithLendingLimit
//   cache_test.go          TestClusterQueueUsage (reserved usage and
//                          borrowed amounts)
// Case names are Kueue's, in snake_case. Amounts are in Kueue's integer
// units (milli-CPU, bytes, whole GPUs).
//
// Not ported, and why:
//   - TestDominantResourceShare, TestIsBorrowingOn,
//     TestPreciseWeightedShareSerialized (fair_sharing_test.go): ported in
//     fair_sharing_test.cc. Lendable(), the DRS denominator, is tested
//     below through TestCohortLendable.
//   - TestSnapshot cases about TAS, preemption policies, fair-sharing
//     weights, resource flavors and workload infos: not quota arithmetic.
//   - TestClusterQueueUsage's admitted ("used") resources and workload
//     counts: the engine keeps admitted usage and counts, not the cache.

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "tests/server/cache/cache_test_util.h"
#include "tests/testing/builders.h"

namespace kq::cache {
namespace {

using ::kq::cache::test_util::ByName;
using ::kq::cache::test_util::InactiveClusterQueues;
using ::kq::cache::test_util::NonZero;
using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;

constexpr int64_t kGi = int64_t{1} << 30;
const FlavorResource kRedCpu{"red", "cpu"};
const FlavorResource kBlueCpu{"blue", "cpu"};

using QuantitiesByQueue = std::map<std::string, FlavorResourceQuantities>;

// ---------------------------------------------------------------------------
// TestAvailable

struct AvailableCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const AvailableCase& c, std::ostream* os) {
    *os << c.name;
  }
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  QuantitiesByQueue usage;
  QuantitiesByQueue want_available;
  QuantitiesByQueue want_potentially_available;
};

// Available() and PotentialAvailable() of every ClusterQueue, for each
// flavor-resource it has quota for (as Kueue's test iterates Quotas).
QuantitiesByQueue Collect(const Cache& cache, bool potential) {
  QuantitiesByQueue got;
  for (const auto& [name, cq] : cache.cluster_queues()) {
    FlavorResourceQuantities& q = got[name];
    for (const auto& [fr, limits] : cq->node.quotas) {
      q[fr] = potential ? cq->PotentialAvailable(fr) : cq->Available(fr);
    }
  }
  return got;
}

class AvailableTest : public ::testing::TestWithParam<AvailableCase> {};

TEST_P(AvailableTest, BeforeWithAndAfterUsage) {
  const AvailableCase& tc = GetParam();
  Cache cache;
  cache.Rebuild(ByName(tc.cluster_queues), ByName(tc.cohorts), {"red", "blue"},
                {});

  // Before adding usage, available == potentially available.
  EXPECT_EQ(Collect(cache, false), tc.want_potentially_available)
      << "available before usage";
  EXPECT_EQ(Collect(cache, true), tc.want_potentially_available)
      << "potentially available before usage";

  for (const auto& [name, usage] : tc.usage) {
    cache.FindClusterQueue(name)->AddUsage(usage);
  }
  EXPECT_EQ(Collect(cache, false), tc.want_available) << "available";
  EXPECT_EQ(Collect(cache, true), tc.want_potentially_available)
      << "potentially available";

  for (const auto& [name, usage] : tc.usage) {
    cache.FindClusterQueue(name)->RemoveUsage(usage);
  }
  // Once again, available == potentially available.
  EXPECT_EQ(Collect(cache, false), tc.want_potentially_available)
      << "available after removing usage";
  EXPECT_EQ(Collect(cache, true), tc.want_potentially_available)
      << "potentially available after removing usage";
  for (const auto& [name, cohort] : cache.cohorts()) {
    EXPECT_EQ(NonZero(cohort->node.usage), FlavorResourceQuantities{})
        << "usage left in cohort " << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, AvailableTest,
    ::testing::ValuesIn(std::vector<AvailableCase>{
        {
            .name = "base_cqs",
            .cluster_queues =
                {ClusterQueueBuilder("cq1").Quota("red", "cpu", "0").Build(),
                 ClusterQueueBuilder("cq2")
                     .Quota("red", "cpu", "5")
                     .Quota("blue", "cpu", "10")
                     .Build()},
            .usage = {{"cq1", {{kRedCpu, 1'000}}},
                      {"cq2", {{kRedCpu, 2'500}, {kBlueCpu, 1'000}}}},
            .want_available = {{"cq1", {{kRedCpu, 0}}},
                               {"cq2", {{kRedCpu, 2'500}, {kBlueCpu, 9'000}}}},
            .want_potentially_available =
                {{"cq1", {{kRedCpu, 0}}},
                 {"cq2", {{kRedCpu, 5'000}, {kBlueCpu, 10'000}}}},
        },
        {
            .name = "cqs_with_cohort",
            .cohorts =
                {CohortBuilder("cohort").Quota("red", "cpu", "10").Build()},
            .cluster_queues = {ClusterQueueBuilder("cq1")
                                   .Cohort("cohort")
                                   .Quota("red", "cpu", "10")
                                   .Build(),
                               ClusterQueueBuilder("cq2")
                                   .Cohort("cohort")
                                   .Quota("red", "cpu", "10")
                                   .LendingLimit("9")
                                   .Build()},
            .usage = {{"cq1", {{kRedCpu, 1'000}}}, {"cq2", {{kRedCpu, 500}}}},
            .want_available = {{"cq1", {{kRedCpu, 28'000}}},
                               {"cq2", {{kRedCpu, 28'500}}}},
            .want_potentially_available = {{"cq1", {{kRedCpu, 29'000}}},
                                           {"cq2", {{kRedCpu, 30'000}}}},
        },
        {
            .name = "cq_borrows_from_cohort",
            .cohorts =
                {CohortBuilder("cohort").Quota("red", "cpu", "10").Build()},
            .cluster_queues = {ClusterQueueBuilder("cq1")
                                   .Cohort("cohort")
                                   .Quota("red", "cpu", "10")
                                   .Build()},
            .usage = {{"cq1", {{kRedCpu, 11'000}}}},
            .want_available = {{"cq1", {{kRedCpu, 9'000}}}},
            .want_potentially_available = {{"cq1", {{kRedCpu, 20'000}}}},
        },
        {
            .name = "cq_oversubscription_spills_into_cohort",
            .cohorts =
                {CohortBuilder("cohort").Quota("red", "cpu", "10").Build()},
            .cluster_queues = {ClusterQueueBuilder("cq1")
                                   .Cohort("cohort")
                                   .Quota("red", "cpu", "10")
                                   .Build(),
                               ClusterQueueBuilder("cq2")
                                   .Cohort("cohort")
                                   .Quota("red", "cpu", "10")
                                   .BorrowingLimit("0")
                                   .LendingLimit("0")
                                   .Build()},
            .usage = {{"cq1", {{kRedCpu, 31'000}}}},
            // Even though cq2 neither borrows from nor lends to the
            // cohort, the misbehaving cq1's usage spills into its
            // available, to prevent over-admission within the tree.
            .want_available = {{"cq1", {{kRedCpu, 0}}},
                               {"cq2", {{kRedCpu, 0}}}},
            .want_potentially_available = {{"cq1", {{kRedCpu, 20'000}}},
                                           {"cq2", {{kRedCpu, 10'000}}}},
        },
        {
            // The cohort has 40 (red, cpu) in total; cq1 can access
            // 35 = 40 - 5 reserved by cq3, cq2 can access 12 because of its
            // borrowing limit, cq3 can access all 40.
            .name = "lending_and_borrowing_limits_respected",
            .cohorts =
                {CohortBuilder("cohort").Quota("red", "cpu", "10").Build()},
            .cluster_queues = {ClusterQueueBuilder("cq1")
                                   .Cohort("cohort")
                                   .Quota("red", "cpu", "10")
                                   .Build(),
                               ClusterQueueBuilder("cq2")
                                   .Cohort("cohort")
                                   .Quota("red", "cpu", "10")
                                   .BorrowingLimit("2")
                                   .Build(),
                               ClusterQueueBuilder("cq3")
                                   .Cohort("cohort")
                                   .Quota("red", "cpu", "10")
                                   .LendingLimit("5")
                                   .Build()},
            .usage = {{"cq1", {{kRedCpu, 20'000}}},
                      {"cq2", {{kRedCpu, 10'000}}},
                      {"cq3", {{kRedCpu, 6'000}}}},
            .want_available = {{"cq1", {{kRedCpu, 4'000}}},
                               {"cq2", {{kRedCpu, 2'000}}},
                               {"cq3", {{kRedCpu, 4'000}}}},
            .want_potentially_available = {{"cq1", {{kRedCpu, 35'000}}},
                                           {"cq2", {{kRedCpu, 12'000}}},
                                           {"cq3", {{kRedCpu, 40'000}}}},
        },
        {
            // root
            // +-- left  -- cq1
            // +-- right -- cq2
            .name = "hierarchical_cohort",
            .cohorts = {CohortBuilder("root").Build(),
                        CohortBuilder("left")
                            .Parent("root")
                            .Quota("red", "cpu", "10")
                            .Build(),
                        CohortBuilder("right")
                            .Parent("root")
                            .Quota("red", "cpu", "10")
                            .Build()},
            .cluster_queues = {ClusterQueueBuilder("cq1")
                                   .Cohort("left")
                                   .Quota("red", "cpu", "10")
                                   .Build(),
                               ClusterQueueBuilder("cq2")
                                   .Cohort("right")
                                   .Quota("red", "cpu", "10")
                                   .LendingLimit("0")
                                   .Build()},
            .usage = {{"cq1", {{kRedCpu, 10'000}}},
                      {"cq2", {{kRedCpu, 5'000}}}},
            // cq1: 30k available - 10k usage; no capacity or usage of the
            // right subtree is visible. cq2: 40k - 15k.
            .want_available = {{"cq1", {{kRedCpu, 20'000}}},
                               {"cq2", {{kRedCpu, 25'000}}}},
            .want_potentially_available = {{"cq1", {{kRedCpu, 30'000}}},
                                           {"cq2", {{kRedCpu, 40'000}}}},
        },
        {
            // root
            // +-- left (borrowing limit 5)
            // |   +-- left-cq1
            // |   +-- left-cq2 (borrowing limit 5)
            // +-- right -- right-cq
            .name = "hierarchical_cohort_respects_borrowing_limit",
            .cohorts = {CohortBuilder("root").Build(),
                        CohortBuilder("left")
                            .Parent("root")
                            .Quota("red", "cpu", "10")
                            .BorrowingLimit("5")
                            .Build(),
                        CohortBuilder("right")
                            .Parent("root")
                            .Quota("red", "cpu", "10")
                            .Build()},
            .cluster_queues = {ClusterQueueBuilder("left-cq1")
                                   .Cohort("left")
                                   .Quota("red", "cpu", "10")
                                   .Build(),
                               ClusterQueueBuilder("left-cq2")
                                   .Cohort("left")
                                   .Quota("red", "cpu", "10")
                                   .BorrowingLimit("5")
                                   .Build(),
                               ClusterQueueBuilder("right-cq")
                                   .Cohort("right")
                                   .Quota("red", "cpu", "10")
                                   .Build()},
            // left-cq1: 30k in the left subtree + 5k limit above it;
            // left-cq2: 10k + 5k borrowing limit; right-cq: all 50k.
            .want_available = {{"left-cq1", {{kRedCpu, 35'000}}},
                               {"left-cq2", {{kRedCpu, 15'000}}},
                               {"right-cq", {{kRedCpu, 50'000}}}},
            .want_potentially_available = {{"left-cq1", {{kRedCpu, 35'000}}},
                                           {"left-cq2", {{kRedCpu, 15'000}}},
                                           {"right-cq", {{kRedCpu, 50'000}}}},
        },
        {
            // root -- root-cq
            // +-- left (lending limit 5)
            // |   +-- left-cq1 (lending limit 5)
            // |   +-- left-cq2
            // +-- right -- right-cq
            .name = "hierarchical_cohort_respects_lending_limit",
            .cohorts = {CohortBuilder("root").Build(),
                        CohortBuilder("left")
                            .Parent("root")
                            .Quota("red", "cpu", "0")
                            .LendingLimit("5")
                            .Build(),
                        CohortBuilder("right")
                            .Parent("root")
                            .Quota("red", "cpu", "0")
                            .Build()},
            .cluster_queues = {ClusterQueueBuilder("left-cq1")
                                   .Cohort("left")
                                   .Quota("red", "cpu", "10")
                                   .LendingLimit("5")
                                   .Build(),
                               ClusterQueueBuilder("left-cq2")
                                   .Cohort("left")
                                   .Quota("red", "cpu", "10")
                                   .Build(),
                               ClusterQueueBuilder("right-cq")
                                   .Cohort("right")
                                   .Quota("red", "cpu", "0")
                                   .Build(),
                               ClusterQueueBuilder("root-cq")
                                   .Cohort("root")
                                   .Quota("red", "cpu", "0")
                                   .Build()},
            // left-cq2: only 5k of left-cq1's quota plus its own 10k;
            // right-cq and root-cq: the 5k left lends to root.
            .want_available = {{"left-cq1", {{kRedCpu, 20'000}}},
                               {"left-cq2", {{kRedCpu, 15'000}}},
                               {"right-cq", {{kRedCpu, 5'000}}},
                               {"root-cq", {{kRedCpu, 5'000}}}},
            .want_potentially_available = {{"left-cq1", {{kRedCpu, 20'000}}},
                                           {"left-cq2", {{kRedCpu, 15'000}}},
                                           {"right-cq", {{kRedCpu, 5'000}}},
                                           {"root-cq", {{kRedCpu, 5'000}}}},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// TestCohortLendable (resource_node_test.go), plus kq cases for a cohort
// below the root, whose lendable capacity is capped by its borrowing limit.

struct LendableCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const LendableCase& c, std::ostream* os) {
    *os << c.name;
  }
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::string cohort;
  std::map<std::string, int64_t> want;
};

class LendableTest : public ::testing::TestWithParam<LendableCase> {};

TEST_P(LendableTest, SumsPotentialAvailableByResource) {
  const LendableCase& tc = GetParam();
  Cache cache;
  cache.Rebuild(ByName(tc.cluster_queues), ByName(tc.cohorts),
                {"default", "red"}, {});
  const CohortSnapshot* cohort = cache.FindCohort(tc.cohort);
  ASSERT_NE(cohort, nullptr);
  EXPECT_EQ(Lendable(*cohort), tc.want);
}

// The tree of "hierarchical_cohort_respects_borrowing_limit" above.
std::vector<Cohort> BorrowingLimitTreeCohorts() {
  return {
      CohortBuilder("root").Build(),
      CohortBuilder("left")
          .Parent("root")
          .Quota("red", "cpu", "10")
          .BorrowingLimit("5")
          .Build(),
      CohortBuilder("right").Parent("root").Quota("red", "cpu", "10").Build()};
}
std::vector<ClusterQueue> BorrowingLimitTreeQueues() {
  return {ClusterQueueBuilder("left-cq1")
              .Cohort("left")
              .Quota("red", "cpu", "10")
              .Build(),
          ClusterQueueBuilder("left-cq2")
              .Cohort("left")
              .Quota("red", "cpu", "10")
              .BorrowingLimit("5")
              .Build(),
          ClusterQueueBuilder("right-cq")
              .Cohort("right")
              .Quota("red", "cpu", "10")
              .Build()};
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, LendableTest,
    ::testing::ValuesIn(std::vector<LendableCase>{
        {
            .name = "cohort_lendable",
            .cluster_queues = {ClusterQueueBuilder("cq1")
                                   .Cohort("test-cohort")
                                   .ResourceGroup({"cpu", "example.com/gpu"})
                                   .Flavor("default")
                                   .Quota("cpu", "8")
                                   .LendingLimit("8")
                                   .Quota("example.com/gpu", "3")
                                   .LendingLimit("3")
                                   .Build(),
                               ClusterQueueBuilder("cq2")
                                   .Cohort("test-cohort")
                                   .Quota("default", "cpu", "2")
                                   .LendingLimit("2")
                                   .Build()},
            .cohort = "test-cohort",
            .want = {{"cpu", 10'000}, {"example.com/gpu", 3}},
        },
        {
            // kq: the root lends its whole subtree quota.
            .name = "hierarchy_root",
            .cohorts = BorrowingLimitTreeCohorts(),
            .cluster_queues = BorrowingLimitTreeQueues(),
            .cohort = "root",
            .want = {{"cpu", 50'000}},
        },
        {
            // kq: below the root, the borrowing limit caps what the tree
            // can lend: left's 30k subtree quota + 5k.
            .name = "hierarchy_child_with_borrowing_limit",
            .cohorts = BorrowingLimitTreeCohorts(),
            .cluster_queues = BorrowingLimitTreeQueues(),
            .cohort = "left",
            .want = {{"cpu", 35'000}},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// TestSnapshot (snapshot_test.go): subtree quota and usage of every node
// once the workloads holding quota are added, and which ClusterQueues are
// left out as inactive.

struct NodeWant {
  FlavorResourceQuantities subtree_quota;
  FlavorResourceQuantities usage;
};

struct SnapshotCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const SnapshotCase& c, std::ostream* os) {
    *os << c.name;
  }
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::set<std::string> flavors;
  std::vector<Admission> admissions;
  std::map<std::string, NodeWant> want_cohorts;
  std::map<std::string, NodeWant> want_cluster_queues;
  std::set<std::string> want_inactive;
};

class SnapshotTest : public ::testing::TestWithParam<SnapshotCase> {};

TEST_P(SnapshotTest, ResourceNodes) {
  const SnapshotCase& tc = GetParam();
  Cache cache;
  cache.Rebuild(ByName(tc.cluster_queues), ByName(tc.cohorts), tc.flavors, {});
  for (const Admission& admission : tc.admissions) {
    cache.FindClusterQueue(admission.cluster_queue)
        ->AddUsage(UsageOf(admission));
  }
  for (const auto& [name, want] : tc.want_cohorts) {
    SCOPED_TRACE("cohort " + name);
    const CohortSnapshot* cohort = cache.FindCohort(name);
    ASSERT_NE(cohort, nullptr);
    EXPECT_EQ(cohort->node.subtree_quota, want.subtree_quota);
    EXPECT_EQ(NonZero(cohort->node.usage), want.usage);
  }
  for (const auto& [name, want] : tc.want_cluster_queues) {
    SCOPED_TRACE("cluster queue " + name);
    const ClusterQueueSnapshot* cq = cache.FindClusterQueue(name);
    ASSERT_NE(cq, nullptr);
    EXPECT_EQ(cq->node.subtree_quota, want.subtree_quota);
    EXPECT_EQ(NonZero(cq->node.usage), want.usage);
  }
  EXPECT_EQ(InactiveClusterQueues(cache), tc.want_inactive);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, SnapshotTest,
    ::testing::ValuesIn(std::vector<SnapshotCase>{
        {
            .name = "cohort",
            .cluster_queues = {ClusterQueueBuilder("a")
                                   .Cohort("borrowing")
                                   .Quota("demand", "cpu", "100")
                                   .Quota("spot", "cpu", "200")
                                   .Build(),
                               ClusterQueueBuilder("b")
                                   .Cohort("borrowing")
                                   .ResourceGroup({"cpu"})
                                   .Quota("spot", "cpu", "100")
                                   .ResourceGroup({"example.com/gpu"})
                                   .Quota("default", "example.com/gpu", "50")
                                   .Build(),
                               ClusterQueueBuilder("c")
                                   .Quota("default", "cpu", "100")
                                   .Build()},
            .flavors = {"demand", "spot", "default"},
            .admissions = {AdmissionBuilder("a")
                               .PodSet("main", 5)
                               .Assign("cpu", "demand", "10000m")
                               .Build(),
                           AdmissionBuilder("b")
                               .PodSet("main", 5)
                               .Assign("cpu", "spot", "5000m")
                               .Assign("example.com/gpu", "default", "10")
                               .Build(),
                           AdmissionBuilder("b")
                               .PodSet("main", 5)
                               .Assign("cpu", "spot", "5000m")
                               .Assign("example.com/gpu", "default", "5")
                               .Build()},
            .want_cohorts =
                {{"borrowing",
                  {.subtree_quota = {{{"demand", "cpu"}, 100'000},
                                     {{"spot", "cpu"}, 300'000},
                                     {{"default", "example.com/gpu"}, 50}},
                   .usage = {{{"demand", "cpu"}, 10'000},
                             {{"spot", "cpu"}, 10'000},
                             {{"default", "example.com/gpu"}, 15}}}}},
            .want_cluster_queues =
                {{"a",
                  {.subtree_quota = {{{"demand", "cpu"}, 100'000},
                                     {{"spot", "cpu"}, 200'000}},
                   .usage = {{{"demand", "cpu"}, 10'000}}}},
                 {"b",
                  {.subtree_quota = {{{"spot", "cpu"}, 100'000},
                                     {{"default", "example.com/gpu"}, 50}},
                   .usage = {{{"spot", "cpu"}, 10'000},
                             {{"default", "example.com/gpu"}, 15}}}},
                 {"c",
                  {.subtree_quota = {{{"default", "cpu"}, 100'000}},
                   .usage = {}}}},
        },
        {
            .name = "lendinglimit_with_2_clusterqueues_and_2_flavors_"
                    "whencanborrow_maystopsearch",
            .cluster_queues = {ClusterQueueBuilder("a")
                                   .Cohort("lending")
                                   .Quota("arm", "cpu", "10")
                                   .LendingLimit("5")
                                   .Quota("x86", "cpu", "20")
                                   .LendingLimit("10")
                                   .Build(),
                               ClusterQueueBuilder("b")
                                   .Cohort("lending")
                                   .Quota("arm", "cpu", "10")
                                   .LendingLimit("5")
                                   .Quota("x86", "cpu", "20")
                                   .LendingLimit("10")
                                   .Build()},
            .flavors = {"arm", "x86"},
            .admissions = {AdmissionBuilder("a")
                               .PodSet("main", 5)
                               .Assign("cpu", "arm", "10000m")
                               .Build(),
                           AdmissionBuilder("a")
                               .PodSet("main", 5)
                               .Assign("cpu", "arm", "5000m")
                               .Build(),
                           AdmissionBuilder("a")
                               .PodSet("main", 5)
                               .Assign("cpu", "x86", "10000m")
                               .Build()},
            .want_cohorts = {{"lending",
                              {.subtree_quota = {{{"arm", "cpu"}, 10'000},
                                                 {{"x86", "cpu"}, 20'000}},
                               .usage = {{{"arm", "cpu"}, 10'000}}}}},
            .want_cluster_queues =
                {{"a",
                  {.subtree_quota = {{{"arm", "cpu"}, 10'000},
                                     {{"x86", "cpu"}, 20'000}},
                   .usage = {{{"arm", "cpu"}, 15'000},
                             {{"x86", "cpu"}, 10'000}}}},
                 {"b",
                  {.subtree_quota = {{{"arm", "cpu"}, 10'000},
                                     {{"x86", "cpu"}, 20'000}},
                   .usage = {}}}},
        },
        {
            .name = "cohort_provides_resources",
            .cohorts = {CohortBuilder("cohort")
                            .ResourceGroup({"cpu"})
                            .Quota("arm", "cpu", "10")
                            .Quota("x86", "cpu", "20")
                            .ResourceGroup({"cpu"})
                            .Quota("mips", "cpu", "42")
                            .Build()},
            .cluster_queues = {ClusterQueueBuilder("cq")
                                   .Cohort("cohort")
                                   .Quota("arm", "cpu", "7")
                                   .LendingLimit("3")
                                   .Quota("x86", "cpu", "5")
                                   .Build()},
            .flavors = {"arm", "x86", "mips"},
            .want_cohorts = {{"cohort",
                              {.subtree_quota = {{{"arm", "cpu"}, 13'000},
                                                 {{"x86", "cpu"}, 25'000},
                                                 {{"mips", "cpu"}, 42'000}},
                               .usage = {}}}},
            .want_cluster_queues = {{"cq",
                                     {.subtree_quota = {{{"arm", "cpu"}, 7'000},
                                                        {{"x86", "cpu"},
                                                         5'000}},
                                      .usage = {}}}},
        },
        {
            .name = "cohorts_with_cycles_and_their_cqs_excluded_from_snapshot",
            .cohorts = {CohortBuilder("autocycle").Parent("autocycle").Build(),
                        CohortBuilder("cycle-a").Parent("cycle-b").Build(),
                        CohortBuilder("cycle-b").Parent("cycle-a").Build(),
                        CohortBuilder("nocycle").Build()},
            .cluster_queues = {ClusterQueueBuilder("cq-autocycle")
                                   .Cohort("autocycle")
                                   .Quota("arm", "cpu", "0")
                                   .Build(),
                               ClusterQueueBuilder("cq-a")
                                   .Cohort("cycle-a")
                                   .Quota("arm", "cpu", "0")
                                   .Build(),
                               ClusterQueueBuilder("cq-b")
                                   .Cohort("cycle-b")
                                   .Quota("arm", "cpu", "0")
                                   .Build(),
                               ClusterQueueBuilder("cq-nocycle")
                                   .Cohort("nocycle")
                                   .Quota("arm", "cpu", "0")
                                   .Build()},
            .flavors = {"arm"},
            .want_cohorts = {{"nocycle",
                              {.subtree_quota = {{{"arm", "cpu"}, 0}},
                               .usage = {}}}},
            .want_cluster_queues = {{"cq-nocycle",
                                     {.subtree_quota = {{{"arm", "cpu"}, 0}},
                                      .usage = {}}}},
            .want_inactive = {"cq-autocycle", "cq-a", "cq-b"},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// TestSnapshotAddRemoveWorkload and TestSnapshotAddRemoveWorkloadWithLending
// Limit: start from every workload's usage, remove some, add some back, and
// compare the usage of every node. Subtree quotas must not move.

struct AddRemoveCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const AddRemoveCase& c, std::ostream* os) {
    *os << c.name;
  }
  std::vector<std::string> remove;
  std::vector<std::string> add;
  // True: the state must be back to the initial one.
  bool want_initial = false;
  QuantitiesByQueue want_cluster_queue_usage;
  QuantitiesByQueue want_cohort_usage;
};

// Usage of every node, without zero entries.
QuantitiesByQueue ClusterQueueUsage(const Cache& cache) {
  QuantitiesByQueue out;
  for (const auto& [name, cq] : cache.cluster_queues()) {
    out[name] = NonZero(cq->node.usage);
  }
  return out;
}
QuantitiesByQueue CohortUsage(const Cache& cache) {
  QuantitiesByQueue out;
  for (const auto& [name, cohort] : cache.cohorts()) {
    out[name] = NonZero(cohort->node.usage);
  }
  return out;
}
QuantitiesByQueue SubtreeQuotas(const Cache& cache) {
  QuantitiesByQueue out;
  for (const auto& [name, cohort] : cache.cohorts()) {
    out[name] = cohort->node.subtree_quota;
  }
  return out;
}

void RunAddRemove(const AddRemoveCase& tc,
                  const std::vector<ClusterQueue>& cluster_queues,
                  const std::set<std::string>& flavors,
                  const std::map<std::string, Admission>& workloads) {
  Cache cache;
  cache.Rebuild(ByName(cluster_queues), {}, flavors, {});
  for (const auto& [name, admission] : workloads) {
    cache.FindClusterQueue(admission.cluster_queue)
        ->AddUsage(UsageOf(admission));
  }
  const QuantitiesByQueue initial_cq_usage = ClusterQueueUsage(cache);
  const QuantitiesByQueue initial_cohort_usage = CohortUsage(cache);
  const QuantitiesByQueue initial_subtree = SubtreeQuotas(cache);

  for (const std::string& name : tc.remove) {
    const Admission& admission = workloads.at(name);
    cache.FindClusterQueue(admission.cluster_queue)
        ->RemoveUsage(UsageOf(admission));
  }
  for (const std::string& name : tc.add) {
    const Admission& admission = workloads.at(name);
    cache.FindClusterQueue(admission.cluster_queue)
        ->AddUsage(UsageOf(admission));
  }

  if (tc.want_initial) {
    EXPECT_EQ(ClusterQueueUsage(cache), initial_cq_usage);
    EXPECT_EQ(CohortUsage(cache), initial_cohort_usage);
  } else {
    EXPECT_EQ(ClusterQueueUsage(cache), tc.want_cluster_queue_usage);
    EXPECT_EQ(CohortUsage(cache), tc.want_cohort_usage);
  }
  EXPECT_EQ(SubtreeQuotas(cache), initial_subtree);
}

class SnapshotAddRemoveWorkloadTest
    : public ::testing::TestWithParam<AddRemoveCase> {};

TEST_P(SnapshotAddRemoveWorkloadTest, Usage) {
  std::vector<ClusterQueue> cluster_queues{ClusterQueueBuilder("c1")
                                               .Cohort("cohort")
                                               .ResourceGroup({"cpu"})
                                               .Quota("default", "cpu", "6")
                                               .ResourceGroup({"memory"})
                                               .Quota("alpha", "memory", "6Gi")
                                               .Quota("beta", "memory", "6Gi")
                                               .Build(),
                                           ClusterQueueBuilder("c2")
                                               .Cohort("cohort")
                                               .Quota("default", "cpu", "6")
                                               .Build()};
  std::map<std::string, Admission> workloads{
      {"c1-cpu",
       AdmissionBuilder("c1").Assign("cpu", "default", "1000m").Build()},
      {"c1-memory-alpha",
       AdmissionBuilder("c1").Assign("memory", "alpha", "1Gi").Build()},
      {"c1-memory-beta",
       AdmissionBuilder("c1").Assign("memory", "beta", "1Gi").Build()},
      {"c2-cpu-1",
       AdmissionBuilder("c2").Assign("cpu", "default", "1000m").Build()},
      {"c2-cpu-2",
       AdmissionBuilder("c2").Assign("cpu", "default", "1000m").Build()},
  };
  RunAddRemove(GetParam(), cluster_queues, {"default", "alpha", "beta"},
               workloads);
}

const FlavorResource kDefaultCpu{"default", "cpu"};
const FlavorResource kAlphaMemory{"alpha", "memory"};
const FlavorResource kBetaMemory{"beta", "memory"};

INSTANTIATE_TEST_SUITE_P(
    Kueue, SnapshotAddRemoveWorkloadTest,
    ::testing::ValuesIn(std::vector<AddRemoveCase>{
        {
            .name = "no_op_remove_add",
            .remove = {"c1-cpu", "c2-cpu-1"},
            .add = {"c1-cpu", "c2-cpu-1"},
            .want_initial = true,
        },
        {
            .name = "remove_all",
            .remove = {"c1-cpu", "c1-memory-alpha", "c1-memory-beta",
                       "c2-cpu-1", "c2-cpu-2"},
            .want_cluster_queue_usage = {{"c1", {}}, {"c2", {}}},
            .want_cohort_usage = {{"cohort", {}}},
        },
        {
            .name = "remove_c1_cpu",
            .remove = {"c1-cpu"},
            .want_cluster_queue_usage =
                {{"c1", {{kAlphaMemory, kGi}, {kBetaMemory, kGi}}},
                 {"c2", {{kDefaultCpu, 2'000}}}},
            .want_cohort_usage = {{"cohort",
                                   {{kDefaultCpu, 2'000},
                                    {kAlphaMemory, kGi},
                                    {kBetaMemory, kGi}}}},
        },
        {
            .name = "remove_c1_memory_alpha",
            .remove = {"c1-memory-alpha"},
            .want_cluster_queue_usage =
                {{"c1", {{kDefaultCpu, 1'000}, {kBetaMemory, kGi}}},
                 {"c2", {{kDefaultCpu, 2'000}}}},
            .want_cohort_usage = {{"cohort",
                                   {{kDefaultCpu, 3'000}, {kBetaMemory, kGi}}}},
        },
    }),
    [](const auto& info) { return info.param.name; });

class SnapshotAddRemoveWorkloadWithLendingLimitTest
    : public ::testing::TestWithParam<AddRemoveCase> {};

TEST_P(SnapshotAddRemoveWorkloadWithLendingLimitTest, Usage) {
  std::vector<ClusterQueue> cluster_queues{ClusterQueueBuilder("lend-a")
                                               .Cohort("lend")
                                               .Quota("default", "cpu", "10")
                                               .LendingLimit("4")
                                               .Build(),
                                           ClusterQueueBuilder("lend-b")
                                               .Cohort("lend")
                                               .Quota("default", "cpu", "10")
                                               .LendingLimit("6")
                                               .Build()};
  std::map<std::string, Admission> workloads{
      {"lend-a-1",
       AdmissionBuilder("lend-a").Assign("cpu", "default", "1").Build()},
      {"lend-a-2",
       AdmissionBuilder("lend-a").Assign("cpu", "default", "9").Build()},
      {"lend-a-3",
       AdmissionBuilder("lend-a").Assign("cpu", "default", "6").Build()},
      {"lend-b-1",
       AdmissionBuilder("lend-b").Assign("cpu", "default", "4").Build()},
  };
  RunAddRemove(GetParam(), cluster_queues, {"default"}, workloads);
}

const std::vector<std::string> kAllLendWorkloads{"lend-a-1", "lend-a-2",
                                                 "lend-a-3", "lend-b-1"};

INSTANTIATE_TEST_SUITE_P(
    Kueue, SnapshotAddRemoveWorkloadWithLendingLimitTest,
    ::testing::ValuesIn(std::vector<AddRemoveCase>{
        {
            .name = "remove_all_then_add_all",
            .remove = kAllLendWorkloads,
            .add = kAllLendWorkloads,
            .want_initial = true,
        },
        {
            .name = "remove_all",
            .remove = kAllLendWorkloads,
            .want_cluster_queue_usage = {{"lend-a", {}}, {"lend-b", {}}},
            .want_cohort_usage = {{"lend", {}}},
        },
        {
            .name =
                "remove_workload_but_still_using_quota_over_guaranteedquota",
            .remove = {"lend-a-2"},
            .want_cluster_queue_usage = {{"lend-a", {{kDefaultCpu, 7'000}}},
                                         {"lend-b", {{kDefaultCpu, 4'000}}}},
            .want_cohort_usage = {{"lend", {{kDefaultCpu, 1'000}}}},
        },
        {
            .name = "remove_wokload_using_same_quota_as_guaranteedquota",
            .remove = {"lend-a-1", "lend-a-2"},
            .want_cluster_queue_usage = {{"lend-a", {{kDefaultCpu, 6'000}}},
                                         {"lend-b", {{kDefaultCpu, 4'000}}}},
            .want_cohort_usage = {{"lend", {}}},
        },
        {
            .name = "remove_workload_using_less_quota_than_guaranteedquota",
            .remove = {"lend-a-2", "lend-a-3"},
            .want_cluster_queue_usage = {{"lend-a", {{kDefaultCpu, 1'000}}},
                                         {"lend-b", {{kDefaultCpu, 4'000}}}},
            .want_cohort_usage = {{"lend", {}}},
        },
        {
            .name = "remove_all_then_add_workload_using_less_quota_than_"
                    "guaranteedquota",
            .remove = kAllLendWorkloads,
            .add = {"lend-a-1"},
            .want_cluster_queue_usage = {{"lend-a", {{kDefaultCpu, 1'000}}},
                                         {"lend-b", {}}},
            .want_cohort_usage = {{"lend", {}}},
        },
        {
            .name = "remove_all_then_add_workload_using_same_quota_as_"
                    "guaranteedquota",
            .remove = kAllLendWorkloads,
            .add = {"lend-a-3"},
            .want_cluster_queue_usage = {{"lend-a", {{kDefaultCpu, 6'000}}},
                                         {"lend-b", {}}},
            .want_cohort_usage = {{"lend", {}}},
        },
        {
            .name = "remove_all_then_add_workload_using_quota_over_"
                    "guaranteedquota",
            .remove = kAllLendWorkloads,
            .add = {"lend-a-2"},
            .want_cluster_queue_usage = {{"lend-a", {{kDefaultCpu, 9'000}}},
                                         {"lend-b", {}}},
            .want_cohort_usage = {{"lend", {{kDefaultCpu, 3'000}}}},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// TestClusterQueueUsage (cache_test.go): the reserved total and the borrowed
// part of every flavor-resource of the queue.

struct UsageWant {
  int64_t total = 0;
  int64_t borrowed = 0;
  friend bool operator==(const UsageWant&, const UsageWant&) = default;
  friend void PrintTo(const UsageWant& u, std::ostream* os) {
    *os << "{total " << u.total << ", borrowed " << u.borrowed << "}";
  }
};

struct ClusterQueueUsageCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const ClusterQueueUsageCase& c, std::ostream* os) {
    *os << c.name;
  }
  bool in_cohort = false;
  std::vector<Admission> admissions;
  std::map<FlavorResource, UsageWant> want_reserved;
};

class ClusterQueueUsageTest
    : public ::testing::TestWithParam<ClusterQueueUsageCase> {};

TEST_P(ClusterQueueUsageTest, ReservedAndBorrowed) {
  const ClusterQueueUsageCase& tc = GetParam();
  ClusterQueueBuilder builder("foo");
  builder.ResourceGroup({"cpu"})
      .Quota("default", "cpu", "10")
      .BorrowingLimit("10")
      .ResourceGroup({"example.com/gpu"})
      .Quota("model_a", "example.com/gpu", "5")
      .BorrowingLimit("5")
      .Quota("model_b", "example.com/gpu", "5")
      .ResourceGroup(
          {"example.com/vf-0", "example.com/vf-1", "example.com/vf-2"})
      .Flavor("interconnect_a")
      .Quota("example.com/vf-0", "5")
      .BorrowingLimit("5")
      .Quota("example.com/vf-1", "5")
      .BorrowingLimit("5")
      .Quota("example.com/vf-2", "5")
      .BorrowingLimit("5");
  if (tc.in_cohort) builder.Cohort("one");
  Cache cache;
  cache.Rebuild(ByName(std::vector<ClusterQueue>{builder.Build()}), {},
                {"default", "model_a", "model_b", "interconnect_a"}, {});
  ClusterQueueSnapshot* cq = cache.FindClusterQueue("foo");
  for (const Admission& admission : tc.admissions) {
    cq->AddUsage(UsageOf(admission));
  }
  std::map<FlavorResource, UsageWant> got;
  for (const auto& [fr, limits] : cq->node.quotas) {
    got[fr] = {cq->node.Get(cq->node.usage, fr), cq->Borrowed(fr)};
  }
  EXPECT_EQ(got, tc.want_reserved);
}

// Workloads "one" and "two" of Kueue's test.
Admission UsageOne() {
  return AdmissionBuilder("foo")
      .Assign("cpu", "default", "8000m")
      .Assign("example.com/gpu", "model_a", "5")
      .Build();
}
Admission UsageTwo() {
  return AdmissionBuilder("foo")
      .Assign("cpu", "default", "5000m")
      .Assign("example.com/gpu", "model_b", "6")
      .Build();
}
// The reserved usage of every flavor-resource of "foo", `changed` applied.
std::map<FlavorResource, UsageWant> Reserved(
    std::map<FlavorResource, UsageWant> changed) {
  std::map<FlavorResource, UsageWant> all{
      {{"default", "cpu"}, {}},
      {{"model_a", "example.com/gpu"}, {}},
      {{"model_b", "example.com/gpu"}, {}},
      {{"interconnect_a", "example.com/vf-0"}, {}},
      {{"interconnect_a", "example.com/vf-1"}, {}},
      {{"interconnect_a", "example.com/vf-2"}, {}},
  };
  for (const auto& [fr, u] : changed) all[fr] = u;
  return all;
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, ClusterQueueUsageTest,
    ::testing::ValuesIn(std::vector<ClusterQueueUsageCase>{
        {
            .name = "clusterqueue_without_cohort_single_admitted_no_borrowing",
            .admissions = {UsageOne()},
            .want_reserved = Reserved({{{"default", "cpu"}, {8'000, 0}},
                                       {{"model_a", "example.com/gpu"},
                                        {5, 0}}}),
        },
        {
            .name = "clusterqueue_with_cohort_multiple_borrowing",
            .in_cohort = true,
            .admissions = {UsageOne(), UsageTwo()},
            .want_reserved = Reserved({{{"default", "cpu"}, {13'000, 3'000}},
                                       {{"model_a", "example.com/gpu"}, {5, 0}},
                                       {{"model_b", "example.com/gpu"},
                                        {6, 1}}}),
        },
        {
            // Borrowed is 0 outside a cohort, whatever the usage.
            .name = "clusterqueue_without_cohort_multiple_borrowing",
            .admissions = {UsageOne(), UsageTwo()},
            .want_reserved = Reserved({{{"default", "cpu"}, {13'000, 0}},
                                       {{"model_a", "example.com/gpu"}, {5, 0}},
                                       {{"model_b", "example.com/gpu"},
                                        {6, 0}}}),
        },
        {
            // Two pods of five admitted, 4 CPU in all, twice.
            .name = "clusterqueue_with_cohort_partial_admission",
            .in_cohort = true,
            .admissions = {AdmissionBuilder("foo")
                               .PodSet("main", 2)
                               .Assign("cpu", "default", "4000m")
                               .Build(),
                           AdmissionBuilder("foo")
                               .PodSet("main", 2)
                               .Assign("cpu", "default", "4000m")
                               .Build()},
            .want_reserved = Reserved({{{"default", "cpu"}, {8'000, 0}}}),
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Unlimited quotas (KUEUE.md 2.1): Kueue's AmountFromQuantity makes a CPU
// quota of at least INT64_MAX/1000 cores unlimited, and arithmetic on
// unlimited saturates.

TEST(UnlimitedQuotaTest, HugeCpuQuotaIsUnlimitedAndSaturates) {
  constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();
  std::map<std::string, ClusterQueue> cqs{
      {"huge", ClusterQueueBuilder("huge")
                   .Cohort("c")
                   .Quota("red", "cpu", "9223372036854775")
                   .Build()},
      {"big", ClusterQueueBuilder("big")
                  .Cohort("c")
                  .Quota("red", "cpu", "9223372036854774")
                  .Build()},
      {"small", ClusterQueueBuilder("small")
                    .Cohort("c")
                    .Quota("red", "cpu", "4")
                    .Build()}};
  Cache cache;
  cache.Rebuild(cqs, {}, {"red"}, {});
  EXPECT_EQ(cache.FindClusterQueue("huge")->node.quotas.at(kRedCpu).nominal,
            kUnlimited);
  EXPECT_EQ(cache.FindClusterQueue("big")->node.quotas.at(kRedCpu).nominal,
            int64_t{9223372036854774000});
  // Unlimited + anything stays unlimited in the cohort.
  EXPECT_EQ(cache.FindCohort("c")->node.subtree_quota.at(kRedCpu), kUnlimited);
  ClusterQueueSnapshot* small = cache.FindClusterQueue("small");
  small->AddUsage({{kRedCpu, 1'000'000}});
  // Unlimited - usage is still unlimited.
  EXPECT_EQ(small->Available(kRedCpu), kUnlimited);
  EXPECT_EQ(small->PotentialAvailable(kRedCpu), kUnlimited);
  EXPECT_TRUE(small->BorrowingWith(kRedCpu, 0));
  EXPECT_EQ(small->Borrowed(kRedCpu), 1'000'000 - 4'000);
  small->RemoveUsage({{kRedCpu, 1'000'000}});
  EXPECT_EQ(cache.FindCohort("c")->node.usage.at(kRedCpu), 0);
}

}  // namespace
}  // namespace kq::cache
