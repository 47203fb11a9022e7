// Kueue's provisioning admission check in kqd's admission state:
//
// - The AdmissionCheck's Active condition for controller
//   kueue.x-k8s.io/provisioning-request, ported from Kueue's
//   pkg/controller/admissionchecks/provisioning/admissioncheck_reconciler_
//   test.go (TestReconcileAdmissionCheck), and what an inactive check does to
//   its ClusterQueue and workloads (Kueue's AdmissionCheckInactive).
// - podSetUpdates as its controller reports them with a check's state:
//   stored and replaced with each state (Kueue's pkg/workload/patching
//   TestSetCheckState "update check" cases; "add new check" has no
//   counterpart, kq only updates checks its ClusterQueue put there), refused
//   as Kueue's webhook refuses them (ValidateWorkloadUpdate's immutability
//   cases of pkg/webhooks/workload_webhook_test.go), reset on eviction
//   (resetChecksOnEviction), and kept through the codec the store uses.
//
// "unrelated check" differs from Kueue by design: Kueue's provisioning
// reconciler leaves a foreign check's condition alone (nil), while kq,
// which runs no check controllers, reports every other check Active=True.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/codec/codec.h"
#include "server/core/objects.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::admission {
namespace {

using ::kq::testing::AdmissionCheckBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

ProvisioningRequestConfig Config(const std::string& name) {
  ProvisioningRequestConfig prc;
  prc.meta.name = name;
  prc.provisioning_class_name = "check-capacity.autoscaling.x-k8s.io";
  return prc;
}

// ---------------------------------------------------------------------------
// TestReconcileAdmissionCheck.

struct ActiveCase {
  std::string name;  // Kueue's
  std::vector<ProvisioningRequestConfig> configs;
  AdmissionCheck check;
  Condition want;  // last_transition_time is the check's creation time
};

void PrintTo(const ActiveCase& c, std::ostream* os) { *os << c.name; }

class AdmissionCheckActiveTest : public ::testing::TestWithParam<ActiveCase> {};

TEST_P(AdmissionCheckActiveTest, ReconcileAdmissionCheck) {
  const ActiveCase& tc = GetParam();
  AdmissionState state;
  for (const ProvisioningRequestConfig& c : tc.configs) state.LoadObject(c);
  state.LoadObject(tc.check);
  state.Rebuild(kStart);
  const ObjectView view = state.ViewOf(ConfigObject(tc.check));
  ASSERT_EQ(view.conditions.size(), 1u);
  Condition want = tc.want;
  want.type = kConditionActive;
  want.last_transition_time = tc.check.meta.creation_timestamp;
  EXPECT_EQ(view.conditions[0], want);
}

AdmissionCheck Check(std::string controller) {
  AdmissionCheck check = AdmissionCheckBuilder("check1")
                             .ControllerName(std::move(controller))
                             .Build();
  check.meta.creation_timestamp = kStart;
  return check;
}

AdmissionCheck ProvisioningCheck(std::string group, std::string kind,
                                 std::string name) {
  AdmissionCheck check = Check(kProvisioningRequestControllerName);
  check.parameters_api_group = std::move(group);
  check.parameters_kind = std::move(kind);
  check.parameters_name = std::move(name);
  return check;
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, AdmissionCheckActiveTest,
    ::testing::ValuesIn(std::vector<ActiveCase>{
        {.name = "unrelated_check",
         .check = Check("other-controller"),
         .want = {.status = "True",
                  .reason = "Active",
                  .message = "The admission check is active"}},
        {.name = "no_parameters_specified",
         .check = Check(kProvisioningRequestControllerName),
         .want = {.status = "False",
                  .reason = "BadParametersRef",
                  .message = "missing parameters reference"}},
        {.name = "bad_ref_group",
         .check = ProvisioningCheck("bad.group", "ProvisioningRequestConfig",
                                    "config1"),
         .want = {.status = "False",
                  .reason = "BadParametersRef",
                  .message = "wrong group \"bad.group\", expecting "
                             "\"kueue.x-k8s.io\": bad parameters reference"}},
        {.name = "bad_ref_kind",
         .check = ProvisioningCheck("kueue.x-k8s.io", "BadKind", "config1"),
         .want = {.status = "False",
                  .reason = "BadParametersRef",
                  .message = "wrong kind \"BadKind\", expecting "
                             "\"ProvisioningRequestConfig\": bad parameters "
                             "reference"}},
        {.name = "config_missing",
         .check = ProvisioningCheck("kueue.x-k8s.io",
                                    "ProvisioningRequestConfig", "config1"),
         .want = {.status = "False",
                  .reason = "BadParametersRef",
                  .message = "provisioningrequestconfigs.kueue.x-k8s.io "
                             "\"config1\" not found"}},
        {.name = "config_found",
         .configs = {Config("config1")},
         .check = ProvisioningCheck("kueue.x-k8s.io",
                                    "ProvisioningRequestConfig", "config1"),
         .want = {.status = "True",
                  .reason = "Active",
                  .message = "The admission check is active"}},
        // Kueue's refValidForGK, before the group.
        {.name = "empty_name",
         .check = ProvisioningCheck("kueue.x-k8s.io",
                                    "ProvisioningRequestConfig", ""),
         .want = {.status = "False",
                  .reason = "BadParametersRef",
                  .message = "empty name: bad parameters reference"}},
    }),
    [](const auto& info) { return info.param.name; });

TEST(AdmissionCheckActiveTest, TurnsActiveWhenItsConfigAppears) {
  AdmissionState state;
  state.PutObject(
      ProvisioningCheck("kueue.x-k8s.io", "ProvisioningRequestConfig", "cfg"),
      "uid-check", kStart);
  const absl::Time later = kStart + absl::Minutes(5);
  state.PutObject(Config("cfg"), "uid-cfg", later);
  const Condition active = state.AdmissionCheckActiveCondition(
      state.admission_checks().at("check1"));
  EXPECT_EQ(active.status, "True");
  EXPECT_EQ(active.last_transition_time, later);
  ASSERT_OK(
      state.RemoveObject({ObjectKind::kProvisioningRequestConfig, "", "cfg"}));
  EXPECT_EQ(
      state.AdmissionCheckActiveCondition(state.admission_checks().at("check1"))
          .reason,
      "BadParametersRef");
}

// ---------------------------------------------------------------------------
// A ClusterQueue with a provisioning check: inactive while its config is
// missing (Kueue's AdmissionCheckInactive), then admitting.

class ProvisioningCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_.LoadObject(ResourceFlavorBuilder("default-flavor")
                          .NodeLabel("cloud.google.com/gke-nodepool", "pool-1")
                          .Build());
    state_.LoadObject(ClusterQueueBuilder("cluster-queue")
                          .NamespaceSelectorAll()
                          .ResourceGroup({"cpu"})
                          .Flavor("default-flavor")
                          .Quota("cpu", "9")
                          .AdmissionCheck("sample-prov", {"default-flavor"})
                          .Build());
    state_.LoadObject(
        LocalQueueBuilder("default", "user-queue", "cluster-queue").Build());
    // provisioning-setup.yaml's check.
    AdmissionCheck check = ProvisioningCheck(
        "kueue.x-k8s.io", "ProvisioningRequestConfig", "prov-test-config");
    check.meta.name = "sample-prov";
    state_.LoadObject(check);
  }

  // Loads the config the check names and rebuilds.
  void AddConfig() {
    state_.PutObject(Config("prov-test-config"), "uid-cfg", kStart);
    state_.Rebuild(kStart);
  }

  // A workload of two pod sets, "main" and "workers", with a template
  // carrying a label, an annotation and a node selector.
  const Workload& Submit(const std::string& name) {
    const Workload& wl = state_.AddWorkload(
        WorkloadBuilder(name)
            .Namespace("default")
            .Queue("user-queue")
            .PodSet("main", 1)
            .Request("cpu", "1")
            .NodeSelector("disk", "ssd")
            .Template(R"({"metadata":{"annotations":{"team":"ml"},)"
                      R"("labels":{"app":"train"}},)"
                      R"("spec":{"containers":[{"name":"c"}],)"
                      R"("nodeSelector":{"disk":"ssd"}}})")
            .PodSet("workers", 2)
            .Request("cpu", "1")
            .Build(),
        "uid-" + name, kStart);
    state_.RunPasses(kStart);
    return *state_.FindWorkload(KeyOf(wl));
  }

  const Workload& Get(const std::string& name) {
    return *state_.FindWorkload({"default", name});
  }

  AdmissionState state_;
};

