// The shape of the cohort tree: cycles, subtree quotas as the tree changes,
// the queues a quota change concerns, heights and the borrowing level.
// Ported from Kueue:
//   pkg/cache/hierarchy/manager_test.go  TestCycles
//   pkg/cache/scheduler/cache_test.go    TestCohortCycles,
//                                        TestDeleteCohortUpdatesAncestor
//                                        SubtreeQuota
//   pkg/cache/queue/manager_test.go      TestQueueInadmissibleWorkloads (the
//                                        trees; the moves are in
//                                        tests/server/queue)
// Kueue has no unit test of getNodeHeight or
// FindHeightOfLowestSubtreeThatFits (hierarchical_preemption.go has no test
// file); their cases are written from the definitions in KUEUE.md 2.2 and
// its worked examples A.2 and A.8.
//
// Not ported, and why:
//   - TestCohortCycles "ResyncGaugeMetrics does not infinitely recurse":
//     metrics are the engine's; the cache's own walks over cyclic trees are
//     tested below instead.
//   - TestManager (hierarchy/manager_test.go): the incremental edge
//     bookkeeping of Kueue's hierarchy manager; kq rebuilds the tree, which
//     the cohort-membership cases of cluster_queue_test.cc cover.
//   - TestClusterQueueAncestors, TestWorkloadAncestors, TestAncestors: kq
//     walks `parent` pointers and has no ancestor-list API.

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "tests/server/cache/cache_test_util.h"
#include "tests/testing/builders.h"

namespace kq::cache {
namespace {

using ::kq::cache::test_util::ByName;
using ::kq::cache::test_util::InactiveClusterQueues;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;

const FlavorResource kArmCpu{"arm", "cpu"};
const FlavorResource kDefaultCpu{"default", "cpu"};

// ---------------------------------------------------------------------------
// A tree changed step by step (Kueue's sequences of cache events), each
// step a whole configuration with what must hold after it.

struct TreeStep {
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  // Every cohort and whether it is in a cycle; not checked when empty.
  std::map<std::string, bool> want_cycles;
  // Subtree quota of the listed cohorts.
  std::map<std::string, FlavorResourceQuantities> want_subtree_quota;
  std::set<std::string> want_inactive;
};

struct TreeCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const TreeCase& c, std::ostream* os) { *os << c.name; }
  std::vector<TreeStep> steps;
};

class TreeTest : public ::testing::TestWithParam<TreeCase> {};

