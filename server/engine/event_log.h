#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "server/store/store.h"

namespace kq::engine {

// A committed event, shared by the log and every reader: a watcher's read
// copies pointers, not workloads.
using SharedEvent = std::shared_ptr<const store::Event>;

// The recent committed events, for Watch. The engine appends after each
// commit; any number of watchers read concurrently. Bounded: the oldest
// events are dropped past `capacity`, and a reader that asks for them gets
// OutOfRange so it re-lists (Kubernetes' "410 Gone"). Thread-safe.
class EventLog {
 public:
  explicit EventLog(size_t capacity) : capacity_(capacity) {}

  // Sets the revision the log starts after (the store's revision at start)
  // and the events already retained. Call before any reader.
  void Reset(int64_t revision, std::vector<store::Event> events);

  // Appends the events of one committed batch and wakes readers.
  void Append(int64_t revision, std::vector<store::Event> events);

  // Waits until events after `after_revision` exist or `timeout` passes,
  // then returns up to `limit` of them (possibly none). OutOfRange when
  // events after `after_revision` were already dropped; Cancelled once
  // Close() was called.
  absl::StatusOr<std::vector<SharedEvent>> Read(int64_t after_revision,
                                                size_t limit,
                                                absl::Duration timeout);

  // The revision of the last appended batch.
  int64_t revision() const;

  // Wakes every reader; later reads return Cancelled.
  void Close();

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  // In revision order.
  std::deque<SharedEvent> events_ ABSL_GUARDED_BY(mu_);
  // Revision the retained events start after: events with revision >
  // floor_ are all retained.
  int64_t floor_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kq::engine
