#include "shim/jobs/work_queue.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace kq::shim::jobs {

WorkQueue::WorkQueue(absl::Duration initial_backoff, absl::Duration max_backoff)
    : initial_backoff_(initial_backoff), max_backoff_(max_backoff) {}

void WorkQueue::AddLocked(const JobKey& key) {
  if (shut_down_) return;
  if (processing_.count(key) > 0) {
    dirty_.insert(key);
    return;
  }
  if (!queued_.insert(key).second) return;
  queue_.emplace(next_seq_++, key);
  cv_.Signal();
}

void WorkQueue::Add(const JobKey& key) {
  absl::MutexLock lock(&mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const JobKey& key, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return;
  if (delay <= absl::ZeroDuration()) {
    AddLocked(key);
    return;
  }
  const absl::Time at = absl::Now() + delay;
  auto [it, inserted] = delayed_.emplace(key, at);
  if (!inserted && at < it->second) it->second = at;
  // A waiting Get() sleeps until the earliest delayed time: wake it to
  // recompute.
  cv_.SignalAll();
}

void WorkQueue::AddRateLimited(const JobKey& key) {
  absl::Duration delay;
  {
    absl::MutexLock lock(&mu_);
    int& failures = failures_[key];
    delay = initial_backoff_;
    for (int i = 0; i < failures && delay < max_backoff_; ++i) delay *= 2;
    delay = std::min(delay, max_backoff_);
    ++failures;
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const JobKey& key) {
  absl::MutexLock lock(&mu_);
  failures_.erase(key);
}

int WorkQueue::Failures(const JobKey& key) const {
  absl::MutexLock lock(&mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::PromoteDue(absl::Time now) {
  for (auto it = delayed_.begin(); it != delayed_.end();) {
    if (it->second <= now) {
      AddLocked(it->first);
      it = delayed_.erase(it);
    } else {
      ++it;
    }
  }
}

std::optional<JobKey> WorkQueue::Get() {
  absl::MutexLock lock(&mu_);
  while (true) {
    if (shut_down_) return std::nullopt;
    PromoteDue(absl::Now());
    if (!queue_.empty()) break;
    absl::Time wake = absl::InfiniteFuture();
    for (const auto& [key, at] : delayed_) wake = std::min(wake, at);
    cv_.WaitWithDeadline(&mu_, wake);
  }
  auto first = queue_.begin();
  JobKey key = first->second;
  queue_.erase(first);
  queued_.erase(key);
  processing_.insert(key);
  return key;
}

void WorkQueue::Done(const JobKey& key) {
  absl::MutexLock lock(&mu_);
  processing_.erase(key);
  if (dirty_.erase(key) > 0) AddLocked(key);
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  cv_.SignalAll();
}

int64_t WorkQueue::Len() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size() + delayed_.size());
}

}  // namespace kq::shim::jobs
