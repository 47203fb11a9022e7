// Tests of shim/provisioning/reconciler: Kueue's TestReconcile
// (pkg/controller/admissionchecks/provisioning/controller_test.go), case by
// case under Kueue's names, against an in-memory Kubernetes API
// (FakeKubeClient, as Kueue's fake client) and a kqd stand-in that records
// SetAdmissionCheckState as Kueue's status patch would. Each case asserts
// Kueue's wantWorkloads (the admission check states), wantRequests,
// wantTemplates, wantRequestsNotFound and wantReconcileError.
//
// Not asserted: wantEvents (a kq Workload is not a Kubernetes object; the
// shim logs Kueue's event messages instead). Kueue's owner references to
// the Workload are kq.dev/workload-* annotations (provisioning.h).
// Skipped: "request preserved on workload evicted when cleanup is disabled"
// (kq has no CleanupProvisioningRequestsOnEviction gate: cleanup is always
// on, as is Kueue's default). Adapted: "when retry count is preserved but
// provisioning request was cleaned up" keeps Kueue's retryCount of 1 as
// kq does, in a retry record (provisioning.h).

#include "shim/provisioning/reconciler.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "shim/provisioning/provisioning.h"
#include "tests/shim/provisioning/fake_kube_client.h"
#include "tests/shim/provisioning/test_builders.h"

