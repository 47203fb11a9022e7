// JobController against the Kubernetes API server fixture
// (tests/k8s/fake_apiserver.py, whose Job controller marks an unsuspended
// Job active, then Complete after its runtime, and takes pod-stop-seconds
// to empty a suspended one) and a real kqd. Each test follows one of
// Kueue's job integration behaviours end to end; names say which.

#include "shim/jobs/controller.h"

#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"
#include "shim/jobs/job_workload.h"
#include "shim/kube/client.h"
#include "tests/integration/kqd_process.h"
#include "tests/shim/testing/fake_apiserver_process.h"
#include "tests/shim/testing/kq_test_helpers.h"
#include "tests/testing/temp_dir.h"

namespace kq::shim::jobs {
namespace {

using ::kq::testing::ConditionTrue;
using ::kq::testing::FindWorkloadCondition;
using ::kq::testing::KqOptions;
using ::kq::testing::WaitFor;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kNamespace[] = "team";

// One flavor with nodeLabels and a toleration, 4 cpus, preemption of lower
// priorities within the ClusterQueue.
constexpr char kConfig[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu-a100}
spec:
  nodeLabels: {cloud.google.com/gke-accelerator: nvidia-tesla-a100}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: gpu-a100
      resources:
      - {name: cpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team, name: lq}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: low}
value: 100
)";

struct JobSpec {
  std::string name;
  std::string priority_class;
  std::string cpu = "1";
  bool suspend = true;
  double runtime_seconds = 60;
  std::string queue = "lq";
  bool fail = false;
};

class JobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::kq::testing::FakeApiServerOptions api_options;
    api_options.pod_stop_seconds = 0.5;
    absl::StatusOr<std::unique_ptr<::kq::testing::FakeApiServer>> api =
        ::kq::testing::FakeApiServer::Start(api_options);
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
    ApplyConfig();
  }

  void TearDown() override {
    controller_.reset();
    if (HasFailure() && api_ != nullptr) {
      std::ifstream log(api_->log_path());
      std::string text((std::istreambuf_iterator<char>(log)),
                       std::istreambuf_iterator<char>());
      if (text.size() > 4000) text = text.substr(text.size() - 4000);
      std::cerr << "fixture log tail:\n" << text << "\n";
    }
  }

  void ApplyConfig() {
    auto docs = manifest::ParseManifests(kConfig);
    ASSERT_TRUE(docs.ok()) << docs.status();
    v1::ApplyRequest request;
    for (const manifest::Document& doc : *docs) {
      ASSERT_TRUE(doc.status.ok()) << doc.status;
      *request.add_objects() = *doc.config_object;
    }
    auto applied = kq_->Apply(request);
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  JobControllerOptions Options(const std::string& runner_id = "shim-1") {
    JobControllerOptions options;
    options.runner_id = runner_id;
    options.lease = absl::Seconds(3);
    options.workers = 2;
    options.initial_backoff = absl::Milliseconds(100);
    options.max_backoff = absl::Seconds(1);
    options.stop_recheck = absl::Seconds(1);
    options.reflector_max_backoff = absl::Seconds(1);
    return options;
  }

  void StartController(const std::string& runner_id = "shim-1") {
    controller_ =
        std::make_unique<JobController>(*kube_, *kq_, Options(runner_id));
    ASSERT_TRUE(controller_->Start().ok());
  }

  json CreateJob(const JobSpec& spec) {
    json job = {
        {"apiVersion", "batch/v1"},
        {"kind", "Job"},
        {"metadata",
         {{"name", spec.name},
          {"namespace", kNamespace},
          {"labels", {{kQueueNameLabel, spec.queue}}},
          {"annotations",
           {{"fake.kq.dev/runtime-seconds",
             absl::StrCat(spec.runtime_seconds)}}}}},
        {"spec",
         {{"suspend", spec.suspend},
          {"parallelism", 1},
          {"completions", 1},
          {"template",
           {{"spec",
             {{"restartPolicy", "Never"},
              {"nodeSelector", {{"team", "ml"}}},
              {"containers",
               json::array({{{"name", "c"},
                             {"image", "busybox"},
                             {"resources",
                              {{"requests", {{"cpu", spec.cpu}}}}}}})}}}}}}}};
    if (spec.fail) job["metadata"]["annotations"]["fake.kq.dev/fail"] = "true";
    if (!spec.priority_class.empty()) {
      job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] =
          spec.priority_class;
    }
    absl::StatusOr<json> created = kube_->Create(kube::kJobs, kNamespace, job);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? *created : json();
  }

  json GetJob(const std::string& name) {
    absl::StatusOr<json> job = kube_->Get(kube::kJobs, kNamespace, name);
    return job.ok() ? *job : json();
  }

  bool Unsuspended(const std::string& name) {
    json job = GetJob(name);
    return job.is_object() && !SuspendRequested(job) && ActivePods(job) > 0;
  }

  std::optional<v1::Workload> Workload(const json& job) {
    auto got = kq_->GetWorkload(
        kNamespace, WorkloadNameForJob(KeyOfJob(job).name, UidOfJob(job)));
    if (!got.ok()) return std::nullopt;
    return got->workload();
  }

  // Events about `name`, as "Type Reason: message".
  std::vector<std::string> Events(const std::string& name) {
    std::vector<std::string> out;
    absl::StatusOr<kube::ListResult> events =
        kube_->List(kube::kEvents, kNamespace);
    if (!events.ok()) return out;
    for (const json& e : events->items) {
      if (e["involvedObject"].value("name", "") != name) continue;
      out.push_back(absl::StrCat(e.value("type", ""), " ",
                                 e.value("reason", ""), ": ",
                                 e.value("message", "")));
    }
    return out;
  }

  bool HasEvent(const std::string& name, const std::string& event) {
    for (const std::string& e : Events(name)) {
      if (e == event) return true;
    }
    return false;
  }

  // Unfinished Workloads in kqd.
  std::vector<std::string> ActiveWorkloads() {
    v1::ListWorkloadsRequest request;
    request.set_namespace_(kNamespace);
    auto listed = kq_->ListWorkloads(request);
    std::vector<std::string> names;
    if (!listed.ok()) return names;
    for (const v1::Workload& wl : listed->workloads()) {
      names.push_back(wl.metadata().name());
    }
    return names;
  }

  std::unique_ptr<::kq::testing::FakeApiServer> api_;
  std::unique_ptr<kube::Client> kube_;
  ::kq::testing::ScopedTempDir kqd_dir_;
  std::unique_ptr<::kq::testing::KqdProcess> kqd_;
  std::unique_ptr<client::Client> kq_;
  std::unique_ptr<JobController> controller_;
};

