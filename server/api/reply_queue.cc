#include "server/api/reply_queue.h"

#include <utility>

namespace kq::api {

ReplyQueue::ReplyQueue() : thread_([this] { Loop(); }) {}

ReplyQueue::~ReplyQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  ready_.notify_one();
  thread_.join();
}

void ReplyQueue::Post(std::function<void()> reply) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_empty = replies_.empty();
    replies_.push_back(std::move(reply));
  }
  // The engine posts a batch's replies together: one wake-up for them all.
  if (was_empty) ready_.notify_one();
}

void ReplyQueue::Loop() {
  std::vector<std::function<void()>> batch;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_.wait(lock, [this] { return stopping_ || !replies_.empty(); });
      if (replies_.empty()) return;  // stopping, and nothing left
      batch.swap(replies_);
    }
    for (std::function<void()>& reply : batch) reply();
    batch.clear();
  }
}

}  // namespace kq::api
