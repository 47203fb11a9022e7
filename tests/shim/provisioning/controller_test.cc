// ProvisioningController against the Kubernetes API server fixture
// (tests/k8s/fake_apiserver.py, serving autoscaling.x-k8s.io/v1
// provisioningrequests with their /status subresource and v1 podtemplates)
// and a real kqd with the example provisioning-setup.yaml applied. The
// tests play the cluster autoscaler: they set the requests' conditions
// through /status, as it does, and watch the admission check and the
// workload at kqd.

#include "shim/provisioning/controller.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "base/metrics.h"
#include "manifest/manifest.h"
#include "manifest/proto_json.h"
#include "proto/util/workload.h"
#include "shim/jobs/controller.h"
#include "shim/jobs/job_workload.h"
#include "shim/kube/client.h"
#include "shim/provisioning/provisioning.h"
#include "tests/integration/kqd_process.h"
#include "tests/shim/testing/fake_apiserver_process.h"
#include "tests/shim/testing/kq_test_helpers.h"
#include "tests/testing/temp_dir.h"

namespace kq::shim::provisioning {
namespace {

using ::kq::testing::ConditionTrue;
using ::kq::testing::FindWorkloadCondition;
using ::kq::testing::KqOptions;
using ::kq::testing::WaitFor;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kNamespace[] = "default";
constexpr char kCheck[] = "sample-prov";
constexpr char kClass[] = "check-capacity.autoscaling.x-k8s.io";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.is_open()) << "cannot read " << path;
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

class ProvisioningControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<::kq::testing::FakeApiServer>> api =
        ::kq::testing::FakeApiServer::Start();
    ASSERT_TRUE(api.ok()) << api.status();
    api_ = *std::move(api);
    absl::StatusOr<kube::Config> config = api_->LoadConfig();
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<std::unique_ptr<kube::Client>> kube =
        kube::Client::Create(*config);
    ASSERT_TRUE(kube.ok()) << kube.status();
    kube_ = *std::move(kube);