// Kueue: "when workload is admitted, job gets node selectors", then "when
// job completes, workload is marked as finished".
TEST_F(JobControllerTest, AdmittedJobStartsWithFlavorPlacementAndFinishes) {
  StartController();
  json job = CreateJob({.name = "sample", .runtime_seconds = 1.5});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("sample"); }));

  json running = GetJob("sample");
  const json& pod_spec = running["spec"]["template"]["spec"];
  EXPECT_EQ(pod_spec["nodeSelector"],
            json({{"team", "ml"},
                  {"cloud.google.com/gke-accelerator", "nvidia-tesla-a100"}}));
  EXPECT_EQ(pod_spec["tolerations"], json::array({{{"key", "nvidia.com/gpu"},
                                                   {"operator", "Exists"},
                                                   {"effect", "NoSchedule"}}}));
  const json& labels = running["spec"]["template"]["metadata"]["labels"];
  EXPECT_EQ(labels.value(kPodSetLabel, ""), "main");
  EXPECT_EQ(labels.value(kLocalQueueLabel, ""), "lq");
  EXPECT_EQ(labels.value(kClusterQueueLabel, ""), "cq");
  EXPECT_TRUE(running["metadata"]["annotations"].contains(
      kOriginalPodSchedulingAnnotation));

  std::optional<v1::Workload> wl = Workload(job);
  ASSERT_TRUE(wl.has_value());
  EXPECT_EQ(wl->metadata().annotations().at(kJobUidAnnotation), UidOfJob(job));
  EXPECT_EQ(wl->status().runner().id(), "shim-1");
  EXPECT_TRUE(HasEvent("sample",
                       "Normal CreatedWorkload: Created Workload: "
                       "team/" +
                           wl->metadata().name()));
  EXPECT_TRUE(WaitFor([&] {
    return HasEvent("sample", "Normal Started: Admitted by clusterQueue cq");
  })) << ::testing::PrintToString(Events("sample"));

  // The fixture completes it; kqd learns it finished.
  ASSERT_TRUE(WaitFor([&] {
    std::optional<v1::Workload> now = Workload(job);
    return now && ConditionTrue(*now, "Finished");
  }));
  std::optional<v1::Workload> finished = Workload(job);
  EXPECT_EQ(FindWorkloadCondition(*finished, "Finished")->reason(),
            "Succeeded");
  EXPECT_TRUE(WaitFor([&] {
    return HasEvent("sample", "Normal FinishedWorkload: Workload 'team/" +
                                  finished->metadata().name() +
                                  "' is declared finished");
  }));
  EXPECT_TRUE(ActiveWorkloads().empty());
}

