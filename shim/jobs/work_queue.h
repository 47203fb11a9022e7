#pragma once

// client-go's rate-limited work queue, for Job keys: a key added while
// queued is queued once; a key added while a worker processes it is queued
// again when that worker calls Done(), so one key is never reconciled by
// two workers at once and no change is lost; AddRateLimited() retries a
// failing key after a per-key exponential backoff that Forget() resets;
// AddAfter() queues a key once a delay passes.
//
// Thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "shim/jobs/job_workload.h"

namespace kq::shim::jobs {

class WorkQueue {
 public:
  // Backoff of AddRateLimited: initial * 2^(failures-1), at most `max`.
  WorkQueue(absl::Duration initial_backoff, absl::Duration max_backoff);

  void Add(const JobKey& key);
  // Adds `key` once `delay` has passed (at once when not positive). An
  // earlier pending time for the key wins.
  void AddAfter(const JobKey& key, absl::Duration delay);
  // Adds `key` after its backoff and counts one more failure for it.
  void AddRateLimited(const JobKey& key);
  // Clears the key's failure count.
  void Forget(const JobKey& key);
  int Failures(const JobKey& key) const;

  // Blocks until a key is ready or the queue is shut down (nullopt). The
  // caller must call Done(key) when finished with it.
  std::optional<JobKey> Get();
  void Done(const JobKey& key);

  // Wakes every Get() with nullopt; later adds are ignored.
  void ShutDown();
  // Keys queued or delayed, not counting those being processed.
  int64_t Len() const;

 private:
  // Moves delayed keys whose time came into the queue.
  void PromoteDue(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddLocked(const JobKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Duration initial_backoff_;
  const absl::Duration max_backoff_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  // Queued keys in order, and the same keys as a set.
  std::map<int64_t, JobKey> queue_ ABSL_GUARDED_BY(mu_);
  std::set<JobKey> queued_ ABSL_GUARDED_BY(mu_);
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<JobKey> processing_ ABSL_GUARDED_BY(mu_);
  // Added while processing: queued again at Done().
  std::set<JobKey> dirty_ ABSL_GUARDED_BY(mu_);
  std::map<JobKey, absl::Time> delayed_ ABSL_GUARDED_BY(mu_);
  std::map<JobKey, int> failures_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kq::shim::jobs
