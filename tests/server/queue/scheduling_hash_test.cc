#include "server/queue/scheduling_hash.h"

#include "gtest/gtest.h"

#include "tests/testing/builders.h"

namespace kq::queue {
namespace {

using ::kq::testing::WorkloadBuilder;

Workload Base() {
  return WorkloadBuilder("a").Priority(10).Request("cpu", "1").Build();
}

TEST(SchedulingHashTest, TheSameShapeHasTheSameHash) {
  Workload other = Base();
  other.meta.name = "b";
  other.meta.uid = "another-uid";
  other.meta.labels["team"] = "x";
  other.meta.creation_timestamp += absl::Hours(1);
  EXPECT_NE(SchedulingHash(Base()), 0u);
  EXPECT_EQ(SchedulingHash(other), SchedulingHash(Base()));
}

TEST(SchedulingHashTest, EveryPartOfTheShapeCounts) {
  const uint64_t base = SchedulingHash(Base());
  std::vector<Workload> changed(9, Base());
  changed[0].priority = 11;
  changed[1].pod_sets[0].count = 2;
  changed[2].pod_sets[0].min_count = 1;
  changed[3].pod_sets[0].requests["memory"] = Quantity::FromMilli(1000);
  changed[4].pod_sets[0].node_selector["pool"] = "x";
  changed[5].pod_sets[0].tolerations.push_back({.key = "k", .op = "Exists"});
  changed[6].pod_sets[0].spec_shape = 42;
  changed[7].pod_sets[0].name = "workers";
  changed[8].meta.annotations[kPriorityBoostAnnotation] = "5";
  for (size_t i = 0; i < changed.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_NE(SchedulingHash(changed[i]), base);
  }
}

TEST(SchedulingHashTest, ReclaimablePodsCountAsFewerPods) {
  Workload two = Base();
  two.pod_sets[0].count = 2;
  Workload three_one_reclaimable = Base();
  three_one_reclaimable.pod_sets[0].count = 3;
  three_one_reclaimable.reclaimable_pods["main"] = 1;
  EXPECT_EQ(SchedulingHash(three_one_reclaimable), SchedulingHash(two));
}

TEST(SchedulingHashTest, UnknownWithoutTheTemplatesShape) {
  Workload stored_before = Base();
  stored_before.pod_sets[0].template_on_disk = true;
  EXPECT_EQ(SchedulingHash(stored_before), 0u);
  stored_before.pod_sets[0].spec_shape = 7;
  EXPECT_NE(SchedulingHash(stored_before), 0u);
}

}  // namespace
}  // namespace kq::queue
