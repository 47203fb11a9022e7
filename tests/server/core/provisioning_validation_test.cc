// What kq accepts of Kueue's provisioning admission check objects:
//
// - ProvisioningRequestConfig: Kueue has no webhook for it, only the CRD's
//   OpenAPI rules (apis/kueue/v1beta2/provisioningrequestconfig_types.go
//   markers); one case per marker.
// - podSetUpdates of a workload's admission check: the cases of Kueue's
//   pkg/webhooks/workload_webhook_test.go TestValidateWorkload that carry
//   podSetUpdates (names as Kueue's), plus one per CRD rule of PodSetUpdate.
// - Conflicts: Kueue's pkg/podset/podset_test.go TestMergeRestore cases
//   about conflicts and tolerations (Kueue applies podset.Merge when it
//   starts the job; kq refuses the update instead), plus the other sources
//   Kueue's getPodSetsInfoFromStatus merges first (the flavors' nodeLabels,
//   the pod set label, other checks' updates).
//
// Not ported from TestMergeRestore: the workload-slice annotation cases
// (elastic jobs) and the scheduling gate cases (PodSetUpdate has no
// scheduling gates); "empty info" is "empty podSetUpdates" here.

#include <cctype>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/core/objects.h"
#include "server/core/validation.h"
#include "tests/testing/builders.h"

