// The sizes kqd's memory per pending workload rests on (bench/RESULTS.md,
// "RSS per pending workload"): each holds one Workload and one PodSet per
// pod set, and a type that grows past its allocator size class costs every
// pending workload the next class. (Uid, FlatMap, CompactVector and
// InternedString check their own sizes.)

#include "gtest/gtest.h"

#include "server/core/objects.h"

namespace kq {
namespace {

// In a WorkloadSet's node (32 bytes more), a Workload of 224 bytes takes a
// 256-byte block.
TEST(SizesTest, AWorkloadFitsTheAllocators256ByteClassInItsSetNode) {
  EXPECT_LE(sizeof(Workload), 224u);
}

// A workload's one pod set, with its CompactVector's 8-byte header, takes
// an 80-byte block.
TEST(SizesTest, OnePodSetsBlockFitsTheAllocators80ByteClass) {
  EXPECT_LE(8 + sizeof(PodSet), 80u);
}

}  // namespace
}  // namespace kq
