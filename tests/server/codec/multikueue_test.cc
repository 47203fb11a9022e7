// Kueue's MultiKueue objects and the Configuration's multiKueue section
// from their YAML to kq's core types: the manifest library, then the codec
// and core validation, as `kq apply` and `kqd --config` go. Ported:
//   test/integration/singlecluster/webhook/core/multikueue_config_test.go
//     "Validate MultiKueueConfig on creation" (every entry);
//   test/integration/singlecluster/webhook/core/multikueue_cluster_test.go
//     "Defaulting on creation", "Validate MultiKueueCluster on creation";
//   pkg/config/validation_test.go TestValidate, its multiKueue cases.
// Kueue's entries that kq answers otherwise, on purpose:
//   - "Should allow ClusterProfileRef": refused, naming the alpha gate
//     MultiKueueClusterProfile, which kq does not enable;
//   - "Should allow KubeConfig with Path location type" passes; kq also
//     refuses a relative Path (a kq contexts file on kqd's machine).
// Skipped: "Validate status conditions on update" (at most 16 conditions):
// a MultiKueueCluster's status is kqd's to compute, clients cannot write
// it; the clusterProfile.accessProviders cases of TestValidate: kq ignores
// clusterProfile (with a warning).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "manifest/manifest.h"
#include "server/codec/codec.h"
#include "server/core/validation.h"

namespace kq::codec {
namespace {

using ::testing::HasSubstr;

// The YAML document as kqd would take it: decoded, converted, validated.
absl::StatusOr<ConfigObject> Apply(const std::string& yaml) {
  absl::StatusOr<std::vector<manifest::Document>> docs =
      manifest::ParseManifests(yaml);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) return absl::InternalError("want one document");
  const manifest::Document& doc = docs->front();
  if (!doc.status.ok()) return doc.status;
  absl::StatusOr<ConfigObject> object = FromProto(*doc.config_object);
  if (!object.ok()) return object.status();
  absl::Status valid = ValidateConfigObject(*object);
  if (!valid.ok()) return valid;
  return object;
}

std::string Clusters(int n, int name_length = 0) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ",
                    name_length > 0 ? std::string(name_length, 'a')
                                    : absl::StrCat("worker", i));
  }
  return out + "]";
}

std::string Config(const std::string& spec) {
  return absl::StrCat(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueConfig\n"
      "metadata: {name: multikueue-config}\nspec: ",
      spec, "\n");
}

std::string Cluster(const std::string& spec) {
  return absl::StrCat(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\n"
      "metadata: {name: worker}\nspec: ",
      spec, "\n");
}

struct WebhookCase {
  std::string name;  // Kueue's entry
  friend void PrintTo(const WebhookCase& c, std::ostream* os) { *os << c.name; }
  std::string yaml;
  // Empty: accepted.
  std::string want_error;
};

class MultiKueueWebhookTest : public ::testing::TestWithParam<WebhookCase> {};

TEST_P(MultiKueueWebhookTest, OnCreation) {
  const WebhookCase& tc = GetParam();
  absl::StatusOr<ConfigObject> got = Apply(tc.yaml);
  if (tc.want_error.empty()) {
    EXPECT_TRUE(got.ok()) << got.status();
    return;
  }
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), tc.want_error);
}

