// The QuotaReserved=False and Admitted=False reasons of KEP-10852 as Kueue
// writes them at HEAD with its default gates (UnadmittedWorkloadsObservability
// on, UnadmittedWorkloadsExplicitStatus off), and the labels Kueue's
// kueue_unadmitted_workloads gauge counts each workload under.
//
// ReconcileInadmissibleKueueTest ports Kueue's TestReconcileInadmissible
// (pkg/controller/core/workload_controller_inadmissible_test.go) and the
// UnadmittedWorkloadsObservability cases of TestReconcile
// (workload_controller_test.go): a workload loaded with the case's status
// next to the case's queues, and the workload controller's reconcile, which
// in kq is the Rebuild that follows a change of configuration. Case names
// are Kueue's, in snake_case. Where Kueue's case reconciles a workload that
// holds quota, its want is the one reconcile that unsets the reservation
// ("LocalQueue lq is stopped", "... is terminating or missing"); that write
// triggers Kueue's next reconcile, which finds the workload without quota
// and re-derives the reason from the queues (getQueueBlocker). kq applies
// both, so its wants are that second reconcile's, noted per case.
//
// Not ported: the cases that need a terminating (deletionTimestamp)
// LocalQueue or ClusterQueue, an AdmissionGatedBy annotation, the
// UnadmittedWorkloadsExplicitStatus gate on, or the gates off; kq has none
// of these. "... when the ClusterQueue was deleted" is ported with the
// ClusterQueue never created, as kq refuses to delete a ClusterQueue whose
// workloads hold quota.
//
// UnadmittedReasonsTest drives kq's admission state through the operations
// that produce each reason kq can write, and checks the conditions and the
// metric labels (UnadmittedReasonOf) of the outcome.

#include "server/core/unadmitted.h"

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/core/conditions.h"
#include "server/core/objects.h"
#include "tests/server/admission/schedule_kueue_util.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq {

inline void PrintTo(const UnadmittedReason& r, std::ostream* os) {
  *os << "{reason=" << r.reason << " underlying_cause=" << r.underlying_cause
      << "}";
}

