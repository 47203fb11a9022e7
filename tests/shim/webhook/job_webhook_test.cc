#include "shim/webhook/job_webhook.h"

#include <cctype>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/testing/status_matchers.h"

namespace kq::shim::webhook {
namespace {

using ::kq::testing::StatusIs;
using ::testing::HasSubstr;

// A Kueue case name as a gtest name.
std::string TestName(const std::string& kueue_name) {
  std::string out;
  bool separator = false;
  for (char c : kueue_name) {
    if (c == '\'') continue;
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (separator && !out.empty()) out += '_';
      separator = false;
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      separator = true;
    }
  }
  return out;
}

const OwnerKind kJobKind{"batch/v1", "Job"};
const OwnerKind kCronJobKind{"batch/v1", "CronJob"};
const OwnerKind kMPIJobKind{"kubeflow.org/v2beta1", "MPIJob"};
const OwnerKind kJobSetKind{"jobset.x-k8s.io/v1alpha2", "JobSet"};
const OwnerKind kAppWrapperKind{"workload.codeflare.dev/v1beta2", "AppWrapper"};
const OwnerKind kReplicaSetKind{"apps/v1", "ReplicaSet"};
const OwnerKind kDeploymentKind{"apps/v1", "Deployment"};
const OwnerKind kPodKind{"v1", "Pod"};

// Any object with the metadata the owner walk reads, as Kueue's wrappers
// build them (an owner reference's uid is the owner's name).
class ObjectBuilder {
 public:
  ObjectBuilder(const OwnerKind& kind, const std::string& name,
                const std::string& ns)
      : object_({{"apiVersion", kind.api_version},
                 {"kind", kind.kind},
                 {"metadata", {{"name", name}, {"namespace", ns}}}}) {}

  ObjectBuilder& UID(const std::string& uid) {
    object_["metadata"]["uid"] = uid;
    return *this;
  }
  ObjectBuilder& Label(const std::string& key, const std::string& value) {
    object_["metadata"]["labels"][key] = value;
    return *this;
  }
  ObjectBuilder& Queue(const std::string& queue) {
    return Label(kQueueLabel, queue);
  }
  ObjectBuilder& OwnerReference(const std::string& name,
                                const OwnerKind& kind) {
    object_["metadata"]["ownerReferences"].push_back(
        {{"apiVersion", kind.api_version},
         {"kind", kind.kind},
         {"name", name},
         {"uid", name},
         {"controller", true},
         {"blockOwnerDeletion", true}});
    return *this;
  }
  json Obj() const { return object_; }

 protected:
  json object_;
};

// Kueue's testingjobs/job MakeJob: a suspended Job with one container and
// parallelism 1.
class JobBuilder : public ObjectBuilder {
 public:
  JobBuilder(const std::string& name, const std::string& ns)
      : ObjectBuilder(kJobKind, name, ns) {
    object_["metadata"]["annotations"] = json::object();
    object_["spec"] = {
        {"parallelism", 1},
        {"suspend", true},
        {"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             {{{"name", "c"},
               {"image", "pause"},
               {"resources",
                {{"requests", json::object()}, {"limits", json::object()}}}}}},
            {"nodeSelector", json::object()}}}}}};
  }

  JobBuilder& UID(const std::string& uid) {
    ObjectBuilder::UID(uid);
    return *this;
  }
  JobBuilder& Queue(const std::string& queue) {
    ObjectBuilder::Queue(queue);
    return *this;
  }
  JobBuilder& WorkloadPriorityClass(const std::string& name) {
    ObjectBuilder::Label(kWorkloadPriorityClassLabel, name);
    return *this;
  }
  JobBuilder& OwnerReference(const std::string& name, const OwnerKind& kind) {
    ObjectBuilder::OwnerReference(name, kind);
    return *this;
  }
  JobBuilder& Suspend(bool suspend) {
    object_["spec"]["suspend"] = suspend;
    return *this;
  }
  JobBuilder& ManagedBy(const std::string& manager) {
    object_["spec"]["managedBy"] = manager;
    return *this;
  }
  JobBuilder& DeletionTimestamp() {
    object_["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
    return *this;
  }
  JobBuilder& Finalizers(const std::string& finalizer) {
    object_["metadata"]["finalizers"] = {finalizer};
    return *this;
  }
};

// Kueue's fake client: the owners the walk may read.
OwnerGetter FakeClient(std::vector<json> objects) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, json>
      store;
  for (json& object : objects) {
    const json& metadata = object["metadata"];
    store[{object["apiVersion"], object["kind"], metadata["namespace"],
           metadata["name"]}] = object;
  }
  return [store](const OwnerKind& kind, const std::string& ns,
                 const std::string& name) -> absl::StatusOr<json> {
    auto it = store.find({kind.api_version, kind.kind, ns, name});
    if (it == store.end()) {
      return absl::NotFoundError(kind.kind + " \"" + name + "\" not found");
    }
    return it->second;
  };
}

// ---------------------------------------------------------------------------
// Kueue pkg/controller/jobs/job/job_webhook_test.go TestDefault.
//
// Skipped: "managed by is defaulted: queue label was set" (ManagedBy
// defaulting to MultiKueue; kq is single-cluster and has no MultiKueue
// admission checks).

struct DefaultCase {
  std::string name;
  json job;
  std::vector<json> objs;
  bool manage_jobs_without_queue_name = false;
  bool default_lq_exist = false;
  std::vector<OwnerKind> enable_integrations;
  json want;

  friend void PrintTo(const DefaultCase& tc, std::ostream* os) {
    *os << tc.name;
  }
};

class DefaultJobTest : public ::testing::TestWithParam<DefaultCase> {};