std::string CaseName(const ::testing::TestParamInfo<WebhookCase>& info) {
  std::string out;
  for (char c : info.param.name) out += std::isalnum(c) ? c : '_';
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    MultiKueueConfig, MultiKueueWebhookTest,
    ::testing::ValuesIn(std::vector<WebhookCase>{
        {.name = "Should allow one cluster",
         .yaml = Config("{clusters: [worker1]}")},
        {.name = "Should allow multiple clusters",
         .yaml = Config("{clusters: [worker1, worker2]}")},
        {.name = "Should reject missing clusters",
         .yaml = Config("{}"),
         .want_error = "spec.clusters: Required value"},
        {.name = "Should reject duplicate clusters",
         .yaml = Config("{clusters: [worker1, worker1]}"),
         .want_error = "spec.clusters: Invalid value: \"array\": must be "
                       "unique"},
        {.name = "Should reject too many clusters",
         .yaml = Config(absl::StrCat("{clusters: ", Clusters(21), "}")),
         .want_error = "spec.clusters: Too many: 21: must have at most 20 "
                       "items"},
        {.name = "Should reject too long cluster name",
         .yaml = Config(absl::StrCat("{clusters: ", Clusters(1, 257), "}")),
         .want_error = "spec.clusters[0]: Too long: may not be more than 256 "
                       "bytes"},
        // kq's: Automated needs an alpha gate; other values are not Kueue's.
        {.name = "kq: twenty clusters are allowed",
         .yaml = Config(absl::StrCat("{clusters: ", Clusters(20), "}"))},
        {.name = "kq: quotaManagement Automated is refused",
         .yaml = Config("{clusters: [w], quotaManagement: Automated}"),
         .want_error = "spec.quotaManagement: Forbidden: quotaManagement "
                       "Automated needs Kueue's alpha feature gate "
                       "MultiKueueManagerQuotaAutomation, which kq does not "
                       "enable"},
        {.name = "kq: unknown quotaManagement",
         .yaml = Config("{clusters: [w], quotaManagement: Sometimes}"),
         .want_error = "spec.quotaManagement: Unsupported value: "
                       "\"Sometimes\": supported values: \"Manual\", "
                       "\"Automated\""},
    }),
    CaseName);

INSTANTIATE_TEST_SUITE_P(
    MultiKueueCluster, MultiKueueWebhookTest,
    ::testing::ValuesIn(std::vector<WebhookCase>{
        {.name = "Should allow KubeConfig with Secret location type",
         .yaml = Cluster("{clusterSource: {kubeConfig: {locationType: Secret, "
                         "location: worker-secret}}}")},
        {.name = "Should allow KubeConfig with Path location type",
         .yaml = Cluster("{clusterSource: {kubeConfig: {locationType: Path, "
                         "location: /etc/kueue/worker.kubeconfig}}}")},
        {.name = "Should allow ClusterProfileRef (refused by kq)",
         .yaml = Cluster("{clusterSource: {clusterProfileRef: {name: "
                         "worker-profile}}}"),
         .want_error = "spec.clusterSource.clusterProfileRef: Forbidden: "
                       "clusterProfileRef needs Kueue's alpha feature gate "
                       "MultiKueueClusterProfile, which kq does not enable"},
        {.name = "Should reject missing cluster source",
         .yaml = Cluster("{}"),
         .want_error = "spec.clusterSource: Invalid value: \"object\": "
                       "exactly one of the fields in [kubeConfig "
                       "clusterProfileRef] must be set"},
        {.name = "Should reject both KubeConfig and ClusterProfileRef",
         .yaml = Cluster("{clusterSource: {kubeConfig: {locationType: Secret, "
                         "location: worker-secret}, clusterProfileRef: {name: "
                         "worker-profile}}}"),
         .want_error = "spec.clusterSource: Invalid value: \"object\": "
                       "exactly one of the fields in [kubeConfig "
                       "clusterProfileRef] must be set"},
        {.name = "Should reject empty KubeConfig location",
         .yaml = Cluster("{clusterSource: {kubeConfig: {locationType: Secret, "
                         "location: \"\"}}}"),
         .want_error = "spec.clusterSource.kubeConfig.location: Required "
                       "value"},
        {.name = "Should reject too long KubeConfig location",
         .yaml = Cluster(absl::StrCat(
             "{clusterSource: {kubeConfig: {locationType: Secret, location: ",
             std::string(257, 'a'), "}}}")),
         .want_error = "spec.clusterSource.kubeConfig.location: Too long: may "
                       "not be more than 256 bytes"},
        {.name = "Should reject invalid KubeConfig location type",
         .yaml = Cluster("{clusterSource: {kubeConfig: {locationType: Invalid, "
                         "location: worker-secret}}}"),
         .want_error = "spec.clusterSource.kubeConfig.locationType: "
                       "Unsupported value: \"Invalid\": supported values: "
                       "\"Secret\", \"Path\""},
        {.name = "Should reject empty ClusterProfileRef name",
         .yaml = Cluster("{clusterSource: {clusterProfileRef: {name: \"\"}}}"),
         .want_error = "spec.clusterSource.clusterProfileRef.name: Required "
                       "value"},
        {.name = "Should reject too long ClusterProfileRef name",
         .yaml = Cluster(absl::StrCat("{clusterSource: {clusterProfileRef: "
                                      "{name: ",
                                      std::string(257, 'a'), "}}}")),
         .want_error = "spec.clusterSource.clusterProfileRef.name: Too long: "
                       "may not be more than 256 bytes"},
        {.name = "kq: a relative Path is refused",
         .yaml = Cluster("{clusterSource: {kubeConfig: {locationType: Path, "
                         "location: workers/w1.yaml}}}"),
         .want_error = "spec.clusterSource.kubeConfig.location: Invalid "
                       "value: \"workers/w1.yaml\": a Path location is a kq "
                       "contexts file on kqd's machine and must be an "
                       "absolute path"},
    }),
    CaseName);

