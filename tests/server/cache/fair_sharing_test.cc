// Fair sharing's numbers: the dominant resource share of ClusterQueues and
// Cohorts, its rounding for status and the comparison of two shares.
// Ported from Kueue's pkg/cache/scheduler/fair_sharing_test.go:
//   TestDominantResourceShare          (every case)
//   TestIsBorrowingOn                  (every case)
//   TestPreciseWeightedShareSerialized (every case)
// Case names are Kueue's, in snake_case. Amounts are in Kueue's integer
// units (milli-CPU, whole GPUs). Kueue checks each case on its cache and on
// a snapshot of it; kq has one tree, checked once.
//
// Kueue has no table for CompareDRS (preemption_fair_test.go only relies on
// it); CompareDrsTest and WeightedShareTest are written from the
// definitions in fair_sharing.go and KUEUE.md 6.7.
//
// No case is skipped: the one above kq's Quantity range ("1E" CPU) is a CPU
// quota, which Kueue and kq both read as unlimited.

#include "server/cache/fair_sharing.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
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
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
const FlavorResource kDefaultCpu{"default", "cpu"};
const FlavorResource kDefaultGpu{"default", "example.com/gpu"};
const FlavorResource kOnDemandCpu{"on-demand", "cpu"};
const FlavorResource kSpotCpu{"spot", "cpu"};

// ---------------------------------------------------------------------------
// TestDominantResourceShare

// What Kueue's test records for one node (its fairSharingResult).
struct ShareResult {
  std::string name;
  bool cohort = false;
  int64_t value = 0;
  std::string resource;
  bool borrowing = false;
  friend auto operator<=>(const ShareResult&, const ShareResult&) = default;
  // Prints the result on one line, for failure messages.
  friend void PrintTo(const ShareResult& r, std::ostream* os) {
    *os << (r.cohort ? "cohort " : "cq ") << r.name << ": " << r.value << " ("
        << (r.resource.empty() ? "-" : r.resource) << ")"
        << (r.borrowing ? " borrowing" : "");
  }
};

// A ClusterQueue's expected result.
ShareResult Cq(std::string name, int64_t value = 0, std::string resource = "",
               bool borrowing = false) {
  return {.name = std::move(name),
          .value = value,
          .resource = std::move(resource),
          .borrowing = borrowing};
}

// A Cohort's expected result.
ShareResult Co(std::string name, int64_t value = 0, std::string resource = "",
               bool borrowing = false) {
  ShareResult r = Cq(std::move(name), value, std::move(resource), borrowing);
  r.cohort = true;
  return r;
}

struct DominantResourceShareCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const DominantResourceShareCase& c, std::ostream* os) {
    *os << c.name;
  }
  // Usage of admitted workloads of ClusterQueue "cq".
  FlavorResourceQuantities usage;
  ClusterQueue cluster_queue;
  std::optional<ClusterQueue> lending_cluster_queue;
  std::vector<Cohort> cohorts;
  // The request counted on every node (Kueue's flvResQ).
  FlavorResourceQuantities request;
  std::vector<ShareResult> want;
};

class DominantResourceShareTest
    : public ::testing::TestWithParam<DominantResourceShareCase> {};

TEST_P(DominantResourceShareTest, EveryNode) {
  const DominantResourceShareCase& tc = GetParam();
  std::vector<ClusterQueue> queues = {tc.cluster_queue};
  if (tc.lending_cluster_queue) queues.push_back(*tc.lending_cluster_queue);
  Cache cache;
  cache.Rebuild(ByName(queues), ByName(tc.cohorts),
                {"default", "on-demand", "spot"}, {});
  ClusterQueueSnapshot* cq = cache.FindClusterQueue("cq");
  ASSERT_NE(cq, nullptr);
  // One workload per flavor-resource, as Kueue's test admits them.
  for (const auto& [fr, v] : tc.usage) cq->AddUsage({{fr, v}});

  std::set<ShareResult> got;
  for (const auto& [name, queue] : cache.cluster_queues()) {
    DRS drs = DominantResourceShare(*queue, tc.request);
    got.insert({.name = name,
                .value = drs.WeightedShare(),
                .resource = drs.dominant_resource,
                .borrowing = drs.IsBorrowing()});
  }
  for (const auto& [name, cohort] : cache.cohorts()) {
    DRS drs = DominantResourceShare(*cohort, tc.request);
    got.insert({.name = name,
                .cohort = true,
                .value = drs.WeightedShare(),
                .resource = drs.dominant_resource,
                .borrowing = drs.IsBorrowing()});
  }
  EXPECT_EQ(got, std::set<ShareResult>(tc.want.begin(), tc.want.end()));
}