namespace admission {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::AdmissionCheckBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::NamespaceBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;
using kueue_port::SnakeCase;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
const NamespacedName kWl{"ns", "wl"};

Condition QuotaReservedFalse(std::string reason, std::string message) {
  return Condition{kConditionQuotaReserved, kConditionFalse, std::move(reason),
                   std::move(message)};
}
Condition NoReservation() {
  return Condition{kConditionAdmitted, kConditionFalse, kReasonNoReservation,
                   kMessageNoReservation};
}

// Expects `type` to be absent (`want` nullopt) or to carry want's status,
// reason and message (times are not compared).
void ExpectCondition(const Workload& wl, const std::string& type,
                     const std::optional<Condition>& want) {
  const Condition* got = FindCondition(wl.conditions, type);
  if (!want.has_value()) {
    EXPECT_EQ(got, nullptr) << type << " is " << got->status << " "
                            << got->reason << ": " << got->message;
    return;
  }
  ASSERT_NE(got, nullptr) << "no " << type << " condition";
  EXPECT_EQ(got->status, want->status) << type;
  EXPECT_EQ(got->reason, want->reason) << type;
  EXPECT_EQ(got->message, want->message) << type;
}

// ---------------------------------------------------------------------------
// Kueue's TestReconcileInadmissible and TestReconcile's observability cases.

struct ReconcileCase {
  std::string kueue_name;
  // The case's ClusterQueue and LocalQueue (absent: not created).
  std::optional<ClusterQueue> cq;
  std::optional<LocalQueue> lq;
  Workload workload;
  std::optional<Condition> want_quota_reserved;
  std::optional<Condition> want_admitted;
};

// Kueue's fixtures: a ClusterQueue "cq" with flavor "flavor1" (and, for the
// cases whose workload holds quota, admission check "check", which does not
// exist), a LocalQueue ns/lq pointing to it.
ClusterQueueBuilder Cq() {
  ClusterQueueBuilder cq("cq");
  cq.ResourceGroup({"cpu"}).Flavor("flavor1").Quota("cpu", "10");
  return cq;
}
LocalQueue Lq() { return LocalQueueBuilder("ns", "lq", "cq").Build(); }
// A workload in ns/lq holding quota in cq, waiting for check "check".
WorkloadBuilder Reserved() {
  WorkloadBuilder wl("wl");
  wl.Namespace("ns")
      .Queue("lq")
      .Request("cpu", "1")
      .ReserveQuota(
          AdmissionBuilder("cq").Assign("cpu", "flavor1", "1").Build(), kNow)
      .AdmissionCheck("check", kCheckStatePending);
  return wl;
}
WorkloadBuilder Pending() {
  WorkloadBuilder wl("wl");
  wl.Namespace("ns").Queue("lq");
  return wl;
}

class ReconcileInadmissibleKueueTest
    : public ::testing::TestWithParam<ReconcileCase> {};

TEST_P(ReconcileInadmissibleKueueTest, Reconcile) {
  const ReconcileCase& tc = GetParam();
  AdmissionState state;
  state.LoadObject(ResourceFlavorBuilder("flavor1").Build());
  if (tc.cq.has_value()) state.LoadObject(*tc.cq);
  if (tc.lq.has_value()) state.LoadObject(*tc.lq);
  state.LoadWorkload(tc.workload);
  state.Rebuild(kNow);
  const Workload* wl = state.FindWorkload(kWl);
  ASSERT_NE(wl, nullptr);
  ExpectCondition(*wl, kConditionQuotaReserved, tc.want_quota_reserved);
  ExpectCondition(*wl, kConditionAdmitted, tc.want_admitted);
  // A reservation the reconcile removed is gone with its admission.
  if (tc.want_quota_reserved.has_value()) {
    EXPECT_FALSE(wl->admission.has_value());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, ReconcileInadmissibleKueueTest,
    ::testing::ValuesIn(std::vector<ReconcileCase>{
        // Kueue: "LocalQueue lq is terminating or missing" (Misconfigured),
        // which unsets the reservation; then "LocalQueue lq doesn't exist".
        {.kueue_name = "should set the Misconfigured reason on "
                       "QuotaReservation condition when the LocalQueue was "
                       "deleted",
         .cq = Cq().AdmissionCheck("check").Build(),
         .workload = Reserved().Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonMisconfigured, "LocalQueue lq doesn't exist"),
         .want_admitted = NoReservation()},
        // Kueue: "LocalQueue lq is stopped", then "LocalQueue lq is
        // inactive".
        {.kueue_name = "should set the Suspended reason on QuotaReservation "
                       "condition when the LocalQueue was Hold",
         .cq = Cq().AdmissionCheck("check").Build(),
         .lq = LocalQueueBuilder("ns", "lq", "cq")
                   .StopPolicy(StopPolicy::kHold)
                   .Build(),
         .workload = Reserved().Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonSuspended,
                                                   "LocalQueue lq is inactive"),
         .want_admitted = NoReservation()},
        // Kueue: "ClusterQueue cq is terminating or missing", then
        // "ClusterQueue cq doesn't exist".
        {.kueue_name = "should set the Misconfigured reason on "
                       "QuotaReservation condition when the ClusterQueue was "
                       "deleted",
         .lq = Lq(),
         .workload = Reserved().Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonMisconfigured, "ClusterQueue cq doesn't exist"),
         .want_admitted = NoReservation()},
        // Kueue: "ClusterQueue cq is stopped", then "ClusterQueue cq is
        // inactive".
        {.kueue_name = "should set the Suspended reason on QuotaReservation "
                       "condition when the ClusterQueue was Hold",
         .cq =
             Cq().AdmissionCheck("check").StopPolicy(StopPolicy::kHold).Build(),
         .lq = Lq(),
         .workload = Reserved().Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonSuspended, "ClusterQueue cq is inactive"),
         .want_admitted = NoReservation()},
        {.kueue_name = "should set status QuotaReserved conditions to False "
                       "with reason Misconfigured if quota not reserved "
                       "LocalQueue is not created",
         .workload = Pending().Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonMisconfigured, "LocalQueue lq doesn't exist"),
         .want_admitted = NoReservation()},
        {.kueue_name = "should set status QuotaReserved conditions to False "
                       "with reason Deactivated if workload is deactivated "
                       "even if LocalQueue doesn't exist",
         .workload = Pending()
                         .Active(false)
                         .Condition(kConditionEvicted, kConditionTrue,
                                    kReasonDeactivated, kMessageDeactivated)
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonDeactivated,
                                                   kMessageDeactivated),
         .want_admitted = NoReservation()},
        {.kueue_name = "should preserve NoMatchingFlavor reason",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonNoMatchingFlavor,
                                    "No matching flavor")
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonNoMatchingFlavor,
                                                   "No matching flavor"),
         .want_admitted = NoReservation()},
        {.kueue_name = "should preserve WaitingForPodsReady reason",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonWaitingForPodsReady,
                                    "Waiting for pods ready")
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonWaitingForPodsReady,
                                                   "Waiting for pods ready"),
         .want_admitted = NoReservation()},
        {.kueue_name = "should preserve ExceedsMaxQuota reason",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonExceedsMaxQuota, "Exceeds max quota")
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonExceedsMaxQuota,
                                                   "Exceeds max quota"),
         .want_admitted = NoReservation()},
        {.kueue_name = "should transition to PendingEvaluation when all "
                       "blockages are resolved",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonSuspended,
                                    "LocalQueue lq is inactive")
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonPendingEvaluation,
                                                   kMessagePendingEvaluation),
         .want_admitted = NoReservation()},
        {.kueue_name = "should transition to PendingEvaluation when "
                       "misconfiguration (missing LocalQueue) is resolved",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonMisconfigured,
                                    "LocalQueue lq doesn't exist")
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonPendingEvaluation,
                                                   kMessagePendingEvaluation),
         .want_admitted = NoReservation()},
        // Kueue runs it with UnadmittedWorkloadsObservability off; with it on
        // and UnadmittedWorkloadsExplicitStatus off (the defaults) the
        // outcome is the same: no condition until the scheduler evaluates
        // the workload (TestReconcile's "newly created workload (initial
        // reconcile, ExplicitStatus disabled)").
        {.kueue_name = "should not write QuotaReserved condition on newly "
                       "created workload",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending().Build()},
        {.kueue_name = "should set status QuotaReserved conditions to False "
                       "with reason Suspended if quota not reserved "
                       "LocalQueue StopPolicy=Hold",
         .lq = LocalQueueBuilder("ns", "lq", "")
                   .StopPolicy(StopPolicy::kHold)
                   .Build(),
         .workload = Pending().Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonSuspended,
                                                   "LocalQueue lq is inactive"),
         .want_admitted = NoReservation()},
        {.kueue_name = "should set status QuotaReserved conditions to False "
                       "with reason Suspended if quota not reserved "
                       "LocalQueue StopPolicy=HoldAndDrain",
         .lq = LocalQueueBuilder("ns", "lq", "")
                   .StopPolicy(StopPolicy::kHoldAndDrain)
                   .Build(),
         .workload = Pending().Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonSuspended,
                                                   "LocalQueue lq is inactive"),
         .want_admitted = NoReservation()},
        {.kueue_name = "should set status QuotaReserved conditions to False "
                       "with reason Misconfigured if quota not reserved "
                       "ClusterQueue is not created",
         .lq = Lq(),
         .workload = Pending().Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonMisconfigured, "ClusterQueue cq doesn't exist"),
         .want_admitted = NoReservation()},
        {.kueue_name = "should set status QuotaReserved conditions to False "
                       "with reason Suspended if quota not reserved "
                       "ClusterQueue StopPolicy=Hold",
         .cq = Cq().StopPolicy(StopPolicy::kHold).Build(),
         .lq = Lq(),
         .workload = Pending().Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonSuspended, "ClusterQueue cq is inactive"),
         .want_admitted = NoReservation()},
        // TestReconcile (workload_controller_test.go).
        {.kueue_name = "workload that is deactivated should set "
                       "QuotaReserved condition to Deactivated (observability "
                       "enabled)",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Active(false)
                         .Condition(kConditionEvicted, kConditionTrue,
                                    kReasonDeactivated, kMessageDeactivated)
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonDeactivated,
                                                   kMessageDeactivated),
         .want_admitted = NoReservation()},
        {.kueue_name = "workload that is reactivated should clear Deactivated "
                       "condition and transition to PendingEvaluation "
                       "(observability enabled)",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonDeactivated, kMessageDeactivated)
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonPendingEvaluation,
                                                   kMessagePendingEvaluation),
         .want_admitted = NoReservation()},
        {.kueue_name = "workload with legacy Pending reason should transition "
                       "to PendingEvaluation (observability enabled)",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    "Pending", "Workload is pending")
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonPendingEvaluation,
                                                   kMessagePendingEvaluation),
         .want_admitted = NoReservation()},
        {.kueue_name = "workload with granular PendingEvaluation reason "
                       "should preserve it when queue is active (observability "
                       "enabled)",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonPendingEvaluation,
                                    kMessagePendingEvaluation)
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(kReasonPendingEvaluation,
                                                   kMessagePendingEvaluation),
         .want_admitted = NoReservation()},
        {.kueue_name = "inadmissible workload due to missing LocalQueue "
                       "(observability enabled)",
         .workload = WorkloadBuilder("wl")
                         .Namespace("ns")
                         .Queue("non-existent-lq")
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonMisconfigured, "LocalQueue non-existent-lq doesn't exist"),
         .want_admitted = NoReservation()},
        {.kueue_name = "inadmissible workload due to stopped ClusterQueue "
                       "(observability enabled)",
         .cq = Cq().StopPolicy(StopPolicy::kHoldAndDrain).Build(),
         .lq = Lq(),
         .workload = Pending().Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonSuspended, "ClusterQueue cq is inactive"),
         .want_admitted = NoReservation()},
        // The scheduler's detailed message stays until its next cycle
        // (TestReconcile's "... (keep detailed scheduler message)", without
        // the equivalence-hash bypass).
        {.kueue_name = "reconcile keeps the detailed scheduler message",
         .cq = Cq().Build(),
         .lq = Lq(),
         .workload = Pending()
                         .Request("cpu", "1")
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonWaitingForQuota,
                                    "insufficient CPU in ClusterQueue cq")
                         .Build(),
         .want_quota_reserved = QuotaReservedFalse(
             kReasonWaitingForQuota, "insufficient CPU in ClusterQueue cq"),
         .want_admitted = NoReservation()},
    }),
    [](const auto& info) { return SnakeCase(info.param.kueue_name); });

