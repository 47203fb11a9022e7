// The queue Manager across ClusterQueues. Besides kq's own cases, ported
// from Kueue's pkg/cache/queue/manager_test.go: TestQueueInadmissible
// Workloads, TestRequeueWorkloadStrictFIFO, TestHeads, TestUpdateWorkload.
// Kueue's Manager also resolves LocalQueues and reads workloads from the
// API; in kq the engine does both and hands the Manager ClusterQueue names
// and queue keys, so a case gives the calls the engine makes.
//
// Not ported, and why:
//   - LocalQueue bookkeeping (TestAddLocalQueueOrphans, TestAddClusterQueue
//     Orphans, TestUpdateLocalQueue, TestDeleteLocalQueue*, TestStatus,
//     TestAddWorkload, TestDeleteWorkload, TestDeleteAndForgetWorkload,
//     TestGetPendingWorkloadsInfo, the local-queue members and
//     workloadAssignedQueues of TestUpdateWorkload and TestHeads,
//     TestRequeueWorkloadsCohortCycle) and the workload checks of
//     TestRequeueWorkloadStrictFIFO ("non existing queue", "non existing
//     cluster queue", "not in client", "has no quota reservation",
//     "finished", "deactivated", "already admitted"): the engine's, before it
//     calls the Manager.
//   - The requeue batch period and its deduplication (the log count of
//     TestQueueInadmissibleWorkloads), blocking Heads (TestHeadsAsync,
//     TestHeadsCancelled*, TestClusterQueueToActive): the engine runs
//     cycles synchronously.
//   - Second-pass queues (TestQueueSecondPassIfNeeded), metrics
//     (TestResyncClusterQueueGaugeMetrics, TestResyncLocalQueueGauge
//     Metrics, TestPendingResourceMetrics), DRA, concurrent admission and
//     elastic workload variants (TestUpdateUnadmittedWorkload*), Admission
//     Fair Sharing weights (TestHeadsRespectLocalQueueWeight*,
//     TestUpdateLocalQueueWeight*) and the last-assignment carry-over
//     (TestAddOrUpdateWorkloadCarriesLastAssignment): not modelled.

#include "server/queue/manager.h"

#include <deque>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "tests/testing/builders.h"

namespace kq::queue {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAreArray;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

// A key made from a temporary workload names no object: the manager reads
// a key's object (its scheduling hash) while the key is queued.
QueueKey Unowned(QueueKey key) {
  key.object = nullptr;
  return key;
}

QueueKey Key(const std::string& name, int32_t priority, int seconds,
             const std::string& uid = "") {
  return Unowned(KeyFor(WorkloadBuilder(name)
                            .Priority(priority)
                            .Created(kT0 + absl::Seconds(seconds))
                            .Uid(uid.empty() ? name : uid)
                            .Build()));
}

std::vector<std::string> PopAll(Manager& m) {
  std::vector<std::string> order;
  while (true) {
    auto heads = m.PopHeads([](const std::string&) { return true; });
    if (heads.empty()) break;
    for (const auto& head : heads) order.push_back(head.workload.second);
  }
  return order;
}

TEST(ManagerTest, OrdersByPriorityThenTimestampThenUid) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Key("old-low", 1, 0));
  m.Push("cq", Key("new-high", 5, 10));
  m.Push("cq", Key("old-high", 5, 5));
  m.Push("cq", Key("tie-b", 1, 0, "b"));
  // Same priority and time: UID "b" sorts before UID "old-low".
  EXPECT_EQ(PopAll(m), (std::vector<std::string>{"old-high", "new-high",
                                                 "tie-b", "old-low"}));
}

TEST(ManagerTest, OneHeadPerClusterQueue) {
  Manager m;
  m.UpsertClusterQueue("a", QueueingStrategy::kBestEffortFIFO);
  m.UpsertClusterQueue("b", QueueingStrategy::kBestEffortFIFO);
  m.Push("a", Key("a1", 0, 0));
  m.Push("a", Key("a2", 0, 1));
  m.Push("b", Key("b1", 0, 0));
  auto heads = m.PopHeads([](const std::string&) { return true; });
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0].workload.second, "a1");
  EXPECT_EQ(heads[1].workload.second, "b1");
}

