// Ports Kueue's TestMakeClusterQueueOrdering
// (pkg/scheduler/preemption/fairsharing/ordering_test.go), all 7 cases:
// the order in which TargetClusterQueueOrdering yields target ClusterQueues
// while the caller pops a candidate (or drops the queue) after each.
//
// Skipped cases: none.

#include "server/preemption/fair_ordering.h"

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "tests/server/preemption/preemption_test_util.h"
#include "tests/testing/builders.h"

namespace kq::preemption {
namespace {

using ::kq::cache::Cache;
using ::kq::preemption::test_util::BuildTree;
using ::kq::preemption::test_util::HoldingCpu;
using ::kq::preemption::test_util::kNow;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;

// ClusterQueue `name` with `cpu` of "default", in `cohort` if not empty.
ClusterQueue Queue(const std::string& name, const std::string& cohort,
                   const std::string& cpu) {
  ClusterQueueBuilder b(name);
  if (!cohort.empty()) b.Cohort(cohort);
  return b.Quota("default", "cpu", cpu).Build();
}

struct OrderingCase {
  std::string name;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  // Workloads holding quota in their ClusterQueues (making them borrow);
  // those of `candidate_cqs` are also the candidates.
  std::vector<Workload> admitted;
  std::string preemptor_cq;
  std::set<std::string> candidate_cqs;
  // Per target yielded: "drop" calls DropQueue, anything else (or no entry)
  // pops a candidate.
  std::vector<std::string> actions;
  std::vector<std::string> want_order;
};

void PrintTo(const OrderingCase& tc, std::ostream* os) { *os << tc.name; }

class MakeClusterQueueOrderingTest
    : public ::testing::TestWithParam<OrderingCase> {};

TEST_P(MakeClusterQueueOrderingTest, MatchesKueue) {
  const OrderingCase& tc = GetParam();
  Cache cache;
  BuildTree(cache, tc.cluster_queues, tc.cohorts, {"default"}, tc.admitted);

  std::vector<Candidate> candidates;
  for (const Workload& wl : tc.admitted) {
    if (tc.candidate_cqs.count(wl.admission->cluster_queue) > 0) {
      candidates.push_back(
          {.workload = &wl, .cluster_queue = wl.admission->cluster_queue});
    }
  }
  TargetClusterQueueOrdering ordering(*cache.FindClusterQueue(tc.preemptor_cq),
                                      candidates, kNow, {});

  std::vector<std::string> got;
  size_t action = 0;
  while (cache::ClusterQueueSnapshot* target = ordering.Next()) {
    got.push_back(target->name());
    if (action < tc.actions.size() && tc.actions[action] == "drop") {
      ordering.DropQueue(*target);
    } else {
      ordering.PopWorkload(*target);
    }
    ++action;
    ASSERT_LE(got.size(), 50u) << "likely an infinite loop";
  }
  EXPECT_EQ(got, tc.want_order);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MakeClusterQueueOrderingTest,
    ::testing::ValuesIn(std::vector<OrderingCase>{
        // Also Kueue's repro for a nil-pointer panic.
        {.name = "no_cohort_preemptor_CQ_yielded_for_in_CQ_preemption",
         .cluster_queues = {Queue("preemptor", "", "4")},
         .admitted = {HoldingCpu("wl1", 0, "preemptor", "1")},
         .preemptor_cq = "preemptor",
         .candidate_cqs = {"preemptor"},
         .want_order = {"preemptor"}},
        {.name = "no_cohort_DropQueue_ends_the_iteration_with_candidates_"
                 "remaining",
         .cluster_queues = {Queue("preemptor", "", "4")},
         .admitted = {HoldingCpu("wl1", 0, "preemptor", "1"),
                      HoldingCpu("wl2", 0, "preemptor", "1")},
         .preemptor_cq = "preemptor",
         .candidate_cqs = {"preemptor"},
         .actions = {"drop"},
         .want_order = {"preemptor"}},
        // "target" is within its nominal quota (2 < 5): not borrowing.
        {.name = "non_borrowing_CQ_is_pruned_even_with_candidates",
         .cluster_queues = {Queue("preemptor", "all", "4"),
                            Queue("target", "all", "5")},
         .admitted = {HoldingCpu("t1", 0, "target", "2")},
         .preemptor_cq = "preemptor",
         .candidate_cqs = {"target"},
         .want_order = {}},
        // high (nominal 2, usage 5) borrows more than low (nominal 2,
        // usage 3).
        {.name = "higher_DRS_CQ_returned_before_lower_DRS_CQ",
         .cluster_queues = {Queue("preemptor", "all", "4"),
                            Queue("high", "all", "2"),
                            Queue("low", "all", "2")},
         .admitted = {HoldingCpu("h1", 0, "high", "5"),
                      HoldingCpu("l1", 0, "low", "3")},
         .preemptor_cq = "preemptor",
         .candidate_cqs = {"high", "low"},
         .want_order = {"high", "low"}},
        // Popping a candidate does not change usage, so high keeps the
        // highest share while it has candidates.
        {.name = "CQ_with_highest_DRS_returned_again_while_it_still_has_"
                 "candidates",
         .cluster_queues = {Queue("preemptor", "all", "4"),
                            Queue("high", "all", "2"),
                            Queue("low", "all", "2")},
         .admitted = {HoldingCpu("h1", 0, "high", "3"),
                      HoldingCpu("h2", 0, "high", "2"),
                      HoldingCpu("l1", 0, "low", "3")},
         .preemptor_cq = "preemptor",
         .candidate_cqs = {"high", "low"},
         .want_order = {"high", "high", "low"}},
        {.name = "drop_queue_prevents_CQ_from_being_returned_again",
         .cluster_queues = {Queue("preemptor", "all", "4"),
                            Queue("high", "all", "2"),
                            Queue("low", "all", "2")},
         .admitted = {HoldingCpu("h1", 0, "high", "3"),
                      HoldingCpu("h2", 0, "high", "2"),
                      HoldingCpu("l1", 0, "low", "3")},
         .preemptor_cq = "preemptor",
         .candidate_cqs = {"high", "low"},
         .actions = {"drop", "pop"},
         .want_order = {"high", "low"}},
        /*
                     root
                    /    \
              left-cohort  right-cohort
                  |              |
               left-cq        right-cq       preemptor-cq
             (usage=5>2)     (usage=3>2)     (usage=0, nominal=4)
        */
        {.name = "hierarchical_cohorts_higher_DRS_subtree_visited_first",
         .cluster_queues = {Queue("preemptor-cq", "root", "4"),
                            Queue("left-cq", "left-cohort", "2"),
                            Queue("right-cq", "right-cohort", "2")},
         .cohorts = {CohortBuilder("root").Build(),
                     CohortBuilder("left-cohort").Parent("root").Build(),
                     CohortBuilder("right-cohort").Parent("root").Build()},
         .admitted = {HoldingCpu("lc1", 0, "left-cq", "5"),
                      HoldingCpu("rc1", 0, "right-cq", "3")},
         .preemptor_cq = "preemptor-cq",
         .candidate_cqs = {"left-cq", "right-cq"},
         .want_order = {"left-cq", "right-cq"}},
    }),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kq::preemption
