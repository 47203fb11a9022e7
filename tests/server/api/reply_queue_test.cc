#include "server/api/reply_queue.h"

#include <chrono>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kq::api {
namespace {

TEST(ReplyQueueTest, RunsRepliesInOrderOnItsOwnThread) {
  ReplyQueue queue;
  std::vector<int> order;
  std::thread::id ran_on;
  absl::Notification done;
  for (int i = 0; i < 100; ++i) {
    queue.Post([&order, &ran_on, i] {
      order.push_back(i);
      ran_on = std::this_thread::get_id();
    });
  }
  queue.Post([&done] { done.Notify(); });
  done.WaitForNotification();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(ReplyQueueTest, DestructionRunsWhatWasPosted) {
  int ran = 0;
  absl::Notification release;
  // Released well after the destructor began: the rest are still queued
  // when the queue is told to stop.
  std::thread releaser([&release] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release.Notify();
  });
  {
    ReplyQueue queue;
    queue.Post([&release] { release.WaitForNotification(); });
    for (int i = 0; i < 10; ++i) queue.Post([&ran] { ++ran; });
  }
  releaser.join();
  EXPECT_EQ(ran, 10);
}

}  // namespace
}  // namespace kq::api
