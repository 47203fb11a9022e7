// HoldingQuota: the per-ClusterQueue index of workloads holding quota that
// the preemption searches walk instead of every holder.

#include "server/preemption/holders.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/testing/builders.h"

namespace kq::preemption {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

Workload Holding(const std::string& name, const std::string& cq) {
  return WorkloadBuilder(name)
      .Request("cpu", "1")
      .ReserveQuota(AdmissionBuilder(cq).Assign("cpu", "default", "1").Build(),
                    kNow)
      .Build();
}

TEST(HoldingQuotaTest, IndexesByClusterQueueInInputOrder) {
  const Workload a1 = Holding("a1", "a");
  const Workload b1 = Holding("b1", "b");
  const Workload a2 = Holding("a2", "a");
  const Workload pending = WorkloadBuilder("p").Request("cpu", "1").Build();
  const HoldingQuota holders({&a1, &b1, &a2, &pending, nullptr});
  EXPECT_THAT(holders.InClusterQueue("a"), ElementsAre(&a1, &a2));
  EXPECT_THAT(holders.InClusterQueue("b"), ElementsAre(&b1));
  EXPECT_THAT(holders.InClusterQueue("c"), IsEmpty());
  EXPECT_EQ(holders.size(), 3u);
}

// What the preemption searches keep about a ClusterQueue's holders
// (WithinNominalMemo's users) is read again when its version moves.
TEST(HoldingQuotaTest, VersionOfMovesWithEveryChangeOfThatClusterQueue) {
  const Workload a1 = Holding("a1", "a");
  const Workload a2 = Holding("a2", "a");
  const Workload b1 = Holding("b1", "b");
  HoldingQuota holders;
  EXPECT_EQ(holders.VersionOf("a"), 0u);
  holders.Add(&a1);
  const uint64_t one = holders.VersionOf("a");
  EXPECT_NE(one, 0u);
  holders.Add(&b1);  // another ClusterQueue
  EXPECT_EQ(holders.VersionOf("a"), one);
  holders.Remove(&a2, "a");  // not there: nothing changes
  EXPECT_EQ(holders.VersionOf("a"), one);
  holders.Remove(&a1, "a");
  const uint64_t empty_again = holders.VersionOf("a");
  EXPECT_NE(empty_again, one);
  EXPECT_NE(empty_again, 0u);
  // Another index never hands out the same version.
  HoldingQuota other({&a1});
  EXPECT_NE(other.VersionOf("a"), one);
  EXPECT_NE(other.VersionOf("a"), empty_again);
}

TEST(HoldingQuotaTest, AddAndRemoveKeepTheOrderOfTheRest) {
  const Workload a1 = Holding("a1", "a");
  const Workload a2 = Holding("a2", "a");
  const Workload a3 = Holding("a3", "a");
  HoldingQuota holders({&a1, &a2});
  holders.Add(&a3);
  EXPECT_THAT(holders.InClusterQueue("a"), ElementsAre(&a1, &a2, &a3));
  holders.Remove(&a2, "a");
  EXPECT_THAT(holders.InClusterQueue("a"), ElementsAre(&a1, &a3));
  // Removing under another queue, or twice, changes nothing.
  holders.Remove(&a1, "b");
  holders.Remove(&a2, "a");
  EXPECT_THAT(holders.InClusterQueue("a"), ElementsAre(&a1, &a3));
  EXPECT_EQ(holders.size(), 2u);
}

}  // namespace
}  // namespace kq::preemption