// ---------------------------------------------------------------------------
// Every reason kq writes, from the operations that lead to it.

// ClusterQueue "cq" (4 CPUs of flavor "default", preempting lower
// priorities within itself) and LocalQueue ns/lq.
class UnadmittedReasonsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_.LoadObject(ResourceFlavorBuilder("default").Build());
    state_.LoadObject(ResourceFlavorBuilder("tainted")
                          .Taint("key", "value", "NoSchedule")
                          .Build());
    state_.LoadObject(NamespaceBuilder("ns").Build());
    state_.LoadObject(ClusterQueueBuilder("cq")
                          .WithinClusterQueue("LowerPriority")
                          .ResourceGroup({"cpu"})
                          .Flavor("default")
                          .Quota("cpu", "4")
                          .Build());
    state_.LoadObject(LocalQueueBuilder("ns", "lq", "cq").Build());
    state_.Rebuild(kNow);
  }

  // Applies `object` as kqd's engine does (Put, then Rebuild).
  void Apply(ConfigObject object) {
    state_.PutObject(std::move(object), "uid", kNow);
    state_.Rebuild(kNow);
  }
  const Workload& Submit(std::string name, std::string queue, int32_t priority,
                         absl::string_view cpu) {
    return state_.AddWorkload(WorkloadBuilder(name)
                                  .Namespace("ns")
                                  .Queue(std::move(queue))
                                  .Priority(priority)
                                  .Request("cpu", cpu)
                                  .Build(),
                              "uid-" + name, kNow);
  }
  const Workload& Get(const std::string& name) {
    return *state_.FindWorkload({"ns", name});
  }
  // Expects the workload's QuotaReserved and Admitted conditions, and the
  // labels Kueue's kueue_unadmitted_workloads counts it under.
  void Expect(const std::string& name, std::optional<Condition> reserved,
              std::optional<Condition> admitted,
              std::optional<UnadmittedReason> metric) {
    SCOPED_TRACE(name);
    const Workload& wl = Get(name);
    ExpectCondition(wl, kConditionQuotaReserved, reserved);
    ExpectCondition(wl, kConditionAdmitted, admitted);
    EXPECT_EQ(UnadmittedReasonOf(wl), metric);
  }

  AdmissionState state_;
};