TEST(ManagerTest, InactiveClusterQueueGivesNoHead) {
  Manager m;
  m.UpsertClusterQueue("a", QueueingStrategy::kBestEffortFIFO);
  m.Push("a", Key("a1", 0, 0));
  EXPECT_TRUE(m.PopHeads([](const std::string&) { return false; }).empty());
  EXPECT_EQ(m.PendingCount("a"), 1);
}

// KUEUE.md A.7: StrictFIFO keeps a head that does not fit at the front and
// blocks the queue; BestEffortFIFO parks it and lets the next one through.
TEST(ManagerTest, StrictFifoHeadBlocks) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kStrictFIFO);
  m.Push("cq", Key("big", 0, 0));
  m.Push("cq", Key("small", 0, 1));
  auto heads = m.PopHeads([](const std::string&) { return true; });
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_FALSE(
      m.Requeue("cq", Key("big", 0, 0), Manager::RequeueReason::kNoFit));
  heads = m.PopHeads([](const std::string&) { return true; });
  EXPECT_EQ(heads[0].workload.second, "big");
}

TEST(ManagerTest, BestEffortFifoParksHead) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Key("big", 0, 0));
  m.Push("cq", Key("small", 0, 1));
  m.PopHeads([](const std::string&) { return true; });
  EXPECT_TRUE(
      m.Requeue("cq", Key("big", 0, 0), Manager::RequeueReason::kNoFit));
  auto heads = m.PopHeads([](const std::string&) { return true; });
  EXPECT_EQ(heads[0].workload.second, "small");
  EXPECT_EQ(m.PendingCount("cq"), 1);  // big, parked
  EXPECT_EQ(m.PositionOf({"default", "big"}), 0);
  // Quota freed: the parked workload comes back.
  EXPECT_TRUE(m.QueueInadmissible({"cq"}));
  heads = m.PopHeads([](const std::string&) { return true; });
  EXPECT_EQ(heads[0].workload.second, "big");
}

// Parked workloads are kept in no order; listings and positions still follow
// the queue order, and removing one from the middle keeps the others.
TEST(ManagerTest, ParkedWorkloadsListInQueueOrder) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  // Parked in the reverse of their order: each pass pops the next.
  const std::vector<QueueKey> keys = {Key("late", 0, 30), Key("mid", 0, 20),
                                      Key("early", 0, 10), Key("high", 9, 40)};
  for (const QueueKey& key : keys) m.Push("cq", key);
  std::vector<QueueKey> popped_order = {keys[3], keys[2], keys[1], keys[0]};
  for (const QueueKey& key : popped_order) {
    auto heads = m.PopHeads([](const std::string&) { return true; });
    ASSERT_EQ(heads.size(), 1u);
    ASSERT_EQ(heads[0].workload, key.workload);
    EXPECT_TRUE(m.Requeue("cq", key, Manager::RequeueReason::kNoFit));
  }
  auto names = [](const std::vector<NamespacedName>& workloads) {
    std::vector<std::string> out;
    for (const NamespacedName& w : workloads) out.push_back(w.second);
    return out;
  };
  EXPECT_THAT(names(m.InadmissibleWorkloads("cq")),
              ElementsAreArray({"high", "early", "mid", "late"}));
  EXPECT_EQ(m.PositionOf({"default", "mid"}), 2);
  m.Remove({"default", "early"});
  EXPECT_THAT(names(m.InadmissibleWorkloads("cq")),
              ElementsAreArray({"high", "mid", "late"}));
  EXPECT_EQ(m.PositionOf({"default", "late"}), 2);
  EXPECT_TRUE(m.IsInadmissible({"default", "late"}));
  EXPECT_EQ(m.QueueInadmissible({"cq"}), 3);
  EXPECT_EQ(PopAll(m), (std::vector<std::string>{"high", "mid", "late"}));
}