// The two queues most cases use: "cq" with cpu 2 and gpu 5, and
// "lending-cq" with cpu 8 and gpu 5, in cohort "test-cohort".
ClusterQueue CpuGpuQueue() {
  return ClusterQueueBuilder("cq")
      .Cohort("test-cohort")
      .FairSharingWeight("1")
      .Quota("default", "cpu", "2")
      .Quota("default", "example.com/gpu", "5")
      .Build();
}
ClusterQueue CpuGpuLendingQueue() {
  return ClusterQueueBuilder("lending-cq")
      .Cohort("test-cohort")
      .FairSharingWeight("1")
      .Quota("default", "cpu", "8")
      .Quota("default", "example.com/gpu", "5")
      .Build();
}

// A gpu-only queue in "test-cohort" with the given weight and nominal.
ClusterQueue GpuQueue(std::string name, std::string weight,
                      std::string nominal) {
  return ClusterQueueBuilder(std::move(name))
      .Cohort("test-cohort")
      .FairSharingWeight(weight)
      .Quota("default", "example.com/gpu", nominal)
      .Build();
}

// Results of the two idle nodes of a flat two-queue cohort.
const ShareResult kLendingIdle = Cq("lending-cq");
const ShareResult kTestCohortIdle = Co("test-cohort");