TEST_F(UnadmittedReasonsTest, NotEvaluatedYetHasNoConditions) {
  Submit("wl", "lq", 0, "1");
  Expect("wl", std::nullopt, std::nullopt,
         UnadmittedReason{kReasonNoReservation, kReasonPendingEvaluation});
}

TEST_F(UnadmittedReasonsTest, AdmittedIsNotCounted) {
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  Expect("wl",
         Condition{kConditionQuotaReserved, kConditionTrue,
                   kReasonQuotaReserved, "Quota reserved in ClusterQueue cq"},
         Condition{kConditionAdmitted, kConditionTrue, kReasonAdmitted,
                   kMessageAdmitted},
         std::nullopt);
}

TEST_F(UnadmittedReasonsTest, MisconfiguredMissingLocalQueue) {
  Submit("wl", "nope", 0, "1");
  Expect(
      "wl",
      QuotaReservedFalse(kReasonMisconfigured, "LocalQueue nope doesn't exist"),
      NoReservation(),
      UnadmittedReason{kReasonNoReservation, kReasonMisconfigured});
  // The LocalQueue appears: the blocker is gone, the scheduler has not
  // looked yet.
  Apply(LocalQueueBuilder("ns", "nope", "cq").Build());
  Expect(
      "wl",
      QuotaReservedFalse(kReasonPendingEvaluation, kMessagePendingEvaluation),
      NoReservation(),
      UnadmittedReason{kReasonNoReservation, kReasonPendingEvaluation});
  state_.RunPasses(kNow);
  EXPECT_TRUE(HoldsQuota(Get("wl")));
}

