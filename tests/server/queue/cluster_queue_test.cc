// One ClusterQueue's pending workloads, ported from Kueue's
// pkg/cache/queue/cluster_queue_test.go: Test_PushOrUpdate, Test_Pop,
// Test_Delete, Test_Info, TestSnapshotDeterministicOrder,
// TestClusterQueueImpl, TestQueueInadmissibleWorkloadsDuringScheduling,
// TestBestEffortFIFORequeueIfNotPresent, TestFIFOClusterQueue,
// TestStrictFIFO, TestStrictFIFORequeueIfNotPresent. Case names are
// Kueue's, in snake_case.
//
// Not ported, and why (kq's Manager does not model these):
//   - Backoff (requeueState, Requeued=False; Kueue's
//     backoffWaitingTimeExpired): TestBackoffWaitingTimeExpired, the
//     requeue-state cases of Test_PushOrUpdate and
//     TestPushOrUpdateGenerationChanged, and TestClusterQueueImpl "add,
//     update, delete workload" and "re-queue admissible workload that was
//     inadmissible" (their w4-requeue-state must be held back by Push and
//     by an immediate requeue). Where Kueue re-checks backoff when it moves
//     inadmissible workloads, the EligibleFn of QueueInadmissible carries it.
//   - In-place updates of inadmissible workloads (Kueue's PushOrUpdate keeps
//     an unchanged workload parked): TestClusterQueueImpl "update inadmissible
//     workload without changes". kq's Manager does not hold workload specs;
//     Push always moves a workload to the heap.
//   - The inflight workload (TestPushOrUpdateSkipsInflightWorkload,
//     TestPendingInLocalQueueCountsInflight): a popped head is held by no
//     queue until requeued; kq's engine never pushes during a cycle.
//   - Scheduling-equivalence hashes and bulk moves (TestRecordInadmissible
//     Hash, TestPushOrUpdateRespectsInadmissibleHashes, TestQueueInadmissible
//     WorkloadsClearsHashes, TestRequeueHashTriggerByReason,
//     TestGetNoFitReason), Admission Fair Sharing (TestFsAdmission and the
//     TestSnapshot*FS* tests), the sticky preemptor (the wantSticky column of
//     TestBestEffortFIFORequeueIfNotPresent, TestClusterQueueIsPreemptor),
//     pending flavors of the last assignment ("didn't fit but pending
//     flavors"), LocalQueues (Test_AddFromLocalQueue, Test_DeleteFromLocal
//     Queue, TestPendingResources*), metrics trackers
//     (TestClusterQueuePendingTrackers) and the requeuingStrategy.timestamp
//     configuration (TestStrictFIFO "... kueue is configured to always use
//     the creation timestamp": kq uses Kueue's default, Eviction).

#include <deque>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/queue/manager.h"
#include "tests/testing/builders.h"

namespace kq::queue {
namespace {

using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

using Reason = Manager::RequeueReason;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

std::vector<std::string> Names(const std::vector<NamespacedName>& keys) {
  std::vector<std::string> names;
  for (const NamespacedName& k : keys) names.push_back(k.second);
  return names;
}

// Pops the head of `cq`, which must exist, and returns its name.
std::string Pop(Manager& m, const std::string& cq) {
  auto heads = m.PopHeads([&](const std::string& name) { return name == cq; });
  return heads.empty() ? "" : heads[0].workload.second;
}

// A key made from a temporary workload names no object: the manager reads
// a key's object (its scheduling hash) while the key is queued.
QueueKey Unowned(QueueKey key) {
  key.object = nullptr;
  return key;
}

QueueKey Key(const std::string& name, absl::Time created = kNow) {
  return Unowned(
      KeyFor(WorkloadBuilder(name).Created(created).Uid(name).Build()));
}

TEST(ClusterQueueTest, PushOrUpdate) {
  // "workload doesn't have re-queue state": pushing the same workload twice
  // updates it.
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(m.PendingCount("cq"), 0);
  m.Push("cq", Key("workload-1"));
  EXPECT_EQ(m.PendingCount("cq"), 1);
  QueueKey updated = Key("workload-1", kNow + absl::Seconds(1));
  m.Push("cq", updated);
  EXPECT_EQ(m.PendingCount("cq"), 1);
  EXPECT_EQ(Pop(m, "cq"), "workload-1");
  EXPECT_EQ(m.PendingCount("cq"), 0);
}

TEST(ClusterQueueTest, Pop) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(Pop(m, "cq"), "");
  m.Push("cq", Key("workload-1", kNow));
  m.Push("cq", Key("workload-2", kNow + absl::Seconds(1)));
  EXPECT_EQ(Pop(m, "cq"), "workload-1");
  EXPECT_EQ(Pop(m, "cq"), "workload-2");
  EXPECT_EQ(Pop(m, "cq"), "");
}

TEST(ClusterQueueTest, Delete) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Key("workload-1"));
  m.Push("cq", Key("workload-2"));
  EXPECT_EQ(m.PendingCount("cq"), 2);
  m.Remove({"default", "workload-1"});
  EXPECT_EQ(m.PendingCount("cq"), 1);
  // Only the namespace and name matter.
  m.Remove({"default", "workload-2"});
  EXPECT_EQ(m.PendingCount("cq"), 0);
}

