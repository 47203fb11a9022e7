// WorkQueue: client-go's work queue semantics the controller relies on.

#include "shim/jobs/work_queue.h"

#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace kq::shim::jobs {
namespace {

const JobKey kA{"ns", "a"};
const JobKey kB{"ns", "b"};

TEST(WorkQueueTest, AddDeduplicatesAndKeepsOrder) {
  WorkQueue queue(absl::Milliseconds(10), absl::Seconds(1));
  queue.Add(kA);
  queue.Add(kB);
  queue.Add(kA);
  EXPECT_EQ(queue.Len(), 2);
  EXPECT_EQ(queue.Get(), kA);
  EXPECT_EQ(queue.Get(), kB);
  EXPECT_EQ(queue.Len(), 0);
}

TEST(WorkQueueTest, KeyAddedWhileProcessingComesBackAfterDone) {
  WorkQueue queue(absl::Milliseconds(10), absl::Seconds(1));
  queue.Add(kA);
  ASSERT_EQ(queue.Get(), kA);
  queue.Add(kA);
  // Not handed to a second worker while the first holds it.
  EXPECT_EQ(queue.Len(), 0);
  queue.Done(kA);
  EXPECT_EQ(queue.Len(), 1);
  EXPECT_EQ(queue.Get(), kA);
  queue.Done(kA);
  EXPECT_EQ(queue.Len(), 0);
}

TEST(WorkQueueTest, RateLimitedRetriesBackOffUntilForgotten) {
  WorkQueue queue(absl::Milliseconds(40), absl::Milliseconds(100));
  const absl::Time start = absl::Now();
  queue.AddRateLimited(kA);
  EXPECT_EQ(queue.Get(), kA);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(40));
  queue.Done(kA);
  EXPECT_EQ(queue.Failures(kA), 1);
  const absl::Time second = absl::Now();
  queue.AddRateLimited(kA);
  EXPECT_EQ(queue.Get(), kA);
  EXPECT_GE(absl::Now() - second, absl::Milliseconds(80));
  queue.Done(kA);
  queue.Forget(kA);
  EXPECT_EQ(queue.Failures(kA), 0);
}

TEST(WorkQueueTest, AddAfterWaitsAndEarlierTimeWins) {
  WorkQueue queue(absl::Milliseconds(10), absl::Seconds(1));
  const absl::Time start = absl::Now();
  queue.AddAfter(kA, absl::Seconds(10));
  queue.AddAfter(kA, absl::Milliseconds(50));
  EXPECT_EQ(queue.Get(), kA);
  const absl::Duration waited = absl::Now() - start;
  EXPECT_GE(waited, absl::Milliseconds(50));
  EXPECT_LT(waited, absl::Seconds(5));
}

TEST(WorkQueueTest, ShutDownWakesWaiters) {
  WorkQueue queue(absl::Milliseconds(10), absl::Seconds(1));
  std::optional<JobKey> got = kA;
  std::thread waiter([&] { got = queue.Get(); });
  absl::SleepFor(absl::Milliseconds(50));
  queue.ShutDown();
  waiter.join();
  EXPECT_FALSE(got.has_value());
  queue.Add(kB);
  EXPECT_FALSE(queue.Get().has_value());
}

}  // namespace
}  // namespace kq::shim::jobs