TEST_F(UnadmittedReasonsTest, MisconfiguredMissingClusterQueue) {
  Apply(LocalQueueBuilder("ns", "orphan", "gone").Build());
  Submit("wl", "orphan", 0, "1");
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(kReasonMisconfigured,
                            "ClusterQueue gone doesn't exist"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonMisconfigured});
}

TEST_F(UnadmittedReasonsTest, MisconfiguredNamespaceSelector) {
  Apply(ClusterQueueBuilder("cq")
            .NamespaceSelector(kueue_port::DepIn("eng"))
            .WithinClusterQueue("LowerPriority")
            .ResourceGroup({"cpu"})
            .Flavor("default")
            .Quota("cpu", "4")
            .Build());
  Submit("wl", "lq", 0, "1");
  // Kueue's workload controller writes it before the scheduler does.
  Expect("wl",
         QuotaReservedFalse(
             kReasonMisconfigured,
             "workload namespace doesn't match ClusterQueue selector"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonMisconfigured});
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(
             kReasonMisconfigured,
             "workload namespace doesn't match ClusterQueue selector"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonMisconfigured});
}

TEST_F(UnadmittedReasonsTest, SuspendedStoppedLocalQueue) {
  Apply(LocalQueueBuilder("ns", "lq", "cq")
            .StopPolicy(StopPolicy::kHold)
            .Build());
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(kReasonSuspended, "LocalQueue lq is inactive"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonSuspended});
}

TEST_F(UnadmittedReasonsTest, SuspendedInactiveClusterQueue) {
  // A ClusterQueue naming a flavor that does not exist is inactive.
  Apply(ClusterQueueBuilder("cq")
            .ResourceGroup({"cpu"})
            .Flavor("missing")
            .Quota("cpu", "4")
            .Build());
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(kReasonSuspended, "ClusterQueue cq is inactive"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonSuspended});
}

TEST_F(UnadmittedReasonsTest, DeactivatedAndReactivated) {
  Submit("big", "lq", 0, "4");
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  ASSERT_EQ(
      FindCondition(Get("wl").conditions, kConditionQuotaReserved)->reason,
      kReasonWaitingForQuota);
  ASSERT_OK(state_.SetActive({"ns", "wl"}, false, kNow).status());
  Expect("wl", QuotaReservedFalse(kReasonDeactivated, kMessageDeactivated),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonDeactivated});
  ASSERT_OK(state_.SetActive({"ns", "wl"}, true, kNow).status());
  Expect(
      "wl",
      QuotaReservedFalse(kReasonPendingEvaluation, kMessagePendingEvaluation),
      NoReservation(),
      UnadmittedReason{kReasonNoReservation, kReasonPendingEvaluation});
}