TEST(ClusterQueueTest, Info) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  EXPECT_FALSE(m.Contains({"default", "workload-1"}));
  EXPECT_EQ(m.ClusterQueueOf({"default", "workload-1"}), nullptr);
  m.Push("cq", Key("workload-1"));
  EXPECT_TRUE(m.Contains({"default", "workload-1"}));
  ASSERT_NE(m.ClusterQueueOf({"default", "workload-1"}), nullptr);
  EXPECT_EQ(*m.ClusterQueueOf({"default", "workload-1"}), "cq");
}

// TestSnapshotDeterministicOrder: same priority and timestamp, the UID
// decides, across the heap and the inadmissible set alike.
TEST(ClusterQueueTest, SnapshotDeterministicOrderHeapOnly) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  for (const char* name : {"wl3", "wl1", "wl2"}) {
    m.Push("cq", Unowned(KeyFor(WorkloadBuilder(name)
                                    .Created(kNow)
                                    .Uid(std::string("uid-") + name[2])
                                    .Build())));
  }
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAre("wl1", "wl2", "wl3"));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(m.PositionOf({"default", "wl1"}), 0);
    EXPECT_EQ(m.PositionOf({"default", "wl2"}), 1);
    EXPECT_EQ(m.PositionOf({"default", "wl3"}), 2);
  }
}

TEST(ClusterQueueTest, SnapshotDeterministicOrderHeapAndInadmissible) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  auto key = [](const std::string& name, const std::string& uid) {
    return Unowned(
        KeyFor(WorkloadBuilder(name).Created(kNow).Uid(uid).Build()));
  };
  m.Push("cq", key("wl1", "uid-1"));
  m.Push("cq", key("wl2", "uid-2"));
  EXPECT_TRUE(
      m.RequeueIfNotPresent("cq", key("wl4", "uid-4"), Reason::kGeneric));
  EXPECT_TRUE(
      m.RequeueIfNotPresent("cq", key("wl3", "uid-3"), Reason::kGeneric));
  EXPECT_THAT(Names(m.InadmissibleWorkloads("cq")), ElementsAre("wl3", "wl4"));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(m.PositionOf({"default", "wl1"}), 0);
    EXPECT_EQ(m.PositionOf({"default", "wl2"}), 1);
    EXPECT_EQ(m.PositionOf({"default", "wl3"}), 2);
    EXPECT_EQ(m.PositionOf({"default", "wl4"}), 3);
  }
}

// ---------------------------------------------------------------------------
// TestClusterQueueImpl. The ClusterQueue selects namespaces labelled dep in
// (eng, sales): ns1 is eng, ns2 sales, ns3 marketing. Kueue re-checks the
// selector and the backoff when it moves inadmissible workloads; here the
// EligibleFn does, with w4-requeue-state still in backoff.

struct ImplCase {
  std::string name;
  std::vector<std::string> workloads_to_add;
  std::vector<std::string> inadmissible_workloads_to_requeue;
  std::vector<std::string> workloads_to_update;
  std::vector<std::string> workloads_to_delete;
  bool queue_inadmissible_workloads = false;
  std::vector<std::string> want_active_workloads;
  int want_pending = 0;
  int want_inadmissible_workloads_requeued = 0;
  friend void PrintTo(const ImplCase& c, std::ostream* os) { *os << c.name; }
};

