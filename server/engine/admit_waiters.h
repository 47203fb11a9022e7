#pragma once

// The waits for admission (QueueService.Admit) the engine answers after the
// commit that decided them: by workload, with their deadlines, so that a
// batch looks only at the waiters whose workload changed, that are new, or
// whose time is up. Thousands of waiting runners cost an entry each.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "server/admission/change_log.h"
#include "server/admission/state.h"
#include "server/core/objects.h"

namespace kq::engine {

// What a wait for admission ended with.
struct AdmitOutcome {
  enum class Kind { kAdmitted, kPending, kFinished, kDeactivated };
  Kind kind = Kind::kPending;
  admission::WorkloadView view;
  // The condition that explains it (QuotaReserved=False for kPending).
  std::string reason;
  std::string message;
};

// One wait for admission.
struct AdmitWait {
  NamespacedName key;
  // Submitted first when set (its metadata names the workload; a workload
  // of that name that exists already is waited for instead).
  std::optional<Workload> submit;
  // Answer kPending at this time.
  absl::Time deadline = absl::InfiniteFuture();
  // Attach this runner once admitted, in the same commit.
  std::string runner_id;
  absl::Duration lease = absl::Seconds(30);
};

using AdmitDone = std::function<void(absl::StatusOr<AdmitOutcome>)>;

// Thread-compatible (the engine thread owns it), except NewId().
class AdmitWaiters {
 public:
  struct Waiter {
    int64_t id = 0;
    // wait.key names the workload waited for.
    AdmitWait wait;
    AdmitDone done;
  };
  // A waiter to decide now; `expired` when its deadline passed.
  struct Due {
    Waiter waiter;
    bool expired = false;
  };

  // An id for a waiter to Add() later. Thread-safe.
  int64_t NewId() { return next_id_.fetch_add(1); }
  // A new waiter, looked at by the next TakeDue().
  void Add(Waiter waiter);
  // Puts back a waiter that TakeDue() returned and that still waits.
  void Restore(Waiter waiter);
  // Forgets a waiter (its caller went away); unknown ids are ignored.
  void Cancel(int64_t id);

  bool empty() const { return by_key_.empty(); }
  // The earliest deadline, if any.
  std::optional<absl::Time> NextDeadline() const;
  // Takes out the waiters to decide in a batch at `now`, in key order: the
  // new ones, those of the workloads in `changed`, and those whose deadline
  // is at or before `now`.
  std::vector<Due> TakeDue(
      const std::map<NamespacedName, admission::Change>& changed,
      absl::Time now);
  // Takes out every waiter (shutdown).
  std::vector<Waiter> TakeAll();

 private:
  // Removes `id`'s deadline and key entries.
  void Unindex(const Waiter& waiter);

  std::map<NamespacedName, std::vector<Waiter>> by_key_;
  std::set<std::pair<absl::Time, int64_t>> deadlines_;
  std::map<int64_t, NamespacedName> keys_;
  // Keys of the waiters added since the last TakeDue().
  std::vector<NamespacedName> fresh_;
  std::atomic<int64_t> next_id_{1};
};

}  // namespace kq::engine
