// Kueue's MultiKueue admission check in kqd's admission state:
//
// - The AdmissionCheck's Active condition for controller
//   kueue.x-k8s.io/multikueue, ported from Kueue's
//   pkg/controller/admissionchecks/multikueue/admissioncheck_test.go
//   (TestReconcile), with each MultiKueueCluster's Active condition as the
//   federation runtime reports it (SetMultiKueueClusterActive) standing for
//   Kueue's cluster status.
// - A MultiKueueCluster's own Active condition before any report
//   (BadKubeConfig for a Secret, ClientConnectionFailed otherwise), the
//   Apply warning for a Secret, and that a report or a MultiKueueConfig
//   change re-evaluates the check and its ClusterQueue.
//
// Kueue's cases kq answers otherwise: "missing admissioncheck" has nothing
// to evaluate in kq (a condition is computed for a check that exists);
// "unmanaged": kq, which runs no check controllers, reports a foreign check
// Active=True where Kueue's reconciler leaves it without a condition.

#include <cctype>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/core/objects.h"
#include "server/core/validation.h"
#include "tests/testing/builders.h"

namespace kq::admission {
namespace {

using ::kq::testing::AdmissionCheckBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

MultiKueueConfig MakeConfig(const std::string& name,
                            std::vector<std::string> clusters) {
  MultiKueueConfig config;
  config.meta.name = name;
  config.clusters = std::move(clusters);
  return config;
}

MultiKueueCluster MakeCluster(const std::string& name,
                              const std::string& location_type = "Path") {
  MultiKueueCluster cluster;
  cluster.meta.name = name;
  cluster.location_type = location_type;
  cluster.location =
      location_type == "Path" ? "/etc/kq/" + name + ".yaml" : name + "-secret";
  return cluster;
}

AdmissionCheck MultiKueueCheck(const std::string& config_name) {
  AdmissionCheck check = AdmissionCheckBuilder("ac1")
                             .ControllerName(kMultiKueueControllerName)
                             .Build();
  check.parameters_api_group = "kueue.x-k8s.io";
  check.parameters_kind = "MultiKueueConfig";
  check.parameters_name = config_name;
  check.meta.creation_timestamp = kStart;
  return check;
}

// Kueue's MakeMultiKueueCluster(name).Active(status, "ByTest", "by test").
struct ReportedCluster {
  std::string name;
  std::string status;
};

struct ReconcileCase {
  std::string name;  // Kueue's
  friend void PrintTo(const ReconcileCase& c, std::ostream* os) {
    *os << c.name;
  }
  AdmissionCheck check;
  std::vector<MultiKueueConfig> configs;
  std::vector<ReportedCluster> clusters;
  Condition want;  // type Active
};

class MultiKueueReconcileTest : public ::testing::TestWithParam<ReconcileCase> {
};

TEST_P(MultiKueueReconcileTest, Reconcile) {
  const ReconcileCase& tc = GetParam();
  AdmissionState state;
  for (const MultiKueueConfig& c : tc.configs) state.LoadObject(c);
  for (const ReportedCluster& c : tc.clusters) {
    state.LoadObject(MakeCluster(c.name));
    state.SetMultiKueueClusterActive(
        c.name,
        Condition{kConditionActive, c.status, "ByTest", "by test", kStart});
  }
  state.LoadObject(tc.check);
  state.Rebuild(kStart);
  const ObjectView view = state.ViewOf(ConfigObject(tc.check));
  ASSERT_EQ(view.conditions.size(), 1u);
  const Condition& got = view.conditions[0];
  EXPECT_EQ(got.type, kConditionActive);
  EXPECT_EQ(got.status, tc.want.status);
  EXPECT_EQ(got.reason, tc.want.reason);
  EXPECT_EQ(got.message, tc.want.message);
}

std::string GtestName(const std::string& name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, MultiKueueReconcileTest,
    ::testing::ValuesIn(std::vector<ReconcileCase>{
        {.name = "missing config",
         .check = MultiKueueCheck("config1"),
         .want = {.status = "False",
                  .reason = "BadConfig",
                  .message = "Cannot load the AdmissionChecks parameters: "
                             "multikueueconfigs.kueue.x-k8s.io \"config1\" "
                             "not found"}},
        {.name = "unmanaged",
         .check = AdmissionCheckBuilder("ac1")
                      .ControllerName("not-multikueue")
                      .Build(),
         .want = {.status = "True",
                  .reason = "Active",
                  .message = "The admission check is active"}},
        {.name = "missing cluster",
         .check = MultiKueueCheck("config1"),
         .configs = {MakeConfig("config1", {"worker1"})},
         .want = {.status = "False",
                  .reason = "NoUsableClusters",
                  .message = "Missing clusters: [worker1]"}},
        {.name = "inactive cluster",
         .check = MultiKueueCheck("config1"),
         .configs = {MakeConfig("config1", {"worker1"})},
         .clusters = {{"worker1", "False"}},
         .want = {.status = "False",
                  .reason = "NoUsableClusters",
                  .message = "Inactive clusters: [worker1]"}},
        {.name = "all clusters missing or inactive",
         .check = MultiKueueCheck("config1"),
         .configs = {MakeConfig("config1", {"worker1", "worker2", "worker3"})},
         .clusters = {{"worker1", "False"}, {"worker2", "False"}},
         .want = {.status = "False",
                  .reason = "NoUsableClusters",
                  .message = "Missing clusters: [worker3], Inactive clusters: "
                             "[worker1 worker2]"}},
        {.name = "partially active",
         .check = MultiKueueCheck("config1"),
         .configs = {MakeConfig("config1", {"worker1", "worker2", "worker3"})},
         .clusters = {{"worker1", "False"}, {"worker2", "True"}},
         .want = {.status = "True",
                  .reason = "SomeActiveClusters",
                  .message = "Missing clusters: [worker3], Inactive clusters: "
                             "[worker1]"}},
        {.name = "active",
         .check = MultiKueueCheck("config1"),
         .configs = {MakeConfig("config1", {"worker1"})},
         .clusters = {{"worker1", "True"}},
         .want = {.status = "True",
                  .reason = "Active",
                  .message = "The admission check is active"}},
        // kq: the parameter reference's own errors, as Kueue's
        // ConfigHelper words them.
        {.name = "kq: no parameters",
         .check = AdmissionCheckBuilder("ac1")
                      .ControllerName(kMultiKueueControllerName)
                      .Build(),
         .want = {.status = "False",
                  .reason = "BadConfig",
                  .message = "Cannot load the AdmissionChecks parameters: "
                             "missing parameters reference"}},
        {.name = "kq: wrong kind",
         .check =
             [] {
               AdmissionCheck check = MultiKueueCheck("config1");
               check.parameters_kind = "ProvisioningRequestConfig";
               return check;
             }(),
         .configs = {MakeConfig("config1", {"worker1"})},
         .want = {.status = "False",
                  .reason = "BadConfig",
                  .message = "Cannot load the AdmissionChecks parameters: "
                             "wrong kind \"ProvisioningRequestConfig\", "
                             "expecting \"MultiKueueConfig\": bad parameters "
                             "reference"}},
    }),
    [](const auto& info) { return GtestName(info.param.name); });

TEST(MultiKueueClusterActiveTest, DefaultsBeforeAnyReport) {
  AdmissionState state;
  const MultiKueueCluster secret = MakeCluster("w-secret", "Secret");
  const MultiKueueCluster path = MakeCluster("w-path", "Path");
  state.LoadObject(secret);
  state.LoadObject(path);
  const Condition s = state.MultiKueueClusterActiveCondition(secret);
  EXPECT_EQ(s.type, kConditionActive);
  EXPECT_EQ(s.status, kConditionFalse);
  EXPECT_EQ(s.reason, "BadKubeConfig");
  EXPECT_THAT(s.message, HasSubstr("load client config failed: kq does not "
                                   "read Kubernetes Secrets"));
  const Condition p = state.MultiKueueClusterActiveCondition(path);
  EXPECT_EQ(p.status, kConditionFalse);
  EXPECT_EQ(p.reason, "ClientConnectionFailed");
  EXPECT_EQ(p.message, "not connected yet");
  // ViewOf carries it, as Kueue's status.conditions.
  const ObjectView view = state.ViewOf(ConfigObject(path));
  ASSERT_EQ(view.conditions.size(), 1u);
  EXPECT_EQ(view.conditions[0], p);
}

TEST(MultiKueueClusterActiveTest, SecretLocationWarnsOnApply) {
  const std::vector<std::string> warnings =
      ValidateConfigObject(MakeCluster("w1", "Secret")).ok()
          ? ConfigWarnings(MakeCluster("w1", "Secret"))
          : std::vector<std::string>{"invalid"};
  EXPECT_THAT(warnings,
              ElementsAre(AllOf(HasSubstr("MultiKueueCluster \"w1\": load "
                                          "client config failed: kq does not "
                                          "read Kubernetes Secrets"),
                                HasSubstr("BadKubeConfig"))));
  EXPECT_TRUE(ConfigWarnings(MakeCluster("w1", "Path")).empty());
}

TEST(MultiKueueClusterActiveTest, ReportsKeepTheirTransitionAndForgetOnChange) {
  AdmissionState state;
  state.PutObject(MakeCluster("w1"), "uid-1", kStart);
  state.Rebuild(kStart);
  EXPECT_FALSE(state.config_changed());
  state.SetMultiKueueClusterActive(
      "w1", {kConditionActive, kConditionTrue, "Active", "Connected", kStart});
  EXPECT_TRUE(state.config_changed());
  state.Rebuild(kStart);
  // The same status later: no change, the transition time kept.
  state.SetMultiKueueClusterActive(
      "w1", {kConditionActive, kConditionTrue, "Active", "Connected",
             kStart + absl::Minutes(1)});
  EXPECT_FALSE(state.config_changed());
  const MultiKueueCluster& stored = state.multikueue_clusters().at("w1");
  EXPECT_EQ(state.MultiKueueClusterActiveCondition(stored).last_transition_time,
            kStart);
  // A new spec: the report was about the old one.
  MultiKueueCluster moved = MakeCluster("w1");
  moved.location = "/etc/kq/elsewhere.yaml";
  EXPECT_EQ(state.PutObject(moved, "uid-2", kStart), "configured");
  EXPECT_EQ(state
                .MultiKueueClusterActiveCondition(
                    state.multikueue_clusters().at("w1"))
                .reason,
            "ClientConnectionFailed");
}

// A MultiKueue check is only as active as its clusters, and its
// ClusterQueue follows: a cluster's report, or a MultiKueueConfig change,
// re-evaluates both at the next Rebuild.
TEST(MultiKueueClusterActiveTest, ReportAndConfigChangeReevaluateTheQueue) {
  AdmissionState state;
  state.PutObject(ResourceFlavorBuilder("default").Build(), "u-rf", kStart);
  state.PutObject(ClusterQueueBuilder("cq")
                      .Quota("default", "cpu", "4")
                      .AdmissionCheck("ac1")
                      .Build(),
                  "u-cq", kStart);
  state.PutObject(MultiKueueCheck("config1"), "u-ac", kStart);
  state.PutObject(MakeConfig("config1", {"worker1"}), "u-mk", kStart);
  state.PutObject(MakeCluster("worker1"), "u-w1", kStart);
  state.Rebuild(kStart);
  auto cq_active = [&] {
    return state.cache().FindClusterQueue("cq")->active_reason;
  };
  EXPECT_EQ(cq_active(), "AdmissionCheckInactive");

  state.SetMultiKueueClusterActive("worker1", {kConditionActive, kConditionTrue,
                                               "Active", "Connected", kStart});
  ASSERT_TRUE(state.config_changed());
  state.Rebuild(kStart);
  EXPECT_EQ(cq_active(), "Ready");

  // A config naming a cluster that does not exist yet: only partly usable,
  // still active.
  state.PutObject(MakeConfig("config1", {"worker1", "worker2"}), "u-mk",
                  kStart);
  state.Rebuild(kStart);
  const Condition check =
      state.AdmissionCheckActiveCondition(state.admission_checks().at("ac1"));
  EXPECT_EQ(check.reason, "SomeActiveClusters");
  EXPECT_EQ(check.message, "Missing clusters: [worker2]");
  EXPECT_EQ(cq_active(), "Ready");

  // The connection drops.
  state.SetMultiKueueClusterActive(
      "worker1", {kConditionActive, kConditionFalse, "ClientConnectionFailed",
                  "client cannot watch", kStart});
  state.Rebuild(kStart);
  EXPECT_EQ(cq_active(), "AdmissionCheckInactive");

  // Deleting the config makes the check BadConfig.
  ASSERT_TRUE(
      state.RemoveObject({ObjectKind::kMultiKueueConfig, "", "config1"}).ok());
  state.Rebuild(kStart);
  EXPECT_EQ(
      state.AdmissionCheckActiveCondition(state.admission_checks().at("ac1"))
          .reason,
      "BadConfig");
}

}  // namespace
}  // namespace kq::admission