TEST(MultiKueueClusterDefaultingTest, KubeConfigLocationTypeDefaultsToSecret) {
  absl::StatusOr<ConfigObject> got = Apply(
      Cluster("{clusterSource: {kubeConfig: {location: worker-secret}}}"));
  ASSERT_TRUE(got.ok()) << got.status();
  const auto& cluster = std::get<MultiKueueCluster>(*got);
  EXPECT_EQ(cluster.location_type, "Secret");
  EXPECT_EQ(cluster.location, "worker-secret");
  // And it reads back with the default written out.
  EXPECT_EQ(ToProto(*got)
                .multi_kueue_cluster()
                .spec()
                .cluster_source()
                .kube_config()
                .location_type(),
            "Secret");
}

TEST(MultiKueueConfigDefaultingTest, QuotaManagementDefaultsToManual) {
  absl::StatusOr<ConfigObject> got = Apply(Config("{clusters: [b, a]}"));
  ASSERT_TRUE(got.ok()) << got.status();
  const auto& config = std::get<MultiKueueConfig>(*got);
  EXPECT_EQ(config.quota_management, "Manual");
  // The order is the Incremental dispatcher's: kept.
  EXPECT_EQ(config.clusters, (std::vector<std::string>{"b", "a"}));
}

TEST(MultiKueueCodecTest, RoundTrip) {
  MultiKueueConfig config;
  config.meta.name = "mk";
  config.clusters = {"w2", "w1"};
  MultiKueueCluster cluster;
  cluster.meta.name = "w1";
  cluster.location_type = "Path";
  cluster.location = "/etc/kq/w1.yaml";
  for (const ConfigObject& object :
       {ConfigObject(config), ConfigObject(cluster)}) {
    absl::StatusOr<ConfigObject> back = FromProto(ToProto(object));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(*back == object);
  }
}

// ---------------------------------------------------------------------------
// The Configuration's multiKueue section.

absl::StatusOr<Configuration> ReadConfiguration(const std::string& section) {
  absl::StatusOr<std::vector<manifest::Document>> docs =
      manifest::ParseManifests(absl::StrCat(
          "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n",
          section));
  if (!docs.ok()) return docs.status();
  const manifest::Document& doc = docs->front();
  if (!doc.status.ok()) return doc.status;
  return FromProto(*doc.configuration);
}

TEST(MultiKueueSettingsTest, KueuesDefaults) {
  for (const char* section : {"", "multiKueue: {}\n"}) {
    SCOPED_TRACE(section);
    absl::StatusOr<Configuration> got = ReadConfiguration(section);
    ASSERT_TRUE(got.ok()) << got.status();
    const MultiKueueSettings& mk = got->multi_kueue;
    EXPECT_EQ(mk.gc_interval, absl::Minutes(1));
    EXPECT_EQ(mk.origin, "multikueue");
    EXPECT_EQ(mk.worker_lost_timeout, absl::Minutes(15));
    EXPECT_EQ(mk.dispatcher_name,
              "kueue.x-k8s.io/multikueue-dispatcher-all-at-once");
    EXPECT_EQ(mk.incremental_step_size, 3);
    EXPECT_EQ(mk.incremental_round_timeout, absl::Minutes(5));
    EXPECT_FALSE(mk.lease_fencing);
  }
}

TEST(MultiKueueSettingsTest, ZeroGcIntervalTurnsGcOffAndEmptyOriginDefaults) {
  absl::StatusOr<Configuration> got =
      ReadConfiguration("multiKueue: {gcInterval: 0s, origin: \"\"}\n");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->multi_kueue.gc_interval, absl::ZeroDuration());
  EXPECT_EQ(got->multi_kueue.origin, "multikueue");
}