// Kueue's Finished(): a Failed Job finishes its Workload as failed, with
// the Job condition's message.
TEST_F(JobControllerTest, FailedJobFinishesItsWorkloadAsFailed) {
  StartController();
  json job =
      CreateJob({.name = "broken", .runtime_seconds = 0.5, .fail = true});
  ASSERT_TRUE(WaitFor([&] {
    std::optional<v1::Workload> wl = Workload(job);
    return wl && ConditionTrue(*wl, "Finished");
  }));
  json failed = GetJob("broken");
  JobFinish finish = Finished(failed);
  ASSERT_TRUE(finish.finished);
  EXPECT_FALSE(finish.succeeded);
  std::optional<v1::Workload> wl = Workload(job);
  const v1::Condition* c = FindWorkloadCondition(*wl, "Finished");
  EXPECT_EQ(c->reason(), "Failed");
  EXPECT_EQ(c->message(), finish.message);
  EXPECT_TRUE(ActiveWorkloads().empty());
}

// Kueue: "when workload is evicted due to preemption, job gets suspended",
// then the quota goes to the preemptor once the pods are gone.
TEST_F(JobControllerTest, HigherPriorityJobPreemptsRunningOne) {
  StartController();
  json low = CreateJob({.name = "low", .priority_class = "low", .cpu = "4"});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("low"); }));

  json high = CreateJob({.name = "high", .priority_class = "high", .cpu = "4"});
  // The low Job is suspended first; the high one starts only once the low
  // one has no pods, its template restored and its stop confirmed.
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("high"); }));
  json low_now = GetJob("low");
  EXPECT_TRUE(SuspendRequested(low_now));
  EXPECT_EQ(ActivePods(low_now), 0);
  ASSERT_TRUE(WaitFor([&] { return IsSuspended(GetJob("low")); }));
  low_now = GetJob("low");
  EXPECT_FALSE(IsStopping(low_now));
  EXPECT_EQ(low_now["spec"]["template"]["spec"]["nodeSelector"],
            json({{"team", "ml"}}));
  EXPECT_FALSE(low_now["spec"]["template"]["spec"].contains("tolerations"));
  EXPECT_FALSE(
      low_now["spec"]["template"].contains("metadata") &&
      low_now["spec"]["template"]["metadata"].contains("labels") &&
      low_now["spec"]["template"]["metadata"]["labels"].contains(kPodSetLabel));
  EXPECT_FALSE(low_now["metadata"].contains("annotations") &&
               low_now["metadata"]["annotations"].contains(
                   kOriginalPodSchedulingAnnotation));

  std::optional<v1::Workload> low_wl = Workload(low);
  ASSERT_TRUE(low_wl.has_value());
  EXPECT_FALSE(low_wl->status().has_admission());
  const v1::Condition* evicted = FindWorkloadCondition(*low_wl, "Evicted");
  ASSERT_NE(evicted, nullptr);
  std::vector<std::string> events = Events("low");
  EXPECT_THAT(events, ::testing::Contains(absl::StrCat("Normal Stopped: ",
                                                       evicted->message())));
  EXPECT_THAT(evicted->message(), HasSubstr("Preempted"));
}

// Kueue's "when workload is evicted due to spec.active field being false",
// "... due to cluster queue stopped" and "... due to local queue stopped,
// job gets suspended": Event Stopped with the Evicted message, the template
// restored, the quota released without requeueing.
struct EvictionCase {
  std::string name;
  std::function<absl::Status(client::Client&, const std::string& workload)>
      evict;
  std::string want_message;
  std::string want_requeued_reason;
  friend void PrintTo(const EvictionCase& c, std::ostream* os) {
    *os << c.name;
  }
};