TEST_P(TreeTest, Steps) {
  Cache cache;
  int step_index = 0;
  for (const TreeStep& step : GetParam().steps) {
    SCOPED_TRACE("step " + std::to_string(step_index++));
    cache.Rebuild(ByName(step.cluster_queues), ByName(step.cohorts),
                  {"arm", "default"}, {});
    if (!step.want_cycles.empty()) {
      std::map<std::string, bool> got;
      for (const auto& [name, cohort] : cache.cohorts()) {
        got[name] = cohort->has_cycle;
      }
      EXPECT_EQ(got, step.want_cycles);
    }
    for (const auto& [name, want] : step.want_subtree_quota) {
      const CohortSnapshot* cohort = cache.FindCohort(name);
      ASSERT_NE(cohort, nullptr) << name;
      EXPECT_EQ(cohort->node.subtree_quota, want) << name;
    }
    EXPECT_EQ(InactiveClusterQueues(cache), step.want_inactive);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cycles, TreeTest,
    ::testing::ValuesIn(std::vector<TreeCase>{
        {
            .name = "no_cycles",
            .steps =
                {{.cohorts = {CohortBuilder("root").Build(),
                              CohortBuilder("left").Parent("root").Build(),
                              CohortBuilder("right").Parent("root").Build()},
                  .want_cycles =
                      {{"root", false}, {"left", false}, {"right", false}}}},
        },
        {
            .name = "self_cycle",
            .steps =
                {{.cohorts = {CohortBuilder("root").Parent("root").Build()},
                  .want_cycles = {{"root", true}}}},
        },
        {
            .name = "remove_self_cycle",
            .steps =
                {{.cohorts = {CohortBuilder("root").Parent("root").Build()},
                  .want_cycles = {{"root", true}}},
                 {.cohorts = {CohortBuilder("root").Build()},
                  .want_cycles = {{"root", false}}}},
        },
        {
            .name = "cycle",
            .steps =
                {{.cohorts =
                      {CohortBuilder("cohort-a").Parent("cohort-b").Build(),
                       CohortBuilder("cohort-b").Parent("cohort-a").Build()},
                  .want_cycles = {{"cohort-a", true}, {"cohort-b", true}}}},
        },
        {
            .name = "remove_cycle_via_edge_update",
            .steps =
                {{.cohorts =
                      {CohortBuilder("cohort-a").Parent("cohort-c").Build(),
                       CohortBuilder("cohort-b").Parent("cohort-a").Build()},
                  .want_cycles = {{"cohort-a", false},
                                  {"cohort-b", false},
                                  {"cohort-c", false}}}},
        },
        {
            .name = "remove_cycle_via_edge_deletion",
            .steps =
                {{.cohorts =
                      {CohortBuilder("cohort-a").Build(),
                       CohortBuilder("cohort-b").Parent("cohort-a").Build()},
                  .want_cycles = {{"cohort-a", false}, {"cohort-b", false}}}},
        },
        {
            // cohort-b's object is deleted; cohort-a still names it, so it
            // stays as an implicit root.
            .name = "remove_cycle_via_node_deletion",
            .steps =
                {{.cohorts =
                      {CohortBuilder("cohort-a").Parent("cohort-b").Build()},
                  .want_cycles = {{"cohort-a", false}, {"cohort-b", false}}}},
        },
        {
            // kq: a cohort below a cycle has no root either.
            .name = "cohort_below_a_cycle",
            .steps =
                {{.cohorts =
                      {CohortBuilder("cohort-a").Parent("cohort-b").Build(),
                       CohortBuilder("cohort-b").Parent("cohort-a").Build(),
                       CohortBuilder("below").Parent("cohort-a").Build()},
                  .cluster_queues =
                      {ClusterQueueBuilder("cq").Cohort("below").Build()},
                  .want_cycles =
                      {{"cohort-a", true}, {"cohort-b", true}, {"below", true}},
                  .want_inactive = {"cq"}}},
        },
    }),
    [](const auto& info) { return info.param.name; });

Cohort CohortA() {
  return CohortBuilder("cohort-a").Parent("cohort-b").Build();
}
Cohort CohortB() {
  return CohortBuilder("cohort-b").Parent("cohort-c").Build();
}
Cohort CohortC() {
  return CohortBuilder("cohort-c").Parent("cohort-a").Build();
}
Cohort ArmCohort(std::string name, std::string parent = "") {
  return CohortBuilder(std::move(name))
      .Parent(std::move(parent))
      .Quota("arm", "cpu", "10")
      .Build();
}
ClusterQueue ArmQueue(std::string cohort) {
  return ClusterQueueBuilder("cq")
      .Quota("arm", "cpu", "5")
      .Cohort(std::move(cohort))
      .Build();
}

INSTANTIATE_TEST_SUITE_P(
    CohortCycles, TreeTest,
    ::testing::ValuesIn(std::vector<TreeCase>{
        {
            .name = "self_cycle",
            .steps =
                {{.cohorts = {CohortBuilder("cohort").Parent("cohort").Build()},
                  .want_cycles = {{"cohort", true}}}},
        },
        {
            .name = "simple_cycle",
            .steps = {{.cohorts = {CohortA()},
                       .want_cycles = {{"cohort-a", false},
                                       {"cohort-b", false}}},
                      {.cohorts = {CohortA(), CohortB()},
                       .want_cycles = {{"cohort-a", false},
                                       {"cohort-b", false},
                                       {"cohort-c", false}}},
                      {.cohorts = {CohortA(), CohortB(), CohortC()},
                       .want_cycles = {{"cohort-a", true},
                                       {"cohort-b", true},
                                       {"cohort-c", true}}}},
        },
        {
            // Kueue refuses to add or update the queue while its cohort is
            // in a cycle; kq keeps it inactive until the cycle is broken.
            .name = "clusterqueue_add_and_update_return_error_when_cohort_has_"
                    "cycle",
            .steps =
                {{.cohorts = {CohortA(), CohortB(), CohortC()},
                  .cluster_queues =
                      {ClusterQueueBuilder("cq").Cohort("cohort-a").Build()},
                  .want_inactive = {"cq"}},
                 {.cohorts = {CohortA(), CohortB(), CohortC()},
                  .cluster_queues =
                      {ClusterQueueBuilder("cq").Cohort("cohort-b").Build()},
                  .want_inactive = {"cq"}},
                 // Cohort C deleted, breaking the cycle.
                 {.cohorts = {CohortA(), CohortB()},
                  .cluster_queues =
                      {ClusterQueueBuilder("cq").Cohort("cohort-b").Build()},
                  .want_cycles = {{"cohort-a", false},
                                  {"cohort-b", false},
                                  {"cohort-c", false}}}},
        },
        {
            .name = "clusterqueue_leaving_cohort_with_cycle_successfully_"
                    "updates_new_cohort",
            .steps =
                {{.cohorts = {CohortBuilder("cycle").Parent("cycle").Build(),
                              ArmCohort("cohort")},
                  .cluster_queues = {ArmQueue("cycle")},
                  .want_subtree_quota = {{"cohort", {{kArmCpu, 10'000}}}},
                  .want_inactive = {"cq"}},
                 {.cohorts = {CohortBuilder("cycle").Parent("cycle").Build(),
                              ArmCohort("cohort")},
                  .cluster_queues = {ArmQueue("cohort")},
                  .want_subtree_quota = {{"cohort", {{kArmCpu, 15'000}}}}}},
        },
        {
            .name = "clusterqueue_joining_cohort_with_cycle_successfully_"
                    "updates_old_cohort",
            .steps =
                {{.cohorts = {CohortBuilder("cycle").Parent("cycle").Build(),
                              ArmCohort("cohort")},
                  .cluster_queues = {ArmQueue("cohort")},
                  .want_subtree_quota = {{"cohort", {{kArmCpu, 15'000}}}}},
                 {.cohorts = {CohortBuilder("cycle").Parent("cycle").Build(),
                              ArmCohort("cohort")},
                  .cluster_queues = {ArmQueue("cycle")},
                  .want_subtree_quota = {{"cohort", {{kArmCpu, 10'000}}}},
                  .want_inactive = {"cq"}}},
        },
        {
            .name = "cohort_switching_cohorts_updates_both_cohort_trees",
            .steps = {{.cohorts = {CohortBuilder("root1").Build(),
                                   CohortBuilder("root2").Build(),
                                   ArmCohort("cohort", "root1")},
                       .want_subtree_quota = {{"root1", {{kArmCpu, 10'000}}},
                                              {"root2", {}}}},
                      {.cohorts = {CohortBuilder("root1").Build(),
                                   CohortBuilder("root2").Build(),
                                   ArmCohort("cohort", "root2")},
                       .want_subtree_quota = {{"root1", {}},
                                              {"root2", {{kArmCpu, 10'000}}}}}},
        },
        {
            .name = "cohort_leaving_cohort_with_cycle_successfully_updates_"
                    "new_cohort",
            .steps =
                {{.cohorts =
                      {CohortBuilder("cycle-root").Parent("cycle-root").Build(),
                       CohortBuilder("root").Build(),
                       ArmCohort("cohort", "cycle-root")},
                  .want_subtree_quota = {{"root", {}}}},
                 {.cohorts =
                      {CohortBuilder("cycle-root").Parent("cycle-root").Build(),
                       CohortBuilder("root").Build(),
                       ArmCohort("cohort", "root")},
                  .want_subtree_quota = {{"root", {{kArmCpu, 10'000}}}}}},
        },
        {
            .name = "cohort_joining_cohort_with_cycle_successfully_updates_"
                    "old_cohort",
            .steps =
                {{.cohorts =
                      {CohortBuilder("cycle-root").Parent("cycle-root").Build(),
                       CohortBuilder("root").Build(),
                       ArmCohort("cohort", "root")},
                  .want_subtree_quota = {{"root", {{kArmCpu, 10'000}}}}},
                 {.cohorts =
                      {CohortBuilder("cycle-root").Parent("cycle-root").Build(),
                       CohortBuilder("root").Build(),
                       ArmCohort("cohort", "cycle-root")},
                  .want_subtree_quota = {{"root", {}}}}},
        },
    }),
    [](const auto& info) { return info.param.name; });

Cohort DefaultCohort(std::string name, std::string parent,
                     absl::string_view cpu) {
  return CohortBuilder(std::move(name))
      .Parent(std::move(parent))
      .Quota("default", "cpu", cpu)
      .Build();
}

INSTANTIATE_TEST_SUITE_P(
    DeleteCohortUpdatesAncestorSubtreeQuota, TreeTest,
    ::testing::ValuesIn(std::vector<TreeCase>{
        {
            .name = "deleting_child_cohort_updates_parent_subtreequota",
            .steps =
                {{.cohorts = {DefaultCohort("root", "", "10"),
                              DefaultCohort("child", "root", "5")},
                  .want_subtree_quota = {{"root", {{kDefaultCpu, 15'000}}}}},
                 {.cohorts = {DefaultCohort("root", "", "10")},
                  .want_subtree_quota = {{"root", {{kDefaultCpu, 10'000}}}}}},
        },
        {
            .name = "deleting_grandchild_cohort_updates_all_ancestors_"
                    "subtreequota",
            .steps =
                {{.cohorts = {DefaultCohort("root", "", "10"),
                              DefaultCohort("mid", "root", "5"),
                              DefaultCohort("leaf", "mid", "3")},
                  .want_subtree_quota = {{"mid", {{kDefaultCpu, 8'000}}},
                                         {"root", {{kDefaultCpu, 18'000}}}}},
                 {.cohorts = {DefaultCohort("root", "", "10"),
                              DefaultCohort("mid", "root", "5")},
                  .want_subtree_quota = {{"mid", {{kDefaultCpu, 5'000}}},
                                         {"root", {{kDefaultCpu, 15'000}}}}}},
        },
        {
            // mid stays as an implicit cohort (the queue names it), no
            // longer below root.
            .name = "deleting_cohort_with_children_updates_parent_"
                    "subtreequota",
            .steps =
                {{.cohorts = {DefaultCohort("root", "", "10"),
                              DefaultCohort("mid", "root", "5")},
                  .cluster_queues = {ClusterQueueBuilder("cq")
                                         .Cohort("mid")
                                         .Quota("default", "cpu", "7")
                                         .Build()},
                  .want_subtree_quota = {{"root", {{kDefaultCpu, 22'000}}}}},
                 {.cohorts = {DefaultCohort("root", "", "10")},
                  .cluster_queues = {ClusterQueueBuilder("cq")
                                         .Cohort("mid")
                                         .Quota("default", "cpu", "7")
                                         .Build()},
                  .want_subtree_quota = {{"root", {{kDefaultCpu, 10'000}}},
                                         {"mid", {{kDefaultCpu, 7'000}}}}}},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// The queues whose inadmissible workloads a quota change concerns
// (Kueue's NotifyRetryInadmissible: the whole tree of the root).

struct TreeQueuesCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const TreeQueuesCase& c, std::ostream* os) {
    *os << c.name;
  }
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::string cluster_queue;
  std::vector<std::string> want;
};

class ClusterQueuesInTreeTest
    : public ::testing::TestWithParam<TreeQueuesCase> {};

TEST_P(ClusterQueuesInTreeTest, Names) {
  const TreeQueuesCase& tc = GetParam();
  Cache cache;
  cache.Rebuild(ByName(tc.cluster_queues), ByName(tc.cohorts), {}, {});
  EXPECT_EQ(cache.ClusterQueuesInTree(tc.cluster_queue), tc.want);
}

//   root
//   ├── child1
//   │   ├── cq1
//   │   └── cq2
//   └── child2
//       └── cq3
std::vector<Cohort> TwoChildTree() {
  return {CohortBuilder("root").Build(),
          CohortBuilder("child1").Parent("root").Build(),
          CohortBuilder("child2").Parent("root").Build()};
}

INSTANTIATE_TEST_SUITE_P(
    QueueInadmissibleWorkloads, ClusterQueuesInTreeTest,
    ::testing::ValuesIn(std::vector<TreeQueuesCase>{
        {
            .name = "deduplication_with_shared_root",
            .cohorts = TwoChildTree(),
            .cluster_queues =
                {ClusterQueueBuilder("cq1").Cohort("child1").Build(),
                 ClusterQueueBuilder("cq2").Cohort("child2").Build()},
            .cluster_queue = "cq2",
            .want = {"cq1", "cq2"},
        },
        {
            .name = "cohort_subtree_aggregates_count_across_multiple_cluster_"
                    "queues",
            .cohorts = TwoChildTree(),
            .cluster_queues =
                {ClusterQueueBuilder("cq1").Cohort("child1").Build(),
                 ClusterQueueBuilder("cq2").Cohort("child1").Build(),
                 ClusterQueueBuilder("cq3").Cohort("child2").Build()},
            .cluster_queue = "cq1",
            .want = {"cq1", "cq2", "cq3"},
        },
        {
            .name = "cohort_cycle",
            .cohorts = {CohortA(), CohortB(), CohortC()},
            .cluster_queues =
                {ClusterQueueBuilder("cq1").Cohort("cohort-a").Build()},
            .cluster_queue = "cq1",
            .want = {},
        },
        {
            .name = "no_cohort",
            .cluster_queues = {ClusterQueueBuilder("cq1").Build(),
                               ClusterQueueBuilder("cq2").Build()},
            .cluster_queue = "cq1",
            .want = {"cq1"},
        },
        {
            .name = "unknown_cluster_queue",
            .cluster_queue = "cq1",
            .want = {},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Height (Kueue's getNodeHeight).

struct HeightCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const HeightCase& c, std::ostream* os) { *os << c.name; }
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::map<std::string, int> want;
};

class HeightTest : public ::testing::TestWithParam<HeightCase> {};

TEST_P(HeightTest, OfEveryCohort) {
  const HeightCase& tc = GetParam();
  Cache cache;
  cache.Rebuild(ByName(tc.cluster_queues), ByName(tc.cohorts), {}, {});
  std::map<std::string, int> got;
  for (const auto& [name, cohort] : cache.cohorts()) {
    got[name] = Height(*cohort);
  }
  EXPECT_EQ(got, tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    KueueMd, HeightTest,
    ::testing::ValuesIn(std::vector<HeightCase>{
        {
            .name = "cohort_without_children",
            .cohorts = {CohortBuilder("alone").Build()},
            .want = {{"alone", 0}},
        },
        {
            .name = "only_cluster_queues",
            .cluster_queues = {ClusterQueueBuilder("a").Cohort("c").Build(),
                               ClusterQueueBuilder("b").Cohort("c").Build()},
            .want = {{"c", 1}},
        },
        {
            .name = "child_cohort_without_children",
            .cohorts = {CohortBuilder("root").Build(),
                        CohortBuilder("empty").Parent("root").Build()},
            .want = {{"root", 1}, {"empty", 0}},
        },
        {
            // root -- cq-root, and root -> mid -> leaf -> cq.
            .name = "height_is_the_longest_path",
            .cohorts = {CohortBuilder("root").Build(),
                        CohortBuilder("mid").Parent("root").Build(),
                        CohortBuilder("leaf").Parent("mid").Build(),
                        CohortBuilder("side").Parent("root").Build()},
            .cluster_queues =
                {ClusterQueueBuilder("cq-root").Cohort("root").Build(),
                 ClusterQueueBuilder("cq").Cohort("leaf").Build(),
                 ClusterQueueBuilder("cq-side").Cohort("side").Build()},
            .want = {{"root", 3}, {"mid", 2}, {"leaf", 1}, {"side", 1}},
        },
        {
            // kq: finite in a cycle (the walk stops at cyclic children).
            .name = "cycle",
            .cohorts = {CohortBuilder("x").Parent("y").Build(),
                        CohortBuilder("y").Parent("x").Build()},
            .cluster_queues = {ClusterQueueBuilder("cq").Cohort("x").Build()},
            .want = {{"x", 1}, {"y", 1}},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// FindHeightOfLowestSubtreeThatFits (the borrowing level).

struct BorrowingLevelCase {
  std::string name;
  // GoogleTest prints the case by name.
  friend void PrintTo(const BorrowingLevelCase& c, std::ostream* os) {
    *os << c.name;
  }
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::map<std::string, FlavorResourceQuantities> usage;
  std::string cluster_queue;
  FlavorResource fr = kDefaultCpu;
  int64_t value = 0;
  int want_height = 0;
  bool want_may_reclaim = false;
};

class BorrowingLevelTest : public ::testing::TestWithParam<BorrowingLevelCase> {
};

TEST_P(BorrowingLevelTest, LowestSubtreeThatFits) {
  const BorrowingLevelCase& tc = GetParam();
  Cache cache;
  cache.Rebuild(ByName(tc.cluster_queues), ByName(tc.cohorts),
                {"default", "on-demand"}, {});
  for (const auto& [name, usage] : tc.usage) {
    cache.FindClusterQueue(name)->AddUsage(usage);
  }
  const ClusterQueueSnapshot* cq = cache.FindClusterQueue(tc.cluster_queue);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(FindHeightOfLowestSubtreeThatFits(*cq, tc.fr, tc.value),
            std::make_pair(tc.want_height, tc.want_may_reclaim));
}

// root (10) -> mid -> leaf (4) -> cq (2); heights 3, 2, 1.
std::vector<Cohort> ThreeLevels(absl::string_view mid_cpu = "0",
                                bool leaf_lends_one = false) {
  CohortBuilder leaf("leaf");
  leaf.Parent("mid").Quota("default", "cpu", "4");
  if (leaf_lends_one) leaf.LendingLimit("1");
  return {DefaultCohort("root", "", "10"),
          DefaultCohort("mid", "root", mid_cpu), leaf.Build()};
}

INSTANTIATE_TEST_SUITE_P(
    KueueMd, BorrowingLevelTest,
    ::testing::ValuesIn(std::vector<BorrowingLevelCase>{
        {
            .name = "within_nominal",
            .cluster_queues = {ClusterQueueBuilder("a")
                                   .Cohort("c")
                                   .Quota("default", "cpu", "10")
                                   .Build()},
            .cluster_queue = "a",
            .value = 4'000,
            .want_height = 0,
            .want_may_reclaim = true,
        },
        {
            .name = "no_cohort",
            .cluster_queues = {ClusterQueueBuilder("a")
                                   .Quota("default", "cpu", "10")
                                   .Build()},
            .cluster_queue = "a",
            .value = 40'000,
            .want_height = 0,
            .want_may_reclaim = false,
        },
        {
            // KUEUE.md A.2: team-a uses 8 of its 10 and asks for 4 more;
            // the cohort (the root) has 20 - 8.
            .name = "flat_cohort_fungibility_example",
            .cluster_queues = {ClusterQueueBuilder("team-a")
                                   .Cohort("org")
                                   .Quota("on-demand", "cpu", "10")
                                   .BorrowingLimit("5")
                                   .Build(),
                               ClusterQueueBuilder("team-b")
                                   .Cohort("org")
                                   .Quota("on-demand", "cpu", "10")
                                   .Build()},
            .usage = {{"team-a", {{{"on-demand", "cpu"}, 8'000}}}},
            .cluster_queue = "team-a",
            .fr = {"on-demand", "cpu"},
            .value = 4'000,
            .want_height = 1,
            .want_may_reclaim = false,
        },
        {
            // KUEUE.md A.8: q borrows, but the request fits in c, which
            // lends all its quota to r where q_borrowing uses it.
            .name = "hierarchical_advantage_example",
            .cohorts = {CohortBuilder("r").Build(),
                        DefaultCohort("c", "r", "2")},
            .cluster_queues = {ClusterQueueBuilder("q")
                                   .Cohort("c")
                                   .Quota("default", "cpu", "0")
                                   .Build(),
                               ClusterQueueBuilder("q_borrowing")
                                   .Cohort("r")
                                   .Quota("default", "cpu", "0")
                                   .Build()},
            .usage = {{"q_borrowing", {{kDefaultCpu, 2'000}}}},
            .cluster_queue = "q",
            .value = 2'000,
            .want_height = 1,
            .want_may_reclaim = true,
        },
        {
            .name = "fits_in_the_lowest_cohort",
            .cohorts = ThreeLevels(),
            .cluster_queues = {ClusterQueueBuilder("cq")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "2")
                                   .Build()},
            .cluster_queue = "cq",
            .value = 5'000,
            .want_height = 1,
            .want_may_reclaim = true,
        },
        {
            // leaf 6 < 7, mid 6 < 7, root 16 >= 7.
            .name = "fits_only_at_the_root",
            .cohorts = ThreeLevels(),
            .cluster_queues = {ClusterQueueBuilder("cq")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "2")
                                   .Build()},
            .cluster_queue = "cq",
            .value = 7'000,
            .want_height = 3,
            .want_may_reclaim = false,
        },
        {
            .name = "fits_nowhere",
            .cohorts = ThreeLevels(),
            .cluster_queues = {ClusterQueueBuilder("cq")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "2")
                                   .Build()},
            .cluster_queue = "cq",
            .value = 20'000,
            .want_height = 3,
            .want_may_reclaim = false,
        },
        {
            // Usage already in the tree counts: the sibling's 2, stored in
            // leaf, mid and root, leaves 6 - 2 < 5 in leaf and mid.
            .name = "usage_in_the_subtree_counts",
            .cohorts = ThreeLevels(),
            .cluster_queues = {ClusterQueueBuilder("cq")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "2")
                                   .Build(),
                               ClusterQueueBuilder("sibling")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "0")
                                   .Build()},
            .usage = {{"sibling", {{kDefaultCpu, 2'000}}}},
            .cluster_queue = "cq",
            .value = 5'000,
            .want_height = 3,
            .want_may_reclaim = false,
        },
        {
            // leaf (4 + cq's 2) keeps 5 local and lends 1; mid has 1 of its
            // own, so 2 in all. The sibling's 3 stay in leaf's local quota.
            // cq asks for 4: leaf has 6 - 3 < 4; what leaf cannot give
            // locally, 4 - (5 - 3) = 2, fits in mid's 2.
            .name = "lending_limit_keeps_quota_local",
            .cohorts = ThreeLevels("1", /*leaf_lends_one=*/true),
            .cluster_queues = {ClusterQueueBuilder("cq")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "2")
                                   .Build(),
                               ClusterQueueBuilder("sibling")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "0")
                                   .Build()},
            .usage = {{"sibling", {{kDefaultCpu, 3'000}}}},
            .cluster_queue = "cq",
            .value = 4'000,
            .want_height = 2,
            .want_may_reclaim = true,
        },
        {
            // As above with one more CPU: 3 above leaf, mid has 2, the
            // root 10 + 2.
            .name = "lending_limit_then_root",
            .cohorts = ThreeLevels("1", /*leaf_lends_one=*/true),
            .cluster_queues = {ClusterQueueBuilder("cq")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "2")
                                   .Build(),
                               ClusterQueueBuilder("sibling")
                                   .Cohort("leaf")
                                   .Quota("default", "cpu", "0")
                                   .Build()},
            .usage = {{"sibling", {{kDefaultCpu, 3'000}}}},
            .cluster_queue = "cq",
            .value = 5'000,
            .want_height = 3,
            .want_may_reclaim = false,
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// A ClusterQueue under a cohort cycle is inactive; the quota arithmetic on
// it must still end (Kueue leaves such queues out of its snapshot, so there
// is nothing to walk; kq's cache is live and must not loop).

TEST(CohortCycleTest, QuotaArithmeticBelowACycleTerminates) {
  std::map<std::string, Cohort> cohorts{
      {"x",
       CohortBuilder("x").Parent("y").Quota("default", "cpu", "5").Build()},
      {"y", CohortBuilder("y").Parent("x").Build()}};
  std::map<std::string, ClusterQueue> cqs{
      {"cq", ClusterQueueBuilder("cq")
                 .Cohort("x")
                 .Quota("default", "cpu", "4")
                 .LendingLimit("1")
                 .Build()}};
  Cache cache;
  cache.Rebuild(cqs, cohorts, {"default"}, {});
  ClusterQueueSnapshot* cq = cache.FindClusterQueue("cq");
  ASSERT_FALSE(cq->active);
  EXPECT_EQ(cq->active_reason, "Unknown");
  EXPECT_EQ(cq->active_message, "Can't admit new workloads.");

  // The queue is its own root: its nominal quota, nothing from the cycle.
  EXPECT_EQ(cq->PotentialAvailable(kDefaultCpu), 4'000);
  cq->AddUsage({{kDefaultCpu, 6'000}});
  EXPECT_EQ(cq->node.usage.at(kDefaultCpu), 6'000);
  EXPECT_EQ(cq->Available(kDefaultCpu), 0);
  EXPECT_EQ(cache.FindCohort("x")->node.usage.count(kDefaultCpu), 0u);
  EXPECT_EQ(FindHeightOfLowestSubtreeThatFits(*cq, kDefaultCpu, 1'000),
            std::make_pair(1, false));
  cq->RemoveUsage({{kDefaultCpu, 6'000}});
  EXPECT_EQ(cq->node.usage.at(kDefaultCpu), 0);
  EXPECT_EQ(cache.ClusterQueuesInTree("cq"), std::vector<std::string>{});
}

}  // namespace
}  // namespace kq::cache