namespace kq {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;

// Kubernetes' messages, as the validators word them.
constexpr char kNamePartError[] =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyName',  or "
    "'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
constexpr char kLabelValueError[] =
    "a valid label must be an empty string or consist of alphanumeric "
    "characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

// ---------------------------------------------------------------------------
// ProvisioningRequestConfig.

// provisioning-setup.yaml's config, which must pass.
ProvisioningRequestConfig ValidConfig() {
  ProvisioningRequestConfig prc;
  prc.meta.name = "prov-test-config";
  prc.provisioning_class_name = "check-capacity.autoscaling.x-k8s.io";
  prc.managed_resources = {"nvidia.com/gpu"};
  prc.retry_strategy = {.backoff_limit_count = 2,
                        .backoff_base_seconds = 0,
                        .backoff_max_seconds = 1800};
  return prc;
}

struct ConfigCase {
  std::string name;
  ProvisioningRequestConfig config;
  std::string want;  // exact message; empty: valid
};

void PrintTo(const ConfigCase& c, std::ostream* os) { *os << c.name; }

class ProvisioningRequestConfigValidationTest
    : public ::testing::TestWithParam<ConfigCase> {};

TEST_P(ProvisioningRequestConfigValidationTest, FollowsTheCrd) {
  const ConfigCase& tc = GetParam();
  absl::Status status = ValidateConfigObject(ConfigObject(tc.config));
  if (tc.want.empty()) {
    EXPECT_TRUE(status.ok()) << status;
  } else {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(status.message(), tc.want);
  }
}

ProvisioningRequestConfig With(
    std::function<void(ProvisioningRequestConfig&)> change) {
  ProvisioningRequestConfig prc = ValidConfig();
  change(prc);
  return prc;
}

std::vector<ConfigCase> ConfigCases() {
  std::map<std::string, std::string> many_parameters;
  for (int i = 0; i < 101; ++i) many_parameters[absl::StrCat("p", i)] = "v";
  std::vector<std::string> many_resources;
  for (int i = 0; i < 101; ++i) {
    many_resources.push_back(absl::StrCat("example.com/r", i));
  }
  std::vector<ProvisioningRequestPodSetUpdatesNodeSelector> nine_selectors;
  for (int i = 0; i < 9; ++i) {
    nine_selectors.push_back({absl::StrCat("k", i), "detail"});
  }
  const std::string class_pattern =
      "spec.provisioningClassName in body should match "
      "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'";
  const std::string key_pattern =
      "spec.podSetUpdates.nodeSelector[0].key in body should match "
      "'^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/"
      ")?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$'";
  return {
      {"provisioning_setup_example", ValidConfig(), ""},
      {"every_field_at_its_limit", With([&](ProvisioningRequestConfig& c) {
         c.provisioning_class_name = std::string(253, 'a');
         c.parameters = many_parameters;
         c.parameters.erase("p0");
         c.parameters["p1"] = std::string(255, 'x');
         c.managed_resources = many_resources;
         c.managed_resources.pop_back();
         c.pod_set_updates_node_selector = {
             {"cloud.google.com/gke-nodepool", "NodePoolName"},
             {absl::StrCat(std::string(253, 'a'), "/", std::string(63, 'B')),
              std::string(32768, 'd')},
             {"Upper_case.name", "d"}};
         c.pod_set_merge_policy = "IdenticalPodTemplates";
       }),
       ""},
      {"identical_workload_scheduling_requirements",
       With([](ProvisioningRequestConfig& c) {
         c.pod_set_merge_policy = "IdenticalWorkloadSchedulingRequirements";
       }),
       ""},
      // Kueue's docs: backoffLimitCount 0 switches retries off; the CRD
      // sets no minimum on any retry field.
      {"retries_off", With([](ProvisioningRequestConfig& c) {
         c.retry_strategy.backoff_limit_count = 0;
       }),
       ""},
      {"namespaced", With([](ProvisioningRequestConfig& c) {
         c.meta.namespace_name = "default";
       }),
       "metadata.namespace: must be empty for a cluster-scoped object"},
      {"provisioning_class_name_required",
       With([](ProvisioningRequestConfig& c) {
         c.provisioning_class_name.clear();
       }),
       "spec.provisioningClassName: Required value"},
      {"provisioning_class_name_too_long",
       With([](ProvisioningRequestConfig& c) {
         c.provisioning_class_name = std::string(254, 'a');
       }),
       "spec.provisioningClassName: Too long: may not be more than 253 "
       "bytes"},
      {"provisioning_class_name_pattern",
       With([](ProvisioningRequestConfig& c) {
         c.provisioning_class_name = "Check-Capacity";
       }),
       "spec.provisioningClassName: Invalid value: \"Check-Capacity\": " +
           class_pattern},
      {"provisioning_class_name_trailing_dot",
       With([](ProvisioningRequestConfig& c) {
         c.provisioning_class_name = "check-capacity.";
       }),
       "spec.provisioningClassName: Invalid value: \"check-capacity.\": " +
           class_pattern},
      {"too_many_parameters", With([&](ProvisioningRequestConfig& c) {
         c.parameters = many_parameters;
       }),
       "spec.parameters: Too many: 101: must have at most 100 items"},
      {"parameter_too_long", With([](ProvisioningRequestConfig& c) {
         c.parameters["ValidUntilSeconds"] = std::string(256, '1');
       }),
       "spec.parameters[ValidUntilSeconds]: Too long: may not be more than "
       "255 bytes"},
      {"too_many_managed_resources", With([&](ProvisioningRequestConfig& c) {
         c.managed_resources = many_resources;
       }),
       "spec.managedResources: Too many: 101: must have at most 100 items"},
      {"managed_resources_is_a_set", With([](ProvisioningRequestConfig& c) {
         c.managed_resources = {"nvidia.com/gpu", "cpu", "nvidia.com/gpu"};
       }),
       "spec.managedResources[2]: Duplicate value: \"nvidia.com/gpu\""},
      {"too_many_node_selector_updates",
       With([&](ProvisioningRequestConfig& c) {
         c.pod_set_updates_node_selector = nine_selectors;
       }),
       "spec.podSetUpdates.nodeSelector: Too many: 9: must have at most 8 "
       "items"},
      {"node_selector_key_required", With([](ProvisioningRequestConfig& c) {
         c.pod_set_updates_node_selector = {{"", "detail"}};
       }),
       "spec.podSetUpdates.nodeSelector[0].key: Required value"},
      {"node_selector_key_too_long", With([](ProvisioningRequestConfig& c) {
         c.pod_set_updates_node_selector = {
             {absl::StrCat(std::string(253, 'a'), "/", std::string(64, 'b')),
              "detail"}};
       }),
       "spec.podSetUpdates.nodeSelector[0].key: Too long: may not be more "
       "than 317 bytes"},
      {"node_selector_key_pattern", With([](ProvisioningRequestConfig& c) {
         c.pod_set_updates_node_selector = {{"Example.com/pool", "detail"}};
       }),
       "spec.podSetUpdates.nodeSelector[0].key: Invalid value: "
       "\"Example.com/pool\": " +
           key_pattern},
      {"node_selector_key_two_slashes", With([](ProvisioningRequestConfig& c) {
         c.pod_set_updates_node_selector = {{"a/b/c", "detail"}};
       }),
       "spec.podSetUpdates.nodeSelector[0].key: Invalid value: \"a/b/c\": " +
           key_pattern},
      {"node_selector_value_required", With([](ProvisioningRequestConfig& c) {
         c.pod_set_updates_node_selector = {{"pool", ""}};
       }),
       "spec.podSetUpdates.nodeSelector[0].valueFromProvisioningClassDetail: "
       "Required value"},
      {"node_selector_value_too_long", With([](ProvisioningRequestConfig& c) {
         c.pod_set_updates_node_selector = {{"pool", std::string(32769, 'd')}};
       }),
       "spec.podSetUpdates.nodeSelector[0].valueFromProvisioningClassDetail: "
       "Too long: may not be more than 32768 bytes"},
      {"node_selector_is_a_map_by_key", With([](ProvisioningRequestConfig& c) {
         c.pod_set_updates_node_selector = {{"pool", "a"}, {"pool", "b"}};
       }),
       "spec.podSetUpdates.nodeSelector[1]: Duplicate value: "
       "{\"key\":\"pool\"}"},
      {"pod_set_merge_policy_enum", With([](ProvisioningRequestConfig& c) {
         c.pod_set_merge_policy = "IdenticalPods";
       }),
       "spec.podSetMergePolicy: Unsupported value: \"IdenticalPods\": "
       "supported values: \"IdenticalPodTemplates\", "
       "\"IdenticalWorkloadSchedulingRequirements\""},
  };
}

INSTANTIATE_TEST_SUITE_P(Markers, ProvisioningRequestConfigValidationTest,
                         ::testing::ValuesIn(ConfigCases()),
                         [](const auto& info) { return info.param.name; });

TEST(ProvisioningRequestConfigTest, KindNamesAndScope) {
  ObjectKind kind;
  for (const char* name :
       {"ProvisioningRequestConfig", "provisioningrequestconfigs", "prc"}) {
    ASSERT_TRUE(ParseKind(name, &kind)) << name;
    EXPECT_EQ(kind, ObjectKind::kProvisioningRequestConfig);
  }
  EXPECT_STREQ(KindName(ObjectKind::kProvisioningRequestConfig),
               "ProvisioningRequestConfig");
  EXPECT_FALSE(IsNamespaced(ObjectKind::kProvisioningRequestConfig));
  const ConfigObject object = ValidConfig();
  EXPECT_EQ(KindOf(object), ObjectKind::kProvisioningRequestConfig);
  EXPECT_EQ(Describe(KeyOf(object)),
            "ProvisioningRequestConfig \"prov-test-config\"");
}

// ---------------------------------------------------------------------------
// podSetUpdates: Kueue's workload webhook.

struct UpdatesCase {
  std::string name;  // Kueue's, where it has one
  Workload workload;
  std::vector<PodSetUpdate> updates;
  std::string want;  // exact message; empty: valid
};

void PrintTo(const UpdatesCase& c, std::ostream* os) { *os << c.name; }

class PodSetUpdatesValidationTest
    : public ::testing::TestWithParam<UpdatesCase> {};

TEST_P(PodSetUpdatesValidationTest, AsKueuesWebhook) {
  const UpdatesCase& tc = GetParam();
  absl::Status status = ValidatePodSetUpdates(tc.workload, 0, tc.updates);
  if (tc.want.empty()) {
    EXPECT_TRUE(status.ok()) << status;
  } else {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(status.message(), tc.want);
  }
}

// Kueue's MakeWorkload default: one pod set "main".
Workload MainOnly() { return WorkloadBuilder("wl").PodSet("main", 1).Build(); }

Workload FirstAndSecond() {
  return WorkloadBuilder("wl").PodSet("first", 1).PodSet("second", 1).Build();
}

std::vector<UpdatesCase> UpdatesCases() {
  std::vector<PodSetUpdate> nineteen(19, PodSetUpdate{.name = "main"});
  const Toleration tol{
      .key = "t", .op = "Equal", .value = "v", .effect = "NoSchedule"};
  return {
      {"empty podSetUpdates", MainOnly(), {}, ""},
      {"should accept podSetUpdates for only a subset of podSets",
       FirstAndSecond(),
       {{.name = "first"}},
       ""},
      {"mismatched names in podSetUpdates with names in podSets",
       FirstAndSecond(),
       {{.name = "first"}, {.name = "third"}},
       "status.admissionChecks[0].podSetUpdates[1].name: Unsupported value: "
       "\"third\": supported values: \"first\", \"second\""},
      {"matched names in podSetUpdates with names in podSets",
       FirstAndSecond(),
       {{.name = "first",
         .labels = {{"l1", "first"}},
         .annotations = {{"foo", "bar"}},
         .node_selector = {{"type", "first"}},
         .tolerations = {{.key = "t1",
                          .op = "Equal",
                          .value = "t1v",
                          .effect = "NoExecute",
                          .toleration_seconds = 5}}},
        {.name = "second",
         .labels = {{"l2", "second"}},
         .annotations = {{"foo", "baz"}},
         .node_selector = {{"type", "second"}},
         .tolerations = {{.key = "t2",
                          .op = "Equal",
                          .value = "t2v",
                          .effect = "NoExecute",
                          .toleration_seconds = 10}}}},
       ""},
      {"invalid label name of podSetUpdate",
       MainOnly(),
       {{.name = "main", .labels = {{"@abc", "foo"}}}},
       absl::StrCat("status.admissionChecks[0].podSetUpdates[0].labels: "
                    "Invalid value: \"@abc\": ",
                    kNamePartError)},
      {"invalid node selector name of podSetUpdate",
       MainOnly(),
       {{.name = "main", .node_selector = {{"@abc", "foo"}}}},
       absl::StrCat("status.admissionChecks[0].podSetUpdates[0].nodeSelector: "
                    "Invalid value: \"@abc\": ",
                    kNamePartError)},
      {"invalid label value of podSetUpdate",
       MainOnly(),
       {{.name = "main", .labels = {{"foo", "@abc"}}}},
       absl::StrCat("status.admissionChecks[0].podSetUpdates[0].labels: "
                    "Invalid value: \"@abc\": ",
                    kLabelValueError)},
      // Beyond Kueue's table: the rest of validatePodSetUpdates.
      {"invalid annotation key of podSetUpdate",
       MainOnly(),
       {{.name = "main", .annotations = {{"a/b/c", "x"}}}},
       "status.admissionChecks[0].podSetUpdates[0].annotations: Invalid "
       "value: \"a/b/c\": a qualified name must consist of alphanumeric "
       "characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
       "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
       "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
       "'example.com/MyName')"},
      {"upper-case annotation keys are fine",
       MainOnly(),
       {{.name = "main", .annotations = {{"Example.COM/Note", "any value"}}}},
       ""},
      {"annotations over 256 KiB",
       MainOnly(),
       {{.name = "main", .annotations = {{"a", std::string(256 * 1024, 'x')}}}},
       "status.admissionChecks[0].podSetUpdates[0].annotations: Too long: "
       "may not be more than 262144 bytes"},
      {"invalid toleration key of podSetUpdate",
       MainOnly(),
       {{.name = "main",
         .tolerations = {tol, {.key = "bad key", .op = "Exists"}}}},
       absl::StrCat("status.admissionChecks[0].podSetUpdates[0].tolerations[1]"
                    ".key: Invalid value: \"bad key\": ",
                    kNamePartError)},
      {"label key prefix must be a subdomain",
       MainOnly(),
       {{.name = "main", .node_selector = {{"Example.com/zone", "a"}}}},
       "status.admissionChecks[0].podSetUpdates[0].nodeSelector: Invalid "
       "value: \"Example.com/zone\": prefix part a lowercase RFC 1123 "
       "subdomain must consist of lower case alphanumeric characters, '-' "
       "or '.', and must start and end with an alphanumeric character (e.g. "
       "'example.com', regex used for validation is "
       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
      {"label value too long",
       MainOnly(),
       {{.name = "main", .labels = {{"a", std::string(64, 'v')}}}},
       absl::StrCat("status.admissionChecks[0].podSetUpdates[0].labels: "
                    "Invalid value: \"",
                    std::string(64, 'v'), "\": must be no more than 63 bytes")},
      // The CRD's schema for PodSetUpdate.
      {"at most 18 podSetUpdates", MainOnly(), nineteen,
       "status.admissionChecks[0].podSetUpdates: Too many: 19: must have at "
       "most 18 items"},
      {"at most 8 tolerations",
       MainOnly(),
       {{.name = "main", .tolerations = std::vector<Toleration>(9, tol)}},
       "status.admissionChecks[0].podSetUpdates[0].tolerations: Too many: 9: "
       "must have at most 8 items"},
      {"empty toleration key needs Exists",
       MainOnly(),
       {{.name = "main", .tolerations = {{.op = "Equal"}}}},
       "status.admissionChecks[0].podSetUpdates[0].tolerations: Invalid "
       "value: \"array\": operator must be Exists when 'key' is empty, which "
       "means 'match all values and all keys'"},
      {"empty toleration key with Exists",
       MainOnly(),
       {{.name = "main", .tolerations = {{.op = "Exists"}}}},
       ""},
      {"tolerationSeconds needs NoExecute",
       MainOnly(),
       {{.name = "main",
         .tolerations =
             {{.key = "t", .effect = "NoSchedule", .toleration_seconds = 5}}}},
       "status.admissionChecks[0].podSetUpdates[0].tolerations: Invalid "
       "value: \"array\": effect must be 'NoExecute' when 'tolerationSeconds' "
       "is set"},
      {"toleration operator",
       MainOnly(),
       {{.name = "main", .tolerations = {{.key = "t", .op = "In"}}}},
       "status.admissionChecks[0].podSetUpdates[0].tolerations: Invalid "
       "value: \"array\": supported toleration values: 'Equal'(default), "
       "'Exists'"},
      {"Exists toleration has no value",
       MainOnly(),
       {{.name = "main",
         .tolerations = {{.key = "t", .op = "Exists", .value = "v"}}}},
       "status.admissionChecks[0].podSetUpdates[0].tolerations: Invalid "
       "value: \"array\": a value must be empty when 'operator' is 'Exists'"},
      {"toleration effect",
       MainOnly(),
       {{.name = "main", .tolerations = {{.key = "t", .effect = "Never"}}}},
       "status.admissionChecks[0].podSetUpdates[0].tolerations: Invalid "
       "value: \"array\": supported taint effect values: 'NoSchedule', "
       "'PreferNoSchedule', 'NoExecute'"},
  };
}

INSTANTIATE_TEST_SUITE_P(Kueue, PodSetUpdatesValidationTest,
                         ::testing::ValuesIn(UpdatesCases()),
                         [](const auto& info) {
                           std::string name;
                           for (char c : info.param.name) {
                             name += std::isalnum(static_cast<unsigned char>(c))
                                         ? c
                                         : '_';
                           }
                           return name;
                         });

TEST(PodSetUpdatesValidationTest, PathNamesTheCheck) {
  Workload wl = MainOnly();
  wl.admission_checks = {{.name = "a"}, {.name = "b"}};
  absl::Status status = ValidatePodSetUpdates(wl, 1, {{.name = "other"}});
  EXPECT_EQ(status.message(),
            "status.admissionChecks[1].podSetUpdates[0].name: Unsupported "
            "value: \"other\": supported values: \"main\"");
}

// ---------------------------------------------------------------------------
// Conflicts: Kueue's podset.Merge.

// Kueue's basePodSet in TestMergeRestore: node selector ns0, label l0,
// annotation a0 and toleration t0.
Workload BasePodSet() {
  return WorkloadBuilder("wl")
      .PodSet("main", 1)
      .NodeSelector("ns0", "ns0v")
      .Toleration(
          {.key = "t0", .op = "Equal", .value = "t0v", .effect = "NoSchedule"})
      .Template(R"({"metadata":{"annotations":{"a0":"a0v"},)"
                R"("labels":{"l0":"l0v"}},)"
                R"("spec":{"containers":[{"name":"c"}],)"
                R"("nodeSelector":{"ns0":"ns0v"}}})")
      .Build();
}

struct ConflictCase {
  std::string name;  // Kueue's, where it has one
  Workload workload;
  std::vector<PodSetUpdate> updates;
  std::string want;  // exact message; empty: no conflict
  size_t check_index = 0;
};

void PrintTo(const ConflictCase& c, std::ostream* os) { *os << c.name; }

class PodSetUpdateConflictTest : public ::testing::TestWithParam<ConflictCase> {
};

const std::map<std::string, ResourceFlavor>& Flavors() {
  static const auto* flavors = new std::map<std::string, ResourceFlavor>{
      {"gpu-a100",
       ResourceFlavorBuilder("gpu-a100")
           .NodeLabel("cloud.google.com/gke-accelerator", "nvidia-a100")
           .Build()},
      {"default-cpu", ResourceFlavorBuilder("default-cpu").Build()},
  };
  return *flavors;
}

TEST_P(PodSetUpdateConflictTest, AsKueuesMerge) {
  const ConflictCase& tc = GetParam();
  absl::Status status = CheckPodSetUpdateConflicts(tc.workload, tc.check_index,
                                                   tc.updates, Flavors());
  if (tc.want.empty()) {
    EXPECT_TRUE(status.ok()) << status;
  } else {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(status.message(), tc.want);
  }
}

Workload WithChecks(Workload wl, std::vector<AdmissionCheckState> checks) {
  wl.admission_checks = std::move(checks);
  return wl;
}

Workload OnGpu(Workload wl) {
  wl.admission = AdmissionBuilder("cq")
                     .PodSet("main", 1)
                     .Assign("nvidia.com/gpu", "gpu-a100", "1")
                     .Assign("cpu", "default-cpu", "1")
                     .Build();
  wl.conditions.push_back({.type = kConditionQuotaReserved, .status = "True"});
  return wl;
}

std::vector<ConflictCase> ConflictCases() {
  const Toleration t0{
      .key = "t0", .op = "Equal", .value = "t0v", .effect = "NoSchedule"};
  return {
      {"empty info", BasePodSet(), {}, ""},
      {"no conflicts",
       BasePodSet(),
       {{.name = "main",
         .labels = {{"l1", "l1v"}},
         .annotations = {{"a1", "a1v"}},
         .node_selector = {{"ns1", "ns1v"}},
         .tolerations = {{.key = "t1",
                          .op = "Equal",
                          .value = "t1v",
                          .effect = "NoSchedule"}}}},
       ""},
      {"don't duplicate tolerations",
       BasePodSet(),
       {{.name = "main",
         .labels = {{"l1", "l1v"}},
         .annotations = {{"a1", "a1v"}},
         .node_selector = {{"ns1", "ns1v"}},
         .tolerations = {t0}}},
       ""},
      {"same values are no conflict",
       BasePodSet(),
       {{.name = "main",
         .labels = {{"l0", "l0v"}},
         .annotations = {{"a0", "a0v"}},
         .node_selector = {{"ns0", "ns0v"}}}},
       ""},
      {"conflicting label",
       BasePodSet(),
       {{.name = "main", .labels = {{"l0", "l0v1"}}}},
       "status.admissionChecks[0].podSetUpdates[0].labels[l0]: Invalid value: "
       "\"l0v1\": conflicts with \"l0v\" in the pod set's template"},
      {"conflicting annotation",
       BasePodSet(),
       {{.name = "main", .annotations = {{"a0", "a0v1"}}}},
       "status.admissionChecks[0].podSetUpdates[0].annotations[a0]: Invalid "
       "value: \"a0v1\": conflicts with \"a0v\" in the pod set's template"},
      {"conflicting node selector",
       BasePodSet(),
       {{.name = "main", .node_selector = {{"ns0", "ns0v1"}}}},
       "status.admissionChecks[0].podSetUpdates[0].nodeSelector[ns0]: Invalid "
       "value: \"ns0v1\": conflicts with \"ns0v\" in the pod set's template"},
      // What getPodSetsInfoFromStatus merges before the template.
      {"conflicting with the assigned flavor's nodeLabels",
       OnGpu(BasePodSet()),
       {{.name = "main",
         .node_selector = {{"cloud.google.com/gke-accelerator",
                            "nvidia-h100"}}}},
       "status.admissionChecks[0].podSetUpdates[0].nodeSelector[cloud.google."
       "com/gke-accelerator]: Invalid value: \"nvidia-h100\": conflicts with "
       "\"nvidia-a100\" in the nodeLabels of ResourceFlavor \"gpu-a100\""},
      {"agreeing with the assigned flavor's nodeLabels",
       OnGpu(BasePodSet()),
       {{.name = "main",
         .node_selector = {{"cloud.google.com/gke-accelerator",
                            "nvidia-a100"}}}},
       ""},
      {"flavors count only while quota is held",
       BasePodSet(),
       {{.name = "main",
         .node_selector = {{"cloud.google.com/gke-accelerator",
                            "nvidia-h100"}}}},
       ""},
      {"conflicting with the pod set label",
       BasePodSet(),
       {{.name = "main", .labels = {{"kueue.x-k8s.io/podset", "other"}}}},
       "status.admissionChecks[0].podSetUpdates[0].labels[kueue.x-k8s.io/"
       "podset]: Invalid value: \"other\": conflicts with \"main\" in "
       "Kueue's pod set label"},
      {"conflicting with another check",
       WithChecks(BasePodSet(),
                  {{.name = "prov",
                    .state = "Ready",
                    .pod_set_updates = {{.name = "main",
                                         .node_selector = {{"pool", "a"}}}}},
                   {.name = "other"}}),
       {{.name = "main", .node_selector = {{"pool", "b"}}}},
       "status.admissionChecks[1].podSetUpdates[0].nodeSelector[pool]: "
       "Invalid value: \"b\": conflicts with \"a\" in the podSetUpdates of "
       "admission check \"prov\"",
       1},
      {"the check's own previous updates do not count",
       WithChecks(BasePodSet(),
                  {{.name = "prov",
                    .pod_set_updates = {{.name = "main",
                                         .node_selector = {{"pool", "a"}}}}}}),
       {{.name = "main", .node_selector = {{"pool", "b"}}}},
       ""},
      {"only a check's first update of a pod set is merged",
       BasePodSet(),
       {{.name = "main"}, {.name = "main", .labels = {{"l0", "other"}}}},
       ""},
  };
}

INSTANTIATE_TEST_SUITE_P(Kueue, PodSetUpdateConflictTest,
                         ::testing::ValuesIn(ConflictCases()),
                         [](const auto& info) {
                           std::string name;
                           for (char c : info.param.name) {
                             name += std::isalnum(static_cast<unsigned char>(c))
                                         ? c
                                         : '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace kq