namespace kq::shim::provisioning {
namespace {

using namespace ::kq::shim::provisioning::testing;  // NOLINT
using ::testing::HasSubstr;

// ---- Kueue's TestReconcile fixtures
// ------------------------------------------

v1::PodSetAssignment Ps1Assignment() {
  return Assignment("ps1", {{"cpu", "flv1"}}, 4);
}
v1::PodSetAssignment Ps2Assignment() {
  return Assignment("ps2", {{"cpu", "flv2"}}, 3);
}

WorkloadWrapper BaseWorkload() {
  WorkloadWrapper w("wl", kTestNamespace);
  w.PodSets({PodSetWrapper("ps1", 4).Request("cpu", "1").Obj(),
             PodSetWrapper("ps2", 4).Request("memory", "1M").Obj()})
      .ReserveQuota("q1", {Ps1Assignment(), Ps2Assignment()})
      .AdmissionChecks({CheckState("check1", "Pending"),
                        CheckState("not-provisioning", "Pending")});
  return w;
}

json Toleration1() {
  return {{"key", "f1t1k"},
          {"operator", "Equal"},
          {"value", "f1t1v"},
          {"effect", "NoSchedule"}};
}

// baseFlavor1 and baseFlavor2, as kqd's placements name them.
v1::FlavorPlacement Flavor(const std::string& name) {
  v1::FlavorPlacement f;
  f.set_flavor(name);
  if (name == "flv1") {
    (*f.mutable_node_labels())["f1l1"] = "v1";
    v1::Toleration* t = f.add_tolerations();
    t->set_key("f1t1k");
    t->set_operator_("Equal");
    t->set_value("f1t1v");
    t->set_effect("NoSchedule");
  } else {
    (*f.mutable_node_labels())["f2l1"] = "v1";
  }
  return f;
}

// kqd's placements for the workload's admission (ViewOf).
google::protobuf::RepeatedPtrField<v1::PodSetPlacement> PlacementsOf(
    const v1::Workload& wl) {
  google::protobuf::RepeatedPtrField<v1::PodSetPlacement> out;
  for (const v1::PodSetAssignment& psa :
       wl.status().admission().pod_set_assignments()) {
    v1::PodSetPlacement* p = out.Add();
    p->set_pod_set(psa.name());
    std::set<std::string> seen;
    for (const auto& [r, f] : psa.flavors()) {
      if (seen.insert(f).second) *p->add_flavors() = Flavor(f);
    }
  }
  return out;
}

json BaseRequest() {
  return Request("wl-check1-1",
                 {{"ppt-wl-check1-1-ps1", 4}, {"ppt-wl-check1-1-ps2", 3}},
                 "class1", {{"p1", "v1"}});
}

json Container(const json& requests, const json& limits = json()) {
  json resources = {{"requests", requests}};
  if (!limits.is_null()) resources["limits"] = limits;
  return {{"name", "c"}, {"resources", resources}};
}

// A PodTemplate as the shim writes one, owned by workload "wl".
json Template(const std::string& name, const json& pod_spec,
              const std::string& request = "wl-check1-1") {
  json annotations = OwnerAnnotationsOf("wl");
  annotations[kRequestAnnotation] = request;
  return {{"apiVersion", "v1"},
          {"kind", "PodTemplate"},
          {"metadata",
           {{"name", name},
            {"namespace", kTestNamespace},
            {"labels", {{kManagedLabel, kManagedLabelValue}}},
            {"annotations", annotations}}},
          {"template", {{"spec", pod_spec}}}};
}

json BaseTemplate1() {
  return Template("ppt-wl-check1-1-ps1",
                  {{"containers", {Container({{"cpu", "1"}})}},
                   {"nodeSelector", {{"f1l1", "v1"}}},
                   {"tolerations", {Toleration1()}}});
}

json BaseTemplate2() {
  return Template("ppt-wl-check1-1-ps2",
                  {{"containers", {Container({{"memory", "1M"}})}},
                   {"nodeSelector", {{"f2l1", "v1"}}}});
}

ConfigWrapper BaseConfig() {
  return ConfigWrapper("config1").ProvisioningClass("class1").WithParameter(
      "p1", "v1");
}
ConfigWrapper BaseConfigWithRetryStrategy() {
  return BaseConfig().RetryStrategy(3, 60, 1800);
}
ConfigWrapper BaseConfigWithPodSetUpdates() {
  return BaseConfigWithRetryStrategy().PodSetUpdateNodeSelector(
      "node-selector-key", "node-selector-value");
}

v1::AdmissionCheck BaseCheck() {
  return MakeAdmissionCheck("check1", "config1");
}

v1::PodSetUpdate Update(
    const std::string& pod_set,
    const std::map<std::string, std::string>& selector = {}) {
  v1::PodSetUpdate u;
  u.set_name(pod_set);
  (*u.mutable_annotations())[kConsumeProvisioningRequestAnnotation] =
      "wl-check1-1";
  (*u.mutable_annotations())[kProvisioningClassAnnotation] = "class1";
  for (const auto& [k, v] : selector) (*u.mutable_node_selector())[k] = v;
  return u;
}

v1::AdmissionCheckState WithUpdates(v1::AdmissionCheckState state,
                                    const std::vector<v1::PodSetUpdate>& u) {
  for (const v1::PodSetUpdate& update : u) {
    *state.add_pod_set_updates() = update;
  }
  return state;
}

// ---- The case table
// ------------------------------------------------------------

struct World {
  v1::Workload workload;
  bool workload_gone = false;
  std::vector<json> requests;
  std::vector<json> templates;
  std::vector<v1::AdmissionCheck> checks;
  std::vector<v1::ProvisioningRequestConfig> configs;
  // Kueue's interceptorFuncsCreate.
  std::function<absl::Status(const kube::Resource&, const json&)> on_create;
};

struct WantTemplate {
  json pod_spec;
  // The request controlling it; "" for none (Kueue: the Workload).
  std::string owner;
};

struct ReconcileCase {
  std::string name;
  std::function<World()> world;
  absl::StatusCode want_error = absl::StatusCode::kOk;
  std::string want_error_substr;
  // Kueue's wantWorkloads: the workload's admission checks afterwards.
  std::optional<std::vector<v1::AdmissionCheckState>> want_checks;
  // The requeueAfterSeconds of the last Retry written, by check.
  std::map<std::string, int32_t> want_requeue_after;
  // Kueue's wantRequests: labels and spec.
  std::map<std::string, json> want_requests;
  std::map<std::string, WantTemplate> want_templates;
  std::vector<std::string> want_requests_not_found;
  std::vector<std::string> want_templates_not_found;
  // kq's own: requests that must carry kq.dev/retry-reported="true".
  std::vector<std::string> want_retry_records;
};

void PrintTo(const ReconcileCase& c, std::ostream* os) { *os << c.name; }

// Drops what Kueue's tmplCmpOptions ignore (restartPolicy) and what JSON
// cannot tell from absent (empty maps and lists).
json Normalize(const json& v) {
  if (v.is_object()) {
    json out = json::object();
    for (const auto& [k, e] : v.items()) {
      if (k == "restartPolicy") continue;
      json n = Normalize(e);
      if (n.is_null() || ((n.is_object() || n.is_array()) && n.empty())) {
        continue;
      }
      out[k] = n;
    }
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const json& e : v) out.push_back(Normalize(e));
    return out;
  }
  return v;
}

std::string Text(const google::protobuf::Message& m) {
  return m.ShortDebugString();
}

class ReconcileTest : public ::testing::TestWithParam<ReconcileCase> {};

TEST_P(ReconcileTest, Reconcile) {
  const ReconcileCase& tc = GetParam();
  World world = tc.world();
  ::kq::testing::FakeKubeClient kube;
  for (const json& r : world.requests) kube.Add(kube::kProvisioningRequests, r);
  for (const json& t : world.templates) kube.Add(kube::kPodTemplates, t);
  kube.on_create = world.on_create;

  std::map<std::string, v1::AdmissionCheck> checks;
  for (const v1::AdmissionCheck& ac : world.checks) {
    checks[ac.metadata().name()] = ac;
  }
  std::map<std::string, v1::ProvisioningRequestConfig> configs;
  for (const v1::ProvisioningRequestConfig& prc : world.configs) {
    configs[prc.metadata().name()] = prc;
  }
  // kqd: the check's state, message and podSetUpdates replaced.
  v1::Workload wl = world.workload;
  std::map<std::string, int32_t> requeue_after;
  ReconcileHooks hooks;
  hooks.set_check_state = [&](const v1::SetAdmissionCheckStateRequest& r)
      -> absl::StatusOr<v1::Workload> {
    for (v1::AdmissionCheckState& s :
         *wl.mutable_status()->mutable_admission_checks()) {
      if (s.name() != r.check()) continue;
      s.set_state(r.state());
      s.set_message(r.message());
      *s.mutable_pod_set_updates() = r.pod_set_updates();
      if (r.has_requeue_after_seconds()) {
        requeue_after[r.check()] = r.requeue_after_seconds();
      }
      return wl;
    }
    return absl::NotFoundError("no such check");
  };

  ReconcileInput input;
  input.namespace_name = kTestNamespace;
  input.name = world.workload.metadata().name();
  const google::protobuf::RepeatedPtrField<v1::PodSetPlacement> placements =
      PlacementsOf(world.workload);
  if (!world.workload_gone) {
    input.workload = &world.workload;
    input.placements = &placements;
  }
  input.admission_checks = &checks;
  input.configs = &configs;
  input.requests = kube.All(kube::kProvisioningRequests);
  input.templates = kube.All(kube::kPodTemplates);

  absl::Status status = ReconcileWorkload(kube, hooks, input);
  EXPECT_EQ(status.code(), tc.want_error) << status;
  if (!tc.want_error_substr.empty()) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(tc.want_error_substr));
  }

  if (tc.want_checks.has_value()) {
    ASSERT_EQ(wl.status().admission_checks_size(),
              static_cast<int>(tc.want_checks->size()));
    for (size_t i = 0; i < tc.want_checks->size(); ++i) {
      v1::AdmissionCheckState got = wl.status().admission_checks(i);
      got.clear_last_transition_time();
      EXPECT_EQ(Text(got), Text((*tc.want_checks)[i])) << "check " << i;
    }
  }
  EXPECT_EQ(requeue_after, tc.want_requeue_after);

  for (const auto& [name, want] : tc.want_requests) {
    const json* got =
        kube.Find(kube::kProvisioningRequests, kTestNamespace, name);
    ASSERT_NE(got, nullptr) << "request " << name << " not found";
    EXPECT_EQ((*got)["metadata"]["labels"], want["metadata"]["labels"]) << name;
    EXPECT_EQ(Normalize((*got)["spec"]), Normalize(want["spec"])) << name;
    EXPECT_EQ(AnnotationOf(*got, kWorkloadNameAnnotation), "wl") << name;
    EXPECT_EQ(AnnotationOf(*got, kWorkloadUidAnnotation), kWorkloadUid) << name;
  }
  for (const auto& [name, want] : tc.want_templates) {
    const json* got = kube.Find(kube::kPodTemplates, kTestNamespace, name);
    ASSERT_NE(got, nullptr) << "template " << name << " not found";
    EXPECT_EQ((*got)["metadata"]["labels"],
              json({{kManagedLabel, kManagedLabelValue}}))
        << name;
    EXPECT_EQ(Normalize((*got)["template"]),
              Normalize(json({{"spec", want.pod_spec}})))
        << name;
    const json refs =
        (*got)["metadata"].value("ownerReferences", json::array());
    if (want.owner.empty()) {
      EXPECT_TRUE(refs.empty()) << name << ": " << refs.dump();
    } else {
      ASSERT_EQ(refs.size(), 1u) << name;
      EXPECT_EQ(refs[0]["kind"], "ProvisioningRequest");
      EXPECT_EQ(refs[0]["apiVersion"], "autoscaling.x-k8s.io/v1");
      EXPECT_EQ(refs[0]["name"], want.owner);
      EXPECT_EQ(refs[0]["controller"], true);
      const json* owner =
          kube.Find(kube::kProvisioningRequests, kTestNamespace, want.owner);
      ASSERT_NE(owner, nullptr);
      EXPECT_EQ(refs[0]["uid"], (*owner)["metadata"]["uid"]);
    }
  }
  for (const std::string& name : tc.want_requests_not_found) {
    EXPECT_EQ(kube.Find(kube::kProvisioningRequests, kTestNamespace, name),
              nullptr)
        << "request " << name << " should no longer be found";
  }
  for (const std::string& name : tc.want_templates_not_found) {
    EXPECT_EQ(kube.Find(kube::kPodTemplates, kTestNamespace, name), nullptr)
        << "template " << name << " should no longer be found";
  }
  for (const std::string& name : tc.want_retry_records) {
    const json* got =
        kube.Find(kube::kProvisioningRequests, kTestNamespace, name);
    ASSERT_NE(got, nullptr) << name;
    EXPECT_EQ(AnnotationOf(*got, kRetryReportedAnnotation), "true") << name;
  }
}