class JobControllerEvictionTest
    : public JobControllerTest,
      public ::testing::WithParamInterface<EvictionCase> {};

TEST_P(JobControllerEvictionTest, JobGetsSuspended) {
  const EvictionCase& tc = GetParam();
  StartController();
  json job = CreateJob({.name = "evictee", .cpu = "1"});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("evictee"); }));
  ASSERT_TRUE(tc.evict(*kq_, Workload(job)->metadata().name()).ok());
  ASSERT_TRUE(WaitFor([&] {
    std::optional<v1::Workload> wl = Workload(job);
    return wl && !wl->status().has_admission() &&
           IsSuspended(GetJob("evictee"));
  }));
  json stopped = GetJob("evictee");
  EXPECT_EQ(ActivePods(stopped), 0);
  EXPECT_EQ(stopped["spec"]["template"]["spec"]["nodeSelector"],
            json({{"team", "ml"}}));
  EXPECT_TRUE(HasEvent("evictee", "Normal Stopped: " + tc.want_message))
      << ::testing::PrintToString(Events("evictee"));
  std::optional<v1::Workload> wl = Workload(job);
  const v1::Condition* requeued = FindWorkloadCondition(*wl, "Requeued");
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->status(), "False");
  EXPECT_EQ(requeued->reason(), tc.want_requeued_reason);
  EXPECT_TRUE(ConditionTrue(*wl, "Evicted"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JobControllerEvictionTest,
    ::testing::ValuesIn(std::vector<EvictionCase>{
        {.name = "spec_active_field_being_false",
         .evict =
             [](client::Client& kq, const std::string& wl) {
               return kq.SetWorkloadActive(kNamespace, wl, false).status();
             },
         .want_message = "The workload is deactivated",
         .want_requeued_reason = "Deactivated"},
        {.name = "cluster_queue_stopped",
         .evict =
             [](client::Client& kq, const std::string&) {
               v1::SetStopPolicyRequest r;
               r.set_kind("ClusterQueue");
               r.set_name("cq");
               r.set_stop_policy("HoldAndDrain");
               return kq.SetStopPolicy(r).status();
             },
         .want_message = "The ClusterQueue is stopped",
         .want_requeued_reason = "ClusterQueueStopped"},
        {.name = "local_queue_stopped",
         .evict =
             [](client::Client& kq, const std::string&) {
               v1::SetStopPolicyRequest r;
               r.set_kind("LocalQueue");
               r.set_namespace_(kNamespace);
               r.set_name("lq");
               r.set_stop_policy("HoldAndDrain");
               return kq.SetStopPolicy(r).status();
             },
         .want_message = "The LocalQueue is stopped",
         .want_requeued_reason = "LocalQueueStopped"},
    }),
    [](const auto& info) { return info.param.name; });

// Pitfall 1's second line (Kueue: "the workload is created when queue name
// is set" for a Job that runs): a labelled Job created without suspend is
// stopped at once with a warning, then queued.
TEST_F(JobControllerTest, UnsuspendedJobWithoutAdmissionIsSuspended) {
  StartController();
  // The quota is taken, so its Workload stays pending.
  CreateJob({.name = "holder", .cpu = "4"});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("holder"); }));
  json job = CreateJob({.name = "sneaky", .cpu = "1", .suspend = false});
  ASSERT_TRUE(WaitFor([&] {
    json now = GetJob("sneaky");
    return IsSuspended(now) && ActivePods(now) == 0;
  }));
  EXPECT_TRUE(WaitFor([&] {
    return HasEvent(
        "sneaky",
        "Warning Stopped: Missing Workload; unable to restore pod templates");
  })) << ::testing::PrintToString(Events("sneaky"));
  // Then queued like any other, and kept suspended while pending.
  ASSERT_TRUE(WaitFor([&] { return Workload(job).has_value(); }));
  absl::SleepFor(absl::Seconds(1));
  EXPECT_TRUE(IsSuspended(GetJob("sneaky")));
  EXPECT_FALSE(ConditionTrue(*Workload(job), "Admitted"));
}

