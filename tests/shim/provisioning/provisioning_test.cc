// Tests of shim/provisioning/provisioning: the pure half of Kueue's
// provisioning admission check controller. Cases of Kueue's
// pkg/controller/admissionchecks/provisioning/controller_test.go
// (TestMergePodSetsSkipsZeroCounts, TestReqIsNeeded,
// TestActiveOrLastPRForChecks, TestUpdateCheckMessage) and
// pkg/util/wait/backoff_test.go (TestBackoff_WaitTime, the backoff Kueue's
// UpdateAdmissionCheckRequeueState uses) keep Kueue's names and expected
// values; the name tests pin Kueue's limitObjectName hashing.

#include "shim/provisioning/provisioning.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/shim/provisioning/test_builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::shim::provisioning {
namespace {

using ::kq::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::kq::shim::provisioning::testing;  // NOLINT

// ---- Names
// -------------------------------------------------------------------

TEST(NamesTest, ShortNamesAreKept) {
  EXPECT_EQ(ProvisioningRequestName("wl", "check1", 1), "wl-check1-1");
  EXPECT_EQ(PodTemplateName("wl-check1-1", "ps1"), "ppt-wl-check1-1-ps1");
}

TEST(NamesTest, LongNamesAreCutAndHashed) {
  const std::string wl(240, 'w');
  // 249 characters: cut to 247, then "-" and SHA-1("<full>")[:5].
  const std::string name = ProvisioningRequestName(wl, "check1", 1);
  EXPECT_EQ(name, wl + "-check1-d9048");
  EXPECT_EQ(name.size(), 253u);
  const std::string request(250, 'r');
  EXPECT_EQ(PodTemplateName(request, "main"),
            "ppt-" + std::string(243, 'r') + "-56130");
}

TEST(NamesTest, AttemptFromName) {
  EXPECT_TRUE(MatchesWorkloadAndCheck("wl-check1-12", "wl", "check1"));
  EXPECT_EQ(GetAttempt("wl-check1-12", "wl", "check1"), 12);
  // Another check, or something after the number, is not this check's.
  EXPECT_FALSE(MatchesWorkloadAndCheck("wl-check1-1", "wl", "check"));
  EXPECT_FALSE(MatchesWorkloadAndCheck("wl-check1-1x", "wl", "check1"));
  EXPECT_FALSE(MatchesWorkloadAndCheck("wl-check1-", "wl", "check1"));
  EXPECT_FALSE(MatchesWorkloadAndCheck("wl-check2", "wl", "check1"));
  // Kueue's getAttempt falls back to 1.
  EXPECT_EQ(GetAttempt("wl-check2", "wl", "check1"), 1);
  EXPECT_EQ(GetAttempt("wl-check1-99999999999", "wl", "check1"), 1);
}

// ---- TestMergePodSetsSkipsZeroCounts
// ------------------------------------------

struct MergeCase {
  std::string name;
  std::vector<int> spec_counts;
  std::vector<int> admission_counts;
  std::string merge_policy;
  std::vector<std::string> want_names;
  std::vector<int> want_counts;
};

void PrintTo(const MergeCase& c, std::ostream* os) { *os << c.name; }

class MergePodSetsSkipsZeroCountsTest
    : public ::testing::TestWithParam<MergeCase> {};

TEST_P(MergePodSetsSkipsZeroCountsTest, Merge) {
  const MergeCase& tc = GetParam();
  std::vector<v1::PodSet> pod_sets;
  std::vector<v1::PodSetAssignment> assignments;
  for (size_t i = 0; i < tc.spec_counts.size(); ++i) {
    const std::string name = "ps" + std::to_string(i);
    pod_sets.push_back(
        PodSetWrapper(name, tc.spec_counts[i]).Request("cpu", "1").Obj());
    assignments.push_back(Assignment(name, {}, tc.admission_counts[i]));
  }
  v1::Workload wl = WorkloadWrapper("wl", kTestNamespace)
                        .PodSets(pod_sets)
                        .ReserveQuota("q", assignments)
                        .Obj();
  v1::ProvisioningRequestConfigSpec spec;
  spec.set_pod_set_merge_policy(tc.merge_policy);
  absl::StatusOr<std::vector<MergedPodSet>> got = MergePodSets(wl, spec);
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<std::string> names;
  std::vector<int> counts;
  for (const MergedPodSet& m : *got) {
    names.push_back(m.name);
    counts.push_back(m.count);
  }
  EXPECT_EQ(names, tc.want_names);
  EXPECT_EQ(counts, tc.want_counts);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MergePodSetsSkipsZeroCountsTest,
    ::testing::ValuesIn(std::vector<MergeCase>{
        {.name = "zero_spec_count",
         .spec_counts = {0, 2},
         .admission_counts = {0, 2},
         .want_names = {"ps1"},
         .want_counts = {2}},
        {.name = "zero_admission_count_override",
         .spec_counts = {1, 2},
         .admission_counts = {0, 2},
         .want_names = {"ps1"},
         .want_counts = {2}},
        {.name = "zero_count_does_not_block_compatible_merging",
         .spec_counts = {1, 2, 3},
         .admission_counts = {0, 2, 3},
         .merge_policy = kIdenticalPodTemplates,
         .want_names = {"ps1"},
         .want_counts = {5}},
    }),
    [](const auto& info) { return info.param.name; });

// ---- TestReqIsNeeded
// ------------------------------------------------------------ Skipped:
// "missing admitted count falls back to spec count": kq's
// PodSetAssignment.count is not optional (kqd always records the admitted
// count), so there is no missing count to fall back from.

struct ReqIsNeededCase {
  std::string name;
  v1::Workload workload;
  bool want = false;
  bool want_error = false;
};

void PrintTo(const ReqIsNeededCase& c, std::ostream* os) { *os << c.name; }

v1::Workload ReqWorkload(int spec_count, int admission_count,
                         bool include_assignment) {
  WorkloadWrapper w("wl", kTestNamespace);
  w.PodSets({PodSetWrapper("ps", spec_count).Request("cpu", "1").Obj()});
  std::vector<v1::PodSetAssignment> psas;
  if (include_assignment) psas.push_back(Assignment("ps", {}, admission_count));
  return w.ReserveQuota("q", psas).Obj();
}

class ReqIsNeededTest : public ::testing::TestWithParam<ReqIsNeededCase> {};

TEST_P(ReqIsNeededTest, Needed) {
  const ReqIsNeededCase& tc = GetParam();
  const v1::ProvisioningRequestConfig prc =
      ConfigWrapper("config").WithManagedResource("cpu").Obj();
  absl::StatusOr<bool> got = ReqIsNeeded(tc.workload, prc);
  if (tc.want_error) {
    EXPECT_THAT(got, StatusIs(absl::StatusCode::kFailedPrecondition,
                              HasSubstr("inconsistent podSet assignments")));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ReqIsNeededTest,
    ::testing::ValuesIn(std::vector<ReqIsNeededCase>{
        {.name = "positive_admitted_count_needs_request",
         .workload = ReqWorkload(1, 1, true),
         .want = true},
        {.name = "zero_admitted_count_does_not_need_request",
         .workload = ReqWorkload(1, 0, true)},
        {.name = "zero_spec_count_does_not_require_assignment",
         .workload = ReqWorkload(0, 0, false)},
        {.name = "missing_assignment_returns_inconsistency_error",
         .workload = ReqWorkload(1, 0, false),
         .want_error = true},
        {.name = "needed_podset_short_circuits_later_missing_assignment",
         .workload =
             WorkloadWrapper("wl", kTestNamespace)
                 .PodSets({PodSetWrapper("ps1", 1).Request("cpu", "1").Obj(),
                           PodSetWrapper("ps2", 1).Request("cpu", "1").Obj()})
                 .ReserveQuota("q", {Assignment("ps1", {}, 1)})
                 .Obj(),
         .want = true},
    }),
    [](const auto& info) { return info.param.name; });

// ---- TestActiveOrLastPRForChecks
// --------------------------------------------------

struct ActiveOrLastCase {
  std::string name;
  std::vector<json> requests;
  std::string want;  // "" for none
};

void PrintTo(const ActiveOrLastCase& c, std::ostream* os) { *os << c.name; }

json BaseActiveRequest(const std::string& name) {
  return Request(name, {{"ppt-wl-check-1-ps1", 4}}, "class1", {{"p1", "v1"}});
}

class ActiveOrLastPRForChecksTest
    : public ::testing::TestWithParam<ActiveOrLastCase> {};

TEST_P(ActiveOrLastPRForChecksTest, Result) {
  const ActiveOrLastCase& tc = GetParam();
  const v1::ProvisioningRequestConfig config = ConfigWrapper("config1")
                                                   .ProvisioningClass("class1")
                                                   .WithParameter("p1", "v1")
                                                   .Obj();
  const json* got = ActiveOrLastRequest(tc.requests, "wl", "check", config);
  if (tc.want.empty()) {
    EXPECT_EQ(got, nullptr);
  } else {
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(NameOf(*got), tc.want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ActiveOrLastPRForChecksTest,
    ::testing::ValuesIn(std::vector<ActiveOrLastCase>{
        {.name = "no_provisioning_requests"},
        {.name = "two_provisioning_requests_1_then_2",
         .requests = {WithCondition(BaseActiveRequest("wl-check-1"), "Failed",
                                    "True"),
                      BaseActiveRequest("wl-check-2")},
         .want = "wl-check-2"},
        {.name = "two_provisioning_requests_2_then_1",
         .requests = {BaseActiveRequest("wl-check-2"),
                      WithCondition(BaseActiveRequest("wl-check-1"), "Failed",
                                    "True")},
         .want = "wl-check-2"},
    }),
    [](const auto& info) { return info.param.name; });

// kq's own: a retry record is history, never the active request; one out of
// sync with the config is not either.
TEST(ActiveOrLastRequestTest, SkipsRetryRecordsAndRequestsOutOfSync) {
  const v1::ProvisioningRequestConfig config = ConfigWrapper("config1")
                                                   .ProvisioningClass("class1")
                                                   .WithParameter("p1", "v1")
                                                   .Obj();
  json record =
      WithCondition(BaseActiveRequest("wl-check-3"), "Failed", "True");
  record["metadata"]["annotations"][kRetryReportedAnnotation] = "true";
  json stale = BaseActiveRequest("wl-check-4");
  stale["spec"]["parameters"]["p1"] = "v0";
  std::vector<json> requests = {BaseActiveRequest("wl-check-2"), record, stale};
  const json* got = ActiveOrLastRequest(requests, "wl", "check", config);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(NameOf(*got), "wl-check-2");
}

// ---- TestUpdateCheckMessage
// ------------------------------------------------------

struct UpdateCheckMessageCase {
  std::string name;
  std::string message;
  std::string new_message;
  std::string want_message;
  bool want_changed = false;
};

void PrintTo(const UpdateCheckMessageCase& c, std::ostream* os) {
  *os << c.name;
}

class UpdateCheckMessageTest
    : public ::testing::TestWithParam<UpdateCheckMessageCase> {};

TEST_P(UpdateCheckMessageTest, Update) {
  const UpdateCheckMessageCase& tc = GetParam();
  v1::AdmissionCheckState state = CheckState("check1", "", tc.message);
  EXPECT_EQ(UpdateCheckMessage(state, tc.new_message), tc.want_changed);
  EXPECT_EQ(state.message(), tc.want_message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, UpdateCheckMessageTest,
    ::testing::ValuesIn(std::vector<UpdateCheckMessageCase>{
        {.name = "sets_a_message_on_a_check_that_has_none",
         .new_message = "provisioned",
         .want_message = "provisioned",
         .want_changed = true},
        {.name = "replaces_an_existing_message",
         .message = "waiting for capacity",
         .new_message = "provisioned",
         .want_message = "provisioned",
         .want_changed = true},
        {.name = "clears_an_existing_message_when_the_new_one_is_empty",
         .message = "Error creating ProvisioningRequest \"wl-check1-1\": "
                    "already exists",
         .new_message = "",
         .want_message = "",
         .want_changed = true},
        {.name = "reports_no_change_when_the_message_is_unchanged",
         .message = "provisioned",
         .new_message = "provisioned",
         .want_message = "provisioned",
         .want_changed = false},
        {.name = "reports_no_change_when_both_messages_are_empty",
         .want_changed = false},
    }),
    [](const auto& info) { return info.param.name; });

// ---- Backoff (pkg/util/wait TestBackoff_WaitTime, in seconds)
// ------------------ RequeueAfterSeconds(retry_count, ...) is
// WaitTime(retry_count + 1). Skipped: "iteration zero returns zero" and
// "negative iteration returns zero" (Kueue asks for iteration retryCount+1 >= 1
// only), "very large iteration, no cap" (Kueue's int32 conversion of MaxInt64/3
// ns overflows; kq caps at INT32_MAX seconds instead).

struct BackoffCase {
  std::string name;
  int32_t base;
  int32_t max;
  int32_t iteration;
  int32_t want;
};

void PrintTo(const BackoffCase& c, std::ostream* os) { *os << c.name; }

class BackoffWaitTimeTest : public ::testing::TestWithParam<BackoffCase> {};

TEST_P(BackoffWaitTimeTest, WaitTime) {
  const BackoffCase& tc = GetParam();
  EXPECT_EQ(RequeueAfterSeconds(tc.iteration - 1, tc.base, tc.max), tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BackoffWaitTimeTest,
    ::testing::ValuesIn(std::vector<BackoffCase>{
        // steps: 1, 2, 4, 8
        {"simple_exponential_factor_2", 1, 1000, 4, 8},
        // steps: 1, 2, 4, 8 -> cap 5
        {"caps_at_limit", 1, 5, 4, 5},
        {"very_large_iteration_still_returns_cap", 1, 1000, 1000, 1000},
        // TestBackoff_WaitTime_Consecutive "two subsequent calls".
        {"two_subsequent_calls_1", 1, 1000, 1, 1},
        {"two_subsequent_calls_2", 1, 1000, 2, 2},
        // Kueue's provisioning defaults: 60 s, 120 s, 240 s, ... 1800 s.
        {"kueue_defaults_first_retry", 60, 1800, 1, 60},
        {"kueue_defaults_third_retry", 60, 1800, 3, 240},
        {"kueue_defaults_capped", 60, 1800, 7, 1800},
        // wait.Backoff returns the base itself first, even above the cap.
        {"base_above_cap_first_step", 100, 30, 1, 100},
        {"base_above_cap_second_step", 100, 30, 2, 30},
        // The sample config's backoffBaseSeconds: 0 retries at once.
        {"zero_base", 0, 1800, 3, 0},
    }),
    [](const auto& info) { return info.param.name; });

TEST(RetryStrategyTest, KueueDefaultsForAbsentFields) {
  RetryStrategy none = RetryStrategyOf(ConfigWrapper("c").Obj());
  EXPECT_EQ(none.backoff_limit_count, 3);
  EXPECT_EQ(none.backoff_base_seconds, 60);
  EXPECT_EQ(none.backoff_max_seconds, 1800);
  RetryStrategy limit = RetryStrategyOf(ConfigWrapper("c").RetryLimit(0).Obj());
  EXPECT_EQ(limit.backoff_limit_count, 0);
  EXPECT_EQ(limit.backoff_base_seconds, 60);
}

// ---- Objects
// --------------------------------------------------------------------

TEST(ConfigNameOfTest, ValidatesTheParametersReference) {
  v1::AdmissionCheck ac = MakeAdmissionCheck("check1", "config1");
  EXPECT_EQ(*ConfigNameOf(ac), "config1");
  ac.mutable_spec()->mutable_parameters()->set_kind("MultiKueueConfig");
  EXPECT_THAT(ConfigNameOf(ac),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("wrong kind \"MultiKueueConfig\"")));
  ac.mutable_spec()->clear_parameters();
  EXPECT_THAT(ConfigNameOf(ac),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("missing parameters reference")));
}

TEST(BuildProvisioningRequestTest, ParametersFromConfigAndWorkloadAnnotations) {
  v1::Workload wl = WorkloadWrapper("wl", kTestNamespace)
                        .Annotations({{"provreq.kueue.x-k8s.io/p1", "wl"},
                                      {"provreq.kueue.x-k8s.io/p2", "v2"},
                                      {"other/p3", "v3"}})
                        .Obj();
  json pr = BuildProvisioningRequest(wl, "wl-check1-1",
                                     ConfigWrapper("c")
                                         .ProvisioningClass("class1")
                                         .WithParameter("p1", "v1")
                                         .Obj(),
                                     {{"ppt-wl-check1-1-main", 2}});
  EXPECT_EQ(pr["apiVersion"], "autoscaling.x-k8s.io/v1");
  EXPECT_EQ(pr["kind"], "ProvisioningRequest");
  EXPECT_EQ(pr["metadata"]["labels"], json({{kManagedLabel, "true"}}));
  EXPECT_EQ(pr["metadata"]["annotations"], OwnerAnnotationsOf("wl"));
  // The workload's annotation wins over the config (passProvReqParams runs
  // last).
  EXPECT_EQ(pr["spec"],
            json({{"provisioningClassName", "class1"},
                  {"parameters", {{"p1", "wl"}, {"p2", "v2"}}},
                  {"podSets",
                   {{{"podTemplateRef", {{"name", "ppt-wl-check1-1-main"}}},
                     {"count", 2}}}}}));
  EXPECT_TRUE(ProvReqSyncedWithConfig(
      pr, ConfigWrapper("c").ProvisioningClass("class1").Obj()));
  EXPECT_FALSE(ProvReqSyncedWithConfig(
      pr, ConfigWrapper("c").ProvisioningClass("class2").Obj()));
  EXPECT_FALSE(ProvReqSyncedWithConfig(pr, ConfigWrapper("c")
                                               .ProvisioningClass("class1")
                                               .WithParameter("p9", "")
                                               .Obj()));
}

TEST(PodSetTemplateTest, PodSetWithoutTemplateGetsOneFromItsRequests) {
  v1::PodSet ps;
  ps.set_name("main");
  ps.set_count(2);
  (*ps.mutable_requests())["nvidia.com/gpu"] = "1";
  (*ps.mutable_node_selector())["zone"] = "a";
  json tmpl = PodSetTemplate(ps);
  EXPECT_EQ(tmpl["spec"]["containers"][0]["resources"]["requests"],
            json({{"nvidia.com/gpu", "1"}}));
  EXPECT_EQ(tmpl["spec"]["nodeSelector"], json({{"zone", "a"}}));
  EXPECT_TRUE(PodUses(tmpl["spec"], {"nvidia.com/gpu"}));
  EXPECT_FALSE(PodUses(tmpl["spec"], {"cpu"}));
}

}  // namespace
}  // namespace kq::shim::provisioning