    kqd_ = std::make_unique<::kq::testing::KqdProcess>(kqd_dir_.path());
    ASSERT_TRUE(kqd_->Start().ok());
    kq_ = client::NewGrpcClient(KqOptions(kqd_->target()));
    ApplyYaml(ReadFile(std::string(KQ_EXAMPLES_DIR) +
                       "/kueue/provisioning/provisioning-setup.yaml"));
  }

  void TearDown() override {
    StopController();
    if (HasFailure() && api_ != nullptr) {
      std::string text = ReadFile(api_->log_path());
      if (text.size() > 4000) text = text.substr(text.size() - 4000);
      std::cerr << "fixture log tail:\n" << text << "\n";
    }
  }

  void ApplyYaml(const std::string& yaml) {
    auto docs = manifest::ParseManifests(yaml);
    ASSERT_TRUE(docs.ok()) << docs.status();
    v1::ApplyRequest request;
    for (const manifest::Document& doc : *docs) {
      ASSERT_TRUE(doc.status.ok()) << doc.status;
      if (doc.config_object) *request.add_objects() = *doc.config_object;
    }
    ASSERT_GT(request.objects_size(), 0);
    auto applied = kq_->Apply(request);
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  void StartController() {
    ProvisioningOptions options;
    options.workers = 2;
    options.resync = absl::Seconds(2);
    options.initial_backoff = absl::Milliseconds(50);
    options.max_backoff = absl::Seconds(1);
    options.reflector_max_backoff = absl::Seconds(1);
    stop_ = false;
    controller_ =
        std::make_unique<ProvisioningController>(*kube_, *kq_, options);
    thread_ = std::thread([this] { controller_->Run(stop_); });
    ASSERT_TRUE(WaitFor([this] { return controller_->Synced(); }));
  }

  void StopController() {
    if (!thread_.joinable()) return;
    stop_ = true;
    thread_.join();
    controller_.reset();
  }

  // The Job's pod set as the shim's job integration submits it: the pod
  // template of sample-job.yaml (1 GPU a pod, its toleration), 3 pods.
  v1::Workload GpuWorkload(const std::string& name, int count = 3) {
    const json tmpl = {
        {"spec",
         {{"tolerations",
           {{{"key", "nvidia.com/gpu"},
             {"operator", "Exists"},
             {"effect", "NoSchedule"}}}},
          {"containers",
           {{{"name", "dummy-job"},
             {"image", "registry.k8s.io/e2e-test-images/agnhost:2.53"},
             {"args", {"pause"}},
             {"resources",
              {{"requests",
                {{"cpu", "100m"},
                 {"memory", "100Mi"},
                 {"nvidia.com/gpu", "1"}}},
               {"limits", {{"nvidia.com/gpu", "1"}}}}}}}},
          {"restartPolicy", "Never"}}}};
    v1::Workload wl;
    wl.mutable_metadata()->set_name(name);
    wl.mutable_metadata()->set_namespace_(kNamespace);
    (*wl.mutable_metadata()->mutable_annotations())
        ["provreq.kueue.x-k8s.io/maxRunDurationSeconds"] = "600";
    wl.mutable_spec()->set_queue_name("user-queue");
    v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(count);
    (*ps->mutable_requests())["cpu"] = "100m";
    (*ps->mutable_requests())["memory"] = "100Mi";
    (*ps->mutable_requests())["nvidia.com/gpu"] = "1";
    v1::Toleration* t = ps->add_tolerations();
    t->set_key("nvidia.com/gpu");
    t->set_operator_("Exists");
    t->set_effect("NoSchedule");
    *ps->mutable_template_() = *manifest::internal::JsonToStruct(tmpl, "t");
    return wl;
  }

  void Submit(const v1::Workload& wl) {
    auto submitted = kq_->SubmitWorkload(wl);
    ASSERT_TRUE(submitted.ok()) << submitted.status();
  }

  v1::Workload Workload(const std::string& name) {
    auto got = kq_->GetWorkload(kNamespace, name);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? got->workload() : v1::Workload();
  }

  const v1::AdmissionCheckState* Check(const v1::Workload& wl) {
    return proto_util::FindAdmissionCheck(wl, kCheck);
  }

  std::optional<json> Get(const kube::Resource& resource,
                          const std::string& name) {
    absl::StatusOr<json> got = kube_->Get(resource, kNamespace, name);
    if (!got.ok()) return std::nullopt;
    return *got;
  }

  // The requests of a workload in the fixture, by name.
  std::vector<std::string> RequestsOf(const std::string& workload) {
    std::vector<std::string> names;
    auto listed = kube_->List(kube::kProvisioningRequests, kNamespace);
    EXPECT_TRUE(listed.ok()) << listed.status();
    if (!listed.ok()) return names;
    for (const json& r : listed->items) {
      if (AnnotationOf(r, kWorkloadNameAnnotation) == workload) {
        names.push_back(NameOf(r));
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::vector<std::string> TemplatesOf(const std::string& workload) {
    std::vector<std::string> names;
    auto listed = kube_->List(kube::kPodTemplates, kNamespace);
    EXPECT_TRUE(listed.ok()) << listed.status();
    if (!listed.ok()) return names;
    for (const json& t : listed->items) {
      if (AnnotationOf(t, kWorkloadNameAnnotation) == workload) {
        names.push_back(NameOf(t));
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // What the autoscaler does: PATCH .../provisioningrequests/NAME/status.
  void SetConditions(const std::string& request,
                     const std::vector<json>& conditions,
                     const json& details = json()) {
    json status = {{"conditions", json::array()}};
    for (const json& c : conditions) status["conditions"].push_back(c);
    if (!details.is_null()) status["provisioningClassDetails"] = details;
    absl::StatusOr<json> patched = kube_->Patch(
        kube::kProvisioningRequests, kNamespace, request + "/status",
        kube::PatchType::kMergePatch, {{"status", status}});
    ASSERT_TRUE(patched.ok()) << patched.status();
  }

  static json Condition(const std::string& type, const std::string& status,
                        const std::string& message) {
    return {{"type", type},
            {"status", status},
            {"reason", type},
            {"message", message},
            {"lastTransitionTime", "2026-01-01T00:00:00Z"}};
  }

  ::kq::testing::ScopedTempDir kqd_dir_;
  std::unique_ptr<::kq::testing::FakeApiServer> api_;
  std::unique_ptr<kube::Client> kube_;
  std::unique_ptr<::kq::testing::KqdProcess> kqd_;
  std::unique_ptr<client::Client> kq_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<ProvisioningController> controller_;
  std::thread thread_;
};

// Kueue's "with config" then "when request is provisioned", end to end: the
// request and its PodTemplate appear, the check stays Pending and the
// workload unadmitted until the autoscaler reports Provisioned=True; then
// the check is Ready with Kueue's podSetUpdates and the workload Admitted.
// A restart of the shim in between creates nothing twice; BookingExpired
// after admission is ignored; finishing the workload removes everything.
TEST_F(ProvisioningControllerTest, ProvisionedRequestAdmitsTheWorkload) {
  StartController();
  Submit(GpuWorkload("job-sample"));
  const std::string pr_name = "job-sample-sample-prov-1";
  const std::string pt_name = "ppt-job-sample-sample-prov-1-main";

  // The request, as Kueue writes it.
  ASSERT_TRUE(WaitFor([&] {
    std::optional<json> pt = Get(kube::kPodTemplates, pt_name);
    return Get(kube::kProvisioningRequests, pr_name).has_value() &&
           pt.has_value() && pt->contains("metadata") &&
           (*pt)["metadata"].contains("ownerReferences");
  }));
  json pr = *Get(kube::kProvisioningRequests, pr_name);
  EXPECT_EQ(pr["metadata"]["labels"][kManagedLabel], "true");
  v1::Workload wl = Workload("job-sample");
  EXPECT_EQ(AnnotationOf(pr, kWorkloadNamespaceAnnotation), kNamespace);
  EXPECT_EQ(AnnotationOf(pr, kWorkloadNameAnnotation), "job-sample");
  EXPECT_EQ(AnnotationOf(pr, kWorkloadUidAnnotation), wl.metadata().uid());
  EXPECT_EQ(pr["spec"]["provisioningClassName"], kClass);
  EXPECT_EQ(pr["spec"]["parameters"], json({{"maxRunDurationSeconds", "600"}}));
  EXPECT_EQ(pr["spec"]["podSets"],
            json({{{"podTemplateRef", {{"name", pt_name}}}, {"count", 3}}}));

  // Its PodTemplate: the pod set's template, owned by the request.
  json pt = *Get(kube::kPodTemplates, pt_name);
  const json& container = pt["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["resources"]["requests"]["nvidia.com/gpu"], "1");
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "1");
  EXPECT_EQ(pt["template"]["spec"]["tolerations"][0]["key"], "nvidia.com/gpu");
  EXPECT_EQ(pt["metadata"]["labels"][kManagedLabel], "true");
  EXPECT_EQ(AnnotationOf(pt, kRequestAnnotation), pr_name);
  ASSERT_EQ(pt["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ(pt["metadata"]["ownerReferences"][0]["kind"],
            "ProvisioningRequest");
  EXPECT_EQ(pt["metadata"]["ownerReferences"][0]["uid"], pr["metadata"]["uid"]);

  // Quota reserved, the check Pending, not admitted.
  absl::SleepFor(absl::Milliseconds(500));
  wl = Workload("job-sample");
  EXPECT_TRUE(ConditionTrue(wl, "QuotaReserved"));
  EXPECT_FALSE(ConditionTrue(wl, "Admitted"));
  ASSERT_NE(Check(wl), nullptr);
  EXPECT_EQ(Check(wl)->state(), "Pending");

  // A restarted shim lists both sides and creates nothing again.
  StopController();
  StartController();
  const int64_t before = controller_->reconcile_count();
  ASSERT_TRUE(WaitFor([&] { return controller_->reconcile_count() > before; }));
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(RequestsOf("job-sample"), std::vector<std::string>{pr_name});
  EXPECT_EQ(TemplatesOf("job-sample"), std::vector<std::string>{pt_name});

  // The autoscaler provisions: the check is Ready with Kueue's
  // podSetUpdates and the workload is admitted.
  SetConditions(pr_name,
                {Condition("Accepted", "True", ""),
                 Condition("Provisioned", "True", "Provisioned by test")});
  ASSERT_TRUE(WaitFor([&] {
    return ConditionTrue(Workload("job-sample"), "Admitted");
  })) << Workload("job-sample").DebugString();
  wl = Workload("job-sample");
  ASSERT_NE(Check(wl), nullptr);
  EXPECT_EQ(Check(wl)->state(), "Ready");
  EXPECT_EQ(Check(wl)->message(), "Provisioned by test");
  ASSERT_EQ(Check(wl)->pod_set_updates_size(), 1);
  const v1::PodSetUpdate& update = Check(wl)->pod_set_updates(0);
  EXPECT_EQ(update.name(), "main");
  EXPECT_EQ(update.annotations().at(kConsumeProvisioningRequestAnnotation),
            pr_name);
  EXPECT_EQ(update.annotations().at(kProvisioningClassAnnotation), kClass);

  // BookingExpired once admitted: ignored, as Kueue does.
  SetConditions(pr_name,
                {Condition("Accepted", "True", ""),
                 Condition("Provisioned", "True", "Provisioned by test"),
                 Condition("BookingExpired", "True", "expired")});
  absl::SleepFor(absl::Seconds(1));
  wl = Workload("job-sample");
  EXPECT_TRUE(ConditionTrue(wl, "Admitted"));
  EXPECT_EQ(Check(wl)->state(), "Ready");
  EXPECT_EQ(RequestsOf("job-sample"), std::vector<std::string>{pr_name});

  // Finished: the request and its template go.
  auto finished = kq_->FinishWorkload(kNamespace, "job-sample", true, "done");
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_TRUE(WaitFor([&] {
    return RequestsOf("job-sample").empty() &&
           TemplatesOf("job-sample").empty();
  })) << absl::StrJoin(RequestsOf("job-sample"), ",");
}

// Kueue's "when request fails and is retried" and "when request fails, and
// there is no retry", end to end with the example's retryStrategy
// (backoffLimitCount 2, backoffBaseSeconds 0): attempt 1 fails -> Retry,
// the workload is requeued, attempt 2 is created; attempt 2 fails -> attempt
// 3; attempt 3 fails past the limit -> Rejected, the workload deactivated.
// Cancelling it removes what is left.
TEST_F(ProvisioningControllerTest, FailedRequestIsRetriedThenRejected) {
  StartController();
  Submit(GpuWorkload("job-flaky"));
  const std::string pr1 = "job-flaky-sample-prov-1";
  const std::string pr2 = "job-flaky-sample-prov-2";
  const std::string pr3 = "job-flaky-sample-prov-3";
  ASSERT_TRUE(WaitFor(
      [&] { return Get(kube::kProvisioningRequests, pr1).has_value(); }));

  SetConditions(pr1, {Condition("Failed", "True", "no capacity")});
  ASSERT_TRUE(WaitFor([&] {
    return Get(kube::kProvisioningRequests, pr2).has_value();
  })) << absl::StrJoin(RequestsOf("job-flaky"), ",");
  // Attempt 1 stays as the record of the retry kq's check state cannot
  // hold; its Retry evicted the workload once.
  std::optional<json> record = Get(kube::kProvisioningRequests, pr1);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(AnnotationOf(*record, kRetryReportedAnnotation), "true");
  v1::Workload wl = Workload("job-flaky");
  EXPECT_TRUE(ConditionTrue(wl, "QuotaReserved"));
  EXPECT_FALSE(ConditionTrue(wl, "Admitted"));
  EXPECT_EQ(Check(wl)->state(), "Pending");
  // Requeued after the check's backoff (backoffBaseSeconds 0: at once).
  const v1::Condition* requeued = FindWorkloadCondition(wl, "Requeued");
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->reason(), "BackoffFinished");
  EXPECT_EQ(TemplatesOf("job-flaky"),
            (std::vector<std::string>{"ppt-job-flaky-sample-prov-1-main",
                                      "ppt-job-flaky-sample-prov-2-main"}));

  SetConditions(pr2, {Condition("Failed", "True", "no capacity again")});
  ASSERT_TRUE(WaitFor([&] {
    return RequestsOf("job-flaky") == std::vector<std::string>{pr2, pr3};
  })) << absl::StrJoin(RequestsOf("job-flaky"), ",");

  // Past backoffLimitCount: Rejected deactivates the workload.
  SetConditions(pr3, {Condition("Failed", "True", "still no capacity")});
  ASSERT_TRUE(WaitFor([&] {
    v1::Workload w = Workload("job-flaky");
    return w.spec().has_active() && !w.spec().active();
  })) << Workload("job-flaky").DebugString();
  wl = Workload("job-flaky");
  const v1::Condition* evicted = FindWorkloadCondition(wl, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->status(), "True");
  EXPECT_THAT(evicted->message(), HasSubstr(kCheck));
  // The rejected attempt goes; the record of the last retry stays while the
  // workload exists.
  EXPECT_TRUE(WaitFor([&] {
    return RequestsOf("job-flaky") == std::vector<std::string>{pr2};
  })) << absl::StrJoin(RequestsOf("job-flaky"), ",");

  auto cancelled = kq_->CancelWorkload(kNamespace, "job-flaky");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_TRUE(WaitFor([&] {
    return RequestsOf("job-flaky").empty() && TemplatesOf("job-flaky").empty();
  })) << absl::StrJoin(RequestsOf("job-flaky"), ",");
}

// An AdmissionCheck whose ProvisioningRequestConfig is missing: counted by
// the gauge, nothing created; once the config appears the request is; when
// it goes again while the workload holds quota, Kueue's "missing config":
// the check is Pending "the check is not active".
TEST_F(ProvisioningControllerTest, MissingConfigThenConfigApplied) {
  ApplyYaml(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata:
  name: missing-prov
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters:
    apiGroup: kueue.x-k8s.io
    kind: ProvisioningRequestConfig
    name: later-config
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq-missing
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: "default-flavor"
      resources:
      - {name: "cpu", nominalQuota: 9}
      - {name: "memory", nominalQuota: 36Gi}
      - {name: "nvidia.com/gpu", nominalQuota: 9}
  admissionChecksStrategy:
    admissionChecks:
    - name: missing-prov
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: default
  name: missing-queue
spec:
  clusterQueue: cq-missing
)");
  StartController();
  v1::Workload wl = GpuWorkload("job-missing", 1);
  wl.mutable_spec()->set_queue_name("missing-queue");
  Submit(wl);
  // kqd reports the check Active=False, so its ClusterQueue is inactive
  // and reserves nothing (Kueue's rule); the shim creates nothing.
  ASSERT_TRUE(WaitFor([&] {
    return Metrics::Global().Value(
               "kq_shim_provisioning_checks_without_config") >= 1;
  }));
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_FALSE(ConditionTrue(Workload("job-missing"), "QuotaReserved"));
  EXPECT_TRUE(RequestsOf("job-missing").empty());

  ApplyYaml(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata:
  name: later-config
spec:
  provisioningClassName: queued-provisioning.gke.io
)");
  ASSERT_TRUE(WaitFor([&] {
    return RequestsOf("job-missing") ==
           std::vector<std::string>{"job-missing-missing-prov-1"};
  }));
  std::optional<json> pr =
      Get(kube::kProvisioningRequests, "job-missing-missing-prov-1");
  ASSERT_TRUE(pr.has_value());
  EXPECT_EQ((*pr)["spec"]["provisioningClassName"],
            "queued-provisioning.gke.io");
  EXPECT_TRUE(WaitFor([&] {
    return Metrics::Global().Value(
               "kq_shim_provisioning_checks_without_config") == 0;
  }));

  // The config removed while the workload holds quota: Kueue's "missing
  // config" case, Pending "the check is not active", and the request is no
  // longer any check's, so it goes.
  absl::Status deleted =
      kq_->Delete("ProvisioningRequestConfig", "", "later-config");
  if (!deleted.ok()) {
    GTEST_SKIP() << "kqd refuses to delete a referenced config: " << deleted;
  }
  ASSERT_TRUE(WaitFor([&] {
    const v1::Workload current = Workload("job-missing");
    const v1::AdmissionCheckState* check =
        proto_util::FindAdmissionCheck(current, "missing-prov");
    return check != nullptr && check->message() == kCheckInactiveMessage &&
           check->state() == "Pending";
  })) << Workload("job-missing").DebugString();
  EXPECT_TRUE(WaitFor([&] { return RequestsOf("job-missing").empty(); }));
  EXPECT_GE(
      Metrics::Global().Value("kq_shim_provisioning_checks_without_config"), 1);
}

// The seed's workflow with the check (Pitfall 3): a Job labelled with the
// LocalQueue becomes a Workload (shim/jobs), its quota is reserved, the
// ProvisioningRequest gates it; once Provisioned, the Job starts with
// Kueue's podSetUpdates in its pod template.
TEST_F(ProvisioningControllerTest, JobStartsOnlyOnceProvisioned) {
  StartController();
  jobs::JobControllerOptions job_options;
  job_options.runner_id = "shim-1";
  job_options.lease = absl::Seconds(3);
  job_options.initial_backoff = absl::Milliseconds(100);
  job_options.max_backoff = absl::Seconds(1);
  job_options.reflector_max_backoff = absl::Seconds(1);
  jobs::JobController jobs(*kube_, *kq_, job_options);
  ASSERT_TRUE(jobs.Start().ok());

  json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", "sample-job"},
        {"namespace", kNamespace},
        {"labels", {{"kueue.x-k8s.io/queue-name", "user-queue"}}},
        {"annotations",
         {{"provreq.kueue.x-k8s.io/maxRunDurationSeconds", "600"},
          {"fake.kq.dev/runtime-seconds", "60"}}}}},
      {"spec",
       {{"parallelism", 3},
        {"completions", 3},
        {"suspend", true},
        {"template",
         {{"spec",
           {{"tolerations",
             {{{"key", "nvidia.com/gpu"},
               {"operator", "Exists"},
               {"effect", "NoSchedule"}}}},
            {"containers",
             {{{"name", "dummy-job"},
               {"image", "registry.k8s.io/e2e-test-images/agnhost:2.53"},
               {"args", {"pause"}},
               {"resources",
                {{"requests",
                  {{"cpu", "100m"},
                   {"memory", "100Mi"},
                   {"nvidia.com/gpu", 1}}},
                 {"limits", {{"nvidia.com/gpu", 1}}}}}}}},
            {"restartPolicy", "Never"}}}}}}}};
  absl::StatusOr<json> created = kube_->Create(kube::kJobs, kNamespace, job);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string wl_name =
      jobs::WorkloadNameForJob("sample-job", jobs::UidOfJob(*created));
  const std::string pr_name = ProvisioningRequestName(wl_name, kCheck, 1);

  ASSERT_TRUE(WaitFor([&] {
    return Get(kube::kProvisioningRequests, pr_name).has_value();
  })) << absl::StrJoin(RequestsOf(wl_name), ",");
  std::optional<json> pt =
      Get(kube::kPodTemplates, PodTemplateName(pr_name, "main"));
  ASSERT_TRUE(pt.has_value());
  EXPECT_EQ(pt->at("template")["spec"]["containers"][0]["resources"]["requests"]
                              ["nvidia.com/gpu"],
            "1");
  // Gated: the Job stays suspended.
  absl::SleepFor(absl::Seconds(1));
  EXPECT_EQ(
      kube_->Get(kube::kJobs, kNamespace, "sample-job")->at("spec")["suspend"],
      true);

  SetConditions(pr_name, {Condition("Provisioned", "True", "")});
  ASSERT_TRUE(WaitFor([&] {
    absl::StatusOr<json> now =
        kube_->Get(kube::kJobs, kNamespace, "sample-job");
    return now.ok() && (*now)["spec"]["suspend"] == false;
  }));
  json running = *kube_->Get(kube::kJobs, kNamespace, "sample-job");
  const json& annotations =
      running["spec"]["template"]["metadata"]["annotations"];
  EXPECT_EQ(annotations.value(kConsumeProvisioningRequestAnnotation, ""),
            pr_name);
  EXPECT_EQ(annotations.value(kProvisioningClassAnnotation, ""), kClass);
  jobs.Stop();
}

// A kqd restart (SIGKILL, same port and data) while the check is Pending:
// the watch resumes, nothing is created twice, and the Provisioned request
// still admits the workload.
TEST_F(ProvisioningControllerTest, KqdRestartWhileProvisioning) {
  StartController();
  Submit(GpuWorkload("job-restart"));
  const std::string pr_name = "job-restart-sample-prov-1";
  ASSERT_TRUE(WaitFor(
      [&] { return Get(kube::kProvisioningRequests, pr_name).has_value(); }));

  const int port = kqd_->port();
  kqd_->Kill();
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_TRUE(kqd_->Start({absl::StrCat("--listen=127.0.0.1:", port)}).ok());
  absl::SleepFor(absl::Seconds(3));
  EXPECT_EQ(RequestsOf("job-restart"), std::vector<std::string>{pr_name});

  SetConditions(pr_name, {Condition("Provisioned", "True", "")});
  EXPECT_TRUE(WaitFor([&] {
    return ConditionTrue(Workload("job-restart"), "Admitted");
  })) << Workload("job-restart").DebugString();
  EXPECT_EQ(RequestsOf("job-restart"), std::vector<std::string>{pr_name});
}

}  // namespace
}  // namespace kq::shim::provisioning
