// The sizes kqd's memory per pending workload rests on (bench/RESULTS.md,
// "RSS per pending workload"): each holds one Workload and one PodSet per
// pod set, and a type that grows past its allocator size class costs every
// pending workload the next class. (Uid and FlatMap check their own sizes.)

#include "gtest/gtest.h"

#include "server/core/objects.h"

namespace kq {
namespace {

// In a WorkloadSet's node (32 bytes more), a Workload of 288 bytes takes a
// 320-byte block.
TEST(SizesTest, AWorkloadFitsTheAllocators320ByteClassInItsSetNode) {
  EXPECT_LE(sizeof(Workload), 288u);
}

TEST(SizesTest, APodSetFitsTheAllocators112ByteClass) {
  EXPECT_LE(sizeof(PodSet), 112u);
}

}  // namespace
}  // namespace kq