// Kueue's ClusterQueue.Snapshot: heap and parked workloads in one queue
// order, each at its PositionOf; a first-n listing is that order's front.
TEST(ManagerTest, PendingWorkloadsListHeapAndParkedInQueueOrder) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Key("mid", 0, 20));
  m.Push("cq", Key("high", 9, 40));
  m.Push("cq", Key("late", 0, 30));
  m.Push("cq", Key("early", 0, 10));
  // "high" is parked, the others wait in the heap.
  m.PopHeads([](const std::string&) { return true; });
  ASSERT_TRUE(
      m.Requeue("cq", Key("high", 9, 40), Manager::RequeueReason::kNoFit));
  auto names = [](const std::vector<NamespacedName>& workloads) {
    std::vector<std::string> out;
    for (const NamespacedName& w : workloads) out.push_back(w.second);
    return out;
  };
  const std::vector<NamespacedName> all = m.PendingWorkloads("cq");
  EXPECT_THAT(names(all), ElementsAreArray({"high", "early", "mid", "late"}));
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(m.PositionOf(all[i]), static_cast<int64_t>(i)) << all[i].second;
  }
  EXPECT_THAT(names(m.PendingWorkloads("cq", 2)),
              ElementsAreArray({"high", "early"}));
  EXPECT_THAT(names(m.PendingWorkloads("cq", 0)), ::testing::IsEmpty());
  EXPECT_THAT(m.PendingWorkloads("unknown"), ::testing::IsEmpty());
}

TEST(ManagerTest, BestEffortFifoRetriesImmediatelyAfterNominationFailure) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Key("a", 0, 0));
  m.PopHeads([](const std::string&) { return true; });
  EXPECT_FALSE(m.Requeue("cq", Key("a", 0, 0),
                         Manager::RequeueReason::kFailedAfterNomination));
}

TEST(ManagerTest, StrictFifoParksNamespaceMismatch) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kStrictFIFO);
  m.Push("cq", Key("a", 0, 0));
  m.PopHeads([](const std::string&) { return true; });
  EXPECT_TRUE(m.Requeue("cq", Key("a", 0, 0),
                        Manager::RequeueReason::kNamespaceMismatch));
}

TEST(ManagerTest, RemoveAndDelete) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Key("a", 0, 0));
  m.Push("cq", Key("b", 0, 1));
  m.Remove({"default", "a"});
  EXPECT_FALSE(m.Contains({"default", "a"}));
  EXPECT_EQ(m.DeleteClusterQueue("cq"),
            (std::vector<NamespacedName>{{"default", "b"}}));
  EXPECT_FALSE(m.Contains({"default", "b"}));
}

// ---------------------------------------------------------------------------
// TestQueueInadmissibleWorkloads: quota freed in a ClusterQueue retries the
// inadmissible workloads of its whole cohort tree, once per tree, and none
// in a tree with a cycle. The tree comes from the cache, as in the engine.

struct WorkloadIn {
  std::string name;
  std::string cluster_queue;
  int seconds = 0;
};

struct InadmissibleCase {
  std::string name;
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<WorkloadIn> workloads;
  std::vector<std::string> cq_names;
  std::map<std::string, std::vector<std::string>> want_inadmissible;
  std::map<std::string, std::vector<std::string>> want_active;
  int want_moved_count = 0;
  friend void PrintTo(const InadmissibleCase& c, std::ostream* os) {
    *os << c.name;
  }
};

std::vector<std::string> Names(const std::vector<NamespacedName>& keys) {
  std::vector<std::string> names;
  for (const NamespacedName& k : keys) names.push_back(k.second);
  return names;
}

// Non-empty lists by ClusterQueue, as Kueue's Dump/DumpInadmissible.
std::map<std::string, std::vector<std::string>> Dump(
    const Manager& m, const std::vector<ClusterQueue>& cqs, bool inadmissible) {
  std::map<std::string, std::vector<std::string>> out;
  for (const ClusterQueue& cq : cqs) {
    std::vector<std::string> names =
        Names(inadmissible ? m.InadmissibleWorkloads(cq.meta.name)
                           : m.ActiveWorkloads(cq.meta.name));
    if (!names.empty()) out[cq.meta.name] = names;
  }
  return out;
}

class QueueInadmissibleWorkloadsTest
    : public ::testing::TestWithParam<InadmissibleCase> {};