std::vector<v1::AdmissionCheckState> Checks(v1::AdmissionCheckState check1) {
  return {std::move(check1), CheckState("not-provisioning", "Pending")};
}

const std::vector<v1::AdmissionCheckState> kBaseChecks =
    Checks(CheckState("check1", "Pending"));

std::map<std::string, WantTemplate> BaseTemplatesOwnedBy(
    const std::string& owner) {
  return {
      {"ppt-wl-check1-1-ps1", {BaseTemplate1()["template"]["spec"], owner}},
      {"ppt-wl-check1-1-ps2", {BaseTemplate2()["template"]["spec"], owner}}};
}

World Base(std::vector<json> requests = {}, std::vector<json> templates = {},
           v1::ProvisioningRequestConfig config =
               BaseConfigWithRetryStrategy().Obj()) {
  World w;
  w.workload = BaseWorkload().Obj();
  w.checks = {BaseCheck()};
  w.configs = {std::move(config)};
  w.requests = std::move(requests);
  w.templates = std::move(templates);
  return w;
}

v1::Workload ProvReqAnnotationWorkload() {
  return WorkloadWrapper("wl", kTestNamespace)
      .Annotations({{"provreq.kueue.x-k8s.io/ValidUntilSeconds", "0"},
                    {"invalid-provreq-prefix/Foo1", "Bar1"},
                    {"another-invalid-provreq-prefix/Foo2", "Bar2"}})
      .AdmissionChecks({CheckState("check1", "Pending")})
      .ReserveQuota("q1")
      .Obj();
}

json Provisioned(json request) {
  return WithConditions(std::move(request),
                        {Cond("Failed", "False"), Cond("Provisioned", "True"),
                         Cond("Accepted", "True")});
}

absl::Status FailKind(const std::string& plural, const kube::Resource& r,
                      absl::Status error) {
  return r.plural == plural ? error : absl::OkStatus();
}

// podSetMergePolicyAssignemnt.
std::vector<v1::PodSetAssignment> MergeAssignments() {
  return {Assignment("ps1", {{"cpu", "flv1"}}, 1),
          Assignment("ps2", {{"cpu", "flv1"}}, 2),
          Assignment("ps3", {{"cpu", "flv2"}}, 2),
          Assignment("ps4", {{"cpu", "flv2"}}, 1),
          Assignment("ps5", {{"cpu", "flv2"}}, 1)};
}

json MergedRequest() {
  return Request("wl-check1-1",
                 {{"ppt-wl-check1-1-ps1", 3},
                  {"ppt-wl-check1-1-ps3", 3},
                  {"ppt-wl-check1-1-ps5", 1}},
                 "", {});
}

const json kTypeTwoAffinity = {
    {"nodeAffinity",
     {{"requiredDuringSchedulingIgnoredDuringExecution",
       {{"nodeSelectorTerms",
         {{{"matchExpressions",
            {{{"key", "type"},
              {"operator", "In"},
              {"values", {"two"}}}}}}}}}}}}};

