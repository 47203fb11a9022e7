// The fair-sharing entry order. TestEntryComparerLess ports Kueue's table
// of the same name (pkg/scheduler/scheduler_test.go) for
// FairSharingEntryLess. Not ported: "a is preemptor, b not, feature
// enabled" and "both are preemptors, feature enabled" need the
// PrioritizePreemptorWorkloads gate (alpha, off), which kq does not have;
// the "feature disabled" case is ported. The FairSharingIterator tests are
// kq's: they pin the iterator's contract (tournament over live shares,
// cache left as it was); Kueue covers the iterator only through
// TestScheduleForFairSharing, ported in
// tests/server/admission/schedule_fair_sharing_test.cc.

#include "server/scheduler/fair_sharing_iterator.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "server/cache/fair_sharing.h"
#include "tests/testing/builders.h"

namespace kq::scheduler {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::WorkloadBuilder;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// Kueue's schdcache.BorrowingDRS test helper: borrowing on `frs`, with a
// zero ratio.
cache::DRS BorrowingDRS(std::vector<cache::FlavorResource> frs) {
  cache::DRS drs;
  drs.borrowing = true;
  drs.borrowed_flavor_resources = std::move(frs);
  return drs;
}

struct ComparerCase {
  std::string name;
  Workload a;
  Workload b;
  // The shares at the compared cohort; absent is Kueue's zero DRS.
  std::optional<cache::DRS> a_drs;
  std::optional<cache::DRS> b_drs;
  cache::FlavorResourceQuantities a_requested;
  cache::FlavorResourceQuantities b_requested;
  bool want_less = false;
};

void PrintTo(const ComparerCase& c, std::ostream* os) { *os << c.name; }

class EntryComparerLessKueueTest
    : public ::testing::TestWithParam<ComparerCase> {};

TEST_P(EntryComparerLessKueueTest, Less) {
  const ComparerCase& tc = GetParam();
  const cache::DRS a_drs = tc.a_drs.value_or(cache::DRS{});
  const cache::DRS b_drs = tc.b_drs.value_or(cache::DRS{});
  const TournamentEntry a{&tc.a, &a_drs, &tc.a_requested};
  const TournamentEntry b{&tc.b, &b_drs, &tc.b_requested};
  EXPECT_EQ(FairSharingEntryLess(a, b), tc.want_less);
}

Workload Named(std::string name, absl::Time created) {
  return WorkloadBuilder(std::move(name)).Created(created).Build();
}

std::vector<ComparerCase> ComparerCases() {
  const cache::FlavorResource cpu_default{"default", "cpu"};
  const cache::FlavorResourceQuantities one_cpu = {{cpu_default, 1000}};
  return {
      {
          .name = "non_borrowing_subtree_preferred_over_borrowing_subtree",
          .a = Named("nominal", kNow + absl::Seconds(1)),
          .b = Named("borrowing", kNow),
          .a_drs = cache::DRS{},
          .b_drs = BorrowingDRS({cpu_default}),
          .a_requested = one_cpu,
          .b_requested = one_cpu,
          .want_less = true,
      },
      {
          .name = "both_borrowing_on_requested_flavors_falls_through_to_fifo",
          .a = Named("borrow-a", kNow + absl::Seconds(1)),
          .b = Named("borrow-b", kNow),
          .a_drs = BorrowingDRS({cpu_default}),
          .b_drs = BorrowingDRS({cpu_default}),
          .a_requested = one_cpu,
          .b_requested = one_cpu,
          .want_less = false,
      },
      {
          .name = "lower_drs_preferred_over_higher_drs",
          .a = Named("lower-drs", kNow + absl::Seconds(1)),
          .b = Named("higher-drs", kNow),
          .a_drs = cache::DRS::Negative(),
          .b_drs = cache::DRS{},
          .want_less = true,
      },
      {
          .name = "both_non_borrowing_falls_through_to_fifo",
          .a = Named("older", kNow),
          .b = Named("newer", kNow + absl::Seconds(1)),
          .want_less = true,
      },
      // Without kq's PrioritizePreemptorWorkloads (Kueue's gate off), being
      // a preemptor does not matter: the nominal-first rule decides.
      {
          .name = "a_is_preemptor_b_not_feature_disabled",
          .a = Named("preemptor-borrowing", kNow),
          .b = Named("not-preemptor-nominal", kNow),
          .a_drs = BorrowingDRS({cpu_default}),
          .b_drs = cache::DRS{},
          .a_requested = one_cpu,
          .b_requested = one_cpu,
          .want_less = false,
      },
  };
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, EntryComparerLessKueueTest, ::testing::ValuesIn(ComparerCases()),
    [](const ::testing::TestParamInfo<ComparerCase>& info) {
      return info.param.name;
    });

// kq's total order where Kueue's comparison ties: UID, namespace, name.
TEST(FairSharingEntryLessTest, FullTieBrokenByUidNamespaceName) {
  Workload a = WorkloadBuilder("a").Created(kNow).Build();
  Workload b = WorkloadBuilder("b").Created(kNow).Build();
  const cache::DRS zero;
  const TournamentEntry ea{&a, &zero, nullptr};
  const TournamentEntry eb{&b, &zero, nullptr};
  EXPECT_TRUE(FairSharingEntryLess(ea, eb));
  EXPECT_FALSE(FairSharingEntryLess(eb, ea));
  EXPECT_FALSE(FairSharingEntryLess(ea, ea));
}

// Cohort "root" with 100 CPUs of flavor default; under it, cohort "left"
// (queues l1, l2) and queue r1; queue "alone" has no cohort. No queue has
// quota of its own.
class FairSharingIteratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::map<std::string, ClusterQueue> cqs;
    for (const auto& [name, cohort] :
         std::vector<std::pair<std::string, std::string>>{
             {"l1", "left"}, {"l2", "left"}, {"r1", "root"}, {"alone", ""}}) {
      ClusterQueueBuilder cq(name);
      if (!cohort.empty()) cq.Cohort(cohort);
      cqs[name] =
          cq.ResourceGroup({"cpu"}).Quota("default", "cpu", "0").Build();
    }
    std::map<std::string, Cohort> cohorts;
    cohorts["root"] = CohortBuilder("root")
                          .ResourceGroup({"cpu"})
                          .Quota("default", "cpu", "100")
                          .Build();
    cohorts["left"] = CohortBuilder("left").Parent("root").Build();
    cache_.Rebuild(cqs, cohorts, {"default"}, {});
  }

  cache::ClusterQueueSnapshot* Cq(const std::string& name) {
    return cache_.FindClusterQueue(name);
  }

  static cache::FlavorResourceQuantities Cpu(int64_t cores) {
    return {{{"default", "cpu"}, cores * 1000}};
  }

  // The workload names in the order the iterator yields them.
  std::vector<std::string> Order(const std::vector<Workload>& workloads,
                                 const std::vector<std::string>& queues,
                                 const std::vector<int64_t>& cores) {
    usages_.clear();
    for (int64_t c : cores) usages_.push_back(Cpu(c));
    std::vector<FairSharingCandidate> candidates;
    for (size_t i = 0; i < workloads.size(); ++i) {
      candidates.push_back({&workloads[i], Cq(queues[i]), &usages_[i]});
    }
    FairSharingIterator it(std::move(candidates));
    std::vector<std::string> order;
    while (it.HasNext()) order.push_back(workloads[it.Pop()].meta.name);
    return order;
  }

  cache::Cache cache_;
  std::vector<cache::FlavorResourceQuantities> usages_;
};

