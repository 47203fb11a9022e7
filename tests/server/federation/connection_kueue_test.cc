// The per-worker connection state (server/federation/connection.h), ported
// from Kueue's pkg/controller/admissionchecks/multikueue/
// multikueuecluster_test.go: TestReconnectBackoff (all four cases),
// TestConnectionStateTransitions and TestActiveConditionSurfacesBackoff.
// TestReconnectBackoff drives a small in-test reconcile of one cluster
// (Kueue's clustersReconciler.Reconcile with a client builder that always
// fails to watch) over ConnectionState, counting the builder calls.
//
// Kueue tests of the same file not ported here, and why:
//   TestUpdateConfig, TestDisconnectedClientReconnectsWithSameConfig,
//   TestEstablishWatch, TestEstablishBackoffSchedule,
//   TestSetRemoteClientConfigDoesNotBlockOtherClusters,
//   TestRemoteClientConcurrentSetConfigAndGC,
//   TestRemoteClientConcurrentSetConfigAndReaders,
//   TestStopWatchersJoinsParkedWatcher, TestClustersReconcilerEventFilters
//       exercise the client, its watches, goroutines and kubeconfig loading:
//       the federation runtime's, not these rules. Only the message forms of
//       TestUpdateConfig are checked (kq's ActiveConditionMessages).
//   TestRemoteClientGC, TestValidateKubeconfig, TestValidateKubeConfigPath
//       garbage collection and kubeconfig validation are the runtime's.

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/core/conditions.h"
#include "server/federation/connection.h"
#include "tests/server/federation/kueue_names.h"

namespace kq::federation {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// ---------------------------------------------------------------------------
// TestReconnectBackoff.

struct BackoffStep {
  absl::Duration advance;
  int want_build_calls = 0;
  int64_t want_failed_attempts = 0;
  absl::Duration want_requeue_after;
};

struct BackoffCase {
  std::string name;  // Kueue's
  std::vector<BackoffStep> steps;
};

void PrintTo(const BackoffCase& c, std::ostream* os) { *os << c.name; }

// One reconcile of a disconnected cluster whose every connection attempt
// fails: wait out the backoff, or attempt (a builder call) and fail.
absl::Duration ReconcileFailingCluster(ConnectionState& state, absl::Time now,
                                       int* build_calls) {
  if (!state.connected()) {
    if (absl::Duration wait = state.UntilNextAttempt(now);
        wait > absl::ZeroDuration()) {
      return wait;
    }
  }
  ++*build_calls;
  state.MarkDisconnected(now);
  return state.RecordFailedAttempt(now);
}

class ReconnectBackoffTest : public ::testing::TestWithParam<BackoffCase> {};

TEST_P(ReconnectBackoffTest, ReconnectBackoff) {
  const BackoffCase& tc = GetParam();
  ConnectionState state = ConnectionState::NewDisconnected(kNow);
  absl::Time now = kNow;
  int build_calls = 0;
  for (size_t i = 0; i < tc.steps.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "step " << i);
    const BackoffStep& s = tc.steps[i];
    now += s.advance;
    const int before = build_calls;
    const absl::Duration requeue =
        ReconcileFailingCluster(state, now, &build_calls);
    EXPECT_EQ(build_calls - before, s.want_build_calls);
    EXPECT_EQ(state.failed_attempts(), s.want_failed_attempts);
    EXPECT_EQ(requeue, s.want_requeue_after);
  }
}