QueueKey ImplKey(const std::string& name) {
  std::string ns;
  if (name == "w1" || name == "w4-requeue-state") ns = "ns1";
  if (name == "w2") ns = "ns2";
  if (name == "w3") ns = "ns3";
  return Unowned(KeyFor(
      WorkloadBuilder(name).Namespace(ns).Created(kNow).Uid(name).Build()));
}

bool Eligible(const std::string& cluster_queue,
              const NamespacedName& workload) {
  const std::string& ns = workload.first;
  bool selected = ns == "ns1" || ns == "ns2";
  bool backoff_expired = workload.second != "w4-requeue-state";
  return selected && backoff_expired;
}

class ClusterQueueImplTest : public ::testing::TestWithParam<ImplCase> {};

TEST_P(ClusterQueueImplTest, Operations) {
  const ImplCase& tc = GetParam();
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  for (const std::string& w : tc.workloads_to_add) m.Push("cq", ImplKey(w));
  for (const std::string& w : tc.inadmissible_workloads_to_requeue) {
    m.RequeueIfNotPresent("cq", ImplKey(w), Reason::kGeneric);
  }
  for (const std::string& w : tc.workloads_to_update) m.Push("cq", ImplKey(w));
  for (const std::string& w : tc.workloads_to_delete) {
    m.Remove(ImplKey(w).workload);
  }
  if (tc.queue_inadmissible_workloads) {
    EXPECT_EQ(m.QueueInadmissible({"cq"}, Eligible),
              tc.want_inadmissible_workloads_requeued);
  }
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")),
              UnorderedElementsAreArray(tc.want_active_workloads));
  EXPECT_EQ(m.PendingCount("cq"), tc.want_pending);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, ClusterQueueImplTest,
    ::testing::ValuesIn(std::vector<ImplCase>{
        {
            .name = "re_queue_inadmissible_workload_workloads_with_"
                    "requeuestate_can_t_re_queue",
            .workloads_to_add = {"w1"},
            .inadmissible_workloads_to_requeue = {"w2", "w4-requeue-state"},
            .want_active_workloads = {"w1"},
            .want_pending = 3,
        },
        {
            .name = "re_queue_inadmissible_workload_and_flush",
            .workloads_to_add = {"w1"},
            .inadmissible_workloads_to_requeue = {"w2", "w4-requeue-state"},
            .queue_inadmissible_workloads = true,
            .want_active_workloads = {"w1", "w2"},
            .want_pending = 3,
            .want_inadmissible_workloads_requeued = 1,
        },
        {
            .name = "re_queue_multiple_inadmissible_workloads_and_count",
            .inadmissible_workloads_to_requeue = {"w1", "w2"},
            .queue_inadmissible_workloads = true,
            .want_active_workloads = {"w1", "w2"},
            .want_pending = 2,
            .want_inadmissible_workloads_requeued = 2,
        },
        {
            // w2 matches the selector and moves; w3 does not and stays.
            .name = "count_only_workloads_that_actually_moved",
            .workloads_to_add = {"w1"},
            .inadmissible_workloads_to_requeue = {"w2", "w3"},
            .queue_inadmissible_workloads = true,
            .want_active_workloads = {"w1", "w2"},
            .want_pending = 3,
            .want_inadmissible_workloads_requeued = 1,
        },
        {
            // w2 is already in the heap, so the requeue does not park it;
            // the flush finds nothing to move.
            .name = "workload_already_on_heap_is_not_made_inadmissible",
            .workloads_to_add = {"w2"},
            .inadmissible_workloads_to_requeue = {"w2"},
            .queue_inadmissible_workloads = true,
            .want_active_workloads = {"w2"},
            .want_pending = 1,
            .want_inadmissible_workloads_requeued = 0,
        },
        {
            .name = "avoid_re_queueing_inadmissible_workloads_not_matching_"
                    "namespace_selector",
            .workloads_to_add = {"w1"},
            .inadmissible_workloads_to_requeue = {"w3"},
            .queue_inadmissible_workloads = true,
            .want_active_workloads = {"w1"},
            .want_pending = 2,
        },
        {
            // The update changes the workload's spec: it leaves the
            // inadmissible set.
            .name = "update_inadmissible_workload",
            .workloads_to_add = {"w1"},
            .inadmissible_workloads_to_requeue = {"w2"},
            .workloads_to_update = {"w2"},
            .want_active_workloads = {"w1", "w2"},
            .want_pending = 2,
        },
        {
            .name = "delete_inadmissible_workload",
            .workloads_to_add = {"w1"},
            .inadmissible_workloads_to_requeue = {"w2"},
            .workloads_to_delete = {"w2"},
            .queue_inadmissible_workloads = true,
            .want_active_workloads = {"w1"},
            .want_pending = 1,
        },
        {
            .name = "requeue_inadmissible_workload_twice",
            .inadmissible_workloads_to_requeue = {"w2", "w2"},
            .want_pending = 1,
        },
        {
            // A change of reclaimable pods may make it admissible.
            .name = "update_reclaimable_pods_in_inadmissible",
            .inadmissible_workloads_to_requeue = {"w"},
            .workloads_to_update = {"w"},
            .want_active_workloads = {"w"},
            .want_pending = 1,
        },
    }),
    [](const auto& info) { return info.param.name; });