TEST_F(ProvisioningCheckTest, MissingConfigKeepsTheClusterQueueInactive) {
  state_.Rebuild(kStart);
  const ObjectView cq = state_.ViewOf(
      *state_.FindObject({ObjectKind::kClusterQueue, "", "cluster-queue"}));
  ASSERT_TRUE(cq.status.has_value());
  ASSERT_EQ(cq.status->conditions.size(), 1u);
  EXPECT_EQ(cq.status->conditions[0].status, "False");
  EXPECT_EQ(cq.status->conditions[0].reason, "AdmissionCheckInactive");
  EXPECT_EQ(cq.status->conditions[0].message,
            "Can't admit new workloads: references inactive AdmissionCheck(s): "
            "sample-prov.");
  const Workload& wl = Submit("w");
  EXPECT_FALSE(HoldsQuota(wl));
  const Condition* pending = FindCondition(wl.conditions, "QuotaReserved");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->message, "ClusterQueue cluster-queue is inactive");

  // The config appears: the queue turns active and the workload reserves
  // quota, its check Pending.
  AddConfig();
  state_.RunPasses(kStart);
  EXPECT_TRUE(HoldsQuota(Get("w")));
  ASSERT_EQ(Get("w").admission_checks.size(), 1u);
  EXPECT_EQ(Get("w").admission_checks[0].name, "sample-prov");
  EXPECT_EQ(Get("w").admission_checks[0].state, "Pending");
  EXPECT_EQ(StateOf(Get("w")), WorkloadState::kQuotaReserved);
}