std::vector<BackoffCase> BackoffCases() {
  const absl::Duration s = absl::Seconds(1);
  return {
      {.name = "double reconcile within backoff window does not advance "
               "attempts",
       .steps = {{absl::ZeroDuration(), 1, 1, 5 * s},
                 {absl::ZeroDuration(), 0, 1, 5 * s},
                 {2 * s, 0, 1, 3 * s}}},
      {.name = "backoff progresses once window elapses",
       .steps = {{absl::ZeroDuration(), 1, 1, 5 * s},
                 {5 * s, 1, 2, 10 * s},
                 {10 * s, 1, 3, 20 * s}}},
      {.name = "deferred reconciles between failures do not consume backoff "
               "slots",
       .steps = {{absl::ZeroDuration(), 1, 1, 5 * s},
                 {absl::ZeroDuration(), 0, 1, 5 * s},
                 {5 * s, 1, 2, 10 * s},
                 {absl::ZeroDuration(), 0, 2, 10 * s},
                 {10 * s, 1, 3, 20 * s}}},
      {.name = "backoff saturates at retryMaxSteps",
       .steps = {{absl::ZeroDuration(), 1, 1, 5 * s},
                 {5 * s, 1, 2, 10 * s},
                 {10 * s, 1, 3, 20 * s},
                 {20 * s, 1, 4, 40 * s},
                 {40 * s, 1, 5, 80 * s},
                 {80 * s, 1, 6, 160 * s},
                 {160 * s, 1, 7, 320 * s},
                 {320 * s, 1, 8, 320 * s}}},
  };
}

INSTANTIATE_TEST_SUITE_P(Kueue, ReconnectBackoffTest,
                         ::testing::ValuesIn(BackoffCases()),
                         [](const ::testing::TestParamInfo<BackoffCase>& info) {
                           return SnakeCase(info.param.name);
                         });

// Kueue's retryAfter, value by value (its comment: "between 0 to 5m20s").
TEST(ReconnectBackoffValuesTest, RetryAfter) {
  const struct {
    int64_t failed_attempts;
    absl::Duration want;
  } cases[] = {
      {0, absl::ZeroDuration()}, {1, absl::Seconds(5)},
      {2, absl::Seconds(10)},    {3, absl::Seconds(20)},
      {4, absl::Seconds(40)},    {5, absl::Seconds(80)},
      {6, absl::Seconds(160)},   {7, absl::Seconds(320)},
      {8, absl::Seconds(320)},   {1000, absl::Seconds(320)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.failed_attempts);
    EXPECT_EQ(ReconnectBackoff(c.failed_attempts), c.want);
  }
}

// ---------------------------------------------------------------------------
// TestConnectionStateTransitions.

TEST(ConnectionStateKueueTest, ConnectionStateTransitions) {
  ConnectionState cs;
  EXPECT_FALSE(cs.MarkDisconnected(kNow))
      << "want wasConnected=false for the initial disconnect";
  EXPECT_FALSE(cs.connected());
  EXPECT_EQ(cs.lost_since(), kNow);

  // Fully connected: clears the recorded loss.
  cs.MarkConnected();
  EXPECT_TRUE(cs.connected());
  EXPECT_EQ(cs.lost_since(), std::nullopt);

  // A drop from a connected client records the loss time and reports the
  // transition.
  EXPECT_TRUE(cs.MarkDisconnected(kNow));
  EXPECT_EQ(cs.lost_since(), kNow);

  // A repeated drop while already disconnected reports no transition and
  // preserves the time.
  EXPECT_FALSE(cs.MarkDisconnected(kNow + absl::Minutes(1)));
  EXPECT_EQ(cs.lost_since(), kNow);

  // A fully successful reconnect clears the recorded loss.
  cs.MarkConnected();
  EXPECT_TRUE(cs.connected());
  EXPECT_EQ(cs.lost_since(), std::nullopt);
}