// If QueueInadmissible runs while the head is being scheduled, the head
// goes back to the heap even though it was not admitted: quota may have
// been freed after the scheduler looked.
TEST(ClusterQueueTest, QueueInadmissibleWorkloadsDuringScheduling) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  QueueKey wl = Key("workload-1");
  m.Push("cq", wl);
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAre("workload-1"));

  // Requeue after QueueInadmissible ran during the attempt.
  ASSERT_EQ(Pop(m, "cq"), "workload-1");
  EXPECT_EQ(m.QueueInadmissible({"cq"}), 0);
  EXPECT_FALSE(m.Requeue("cq", wl, Reason::kGeneric));
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAre("workload-1"));

  // Scheduling again without QueueInadmissible: parked.
  ASSERT_EQ(Pop(m, "cq"), "workload-1");
  EXPECT_TRUE(m.Requeue("cq", wl, Reason::kGeneric));
  EXPECT_THAT(m.ActiveWorkloads("cq"), IsEmpty());
  EXPECT_THAT(Names(m.InadmissibleWorkloads("cq")), ElementsAre("workload-1"));
}

// ---------------------------------------------------------------------------
// RequeueIfNotPresent by strategy and reason.

struct RequeueCase {
  std::string name;
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFIFO;
  Reason reason = Reason::kGeneric;
  bool want_inadmissible = false;
  friend void PrintTo(const RequeueCase& c, std::ostream* os) { *os << c.name; }
};

class RequeueIfNotPresentTest : public ::testing::TestWithParam<RequeueCase> {};

TEST_P(RequeueIfNotPresentTest, PlacementAndNoDuplicate) {
  const RequeueCase& tc = GetParam();
  Manager m;
  m.UpsertClusterQueue("cq", tc.strategy);
  QueueKey wl = Key("workload-1");
  EXPECT_TRUE(m.RequeueIfNotPresent("cq", wl, tc.reason))
      << "failed to requeue nonexistent workload";
  EXPECT_EQ(m.IsInadmissible(wl.workload), tc.want_inadmissible);
  EXPECT_EQ(m.PendingCount("cq"), 1);
  EXPECT_FALSE(m.RequeueIfNotPresent("cq", wl, tc.reason))
      << "re-queued a workload that was already present";
  EXPECT_EQ(m.PendingCount("cq"), 1);
}

