#pragma once

// Small helpers the shim's tests against a real kqd share: client options
// with short retries, polling until a condition holds, and reading a
// Workload's conditions.

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kq/v1/workload.pb.h"

#include "kq/client/client.h"

namespace kq::testing {

// Options for a test's kqd client: short deadlines and retry budgets, so a
// kqd killed by the test fails calls quickly.
inline client::ClientOptions KqOptions(const std::string& target) {
  client::ClientOptions options;
  options.target = target;
  options.deadline = absl::Seconds(5);
  options.retry_initial_backoff = absl::Milliseconds(50);
  options.retry_max_backoff = absl::Milliseconds(500);
  options.retry_budget = absl::Seconds(3);
  return options;
}

// Polls `predicate` every 50 ms until it holds or `timeout` passes; returns
// its last value.
template <typename Predicate>
bool WaitFor(Predicate predicate, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (predicate()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return predicate();
}

// The workload's condition of `type`, or null.
inline const v1::Condition* FindWorkloadCondition(const v1::Workload& wl,
                                                  const std::string& type) {
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

inline bool ConditionTrue(const v1::Workload& wl, const std::string& type) {
  const v1::Condition* c = FindWorkloadCondition(wl, type);
  return c != nullptr && c->status() == "True";
}

}  // namespace kq::testing
