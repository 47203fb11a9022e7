#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kq::api {

// One thread that finishes the calls of kqd's callback handlers. The
// engine hands each answer over after its commit; turning it into protos
// and starting gRPC's send happen here, so that the engine's thread goes on
// with its next batch meanwhile (on 2 cores the engine's thread is what
// limits unary submissions and finishes).
//
// Thread-safe. Replies run in the order they were posted.
class ReplyQueue {
 public:
  ReplyQueue();
  // Runs what was posted, then joins the thread.
  ~ReplyQueue();
  ReplyQueue(const ReplyQueue&) = delete;
  ReplyQueue& operator=(const ReplyQueue&) = delete;

  void Post(std::function<void()> reply);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable ready_;
  std::vector<std::function<void()>> replies_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kq::api