TEST_F(FairSharingIteratorTest, QueueWithoutCohortComesOutAsIs) {
  std::vector<Workload> wls = {WorkloadBuilder("w").Build()};
  EXPECT_EQ(Order(wls, {"alone"}, {1}), std::vector<std::string>{"w"});
}

// The root compares the share of "left" (with the candidate that won
// inside it) with r1's. l1's 30 beats l2's 40 inside left; left at 30
// beats r1 at 35; then r1 (35) beats left with l2 (40).
TEST_F(FairSharingIteratorTest, TournamentPerLevel) {
  std::vector<Workload> wls = {WorkloadBuilder("l2-40").Build(),
                               WorkloadBuilder("r1-35").Build(),
                               WorkloadBuilder("l1-30").Build()};
  EXPECT_EQ(Order(wls, {"l2", "r1", "l1"}, {40, 35, 30}),
            (std::vector<std::string>{"l1-30", "r1-35", "l2-40"}));
}

// Usage added between pops (an admission) counts for the next pop: with
// l1's 30 admitted, left would hold 30 + 10 with l2's entry, more than r1's
// 35.
TEST_F(FairSharingIteratorTest, SharesRecomputedOnEveryPop) {
  std::vector<Workload> wls = {WorkloadBuilder("l1-30").Build(),
                               WorkloadBuilder("l2-10").Build(),
                               WorkloadBuilder("r1-35").Build()};
  const std::vector<std::string> queues = {"l1", "l2", "r1"};
  usages_ = {Cpu(30), Cpu(10), Cpu(35)};
  std::vector<FairSharingCandidate> candidates;
  for (size_t i = 0; i < wls.size(); ++i) {
    candidates.push_back({&wls[i], Cq(queues[i]), &usages_[i]});
  }
  FairSharingIterator it(std::move(candidates));
  // Inside left, l2 (10) beats l1 (30); at the root left (10) beats r1.
  ASSERT_TRUE(it.HasNext());
  EXPECT_EQ(it.Pop(), 1u);
  // Admit l2's entry.
  Cq("l2")->AddUsage(usages_[1]);
  // Now left with l1 holds 40, r1 35.
  EXPECT_EQ(it.Pop(), 2u);
  EXPECT_EQ(it.Pop(), 0u);
  EXPECT_FALSE(it.HasNext());
}

TEST_F(FairSharingIteratorTest, LeavesCacheAsItWas) {
  Cq("l1")->AddUsage(Cpu(20));
  auto usage_of = [&] {
    std::vector<cache::FlavorResourceQuantities> usage;
    for (const auto& [name, cq] : cache_.cluster_queues()) {
      usage.push_back(cq->node.usage);
    }
    for (const auto& [name, cohort] : cache_.cohorts()) {
      usage.push_back(cohort->node.usage);
    }
    return usage;
  };
  const std::vector<cache::FlavorResourceQuantities> before = usage_of();
  std::vector<Workload> wls = {WorkloadBuilder("a").Build(),
                               WorkloadBuilder("b").Build(),
                               WorkloadBuilder("c").Build()};
  Order(wls, {"l1", "l2", "r1"}, {5, 50, 70});
  EXPECT_EQ(usage_of(), before);
}

}  // namespace
}  // namespace kq::scheduler
