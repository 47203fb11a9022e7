// Tests of shim/jobs/job_workload: cases ported from Kueue's
// pkg/controller/jobframework/workload_names_test.go, pkg/podset/
// podset_test.go and pkg/controller/jobs/job/job_controller_test.go, named
// after Kueue's cases, asserting Kueue's expected values. The TestReconciler
// cases here are the parts of Kueue's reconcile that the pure functions
// decide (the Workload built, the Job written on start, the template
// restored on stop); the controller tests drive the rest against a real kqd.

#include "shim/jobs/job_workload.h"

#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/testing/status_matchers.h"

namespace kq::shim::jobs {
namespace {

using ::kq::testing::StatusIs;
using ::testing::HasSubstr;

// Kueue's utiltestingjob.MakeJob: a suspended Job, one container,
// parallelism 1. Parallel to Kueue's JobWrapper.
class JobWrapper {
 public:
  JobWrapper(const std::string& name, const std::string& ns) {
    job_ = {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec",
             {{"parallelism", 1},
              {"suspend", true},
              {"template",
               {{"spec",
                 {{"restartPolicy", "Never"},
                  {"containers",
                   json::array({{{"name", "c"},
                                 {"image", "pause"},
                                 {"resources",
                                  {{"requests", json::object()},
                                   {"limits", json::object()}}}}})}}}}}}}};
  }
  JobWrapper& Queue(const std::string& q) { return Label(kQueueNameLabel, q); }
  JobWrapper& Label(const std::string& k, const std::string& v) {
    job_["metadata"]["labels"][k] = v;
    return *this;
  }
  JobWrapper& SetAnnotation(const std::string& k, const std::string& v) {
    job_["metadata"]["annotations"][k] = v;
    return *this;
  }
  JobWrapper& UID(const std::string& uid) {
    job_["metadata"]["uid"] = uid;
    return *this;
  }
  JobWrapper& Parallelism(int n) {
    job_["spec"]["parallelism"] = n;
    return *this;
  }
  JobWrapper& Completions(int n) {
    job_["spec"]["completions"] = n;
    return *this;
  }
  JobWrapper& Indexed() {
    job_["spec"]["completionMode"] = "Indexed";
    return *this;
  }
  JobWrapper& Suspend(bool s) {
    job_["spec"]["suspend"] = s;
    return *this;
  }
  JobWrapper& Request(const std::string& resource, const std::string& q) {
    job_["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
        [resource] = q;
    return *this;
  }
  JobWrapper& NodeSelector(const std::string& k, const std::string& v) {
    job_["spec"]["template"]["spec"]["nodeSelector"][k] = v;
    return *this;
  }
  JobWrapper& Toleration(const json& t) {
    job_["spec"]["template"]["spec"]["tolerations"].push_back(t);
    return *this;
  }
  JobWrapper& PodLabel(const std::string& k, const std::string& v) {
    job_["spec"]["template"]["metadata"]["labels"][k] = v;
    return *this;
  }
  JobWrapper& PodAnnotation(const std::string& k, const std::string& v) {
    job_["spec"]["template"]["metadata"]["annotations"][k] = v;
    return *this;
  }
  JobWrapper& SchedulingGate(const std::string& name) {
    job_["spec"]["template"]["spec"]["schedulingGates"].push_back(
        {{"name", name}});
    return *this;
  }
  JobWrapper& Condition(const std::string& type, const std::string& status,
                        const std::string& message) {
    job_["status"]["conditions"].push_back(
        {{"type", type}, {"status", status}, {"message", message}});
    return *this;
  }
  JobWrapper& Active(int n) {
    job_["status"]["active"] = n;
    return *this;
  }
  JobWrapper& StartTime(const std::string& t) {
    job_["status"]["startTime"] = t;
    return *this;
  }
  JobWrapper& Status(const std::string& key, const json& value) {
    job_["status"][key] = value;
    return *this;
  }
  JobWrapper Clone() const { return *this; }
  json Obj() const { return job_; }

 private:
  json job_;
};

json Tol(const std::string& key, const std::string& op,
         const std::string& value, const std::string& effect) {
  json t = json::object();
  if (!key.empty()) t["key"] = key;
  if (!op.empty()) t["operator"] = op;
  if (!value.empty()) t["value"] = value;
  if (!effect.empty()) t["effect"] = effect;
  return t;
}

v1::Toleration TolProto(const std::string& key, const std::string& op,
                        const std::string& value, const std::string& effect) {
  v1::Toleration t;
  t.set_key(key);
  t.set_operator_(op);
  t.set_value(value);
  t.set_effect(effect);
  return t;
}

// Kueue's utiltestingapi.MakeWorkload(...).ReserveQuotaAt(...).AdmittedAt:
// pod set "main" of `count` pods asking 1 cpu, admitted to `cq`.
class WorkloadWrapper {
 public:
  WorkloadWrapper(const std::string& name, const std::string& ns) {
    wl_.mutable_metadata()->set_name(name);
    wl_.mutable_metadata()->set_namespace_(ns);
  }
  WorkloadWrapper& Queue(const std::string& q) {
    wl_.mutable_spec()->set_queue_name(q);
    return *this;
  }
  WorkloadWrapper& PodSet(int count, std::optional<int> min_count = {}) {
    v1::PodSet* ps = wl_.mutable_spec()->add_pod_sets();
    ps->set_name(kDefaultPodSetName);
    ps->set_count(count);
    if (min_count) ps->set_min_count(*min_count);
    (*ps->mutable_requests())["cpu"] = "1";
    return *this;
  }
  WorkloadWrapper& Admit(const std::string& cq, int count,
                         std::map<std::string, std::string> flavors = {}) {
    v1::Admission* a = wl_.mutable_status()->mutable_admission();
    a->set_cluster_queue(cq);
    v1::PodSetAssignment* psa = a->add_pod_set_assignments();
    psa->set_name(kDefaultPodSetName);
    psa->set_count(count);
    for (const auto& [r, f] : flavors) (*psa->mutable_flavors())[r] = f;
    for (const char* type : {"QuotaReserved", "Admitted"}) {
      v1::Condition* c = wl_.mutable_status()->add_conditions();
      c->set_type(type);
      c->set_status("True");
    }
    return *this;
  }
  WorkloadWrapper& AdmissionCheck(const std::string& name,
                                  std::vector<v1::PodSetUpdate> updates) {
    v1::AdmissionCheckState* check =
        wl_.mutable_status()->add_admission_checks();
    check->set_name(name);
    check->set_state("Ready");
    for (v1::PodSetUpdate& u : updates) *check->add_pod_set_updates() = u;
    return *this;
  }
  v1::Workload Obj() const { return wl_; }