TEST_F(ProvisioningCheckTest, ReadyStoresPodSetUpdatesAndAdmits) {
  AddConfig();
  ASSERT_TRUE(HoldsQuota(Submit("w")));
  const std::vector<PodSetUpdate> updates = {
      {.name = "main",
       .annotations = {{"autoscaling.x-k8s.io/consume-provisioning-request",
                        "w-sample-prov-1"},
                       {"autoscaling.x-k8s.io/provisioning-class-name",
                        "check-capacity.autoscaling.x-k8s.io"}},
       .node_selector = {{"cloud.google.com/gke-nodepool", "pool-1"}}},
      {.name = "workers",
       .labels = {{"provisioned", "true"}},
       .tolerations = {
           {.key = "nvidia.com/gpu", .op = "Exists", .effect = "NoSchedule"}}}};
  const absl::Time ready_at = kStart + absl::Seconds(7);
  ASSERT_OK_AND_ASSIGN(
      Workload wl, state_.SetAdmissionCheckState(
                       {"default", "w"}, "sample-prov", "Ready", "provisioned",
                       std::nullopt, ready_at, updates));
  EXPECT_EQ(StateOf(wl), WorkloadState::kAdmitted);
  ASSERT_EQ(wl.admission_checks.size(), 1u);
  EXPECT_EQ(wl.admission_checks[0].state, "Ready");
  EXPECT_EQ(wl.admission_checks[0].last_transition_time, ready_at);
  EXPECT_EQ(wl.admission_checks[0].pod_set_updates, updates);
  EXPECT_EQ(Get("w").admission_checks[0].pod_set_updates, updates);

  // What the store and the API carry.
  v1::Workload proto = codec::ToProto(Get("w"));
  ASSERT_EQ(proto.status().admission_checks(0).pod_set_updates_size(), 2);
  EXPECT_EQ(
      proto.status().admission_checks(0).pod_set_updates(0).node_selector().at(
          "cloud.google.com/gke-nodepool"),
      "pool-1");
  ASSERT_OK_AND_ASSIGN(Workload back, codec::FromProto(proto));
  EXPECT_EQ(back, Get("w"));

  // The same updates again while Ready: accepted (nothing changes).
  ASSERT_OK(state_
                .SetAdmissionCheckState({"default", "w"}, "sample-prov",
                                        "Ready", "provisioned", std::nullopt,
                                        ready_at + absl::Seconds(1), updates)
                .status());
  EXPECT_EQ(Get("w").admission_checks[0].last_transition_time, ready_at);
}