TEST_F(UnadmittedReasonsTest, DeactivatedWhileAdmitted) {
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  ASSERT_TRUE(HoldsQuota(Get("wl")));
  // No runner: the quota is released at once, and the workload controller
  // then finds it inactive.
  ASSERT_OK(state_.SetActive({"ns", "wl"}, false, kNow).status());
  Expect("wl", QuotaReservedFalse(kReasonDeactivated, kMessageDeactivated),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonDeactivated});
}

TEST_F(UnadmittedReasonsTest, NoMatchingFlavor) {
  Apply(ClusterQueueBuilder("cq")
            .ResourceGroup({"cpu"})
            .Flavor("tainted")
            .Quota("cpu", "4")
            .Build());
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(kReasonNoMatchingFlavor,
                            "couldn't assign flavors to pod set main: "
                            "untolerated taint {key value NoSchedule <nil>} in "
                            "flavor tainted"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonNoMatchingFlavor});
}

TEST_F(UnadmittedReasonsTest, ExceedsMaxQuota) {
  Submit("wl", "lq", 0, "5");
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(kReasonExceedsMaxQuota,
                            "couldn't assign flavors to pod set main: "
                            "insufficient quota for cpu in flavor default, "
                            "previously considered podsets requests (0) + "
                            "current podset request (5) > maximum capacity "
                            "(4)"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonExceedsMaxQuota});
}

TEST_F(UnadmittedReasonsTest, WaitingForQuota) {
  Submit("big", "lq", 0, "4");
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(kReasonWaitingForQuota,
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for cpu in flavor "
                            "default, 1 more needed"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonWaitingForQuota});
}

TEST_F(UnadmittedReasonsTest, WaitingForPreemptedWorkloads) {
  Submit("low", "lq", 0, "4");
  state_.RunPasses(kNow);
  // Its runner keeps the quota until it confirms the stop.
  ASSERT_OK(
      state_.Heartbeat({"ns", "low"}, "r1", absl::Seconds(60), false, kNow)
          .status());
  Submit("wl", "lq", 100, "4");
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(kReasonWaitingForPreemptedWorkloads,
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for cpu in flavor "
                            "default, 4 more needed. Pending the preemption "
                            "of 1 workload(s)"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation,
                          kReasonWaitingForPreemptedWorkloads});
  // The victim, still admitted while it stops, is not counted.
  EXPECT_EQ(UnadmittedReasonOf(Get("low")), std::nullopt);
}

TEST_F(UnadmittedReasonsTest, PendingEvaluationAfterEviction) {
  Apply(
      AdmissionCheckBuilder("prov").ControllerName("example.com/prov").Build());
  Apply(ClusterQueueBuilder("cq")
            .ResourceGroup({"cpu"})
            .Flavor("default")
            .Quota("cpu", "4")
            .AdmissionCheck("prov")
            .Build());
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  // Quota reserved, the check not Ready yet.
  Expect("wl",
         Condition{kConditionQuotaReserved, kConditionTrue,
                   kReasonQuotaReserved, "Quota reserved in ClusterQueue cq"},
         Condition{kConditionAdmitted, kConditionFalse,
                   kReasonUnsatisfiedAdmissionChecks,
                   kMessageUnsatisfiedAdmissionChecks},
         UnadmittedReason{kReasonUnsatisfiedAdmissionChecks, ""});
  // The check asks to retry in a minute: evicted, quota released, waiting
  // out the backoff with the eviction's message.
  ASSERT_OK(state_
                .SetAdmissionCheckState({"ns", "wl"}, "prov", kCheckStateRetry,
                                        "", 60, kNow)
                .status());
  Expect("wl",
         QuotaReservedFalse(kReasonPendingEvaluation,
                            "Evicted due to AdmissionCheck in Retry state: "
                            "\"prov\""),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonPendingEvaluation});
}

TEST_F(UnadmittedReasonsTest, PendingEvaluationWithFailedChecks) {
  // A workload whose status carries a check in Retry is not evaluated
  // (Kueue's nominate: "The workload has failed admission checks").
  state_.LoadWorkload(WorkloadBuilder("wl")
                          .Namespace("ns")
                          .Queue("lq")
                          .Request("cpu", "1")
                          .AdmissionCheck("prov", kCheckStateRetry)
                          .Build());
  state_.Rebuild(kNow);
  state_.RunPasses(kNow);
  Expect("wl",
         QuotaReservedFalse(kReasonPendingEvaluation,
                            "The workload has failed admission checks"),
         NoReservation(),
         UnadmittedReason{kReasonNoReservation, kReasonPendingEvaluation});
}