 private:
  v1::Workload wl_;
};

v1::PodSetUpdate Update(std::map<std::string, std::string> labels,
                        std::map<std::string, std::string> annotations,
                        std::map<std::string, std::string> node_selector) {
  v1::PodSetUpdate u;
  u.set_name(kDefaultPodSetName);
  u.mutable_labels()->insert(labels.begin(), labels.end());
  u.mutable_annotations()->insert(annotations.begin(), annotations.end());
  u.mutable_node_selector()->insert(node_selector.begin(), node_selector.end());
  return u;
}

using Placements = google::protobuf::RepeatedPtrField<v1::PodSetPlacement>;

v1::FlavorPlacement Flavor(const std::string& name,
                           std::map<std::string, std::string> node_labels,
                           std::vector<v1::Toleration> tolerations) {
  v1::FlavorPlacement f;
  f.set_flavor(name);
  f.mutable_node_labels()->insert(node_labels.begin(), node_labels.end());
  for (v1::Toleration& t : tolerations) *f.add_tolerations() = t;
  return f;
}

Placements PlacementFor(std::vector<v1::FlavorPlacement> flavors) {
  Placements out;
  v1::PodSetPlacement* p = out.Add();
  p->set_pod_set(kDefaultPodSetName);
  for (v1::FlavorPlacement& f : flavors) *p->add_flavors() = f;
  return out;
}

// The Job as Kueue would write it: kq's own annotation is checked apart.
json WithoutKqAnnotations(json job) {
  if (job["metadata"].contains("annotations")) {
    job["metadata"]["annotations"].erase(kOriginalPodSchedulingAnnotation);
    if (job["metadata"]["annotations"].empty()) {
      job["metadata"].erase("annotations");
    }
  }
  return job;
}

std::string Pretty(const json& j) { return j.dump(2); }

// ---------------------------------------------------------------------------
// Kueue's TestGenerateWorkloadNameWithExtra (extra "" is
// GetWorkloadNameForOwnerWithGVK; ShortWorkloadNames off, its default).

TEST(WorkloadNamesTest, EmptyExtra) {
  EXPECT_THAT(WorkloadNameForJob("my-job", "uid-123"),
              ::testing::StartsWith("job-my-job-"));
  EXPECT_EQ(WorkloadNameForJob("my-job", "uid-123").size(),
            std::string("job-my-job-").size() + 5);
}

TEST(WorkloadNamesTest, ShortNameNoExtraShortWorkloadNamesFalse) {
  EXPECT_EQ(WorkloadNameForJob("name", "uid"), "job-name-ef3a1");
}

TEST(WorkloadNamesTest, LongOwnerNameTruncatedShortWorkloadNamesFalse) {
  const std::string owner =
      "marketing-campaign-autumn-2024-region-north-america-department-"
      "digital-strategy-sub-department-social-media-engagement-tracker-and-"
      "analytics-dashboard-v2-final-revision-by-engineering-team-lead-senior-"
      "architect-validation-checked-approved-by-legal-and-ops-dept";
  const std::string want =
      "job-marketing-campaign-autumn-2024-region-north-america-department-"
      "digital-strategy-sub-department-social-media-engagement-tracker-and-"
      "analytics-dashboard-v2-final-revision-by-engineering-team-lead-senior-"
      "architect-validation-checked-approved-by-l-218b8";
  EXPECT_EQ(WorkloadNameForJob(owner, "uid"), want);
  EXPECT_EQ(want.size(), 253u);
}

TEST(WorkloadNamesTest, NewUidGivesNewName) {
  EXPECT_NE(WorkloadNameForJob("name", "uid-1"),
            WorkloadNameForJob("name", "uid-2"));
}

// ---------------------------------------------------------------------------
// Kueue's podset TestFromAssignment (the TopologyAwareScheduling cases need a
// topology assignment, which kq does not make).

struct FromAssignmentCase {
  std::string name;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  int assignment_count = 0;                    // 0: unset
  int default_count = 4;
  std::vector<v1::FlavorPlacement> placed;
  bool want_not_found = false;
  int want_count = 0;
  std::map<std::string, std::string> want_node_selector;
  json want_tolerations = json::array();
  friend void PrintTo(const FromAssignmentCase& c, std::ostream* os) {
    *os << c.name;
  }
};

class FromAssignmentTest : public ::testing::TestWithParam<FromAssignmentCase> {
};

const v1::Toleration kToleration1 =
    TolProto("t1k", "Equal", "t1v", "NoExecute");
const v1::Toleration kToleration2 = TolProto("t2k", "Exists", "", "NoSchedule");
const v1::Toleration kToleration3 =
    TolProto("t3k", "Equal", "t3v", "PreferNoSchedule");
const json kToleration1Json = Tol("t1k", "Equal", "t1v", "NoExecute");
const json kToleration2Json = Tol("t2k", "Exists", "", "NoSchedule");
const json kToleration3Json = Tol("t3k", "Equal", "t3v", "PreferNoSchedule");

v1::FlavorPlacement Flavor1() {
  return Flavor("flavor1", {{"f1l1", "f1v1"}, {"f1l2", "f1v2"}},
                {kToleration1, kToleration2});
}
v1::FlavorPlacement Flavor2() {
  return Flavor("flavor2", {{"f2l1", "f2v1"}, {"f2l2", "f2v2"}},
                {kToleration3});
}

TEST_P(FromAssignmentTest, Info) {
  const FromAssignmentCase& tc = GetParam();
  v1::PodSetAssignment assignment;
  assignment.set_name("name");
  if (tc.assignment_count > 0) assignment.set_count(tc.assignment_count);
  for (const auto& [r, f] : tc.flavors) (*assignment.mutable_flavors())[r] = f;
  Placements placements = PlacementFor(tc.placed);
  placements[0].set_pod_set("name");
  absl::StatusOr<PodSetInfo> got =
      FromAssignment(assignment, tc.default_count, &placements[0]);
  if (tc.want_not_found) {
    EXPECT_THAT(got, StatusIs(absl::StatusCode::kNotFound,
                              HasSubstr("\"flavor1\" not found")));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->name, "name");
  EXPECT_EQ(got->count, tc.want_count);
  EXPECT_EQ(got->node_selector, tc.want_node_selector);
  EXPECT_EQ(Pretty(got->tolerations), Pretty(tc.want_tolerations));
  EXPECT_TRUE(got->labels.empty());
  EXPECT_TRUE(got->annotations.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FromAssignmentTest,
    ::testing::ValuesIn(std::vector<FromAssignmentCase>{
        {.name = "single_flavor",
         .flavors = {{"cpu", "flavor1"}},
         .assignment_count = 2,
         .placed = {Flavor1()},
         .want_count = 2,
         .want_node_selector = {{"f1l1", "f1v1"}, {"f1l2", "f1v2"}},
         .want_tolerations = {kToleration1Json, kToleration2Json}},
        {.name = "multiple_flavors",
         .flavors = {{"cpu", "flavor1"}, {"memory", "flavor2"}},
         .assignment_count = 2,
         .placed = {Flavor1(), Flavor2()},
         .want_count = 2,
         .want_node_selector = {{"f1l1", "f1v1"},
                                {"f1l2", "f1v2"},
                                {"f2l1", "f2v1"},
                                {"f2l2", "f2v2"}},
         .want_tolerations = {kToleration1Json, kToleration2Json,
                              kToleration3Json}},
        {.name = "duplicate_flavor",
         .flavors = {{"cpu", "flavor1"}, {"memory", "flavor1"}},
         .assignment_count = 2,
         // kqd lists each flavor once; a repeated placement is still
         // applied once.
         .placed = {Flavor1(), Flavor1(), Flavor2()},
         .want_count = 2,
         .want_node_selector = {{"f1l1", "f1v1"}, {"f1l2", "f1v2"}},
         .want_tolerations = {kToleration1Json, kToleration2Json}},
        {.name = "flavor_not_found",
         .flavors = {{"cpu", "flavor1"}},
         .assignment_count = 2,
         .want_not_found = true},
        {.name = "default_count",
         .flavors = {{"cpu", "flavor1"}},
         .placed = {Flavor1()},
         .want_count = 4,
         .want_node_selector = {{"f1l1", "f1v1"}, {"f1l2", "f1v2"}},
         .want_tolerations = {kToleration1Json, kToleration2Json}},
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Kueue's podset TestMergeRestore. The two ElasticJobsViaWorkloadSlices
// cases that overwrite a slice annotation are skipped: kq has no elastic
// Jobs; the gate-off and non-elastic variants (conflicts) are ported.

struct MergeRestoreCase {
  std::string name;
  json pod_template;
  PodSetInfo info;
  bool want_error = false;
  json want_template;
  bool want_restore_changes = false;
  friend void PrintTo(const MergeRestoreCase& c, std::ostream* os) {
    *os << c.name;
  }
};

json Template(std::map<std::string, std::string> node_selector,
              std::map<std::string, std::string> labels,
              std::map<std::string, std::string> annotations,
              json tolerations = json::array(),
              json scheduling_gates = json::array()) {
  json t = json::object();
  if (!labels.empty()) t["metadata"]["labels"] = labels;
  if (!annotations.empty()) t["metadata"]["annotations"] = annotations;
  t["spec"] = json::object();
  if (!node_selector.empty()) t["spec"]["nodeSelector"] = node_selector;
  if (!tolerations.empty()) t["spec"]["tolerations"] = tolerations;
  if (!scheduling_gates.empty()) {
    t["spec"]["schedulingGates"] = scheduling_gates;
  }
  return t;
}

json BasePodSet() {
  return Template({{"ns0", "ns0v"}}, {{"l0", "l0v"}}, {{"a0", "a0v"}},
                  {Tol("t0", "Equal", "t0v", "NoSchedule")});
}
json PodSetWithoutOperator() {
  return Template({{"ns0", "ns0v"}}, {{"l0", "l0v"}}, {{"a0", "a0v"}},
                  {Tol("t0", "", "t0v", "NoSchedule")});
}

PodSetInfo Info(std::map<std::string, std::string> annotations,
                std::map<std::string, std::string> labels,
                std::map<std::string, std::string> node_selector,
                json tolerations = json::array(),
                json scheduling_gates = json::array()) {
  PodSetInfo info;
  info.annotations = std::move(annotations);
  info.labels = std::move(labels);
  info.node_selector = std::move(node_selector);
  info.tolerations = std::move(tolerations);
  info.scheduling_gates = std::move(scheduling_gates);
  return info;
}

class MergeRestoreTest : public ::testing::TestWithParam<MergeRestoreCase> {};

TEST_P(MergeRestoreTest, MergeThenRestore) {
  const MergeRestoreCase& tc = GetParam();
  json pod_template = tc.pod_template;
  const json orig = tc.pod_template;
  absl::Status got = MergeIntoTemplate(pod_template, tc.info);
  EXPECT_EQ(tc.want_error, !got.ok()) << got;
  if (tc.want_error) {
    EXPECT_EQ(got.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(Pretty(pod_template), Pretty(orig)) << "unchanged on error";
    return;
  }
  EXPECT_EQ(Pretty(pod_template), Pretty(tc.want_template));
  PodSetInfo restore = FromPodTemplate(orig, "", 1);
  EXPECT_EQ(RestorePodSpec(pod_template, restore), tc.want_restore_changes);
  EXPECT_EQ(Pretty(pod_template), Pretty(orig));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MergeRestoreTest,
    ::testing::ValuesIn(std::vector<MergeRestoreCase>{
        {.name = "empty_info",
         .pod_template = BasePodSet(),
         .want_template = BasePodSet()},
        {.name = "no_conflicts",
         .pod_template = BasePodSet(),
         .info = Info({{"a1", "a1v"}}, {{"l1", "l1v"}}, {{"ns1", "ns1v"}},
                      {Tol("t1", "Equal", "t1v", "NoSchedule")}),
         .want_template = Template({{"ns0", "ns0v"}, {"ns1", "ns1v"}},
                                   {{"l0", "l0v"}, {"l1", "l1v"}},
                                   {{"a0", "a0v"}, {"a1", "a1v"}},
                                   {Tol("t0", "Equal", "t0v", "NoSchedule"),
                                    Tol("t1", "Equal", "t1v", "NoSchedule")}),
         .want_restore_changes = true},
        {.name = "dont_duplicate_tolerations",
         .pod_template = BasePodSet(),
         .info = Info({{"a1", "a1v"}}, {{"l1", "l1v"}}, {{"ns1", "ns1v"}},
                      {Tol("t0", "Equal", "t0v", "NoSchedule")}),
         .want_template = Template({{"ns0", "ns0v"}, {"ns1", "ns1v"}},
                                   {{"l0", "l0v"}, {"l1", "l1v"}},
                                   {{"a0", "a0v"}, {"a1", "a1v"}},
                                   {Tol("t0", "Equal", "t0v", "NoSchedule")}),
         .want_restore_changes = true},
        {.name = "dont_duplicate_tolerations_that_differ_only_by_empty_vs_"
                 "equal_operator",
         .pod_template = BasePodSet(),
         .info = Info({}, {}, {}, {Tol("t0", "", "t0v", "NoSchedule")}),
         .want_template = BasePodSet()},
        {.name = "dont_duplicate_tolerations_that_differ_only_by_equal_vs_"
                 "empty_operator",
         .pod_template = PodSetWithoutOperator(),
         .info = Info({}, {}, {}, {Tol("t0", "Equal", "t0v", "NoSchedule")}),
         .want_template = PodSetWithoutOperator()},
        {.name = "conflicting_label",
         .pod_template = BasePodSet(),
         .info = Info({}, {{"l0", "l0v1"}}, {}),
         .want_error = true},
        {.name = "conflicting_annotation",
         .pod_template = BasePodSet(),
         .info = Info({{"a0", "a0v1"}}, {}, {}),
         .want_error = true},
        {.name = "updated_workload_slice_annotation_feature_disabled",
         .pod_template = Template(
             {}, {}, {{"kueue.x-k8s.io/workload-slice-name", "old-slice"}}),
         .info = Info({{"kueue.x-k8s.io/workload-slice-name", "new-slice"}}, {},
                      {}),
         .want_error = true},
        {.name = "updated_workload_annotation_for_a_non_elastic_admission",
         .pod_template = Template({}, {},
                                  {{kWorkloadAnnotation, "old-workload"}}),
         .info = Info({{kWorkloadAnnotation, "new-workload"}}, {}, {}),
         .want_error = true},
        {.name = "conflicting_node_selector",
         .pod_template = BasePodSet(),
         .info = Info({}, {}, {{"ns0", "ns0v1"}}),
         .want_error = true},
        {.name = "podset_with_scheduling_gate_empty_info",
         .pod_template = Template({}, {}, {}, {},
                                  {{{"name", "example.com/gate"}}}),
         .want_template = Template({}, {}, {}, {},
                                   {{{"name", "example.com/gate"}}})},
        {.name = "podset_with_scheduling_gate_info_re_adds_the_same",
         .pod_template = Template({}, {}, {}, {},
                                  {{{"name", "example.com/gate"}}}),
         .info = Info({}, {}, {}, {}, {{{"name", "example.com/gate"}}}),
         .want_template = Template({}, {}, {}, {},
                                   {{{"name", "example.com/gate"}}})},
        {.name = "podset_with_scheduling_gate_info_adds_another",
         .pod_template = Template({}, {}, {}, {},
                                  {{{"name", "example.com/gate"}}}),
         .info = Info({}, {}, {}, {}, {{{"name", "example.com/gate2"}}}),
         .want_template = Template({}, {}, {}, {},
                                   {{{"name", "example.com/gate"}},
                                    {{"name", "example.com/gate2"}}}),
         .want_restore_changes = true},
    }),
    [](const auto& info) { return info.param.name; });

TEST(MergeTest, ConflictMessageIsKueues) {
  PodSetInfo info = Info({}, {{"ac-key", "ac-value1"}}, {});
  EXPECT_THAT(info.Merge(Info({}, {{"ac-key", "ac-value2"}}, {})),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "invalid admission check PodSetUpdate: conflict for "
                       "labels: conflict for key=ac-key, value1=ac-value1, "
                       "value2=ac-value2"));
}

// Kueue's TestAddOrUpdateLabel.
TEST(AddOrUpdateLabelTest, Cases) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> labels, want;
  };
  for (const Case& tc : std::vector<Case>{
           {"add_to_nil_labels", {}, {{"key", "value"}}},
           {"add",
            {{"other-key", "other-value"}},
            {{"other-key", "other-value"}, {"key", "value"}}},
           {"update", {{"key", "value"}}, {{"key", "updated-value"}}},
       }) {
    SCOPED_TRACE(tc.name);
    PodSetInfo info;
    info.labels = tc.labels;
    info.AddOrUpdateLabel("key",
                          tc.name == "update" ? "updated-value" : "value");
    EXPECT_EQ(info.labels, tc.want);
  }
}

// ---------------------------------------------------------------------------
// Kueue's job TestPodSetsInfo (RunWithPodSetsInfo, then RestorePodSetsInfo
// and Suspend give back the original spec). "replace stale workload slice
// annotation" needs ElasticJobsViaWorkloadSlices: skipped.

struct PodSetsInfoCase {
  std::string name;
  json job;
  std::vector<PodSetInfo> run_info, restore_info;
  json want_unsuspended;
  std::string want_run_error;  // substring; empty for none
  friend void PrintTo(const PodSetsInfoCase& c, std::ostream* os) {
    *os << c.name;
  }
};

class PodSetsInfoTest : public ::testing::TestWithParam<PodSetsInfoCase> {};

PodSetInfo CountInfo(int count) {
  PodSetInfo info;
  info.count = count;
  return info;
}

TEST_P(PodSetsInfoTest, RunAndRestore) {
  const PodSetsInfoCase& tc = GetParam();
  json job = tc.job;
  const json orig_spec = tc.job["spec"];
  absl::Status got = RunWithPodSetsInfo(job, tc.run_info);
  if (tc.want_run_error.empty()) {
    EXPECT_TRUE(got.ok()) << got;
  } else {
    EXPECT_THAT(got, StatusIs(absl::StatusCode::kFailedPrecondition,
                              HasSubstr(tc.want_run_error)));
  }
  EXPECT_EQ(Pretty(job["spec"]), Pretty(tc.want_unsuspended["spec"]));
  RestorePodSetsInfo(job, tc.restore_info);
  job["spec"]["suspend"] = true;
  EXPECT_EQ(Pretty(job["spec"]), Pretty(orig_spec));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PodSetsInfoTest,
    ::testing::ValuesIn(std::vector<PodSetsInfoCase>{
        {.name = "append",
         .job = JobWrapper("job", "ns")
                    .Parallelism(1)
                    .NodeSelector("orig-key", "orig-val")
                    .Toleration(Tol("orig-t-key", "Equal", "orig-t-val",
                                    "NoSchedule"))
                    .Obj(),
         .run_info = {Info({}, {}, {{"new-key", "new-val"}},
                           {Tol("new-t-key", "Equal", "new-t-val",
                                "NoSchedule")})},
         .restore_info = {Info({}, {}, {{"orig-key", "orig-val"}},
                               {Tol("orig-t-key", "Equal", "orig-t-val",
                                    "NoSchedule")})},
         .want_unsuspended = JobWrapper("job", "ns")
                                 .Parallelism(1)
                                 .NodeSelector("orig-key", "orig-val")
                                 .NodeSelector("new-key", "new-val")
                                 .Toleration(Tol("orig-t-key", "Equal",
                                                 "orig-t-val", "NoSchedule"))
                                 .Toleration(Tol("new-t-key", "Equal",
                                                 "new-t-val", "NoSchedule"))
                                 .Suspend(false)
                                 .Obj()},
        {.name = "update",
         .job = JobWrapper("job", "ns")
                    .Parallelism(1)
                    .NodeSelector("orig-key", "orig-val")
                    .Obj(),
         .run_info = {Info({}, {}, {{"orig-key", "new-val"}})},
         .restore_info = {Info({}, {}, {{"orig-key", "orig-val"}})},
         .want_unsuspended = JobWrapper("job", "ns")
                                 .Parallelism(1)
                                 .NodeSelector("orig-key", "orig-val")
                                 .Suspend(false)
                                 .Obj(),
         .want_run_error = "invalid admission check PodSetUpdate"},
        {.name = "parallelism",
         .job = JobWrapper("job", "ns")
                    .Parallelism(5)
                    .SetAnnotation(kJobMinParallelismAnnotation, "2")
                    .Obj(),
         .run_info = {CountInfo(2)},
         .restore_info = {CountInfo(5)},
         .want_unsuspended = JobWrapper("job", "ns")
                                 .Parallelism(2)
                                 .SetAnnotation(kJobMinParallelismAnnotation,
                                                "2")
                                 .Suspend(false)
                                 .Obj()},
        {.name = "no_info_on_run",
         .job = JobWrapper("job", "ns")
                    .Parallelism(5)
                    .SetAnnotation(kJobMinParallelismAnnotation, "2")
                    .Obj(),
         .restore_info = {CountInfo(5)},
         .want_unsuspended = JobWrapper("job", "ns")
                                 .Parallelism(5)
                                 .SetAnnotation(kJobMinParallelismAnnotation,
                                                "2")
                                 .Suspend(false)
                                 .Obj(),
         .want_run_error = "invalid podset infos: expecting 1 podset, got 0"},
    }),
    [](const auto& info) { return info.param.name; });

// Kueue's TestCleanLabels.
TEST(CleanLabelsTest, FeatureEnabled) {
  json pod_template = {{"metadata",
                        {{"labels",
                          {{"foo", "bar"},
                           {"batch.kubernetes.io/job-name", "job-name"},
                           {"controller-uid", "uid"},
                           {"batch.kubernetes.io/controller-uid", "uid"}}}}}};
  CleanLabels(pod_template);
  EXPECT_EQ(Pretty(pod_template["metadata"]["labels"]),
            Pretty(json{{"foo", "bar"},
                        {"batch.kubernetes.io/job-name", "job-name"}}));
}

// ---------------------------------------------------------------------------
// Kueue's TestTerminalIndexesCount and TestReclaimablePods.

TEST(TerminalIndexesCountTest, Cases) {
  struct Case {
    std::string name, completed, failed;
    int completions, want;
  };
  for (const Case& tc : std::vector<Case>{
           {"empty", "", "", 10, 0},
           {"zero completions", "0-9", "", 0, 0},
           {"single completed index", "0", "", 10, 1},
           {"single failed index", "", "1", 10, 1},
           {"single range", "0-4", "", 10, 5},
           {"mixed intervals", "0-4,7,9-11", "", 10, 7},
           {"completed and failed indexes", "0-2,7", "3-5,8", 10, 8},
           {"overlapping terminal indexes", "0-4", "3-7", 10, 8},
           {"contained failed indexes", "0-9", "2-3", 10, 10},
           {"surviving low indexes", "0-8", "", 10, 9},
           {"all completed within range", "0-14", "", 10, 10},
           {"range straddling the cap", "5-19", "", 10, 5},
           {"all removed (above the cap)", "10-19", "", 10, 0},
           {"failed range straddling the cap", "", "5-19", 10, 5},
           {"all failed removed (above the cap)", "", "10-19", 10, 0},
           {"stale failed index after scale-down", "", "4", 3, 0},
           {"cap applied to completed and failed", "0-1", "2-19", 5, 5},
           {"range capped tighter", "0-4", "", 3, 3},
           {"discrete indexes", "3,5,7", "", 10, 3},
           {"discrete indexes partly above", "3,5,12", "", 10, 2},
           {"malformed interval skipped", "abc,0-2", "", 10, 3},
           {"malformed range end skipped", "0-x,4", "", 10, 1},
       }) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(TerminalIndexesCount(tc.completed, tc.failed, tc.completions),
              tc.want);
  }
}

json IndexedJob(int succeeded, int failed, const std::string& completed,
                const std::string& failed_indexes) {
  JobWrapper j =
      JobWrapper("job", "ns").Indexed().Parallelism(8).Completions(8);
  j.Status("succeeded", succeeded).Status("failed", failed);
  j.Status("completedIndexes", completed);
  json out = j.Obj();
  if (!failed_indexes.empty()) {
    out["spec"]["backoffLimitPerIndex"] = 0;
    out["status"]["failedIndexes"] = failed_indexes;
  }
  return out;
}

TEST(ReclaimablePodsTest, Cases) {
  json retryable = IndexedJob(1, 1, "0", "");
  retryable["spec"]["backoffLimitPerIndex"] = 1;
  struct Case {
    std::string name;
    json job;
    int want;  // 0: no entry
  };
  for (const Case& tc : std::vector<Case>{
           {"indexed Job reclaims its completed indexes",
            IndexedJob(4, 0, "0-3", ""), 4},
           {"indexed Job holds quota for a retryable failure", retryable, 1},
           {"indexed Job reclaims completed and failed indexes",
            IndexedJob(1, 1, "0", "1"), 2},
           {"indexed Job with empty terminal indexes holds quota",
            IndexedJob(4, 0, "", ""), 0},
       }) {
    SCOPED_TRACE(tc.name);
    std::vector<v1::ReclaimablePod> got = ReclaimablePods(tc.job);
    if (tc.want == 0) {
      EXPECT_TRUE(got.empty());
    } else {
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].name(), "main");
      EXPECT_EQ(got[0].count(), tc.want);
    }
  }
}

// ---------------------------------------------------------------------------
// Kueue's job TestReconciler: the Workload created for a Job.

JobWrapper BaseJob() {
  return JobWrapper("job", "ns")
      .Suspend(true)
      .Queue("foo")
      .Parallelism(10)
      .Request("cpu", "1");
}

TEST(ReconcilerTest, WhenWorkloadIsCreatedItHasItsOwnerProvReqAnnotations) {
  json job = BaseJob()
                 .SetAnnotation(
                     std::string(kProvReqAnnotationPrefix) + "test-annotation",
                     "test-val")
                 .SetAnnotation("invalid-provreq-prefix/test-annotation-2",
                                "test-val-2")
                 .UID("test-uid")
                 .Obj();
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, WorkloadForJob(job));
  EXPECT_EQ(wl.metadata().name(), WorkloadNameForJob("job", "test-uid"));
  EXPECT_EQ(wl.metadata().namespace_(), "ns");
  EXPECT_THAT(wl.metadata().annotations(),
              ::testing::UnorderedElementsAre(
                  ::testing::Pair(
                      std::string(kProvReqAnnotationPrefix) + "test-annotation",
                      "test-val"),
                  ::testing::Pair(kJobNameAnnotation, "job"),
                  ::testing::Pair(kJobUidAnnotation, "test-uid")));
  EXPECT_THAT(wl.metadata().labels(),
              ::testing::UnorderedElementsAre(
                  ::testing::Pair(kJobUidLabel, "test-uid")));
  EXPECT_EQ(wl.spec().queue_name(), "foo");
  ASSERT_EQ(wl.spec().pod_sets_size(), 1);
  EXPECT_EQ(wl.spec().pod_sets(0).name(), "main");
  EXPECT_EQ(wl.spec().pod_sets(0).count(), 10);
  EXPECT_THAT(wl.spec().pod_sets(0).requests(),
              ::testing::UnorderedElementsAre(::testing::Pair("cpu", "1")));
  EXPECT_EQ(wl.spec().priority(), 0);
}

