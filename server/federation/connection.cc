#include "server/federation/connection.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

#include "server/core/conditions.h"

namespace kq::federation {
namespace {

// Kueue's retryIncrement and retryMaxSteps.
constexpr absl::Duration kRetryIncrement = absl::Seconds(5);
constexpr int64_t kRetryMaxSteps = 7;

}  // namespace

absl::Duration ReconnectBackoff(int64_t failed_attempts) {
  if (failed_attempts <= 0) return absl::ZeroDuration();
  return kRetryIncrement *
         (int64_t{1} << (std::min(failed_attempts, kRetryMaxSteps) - 1));
}

ConnectionState ConnectionState::NewDisconnected(absl::Time created) {
  ConnectionState state;
  state.MarkDisconnected(created);
  return state;
}

void ConnectionState::MarkConnected() {
  connected_ = true;
  lost_since_.reset();
  ResetFailedAttempts();
}

bool ConnectionState::MarkDisconnected(absl::Time now) {
  const bool was_connected = connected_;
  connected_ = false;
  if (!lost_since_.has_value()) lost_since_ = now;
  return was_connected;
}

absl::Duration ConnectionState::UntilNextAttempt(absl::Time now) const {
  if (connected_ || !next_attempt_.has_value()) return absl::ZeroDuration();
  return std::max(*next_attempt_ - now, absl::ZeroDuration());
}

absl::Duration ConnectionState::RecordFailedAttempt(absl::Time now) {
  ++failed_attempts_;
  const absl::Duration wait = ReconnectBackoff(failed_attempts_);
  next_attempt_ = now + wait;
  return wait;
}

void ConnectionState::DeferAttempt(absl::Time now, absl::Duration wait) {
  next_attempt_ = now + wait;
}

void ConnectionState::ResetFailedAttempts() {
  failed_attempts_ = 0;
  next_attempt_.reset();
}

Condition ActiveConnectedCondition(absl::Time now) {
  return Condition{.type = kConditionActive,
                   .status = kConditionTrue,
                   .reason = kReasonActive,
                   .message = "Connected",
                   .last_transition_time = now};
}

Condition ActiveFailedCondition(absl::string_view reason,
                                absl::string_view message,
                                const ConnectionState& state, absl::Time now) {
  std::string text(message);
  if (state.failed_attempts() > 0) {
    absl::StrAppend(&text, "; connection attempts: ", state.failed_attempts(),
                    ", next connection attempt: ",
                    FormatRFC3339(state.next_attempt().value_or(now)));
  }
  return Condition{.type = kConditionActive,
                   .status = kConditionFalse,
                   .reason = std::string(reason),
                   .message = std::move(text),
                   .last_transition_time = now};
}

std::string LoadClientConfigFailedMessage(absl::string_view error) {
  return absl::StrCat("load client config failed: ", error);
}

std::string FormatRFC3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

}  // namespace kq::federation