INSTANTIATE_TEST_SUITE_P(
    BestEffortFIFO, RequeueIfNotPresentTest,
    ::testing::ValuesIn(std::vector<RequeueCase>{
        {.name = "failure_after_nomination",
         .reason = Reason::kFailedAfterNomination,
         .want_inadmissible = false},
        {.name = "pending_preemption",
         .reason = Reason::kPendingPreemption,
         .want_inadmissible = false},
        {.name = "preemption_failed",
         .reason = Reason::kPreemptionFailed,
         .want_inadmissible = false},
        {.name = "namespace_doesn_t_match",
         .reason = Reason::kNamespaceMismatch,
         .want_inadmissible = true},
        {.name = "didn_t_fit_and_no_pending_flavors",
         .reason = Reason::kGeneric,
         .want_inadmissible = true},
        {.name = "nofit", .reason = Reason::kNoFit, .want_inadmissible = true},
        {.name = "preempt_no_candidates",
         .reason = Reason::kPreemptionNoCandidates,
         .want_inadmissible = true},
    }),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(StrictFIFO, RequeueIfNotPresentTest,
                         ::testing::ValuesIn(std::vector<RequeueCase>{
                             {.name = "failedafternomination",
                              .strategy = QueueingStrategy::kStrictFIFO,
                              .reason = Reason::kFailedAfterNomination,
                              .want_inadmissible = false},
                             {.name = "namespacemismatch",
                              .strategy = QueueingStrategy::kStrictFIFO,
                              .reason = Reason::kNamespaceMismatch,
                              .want_inadmissible = true},
                             {.name = "generic",
                              .strategy = QueueingStrategy::kStrictFIFO,
                              .reason = Reason::kGeneric,
                              .want_inadmissible = false},
                         }),
                         [](const auto& info) { return info.param.name; });

// kq: an immediate requeue of a parked workload moves it back to the heap
// (Kueue's requeueIfNotPresent moves the stored entry), and a non-immediate
// one of a workload in the heap leaves it there.
TEST(ClusterQueueTest, RequeueOfPresentWorkload) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  QueueKey wl = Key("workload-1");
  ASSERT_TRUE(m.RequeueIfNotPresent("cq", wl, Reason::kNoFit));
  ASSERT_TRUE(m.IsInadmissible(wl.workload));
  EXPECT_TRUE(m.RequeueIfNotPresent("cq", wl, Reason::kFailedAfterNomination));
  EXPECT_FALSE(m.IsInadmissible(wl.workload));
  EXPECT_FALSE(m.RequeueIfNotPresent("cq", wl, Reason::kNoFit));
  EXPECT_FALSE(m.IsInadmissible(wl.workload));
  EXPECT_EQ(m.PendingCount("cq"), 1);
}

TEST(ClusterQueueTest, FifoClusterQueue) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kStrictFIFO);
  m.Push("cq", Key("now", kNow));
  m.Push("cq", Key("before", kNow - absl::Seconds(1)));
  m.Push("cq", Key("after", kNow + absl::Seconds(1)));
  EXPECT_EQ(Pop(m, "cq"), "before");
  // "after" updated to be the oldest.
  m.Push("cq", Key("after", kNow - absl::Minutes(1)));
  EXPECT_EQ(Pop(m, "cq"), "after");
  m.Remove({"default", "now"});
  EXPECT_EQ(Pop(m, "cq"), "");
}

// ---------------------------------------------------------------------------
// TestStrictFIFO: which of two workloads is popped first.

struct StrictFifoCase {
  std::string name;
  Workload w1;
  Workload w2;
  std::string expected;
  friend void PrintTo(const StrictFifoCase& c, std::ostream* os) {
    *os << c.name;
  }
};

class StrictFifoTest : public ::testing::TestWithParam<StrictFifoCase> {};

TEST_P(StrictFifoTest, PopsFirst) {
  const StrictFifoCase& tc = GetParam();
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kStrictFIFO);
  m.Push("cq", KeyFor(tc.w1));
  m.Push("cq", KeyFor(tc.w2));
  EXPECT_EQ(Pop(m, "cq"), tc.expected);
}

const absl::Time kT1 = kNow;
const absl::Time kT2 = kT1 + absl::Seconds(1);
const absl::Time kT3 = kT2 + absl::Seconds(1);
constexpr int32_t kLowPriority = 0;
constexpr int32_t kHighPriority = 1000;