TEST(ReconcilerTest, TheWorkloadIsCreatedWhenQueueNameIsSet) {
  json job = BaseJob().Suspend(false).Queue("test-queue").UID("test-uid").Obj();
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, WorkloadForJob(job));
  EXPECT_EQ(wl.metadata().name(), WorkloadNameForJob("job", "test-uid"));
  EXPECT_EQ(wl.spec().queue_name(), "test-queue");
  EXPECT_EQ(wl.spec().pod_sets(0).count(), 10);
  EXPECT_THAT(wl.metadata().labels(),
              ::testing::UnorderedElementsAre(
                  ::testing::Pair(kJobUidLabel, "test-uid")));
}

TEST(ReconcilerTest,
     TheWorkloadWithoutUidLabelIsCreatedWhenJobsUidIsLongerThan63Characters) {
  std::string uid;
  for (int i = 0; i < 8; ++i) uid += "long-uid";
  json job = BaseJob().Suspend(false).Queue("test-queue").UID(uid).Obj();
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, WorkloadForJob(job));
  EXPECT_EQ(wl.metadata().name(), WorkloadNameForJob("job", uid));
  EXPECT_TRUE(wl.metadata().labels().empty());
  EXPECT_EQ(wl.metadata().annotations().at(kJobUidAnnotation), uid);
}