// Kueue's step 8: a running Job whose Workload is not admitted.
TEST_F(JobControllerTest, RunningJobWithPendingWorkloadIsSuspended) {
  StartController();
  CreateJob({.name = "holder", .cpu = "4"});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("holder"); }));
  json job = CreateJob({.name = "waiting", .cpu = "1"});
  ASSERT_TRUE(WaitFor([&] { return Workload(job).has_value(); }));
  // Someone unsuspends it by hand.
  json edited = GetJob("waiting");
  edited["spec"]["suspend"] = false;
  ASSERT_TRUE(kube_->Update(kube::kJobs, kNamespace, edited).ok());
  EXPECT_TRUE(WaitFor([&] {
    return HasEvent("waiting",
                    "Warning Stopped: Not admitted by cluster queue");
  })) << ::testing::PrintToString(Events("waiting"));
  EXPECT_TRUE(WaitFor([&] { return IsSuspended(GetJob("waiting")); }));
}

// Kueue: "job is deleted": its Workload ends (kq: cancelled) and its quota
// goes to the next one.
TEST_F(JobControllerTest, JobDeletionCancelsWorkload) {
  StartController();
  json running = CreateJob({.name = "running", .cpu = "4"});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("running"); }));
  json waiting = CreateJob({.name = "waiting", .cpu = "4"});
  ASSERT_TRUE(WaitFor([&] { return Workload(waiting).has_value(); }));

  ASSERT_TRUE(kube_->Delete(kube::kJobs, kNamespace, "running").ok());
  ASSERT_TRUE(WaitFor([&] {
    std::optional<v1::Workload> wl = Workload(running);
    return wl && ConditionTrue(*wl, "Finished");
  }));
  EXPECT_EQ(FindWorkloadCondition(*Workload(running), "Finished")->reason(),
            "Cancelled");
  EXPECT_TRUE(WaitFor([&] { return Unsuspended("waiting"); }));
}

// A Job recreated under the same name is a new Job (Kueue's Workload name
// hashes the UID): the old Workload is cancelled, a new one submitted.
TEST_F(JobControllerTest, RecreatedJobGetsANewWorkload) {
  StartController();
  json first = CreateJob({.name = "again", .cpu = "1"});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("again"); }));
  ASSERT_TRUE(kube_->Delete(kube::kJobs, kNamespace, "again").ok());
  json second = CreateJob({.name = "again", .cpu = "1"});
  ASSERT_NE(UidOfJob(first), UidOfJob(second));
  ASSERT_TRUE(WaitFor([&] {
    std::optional<v1::Workload> old = Workload(first);
    return old && ConditionTrue(*old, "Finished");
  }));
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("again"); }));
  std::optional<v1::Workload> now = Workload(second);
  ASSERT_TRUE(now.has_value());
  EXPECT_TRUE(ConditionTrue(*now, "Admitted"));
  EXPECT_THAT(ActiveWorkloads(),
              ::testing::ElementsAre(now->metadata().name()));
}

// kqd finishes the Workload of a running Job (an operator cancels it): the
// Job is stopped, as Kueue stops a Job whose Workload is deleted.
TEST_F(JobControllerTest, CancelledWorkloadStopsItsJob) {
  StartController();
  json job = CreateJob({.name = "victim", .cpu = "1"});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("victim"); }));
  std::optional<v1::Workload> wl = Workload(job);
  ASSERT_TRUE(wl.has_value());
  ASSERT_TRUE(kq_->CancelWorkload(kNamespace, wl->metadata().name()).ok());
  ASSERT_TRUE(WaitFor([&] {
    json now = GetJob("victim");
    return IsSuspended(now) && ActivePods(now) == 0;
  }));
  json stopped = GetJob("victim");
  EXPECT_EQ(stopped["spec"]["template"]["spec"]["nodeSelector"],
            json({{"team", "ml"}}));
  EXPECT_THAT(Events("victim"),
              ::testing::Contains(HasSubstr("Normal Stopped: ")));
  // Not resubmitted: the Job stays suspended.
  absl::SleepFor(absl::Seconds(1));
  EXPECT_TRUE(ActiveWorkloads().empty());
}