INSTANTIATE_TEST_SUITE_P(
    Cases, ReconcileTest,
    ::testing::ValuesIn(std::vector<ReconcileCase>{
        {.name = "unrelated_workload",
         .world =
             [] {
               World w;
               w.workload = WorkloadWrapper("wl", "ns").Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"}},
        {.name = "unrelated_workload_with_reservation",
         .world =
             [] {
               World w;
               w.workload =
                   WorkloadWrapper("wl", "ns").ReserveQuota("q1").Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"}},
        {.name = "unrelated_admitted_workload",
         .world =
             [] {
               World w;
               w.workload = WorkloadWrapper("wl", "ns")
                                .ReserveQuota("q1")
                                .Admitted(true)
                                .Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"}},
        {.name = "missing_config",
         .world =
             [] {
               World w = Base();
               w.configs.clear();
               return w;
             },
         .want_checks = Checks(CheckState("check1", "Pending",
                                          kCheckInactiveMessage)),
         .want_requests_not_found = {"wl-check1-1"}},
        {.name = "with_config",
         .world = [] { return Base(); },
         .want_checks = kBaseChecks,
         .want_requests = {{"wl-check1-1", BaseRequest()}},
         .want_templates = BaseTemplatesOwnedBy("wl-check1-1")},
        {.name = "with_only_zero_count_PodSets",
         .world =
             [] {
               World w = Base({BaseRequest()});
               w.workload = BaseWorkload()
                                .PodSetCount(0, 0, 0)
                                .PodSetCount(1, 0, 0)
                                .Obj();
               return w;
             },
         .want_checks = Checks(CheckState("check1", "Ready", kNoRequestNeeded)),
         .want_requests_not_found = {"wl-check1-1"}},
        {.name = "workload_with_provreq_annotation",
         .world =
             [] {
               World w;
               w.workload = ProvReqAnnotationWorkload();
               w.checks = {BaseCheck()};
               w.configs = {ConfigWrapper("config1").Obj()};
               return w;
             },
         .want_requests = {{"wl-check1-1",
                            Request("wl-check1-1",
                                    {{"ppt-wl-check1-1-main", 1}}, "",
                                    {{"ValidUntilSeconds", "0"}})}}},
        {.name = "remove_unnecessary_requests",
         .world =
             [] {
               json other = Request("wl-check2", {}, "", {});
               return Base({other});
             },
         .want_checks = kBaseChecks,
         .want_requests = {{"wl-check1-1", BaseRequest()}},
         .want_requests_not_found = {"wl-check2"}},
        {.name = "one_template_already_created",
         .world = [] { return Base({}, {BaseTemplate1()}); },
         .want_checks = kBaseChecks,
         .want_requests = {{"wl-check1-1", BaseRequest()}},
         .want_templates = BaseTemplatesOwnedBy("wl-check1-1")},
        {.name = "request_out_of_sync",
         .world =
             [] {
               return Base(
                   {Request("wl-check1-1", {{"ppt-wl-check1-1-main", 1}},
                            "class1", {{"p1", "v0"}})});
             },
         .want_checks = kBaseChecks,
         .want_requests = {{"wl-check1-1", BaseRequest()}},
         .want_templates = BaseTemplatesOwnedBy("wl-check1-1")},
        {.name = "request_removed_on_workload_finished",
         .world =
             [] {
               World w =
                   Base({BaseRequest()}, {BaseTemplate1(), BaseTemplate2()});
               w.workload = BaseWorkload().Condition("Finished", "True").Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"},
         .want_templates_not_found = {"ppt-wl-check1-1-ps1",
                                      "ppt-wl-check1-1-ps2"}},
        {.name = "request_removed_on_workload_evicted",
         .world =
             [] {
               World w =
                   Base({BaseRequest()}, {BaseTemplate1(), BaseTemplate2()});
               w.workload = BaseWorkload()
                                .Condition("Evicted", "True", "Preempted")
                                .Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"},
         .want_templates_not_found = {"ppt-wl-check1-1-ps1",
                                      "ppt-wl-check1-1-ps2"}},
        {.name = "request_removed_on_workload_evicted_by_admission_check",
         .world =
             [] {
               World w =
                   Base({BaseRequest()}, {BaseTemplate1(), BaseTemplate2()});
               w.workload = BaseWorkload()
                                .Condition("Evicted", "True", "AdmissionCheck")
                                .Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"},
         .want_templates_not_found = {"ppt-wl-check1-1-ps1",
                                      "ppt-wl-check1-1-ps2"}},
        // Kueue: check1 Pending with retryCount 1 and no request left. kq:
        // the retry record of attempt 1 holds the retryCount.
        {.name = "when_retry_count_is_preserved_but_provisioning_request_was_"
                 "cleaned_up",
         .world =
             [] {
               json record = WithCondition(BaseRequest(), "Failed", "True");
               record["metadata"]["annotations"][kRetryReportedAnnotation] =
                   "true";
               return Base({record});
             },
         .want_checks = kBaseChecks,
         .want_requests = {{"wl-check1-2", Request("wl-check1-2",
                                                   {{"ppt-wl-check1-2-ps1", 4},
                                                    {"ppt-wl-check1-2-ps2", 3}},
                                                   "class1", {{"p1", "v1"}})}},
         .want_retry_records = {"wl-check1-1"}},
        {.name = "when_request_fails_and_is_retried",
         .world =
             [] {
               return Base({WithCondition(BaseRequest(), "Failed", "True")},
                           {BaseTemplate1(), BaseTemplate2()},
                           BaseConfigWithRetryStrategy().RetryLimit(2).Obj());
             },
         .want_checks = Checks(CheckState("check1", "Retry",
                                          "Retrying after failure: By test")),
         .want_requeue_after = {{"check1", 60}},
         .want_retry_records = {"wl-check1-1"}},
        {.name = "when_request_fails_and_there_is_no_retry",
         .world =
             [] {
               return Base({WithCondition(BaseRequest(), "Failed", "True")},
                           {BaseTemplate1(), BaseTemplate2()},
                           BaseConfigWithRetryStrategy().RetryLimit(0).Obj());
             },
         .want_checks = Checks(CheckState("check1", "Rejected", "By test"))},
        {.name = "when_request_is_provisioned",
         .world =
             [] {
               return Base(
                   {WithCondition(BaseRequest(), "Provisioned", "True")},
                   {BaseTemplate1(), BaseTemplate2()});
             },
         .want_checks = Checks(WithUpdates(CheckState("check1", "Ready",
                                                      "By test"),
                                           {Update("ps1"), Update("ps2")}))},
        {.name = "when_no_request_is_needed",
         .world =
             [] {
               return Base(
                   {}, {},
                   BaseConfig().WithManagedResource("example.org/gpu").Obj());
             },
         .want_checks = Checks(CheckState("check1", "Ready",
                                          kNoRequestNeeded))},
        {.name = "when_request_is_needed_for_one_PodSet_resource_request",
         .world =
             [] {
               return Base({}, {},
                           BaseConfig().WithManagedResource("memory").Obj());
             },
         .want_checks = kBaseChecks,
         .want_requests = {{"wl-check1-1",
                            Request("wl-check1-1", {{"ppt-wl-check1-1-ps2", 3}},
                                    "class1", {{"p1", "v1"}})}},
         .want_templates = {{"ppt-wl-check1-1-ps2",
                             {BaseTemplate2()["template"]["spec"],
                              "wl-check1-1"}}}},
        {.name = "when_request_is_needed_for_one_PodSet_resource_limit",
         .world =
             [] {
               World w = Base(
                   {}, {},
                   BaseConfig().WithManagedResource("example.com/gpu").Obj());
               w.workload = BaseWorkload()
                                .PodSets({PodSetWrapper("ps1", 4)
                                              .Request("cpu", "1")
                                              .Limit("example.com/gpu", "1")
                                              .Obj(),
                                          PodSetWrapper("ps2", 4)
                                              .Request("memory", "1M")
                                              .Obj()})
                                .Obj();
               return w;
             },
         .want_checks = kBaseChecks,
         .want_requests = {{"wl-check1-1",
                            Request("wl-check1-1", {{"ppt-wl-check1-1-ps1", 4}},
                                    "class1", {{"p1", "v1"}})}},
         .want_templates =
             {{"ppt-wl-check1-1-ps1",
               {{{"containers",
                  {Container({{"cpu", "1"}, {"example.com/gpu", "1"}},
                             {{"example.com/gpu", "1"}})}},
                 {"nodeSelector", {{"f1l1", "v1"}}},
                 {"tolerations", {Toleration1()}}},
                "wl-check1-1"}}}},
        {.name = "when_the_request_is_removed_while_the_check_is_ready_dont_"
                 "create_the_ProvReq_and_keep_Ready_state",
         .world =
             [] {
               World w = Base();
               w.workload = BaseWorkload()
                                .AdmissionChecks(
                                    {CheckState("check1", "Ready"),
                                     CheckState("not-provisioning", "Pending")})
                                .Obj();
               return w;
             },
         .want_checks = Checks(CheckState("check1", "Ready")),
         .want_requests_not_found = {"wl-check1-1", "wl-check2-1"}},
        {.name = "workloads_status_gets_updated_based_on_the_provisioning_"
                 "request",
         .world =
             [] {
               return Base(
                   {WithConditions(
                       BaseRequest(),
                       {Cond("Failed", "False"),
                        Cond("Provisioned", "False",
                             "Provisioning Request wasn't provisioned. ETA: "
                             "2024-02-22T10:36:40Z"),
                        Cond("Accepted", "True")})},
                   {BaseTemplate1(), BaseTemplate2()});
             },
         .want_checks =
             Checks(CheckState("check1", "Pending",
                               "Provisioning Request wasn't provisioned. ETA: "
                               "2024-02-22T10:36:40Z"))},
        {.name = "workload_sets_AdmissionCheck_status_to_Rejected_when_it_is_"
                 "not_finished_and_receives_the_provisioning_requests_"
                 "CapacityRevoked_condition",
         .world =
             [] {
               World w =
                   Base({WithConditions(Provisioned(BaseRequest()),
                                        {Cond("CapacityRevoked", "True")})});
               w.workload = BaseWorkload().Admitted(true).Obj();
               return w;
             },
         .want_checks = Checks(CheckState("check1", "Rejected"))},
        {.name = "workload_sets_AdmissionCheck_status_to_Rejected_when_it_is_"
                 "not_admitted_and_receives_the_provisioning_requests_"
                 "CapacityRevoked_condition",
         .world =
             [] {
               World w =
                   Base({WithConditions(Provisioned(BaseRequest()),
                                        {Cond("CapacityRevoked", "True")})});
               w.workload = BaseWorkload().Admitted(false).Obj();
               return w;
             },
         .want_checks = Checks(CheckState("check1", "Rejected"))},
        {.name = "workloads_doesnt_set_AdmissionCheck_status_to_Rejected_when_"
                 "it_is_finished_and_receives_the_provisioning_requests_"
                 "CapacityRevoked_condition",
         .world =
             [] {
               World w =
                   Base({WithConditions(Provisioned(BaseRequest()),
                                        {Cond("CapacityRevoked", "True")})});
               w.workload = BaseWorkload()
                                .Condition("Finished", "True", "ByTest",
                                           "Finished by test")
                                .Obj();
               return w;
             },
         .want_checks = kBaseChecks},
        {.name = "workload_does_nothing_when_admitted_and_receives_the_"
                 "provisioning_requests_BookingExpired_condition",
         .world =
             [] {
               World w =
                   Base({WithConditions(Provisioned(BaseRequest()),
                                        {Cond("BookingExpired", "True")})});
               w.workload = BaseWorkload().Admitted(true).Obj();
               return w;
             },
         .want_checks = kBaseChecks},
        {.name = "workload_retries_the_admission_check_when_is_not_admitted_"
                 "and_receives_the_provisioning_requests_BookingExpired_"
                 "condition",
         .world =
             [] {
               World w = Base(
                   {WithConditions(
                       Provisioned(BaseRequest()),
                       {Cond("BookingExpired", "True", "Expired By test")})},
                   {}, BaseConfigWithRetryStrategy().RetryLimit(1).Obj());
               w.workload = BaseWorkload().Admitted(false).Obj();
               return w;
             },
         .want_checks = Checks(
             CheckState("check1", "Retry",
                        "Retrying after booking expired: Expired By test")),
         .want_requeue_after = {{"check1", 60}},
         .want_retry_records = {"wl-check1-1"}},
        {.name = "workload_rejects_the_admission_check_when_is_not_admitted_"
                 "and_receives_the_provisioning_requests_BookingExpired_"
                 "condition",
         .world =
             [] {
               World w =
                   Base({WithConditions(Provisioned(BaseRequest()),
                                        {Cond("BookingExpired", "True")})},
                        {}, BaseConfigWithRetryStrategy().RetryLimit(0).Obj());
               w.workload = BaseWorkload().Admitted(false).Obj();
               return w;
             },
         .want_checks = Checks(CheckState("check1", "Rejected"))},
        {.name = "when_pod_template_creation_error",
         .world =
             [] {
               World w;
               w.workload = ProvReqAnnotationWorkload();
               w.checks = {BaseCheck()};
               w.configs = {ConfigWrapper("config1").Obj()};
               w.on_create = [](const kube::Resource& r, const json&) {
                 return FailKind(
                     "podtemplates", r,
                     absl::InvalidArgumentError("invalid PodTemplate error"));
               };
               return w;
             },
         .want_error = absl::StatusCode::kInvalidArgument,
         .want_error_substr = "invalid PodTemplate error",
         .want_checks = std::vector<v1::AdmissionCheckState>{CheckState(
             "check1", "Pending",
             "Error creating PodTemplate \"ppt-wl-check1-1-main\": invalid "
             "PodTemplate error")}},
        {.name = "when_provisioning_request_creation_error",
         .world =
             [] {
               World w = Base();
               w.on_create = [](const kube::Resource& r, const json&) {
                 return FailKind("provisioningrequests", r,
                                 absl::InvalidArgumentError(
                                     "invalid ProvisioningRequest error"));
               };
               return w;
             },
         .want_error = absl::StatusCode::kInvalidArgument,
         .want_error_substr = "invalid ProvisioningRequest error",
         .want_checks = Checks(CheckState(
             "check1", "Pending",
             "Error creating ProvisioningRequest \"wl-check1-1\": invalid "
             "ProvisioningRequest error")),
         .want_templates = BaseTemplatesOwnedBy(""),
         .want_requests_not_found = {"wl-check1-1"}},
        {.name = "when_the_provisioning_request_already_exists",
         .world =
             [] {
               World w = Base();
               w.on_create = [](const kube::Resource& r, const json&) {
                 return FailKind(
                     "provisioningrequests", r,
                     absl::AlreadyExistsError(
                         "provisioningrequests.autoscaling.x-k8s.io "
                         "\"wl-check1-1\" already exists"));
               };
               return w;
             },
         .want_error = absl::StatusCode::kAlreadyExists,
         .want_checks = kBaseChecks,
         .want_templates = BaseTemplatesOwnedBy("")},
        {.name = "when_the_existing_request_is_already_visible_in_the_cache",
         .world =
             [] {
               json foreign = {
                   {"apiVersion", "autoscaling.x-k8s.io/v1"},
                   {"kind", "ProvisioningRequest"},
                   {"metadata",
                    {{"name", "wl-check1-1"}, {"namespace", kTestNamespace}}}};
               World w = Base({foreign});
               w.on_create = [](const kube::Resource& r, const json&) {
                 return FailKind(
                     "provisioningrequests", r,
                     absl::AlreadyExistsError(
                         "provisioningrequests.autoscaling.x-k8s.io "
                         "\"wl-check1-1\" already exists"));
               };
               return w;
             },
         .want_error = absl::StatusCode::kAlreadyExists,
         .want_checks = Checks(CheckState(
             "check1", "Pending",
             "Error creating ProvisioningRequest \"wl-check1-1\": "
             "provisioningrequests.autoscaling.x-k8s.io \"wl-check1-1\" "
             "already exists"))},
        {.name = "when_the_request_has_no_conditions_yet_the_previous_check_"
                 "message_is_cleared",
         .world =
             [] {
               World w =
                   Base({BaseRequest()}, {BaseTemplate1(), BaseTemplate2()});
               w.workload =
                   BaseWorkload()
                       .AdmissionChecks(
                           {CheckState(
                                "check1", "Pending",
                                "Error creating ProvisioningRequest "
                                "\"wl-check1-1\": "
                                "provisioningrequests.autoscaling.x-k8s.io "
                                "\"wl-check1-1\" already exists"),
                            CheckState("not-provisioning", "Pending")})
                       .Obj();
               return w;
             },
         .want_checks = kBaseChecks},
        {.name = "when_the_request_is_provisioned_the_previous_check_message_"
                 "is_cleared",
         .world =
             [] {
               World w = Base({WithConditions(BaseRequest(),
                                              {{{"type", "Provisioned"},
                                                {"status", "True"},
                                                {"reason", "Provisioned"}}})},
                              {BaseTemplate1(), BaseTemplate2()});
               w.workload =
                   BaseWorkload()
                       .AdmissionChecks(
                           {CheckState("check1", "Pending",
                                       "Error creating ProvisioningRequest "
                                       "\"wl-check1-1\": already exists"),
                            CheckState("not-provisioning", "Pending")})
                       .Obj();
               return w;
             },
         .want_checks = Checks(WithUpdates(CheckState("check1", "Ready"),
                                           {Update("ps1"), Update("ps2")}))},
        {.name = "when_request_is_provisioned_and_has_NodeSelector_specified_"
                 "via_ProvisioningClassDetail",
         .world =
             [] {
               json pr = WithCondition(BaseRequest(), "Provisioned", "True");
               pr["status"]["provisioningClassDetails"] = {
                   {"node-selector-value", "nodes-selector-xyz"}};
               return Base({pr}, {BaseTemplate1(), BaseTemplate2()},
                           BaseConfigWithPodSetUpdates().Obj());
             },
         .want_checks = Checks(WithUpdates(
             CheckState("check1", "Ready", "By test"),
             {Update("ps1", {{"node-selector-key", "nodes-selector-xyz"}}),
              Update("ps2", {{"node-selector-key", "nodes-selector-xyz"}})}))},
        {.name = "when_request_is_provisioned_and_has_NodeSelector_missing_in_"
                 "the_ProvisioningClassDetail",
         .world =
             [] {
               json pr = WithCondition(BaseRequest(), "Provisioned", "True");
               pr["status"]["provisioningClassDetails"] = {
                   {"some-detail", "xyz"}};
               return Base({pr}, {BaseTemplate1(), BaseTemplate2()},
                           BaseConfigWithPodSetUpdates().Obj());
             },
         .want_checks = Checks(WithUpdates(CheckState("check1", "Ready",
                                                      "By test"),
                                           {Update("ps1"), Update("ps2")}))},
        {.name = "with_podSetMergePolicy_IdenticalPodTemplates",
         .world =
             [] {
               World w;
               w.workload =
                   WorkloadWrapper("wl", kTestNamespace)
                       .PodSets(
                           {PodSetWrapper("ps1", 2).Request("cpu", "1").Obj(),
                            PodSetWrapper("ps2", 2).Request("cpu", "1").Obj(),
                            PodSetWrapper("ps3", 2)
                                .Request("memory", "1M")
                                .PriorityClass("pc-100")
                                .Obj(),
                            PodSetWrapper("ps4", 2)
                                .Request("memory", "1M")
                                .PriorityClass("pc-100")
                                .Obj(),
                            PodSetWrapper("ps5", 1)
                                .Request("memory", "1M")
                                .PriorityClass("pc-200")
                                .Obj()})
                       .ReserveQuota("q1", MergeAssignments())
                       .AdmissionChecks(
                           {CheckState("check1", "Pending"),
                            CheckState("not-provisioning", "Pending")})
                       .Obj();
               w.checks = {BaseCheck()};
               w.configs = {ConfigWrapper("config1")
                                .PodSetMergePolicy(kIdenticalPodTemplates)
                                .Obj()};
               return w;
             },
         .want_requests = {{"wl-check1-1", MergedRequest()}},
         .want_templates = {{"ppt-wl-check1-1-ps1",
                             {{{"containers", {Container({{"cpu", "1"}})}},
                               {"nodeSelector", {{"f1l1", "v1"}}},
                               {"tolerations", {Toleration1()}}},
                              "wl-check1-1"}},
                            {"ppt-wl-check1-1-ps3",
                             {{{"containers", {Container({{"memory", "1M"}})}},
                               {"nodeSelector", {{"f2l1", "v1"}}},
                               {"priorityClassName", "pc-100"}},
                              "wl-check1-1"}},
                            {"ppt-wl-check1-1-ps5",
                             {{{"containers", {Container({{"memory", "1M"}})}},
                               {"nodeSelector", {{"f2l1", "v1"}}},
                               {"priorityClassName", "pc-200"}},
                              "wl-check1-1"}}}},
        // kq has no topology requests (ps3/ps4's RequiredTopologyRequest),
        // which this policy ignores anyway.
        {.name =
             "with_podSetMergePolicy_IdenticalWorkloadSchedulingRequirements",
         .world =
             [] {
               World w;
               w.workload =
                   WorkloadWrapper("wl", kTestNamespace)
                       .PodSets(
                           {PodSetWrapper("ps1", 2)
                                .Request("cpu", "1")
                                .PriorityClass("pc-100")
                                .Obj(),
                            PodSetWrapper("ps2", 2)
                                .Request("cpu", "1")
                                .PriorityClass("pc-200")
                                .Obj(),
                            PodSetWrapper("ps3", 2)
                                .Request("memory", "1M")
                                .PriorityClass("pc-100")
                                .Obj(),
                            PodSetWrapper("ps4", 2)
                                .Request("memory", "1M")
                                .PriorityClass("pc-200")
                                .Obj(),
                            PodSetWrapper("ps5", 1)
                                .Request("memory", "1M")
                                .PriorityClass("pc-300")
                                .RequiredDuringSchedulingIgnoredDuringExecution(
                                    kTypeTwoAffinity["nodeAffinity"]
                                                    ["requiredDuringScheduling"
                                                     "IgnoredDuringExecution"]
                                                    ["nodeSelectorTerms"])
                                .Obj()})
                       .ReserveQuota("q1", MergeAssignments())
                       .AdmissionChecks(
                           {CheckState("check1", "Pending"),
                            CheckState("not-provisioning", "Pending")})
                       .Obj();
               w.checks = {BaseCheck()};
               w.configs = {ConfigWrapper("config1")
                                .PodSetMergePolicy(
                                    kIdenticalWorkloadSchedulingRequirements)
                                .Obj()};
               return w;
             },
         .want_requests = {{"wl-check1-1", MergedRequest()}},
         .want_templates = {{"ppt-wl-check1-1-ps1",
                             {{{"containers", {Container({{"cpu", "1"}})}},
                               {"nodeSelector", {{"f1l1", "v1"}}},
                               {"priorityClassName", "pc-100"},
                               {"tolerations", {Toleration1()}}},
                              "wl-check1-1"}},
                            {"ppt-wl-check1-1-ps3",
                             {{{"containers", {Container({{"memory", "1M"}})}},
                               {"nodeSelector", {{"f2l1", "v1"}}},
                               {"priorityClassName", "pc-100"}},
                              "wl-check1-1"}},
                            {"ppt-wl-check1-1-ps5",
                             {{{"containers", {Container({{"memory", "1M"}})}},
                               {"nodeSelector", {{"f2l1", "v1"}}},
                               {"priorityClassName", "pc-300"},
                               {"affinity", kTypeTwoAffinity}},
                              "wl-check1-1"}}}},
        {.name = "with_podSetMergePolicy_but_no_PodSetAssignments",
         .world =
             [] {
               World w;
               w.workload = WorkloadWrapper("wl", kTestNamespace)
                                .PodSets({PodSetWrapper("ps11", 2)
                                              .Request("cpu", "1")
                                              .PriorityClass("pc-100")
                                              .Obj(),
                                          PodSetWrapper("ps22", 2)
                                              .Request("cpu", "1")
                                              .PriorityClass("pc-200")
                                              .Obj()})
                                .ReserveQuota("q1", MergeAssignments())
                                .AdmissionChecks(
                                    {CheckState("check1", "Pending"),
                                     CheckState("not-provisioning", "Pending")})
                                .Obj();
               w.checks = {BaseCheck()};
               w.configs = {ConfigWrapper("config1")
                                .PodSetMergePolicy(
                                    kIdenticalWorkloadSchedulingRequirements)
                                .Obj()};
               return w;
             },
         .want_error = absl::StatusCode::kFailedPrecondition,
         .want_error_substr = "inconsistent podSet assignments"},

        // ---- kq's own: what replaces owner references and retryCount ----
        {.name = "kq_retry_record_kept_on_eviction_other_requests_deleted",
         .world =
             [] {
               json record = WithCondition(BaseRequest(), "Failed", "True");
               record["metadata"]["annotations"][kRetryReportedAnnotation] =
                   "true";
               json older =
                   Request("wl-check1-0", {}, "class1", {{"p1", "v1"}});
               older["metadata"]["annotations"][kRetryReportedAnnotation] =
                   "true";
               json unrelated_check = Request("wl-check9-1", {}, "", {});
               World w = Base({record, older, unrelated_check},
                              {BaseTemplate1(), BaseTemplate2()});
               w.workload = BaseWorkload()
                                .Condition("Evicted", "True", "AdmissionCheck")
                                .Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-0", "wl-check9-1"},
         .want_retry_records = {"wl-check1-1"}},
        // The Retry reached kqd but the shim stopped before recording it:
        // kqd's eviction message says the check was Retry.
        {.name = "kq_lost_retry_is_recorded_on_eviction",
         .world =
             [] {
               World w = Base({WithCondition(BaseRequest(), "Failed", "True")},
                              {BaseTemplate1(), BaseTemplate2()});
               w.workload =
                   BaseWorkload()
                       .Condition("Evicted", "True", "AdmissionCheck")
                       .AdmissionChecks(
                           {CheckState("check1", "Pending",
                                       "Reset to Pending after eviction. "
                                       "Previously: Retry"),
                            CheckState("not-provisioning", "Pending")})
                       .Obj();
               return w;
             },
         .want_retry_records = {"wl-check1-1"}},
        // Without that message the failed request is not a retry record:
        // Kueue's cleanup deletes it.
        {.name = "kq_failed_request_deleted_on_eviction_without_retry",
         .world =
             [] {
               World w = Base({WithCondition(BaseRequest(), "Failed", "True")},
                              {BaseTemplate1(), BaseTemplate2()});
               w.workload =
                   BaseWorkload()
                       .Condition("Evicted", "True", "Preempted")
                       .AdmissionChecks(
                           {CheckState("check1", "Pending",
                                       "Reset to Pending after eviction. "
                                       "Previously: Ready"),
                            CheckState("not-provisioning", "Pending")})
                       .Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"},
         .want_templates_not_found = {"ppt-wl-check1-1-ps1",
                                      "ppt-wl-check1-1-ps2"}},
        {.name = "kq_retry_record_deleted_when_the_workload_finishes",
         .world =
             [] {
               json record = WithCondition(BaseRequest(), "Failed", "True");
               record["metadata"]["annotations"][kRetryReportedAnnotation] =
                   "true";
               World w = Base({record}, {BaseTemplate1(), BaseTemplate2()});
               w.workload = BaseWorkload().Condition("Finished", "True").Obj();
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"},
         .want_templates_not_found = {"ppt-wl-check1-1-ps1",
                                      "ppt-wl-check1-1-ps2"}},
        {.name = "kq_objects_deleted_when_the_workload_is_gone",
         .world =
             [] {
               World w =
                   Base({BaseRequest()}, {BaseTemplate1(), BaseTemplate2()});
               w.workload_gone = true;
               return w;
             },
         .want_requests_not_found = {"wl-check1-1"},
         .want_templates_not_found = {"ppt-wl-check1-1-ps1",
                                      "ppt-wl-check1-1-ps2"}},
        // The same name, another UID: the earlier workload's request goes,
        // and the current workload gets its own.
        {.name = "kq_objects_of_an_earlier_incarnation_are_replaced",
         .world =
             [] {
               json old = Provisioned(BaseRequest());
               old["metadata"]["annotations"][kWorkloadUidAnnotation] =
                   "old-uid";
               json old_template = BaseTemplate1();
               old_template["metadata"]["annotations"][kWorkloadUidAnnotation] =
                   "old-uid";
               return Base({old}, {old_template});
             },
         .want_checks = kBaseChecks,
         .want_requests = {{"wl-check1-1", BaseRequest()}},
         .want_templates = BaseTemplatesOwnedBy("wl-check1-1")},
    }),
    [](const auto& info) { return info.param.name; });

// The adoption path for real: the request exists on the server (with this
// workload's UID) but not in the reconciler's input.
TEST(ReconcileAdoptTest, ExistingRequestOfThisWorkloadIsAdopted) {
  ::kq::testing::FakeKubeClient kube;
  kube.Add(kube::kProvisioningRequests, BaseRequest());
  v1::Workload wl = BaseWorkload().Obj();
  std::map<std::string, v1::AdmissionCheck> checks = {{"check1", BaseCheck()}};
  std::map<std::string, v1::ProvisioningRequestConfig> configs = {
      {"config1", BaseConfigWithRetryStrategy().Obj()}};
  const auto placements = PlacementsOf(wl);
  int writes = 0;
  ReconcileHooks hooks;
  hooks.set_check_state = [&](const v1::SetAdmissionCheckStateRequest&)
      -> absl::StatusOr<v1::Workload> {
    ++writes;
    return wl;
  };
  ReconcileInput input;
  input.namespace_name = kTestNamespace;
  input.name = "wl";
  input.workload = &wl;
  input.placements = &placements;
  input.admission_checks = &checks;
  input.configs = &configs;
  ReconcileResult result;
  ASSERT_TRUE(ReconcileWorkload(kube, hooks, input, &result).ok());
  EXPECT_EQ(writes, 0);
  EXPECT_EQ(result.requests_created, 0);
  EXPECT_EQ(result.templates_created, 2);
  EXPECT_EQ(kube.All(kube::kProvisioningRequests).size(), 1u);
  // The templates are owned by the adopted request.
  const json* t =
      kube.Find(kube::kPodTemplates, kTestNamespace, "ppt-wl-check1-1-ps1");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ((*t)["metadata"]["ownerReferences"][0]["name"], "wl-check1-1");
}

}  // namespace
}  // namespace kq::shim::provisioning
