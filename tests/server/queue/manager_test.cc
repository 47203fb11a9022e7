#include "server/queue/manager.h"

#include "gtest/gtest.h"

#include "tests/testing/builders.h"

namespace kq::queue {
namespace {

using ::kq::testing::WorkloadBuilder;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

QueueKey Key(const std::string& name, int32_t priority, int seconds,
             const std::string& uid = "") {
  return KeyFor(WorkloadBuilder(name)
                    .Priority(priority)
                    .Created(kT0 + absl::Seconds(seconds))
                    .Uid(uid.empty() ? name : uid)
                    .Build());
}

std::vector<std::string> PopAll(Manager& m) {
  std::vector<std::string> order;
  while (true) {
    auto heads = m.PopHeads([](const std::string&) { return true; });
    if (heads.empty()) break;
    for (const auto& [cq, wl] : heads) order.push_back(wl.second);
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
  EXPECT_EQ(heads[0].second.second, "a1");
  EXPECT_EQ(heads[1].second.second, "b1");
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
  EXPECT_EQ(heads[0].second.second, "big");
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
  EXPECT_EQ(heads[0].second.second, "small");
  EXPECT_EQ(m.PendingCount("cq"), 1);  // big, parked
  EXPECT_EQ(m.PositionOf({"default", "big"}), 0);
  // Quota freed: the parked workload comes back.
  EXPECT_TRUE(m.QueueInadmissible({"cq"}));
  heads = m.PopHeads([](const std::string&) { return true; });
  EXPECT_EQ(heads[0].second.second, "big");
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

}  // namespace
}  // namespace kq::queue