TEST_P(QueueInadmissibleWorkloadsTest, MovesTheTree) {
  const InadmissibleCase& tc = GetParam();
  std::map<std::string, ClusterQueue> cqs;
  for (const ClusterQueue& cq : tc.cluster_queues) cqs[cq.meta.name] = cq;
  std::map<std::string, Cohort> cohorts;
  for (const Cohort& c : tc.cohorts) cohorts[c.meta.name] = c;
  cache::Cache cache;
  cache.Rebuild(cqs, cohorts, {}, {});

  Manager m;
  for (const ClusterQueue& cq : tc.cluster_queues) {
    m.UpsertClusterQueue(cq.meta.name, cq.queueing_strategy);
  }
  for (const WorkloadIn& w : tc.workloads) {
    m.RequeueIfNotPresent(w.cluster_queue, Key(w.name, 0, w.seconds),
                          Manager::RequeueReason::kGeneric);
  }
  // Requests for the same tree collapse into one.
  std::set<std::string> names;
  for (const std::string& cq : tc.cq_names) {
    for (std::string& n : cache.ClusterQueuesInTree(cq)) names.insert(n);
  }
  EXPECT_EQ(m.QueueInadmissible({names.begin(), names.end()}),
            tc.want_moved_count);
  EXPECT_EQ(Dump(m, tc.cluster_queues, true), tc.want_inadmissible);
  EXPECT_EQ(Dump(m, tc.cluster_queues, false), tc.want_active);
}

//   root
//   +-- child1
//   +-- child2
std::vector<Cohort> RootWithTwoChildren() {
  return {CohortBuilder("root").Build(),
          CohortBuilder("child1").Parent("root").Build(),
          CohortBuilder("child2").Parent("root").Build()};
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, QueueInadmissibleWorkloadsTest,
    ::testing::ValuesIn(std::vector<InadmissibleCase>{
        {
            .name = "deduplication_with_shared_root",
            .cohorts = RootWithTwoChildren(),
            .cluster_queues =
                {ClusterQueueBuilder("cq1").Cohort("child1").Build(),
                 ClusterQueueBuilder("cq2").Cohort("child2").Build()},
            .workloads = {{"a", "cq1", 0}, {"b", "cq2", 1}},
            .cq_names = {"cq1", "cq2"},
            .want_active = {{"cq1", {"a"}}, {"cq2", {"b"}}},
            .want_moved_count = 2,
        },
        {
            .name = "cohort_subtree_aggregates_count_across_multiple_cluster_"
                    "queues",
            .cohorts = RootWithTwoChildren(),
            .cluster_queues =
                {ClusterQueueBuilder("cq1").Cohort("child1").Build(),
                 ClusterQueueBuilder("cq2").Cohort("child1").Build(),
                 ClusterQueueBuilder("cq3").Cohort("child2").Build()},
            .workloads = {{"a", "cq1", 0},
                          {"b", "cq2", 1},
                          {"c", "cq3", 2},
                          {"d", "cq3", 3}},
            .cq_names = {"cq1", "cq2", "cq3"},
            .want_active = {{"cq1", {"a"}},
                            {"cq2", {"b"}},
                            {"cq3", {"c", "d"}}},
            .want_moved_count = 4,
        },
        {
            .name = "cohort_cycle",
            .cohorts = {CohortBuilder("cohort-a").Parent("cohort-b").Build(),
                        CohortBuilder("cohort-b").Parent("cohort-c").Build(),
                        CohortBuilder("cohort-c").Parent("cohort-a").Build()},
            .cluster_queues =
                {ClusterQueueBuilder("cq1").Cohort("cohort-a").Build()},
            .workloads = {{"a", "cq1", 0}},
            .cq_names = {"cq1"},
            .want_inadmissible = {{"cq1", {"a"}}},
            .want_moved_count = 0,
        },
    }),
    [](const auto& info) { return info.param.name; });

// TestRequeueWorkloadStrictFIFO, the cases the Manager decides.
TEST(ManagerTest, RequeueWorkloadStrictFifo) {
  {
    SCOPED_TRACE("existing queue and obj");
    Manager m;
    m.UpsertClusterQueue("cq", QueueingStrategy::kStrictFIFO);
    EXPECT_TRUE(m.RequeueIfNotPresent("cq", Key("wl", 0, 0),
                                      Manager::RequeueReason::kGeneric));
    EXPECT_EQ(m.PendingActive("cq"), 1);
  }
  {
    SCOPED_TRACE("already in queue");
    Manager m;
    m.UpsertClusterQueue("cq", QueueingStrategy::kStrictFIFO);
    m.Push("cq", Key("wl", 0, 0));
    EXPECT_FALSE(m.RequeueIfNotPresent("cq", Key("wl", 0, 0),
                                       Manager::RequeueReason::kGeneric));
    EXPECT_EQ(m.PendingCount("cq"), 1);
  }
}

