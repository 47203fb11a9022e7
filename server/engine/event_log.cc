#include "server/engine/event_log.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kq::engine {

void EventLog::Reset(int64_t revision, std::vector<store::Event> events) {
  absl::MutexLock lock(&mu_);
  events_.clear();
  for (store::Event& e : events) {
    events_.push_back(std::make_shared<const store::Event>(std::move(e)));
  }
  revision_ = revision;
  floor_ = events_.empty() ? revision : events_.front()->revision - 1;
  while (events_.size() > capacity_) {
    floor_ = events_.front()->revision;
    events_.pop_front();
  }
}

void EventLog::Append(int64_t revision, std::vector<store::Event> events) {
  // The events are allocated, and the dropped ones freed, outside the lock
  // that every watcher's read takes.
  std::vector<SharedEvent> appended;
  appended.reserve(events.size());
  for (store::Event& e : events) {
    appended.push_back(std::make_shared<const store::Event>(std::move(e)));
  }
  std::vector<SharedEvent> dropped_events;  // freed after `lock` is released
  absl::MutexLock lock(&mu_);
  for (SharedEvent& e : appended) events_.push_back(std::move(e));
  revision_ = revision;
  // Drop whole revisions only, so a reader never sees half a batch.
  while (events_.size() > capacity_) {
    int64_t dropped = events_.front()->revision;
    while (!events_.empty() && events_.front()->revision == dropped) {
      dropped_events.push_back(std::move(events_.front()));
      events_.pop_front();
    }
    floor_ = dropped;
  }
  changed_.SignalAll();
}

absl::StatusOr<std::vector<SharedEvent>> EventLog::Read(
    int64_t after_revision, size_t limit, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  absl::Time deadline = absl::Now() + timeout;
  while (!closed_ && revision_ <= after_revision) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) break;
  }
  if (closed_) return absl::CancelledError("kqd is shutting down");
  if (after_revision < floor_) {
    return absl::OutOfRangeError(absl::StrCat(
        "revision ", after_revision,
        " is older than the retained event log (oldest retained: ", floor_ + 1,
        "); list again and watch from the list's revision"));
  }
  std::vector<SharedEvent> out;
  // A watcher keeping up reads from near the end of a long log.
  auto it = std::upper_bound(events_.begin(), events_.end(), after_revision,
                             [](int64_t revision, const SharedEvent& e) {
                               return revision < e->revision;
                             });
  for (; it != events_.end() && out.size() < limit; ++it) out.push_back(*it);
  // Never end a read in the middle of a revision.
  while (it != events_.end() && !out.empty() &&
         (*it)->revision == out.back()->revision) {
    out.push_back(*it++);
  }
  return out;
}

int64_t EventLog::revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

void EventLog::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  changed_.SignalAll();
}

}  // namespace kq::engine