// Kueue's TestSetCheckState "update check" (with and without a transition
// time: kq stamps it with the time of the state change).
TEST_F(ProvisioningCheckTest, UpdateCheckReplacesStateMessageAndUpdates) {
  state_.LoadObject(
      AdmissionCheckBuilder("check2").ControllerName("x").Build());
  ClusterQueue cq = state_.cluster_queues().at("cluster-queue");
  cq.admission_checks = {{.name = "check1"}, {.name = "check2"}};
  state_.LoadObject(ProvisioningCheck(
      "kueue.x-k8s.io", "ProvisioningRequestConfig", "prov-test-config"));
  state_.LoadObject(cq);
  AddConfig();
  ASSERT_TRUE(HoldsQuota(Submit("w")));
  const std::vector<PodSetUpdate> ps1_updates = {
      {.name = "main",
       .labels = {{"l1", "l1v"}},
       .annotations = {{"a1", "a1v"}},
       .node_selector = {{"ns1", "ms1v"}},
       .tolerations = {{.key = "t1",
                        .op = "Equal",
                        .value = "t1v",
                        .effect = "NoSchedule",
                        .toleration_seconds = 5}}}};
  // tolerationSeconds needs NoExecute in Kueue's CRD: the controller's
  // update is refused as the API server would refuse it.
  EXPECT_THAT(
      state_.SetAdmissionCheckState({"default", "w"}, "check1", "Ready", "msg2",
                                    std::nullopt, kStart, ps1_updates),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("effect must be 'NoExecute'")));
  std::vector<PodSetUpdate> updates = ps1_updates;
  updates[0].tolerations[0].effect = "NoExecute";
  const absl::Time t1 = kStart + absl::Seconds(5);
  ASSERT_OK_AND_ASSIGN(Workload wl, state_.SetAdmissionCheckState(
                                        {"default", "w"}, "check1", "Ready",
                                        "msg2", std::nullopt, t1, updates));
  ASSERT_EQ(wl.admission_checks.size(), 2u);
  EXPECT_EQ(wl.admission_checks[0],
            (AdmissionCheckState{.name = "check1",
                                 .state = "Ready",
                                 .last_transition_time = t1,
                                 .message = "msg2",
                                 .pod_set_updates = updates}));
  EXPECT_EQ(wl.admission_checks[1],
            (AdmissionCheckState{.name = "check2",
                                 .state = "Pending",
                                 .last_transition_time = kStart}));
  // check2 is not Ready yet.
  EXPECT_EQ(StateOf(wl), WorkloadState::kQuotaReserved);
}