// kq: a new client counts as lost from its creation (Kueue's
// newRemoteClient), and a failed attempt keeps that first loss time.
TEST(ConnectionStateTest, NewClientIsLostFromCreationAcrossFailedAttempts) {
  ConnectionState cs = ConnectionState::NewDisconnected(kNow);
  EXPECT_FALSE(cs.connected());
  EXPECT_EQ(cs.lost_since(), kNow);
  cs.MarkDisconnected(kNow + absl::Seconds(7));
  cs.RecordFailedAttempt(kNow + absl::Seconds(7));
  EXPECT_EQ(cs.lost_since(), kNow);
  EXPECT_EQ(cs.next_attempt(), kNow + absl::Seconds(12));
  // A configuration change restarts the count (Kueue's "failed attempts are
  // set to 0 on config change"), not the loss time.
  cs.ResetFailedAttempts();
  EXPECT_EQ(cs.failed_attempts(), 0);
  EXPECT_EQ(cs.UntilNextAttempt(kNow + absl::Seconds(8)), absl::ZeroDuration());
  EXPECT_EQ(cs.lost_since(), kNow);
  // A deferred attempt waits without counting a failure.
  cs.DeferAttempt(kNow + absl::Seconds(8), absl::Seconds(5));
  EXPECT_EQ(cs.failed_attempts(), 0);
  EXPECT_EQ(cs.UntilNextAttempt(kNow + absl::Seconds(10)), absl::Seconds(3));
}

// ---------------------------------------------------------------------------
// TestActiveConditionSurfacesBackoff.

TEST(ConnectionStateKueueTest, ActiveConditionSurfacesBackoff) {
  const absl::Time next_retry = kNow + absl::Seconds(20);
  ConnectionState cs = ConnectionState::NewDisconnected(kNow);
  // Three failures, the third (20s backoff) leaving next_retry.
  cs.RecordFailedAttempt(kNow - absl::Seconds(15));
  cs.RecordFailedAttempt(kNow - absl::Seconds(10));
  cs.RecordFailedAttempt(kNow);
  ASSERT_EQ(cs.failed_attempts(), 3);
  ASSERT_EQ(cs.next_attempt(), next_retry);

  // Disconnected: the Active message appends the failed reconnect attempts
  // and the next retry time.
  const Condition down = ActiveFailedCondition(kReasonClientConnectionFailed,
                                               "client cannot watch", cs, kNow);
  EXPECT_EQ(down.type, kConditionActive);
  EXPECT_EQ(down.status, kConditionFalse);
  EXPECT_EQ(down.reason, kReasonClientConnectionFailed);
  EXPECT_EQ(down.message,
            "client cannot watch; connection attempts: 3, next connection "
            "attempt: " +
                FormatRFC3339(next_retry));
  EXPECT_EQ(FormatRFC3339(next_retry), "2023-11-14T22:13:40Z");

  // Reconnected: the Active message is used as-is (no backoff suffix).
  cs.MarkConnected();
  const Condition up = ActiveConnectedCondition(kNow);
  EXPECT_EQ(up.status, kConditionTrue);
  EXPECT_EQ(up.reason, kReasonActive);
  EXPECT_EQ(up.message, "Connected");
  EXPECT_EQ(cs.failed_attempts(), 0);
}

// kq: the message forms of Kueue's TestUpdateConfig that concern the text.
TEST(ConnectionStateTest, ActiveConditionMessages) {
  // "update client with invalid path config": a configuration that cannot
  // be loaded, before any connection attempt.
  ConnectionState fresh = ConnectionState::NewDisconnected(kNow);
  const Condition bad = ActiveFailedCondition(
      kReasonBadKubeConfig,
      LoadClientConfigFailedMessage("kubeconfig path must not be empty"), fresh,
      kNow);
  EXPECT_EQ(bad.status, kConditionFalse);
  EXPECT_EQ(bad.reason, "BadKubeConfig");
  EXPECT_EQ(bad.message,
            "load client config failed: kubeconfig path must not be empty");

  // "update client with invalid secret config": one failed attempt.
  ConnectionState once = ConnectionState::NewDisconnected(kNow);
  once.RecordFailedAttempt(kNow);
  EXPECT_EQ(ActiveFailedCondition(kReasonClientConnectionFailed,
                                  "invalid kubeconfig", once, kNow)
                .message,
            "invalid kubeconfig; connection attempts: 1, next connection "
            "attempt: 2023-11-14T22:13:25Z");
}

}  // namespace
}  // namespace kq::federation
