// The Incremental dispatcher (server/federation/incremental.h), ported from
// Kueue's pkg/controller/workloaddispatcher/incrementaldispatcher_test.go:
// TestIncrementalDispatcherReconciler_Reconcile (when the dispatcher skips,
// and when it fails) and TestIncrementalDispatcherNominateWorkers (what it
// nominates). As in Kueue, cluster names are reverse-alphabetical, so a
// result in config order and a sorted one differ; every case has the
// ordering gate (respect_config_order) on unless it says otherwise.
//
// Kueue cases not ported, and why:
//   config gate disabled — ignores stepSize=10, uses default 3
//       needs the gate MultiKueueIncrementalDispatcherConfig off; kq has no
//       such gate and always follows the configured step size.
//
// One case differs on purpose: Kueue's "workload has quota reserved" builds
// its workload without a quota reservation, so it skips and only checks
// that no error comes back; here the workload holds quota and the case
// checks the nomination as well.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/core/conditions.h"
#include "server/core/objects.h"
#include "server/federation/group.h"
#include "server/federation/incremental.h"
#include "tests/server/federation/kueue_names.h"
#include "tests/testing/builders.h"

namespace kq::federation {
namespace {

using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAreArray;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
// Kueue's incrementalDispatcherRoundTimeout, kq's default.
constexpr absl::Duration kRoundTimeout = absl::Minutes(5);

Admission Q1() { return Admission{.cluster_queue = "q1"}; }

// ---------------------------------------------------------------------------
// TestIncrementalDispatcherReconciler_Reconcile.

struct ReconcileCase {
  std::string name;  // Kueue's
  std::optional<Workload> workload;
  bool deleted = false;
  std::string cluster_name;
  std::vector<std::string> clusters = {"cluster1"};
  std::optional<absl::Time> round_start;
  absl::StatusCode want_code = absl::StatusCode::kOk;
  // Unset: nothing nominated.
  std::optional<std::vector<std::string>> want_nominated;
  // Unset: the round is left as it is.
  std::optional<std::optional<absl::Time>> want_round_start;
};

void PrintTo(const ReconcileCase& c, std::ostream* os) { *os << c.name; }

class IncrementalReconcileTest
    : public ::testing::TestWithParam<ReconcileCase> {};

TEST_P(IncrementalReconcileTest, Reconcile) {
  const ReconcileCase& tc = GetParam();
  IncrementalInput in{
      .workload = tc.workload.has_value() ? &*tc.workload : nullptr,
      .deleted = tc.deleted,
      .state = {.cluster_name = tc.cluster_name, .round_start = tc.round_start},
      .check_name = "ac1",
      .clusters = tc.clusters,
      .settings = {.dispatcher_name = kDispatcherIncremental},
      .now = kNow};
  const IncrementalDecision got = IncrementalReconcile(in);
  EXPECT_EQ(got.status.code(), tc.want_code) << got.status;
  EXPECT_EQ(got.nominated_cluster_names, tc.want_nominated);
  EXPECT_EQ(got.round_start, tc.want_round_start);
}

std::vector<ReconcileCase> ReconcileCases() {
  const WorkloadBuilder base = WorkloadBuilder("test-workload");
  return {
      {.name = "workload not found", .want_code = absl::StatusCode::kNotFound},
      {.name = "workload deleted", .workload = base.Build(), .deleted = true},
      {.name = "admission check nil", .workload = base.Build()},
      {.name = "admission check is rejected",
       .workload = WorkloadBuilder(base)
                       .AdmissionCheck("ac1", kCheckStateRejected)
                       .Build()},
      {.name = "admission check is ready",
       .workload = WorkloadBuilder(base)
                       .AdmissionCheck("ac1", kCheckStateReady)
                       .Build()},
      {.name = "already assigned to cluster",
       .workload = WorkloadBuilder(base)
                       .AdmissionCheck("ac1", kCheckStatePending)
                       .Build(),
       .cluster_name = "assigned"},
      {.name = "workload is already finished",
       .workload = WorkloadBuilder(base)
                       .AdmissionCheck("ac1", kCheckStatePending)
                       .Finished()
                       .Build()},
      {.name = "workload has quota reserved",
       .workload = WorkloadBuilder(base)
                       .AdmissionCheck("ac1", kCheckStatePending)
                       .ReserveQuota(Q1(), kNow)
                       .Build(),
       .want_nominated = std::vector<std::string>{"cluster1"},
       .want_round_start = std::optional<absl::Time>(kNow)},
      // kq: Kueue forgets the round of a finished workload, or one without
      // quota, in memory; kq clears the persisted one.
      {.name = "kq: the round of a workload without quota is cleared",
       .workload = WorkloadBuilder(base)
                       .AdmissionCheck("ac1", kCheckStatePending)
                       .Build(),
       .round_start = kNow - absl::Minutes(1),
       .want_round_start = std::optional<absl::Time>()},
      // Kueue's GetRemoteClusters fails first for a config without
      // clusters.
      {.name = "kq: a config without clusters is ErrNoActiveClusters",
       .workload = WorkloadBuilder(base)
                       .AdmissionCheck("ac1", kCheckStatePending)
                       .ReserveQuota(Q1(), kNow)
                       .Build(),
       .clusters = {},
       .want_code = absl::StatusCode::kFailedPrecondition},
  };
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, IncrementalReconcileTest, ::testing::ValuesIn(ReconcileCases()),
    [](const ::testing::TestParamInfo<ReconcileCase>& info) {
      return SnakeCase(info.param.name);
    });

// ---------------------------------------------------------------------------
// TestIncrementalDispatcherNominateWorkers.

struct NominateCase {
  std::string name;  // Kueue's
  std::vector<std::string> remote_clusters;
  std::vector<std::string> nominated;  // before
  int32_t step_size = kDefaultStepSize;
  bool ordering_gate_off = false;
  bool want_no_more_workers = false;
  // The round started a second past the timeout ago; otherwise, with
  // nominations, it started now (as Kueue's test sets it up).
  bool advance_round_time = false;
  std::vector<std::string> want_nominated;  // after
};

void PrintTo(const NominateCase& c, std::ostream* os) { *os << c.name; }

class IncrementalNominateTest : public ::testing::TestWithParam<NominateCase> {
};

TEST_P(IncrementalNominateTest, NominateWorkers) {
  const NominateCase& tc = GetParam();
  ManagerState state{.nominated_cluster_names = tc.nominated};
  if (tc.advance_round_time) {
    state.round_start = kNow - kRoundTimeout - absl::Seconds(1);
  } else if (!tc.nominated.empty()) {
    state.round_start = kNow;
  }
  const Settings settings{.dispatcher_name = kDispatcherIncremental,
                          .incremental_step_size = tc.step_size,
                          .incremental_round_timeout = kRoundTimeout,
                          .respect_config_order = !tc.ordering_gate_off};
  const std::vector<std::string> original = tc.remote_clusters;

  const IncrementalDecision got =
      NominateWorkers(state, tc.remote_clusters, settings, kNow);

  EXPECT_EQ(IsNoMoreWorkers(got.status), tc.want_no_more_workers) << got.status;
  const std::vector<std::string> after =
      got.nominated_cluster_names.value_or(state.nominated_cluster_names);
  EXPECT_THAT(after, ElementsAreArray(tc.want_nominated));
  if (got.nominated_cluster_names.has_value()) {
    // Only a successful nomination starts a round.
    EXPECT_TRUE(got.status.ok());
    EXPECT_EQ(got.round_start, std::optional<absl::Time>(kNow));
  } else {
    EXPECT_FALSE(got.round_start.has_value());
  }
  EXPECT_EQ(tc.remote_clusters, original);
}

std::vector<NominateCase> NominateCases() {
  const std::vector<std::string> fifteen = {"O", "N", "M", "L", "K",
                                            "J", "I", "H", "G", "F",
                                            "E", "D", "C", "B", "A"};
  return {
      {.name = "one remote", .remote_clusters = {"A"}, .want_nominated = {"A"}},
      {.name = "two remotes",
       .remote_clusters = {"B", "A"},
       .want_nominated = {"B", "A"}},
      {.name = "three remotes",
       .remote_clusters = {"C", "B", "A"},
       .want_nominated = {"C", "B", "A"}},
      {.name = "fifteen remotes",
       .remote_clusters = fifteen,
       .want_nominated = {"O", "N", "M"}},
      {.name = "all already nominated (3)",
       .remote_clusters = {"C", "B", "A"},
       .nominated = {"C", "B", "A"},
       .want_no_more_workers = true,
       .advance_round_time = true,
       .want_nominated = {"C", "B", "A"}},
      {.name = "all already nominated (1)",
       .remote_clusters = {"A"},
       .nominated = {"A"},
       .want_no_more_workers = true,
       .advance_round_time = true,
       .want_nominated = {"A"}},
      {.name = "round expired, next set nominated",
       .remote_clusters = {"F", "E", "D", "C", "B", "A"},
       .nominated = {"F", "E", "D"},
       .advance_round_time = true,
       .want_nominated = {"F", "E", "D", "C", "B", "A"}},
      {.name = "round in progress, keep current",
       .remote_clusters = {"F", "E", "D", "C", "B", "A"},
       .nominated = {"F", "E", "D"},
       .want_nominated = {"F", "E", "D"}},
      {.name = "round expired, nominate all",
       .remote_clusters = {"H", "G", "F", "E", "D", "C", "B", "A"},
       .nominated = {"H", "G", "F", "E", "D", "C"},
       .advance_round_time = true,
       .want_nominated = {"H", "G", "F", "E", "D", "C", "B", "A"}},
      {.name = "no remotes",
       .remote_clusters = {},
       .want_no_more_workers = true,
       .want_nominated = {}},
      {.name = "stepSize=2, five remotes — first batch is exactly 2",
       .remote_clusters = {"E", "D", "C", "B", "A"},
       .step_size = 2,
       .want_nominated = {"E", "D"}},
      {.name = "stepSize=2, round expired — second batch is next 2",
       .remote_clusters = {"E", "D", "C", "B", "A"},
       .nominated = {"E", "D"},
       .step_size = 2,
       .advance_round_time = true,
       .want_nominated = {"E", "D", "C", "B"}},
      {.name = "ordering gate off: three remotes nominated alphabetically",
       .remote_clusters = {"C", "B", "A"},
       .ordering_gate_off = true,
       .want_nominated = {"A", "B", "C"}},
      {.name = "ordering gate off: first batch of fifteen is alphabetical",
       .remote_clusters = fifteen,
       .ordering_gate_off = true,
       .want_nominated = {"A", "B", "C"}},
      {.name = "ordering gate off: prior nomination retained, remainder "
               "alphabetical",
       .remote_clusters = {"F", "E", "D", "C", "B", "A"},
       .nominated = {"F", "E", "D"},
       .ordering_gate_off = true,
       .advance_round_time = true,
       .want_nominated = {"F", "E", "D", "A", "B", "C"}},
      {.name = "ordering gate off: stepSize=2 first batch is alphabetical",
       .remote_clusters = {"E", "D", "C", "B", "A"},
       .step_size = 2,
       .ordering_gate_off = true,
       .want_nominated = {"A", "B"}},
  };
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, IncrementalNominateTest, ::testing::ValuesIn(NominateCases()),
    [](const ::testing::TestParamInfo<NominateCase>& info) {
      return SnakeCase(info.param.name);
    });

// ---------------------------------------------------------------------------
// kq's own cases.

// A round in progress requeues for what is left of it.
TEST(IncrementalTest, RoundInProgressRequeuesForTheRest) {
  const ManagerState state{.nominated_cluster_names = {"C"},
                           .round_start = kNow - absl::Minutes(2)};
  const IncrementalDecision got = NominateWorkers(
      state, {"C", "B", "A"}, Settings{.incremental_step_size = 1}, kNow);
  EXPECT_TRUE(got.steady());
  EXPECT_EQ(got.requeue_after, absl::Minutes(3));
}

// The round timeout is configurable (a kq extension; Kueue's is 5 minutes):
// with 3s rounds, a round started 4s ago is over.
TEST(IncrementalTest, RoundTimeoutIsConfigurable) {
  const ManagerState state{.nominated_cluster_names = {"w1"},
                           .round_start = kNow - absl::Seconds(4)};
  const Settings settings{.incremental_step_size = 1,
                          .incremental_round_timeout = absl::Seconds(3)};
  const IncrementalDecision got =
      NominateWorkers(state, {"w1", "w2", "w3"}, settings, kNow);
  ASSERT_TRUE(got.status.ok());
  EXPECT_EQ(got.nominated_cluster_names,
            (std::vector<std::string>{"w1", "w2"}));
  EXPECT_EQ(got.round_start, std::optional<absl::Time>(kNow));

  // Exactly at the timeout the round is still in progress, as in Kueue.
  const ManagerState at_end{.nominated_cluster_names = {"w1"},
                            .round_start = kNow - absl::Seconds(3)};
  EXPECT_TRUE(NominateWorkers(at_end, {"w1", "w2"}, settings, kNow).steady());
}

// A persisted round start survives a manager restart: the next batch comes
// when the round that started before the restart ends, not a round after
// the restart (federation.md §5.6 scenario 4).
TEST(IncrementalTest, PersistedRoundSurvivesRestart) {
  const Settings settings{.incremental_step_size = 1,
                          .incremental_round_timeout = absl::Seconds(3)};
  const ManagerState persisted{.nominated_cluster_names = {"w1", "w2"},
                               .round_start = kNow + absl::Seconds(3)};
  // Restarted at t=4s, the round (started at 3s) has 2s to go.
  EXPECT_EQ(NominateWorkers(persisted, {"w1", "w2", "w3"}, settings,
                            kNow + absl::Seconds(4))
                .requeue_after,
            absl::Seconds(2));
  const IncrementalDecision at_six =
      NominateWorkers(persisted, {"w1", "w2", "w3"}, settings,
                      kNow + absl::Seconds(6) + absl::Milliseconds(1));
  EXPECT_EQ(at_six.nominated_cluster_names,
            (std::vector<std::string>{"w1", "w2", "w3"}));
}

// A round start left from an earlier dispatch (nominations cleared by an
// eviction) starts no wait.
TEST(IncrementalTest, LeftoverRoundWithoutNominationsDoesNotWait) {
  const ManagerState state{.round_start = kNow - absl::Seconds(10)};
  const IncrementalDecision got =
      NominateWorkers(state, {"w1", "w2"}, Settings{}, kNow);
  EXPECT_EQ(got.nominated_cluster_names,
            (std::vector<std::string>{"w1", "w2"}));
}

// ErrNoMoreWorkers is its own status.
TEST(IncrementalTest, NoMoreWorkersIsDistinct) {
  EXPECT_TRUE(IsNoMoreWorkers(NoMoreWorkersError()));
  EXPECT_EQ(NoMoreWorkersError().message(), "no more workers to nominate");
  EXPECT_FALSE(IsNoMoreWorkers(absl::OutOfRangeError("other")));
  EXPECT_FALSE(IsNoMoreWorkers(absl::OkStatus()));
}

}  // namespace
}  // namespace kq::federation