// The shim restarts mid-way: the running Job is re-attached (not
// suspended, the lease renewed by the same runner), nothing is submitted
// twice, a Job created meanwhile is queued and the Workload of a Job
// deleted meanwhile is cancelled.
TEST_F(JobControllerTest, ShimRestartReattachesWithoutDuplicates) {
  StartController();
  json running = CreateJob({.name = "running", .cpu = "2"});
  json doomed = CreateJob({.name = "doomed", .cpu = "1"});
  ASSERT_TRUE(
      WaitFor([&] { return Unsuspended("running") && Unsuspended("doomed"); }));
  // Created once the others hold their quota: two workers submit in any
  // order, and this one (4 cpu) would otherwise take the whole queue.
  json pending = CreateJob({.name = "pending", .cpu = "4"});
  ASSERT_TRUE(WaitFor([&] { return Workload(pending).has_value(); }));
  const std::string resource_version =
      GetJob("running")["metadata"]["resourceVersion"];
  controller_->Stop();
  controller_.reset();

  ASSERT_TRUE(kube_->Delete(kube::kJobs, kNamespace, "doomed").ok());
  json late = CreateJob({.name = "late", .cpu = "1"});
  absl::SleepFor(absl::Seconds(1));

  StartController();
  ASSERT_TRUE(WaitFor([&] {
    std::optional<v1::Workload> wl = Workload(doomed);
    return wl && ConditionTrue(*wl, "Finished");
  }));
  EXPECT_EQ(FindWorkloadCondition(*Workload(doomed), "Finished")->reason(),
            "Cancelled");
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("late"); }));
  // The running Job was not touched.
  EXPECT_EQ(GetJob("running")["metadata"]["resourceVersion"], resource_version);
  std::optional<v1::Workload> running_wl = Workload(running);
  ASSERT_TRUE(running_wl.has_value());
  EXPECT_TRUE(ConditionTrue(*running_wl, "Admitted"));
  EXPECT_EQ(running_wl->status().runner().id(), "shim-1");
  // The lease keeps being renewed by the restarted shim (3 s lease).
  absl::SleepFor(absl::Seconds(4));
  running_wl = Workload(running);
  ASSERT_TRUE(running_wl->status().runner().has_lease_expire_time());
  EXPECT_GT(absl::FromUnixSeconds(
                running_wl->status().runner().lease_expire_time().seconds()),
            absl::Now());
  EXPECT_THAT(ActiveWorkloads(), ::testing::UnorderedElementsAre(
                                     Workload(running)->metadata().name(),
                                     Workload(pending)->metadata().name(),
                                     Workload(late)->metadata().name()));
  int created = 0;
  for (const std::string& e : Events("running")) {
    if (e.find("CreatedWorkload") != std::string::npos) ++created;
  }
  EXPECT_EQ(created, 1);
}

// kqd is killed (-9) and restarted on the same port: the shim is not
// ready meanwhile and touches no Job; afterwards it catches up.
TEST_F(JobControllerTest, KqdKillAndRestart) {
  StartController();
  json running = CreateJob({.name = "running", .cpu = "2"});
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("running"); }));
  ASSERT_TRUE(WaitFor([&] { return controller_->Ready().ok(); }));
  const std::string resource_version =
      GetJob("running")["metadata"]["resourceVersion"];
  const int port = kqd_->port();

  kqd_->Kill();
  json late = CreateJob({.name = "late", .cpu = "1"});
  EXPECT_TRUE(WaitFor([&] { return !controller_->Ready().ok(); }));
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(GetJob("running")["metadata"]["resourceVersion"], resource_version);
  EXPECT_TRUE(IsSuspended(GetJob("late")));

  ASSERT_TRUE(kqd_->Start({absl::StrCat("--listen=127.0.0.1:", port)}).ok());
  EXPECT_TRUE(WaitFor([&] { return Unsuspended("late"); }, absl::Seconds(30)));
  EXPECT_TRUE(WaitFor([&] { return controller_->Ready().ok(); }));
  EXPECT_FALSE(SuspendRequested(GetJob("running")));
  std::optional<v1::Workload> running_wl = Workload(running);
  ASSERT_TRUE(running_wl.has_value());
  EXPECT_TRUE(ConditionTrue(*running_wl, "Admitted"));
  EXPECT_EQ(ActiveWorkloads().size(), 2u);
}