INSTANTIATE_TEST_SUITE_P(
    Kueue, StrictFifoTest,
    ::testing::ValuesIn(std::vector<StrictFifoCase>{
        {
            .name = "w1_priority_is_higher_than_w2_priority",
            .w1 = WorkloadBuilder("w1")
                      .Created(kT1)
                      .PriorityClass("highPriority")
                      .Priority(kHighPriority)
                      .Build(),
            .w2 = WorkloadBuilder("w2")
                      .Created(kT2)
                      .PriorityClass("lowPriority")
                      .Priority(kLowPriority)
                      .Build(),
            .expected = "w1",
        },
        {
            .name = "w1_priority_equals_w2_priority_and_w1_create_time_is_"
                    "earlier_than_w2_create_time",
            .w1 = WorkloadBuilder("w1").Created(kT1).Build(),
            .w2 = WorkloadBuilder("w2").Created(kT2).Build(),
            .expected = "w1",
        },
        {
            // Evicted for PodsReadyTimeout: queued at the eviction time.
            .name = "w1_priority_equals_w2_priority_and_w1_create_time_is_"
                    "earlier_than_w2_create_time_but_w1_was_evicted",
            .w1 = WorkloadBuilder("w1")
                      .Created(kT1)
                      .Condition(kConditionEvicted, "True", "PodsReadyTimeout",
                                 "by test", kT3)
                      .Build(),
            .w2 = WorkloadBuilder("w2").Created(kT2).Build(),
            .expected = "w2",
        },
        {
            .name = "p1_priority_is_lower_than_p2_priority_and_w1_create_time_"
                    "is_earlier_than_w2_create_time",
            .w1 = WorkloadBuilder("w1")
                      .Created(kT1)
                      .PriorityClass("lowPriority")
                      .Priority(kLowPriority)
                      .Build(),
            .w2 = WorkloadBuilder("w2")
                      .Created(kT2)
                      .PriorityClass("highPriority")
                      .Priority(kHighPriority)
                      .Build(),
            .expected = "w2",
        },
        {
            // kq (Kueue's GetQueueOrderTimestamp): an eviction by an
            // AdmissionCheck also requeues at the eviction time.
            .name = "w1_evicted_by_admission_check",
            .w1 = WorkloadBuilder("w1")
                      .Created(kT1)
                      .Condition(kConditionEvicted, "True", "AdmissionCheck",
                                 "by test", kT3)
                      .Build(),
            .w2 = WorkloadBuilder("w2").Created(kT2).Build(),
            .expected = "w2",
        },
        {
            // kq: other eviction reasons keep the creation time.
            .name = "w1_evicted_by_preemption_keeps_creation_time",
            .w1 = WorkloadBuilder("w1")
                      .Created(kT1)
                      .Condition(kConditionEvicted, "True", "Preempted",
                                 "by test", kT3)
                      .Build(),
            .w2 = WorkloadBuilder("w2").Created(kT2).Build(),
            .expected = "w1",
        },
        {
            // kq: an Evicted condition that is no longer True does not count.
            .name = "w1_eviction_over_keeps_creation_time",
            .w1 = WorkloadBuilder("w1")
                      .Created(kT1)
                      .Condition(kConditionEvicted, "False", "PodsReadyTimeout",
                                 "by test", kT3)
                      .Build(),
            .w2 = WorkloadBuilder("w2").Created(kT2).Build(),
            .expected = "w1",
        },
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Scheduling equivalence (Kueue's SchedulingEquivalenceHashing, beta and on
// by default since 0.18): pkg/cache/queue/cluster_queue_test.go's
// TestRecordInadmissibleHash, TestPushOrUpdateRespectsInadmissibleHashes,
// TestQueueInadmissibleWorkloadsClearsHashes and
// TestRequeueHashTriggerByReason. kq's hash is made from the workload
// (queue::SchedulingHash), so Kueue's named hashes become request shapes. The
// workloads stay in place while their keys are queued, as in kqd.

class EquivalenceTest : public ::testing::Test {
 protected:
  // A workload of `shape` ("gpu" or "cpu": what it requests), created
  // `order` seconds after kNow.
  QueueKey Add(const std::string& name, const std::string& shape, int order) {
    workloads_.push_back(
        WorkloadBuilder(name)
            .Created(kNow + absl::Seconds(order))
            .Uid(name)
            .Request(shape == "gpu" ? "nvidia.com/gpu" : "cpu", "1")
            .Build());
    return KeyFor(workloads_.back());
  }
  std::deque<Workload> workloads_;
};

TEST_F(EquivalenceTest, ANoFitHeadParksItsEquivalentsWithIt) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Add("gpu-1", "gpu", 0));
  m.Push("cq", Add("cpu-1", "cpu", 1));
  m.Push("cq", Add("gpu-2", "gpu", 2));
  m.Push("cq", Add("cpu-2", "cpu", 3));
  m.Push("cq", Add("gpu-3", "gpu", 4));
  ASSERT_EQ(Pop(m, "cq"), "gpu-1");
  EXPECT_TRUE(m.Requeue("cq", KeyFor(workloads_[0]), Reason::kNoFit));
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAre("cpu-1", "cpu-2"));
  EXPECT_THAT(Names(m.InadmissibleWorkloads("cq")),
              UnorderedElementsAreArray({"gpu-1", "gpu-2", "gpu-3"}));
}

TEST_F(EquivalenceTest, OnlyNoFitAndPreemptionNoCandidatesParkEquivalents) {
  const std::vector<std::pair<Reason, bool>> cases = {
      {Reason::kNoFit, true},
      {Reason::kPreemptionNoCandidates, true},
      {Reason::kNamespaceMismatch, false},
      {Reason::kGeneric, false},
  };
  for (const auto& [reason, parks] : cases) {
    SCOPED_TRACE(static_cast<int>(reason));
    workloads_.clear();
    Manager m;
    m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
    m.Push("cq", Add("w-1", "cpu", 0));
    m.Push("cq", Add("w-2", "cpu", 1));
    ASSERT_EQ(Pop(m, "cq"), "w-1");
    m.Requeue("cq", KeyFor(workloads_[0]), reason);
    EXPECT_EQ(m.PendingActive("cq"), parks ? 0 : 1);
  }
}

TEST_F(EquivalenceTest, StrictFifoNeverParksEquivalents) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kStrictFIFO);
  m.Push("cq", Add("w-1", "cpu", 0));
  m.Push("cq", Add("w-2", "cpu", 1));
  ASSERT_EQ(Pop(m, "cq"), "w-1");
  m.Requeue("cq", KeyFor(workloads_[0]), Reason::kNoFit);
  // StrictFIFO puts the head back (it blocks the queue); w-2 stays behind.
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAre("w-1", "w-2"));
}