TEST_F(UnadmittedReasonsTest, ReservationRemovedWhenItsLocalQueueGoes) {
  Apply(
      AdmissionCheckBuilder("prov").ControllerName("example.com/prov").Build());
  Apply(ClusterQueueBuilder("cq")
            .ResourceGroup({"cpu"})
            .Flavor("default")
            .Quota("cpu", "4")
            .AdmissionCheck("prov")
            .Build());
  Submit("wl", "lq", 0, "1");
  state_.RunPasses(kNow);
  ASSERT_TRUE(HoldsQuota(Get("wl")));
  ASSERT_OK(state_.RemoveObject({ObjectKind::kLocalQueue, "ns", "lq"}));
  state_.Rebuild(kNow);
  EXPECT_FALSE(HoldsQuota(Get("wl")));
  Expect(
      "wl",
      QuotaReservedFalse(kReasonMisconfigured, "LocalQueue lq doesn't exist"),
      NoReservation(),
      UnadmittedReason{kReasonNoReservation, kReasonMisconfigured});
}

TEST_F(UnadmittedReasonsTest, EmptyNoFitReasonWritesNothing) {
  // A pod set whose first resource (in Kueue's hash order, memory before
  // example.com/fpga) gets a flavor and whose next is not covered by the
  // ClusterQueue: Kueue's resolveNoFitReason finds no NoFit attempt and
  // leaves the reason empty; the API server refuses a condition without a
  // reason, so the workload keeps the conditions it had (none).
  Apply(ClusterQueueBuilder("cq")
            .ResourceGroup({"memory"})
            .Flavor("default")
            .Quota("memory", "4Gi")
            .Build());
  state_.AddWorkload(WorkloadBuilder("wl")
                         .Namespace("ns")
                         .Queue("lq")
                         .Request("memory", "1Gi")
                         .Request("example.com/fpga", "1")
                         .Build(),
                     "uid-wl", kNow);
  state_.RunPasses(kNow);
  Expect("wl", std::nullopt, std::nullopt,
         UnadmittedReason{kReasonNoReservation, kReasonPendingEvaluation});
  EXPECT_FALSE(HoldsQuota(Get("wl")));
}

TEST_F(UnadmittedReasonsTest, CountsPerClusterQueue) {
  Apply(LocalQueueBuilder("ns", "orphan", "gone").Build());
  Submit("big", "lq", 0, "4");         // admitted: not counted
  Submit("wait-1", "lq", 0, "1");      // WaitingForQuota
  Submit("wait-2", "lq", 0, "2");      // WaitingForQuota
  Submit("huge", "lq", 0, "5");        // ExceedsMaxQuota
  Submit("orphan", "orphan", 0, "1");  // counted under "gone"
  Submit("lost", "nope", 0, "1");      // no LocalQueue: not counted
  state_.RunPasses(kNow);
  Submit("new", "lq", 0, "1");  // not evaluated yet
  const std::map<UnadmittedReason, int64_t> want_cq = {
      {{kReasonNoReservation, kReasonExceedsMaxQuota}, 1},
      {{kReasonNoReservation, kReasonPendingEvaluation}, 1},
      {{kReasonNoReservation, kReasonWaitingForQuota}, 2},
  };
  EXPECT_EQ(state_.UnadmittedWorkloadCounts("cq"), want_cq);
  EXPECT_EQ(state_.UnadmittedWorkloadCounts("gone"),
            (std::map<UnadmittedReason, int64_t>{
                {{kReasonNoReservation, kReasonMisconfigured}, 1}}));
  EXPECT_TRUE(state_.UnadmittedWorkloadCounts("other").empty());
  const std::map<std::string, std::map<UnadmittedReason, int64_t>> want_all = {
      {"cq", want_cq},
      {"gone", {{{kReasonNoReservation, kReasonMisconfigured}, 1}}},
  };
  EXPECT_EQ(state_.UnadmittedWorkloadCounts(), want_all);
}

}  // namespace
}  // namespace admission
}  // namespace kq