TEST(ReconcilerTest, TheWorkloadIsNotCreatedWhenQueueNameIsNotSet) {
  json job = JobWrapper("job", "ns").Suspend(false).UID("test-uid").Obj();
  EXPECT_THAT(WorkloadForJob(job),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(ReconcilerTest, TheMaximumExecutionTimeIsPassedToTheCreatedWorkload) {
  json job = BaseJob()
                 .Label("kueue.x-k8s.io/max-exec-time-seconds", "10")
                 .UID("test-uid")
                 .Obj();
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, WorkloadForJob(job));
  EXPECT_EQ(wl.spec().maximum_execution_time_seconds(), 10);
}

TEST(ReconcilerTest,
     TheWorkloadIsCreatedWhenQueueNameIsSetWithWorkloadPriorityClass) {
  json job = BaseJob()
                 .Label("kueue.x-k8s.io/priority-class", "test-wpc")
                 .UID("test-uid")
                 .Obj();
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, WorkloadForJob(job));
  EXPECT_EQ(wl.spec().priority_class_name(), "test-wpc");
  EXPECT_EQ(wl.spec().priority_class_source(),
            "kueue.x-k8s.io/workloadpriorityclass");
}

TEST(WorkloadForJobTest, NeedsUid) {
  EXPECT_THAT(
      WorkloadForJob(BaseJob().Obj()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.uid")));
}

// A Job as the API server returns it: defaults, managed labels, status.
TEST(WorkloadForJobTest, ApiServerJobDescribesTheOriginalTemplate) {
  json job = json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "sample", "namespace": "team-a", "uid": "u-1",
      "resourceVersion": "42", "generation": 2,
      "creationTimestamp": "2026-01-02T03:04:05Z",
      "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
      "managedFields": [{"manager": "kubectl"}]},
    "spec": {"parallelism": 3, "completions": 3, "suspend": true,
      "backoffLimit": 6, "completionMode": "NonIndexed",
      "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}},
      "template": {"metadata": {"creationTimestamp": null,
          "labels": {"batch.kubernetes.io/controller-uid": "u-1",
                     "batch.kubernetes.io/job-name": "sample",
                     "controller-uid": "u-1", "job-name": "sample"}},
        "spec": {"containers": [{"name": "c", "image": "busybox",
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
          "restartPolicy": "Never", "terminationGracePeriodSeconds": 30}}},
    "status": {"active": 0}})");
  ASSERT_OK_AND_ASSIGN(v1::Workload wl, WorkloadForJob(job));
  EXPECT_EQ(wl.metadata().name(), WorkloadNameForJob("sample", "u-1"));
  EXPECT_EQ(wl.metadata().revision(), 0);
  EXPECT_EQ(wl.spec().pod_sets(0).count(), 3);
  EXPECT_THAT(
      wl.spec().pod_sets(0).requests(),
      ::testing::UnorderedElementsAre(::testing::Pair("cpu", "500m"),
                                      ::testing::Pair("memory", "1Gi")));
  const nlohmann::json labels =
      nlohmann::json::parse(wl.spec().pod_sets(0).template_json())
          .at("metadata")
          .at("labels");
  EXPECT_EQ(labels.size(), 1u);
  EXPECT_TRUE(labels.contains("batch.kubernetes.io/job-name"));
  ASSERT_OK_AND_ASSIGN(auto owner_opt, [&]() -> absl::StatusOr<JobOwner> {
    auto owner = OwnerOfWorkload(wl);
    if (!owner) return absl::NotFoundError("no owner");
    return *owner;
  }());
  EXPECT_EQ(owner_opt.key.String(), "team-a/sample");
  EXPECT_EQ(owner_opt.uid, "u-1");
}

// ---------------------------------------------------------------------------
// Kueue's job TestReconciler: what a start writes.

WorkloadWrapper BaseWorkload() {
  return std::move(
      WorkloadWrapper("wl", "ns").Queue("foo").PodSet(10).Admit("cq", 10));
}

struct StartCase {
  std::string name;
  json job;
  v1::Workload wl;
  Placements placements;
  json want_job;           // with an error: the Job is not written
  std::string want_error;  // exact message; empty for none
  friend void PrintTo(const StartCase& c, std::ostream* os) { *os << c.name; }
};

class ReconcilerStartTest : public ::testing::TestWithParam<StartCase> {};

TEST_P(ReconcilerStartTest, StartJob) {
  const StartCase& tc = GetParam();
  absl::StatusOr<json> got = StartJob(tc.job, tc.wl, tc.placements);
  if (!tc.want_error.empty()) {
    EXPECT_THAT(got,
                StatusIs(absl::StatusCode::kFailedPrecondition, tc.want_error));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Pretty(WithoutKqAnnotations(*got)), Pretty(tc.want_job));
  // Kueue restores from the Workload's pod set; kq from the Job: a stop
  // gives back the Job as it was, suspended.
  json stopping = SuspendJob(*got);
  EXPECT_FALSE(IsSuspended(stopping));
  EXPECT_TRUE(IsStopping(stopping));
  ASSERT_OK_AND_ASSIGN(json restored, RestoreJob(stopping));
  json want_restored = tc.job;
  want_restored["spec"]["suspend"] = true;
  EXPECT_EQ(Pretty(restored), Pretty(want_restored));
  EXPECT_TRUE(IsSuspended(restored));
}

const std::string kLongClusterQueue = [] {
  std::string s;
  for (int i = 0; i < 50; ++i) s += "cq";
  return s;
}();

INSTANTIATE_TEST_SUITE_P(
    Cases, ReconcilerStartTest,
    ::testing::ValuesIn(std::vector<StartCase>{
        {.name = "podset_label_and_workload_annotation_are_set_when_job_is_"
                 "starting_topology_aware_scheduling_enabled",
         .job = BaseJob().Obj(),
         .wl = BaseWorkload().Obj(),
         .want_job = BaseJob()
                         .Suspend(false)
                         .PodLabel(kPodSetLabel, "main")
                         .PodLabel(kLocalQueueLabel, "foo")
                         .PodLabel(kClusterQueueLabel, "cq")
                         .PodAnnotation(kWorkloadAnnotation, "wl")
                         .Obj()},
        {.name = "pod_cluster_queue_label_is_not_set_when_cluster_queue_name_"
                 "is_too_long",
         .job = BaseJob().Obj(),
         .wl = WorkloadWrapper("wl", "ns")
                   .Queue("foo")
                   .PodSet(10)
                   .Admit(kLongClusterQueue, 10)
                   .Obj(),
         .want_job = BaseJob()
                         .Suspend(false)
                         .PodLabel(kPodSetLabel, "main")
                         .PodLabel(kLocalQueueLabel, "foo")
                         .PodAnnotation(kWorkloadAnnotation, "wl")
                         .Obj()},
        {.name = "when_workload_is_admitted_the_podsetupdates_are_propagated_"
                 "to_job",
         .job = BaseJob().Obj(),
         .wl = BaseWorkload()
                   .AdmissionCheck("check",
                                   {Update({{"ac-key", "ac-value"}}, {}, {})})
                   .Obj(),
         .want_job = BaseJob()
                         .Suspend(false)
                         .PodLabel("ac-key", "ac-value")
                         .PodLabel(kPodSetLabel, "main")
                         .PodLabel(kLocalQueueLabel, "foo")
                         .PodLabel(kClusterQueueLabel, "cq")
                         .PodAnnotation(kWorkloadAnnotation, "wl")
                         .Obj()},
        {.name = "when_workload_is_admitted_and_podsetupdates_conflict_between_"
                 "admission_checks_on_labels_the_workload_is_finished_with_"
                 "failure",
         .job = BaseJob().Obj(),
         .wl = BaseWorkload()
                   .AdmissionCheck("check1",
                                   {Update({{"ac-key", "ac-value1"}}, {}, {})})
                   .AdmissionCheck("check2",
                                   {Update({{"ac-key", "ac-value2"}}, {}, {})})
                   .Obj(),
         .want_error = "in admission check \"check2\": invalid admission check "
                       "PodSetUpdate: conflict for labels: conflict for "
                       "key=ac-key, value1=ac-value1, value2=ac-value2"},
        {.name = "when_workload_is_admitted_and_podsetupdates_conflict_between_"
                 "admission_checks_on_annotations_the_workload_is_finished_"
                 "with_failure",
         .job = BaseJob().Obj(),
         .wl = BaseWorkload()
                   .AdmissionCheck("check1",
                                   {Update({}, {{"ac-key", "ac-value1"}}, {})})
                   .AdmissionCheck("check2",
                                   {Update({}, {{"ac-key", "ac-value2"}}, {})})
                   .Obj(),
         .want_error = "in admission check \"check2\": invalid admission check "
                       "PodSetUpdate: conflict for annotations: conflict for "
                       "key=ac-key, value1=ac-value1, value2=ac-value2"},
        {.name = "when_workload_is_admitted_and_podsetupdates_conflict_between_"
                 "admission_checks_on_nodeselector_the_workload_is_finished_"
                 "with_failure",
         .job = BaseJob().Obj(),
         .wl = BaseWorkload()
                   .AdmissionCheck("check1",
                                   {Update({}, {}, {{"ac-key", "ac-value1"}})})
                   .AdmissionCheck("check2",
                                   {Update({}, {}, {{"ac-key", "ac-value2"}})})
                   .Obj(),
         .want_error = "in admission check \"check2\": invalid admission check "
                       "PodSetUpdate: conflict for nodeSelector: conflict for "
                       "key=ac-key, value1=ac-value1, value2=ac-value2"},
        {.name = "when_workload_is_admitted_and_podsetupdates_conflict_between_"
                 "admission_check_nodeselector_and_current_node_selector_the_"
                 "workload_is_finished_with_failure",
         .job = BaseJob().NodeSelector("provisioning", "spot").Obj(),
         .wl = BaseWorkload()
                   .AdmissionCheck("check",
                                   {Update({}, {},
                                           {{"provisioning", "on-demand"}})})
                   .Obj(),
         .want_error = "invalid admission check PodSetUpdate: conflict for "
                       "nodeSelector: conflict for key=provisioning, "
                       "value1=spot, value2=on-demand"},
        {.name = "when_workload_is_admitted_the_podsetupdates_values_matching_"
                 "for_key",
         .job = BaseJob().Obj(),
         .wl = BaseWorkload()
                   .AdmissionCheck(
                       "check1",
                       {Update({{"label-key1", "common-value"}},
                               {{"annotation-key1", "common-value"},
                                {"annotation-key2", "only-in-check1"}},
                               {{"node-selector-key1", "common-value"}})})
                   .AdmissionCheck(
                       "check2",
                       {Update({{"label-key1", "common-value"}},
                               {{"annotation-key1", "common-value"}},
                               {{"node-selector-key1", "common-value"},
                                {"node-selector-key2", "only-in-check2"}})})
                   .Obj(),
         .want_job = BaseJob()
                         .Suspend(false)
                         .PodAnnotation("annotation-key1", "common-value")
                         .PodAnnotation("annotation-key2", "only-in-check1")
                         .PodAnnotation(kWorkloadAnnotation, "wl")
                         .PodLabel("label-key1", "common-value")
                         .PodLabel(kLocalQueueLabel, "foo")
                         .PodLabel(kClusterQueueLabel, "cq")
                         .PodLabel(kPodSetLabel, "main")
                         .NodeSelector("node-selector-key1", "common-value")
                         .NodeSelector("node-selector-key2", "only-in-check2")
                         .Obj()},
        {.name = "suspended_job_with_matching_admitted_workload_is_unsuspended",
         .job = BaseJob().Obj(),
         .wl = BaseWorkload().Obj(),
         .want_job = BaseJob()
                         .Suspend(false)
                         .PodLabel(kPodSetLabel, "main")
                         .PodLabel(kLocalQueueLabel, "foo")
                         .PodLabel(kClusterQueueLabel, "cq")
                         .PodAnnotation(kWorkloadAnnotation, "wl")
                         .Obj()},
        {.name = "suspended_job_with_partial_admission_and_admitted_workload_"
                 "is_unsuspended",
         .job =
             BaseJob().SetAnnotation(kJobMinParallelismAnnotation, "5").Obj(),
         .wl = WorkloadWrapper("a", "ns")
                   .Queue("foo")
                   .PodSet(10, 5)
                   .Admit("cq", 8)
                   .Obj(),
         .want_job = BaseJob()
                         .SetAnnotation(kJobMinParallelismAnnotation, "5")
                         .Suspend(false)
                         .Parallelism(8)
                         .PodLabel(kPodSetLabel, "main")
                         .PodLabel(kLocalQueueLabel, "foo")
                         .PodLabel(kClusterQueueLabel, "cq")
                         .PodAnnotation(kWorkloadAnnotation, "a")
                         .Obj()},
        // The issue's seed: the flavor's nodeLabels and tolerations are
        // injected next to the Job's own.
        {.name = "when_workload_is_admitted_job_gets_the_flavors_node_selector_"
                 "and_tolerations",
         .job = BaseJob()
                    .NodeSelector("team", "a")
                    .Toleration(Tol("own", "Exists", "", "NoSchedule"))
                    .Obj(),
         .wl = WorkloadWrapper("wl", "ns")
                   .Queue("foo")
                   .PodSet(10)
                   .Admit("cq", 10,
                          {{"cpu", "gpu-a100"}, {"memory", "gpu-a100"}})
                   .Obj(),
         .placements = PlacementFor({Flavor(
             "gpu-a100", {{"cloud.provider.com/accelerator", "nvidia-a100"}},
             {TolProto("nvidia.com/gpu", "Exists", "", "NoSchedule")})}),
         .want_job =
             BaseJob()
                 .Suspend(false)
                 .NodeSelector("team", "a")
                 .NodeSelector("cloud.provider.com/accelerator", "nvidia-a100")
                 .Toleration(Tol("own", "Exists", "", "NoSchedule"))
                 .Toleration(Tol("nvidia.com/gpu", "Exists", "", "NoSchedule"))
                 .PodLabel(kPodSetLabel, "main")
                 .PodLabel(kLocalQueueLabel, "foo")
                 .PodLabel(kClusterQueueLabel, "cq")
                 .PodAnnotation(kWorkloadAnnotation, "wl")
                 .Obj()},
        // podSetUpdates merge after the flavors', as in Kueue.
        {.name = "when_workload_is_admitted_podsetupdates_merge_after_the_"
                 "flavors",
         .job = BaseJob().Obj(),
         .wl = WorkloadWrapper("wl", "ns")
                   .Queue("foo")
                   .PodSet(10)
                   .Admit("cq", 10, {{"cpu", "spot"}})
                   .AdmissionCheck(
                       "prov", {Update({}, {{"provreq", "x"}},
                                       {{"autoscaling.x-k8s.io/provisioning-"
                                         "class-name",
                                         "queued"}})})
                   .Obj(),
         .placements = PlacementFor({Flavor("spot", {{"instance", "spot"}},
                                            {TolProto("spot", "Equal", "true",
                                                      "NoSchedule")})}),
         .want_job =
             BaseJob()
                 .Suspend(false)
                 .NodeSelector("autoscaling.x-k8s.io/provisioning-class-name",
                               "queued")
                 .NodeSelector("instance", "spot")
                 .Toleration(Tol("spot", "Equal", "true", "NoSchedule"))
                 .PodLabel(kPodSetLabel, "main")
                 .PodLabel(kLocalQueueLabel, "foo")
                 .PodLabel(kClusterQueueLabel, "cq")
                 .PodAnnotation(kWorkloadAnnotation, "wl")
                 .PodAnnotation("provreq", "x")
                 .Obj()},
    }),
    [](const auto& info) { return info.param.name; });

// Kueue's "admission check message is emitted as event for job" and
// "multiple admission check messages are emitted as a single event for job":
// the message of the UpdatedAdmissionCheck event.
v1::Workload PendingChecks(
    std::vector<std::pair<std::string, std::string>> checks) {
  v1::Workload wl = BaseWorkload().Obj();
  for (const auto& [name, message] : checks) {
    v1::AdmissionCheckState* check =
        wl.mutable_status()->add_admission_checks();
    check->set_name(name);
    check->set_state("Pending");
    check->set_message(message);
  }
  return wl;
}

TEST(ReconcilerTest, AdmissionCheckMessageIsEmittedAsEventForJob) {
  EXPECT_EQ(AdmissionCheckMessage(PendingChecks(
                {{"acName", "Not admitted, ETA: 2024-02-22T10:36:40Z."}})),
            "acName: Not admitted, ETA: 2024-02-22T10:36:40Z.");
}

TEST(ReconcilerTest,
     MultipleAdmissionCheckMessagesAreEmittedAsASingleEventForJob) {
  EXPECT_EQ(
      AdmissionCheckMessage(PendingChecks(
          {{"acName1", "Some message."}, {"acName2", "Another message."}})),
      "acName1: Some message.; acName2: Another message.");
}

TEST(AdmissionCheckMessageTest, OnlyPendingChecksWithAMessage) {
  v1::Workload wl = PendingChecks({{"silent", ""}, {"said", "waiting"}});
  wl.mutable_status()->mutable_admission_checks(1)->set_state("Ready");
  EXPECT_EQ(AdmissionCheckMessage(wl), "");
}

TEST(ReconcilerTest, AdmittedMessageIsKueues) {
  EXPECT_EQ(AdmittedMessage(BaseWorkload().Obj()),
            "Admitted by clusterQueue cq");
}

// Kueue's "when workload is evicted, suspend, reset startTime and restore
// node affinity": the Job ends suspended with the flavor's nodeSelector
// taken out. kq restores once no pod is active (Kueue resets startTime
// itself through the status subresource).
TEST(ReconcilerTest,
     WhenWorkloadIsEvictedSuspendResetStartTimeAndRestoreNodeAffinity) {
  v1::Workload wl = WorkloadWrapper("wl", "ns")
                        .Queue("foo")
                        .PodSet(10)
                        .Admit("cq", 10, {{"cpu", "spot"}})
                        .Obj();
  ASSERT_OK_AND_ASSIGN(
      json running,
      StartJob(BaseJob().Obj(), wl,
               PlacementFor({Flavor("spot", {{"provisioning", "spot"}}, {})})));
  EXPECT_EQ(running["spec"]["template"]["spec"]["nodeSelector"]["provisioning"],
            "spot");
  running["status"]["active"] = 10;
  running["status"]["startTime"] = "2026-01-02T03:04:05Z";
  json suspended = SuspendJob(running);
  EXPECT_TRUE(SuspendRequested(suspended));
  EXPECT_TRUE(IsActive(suspended));
  ASSERT_OK_AND_ASSIGN(json restored, RestoreJob(suspended));
  json want = BaseJob().Active(10).StartTime("2026-01-02T03:04:05Z").Obj();
  EXPECT_EQ(Pretty(restored), Pretty(want));
}

// A start after a lost restore (the shim stopped in between) does not stack
// admissions: the saved original wins.
TEST(StartJobTest, RestartedAdmissionDoesNotStack) {
  v1::Workload wl = WorkloadWrapper("wl", "ns")
                        .Queue("foo")
                        .PodSet(10)
                        .Admit("cq", 10, {{"cpu", "a"}})
                        .Obj();
  ASSERT_OK_AND_ASSIGN(
      json first, StartJob(BaseJob().Obj(), wl,
                           PlacementFor({Flavor("a", {{"pool", "a"}}, {})})));
  first["spec"]["suspend"] = true;
  v1::Workload wl2 = WorkloadWrapper("wl", "ns")
                         .Queue("foo")
                         .PodSet(10)
                         .Admit("cq", 10, {{"cpu", "b"}})
                         .Obj();
  // Without the restore, {pool: a} would conflict with {pool: b}.
  ASSERT_OK_AND_ASSIGN(
      json second,
      StartJob(first, wl2, PlacementFor({Flavor("b", {{"pool", "b"}}, {})})));
  EXPECT_EQ(second["spec"]["template"]["spec"]["nodeSelector"],
            json({{"pool", "b"}}));
  // The Workload still describes the original Job.
  json with_uid = second;
  with_uid["metadata"]["uid"] = "u";
  ASSERT_OK_AND_ASSIGN(v1::Workload described, WorkloadForJob(with_uid));
  EXPECT_EQ(described.spec().pod_sets(0).node_selector_size(), 0);
}

TEST(RestoreJobTest, WithoutSavedOriginalKeepsTheTemplate) {
  json job = BaseJob().Suspend(false).NodeSelector("k", "v").Obj();
  ASSERT_OK_AND_ASSIGN(json restored, RestoreJob(SuspendJob(job)));
  json want = job;
  want["spec"]["suspend"] = true;
  EXPECT_EQ(Pretty(restored), Pretty(want));
}

// Kueue's "when job completes, workload is marked as finished" and its
// Finished(): the first Complete or Failed condition.
TEST(ReconcilerTest, WhenJobCompletesWorkloadIsMarkedAsFinished) {
  JobFinish got =
      Finished(BaseJob()
                   .Condition("Complete", "True", "Job finished successfully")
                   .Obj());
  EXPECT_TRUE(got.finished);
  EXPECT_TRUE(got.succeeded);
  EXPECT_EQ(got.message, "Job finished successfully");
}

TEST(FinishedTest, Cases) {
  EXPECT_FALSE(Finished(BaseJob().Obj()).finished);
  EXPECT_FALSE(
      Finished(BaseJob().Condition("Complete", "False", "").Obj()).finished);
  EXPECT_FALSE(
      Finished(BaseJob().Condition("Suspended", "True", "").Obj()).finished);
  JobFinish failed = Finished(
      BaseJob().Condition("Failed", "True", "BackoffLimitExceeded").Obj());
  EXPECT_TRUE(failed.finished);
  EXPECT_FALSE(failed.succeeded);
  EXPECT_EQ(failed.message, "BackoffLimitExceeded");
}

TEST(PredicatesTest, IsSuspendedFollowsKueuesStoppingAnnotation) {
  EXPECT_TRUE(IsSuspended(BaseJob().Obj()));
  EXPECT_FALSE(IsSuspended(BaseJob().Suspend(false).Obj()));
  EXPECT_FALSE(
      IsSuspended(BaseJob().SetAnnotation(kStoppingAnnotation, "true").Obj()));
  EXPECT_EQ(ActivePods(BaseJob().Active(3).Obj()), 3);
  EXPECT_FALSE(HasOriginalPodScheduling(BaseJob().Obj()));
  ASSERT_OK_AND_ASSIGN(json started,
                       StartJob(BaseJob().Obj(), BaseWorkload().Obj(), {}));
  EXPECT_TRUE(HasOriginalPodScheduling(started));
  ASSERT_OK_AND_ASSIGN(json restored, RestoreJob(SuspendJob(started)));
  EXPECT_FALSE(HasOriginalPodScheduling(restored));
  EXPECT_EQ(PodsCount(BaseJob().Completions(4).Obj()), 4);
  EXPECT_EQ(PodsCount(JobWrapper("j", "ns").Obj()), 1);
}

}  // namespace
}  // namespace kq::shim::jobs