// ---------------------------------------------------------------------------
// TestHeads: one head per active ClusterQueue.

struct HeadsCase {
  std::string name;
  std::vector<std::pair<std::string, QueueKey>> workloads;
  std::set<std::string> want_workloads;
  friend void PrintTo(const HeadsCase& c, std::ostream* os) { *os << c.name; }
};

class HeadsTest : public ::testing::TestWithParam<HeadsCase> {};

TEST_P(HeadsTest, OnePerActiveClusterQueue) {
  const HeadsCase& tc = GetParam();
  Manager m;
  for (const char* cq : {"active-fooCq", "active-barCq", "pending-bazCq"}) {
    m.UpsertClusterQueue(cq, QueueingStrategy::kBestEffortFIFO);
  }
  for (const auto& [cq, key] : tc.workloads) m.Push(cq, key);
  std::set<std::string> got;
  for (const auto& head : m.PopHeads([](const std::string& name) {
         return name.rfind("active-", 0) == 0;
       })) {
    got.insert(head.workload.second);
  }
  EXPECT_EQ(got, tc.want_workloads);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, HeadsTest,
    ::testing::ValuesIn(std::vector<HeadsCase>{
        {.name = "empty_clusterqueues"},
        {
            .name = "active_clusterqueues",
            .workloads = {{"active-fooCq", Key("a", 0, 0)},
                          {"active-barCq", Key("b", 0, 0)}},
            .want_workloads = {"a", "b"},
        },
        {
            .name = "active_clusterqueues_with_multiple_workloads",
            .workloads = {{"active-fooCq", Key("a1", 0, 0)},
                          {"active-fooCq", Key("a2", 0, 3600)},
                          {"active-barCq", Key("b", 0, 0)}},
            .want_workloads = {"a1", "b"},
        },
        {
            .name = "inactive_clusterqueues",
            .workloads = {{"active-fooCq", Key("a", 0, 0)},
                          {"active-barCq", Key("b", 0, 0)},
                          {"pending-bazCq", Key("c", 0, 3600)}},
            .want_workloads = {"a", "b"},
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// TestUpdateWorkload: the order of every ClusterQueue after a workload is
// updated. An update the engine can place is a Push to its (possibly new)
// ClusterQueue; one to a LocalQueue that does not exist is a Remove.

struct UpdateCase {
  std::string name;
  std::vector<std::string> cluster_queues;
  std::vector<std::pair<std::string, QueueKey>> workloads;
  // Where the updated first workload goes; empty: nowhere.
  std::string update_to;
  QueueKey updated;
  std::map<std::string, std::vector<std::string>> want_queue_order;
  friend void PrintTo(const UpdateCase& c, std::ostream* os) { *os << c.name; }
};

class UpdateWorkloadTest : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(UpdateWorkloadTest, QueueOrder) {
  const UpdateCase& tc = GetParam();
  Manager m;
  for (const std::string& cq : tc.cluster_queues) {
    m.UpsertClusterQueue(cq, QueueingStrategy::kBestEffortFIFO);
  }
  for (const auto& [cq, key] : tc.workloads) {
    if (!cq.empty()) m.Push(cq, key);
  }
  if (tc.update_to.empty()) {
    m.Remove(tc.updated.workload);
  } else {
    m.Push(tc.update_to, tc.updated);
  }
  std::map<std::string, std::vector<std::string>> got;
  for (const std::string& cq : tc.cluster_queues) {
    std::vector<std::string>& order = got[cq];
    while (true) {
      auto heads =
          m.PopHeads([&](const std::string& name) { return name == cq; });
      if (heads.empty()) break;
      order.push_back(heads[0].workload.second);
    }
  }
  EXPECT_EQ(got, tc.want_queue_order);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, UpdateWorkloadTest,
    ::testing::ValuesIn(std::vector<UpdateCase>{
        {
            // Created a minute later: now behind b.
            .name = "in_queue",
            .cluster_queues = {"cq"},
            .workloads = {{"cq", Key("a", 0, 0)}, {"cq", Key("b", 0, 1)}},
            .update_to = "cq",
            .updated = Key("a", 0, 60),
            .want_queue_order = {{"cq", {"b", "a"}}},
        },
        {
            // To another LocalQueue of the same ClusterQueue.
            .name = "between_queues",
            .cluster_queues = {"cq"},
            .workloads = {{"cq", Key("a", 0, 0)}},
            .update_to = "cq",
            .updated = Key("a", 0, 0),
            .want_queue_order = {{"cq", {"a"}}},
        },
        {
            .name = "between_cluster_queues",
            .cluster_queues = {"cq1", "cq2"},
            .workloads = {{"cq1", Key("a", 0, 0)}},
            .update_to = "cq2",
            .updated = Key("a", 0, 0),
            .want_queue_order = {{"cq1", {}}, {"cq2", {"a"}}},
        },
        {
            .name = "to_non_existent_queue",
            .cluster_queues = {"cq"},
            .workloads = {{"cq", Key("a", 0, 0)}},
            .update_to = "",
            .updated = Key("a", 0, 0),
            .want_queue_order = {{"cq", {}}},
        },
        {
            // Its LocalQueue did not exist: it was in no ClusterQueue.
            .name = "from_non_existing_queue",
            .cluster_queues = {"cq"},
            .workloads = {{"", Key("a", 0, 0)}},
            .update_to = "cq",
            .updated = Key("a", 0, 0),
            .want_queue_order = {{"cq", {"a"}}},
        },
    }),
    [](const auto& info) { return info.param.name; });

// kq: the counts behind PendingCount, and Requeue's "parked" answer for a
// popped head under both strategies.
TEST(ManagerTest, PendingBreakdown) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Key("a", 0, 0));
  m.Push("cq", Key("b", 0, 1));
  m.Push("cq", Key("c", 0, 2));
  m.PopHeads([](const std::string&) { return true; });
  EXPECT_TRUE(m.Requeue("cq", Key("a", 0, 0), Manager::RequeueReason::kNoFit));
  EXPECT_EQ(m.PendingActive("cq"), 2);
  EXPECT_EQ(m.PendingInadmissible("cq"), 1);
  EXPECT_EQ(m.PendingCount("cq"), 3);
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAreArray({"b", "c"}));
  EXPECT_EQ(m.QueueAllInadmissible(), 1);
  EXPECT_EQ(m.PendingInadmissible("cq"), 0);
  EXPECT_EQ(m.PendingActive("unknown"), 0);
}

// A key made from a workload names it: the manager reads the workload's
// name and uid from it while the key is queued, and keeps no copy. The
// owner may replace the workload in place (its strings move) as long as it
// keeps the name and uid.
TEST(ManagerTest, AQueuedKeyReadsItsWorkloadInPlace) {
  std::deque<Workload> workloads;
  for (const char* name : {"a-workload-with-a-long-name", "b", "c"}) {
    workloads.push_back(WorkloadBuilder(name)
                            .Created(kT0)
                            .Uid(std::string(name) + "-0000-0000-uid")
                            .Build());
  }
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  for (const Workload& wl : workloads) m.Push("cq", KeyFor(wl));

  // Replaced in place by a copy: every string is a new buffer.
  Workload replacement = workloads[0];
  workloads[0] = std::move(replacement);
  EXPECT_TRUE(m.Contains({"default", "a-workload-with-a-long-name"}));
  // Ties on priority and timestamp break on the uid, read from the objects.
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")),
              ElementsAreArray({"a-workload-with-a-long-name", "b", "c"}));
  EXPECT_EQ(m.PositionOf({"default", "c"}), 2);

  m.Remove({"default", "a-workload-with-a-long-name"});
  EXPECT_FALSE(m.Contains({"default", "a-workload-with-a-long-name"}));
  EXPECT_THAT(PopAll(m), ElementsAreArray({"b", "c"}));
}

}  // namespace
}  // namespace kq::queue
