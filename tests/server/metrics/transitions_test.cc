#include "server/metrics/transitions.h"

#include "gtest/gtest.h"

#include "server/core/conditions.h"
#include "server/metrics/kueue_metrics.h"
#include "tests/testing/builders.h"

namespace kq::metrics {
namespace {

using ::kq::testing::WorkloadBuilder;

const absl::Time kCreated = absl::FromUnixSeconds(1'700'000'000);
const absl::Time kNow = kCreated + absl::Seconds(90);

TEST(BucketsTest, AreKueues) {
  // pkg/metrics/metrics.go generateExponentialBuckets(14) and (16).
  EXPECT_EQ(KueueExponentialBuckets(14),
            (std::vector<double>{1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280,
                                 2560, 5120, 10240}));
  EXPECT_EQ(KueueExponentialBuckets(16),
            (std::vector<double>{1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280,
                                 2560, 5120, 10240, 20480, 40960}));
  EXPECT_EQ(
      PrometheusDefaultBuckets(),
      (std::vector<double>{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}));
}

Workload Base() {
  Workload wl = WorkloadBuilder("w").Namespace("ns").Queue("lq").Build();
  wl.meta.creation_timestamp = kCreated;
  return wl;
}

TEST(TransitionsTest, QuotaReservedAndAdmittedInOneBatch) {
  Workload wl = Base();
  SetCondition(&wl.conditions, {kConditionQuotaReserved, kConditionTrue,
                                kReasonQuotaReserved, "", kNow});
  SetCondition(&wl.conditions,
               {kConditionAdmitted, kConditionTrue, kReasonAdmitted, "", kNow});
  const WorkloadTransitions t = TransitionsOf(wl, kNow);
  EXPECT_TRUE(t.quota_reserved);
  EXPECT_TRUE(t.admitted);
  EXPECT_EQ(t.queued_wait, absl::Seconds(90));
  // No admission checks: Kueue records no checks wait.
  EXPECT_FALSE(t.checks_wait.has_value());
  EXPECT_FALSE(t.finished || t.evicted || t.preempted);
}

TEST(TransitionsTest, AnOlderConditionIsNoTransition) {
  Workload wl = Base();
  SetCondition(&wl.conditions,
               {kConditionQuotaReserved, kConditionTrue, kReasonQuotaReserved,
                "", kNow - absl::Seconds(1)});
  const WorkloadTransitions t = TransitionsOf(wl, kNow);
  EXPECT_FALSE(t.quota_reserved);
}

TEST(TransitionsTest, WaitCountsFromTheLastRequeue) {
  Workload wl = Base();
  SetCondition(&wl.conditions,
               {kConditionRequeued, kConditionTrue, kReasonBackoffFinished, "",
                kNow - absl::Seconds(7)});
  SetCondition(&wl.conditions, {kConditionQuotaReserved, kConditionTrue,
                                kReasonQuotaReserved, "", kNow});
  EXPECT_EQ(TransitionsOf(wl, kNow).queued_wait, absl::Seconds(7));
}

TEST(TransitionsTest, AdmissionChecksWaitFromTheReservation) {
  Workload wl = Base();
  wl.admission_checks.push_back(AdmissionCheckState{.name = "prov"});
  SetCondition(&wl.conditions,
               {kConditionQuotaReserved, kConditionTrue, kReasonQuotaReserved,
                "", kNow - absl::Seconds(30)});
  SetCondition(&wl.conditions,
               {kConditionAdmitted, kConditionTrue, kReasonAdmitted, "", kNow});
  const WorkloadTransitions t = TransitionsOf(wl, kNow);
  EXPECT_FALSE(t.quota_reserved);
  ASSERT_TRUE(t.checks_wait.has_value());
  EXPECT_EQ(*t.checks_wait, absl::Seconds(30));
}

TEST(TransitionsTest, FinishedAfterAdmission) {
  Workload wl = Base();
  SetCondition(&wl.conditions, {kConditionAdmitted, kConditionTrue,
                                kReasonAdmitted, "", kNow - absl::Seconds(60)});
  SetCondition(&wl.conditions,
               {kConditionFinished, kConditionTrue, "Succeeded", "", kNow});
  const WorkloadTransitions t = TransitionsOf(wl, kNow);
  EXPECT_TRUE(t.finished);
  ASSERT_TRUE(t.execution.has_value());
  EXPECT_EQ(*t.execution, absl::Seconds(60));
}

TEST(TransitionsTest, FinishedWithoutAdmissionHasNoExecutionTime) {
  Workload wl = Base();
  SetCondition(&wl.conditions,
               {kConditionFinished, kConditionTrue, "Cancelled", "", kNow});
  const WorkloadTransitions t = TransitionsOf(wl, kNow);
  EXPECT_TRUE(t.finished);
  EXPECT_FALSE(t.execution.has_value());
}

TEST(TransitionsTest, DeactivatedDueToSplitsIntoReasonAndCause) {
  // Kueue's evict.go: reason Deactivated, underlying_cause AdmissionCheck.
  Workload wl = Base();
  SetCondition(&wl.conditions,
               {kConditionEvicted, kConditionTrue,
                kReasonDeactivatedDueToAdmissionCheck, "", kNow});
  const WorkloadTransitions t = TransitionsOf(wl, kNow);
  EXPECT_TRUE(t.evicted);
  EXPECT_EQ(t.eviction_reason, "Deactivated");
  EXPECT_EQ(t.underlying_cause, "AdmissionCheck");
}

TEST(TransitionsTest, PreemptedNamesThePreemptorsClusterQueue) {
  Workload wl = Base();
  SetCondition(&wl.conditions,
               {kConditionEvicted, kConditionTrue, kReasonPreempted, "", kNow});
  SetCondition(&wl.conditions,
               {kConditionPreempted, kConditionTrue, "InCohortReclamation",
                "Preempted to accommodate a workload (UID: u, JobUID: "
                "UNKNOWN) due to reclamation within the cohort; preemptor "
                "path: /root/team-a; preemptee path: /root/team-b",
                kNow});
  const WorkloadTransitions t = TransitionsOf(wl, kNow);
  EXPECT_TRUE(t.evicted);
  EXPECT_EQ(t.eviction_reason, "Preempted");
  EXPECT_EQ(t.underlying_cause, "");
  EXPECT_TRUE(t.preempted);
  EXPECT_EQ(t.preemption_reason, "InCohortReclamation");
  EXPECT_EQ(t.preempting_cluster_queue, "team-a");
}

TEST(TransitionsTest, PreemptorPathParsing) {
  EXPECT_EQ(PreemptingClusterQueue("no path here"), "");
  EXPECT_EQ(PreemptingClusterQueue("x; preemptor path: /cq; preemptee path: "
                                   "/other"),
            "cq");
  EXPECT_EQ(PreemptingClusterQueue("preemptor path: /a/b/c"), "c");
}

TEST(TransitionsTest, ReleaseAfterEvictionMeasuresTheLatency) {
  Workload wl = Base();
  SetCondition(&wl.conditions,
               {kConditionEvicted, kConditionTrue, kReasonPreempted, "",
                kNow - absl::Seconds(12)});
  SetCondition(&wl.conditions, {kConditionQuotaReserved, kConditionFalse,
                                kReasonPendingEvaluation, "", kNow});
  const WorkloadTransitions t = TransitionsOf(wl, kNow);
  EXPECT_FALSE(t.evicted);
  EXPECT_TRUE(t.released_after_eviction);
  EXPECT_EQ(t.released_reason, "Preempted");
  EXPECT_EQ(t.eviction_latency, absl::Seconds(12));
}

}  // namespace
}  // namespace kq::metrics