// Kueue: "when workload is admitted the PodSetUpdates are propagated to
// job", with an admission check set Ready by hand.
TEST_F(JobControllerTest,
       AdmissionChecksReportAndTheirPodSetUpdatesReachThePods) {
  constexpr char kCheckConfig[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: prov}
spec: {controllerName: example.com/manual}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  admissionChecks: [prov]
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: gpu-a100
      resources:
      - {name: cpu, nominalQuota: 4}
)";
  auto docs = manifest::ParseManifests(kCheckConfig);
  ASSERT_TRUE(docs.ok()) << docs.status();
  v1::ApplyRequest request;
  for (const manifest::Document& doc : *docs) {
    ASSERT_TRUE(doc.status.ok()) << doc.status;
    *request.add_objects() = *doc.config_object;
  }
  ASSERT_TRUE(kq_->Apply(request).ok());
  StartController();
  json job = CreateJob({.name = "checked", .cpu = "1"});
  ASSERT_TRUE(WaitFor([&] {
    std::optional<v1::Workload> wl = Workload(job);
    return wl && ConditionTrue(*wl, "QuotaReserved");
  }));
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_TRUE(IsSuspended(GetJob("checked")));
  // Kueue: "admission check message is emitted as event for job".
  v1::SetAdmissionCheckStateRequest pending;
  pending.set_namespace_(kNamespace);
  pending.set_workload(Workload(job)->metadata().name());
  pending.set_check("prov");
  pending.set_state("Pending");
  pending.set_message("Not admitted, ETA: 2024-02-22T10:36:40Z.");
  ASSERT_TRUE(kq_->SetAdmissionCheckState(pending).ok());
  EXPECT_TRUE(WaitFor([&] {
    return HasEvent("checked",
                    "Normal UpdatedAdmissionCheck: prov: Not admitted, ETA: "
                    "2024-02-22T10:36:40Z.");
  })) << ::testing::PrintToString(Events("checked"));

  v1::SetAdmissionCheckStateRequest ready;
  ready.set_namespace_(kNamespace);
  ready.set_workload(Workload(job)->metadata().name());
  ready.set_check("prov");
  ready.set_state("Ready");
  v1::PodSetUpdate* update = ready.add_pod_set_updates();
  update->set_name("main");
  (*update->mutable_node_selector())
      ["autoscaling.x-k8s.io/provisioning-class-name"] = "queued";
  (*update->mutable_annotations())
      ["cluster-autoscaler.kubernetes.io/"
       "consume-provisioning-request"] = "pr-1";
  auto set = kq_->SetAdmissionCheckState(ready);
  if (set.status().code() == absl::StatusCode::kUnimplemented) {
    // The kqd change that stores podSetUpdates is not in this kqd yet.
    GTEST_SKIP() << set.status();
  }
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_TRUE(WaitFor([&] { return Unsuspended("checked"); }));
  json running = GetJob("checked");
  EXPECT_EQ(running["spec"]["template"]["spec"]["nodeSelector"],
            json({{"team", "ml"},
                  {"cloud.google.com/gke-accelerator", "nvidia-tesla-a100"},
                  {"autoscaling.x-k8s.io/provisioning-class-name", "queued"}}));
  EXPECT_EQ(
      running["spec"]["template"]["metadata"]["annotations"].value(
          "cluster-autoscaler.kubernetes.io/consume-provisioning-request", ""),
      "pr-1");
}

TEST_F(JobControllerTest, ReadyOnceListedAndKqdAnswers) {
  JobController controller(*kube_, *kq_, Options());
  EXPECT_FALSE(controller.Ready().ok());
  ASSERT_TRUE(controller.Start().ok());
  EXPECT_TRUE(WaitFor([&] { return controller.Ready().ok(); }));
  EXPECT_FALSE(controller.Start().ok());
  controller.Stop();
  controller.Stop();
}

TEST(JobControllerOptionsTest, RefusesBadOptions) {
  // No connection is made before the options are checked.
  std::unique_ptr<client::Client> kq =
      client::NewGrpcClient(KqOptions("127.0.0.1:1"));
  kube::Config config;
  config.server = "https://127.0.0.1:1";
  absl::StatusOr<std::unique_ptr<kube::Client>> kube =
      kube::Client::Create(config);
  ASSERT_TRUE(kube.ok()) << kube.status();
  JobControllerOptions options;
  options.runner_id = "";
  EXPECT_EQ(JobController(**kube, *kq, options).Start().code(),
            absl::StatusCode::kInvalidArgument);
  options.runner_id = "r";
  options.workers = 5;
  EXPECT_EQ(JobController(**kube, *kq, options).Start().code(),
            absl::StatusCode::kInvalidArgument);
  options.workers = 1;
  options.lease = absl::Seconds(1);
  EXPECT_EQ(JobController(**kube, *kq, options).Start().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kq::shim::jobs