TEST_P(DefaultJobTest, Default) {
  const DefaultCase& tc = GetParam();
  JobWebhookOptions options;
  options.manage_jobs_without_queue_name = tc.manage_jobs_without_queue_name;
  // newTestIntegrationManager registers batch/job and kubeflow.org/mpijob
  // and enables only what the case lists.
  options.known_integrations = {kJobKind, kMPIJobKind};
  options.enabled_integrations = tc.enable_integrations;
  options.get_owner = FakeClient(tc.objs);
  // The case's queue manager holds LocalQueue default/default when
  // defaultLqExist.
  options.default_local_queue_exists = [&tc](const std::string& ns) {
    return tc.default_lq_exist && ns == "default";
  };
  absl::StatusOr<json> got = DefaultJob(tc.job, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, tc.want) << "diff: " << json::diff(tc.want, *got).dump();
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, DefaultJobTest,
    ::testing::ValuesIn(std::vector<DefaultCase>{
        {.name = "update the suspend field with "
                 "'manageJobsWithoutQueueName=false'",
         .job =
             JobBuilder("job", "default").Queue("queue").Suspend(false).Obj(),
         .want = JobBuilder("job", "default").Queue("queue").Obj()},
        {.name = "update the suspend field 'manageJobsWithoutQueueName=true'",
         .job = JobBuilder("job", "default").Suspend(false).Obj(),
         .manage_jobs_without_queue_name = true,
         .want = JobBuilder("job", "default").Obj()},
        {.name = "no change in managed by: features.MultiKueue disabled",
         .job =
             JobBuilder("job", "default").Queue("queue").Suspend(false).Obj(),
         .want = JobBuilder("job", "default").Queue("queue").Obj()},
        {.name = "no change in managed by: user specified managed by",
         .job = JobBuilder("job", "default")
                    .Queue("local-queue")
                    .ManagedBy("example.com/foo")
                    .Suspend(false)
                    .Obj(),
         .want = JobBuilder("job", "default")
                     .Queue("local-queue")
                     .ManagedBy("example.com/foo")
                     .Obj()},
        {.name = "invalid queue name",
         .job = JobBuilder("job", "default")
                    .Queue("invalid-local-queue")
                    .Suspend(false)
                    .Obj(),
         .want =
             JobBuilder("job", "default").Queue("invalid-local-queue").Obj()},
        {.name = "default lq is created, job doesn't have queue label",
         .job = JobBuilder("test-job", "default").Obj(),
         .default_lq_exist = true,
         .want = JobBuilder("test-job", "default").Queue("default").Obj()},
        {.name = "default lq is created, job has queue label",
         .job = JobBuilder("test-job", "default").Queue("test-queue").Obj(),
         .default_lq_exist = true,
         .want = JobBuilder("test-job", "default").Queue("test-queue").Obj()},
        {.name = "default lq isn't created, job doesn't have queue label",
         .job = JobBuilder("test-job", "default").Obj(),
         .default_lq_exist = false,
         .want = JobBuilder("test-job", "default").Obj()},
        {.name = "job is managed by Kueue managed owner, job doesn't have "
                 "queue label",
         .job = JobBuilder("test-job", "default")
                    .OwnerReference("owner", kMPIJobKind)
                    .Obj(),
         .objs = {ObjectBuilder(kMPIJobKind, "owner", "default")
                      .UID("owner")
                      .Obj()},
         .default_lq_exist = true,
         .enable_integrations = {kMPIJobKind},
         .want = JobBuilder("test-job", "default")
                     .OwnerReference("owner", kMPIJobKind)
                     .Obj()},
        {.name = "job is managed by non Kueue managed owner, job has queue "
                 "label",
         .job = JobBuilder("test-job", "default")
                    .OwnerReference("owner", kJobSetKind)
                    .Obj(),
         .default_lq_exist = true,
         .want = JobBuilder("test-job", "default")
                     .OwnerReference("owner", kJobSetKind)
                     .Queue("default")
                     .Obj()},
    }),
    [](const ::testing::TestParamInfo<DefaultCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// Kueue pkg/controller/jobframework/defaults_test.go
// TestWorkloadShouldBeSuspended: batch/job enabled, namespace selector
// kubernetes.io/metadata.name NotIn [unmanaged-ns].

struct ShouldBeSuspendedCase {
  std::string name;
  json obj;
  bool manage_jobs_without_queue_name = false;
  bool tolerate_deleting = false;
  bool want_suspend = false;
  bool want_owner_not_found = false;
  bool skip_ancestor_gate_off = false;

  friend void PrintTo(const ShouldBeSuspendedCase& tc, std::ostream* os) {
    *os << tc.name;
  }
};

class WorkloadShouldBeSuspendedTest
    : public ::testing::TestWithParam<ShouldBeSuspendedCase> {};

TEST_P(WorkloadShouldBeSuspendedTest, Suspend) {
  const ShouldBeSuspendedCase& tc = GetParam();
  JobWebhookOptions options;
  options.enabled_integrations = {kJobKind};
  options.manage_jobs_without_queue_name = tc.manage_jobs_without_queue_name;
  options.skip_ancestor_check_for_deleted_workloads =
      !tc.skip_ancestor_gate_off;
  options.namespace_managed =
      [](const std::string& ns) -> absl::StatusOr<bool> {
    return ns != "unmanaged-ns";
  };
  options.get_owner = FakeClient(
      {JobBuilder("parent", "managed-ns").UID("parent").Queue("default").Obj(),
       tc.obj});
  absl::StatusOr<bool> got =
      WorkloadShouldBeSuspended(tc.obj, options, tc.tolerate_deleting);
  if (tc.want_owner_not_found) {
    EXPECT_THAT(got, StatusIs(absl::StatusCode::kNotFound,
                              HasSubstr("workload owner not found")));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, tc.want_suspend);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, WorkloadShouldBeSuspendedTest,
    ::testing::ValuesIn(std::vector<ShouldBeSuspendedCase>{
        {.name = "job with queue name ",
         .obj = JobBuilder("test-job", "managed-ns").Queue("default").Obj(),
         .want_suspend = true},
        {.name = "job with queue name manageJobs",
         .obj = JobBuilder("test-job", "managed-ns").Queue("default").Obj(),
         .manage_jobs_without_queue_name = true,
         .want_suspend = true},
        {.name = "job without queue name",
         .obj = JobBuilder("test-job", "managed-ns").Obj(),
         .want_suspend = false},
        {.name = "job without queue name with manageJobs",
         .obj = JobBuilder("test-job", "managed-ns").Obj(),
         .manage_jobs_without_queue_name = true,
         .want_suspend = true},
        {.name = "job without queue name but with managed parent with "
                 "manageJobs",
         .obj = JobBuilder("test-job", "managed-ns")
                    .OwnerReference("parent", kJobKind)
                    .Obj(),
         .manage_jobs_without_queue_name = true,
         .want_suspend = false},
        {.name = "job with ownerReference to a deleted known parent while "
                 "terminating (GC teardown)",
         .obj = JobBuilder("test-job", "managed-ns")
                    .OwnerReference("nonexistent-parent", kJobKind)
                    .DeletionTimestamp()
                    .Finalizers("batch.kubernetes.io/job-tracking")
                    .Obj(),
         .manage_jobs_without_queue_name = true,
         .tolerate_deleting = true,
         .want_suspend = false},
        {.name = "job with ownerReference to a deleted known parent while "
                 "terminating, without tolerance",
         .obj = JobBuilder("test-job", "managed-ns")
                    .OwnerReference("nonexistent-parent", kJobKind)
                    .DeletionTimestamp()
                    .Finalizers("batch.kubernetes.io/job-tracking")
                    .Obj(),
         .manage_jobs_without_queue_name = true,
         .want_owner_not_found = true},
        {.name = "job with ownerReference to a deleted known parent while "
                 "terminating, gate disabled",
         .obj = JobBuilder("test-job", "managed-ns")
                    .OwnerReference("nonexistent-parent", kJobKind)
                    .DeletionTimestamp()
                    .Finalizers("batch.kubernetes.io/job-tracking")
                    .Obj(),
         .manage_jobs_without_queue_name = true,
         .tolerate_deleting = true,
         .want_owner_not_found = true,
         .skip_ancestor_gate_off = true},
        {.name = "job with ownerReference to a missing parent while not "
                 "terminating (cache lag)",
         .obj = JobBuilder("test-job", "managed-ns")
                    .OwnerReference("nonexistent-parent", kJobKind)
                    .Obj(),
         .manage_jobs_without_queue_name = true,
         .want_owner_not_found = true},
        {.name = "job without queue name with manageJobs with feature disabled",
         .obj = JobBuilder("test-job", "managed-ns").Obj(),
         .manage_jobs_without_queue_name = true,
         .want_suspend = true},
        {.name = "job without queue name with manageJobs in unmanaged ns",
         .obj = JobBuilder("test-job", "unmanaged-ns").Obj(),
         .manage_jobs_without_queue_name = true,
         .want_suspend = false},
    }),
    [](const ::testing::TestParamInfo<ShouldBeSuspendedCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// Kueue defaults_test.go TestApplyDefaultLocalQueue, through DefaultJob: a
// default LocalQueue exists everywhere; the namespace selector excludes
// unmanaged-ns.

struct DefaultLocalQueueCase {
  std::string name;
  json job;
  std::string want_queue_label;

  friend void PrintTo(const DefaultLocalQueueCase& tc, std::ostream* os) {
    *os << tc.name;
  }
};

class ApplyDefaultLocalQueueTest
    : public ::testing::TestWithParam<DefaultLocalQueueCase> {};

TEST_P(ApplyDefaultLocalQueueTest, QueueLabel) {
  const DefaultLocalQueueCase& tc = GetParam();
  JobWebhookOptions options;
  options.enabled_integrations = {kJobKind};
  options.default_local_queue_exists = [](const std::string&) { return true; };
  options.namespace_managed =
      [](const std::string& ns) -> absl::StatusOr<bool> {
    return ns != "unmanaged-ns";
  };
  absl::StatusOr<json> got = DefaultJob(tc.job, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->value(json::json_pointer("/metadata/labels/kueue.x-k8s.io~1"
                                          "queue-name"),
                       ""),
            tc.want_queue_label);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, ApplyDefaultLocalQueueTest,
    ::testing::ValuesIn(std::vector<DefaultLocalQueueCase>{
        {.name = "job in managed namespace gets default queue label",
         .job = JobBuilder("test-job", "managed-ns").Obj(),
         .want_queue_label = "default"},
        {.name = "job in unmanaged namespace does not get default queue label",
         .job = JobBuilder("test-job", "unmanaged-ns").Obj(),
         .want_queue_label = ""},
        {.name = "job in managed namespace with existing queue label is not "
                 "overwritten",
         .job = JobBuilder("test-job", "managed-ns").Queue("other").Obj(),
         .want_queue_label = "other"},
    }),
    [](const ::testing::TestParamInfo<DefaultLocalQueueCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// Kueue defaults_test.go TestApplyDefaultWorkloadPriorityClass, through
// DefaultJob (batch/job enabled). DefaultJob also walks the owners for
// suspend, so the case's parent Job is readable.

struct DefaultPriorityClassCase {
  std::string name;
  json job;
  bool default_wpc_exists = false;
  bool feature_gate = true;
  std::string want_priority_class_label;

  friend void PrintTo(const DefaultPriorityClassCase& tc, std::ostream* os) {
    *os << tc.name;
  }
};

class ApplyDefaultWorkloadPriorityClassTest
    : public ::testing::TestWithParam<DefaultPriorityClassCase> {};

TEST_P(ApplyDefaultWorkloadPriorityClassTest, PriorityClassLabel) {
  const DefaultPriorityClassCase& tc = GetParam();
  JobWebhookOptions options;
  options.enabled_integrations = {kJobKind};
  options.workload_priority_class_defaulting = tc.feature_gate;
  options.default_workload_priority_class_exists =
      [&tc]() -> absl::StatusOr<bool> { return tc.default_wpc_exists; };
  options.get_owner = FakeClient(
      {JobBuilder("parent", "default").UID("parent").Queue("default").Obj()});
  absl::StatusOr<json> got = DefaultJob(tc.job, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->value(json::json_pointer("/metadata/labels/kueue.x-k8s.io~1"
                                          "priority-class"),
                       ""),
            tc.want_priority_class_label);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, ApplyDefaultWorkloadPriorityClassTest,
    ::testing::ValuesIn(std::vector<DefaultPriorityClassCase>{
        {.name = "feature gate enabled, no label, default WPC exists",
         .job = JobBuilder("test-job", "default").Obj(),
         .default_wpc_exists = true,
         .feature_gate = true,
         .want_priority_class_label = "default"},
        {.name = "feature gate disabled, no label, default WPC exists",
         .job = JobBuilder("test-job", "default").Obj(),
         .default_wpc_exists = true,
         .feature_gate = false,
         .want_priority_class_label = ""},
        {.name = "feature gate enabled, label already set",
         .job = JobBuilder("test-job", "default")
                    .WorkloadPriorityClass("high")
                    .Obj(),
         .default_wpc_exists = true,
         .feature_gate = true,
         .want_priority_class_label = "high"},
        {.name = "feature gate enabled, no label, default WPC does not exist",
         .job = JobBuilder("test-job", "default").Obj(),
         .default_wpc_exists = false,
         .feature_gate = true,
         .want_priority_class_label = ""},
        {.name = "feature gate enabled, owner managed by kueue",
         .job = JobBuilder("test-job", "default")
                    .OwnerReference("parent", kJobKind)
                    .Obj(),
         .default_wpc_exists = true,
         .feature_gate = true,
         .want_priority_class_label = ""},
    }),
    [](const ::testing::TestParamInfo<DefaultPriorityClassCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// Kueue pkg/controller/jobframework/reconciler_test.go
// TestFindAncestorJobManagedByKueue. Registered (known) integrations are
// Kueue's built-in ones the cases use; CronJob is only an external framework.

enum class WantAncestorError { kNone, kOwnerNotFound, kCyclic, kChainLimit };

struct FindAncestorCase {
  std::string name;
  bool manage_jobs_without_queue_name = false;
  std::vector<OwnerKind> integrations;
  std::vector<OwnerKind> external_frameworks;
  std::vector<json> ancestors;
  json job;
  std::optional<json> want_managed;
  WantAncestorError want_err = WantAncestorError::kNone;

  friend void PrintTo(const FindAncestorCase& tc, std::ostream* os) {
    *os << tc.name;
  }
};

class FindAncestorJobManagedByKueueTest
    : public ::testing::TestWithParam<FindAncestorCase> {};

TEST_P(FindAncestorJobManagedByKueueTest, Ancestor) {
  const FindAncestorCase& tc = GetParam();
  JobWebhookOptions options;
  options.manage_jobs_without_queue_name = tc.manage_jobs_without_queue_name;
  options.known_integrations = {kJobKind,        kMPIJobKind, kJobSetKind,
                                kAppWrapperKind, kPodKind,    kDeploymentKind};
  options.enabled_integrations = tc.integrations;
  for (const OwnerKind& kind : tc.external_frameworks) {
    options.enabled_integrations.push_back(kind);
  }
  std::vector<json> objects = tc.ancestors;
  objects.push_back(tc.job);
  options.get_owner = FakeClient(objects);

  absl::StatusOr<std::optional<json>> got =
      FindAncestorJobManagedByKueue(tc.job, options);
  switch (tc.want_err) {
    case WantAncestorError::kNone:
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, tc.want_managed);
      break;
    case WantAncestorError::kOwnerNotFound:
      EXPECT_THAT(got, StatusIs(absl::StatusCode::kNotFound,
                                HasSubstr("workload owner not found")));
      break;
    case WantAncestorError::kCyclic:
      EXPECT_THAT(got, StatusIs(absl::StatusCode::kFailedPrecondition,
                                HasSubstr("cyclic ownership")));
      break;
    case WantAncestorError::kChainLimit:
      EXPECT_THAT(got,
                  StatusIs(absl::StatusCode::kFailedPrecondition,
                           HasSubstr("managed owner chain limit reached")));
      break;
  }
}

std::vector<json> AncestorChain() {
  std::vector<json> chain = {JobBuilder("ancestor-0", "default")
                                 .UID("ancestor-0")
                                 .Queue("test-q")
                                 .Obj()};
  for (int i = 1; i <= 11; ++i) {
    const std::string name = "ancestor-" + std::to_string(i);
    chain.push_back(
        JobBuilder(name, "default")
            .UID(name)
            .OwnerReference("ancestor-" + std::to_string(i - 1), kJobKind)
            .Obj());
  }
  return chain;
}

json AppWrapper(bool queue) {
  ObjectBuilder aw(kAppWrapperKind, "aw", "default");
  aw.UID("aw");
  if (queue) aw.Queue("test-q");
  return aw.Obj();
}

json JobSetOwnedByAppWrapper(bool queue) {
  ObjectBuilder jobset(kJobSetKind, "jobset", "default");
  jobset.UID("jobset").OwnerReference("aw", kAppWrapperKind);
  if (queue) jobset.Queue("test-q");
  return jobset.Obj();
}

json JobOwnedByJobSet(bool queue) {
  JobBuilder job("job", "default");
  job.UID("job").OwnerReference("jobset", kJobSetKind);
  if (queue) job.Queue("test-q");
  return job.Obj();
}

json CronJobOwnedByAppWrapper(bool with_uid) {
  ObjectBuilder cronjob(kCronJobKind, "cronjob", "default");
  if (with_uid) cronjob.UID("cronjob");
  return cronjob.OwnerReference("aw", kAppWrapperKind).Obj();
}

std::vector<FindAncestorCase> FindAncestorCases() {
  const json cron_job =
      ObjectBuilder(kCronJobKind, "cronjob", "default").UID("cronjob").Obj();
  const json cron_job_with_queue =
      ObjectBuilder(kCronJobKind, "cronjob", "default")
          .UID("cronjob")
          .Queue("test-q")
          .Obj();
  const json mpijob_with_queue =
      ObjectBuilder(kMPIJobKind, "test-job-parent", "default")
          .UID("test-job-parent")
          .Queue("test-q")
          .Obj();
  json forged_job = JobBuilder("test-job-child", "default")
                        .OwnerReference("test-job-parent", kMPIJobKind)
                        .Obj();
  forged_job["metadata"]["ownerReferences"][0]["uid"] = "forged-uid";

  return {
      {.name = "child job has ownerReference with unmanaged workload owner",
       .ancestors = {cron_job},
       .job = JobBuilder("test-job-child", "default")
                  .OwnerReference("cronjob", kCronJobKind)
                  .Obj()},
      {.name = "child job has ownerReference with unmanaged workload owner "
               "that has a queue-name",
       .ancestors = {cron_job_with_queue},
       .job = JobBuilder("test-job-child", "default")
                  .OwnerReference("cronjob", kCronJobKind)
                  .Obj()},
      {.name = "child job has ownerReference with unknown non-existing "
               "workload owner",
       .job = JobBuilder("test-job-child", "default")
                  .OwnerReference("cronjob", kMPIJobKind)
                  .Obj(),
       .want_err = WantAncestorError::kOwnerNotFound},
      {.name = "child job has ownerReference with known non-existing "
               "workload owner",
       .integrations = {kMPIJobKind},
       .job = JobBuilder("test-job-child", "default")
                  .OwnerReference("test-job-parent", kMPIJobKind)
                  .Obj(),
       .want_err = WantAncestorError::kOwnerNotFound},
      {.name = "child job has ownerReference with known existing workload "
               "owner, and the parent job has queue-name label",
       .integrations = {kMPIJobKind},
       .ancestors = {mpijob_with_queue},
       .job = JobBuilder("test-job-child", "default")
                  .OwnerReference("test-job-parent", kMPIJobKind)
                  .Obj(),
       .want_managed = mpijob_with_queue},
      {.name = "child job has ownerReference with known existing workload "
               "owner, and the parent job doesn't has queue-name label",
       .integrations = {kMPIJobKind},
       .ancestors = {ObjectBuilder(kMPIJobKind, "test-job-parent", "default")
                         .UID("test-job-parent")
                         .Obj()},
       .job = JobBuilder("test-job-child", "default")
                  .OwnerReference("test-job-parent", kMPIJobKind)
                  .Obj()},
      {.name = "cyclic ownership links are properly handled",
       .integrations = {kMPIJobKind, kAppWrapperKind, kJobKind},
       .ancestors = {ObjectBuilder(kAppWrapperKind, "test-job-grandparent",
                                   "default")
                         .UID("test-job-grandparent")
                         .OwnerReference("test-job-child", kJobKind)
                         .Obj(),
                     ObjectBuilder(kMPIJobKind, "test-job-parent", "default")
                         .UID("test-job-parent")
                         .OwnerReference("test-job-grandparent",
                                         kAppWrapperKind)
                         .Obj()},
       .job = JobBuilder("test-job-child", "default")
                  .UID("test-job-child")
                  .OwnerReference("test-job-parent", kMPIJobKind)
                  .Obj(),
       .want_err = WantAncestorError::kCyclic},
      {.name = "cuts off ancestor traversal at the limit and generates an "
               "appropriate event",
       .integrations = {kJobKind},
       .ancestors = AncestorChain(),
       .job = JobBuilder("test-job-child", "default")
                  .OwnerReference("ancestor-11", kJobKind)
                  .Obj(),
       .want_err = WantAncestorError::kChainLimit},
      {.name = "Job -> JobSet -> AppWrapper => nil",
       .integrations = {kJobSetKind, kAppWrapperKind},
       .ancestors = {AppWrapper(false), JobSetOwnedByAppWrapper(false)},
       .job = JobOwnedByJobSet(false)},
      {.name =
           "Job (queue-name) -> JobSet (queue-name) -> AppWrapper => JobSet",
       .integrations = {kJobSetKind, kAppWrapperKind},
       .ancestors = {AppWrapper(false), JobSetOwnedByAppWrapper(true)},
       .job = JobOwnedByJobSet(true),
       .want_managed = JobSetOwnedByAppWrapper(true)},
      {.name = "Job (queue-name) -> JobSet -> AppWrapper (queue-name) => "
               "AppWrapper",
       .integrations = {kJobSetKind, kAppWrapperKind},
       .ancestors = {AppWrapper(true), JobSetOwnedByAppWrapper(false)},
       .job = JobOwnedByJobSet(true),
       .want_managed = AppWrapper(true)},
      {.name = "Job (queue-name) -> JobSet (queue-name) -> AppWrapper "
               "(queue-name) => AppWrapper",
       .integrations = {kJobSetKind, kAppWrapperKind},
       .ancestors = {AppWrapper(true), JobSetOwnedByAppWrapper(true)},
       .job = JobOwnedByJobSet(true),
       .want_managed = AppWrapper(true)},
      {.name = "Job -> JobSet (disabled) -> AppWrapper (queue-name) => "
               "AppWrapper",
       .integrations = {kAppWrapperKind},
       .ancestors = {AppWrapper(true), JobSetOwnedByAppWrapper(false)},
       .job = JobOwnedByJobSet(false),
       .want_managed = AppWrapper(true)},
      {.name = "Job -> JobSet -> AppWrapper => AppWrapper "
               "(manageJobsWithoutQueueName)",
       .manage_jobs_without_queue_name = true,
       .integrations = {kJobSetKind, kAppWrapperKind},
       .ancestors = {AppWrapper(false), JobSetOwnedByAppWrapper(false)},
       .job = JobOwnedByJobSet(false),
       .want_managed = AppWrapper(false)},
      {.name = "Job (queue-name) -> JobSet (queue-name) -> AppWrapper => "
               "AppWrapper (manageJobsWithoutQueueName)",
       .manage_jobs_without_queue_name = true,
       .integrations = {kJobSetKind, kAppWrapperKind},
       .ancestors = {AppWrapper(false), JobSetOwnedByAppWrapper(true)},
       .job = JobOwnedByJobSet(true),
       .want_managed = AppWrapper(false)},
      {.name = "Job (queue-name) -> JobSet -> AppWrapper (queue-name) => "
               "AppWrapper (manageJobsWithoutQueueName)",
       .manage_jobs_without_queue_name = true,
       .integrations = {kJobSetKind, kAppWrapperKind},
       .ancestors = {AppWrapper(true), JobSetOwnedByAppWrapper(false)},
       .job = JobOwnedByJobSet(true),
       .want_managed = AppWrapper(true)},
      {.name = "Job (queue-name) -> JobSet (queue-name) -> AppWrapper "
               "(queue-name) => AppWrapper (manageJobsWithoutQueueName)",
       .manage_jobs_without_queue_name = true,
       .integrations = {kJobSetKind, kAppWrapperKind},
       .ancestors = {AppWrapper(true), JobSetOwnedByAppWrapper(true)},
       .job = JobOwnedByJobSet(true),
       .want_managed = AppWrapper(true)},
      {.name = "Job -> JobSet (disabled) -> AppWrapper => AppWrapper "
               "(manageJobsWithoutQueueName)",
       .manage_jobs_without_queue_name = true,
       .integrations = {kAppWrapperKind},
       .ancestors = {AppWrapper(false), JobSetOwnedByAppWrapper(false)},
       .job = JobOwnedByJobSet(false),
       .want_managed = AppWrapper(false)},
      {.name = "Job -> CronJob (external framework, not enabled) -> "
               "AppWrapper (queue-name) => AppWrapper",
       .integrations = {kAppWrapperKind},
       .ancestors = {AppWrapper(true), CronJobOwnedByAppWrapper(false)},
       .job = JobBuilder("job", "default")
                  .UID("job")
                  .OwnerReference("cronjob", kCronJobKind)
                  .Obj()},
      {.name = "Job -> CronJob (external framework, enabled) -> AppWrapper "
               "(queue-name) => AppWrapper",
       .integrations = {kAppWrapperKind},
       .external_frameworks = {kCronJobKind},
       .ancestors = {AppWrapper(true), CronJobOwnedByAppWrapper(true)},
       .job = JobBuilder("job", "default")
                  .UID("job")
                  .OwnerReference("cronjob", kCronJobKind)
                  .Obj(),
       .want_managed = AppWrapper(true)},
      {.name = "child job has ownerReference whose UID does not match the "
               "referenced object => nil",
       .integrations = {kMPIJobKind},
       .ancestors = {mpijob_with_queue},
       .job = forged_job},
      {.name = "Pod -> ReplicaSet -> Deployment (queue-name) => Deployment",
       .integrations = {kPodKind, kDeploymentKind},
       .ancestors = {ObjectBuilder(kDeploymentKind, "deploy", "default")
                         .UID("deploy")
                         .Queue("test-q")
                         .Obj(),
                     ObjectBuilder(kReplicaSetKind, "rs", "default")
                         .UID("rs")
                         .OwnerReference("deploy", kDeploymentKind)
                         .Obj()},
       .job = JobBuilder("pod", "default")
                  .UID("pod")
                  .OwnerReference("rs", kReplicaSetKind)
                  .Obj(),
       .want_managed = ObjectBuilder(kDeploymentKind, "deploy", "default")
                           .UID("deploy")
                           .Queue("test-q")
                           .Obj()},
  };
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, FindAncestorJobManagedByKueueTest,
    ::testing::ValuesIn(FindAncestorCases()),
    [](const ::testing::TestParamInfo<FindAncestorCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// MutateJob: the AdmissionReview envelope and the JSONPatch, checked by
// applying the patch to the request's object.

json Review(const json& object, const std::string& operation = "CREATE") {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
            {"kind", {{"group", "batch"}, {"version", "v1"}, {"kind", "Job"}}},
            {"resource",
             {{"group", "batch"}, {"version", "v1"}, {"resource", "jobs"}}},
            {"namespace", "default"},
            {"operation", operation},
            {"object", object}}}};
}

json Patch(const json& response) {
  std::string decoded;
  EXPECT_TRUE(absl::Base64Unescape(
      response["response"]["patch"].get<std::string>(), &decoded));
  return json::parse(decoded);
}

JobWebhookOptions LabelledJobsOnly() { return JobWebhookOptions(); }

TEST(MutateJobTest, SuspendAbsentIsAdded) {
  json job = JobBuilder("job", "default").Queue("queue").Obj();
  job["spec"].erase("suspend");
  absl::StatusOr<json> got = MutateJob(Review(job), LabelledJobsOnly());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ((*got)["kind"], "AdmissionReview");
  const json& response = (*got)["response"];
  EXPECT_EQ(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(response["allowed"], true);
  EXPECT_EQ(response["patchType"], "JSONPatch");
  const json patch = Patch(*got);
  EXPECT_EQ(patch, json::parse(R"([{"op":"add","path":"/spec/suspend",
                                    "value":true}])"));
  EXPECT_EQ(job.patch(patch),
            JobBuilder("job", "default").Queue("queue").Obj());
}

TEST(MutateJobTest, SuspendFalseIsReplaced) {
  json job = JobBuilder("job", "default").Queue("queue").Suspend(false).Obj();
  absl::StatusOr<json> got = MutateJob(Review(job), LabelledJobsOnly());
  ASSERT_TRUE(got.ok()) << got.status();
  const json patch = Patch(*got);
  EXPECT_EQ(patch, json::parse(R"([{"op":"replace","path":"/spec/suspend",
                                    "value":true}])"));
  EXPECT_EQ(job.patch(patch),
            JobBuilder("job", "default").Queue("queue").Obj());
}

TEST(MutateJobTest, SuspendNullIsReplaced) {
  json job = JobBuilder("job", "default").Queue("queue").Obj();
  job["spec"]["suspend"] = nullptr;
  absl::StatusOr<json> got = MutateJob(Review(job), LabelledJobsOnly());
  ASSERT_TRUE(got.ok()) << got.status();
  const json patch = Patch(*got);
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch[0]["op"], "replace");
  EXPECT_EQ(job.patch(patch)["spec"]["suspend"], true);
}

TEST(MutateJobTest, SuspendedJobIsAllowedWithoutPatch) {
  json job = JobBuilder("job", "default").Queue("queue").Obj();
  absl::StatusOr<json> got = MutateJob(Review(job), LabelledJobsOnly());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["response"],
            json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002",
                            "allowed":true})"));
}

TEST(MutateJobTest, UnlabelledJobIsLeftRunning) {
  json job = JobBuilder("job", "default").Suspend(false).Obj();
  absl::StatusOr<json> got = MutateJob(Review(job), LabelledJobsOnly());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["response"]["allowed"], true);
  EXPECT_FALSE((*got)["response"].contains("patch"));
}

TEST(MutateJobTest, ManageJobsWithoutQueueNameSuspendsUnlabelledJob) {
  json job = JobBuilder("job", "default").Suspend(false).Obj();
  JobWebhookOptions options;
  options.manage_jobs_without_queue_name = true;
  absl::StatusOr<json> got = MutateJob(Review(job), options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(job.patch(Patch(*got))["spec"]["suspend"], true);
}

TEST(MutateJobTest, DefaultQueueLabelAddsLabelsObjectWhenAbsent) {
  json job = JobBuilder("job", "default").Suspend(false).Obj();
  ASSERT_FALSE(job["metadata"].contains("labels"));
  JobWebhookOptions options;
  options.default_local_queue_exists = [](const std::string& ns) {
    return ns == "default";
  };
  absl::StatusOr<json> got = MutateJob(Review(job), options);
  ASSERT_TRUE(got.ok()) << got.status();
  const json patch = Patch(*got);
  EXPECT_EQ(patch, json::parse(R"([
      {"op":"add","path":"/metadata/labels",
       "value":{"kueue.x-k8s.io/queue-name":"default"}},
      {"op":"replace","path":"/spec/suspend","value":true}])"));
  EXPECT_EQ(job.patch(patch),
            JobBuilder("job", "default").Queue("default").Obj());
}

TEST(MutateJobTest, DefaultQueueLabelEscapesTheSlashInTheKey) {
  json job = JobBuilder("job", "default").Obj();
  job["metadata"]["labels"] = {{"app", "train"}};
  JobWebhookOptions options;
  options.default_local_queue_exists = [](const std::string&) { return true; };
  absl::StatusOr<json> got = MutateJob(Review(job), options);
  ASSERT_TRUE(got.ok()) << got.status();
  const json patch = Patch(*got);
  EXPECT_EQ(patch, json::parse(R"([
      {"op":"add","path":"/metadata/labels/kueue.x-k8s.io~1queue-name",
       "value":"default"}])"));
  const json patched = job.patch(patch);
  EXPECT_EQ(patched["metadata"]["labels"], json::parse(R"({"app":"train",
                            "kueue.x-k8s.io/queue-name":"default"})"));
}

TEST(MutateJobTest, NamespaceComesFromTheRequestWithoutBeingPatched) {
  json job = JobBuilder("job", "").Obj();
  job["metadata"].erase("namespace");
  json review = Review(job);
  review["request"]["namespace"] = "team-a";
  std::vector<std::string> asked;
  JobWebhookOptions options;
  options.default_local_queue_exists = [&asked](const std::string& ns) {
    asked.push_back(ns);
    return true;
  };
  absl::StatusOr<json> got = MutateJob(review, options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(asked, ::testing::ElementsAre("team-a"));
  const json patch = Patch(*got);
  for (const json& op : patch) {
    EXPECT_THAT(op["path"].get<std::string>(),
                ::testing::Not(HasSubstr("namespace")));
  }
  EXPECT_EQ(job.patch(patch)["metadata"]["labels"][kQueueLabel], "default");
}

TEST(MutateJobTest, V1beta1ReviewIsAnsweredInKind) {
  json review = Review(JobBuilder("job", "default").Queue("q").Obj());
  review["apiVersion"] = "admission.k8s.io/v1beta1";
  absl::StatusOr<json> got = MutateJob(review, LabelledJobsOnly());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["apiVersion"], "admission.k8s.io/v1beta1");
}

TEST(MutateJobTest, DeleteIsAllowedUntouched) {
  json job = JobBuilder("job", "default").Queue("q").Suspend(false).Obj();
  absl::StatusOr<json> got = MutateJob(Review(job, "DELETE"), {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["response"],
            json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002",
                            "allowed":true,"status":{"code":200}})"));
}

struct MalformedCase {
  std::string name;
  json object;  // null: no request.object at all
  std::string want_message;

  friend void PrintTo(const MalformedCase& tc, std::ostream* os) {
    *os << tc.name;
  }
};

class MutateJobMalformedTest : public ::testing::TestWithParam<MalformedCase> {
};

TEST_P(MutateJobMalformedTest, DeniedWith400) {
  const MalformedCase& tc = GetParam();
  json review = Review(tc.object);
  if (tc.object.is_null()) review["request"].erase("object");
  absl::StatusOr<json> got = MutateJob(review, {});
  ASSERT_TRUE(got.ok()) << got.status();
  const json& response = (*got)["response"];
  EXPECT_EQ(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["code"], 400);
  EXPECT_THAT(response["status"]["message"].get<std::string>(),
              HasSubstr(tc.want_message));
  EXPECT_FALSE(response.contains("patch"));
}

json WithField(json job, const std::string& pointer, json value) {
  job[json::json_pointer(pointer)] = std::move(value);
  return job;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MutateJobMalformedTest,
    ::testing::ValuesIn(std::vector<MalformedCase>{
        {.name = "no_object",
         .object = nullptr,
         .want_message = "no content to decode"},
        {.name = "object_is_an_array",
         .object = json::array({1, 2}),
         .want_message = "JSON object"},
        {.name = "another_kind",
         .object = ObjectBuilder(kPodKind, "p", "default").Obj(),
         .want_message = "is not batch/v1"},
        {.name = "suspend_is_a_string",
         .object = WithField(JobBuilder("job", "default").Obj(),
                             "/spec/suspend", "yes"),
         .want_message = "spec.suspend must be a boolean"},
        {.name = "labels_are_not_strings",
         .object = WithField(JobBuilder("job", "default").Obj(),
                             "/metadata/labels/kueue.x-k8s.io~1queue-name", 7),
         .want_message = "must be a string"},
        {.name = "metadata_is_a_string",
         .object = WithField(JobBuilder("job", "default").Obj(), "/metadata",
                             "job"),
         .want_message = "metadata must be an object"},
        {.name = "owner_references_not_an_array",
         .object = WithField(JobBuilder("job", "default").Obj(),
                             "/metadata/ownerReferences", json::object()),
         .want_message = "ownerReferences must be an array"},
    }),
    [](const ::testing::TestParamInfo<MalformedCase>& info) {
      return info.param.name;
    });

TEST(MutateJobTest, NotAnAdmissionReviewIsInvalidArgument) {
  EXPECT_THAT(MutateJob(json::array(), {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(MutateJob(json::parse(R"({"kind":"Job"})"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not AdmissionReview")));
  EXPECT_THAT(
      MutateJob(json::parse(R"({"apiVersion":"admission.k8s.io/v1",
                                "kind":"AdmissionReview"})"),
                {}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no request")));
  EXPECT_THAT(
      MutateJob(json::parse(R"({"apiVersion":"v1","kind":"AdmissionReview",
                                "request":{}})"),
                {}),
      StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(MutateJob(json::parse(R"({"request":{"uid":5}})"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MutateJobTest, MissingOwnerIsDeniedAsNotFound) {
  json job = JobBuilder("child", "default")
                 .Queue("q")
                 .OwnerReference("parent", kJobKind)
                 .Suspend(false)
                 .Obj();
  JobWebhookOptions options;
  options.get_owner = FakeClient({});
  absl::StatusOr<json> got = MutateJob(Review(job), options);
  ASSERT_TRUE(got.ok()) << got.status();
  const json& response = (*got)["response"];
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["code"], 404);
  EXPECT_EQ(response["status"]["reason"], "NotFound");
  EXPECT_THAT(response["status"]["message"].get<std::string>(),
              HasSubstr("workload owner not found"));
}

TEST(MutateJobTest, ManagedParentLeavesChildAlone) {
  json job = JobBuilder("child", "default")
                 .Queue("q")
                 .OwnerReference("parent", kJobKind)
                 .Suspend(false)
                 .Obj();
  JobWebhookOptions options;
  options.get_owner = FakeClient(
      {JobBuilder("parent", "default").UID("parent").Queue("q").Obj()});
  absl::StatusOr<json> got = MutateJob(Review(job), options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["response"]["allowed"], true);
  EXPECT_FALSE((*got)["response"].contains("patch"));
}

TEST(MutateJobTest, CyclicOwnershipIsDenied) {
  json job = JobBuilder("a", "default")
                 .UID("a")
                 .Queue("q")
                 .OwnerReference("b", kJobKind)
                 .Obj();
  JobWebhookOptions options;
  options.get_owner = FakeClient(
      {JobBuilder("b", "default").UID("b").OwnerReference("a", kJobKind).Obj(),
       job});
  absl::StatusOr<json> got = MutateJob(Review(job), options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["response"]["allowed"], false);
  EXPECT_EQ((*got)["response"]["status"]["code"], 403);
  EXPECT_THAT((*got)["response"]["status"]["message"].get<std::string>(),
              HasSubstr("cyclic ownership"));
}

TEST(MutateJobTest, NamespaceLookupFailureIsDenied) {
  json job = JobBuilder("job", "default").Suspend(false).Obj();
  JobWebhookOptions options;
  options.manage_jobs_without_queue_name = true;
  options.namespace_managed = [](const std::string&) -> absl::StatusOr<bool> {
    return absl::UnavailableError("informer not synced");
  };
  absl::StatusOr<json> got = MutateJob(Review(job), options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["response"]["allowed"], false);
  EXPECT_EQ((*got)["response"]["status"]["code"], 503);
  EXPECT_THAT((*got)["response"]["status"]["message"].get<std::string>(),
              HasSubstr("failed to get namespace: informer not synced"));
}

TEST(MutateJobTest, OwnerOfAnUnknownKindIsNotRead) {
  json job = JobBuilder("job", "default")
                 .Queue("q")
                 .OwnerReference("cron", kCronJobKind)
                 .Suspend(false)
                 .Obj();
  JobWebhookOptions options;  // no get_owner: reading would be refused
  absl::StatusOr<json> got = MutateJob(Review(job), options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(job.patch(Patch(*got))["spec"]["suspend"], true);
}

}  // namespace
}  // namespace kq::shim::webhook