TEST_F(EquivalenceTest, ArrivalsEquivalentToAParkedHeadAreParked) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Add("w-1", "cpu", 0));
  ASSERT_EQ(Pop(m, "cq"), "w-1");
  m.Requeue("cq", KeyFor(workloads_[0]), Reason::kNoFit);
  m.Push("cq", Add("blocked", "cpu", 1));
  m.Push("cq", Add("allowed", "gpu", 2));
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAre("allowed"));
  EXPECT_THAT(Names(m.InadmissibleWorkloads("cq")),
              UnorderedElementsAreArray({"w-1", "blocked"}));
}

TEST_F(EquivalenceTest, QueueInadmissibleForgetsTheParkedShapes) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  m.Push("cq", Add("w-1", "cpu", 0));
  m.Push("cq", Add("w-2", "cpu", 1));
  ASSERT_EQ(Pop(m, "cq"), "w-1");
  m.Requeue("cq", KeyFor(workloads_[0]), Reason::kNoFit);
  ASSERT_EQ(m.PendingInadmissible("cq"), 2);
  EXPECT_EQ(m.QueueInadmissible({"cq"}), 2);
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAre("w-1", "w-2"));
  // A new equivalent arrival is tried again.
  m.Push("cq", Add("w-3", "cpu", 2));
  EXPECT_EQ(m.PendingActive("cq"), 3);
}

TEST_F(EquivalenceTest, AnUnknownShapeParksNothing) {
  Manager m;
  m.UpsertClusterQueue("cq", QueueingStrategy::kBestEffortFIFO);
  // Templates stored before kqd kept their shapes: the hashes are unknown.
  for (const char* name : {"w-1", "w-2"}) {
    workloads_.push_back(WorkloadBuilder(name)
                             .Created(kNow)
                             .Uid(name)
                             .Request("cpu", "1")
                             .Build());
    workloads_.back().pod_sets[0].template_on_disk = true;
    m.Push("cq", KeyFor(workloads_.back()));
  }
  ASSERT_EQ(Pop(m, "cq"), "w-1");
  m.Requeue("cq", KeyFor(workloads_[0]), Reason::kNoFit);
  EXPECT_THAT(Names(m.ActiveWorkloads("cq")), ElementsAre("w-2"));
}

}  // namespace
}  // namespace kq::queue