INSTANTIATE_TEST_SUITE_P(
    Kueue, DominantResourceShareTest,
    ::testing::ValuesIn(std::vector<DominantResourceShareCase>{
        {
            .name = "no_cohort",
            .usage = {{kDefaultCpu, 1'000}, {kDefaultGpu, 2}},
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Quota("default", "cpu", "2000")
                                 .Quota("default", "example.com/gpu", "5")
                                 .Build(),
            .want = {Cq("cq")},
        },
        {
            .name = "usage_below_nominal",
            .usage = {{kDefaultCpu, 1'000}, {kDefaultGpu, 2}},
            .cluster_queue = CpuGpuQueue(),
            .lending_cluster_queue = CpuGpuLendingQueue(),
            .want = {Cq("cq"), kLendingIdle, kTestCohortIdle},
        },
        {
            .name = "usage_above_nominal",
            .usage = {{kDefaultCpu, 3'000}, {kDefaultGpu, 7}},
            .cluster_queue = CpuGpuQueue(),
            .lending_cluster_queue = CpuGpuLendingQueue(),
            // (7-5)*1000/10
            .want = {Cq("cq", 200, "example.com/gpu", true), kLendingIdle,
                     kTestCohortIdle},
        },
        {
            .name = "usage_slightly_above_nominal_in_a_cohort_with_large_"
                    "quotas",
            .usage = {{kDefaultGpu, 501}},
            .cluster_queue = GpuQueue("cq", "1", "500"),
            .lending_cluster_queue = GpuQueue("lending-cq", "300", "1000"),
            // 1*1000/1500 rounds up to 1.
            .want = {Cq("cq", 1, "example.com/gpu", true), kLendingIdle,
                     kTestCohortIdle},
        },
        {
            .name = "usage_way_above_nominal_in_a_cohort_with_large_quotas_"
                    "and_weights",
            .usage = {{kDefaultGpu, 800}},
            .cluster_queue = GpuQueue("cq", "300", "500"),
            .lending_cluster_queue = GpuQueue("lending-cq", "300", "1000"),
            // 300*1000/1500/300 rounds up to 1.
            .want = {Cq("cq", 1, "example.com/gpu", true), kLendingIdle,
                     kTestCohortIdle},
        },
        {
            .name = "one_resource_above_nominal",
            .usage = {{kDefaultCpu, 3'000}, {kDefaultGpu, 3}},
            .cluster_queue = CpuGpuQueue(),
            .lending_cluster_queue = CpuGpuLendingQueue(),
            // (3-2)*1000/10
            .want = {Cq("cq", 100, "cpu", true), kLendingIdle, kTestCohortIdle},
        },
        {
            .name = "usage_with_workload_above_nominal",
            .usage = {{kDefaultCpu, 1'000}, {kDefaultGpu, 2}},
            .cluster_queue = CpuGpuQueue(),
            .lending_cluster_queue = CpuGpuLendingQueue(),
            .request = {{kDefaultCpu, 4'000}, {kDefaultGpu, 4}},
            // (1+4-2)*1000/10
            .want = {Cq("cq", 300, "cpu", true), kLendingIdle, kTestCohortIdle},
        },
        {
            .name = "a_resource_with_zero_lendable",
            .usage = {{kDefaultCpu, 1'000}, {kDefaultGpu, 1}},
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Cohort("test-cohort")
                                 .FairSharingWeight("1")
                                 .Quota("default", "cpu", "2")
                                 .Quota("default", "example.com/gpu", "2")
                                 .LendingLimit("0")
                                 .Build(),
            .lending_cluster_queue = ClusterQueueBuilder("lending-cq")
                                         .Cohort("test-cohort")
                                         .FairSharingWeight("1")
                                         .Quota("default", "cpu", "8")
                                         .Quota("default", "example.com/gpu",
                                                "64")
                                         .LendingLimit("0")
                                         .Build(),
            .request = {{kDefaultCpu, 4'000}, {kDefaultGpu, 4}},
            // (1+4-2)*1000/10; the borrowed gpu has nothing lendable.
            .want = {Cq("cq", 300, "cpu", true), kLendingIdle, kTestCohortIdle},
        },
        {
            .name = "multiple_flavors",
            .usage = {{kOnDemandCpu, 15'000}, {kSpotCpu, 5'000}},
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Cohort("test-cohort")
                                 .FairSharingWeight("1")
                                 .Quota("on-demand", "cpu", "20")
                                 .Quota("spot", "cpu", "80")
                                 .Build(),
            .lending_cluster_queue = ClusterQueueBuilder("lending-cq")
                                         .Cohort("test-cohort")
                                         .FairSharingWeight("1")
                                         .Quota("default", "cpu", "100")
                                         .Build(),
            .request = {{kOnDemandCpu, 10'000}},
            // ((15+10-20)+0)*1000/200 (spot under nominal)
            .want = {Cq("cq", 25, "cpu", true), kLendingIdle, kTestCohortIdle},
        },
        {
            .name = "above_nominal_with_integer_weight",
            .usage = {{kDefaultGpu, 7}},
            .cluster_queue = GpuQueue("cq", "2", "5"),
            .lending_cluster_queue = GpuQueue("lending-cq", "1", "5"),
            // ((7-5)*1000/10)/2
            .want = {Cq("cq", 100, "example.com/gpu", true), kLendingIdle,
                     kTestCohortIdle},
        },
        {
            .name = "above_nominal_with_decimal_weight",
            .usage = {{kDefaultGpu, 7}},
            .cluster_queue = GpuQueue("cq", "0.5", "5"),
            .lending_cluster_queue = GpuQueue("lending-cq", "1", "5"),
            // ((7-5)*1000/10)/(1/2)
            .want = {Cq("cq", 400, "example.com/gpu", true), kLendingIdle,
                     kTestCohortIdle},
        },
        {
            .name = "above_nominal_with_zero_weight",
            .usage = {{kDefaultGpu, 7}},
            .cluster_queue = GpuQueue("cq", "0", "5"),
            .lending_cluster_queue = GpuQueue("lending-cq", "1", "10"),
            .want = {Cq("cq", kMaxInt64, "example.com/gpu", true), kLendingIdle,
                     kTestCohortIdle},
        },
        {
            .name = "cohort_has_resource_share",
            .usage = {{kDefaultGpu, 10}},
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Cohort("child-cohort")
                                 .FairSharingWeight("1")
                                 .Quota("default", "example.com/gpu", "5")
                                 .Build(),
            .cohorts = {CohortBuilder("child-cohort")
                            .FairSharingWeight("2")
                            .Parent("root")
                            .Build(),
                        CohortBuilder("root")
                            .Quota("default", "example.com/gpu", "45")
                            .Build()},
            .want = {Cq("cq", 100, "example.com/gpu", true),  // (5/50)*1000
                                                              // (5/50)*1000/2
                     Co("child-cohort", 50, "example.com/gpu", true),
                     Co("root")},
        },
        {
            .name = "resource_share_defined_for_resources_only_available_at_"
                    "the_root_cohort",
            .usage = {{kDefaultGpu, 10}},
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Cohort("child-cohort")
                                 .FairSharingWeight("1")
                                 .Quota("default", "example.com/gpu", "0")
                                 .Build(),
            .cohorts = {CohortBuilder("child-cohort")
                            .FairSharingWeight("2")
                            .Parent("root")
                            .Build(),
                        CohortBuilder("root")
                            .Quota("default", "example.com/gpu", "50")
                            .Build()},
            .want = {Cq("cq", 200, "example.com/gpu", true),  // (10/50)*1000
                                                              // (10/50)*1000/2
                     Co("child-cohort", 100, "example.com/gpu", true),
                     Co("root")},
        },
        {
            // The cohort's resources seen from cq are 10, from
            // child-cohort 50, so the two get different shares.
            .name = "resource_share_affected_by_borrowing_limit",
            .usage = {{kDefaultGpu, 10}},
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Cohort("child-cohort")
                                 .Quota("default", "example.com/gpu", "0")
                                 .Build(),
            .cohorts = {CohortBuilder("child-cohort")
                            .Quota("default", "example.com/gpu", "0")
                            .BorrowingLimit("10")
                            .Parent("root")
                            .Build(),
                        CohortBuilder("root")
                            .Quota("default", "example.com/gpu", "50")
                            .Build()},
            .want = {Cq("cq", 1000, "example.com/gpu", true),  // (10/10)*1000
                                                               // (10/50)*1000
                     Co("child-cohort", 200, "example.com/gpu", true),
                     Co("root")},
        },
        {
            // "1E" CPU is beyond int64 milli-CPU: the quota is unlimited,
            // so is the lendable capacity, and the tiny positive ratio
            // (1000*1000/INT64_MAX) rounds up to 1.
            .name = "borrowing_against_unlimited_lendable_capacity_exabyte_"
                    "scale_quota",
            .usage = {{kDefaultCpu, 1'000}},
            .cluster_queue = ClusterQueueBuilder("cq")
                                 .Cohort("test-cohort")
                                 .FairSharingWeight("1")
                                 .Quota("default", "cpu", "0")
                                 .Build(),
            .lending_cluster_queue = ClusterQueueBuilder("lending-cq")
                                         .Cohort("test-cohort")
                                         .FairSharingWeight("1")
                                         .Quota("default", "cpu", "1E")
                                         .Build(),
            .want = {Cq("cq", 1, "cpu", true), kLendingIdle, kTestCohortIdle},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// kq cases for the tree around the share: a cohort cycle, a request outside
// the queue's quota, the borrowed flavor-resources and the exact ratio.

TEST(DominantResourceShareKqTest, QueueBelowCohortCycleHasNoShare) {
  Cache cache;
  cache.Rebuild(
      ByName(std::vector<ClusterQueue>{ClusterQueueBuilder("cq")
                                           .Cohort("a")
                                           .Quota("default", "cpu", "1")
                                           .Build()}),
      ByName(std::vector<Cohort>{CohortBuilder("a").Parent("b").Build(),
                                 CohortBuilder("b")
                                     .Parent("a")
                                     .Quota("default", "cpu", "10")
                                     .Build()}),
      {"default"}, {});
  ClusterQueueSnapshot* cq = cache.FindClusterQueue("cq");
  ASSERT_NE(cq, nullptr);
  cq->AddUsage({{kDefaultCpu, 5'000}});
  DRS drs = DominantResourceShare(*cq);
  EXPECT_FALSE(drs.IsBorrowing());
  EXPECT_EQ(drs.WeightedShare(), 0);
  EXPECT_FALSE(DominantResourceShare(*cache.FindCohort("a")).IsBorrowing());
}

TEST(DominantResourceShareKqTest, RecordsBorrowedFlavorResourcesAndRatio) {
  Cache cache;
  cache.Rebuild(ByName(std::vector<ClusterQueue>{
                    ClusterQueueBuilder("cq")
                        .Cohort("test-cohort")
                        .FairSharingWeight("3")
                        .Quota("default", "cpu", "2")
                        .Quota("default", "example.com/gpu", "5")
                        .Quota("spot", "cpu", "1")
                        .Build(),
                    CpuGpuLendingQueue()}),
                {}, {"default", "spot"}, {});
  ClusterQueueSnapshot* cq = cache.FindClusterQueue("cq");
  ASSERT_NE(cq, nullptr);
  cq->AddUsage({{kDefaultCpu, 3'000}, {kSpotCpu, 2'000}, {kDefaultGpu, 5}});
  // A request for a flavor-resource the queue has no quota for is ignored.
  DRS drs = DominantResourceShare(*cq, {{{"on-demand", "cpu"}, 50'000}});
  EXPECT_TRUE(drs.IsBorrowing());
  EXPECT_EQ(drs.borrowed_flavor_resources,
            (std::vector<FlavorResource>{kDefaultCpu, kSpotCpu}));
  // cpu borrowed 1+1 over lendable 11 cpu, per mille.
  EXPECT_DOUBLE_EQ(drs.unweighted_ratio, 2000.0 * 1000.0 / 11000.0);
  EXPECT_EQ(drs.dominant_resource, "cpu");
  EXPECT_DOUBLE_EQ(drs.PreciseWeightedShare(), 2000.0 * 1000.0 / 11000.0 / 3);
  EXPECT_EQ(drs.WeightedShare(), 61);  // ceil(60.6)
  EXPECT_FALSE(drs.ZeroWeightBorrows());
}

TEST(DominantResourceShareKqTest, EqualRatiosPickTheSmallerResourceName) {
  Cache cache;
  cache.Rebuild(
      ByName(std::vector<ClusterQueue>{CpuGpuQueue(), CpuGpuLendingQueue()}),
      {}, {"default"}, {});
  ClusterQueueSnapshot* cq = cache.FindClusterQueue("cq");
  ASSERT_NE(cq, nullptr);
  // cpu (3-2)/10 and gpu (6-5)/10: both 100.
  cq->AddUsage({{kDefaultCpu, 3'000}, {kDefaultGpu, 6}});
  DRS drs = DominantResourceShare(*cq);
  EXPECT_EQ(drs.WeightedShare(), 100);
  EXPECT_EQ(drs.dominant_resource, "cpu");
}

// ---------------------------------------------------------------------------
// TestIsBorrowingOn

struct IsBorrowingOnCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const IsBorrowingOnCase& c, std::ostream* os) {
    *os << c.name;
  }
  FlavorResourceQuantities usage;
  FlavorResourceQuantities requested;
  bool want_borrowing_on_requested = false;
  bool want_borrowing = false;
};

class IsBorrowingOnTest : public ::testing::TestWithParam<IsBorrowingOnCase> {};

TEST_P(IsBorrowingOnTest, ClusterQueue) {
  const IsBorrowingOnCase& tc = GetParam();
  // cq: cpu 2, gpu 5; the lending queue adds cpu 8, gpu 5.
  Cache cache;
  cache.Rebuild(ByName(std::vector<ClusterQueue>{
                    ClusterQueueBuilder("cq")
                        .Cohort("cohort")
                        .FairSharingWeight("1")
                        .Quota("default", "cpu", "2")
                        .Quota("default", "example.com/gpu", "5")
                        .Build(),
                    ClusterQueueBuilder("lending-cq")
                        .Cohort("cohort")
                        .Quota("default", "cpu", "8")
                        .Quota("default", "example.com/gpu", "5")
                        .Build()}),
                {}, {"default"}, {});
  ClusterQueueSnapshot* cq = cache.FindClusterQueue("cq");
  ASSERT_NE(cq, nullptr);
  for (const auto& [fr, v] : tc.usage) cq->AddUsage({{fr, v}});
  DRS drs = DominantResourceShare(*cq);
  EXPECT_EQ(drs.IsBorrowing(), tc.want_borrowing);
  EXPECT_EQ(drs.IsBorrowingOn(tc.requested), tc.want_borrowing_on_requested);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, IsBorrowingOnTest,
    ::testing::ValuesIn(std::vector<IsBorrowingOnCase>{
        {.name = "borrows_on_requested_flavor",
         .usage = {{kDefaultCpu, 3'000}},
         .requested = {{kDefaultCpu, 1'000}},
         .want_borrowing_on_requested = true,
         .want_borrowing = true},
        {.name = "borrows_on_unrequested_flavor_only",
         .usage = {{kDefaultCpu, 1'000}, {kDefaultGpu, 7}},
         .requested = {{kDefaultCpu, 1'000}},
         .want_borrowing_on_requested = false,
         .want_borrowing = true},
        {.name = "borrows_on_both_requests_one",
         .usage = {{kDefaultCpu, 3'000}, {kDefaultGpu, 7}},
         .requested = {{kDefaultGpu, 1}},
         .want_borrowing_on_requested = true,
         .want_borrowing = true},
        {.name = "no_borrowing",
         .usage = {{kDefaultCpu, 1'000}, {kDefaultGpu, 2}},
         .requested = {{kDefaultCpu, 1'000}},
         .want_borrowing_on_requested = false,
         .want_borrowing = false},
        {.name = "nil_requested_frs",
         .usage = {{kDefaultCpu, 3'000}},
         .requested = {},
         .want_borrowing_on_requested = false,
         .want_borrowing = true},
        // kq: a zero request does not count as asking for the resource.
        {.name = "zero_request_on_borrowed_flavor",
         .usage = {{kDefaultCpu, 3'000}},
         .requested = {{kDefaultCpu, 0}},
         .want_borrowing_on_requested = false,
         .want_borrowing = true},
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// TestPreciseWeightedShareSerialized

// A share with only the weight and the ratio set, as Kueue's tests build
// them.
DRS Share(double weight, double ratio) {
  DRS drs;
  drs.fair_weight = weight;
  drs.unweighted_ratio = ratio;
  return drs;
}

struct SerializedCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const SerializedCase& c, std::ostream* os) {
    *os << c.name;
  }
  DRS drs;
  std::string want;
};

class PreciseWeightedShareSerializedTest
    : public ::testing::TestWithParam<SerializedCase> {};

TEST_P(PreciseWeightedShareSerializedTest, Formats) {
  EXPECT_EQ(GetParam().drs.PreciseWeightedShareSerialized(), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, PreciseWeightedShareSerializedTest,
    ::testing::ValuesIn(std::vector<SerializedCase>{
        {.name = "zero_weight_returning_inf",
         .drs = Share(0, 100),
         .want = "+Inf"},
        {.name = "zero_unweighted_ratio_returns_0",
         .drs = Share(1, 0),
         .want = "0"},
        {.name = "regular_integer_division",
         .drs = Share(2, 400),
         .want = "200"},
        {.name = "decimal_division", .drs = Share(4, 10), .want = "2.5"},
        // kq: Go's 'f' format never switches to an exponent.
        {.name = "large_share_in_fixed_notation",
         .drs = Share(1, 1e21),
         .want = "1000000000000000000000"},
        {.name = "shortest_round_trip_fraction",
         .drs = Share(3, 1),
         .want = "0.3333333333333333"},
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// CompareDRS and WeightedShare (no Kueue table; from fair_sharing.go).

struct CompareCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const CompareCase& c, std::ostream* os) { *os << c.name; }
  DRS a;
  DRS b;
  int want = 0;
};

class CompareDrsTest : public ::testing::TestWithParam<CompareCase> {};

TEST_P(CompareDrsTest, IsAntisymmetric) {
  const CompareCase& tc = GetParam();
  EXPECT_EQ(CompareDRS(tc.a, tc.b), tc.want);
  EXPECT_EQ(CompareDRS(tc.b, tc.a), -tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    FairSharing, CompareDrsTest,
    ::testing::ValuesIn(std::vector<CompareCase>{
        {.name = "both_zero", .a = Share(1, 0), .b = Share(2, 0), .want = 0},
        {.name = "weighted_shares_compare",
         .a = Share(1, 100),
         .b = Share(1, 200),
         .want = -1},
        {.name = "weight_divides_the_ratio",
         .a = Share(4, 400),   // 100
         .b = Share(0.5, 60),  // 120
         .want = -1},
        {.name = "equal_weighted_shares",
         .a = Share(2, 200),
         .b = Share(1, 100),
         .want = 0},
        {.name = "zero_weight_borrower_above_any_finite_share",
         .a = Share(0, 1),
         .b = Share(0.001, 1e300),
         .want = 1},
        {.name = "two_zero_weight_borrowers_compare_unweighted",
         .a = Share(0, 300),
         .b = Share(0, 200),
         .want = 1},
        {.name = "two_equal_zero_weight_borrowers",
         .a = Share(0, 5),
         .b = Share(0, 5),
         .want = 0},
        {.name = "zero_weight_without_share_is_zero",
         .a = Share(0, 0),
         .b = Share(1, 0),
         .want = 0},
        {.name = "zero_weight_without_share_below_a_borrower",
         .a = Share(0, 0),
         .b = Share(1, 1),
         .want = -1},
        {.name = "negative_below_zero",
         .a = DRS::Negative(),
         .b = Share(1, 0),
         .want = -1},
    }),
    [](const auto& info) { return info.param.name; });

struct WeightedShareCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const WeightedShareCase& c, std::ostream* os) {
    *os << c.name;
  }
  DRS drs;
  int64_t want = 0;
};

class WeightedShareTest : public ::testing::TestWithParam<WeightedShareCase> {};

TEST_P(WeightedShareTest, RoundsUp) {
  EXPECT_EQ(GetParam().drs.WeightedShare(), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    FairSharing, WeightedShareTest,
    ::testing::ValuesIn(std::vector<WeightedShareCase>{
        {.name = "zero", .drs = Share(1, 0), .want = 0},
        {.name = "exact", .drs = Share(2, 400), .want = 200},
        {.name = "fraction_rounds_up", .drs = Share(3, 100), .want = 34},
        {.name = "tiny_share_rounds_up_to_one",
         .drs = Share(1, 1e-13),
         .want = 1},
        {.name = "zero_weight_borrowing",
         .drs = Share(0, 1),
         .want = kMaxInt64},
        // Borrowing with nothing lendable leaves the ratio at 0: no share,
        // even with weight 0.
        {.name = "zero_weight_zero_ratio", .drs = Share(0, 0), .want = 0},
        {.name = "beyond_int64_saturates",
         .drs = Share(0.001, 1e19),
         .want = kMaxInt64},
    }),
    [](const auto& info) { return info.param.name; });

TEST(FairWeightTest, ReadsTheQuantity) {
  EXPECT_EQ(FairWeight(std::nullopt), 1.0);
  EXPECT_EQ(FairWeight(Quantity::FromMilli(0)), 0.0);
  EXPECT_EQ(FairWeight(Quantity::FromMilli(500)), 0.5);
  EXPECT_EQ(FairWeight(Quantity::FromMilli(300)), 0.3);
  EXPECT_EQ(FairWeight(Quantity::FromUnits(300)), 300.0);
}

}  // namespace
}  // namespace kq::cache