// Kueue's "podSetUpdates should be immutable when state is ready".
TEST_F(ProvisioningCheckTest, PodSetUpdatesAreImmutableWhileReady) {
  AddConfig();
  ASSERT_TRUE(HoldsQuota(Submit("w")));
  const std::vector<PodSetUpdate> before = {
      {.name = "main", .labels = {{"foo", "bar"}}}, {.name = "workers"}};
  ASSERT_OK(state_
                .SetAdmissionCheckState({"default", "w"}, "sample-prov",
                                        "Ready", "", std::nullopt, kStart,
                                        before)
                .status());
  const Workload snapshot = Get("w");
  std::vector<PodSetUpdate> after = before;
  after[0].labels["foo"] = "baz";
  EXPECT_THAT(
      state_.SetAdmissionCheckState({"default", "w"}, "sample-prov", "Ready",
                                    "", std::nullopt, kStart, after),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Workload \"default/w\": status.admissionChecks[0]."
               "podSetUpdates: Invalid value: field is immutable while the "
               "check stays Ready"));
  // Left out is a change too.
  EXPECT_THAT(state_.SetAdmissionCheckState({"default", "w"}, "sample-prov",
                                            "Ready", "", std::nullopt, kStart),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field is immutable")));
  EXPECT_EQ(Get("w"), snapshot);

  // Kueue's "should change other fields of admissionchecks when
  // podSetUpdates is immutable".
  ASSERT_OK_AND_ASSIGN(Workload wl,
                       state_.SetAdmissionCheckState(
                           {"default", "w"}, "sample-prov", "Ready", "new",
                           std::nullopt, kStart + absl::Seconds(1), before));
  EXPECT_EQ(wl.admission_checks[0].message, "new");

  // Leaving Ready lifts the rule: Pending replaces the updates (here with
  // none), as Kueue's SetAdmissionCheckState does.
  ASSERT_OK_AND_ASSIGN(wl, state_.SetAdmissionCheckState(
                               {"default", "w"}, "sample-prov", "Pending", "",
                               std::nullopt, kStart + absl::Seconds(2)));
  EXPECT_THAT(wl.admission_checks[0].pod_set_updates, IsEmpty());
  EXPECT_EQ(StateOf(wl), WorkloadState::kQuotaReserved);
  ASSERT_OK(state_
                .SetAdmissionCheckState({"default", "w"}, "sample-prov",
                                        "Ready", "", std::nullopt,
                                        kStart + absl::Seconds(3), after)
                .status());
  EXPECT_EQ(Get("w").admission_checks[0].pod_set_updates, after);
}

TEST_F(ProvisioningCheckTest, RefusedUpdatesChangeNothing) {
  AddConfig();
  ASSERT_TRUE(HoldsQuota(Submit("w")));
  const Workload snapshot = Get("w");
  EXPECT_THAT(
      state_.SetAdmissionCheckState({"default", "w"}, "sample-prov", "Ready",
                                    "", std::nullopt, kStart,
                                    {{.name = "main"}, {.name = "launcher"}}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Workload \"default/w\": status.admissionChecks[0]."
               "podSetUpdates[1].name: Unsupported value: \"launcher\": "
               "supported values: \"main\", \"workers\""));
  // Conflicts with what the pods get anyway: the template, the flavor.
  EXPECT_THAT(
      state_.SetAdmissionCheckState(
          {"default", "w"}, "sample-prov", "Ready", "", std::nullopt, kStart,
          {{.name = "main", .labels = {{"app", "serve"}}}}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Workload \"default/w\": status.admissionChecks[0]."
               "podSetUpdates[0].labels[app]: Invalid value: \"serve\": "
               "conflicts with \"train\" in the pod set's template"));
  EXPECT_THAT(
      state_.SetAdmissionCheckState(
          {"default", "w"}, "sample-prov", "Ready", "", std::nullopt, kStart,
          {{.name = "workers",
            .node_selector = {{"cloud.google.com/gke-nodepool", "pool-2"}}}}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("conflicts with \"pool-1\" in the nodeLabels of "
                         "ResourceFlavor \"default-flavor\"")));
  EXPECT_EQ(Get("w"), snapshot);
  EXPECT_EQ(StateOf(Get("w")), WorkloadState::kQuotaReserved);
}

