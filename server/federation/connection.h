#pragma once

// The manager's view of its connection to one worker kqd, as Kueue's
// remoteClient keeps it (pkg/controller/admissionchecks/multikueue/
// multikueuecluster.go: connectionState, failedConnAttempts,
// retryConnNextAttempt, retryAfter and the Active condition updateStatus
// writes). A value type with no I/O and no clock: every time is a
// parameter. Thread-compatible.
//
// Example (one reconcile of a worker):
//   if (absl::Duration wait = conn.UntilNextAttempt(now); wait > 0) {
//     requeue(wait);                      // the backoff has not elapsed
//   } else if (absl::Status s = Connect(); s.ok()) {
//     conn.MarkConnected();
//     active = ActiveConnectedCondition(now);
//   } else {
//     conn.MarkDisconnected(now);
//     requeue(conn.RecordFailedAttempt(now));
//     active = ActiveFailedCondition(kReasonClientConnectionFailed,
//                                    std::string(s.message()), conn, now);
//   }

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "server/core/objects.h"

namespace kq::federation {

// Reasons of a MultiKueueCluster's Active condition that kq writes.
inline constexpr char kReasonActive[] = "Active";
inline constexpr char kReasonClientConnectionFailed[] =
    "ClientConnectionFailed";
inline constexpr char kReasonBadKubeConfig[] = "BadKubeConfig";

// Kueue's retryAfter: 0 for no failure, then 5s·2^(min(n,7)−1): 5s, 10s,
// 20s, ..., 320s, and 320s from the 7th failure on.
absl::Duration ReconnectBackoff(int64_t failed_attempts);

class ConnectionState {
 public:
  // A new client starts disconnected and counts as lost from its creation
  // (Kueue's newRemoteClient), so the worker-lost grace runs even for a
  // worker that never answers.
  static ConnectionState NewDisconnected(absl::Time created);

  // A state that was never marked either way (Kueue's zero
  // connectionState): disconnected, with no loss time.
  ConnectionState() = default;

  bool connected() const { return connected_; }
  // When the connection first dropped; unset while connected. Kept across
  // failed reconnects, so the grace counts from the first loss.
  std::optional<absl::Time> lost_since() const { return lost_since_; }
  int64_t failed_attempts() const { return failed_attempts_; }
  // When the backoff allows the next attempt; unset with no failure.
  std::optional<absl::Time> next_attempt() const { return next_attempt_; }

  // Every watch is up: connected, the loss time and the failed attempts
  // cleared.
  void MarkConnected();
  // The connection dropped or an attempt failed. Records `now` as the loss
  // time only if none is recorded. Returns whether it was connected (the
  // first drop of a streak).
  bool MarkDisconnected(absl::Time now);

  // How long until the next connection attempt may start: zero when
  // connected or when the backoff has elapsed.
  absl::Duration UntilNextAttempt(absl::Time now) const;
  // An attempt failed: one more failed attempt, the next allowed after
  // ReconnectBackoff of the new count. Returns that backoff (the requeue).
  absl::Duration RecordFailedAttempt(absl::Time now);
  // Puts off the next attempt without counting a failure (Kueue's
  // deferConnAttempt, when a watch is still being set up).
  void DeferAttempt(absl::Time now, absl::Duration wait);
  // The worker's configuration changed: the failed attempts start over.
  void ResetFailedAttempts();

  friend bool operator==(const ConnectionState&,
                         const ConnectionState&) = default;

 private:
  bool connected_ = false;
  std::optional<absl::Time> lost_since_;
  int64_t failed_attempts_ = 0;
  std::optional<absl::Time> next_attempt_;
};

// Active=True, reason Active, message "Connected".
Condition ActiveConnectedCondition(absl::Time now);

// Active=False with `reason` and `message`; with failed attempts the
// message gains "; connection attempts: N, next connection attempt:
// <RFC3339, UTC>" (Kueue's updateStatus).
Condition ActiveFailedCondition(absl::string_view reason,
                                absl::string_view message,
                                const ConnectionState& state, absl::Time now);

// Kueue's message for a configuration that cannot be loaded (reasons
// BadKubeConfig, InsecureKubeConfig, ...): "load client config failed:
// <error>".
std::string LoadClientConfigFailedMessage(absl::string_view error);

// Go's time.RFC3339 of `t` in UTC, whole seconds ("2023-11-14T22:13:20Z").
std::string FormatRFC3339(absl::Time t);

}  // namespace kq::federation