struct SettingsCase {
  std::string name;  // Kueue's TestValidate case, or kq's
  friend void PrintTo(const SettingsCase& c, std::ostream* os) {
    *os << c.name;
  }
  std::string section;
  std::string want_error;  // empty: valid
};

class MultiKueueSettingsValidationTest
    : public ::testing::TestWithParam<SettingsCase> {};

TEST_P(MultiKueueSettingsValidationTest, Validate) {
  const SettingsCase& tc = GetParam();
  absl::StatusOr<Configuration> got = ReadConfiguration(tc.section);
  if (tc.want_error.empty()) {
    EXPECT_TRUE(got.ok()) << got.status();
    return;
  }
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr(tc.want_error));
}

std::string SettingsName(const ::testing::TestParamInfo<SettingsCase>& info) {
  std::string out;
  for (char c : info.param.name) out += std::isalnum(c) ? c : '_';
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MultiKueueSettingsValidationTest,
    ::testing::ValuesIn(std::vector<SettingsCase>{
        {.name = "negative multiKueue.gcInterval",
         .section = "multiKueue: {gcInterval: -1s}\n",
         .want_error = "multiKueue.gcInterval: Invalid value: -1s: must be "
                       "greater than or equal to 0"},
        {.name = "negative multiKueue.workerLostTimeout",
         .section = "multiKueue: {workerLostTimeout: -1s}\n",
         .want_error = "multiKueue.workerLostTimeout: Invalid value: -1s: "
                       "must be greater than or equal to 0"},
        {.name = "invalid .multiKueue.origin label value",
         .section = "multiKueue: {origin: \"=]\"}\n",
         .want_error = "multiKueue.origin: Invalid value: \"=]\": "},
        {.name = "valid .multiKueue configuration",
         .section = "multiKueue: {gcInterval: 2m, origin: valid, "
                    "workerLostTimeout: 5m}\n"},
        {.name = "valid multiKueue.incrementalDispatcherConfig with "
                 "incremental dispatcher",
         .section = "multiKueue: {dispatcherName: "
                    "kueue.x-k8s.io/multikueue-dispatcher-incremental, "
                    "incrementalDispatcherConfig: {stepSize: 2}}\n"},
        {.name = "multiKueue.incrementalDispatcherConfig without incremental "
                 "dispatcher",
         .section = "multiKueue: {dispatcherName: "
                    "kueue.x-k8s.io/multikueue-dispatcher-all-at-once, "
                    "incrementalDispatcherConfig: {stepSize: 2}}\n",
         .want_error = "multiKueue.incrementalDispatcherConfig: Invalid "
                       "value: incrementalDispatcherConfig is only valid when "
                       "dispatcherName is set to the incremental dispatcher"},
        {.name = "multiKueue.incrementalDispatcherConfig.stepSize below "
                 "minimum",
         .section = "multiKueue: {dispatcherName: "
                    "kueue.x-k8s.io/multikueue-dispatcher-incremental, "
                    "incrementalDispatcherConfig: {stepSize: 0}}\n",
         .want_error = "multiKueue.incrementalDispatcherConfig.stepSize: "
                       "Invalid value: 0: must be greater than or equal to 1"},
        {.name = "kq: roundTimeout must be positive",
         .section = "multiKueue: {dispatcherName: "
                    "kueue.x-k8s.io/multikueue-dispatcher-incremental, "
                    "incrementalDispatcherConfig: {roundTimeout: 0s}}\n",
         .want_error = "multiKueue.incrementalDispatcherConfig.roundTimeout: "
                       "Invalid value: 0: must be greater than 0 (a kq "
                       "extension)"},
        {.name = "kq: unknown fencing",
         .section = "multiKueue: {fencing: Sometimes}\n",
         .want_error = "multiKueue.fencing"},
    }),
    SettingsName);

TEST(MultiKueueSettingsTest, IncrementalSettingsAndKqExtensions) {
  absl::StatusOr<Configuration> got = ReadConfiguration(R"(multiKueue:
  dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental
  incrementalDispatcherConfig: {stepSize: 1, roundTimeout: 2s}
  fencing: Lease
)");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->multi_kueue.incremental_step_size, 1);
  EXPECT_EQ(got->multi_kueue.incremental_round_timeout, absl::Seconds(2));
  EXPECT_TRUE(got->multi_kueue.lease_fencing);
}

}  // namespace
}  // namespace kq::codec