// resetChecksOnEviction: an evicted workload's checks start over without
// their podSetUpdates, and keep none through its next reservation.
TEST_F(ProvisioningCheckTest, EvictionResetsChecksAndTheirUpdates) {
  AddConfig();
  ASSERT_TRUE(HoldsQuota(Submit("w")));
  const std::vector<PodSetUpdate> updates = {
      {.name = "main", .annotations = {{"prov", "w-1"}}}};
  ASSERT_OK(state_
                .SetAdmissionCheckState({"default", "w"}, "sample-prov",
                                        "Ready", "", std::nullopt, kStart,
                                        updates)
                .status());
  ASSERT_EQ(StateOf(Get("w")), WorkloadState::kAdmitted);
  const absl::Time evicted_at = kStart + absl::Seconds(30);
  ASSERT_OK_AND_ASSIGN(
      Workload wl, state_.Preempt({"default", "w"}, "maintenance", "operator",
                                  false, evicted_at));
  ASSERT_EQ(wl.admission_checks.size(), 1u);
  EXPECT_EQ(wl.admission_checks[0],
            (AdmissionCheckState{
                .name = "sample-prov",
                .state = "Pending",
                .last_transition_time = evicted_at,
                .message = "Reset to Pending after eviction. Previously: "
                           "Ready"}));
  // Requeued after preemption and reserved again: still no updates.
  state_.RunPasses(evicted_at);
  EXPECT_TRUE(HoldsQuota(Get("w")));
  EXPECT_THAT(Get("w").admission_checks[0].pod_set_updates, IsEmpty());
  EXPECT_EQ(StateOf(Get("w")), WorkloadState::kQuotaReserved);
}

TEST_F(ProvisioningCheckTest, RetryEvictsAndDropsTheUpdates) {
  AddConfig();
  ASSERT_TRUE(HoldsQuota(Submit("w")));
  // A Retry report may carry updates (Kueue copies them); the eviction it
  // causes resets the check at once.
  ASSERT_OK_AND_ASSIGN(
      Workload wl,
      state_.SetAdmissionCheckState(
          {"default", "w"}, "sample-prov", "Retry", "capacity gone", 60, kStart,
          {{.name = "main", .labels = {{"a", "b"}}}}));
  EXPECT_EQ(FindCondition(wl.conditions, kConditionEvicted)->reason,
            "AdmissionCheck");
  EXPECT_EQ(wl.admission_checks[0].state, "Pending");
  EXPECT_THAT(wl.admission_checks[0].pod_set_updates, IsEmpty());
}

TEST_F(ProvisioningCheckTest, PendingCheckKeepsItsUpdatesThroughEviction) {
  // Kueue's resetChecksOnEviction skips Pending checks.
  AddConfig();
  ASSERT_TRUE(HoldsQuota(Submit("w")));
  const std::vector<PodSetUpdate> updates = {
      {.name = "workers", .node_selector = {{"zone", "a"}}}};
  ASSERT_OK(state_
                .SetAdmissionCheckState({"default", "w"}, "sample-prov",
                                        "Pending", "ETA 5m", std::nullopt,
                                        kStart, updates)
                .status());
  ASSERT_OK_AND_ASSIGN(Workload wl,
                       state_.Preempt({"default", "w"}, "", "operator", false,
                                      kStart + absl::Seconds(1)));
  EXPECT_EQ(wl.admission_checks[0].pod_set_updates, updates);
  EXPECT_EQ(wl.admission_checks[0].message, "ETA 5m");
}

TEST_F(ProvisioningCheckTest, DeletingTheConfigDeactivatesTheQueue) {
  AddConfig();
  ASSERT_TRUE(HoldsQuota(Submit("w")));
  state_.TakeChanges();
  ASSERT_OK(state_.RemoveObject(
      {ObjectKind::kProvisioningRequestConfig, "", "prov-test-config"}));
  state_.Rebuild(kStart);
  // Kueue keeps what holds quota; new workloads wait.
  EXPECT_TRUE(HoldsQuota(Get("w")));
  const Workload& next = Submit("next");
  EXPECT_FALSE(HoldsQuota(next));
  EXPECT_EQ(FindCondition(next.conditions, "QuotaReserved")->message,
            "ClusterQueue cluster-queue is inactive");
  EXPECT_THAT(state_.TakeChanges().objects,
              ElementsAre(Pair(ObjectKey{ObjectKind::kProvisioningRequestConfig,
                                         "", "prov-test-config"},
                               Change::kDeleted)));
}

}  // namespace
}  // namespace kq::admission
