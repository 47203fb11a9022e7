// Kueue's MultiKueue kinds and the Configuration's multiKueue section as
// the manifest library reads and writes them (manifest/decode.cc,
// encode.cc). Defaults and Kueue's validation are the server's (see
// tests/server/codec/multikueue_test.cc); here: field names per API
// version, presence, round trips and warnings.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"

#include "manifest/manifest.h"

namespace kq::manifest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

MATCHER_P(EqualsProto, want, "") {
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  if (differencer.Compare(want, arg)) return true;
  *result_listener << "\n" << diff;
  return false;
}

template <typename T>
T ParseTextProto(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

Document ParseOne(const std::string& text) {
  absl::StatusOr<std::vector<Document>> docs = ParseManifests(text);
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok() || docs->size() != 1) {
    ADD_FAILURE() << "want exactly one document in:\n" << text;
    return Document{};
  }
  return (*docs)[0];
}

struct DecodeCase {
  std::string name;
  friend void PrintTo(const DecodeCase& c, std::ostream* os) { *os << c.name; }
  std::string yaml;
  std::string want;  // text proto of the ConfigObject
  std::vector<std::string> want_warnings;
};

class MultiKueueDecodeTest : public ::testing::TestWithParam<DecodeCase> {};

TEST_P(MultiKueueDecodeTest, ReadsTheFieldsOfItsVersion) {
  const DecodeCase& tc = GetParam();
  const Document doc = ParseOne(tc.yaml);
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  ASSERT_TRUE(doc.config_object.has_value());
  EXPECT_THAT(*doc.config_object,
              EqualsProto(ParseTextProto<v1::ConfigObject>(tc.want)));
  EXPECT_EQ(doc.warnings, tc.want_warnings);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MultiKueueDecodeTest,
    ::testing::ValuesIn(std::vector<DecodeCase>{
        {.name = "config_v1beta2",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: mk}
spec:
  clusters: [worker1, worker2]
  quotaManagement: Manual
)",
         .want = R"pb(multi_kueue_config {
                        metadata { name: "mk" }
                        spec {
                          clusters: [ "worker1", "worker2" ]
                          quota_management: "Manual"
                        }
                      })pb"},
        // v1beta1 has no quotaManagement: an unknown field there.
        {.name = "config_v1beta1",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueConfig
metadata: {name: mk}
spec:
  clusters: [worker1]
  quotaManagement: Manual
)",
         .want = R"pb(multi_kueue_config {
                        metadata { name: "mk" }
                        spec { clusters: "worker1" }
                      })pb",
         .want_warnings = {"unknown field \"spec.quotaManagement\""}},
        {.name = "cluster_v1beta2_kube_config",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: worker1}
spec:
  clusterSource:
    kubeConfig:
      location: /etc/kq/workers/worker1.yaml
      locationType: Path
)",
         .want = R"pb(multi_kueue_cluster {
                        metadata { name: "worker1" }
                        spec {
                          cluster_source {
                            kube_config {
                              location: "/etc/kq/workers/worker1.yaml"
                              location_type: "Path"
                            }
                          }
                        }
                      })pb"},
        {.name = "cluster_v1beta2_profile_and_status",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: worker1}
spec:
  clusterSource:
    clusterProfileRef: {name: profile1}
status:
  conditions:
  - {type: Active, status: "True", reason: Active, message: Connected}
)",
         .want = R"pb(multi_kueue_cluster {
                        metadata { name: "worker1" }
                        spec {
                          cluster_source {
                            cluster_profile_ref { name: "profile1" }
                          }
                        }
                        status {
                          conditions {
                            type: "Active"
                            status: "True"
                            reason: "Active"
                            message: "Connected"
                          }
                        }
                      })pb"},
        // An empty spec keeps its (empty) source: the server says which
        // field is missing.
        {.name = "cluster_v1beta2_no_source",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: worker1}
spec: {}
)",
         .want = R"pb(multi_kueue_cluster {
                        metadata { name: "worker1" }
                        spec { cluster_source {} }
                      })pb"},
        {.name = "cluster_v1beta1_kube_config",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueCluster
metadata: {name: worker1}
spec:
  kubeConfig: {location: worker1-secret, locationType: Secret}
  clusterProfileRef: {name: profile1}
)",
         .want = R"pb(multi_kueue_cluster {
                        metadata { name: "worker1" }
                        spec {
                          cluster_source {
                            kube_config {
                              location: "worker1-secret"
                              location_type: "Secret"
                            }
                          }
                        }
                      })pb",
         .want_warnings = {"spec.clusterProfileRef: has no effect in "
                           "kueue.x-k8s.io/v1beta1; ignored"}},
        // v1beta2's nesting is not v1beta1's.
        {.name = "cluster_v1beta2_flat_kube_config_is_unknown",
         .yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: worker1}
spec:
  kubeConfig: {location: worker1-secret}
)",
         .want = R"pb(multi_kueue_cluster {
                        metadata { name: "worker1" }
                        spec { cluster_source {} }
                      })pb",
         .want_warnings = {"unknown field \"spec.kubeConfig\""}},
    }),
    [](const auto& info) { return info.param.name; });

TEST(MultiKueueRoundTripTest, ParseOfPrintedObjectIsTheObject) {
  for (const char* text : {
           R"pb(multi_kueue_config {
                  metadata { name: "mk" uid: "u1" revision: 3 }
                  spec {
                    clusters: [ "b", "a" ]
                    quota_management: "Manual"
                  }
                })pb",
           R"pb(multi_kueue_cluster {
                  metadata { name: "w" }
                  spec {
                    cluster_source {
                      kube_config { location: "/w.yaml" location_type: "Path" }
                    }
                  }
                  status {
                    conditions {
                      type: "Active"
                      status: "False"
                      reason: "ClientConnectionFailed"
                      message: "not connected yet"
                    }
                  }
                })pb",
       }) {
    SCOPED_TRACE(text);
    const auto want = ParseTextProto<v1::ConfigObject>(text);
    const std::string yaml = ToYaml(ToKueueJson(want));
    EXPECT_THAT(yaml, HasSubstr("apiVersion: kueue.x-k8s.io/v1beta2"));
    const Document doc = ParseOne(yaml);
    ASSERT_TRUE(doc.config_object.has_value()) << doc.status << "\n" << yaml;
    EXPECT_THAT(*doc.config_object, EqualsProto(want)) << yaml;
    EXPECT_THAT(doc.warnings, IsEmpty());
  }
}

constexpr char kConfigV1beta2[] =
    "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";

TEST(MultiKueueConfigurationTest, ReadsEveryFieldWithPresence) {
  const Document doc = ParseOne(std::string(kConfigV1beta2) + R"(multiKueue:
  gcInterval: 0s
  origin: manager-a
  workerLostTimeout: 1m30s
  dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental
  incrementalDispatcherConfig:
    stepSize: 2
    roundTimeout: 500ms
  fencing: Lease
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  ASSERT_TRUE(doc.configuration.has_value());
  EXPECT_THAT(doc.warnings, IsEmpty());
  EXPECT_THAT(
      *doc.configuration, EqualsProto(ParseTextProto<v1::Configuration>(R"pb(
        multi_kueue {
          gc_interval {}
          origin: "manager-a"
          worker_lost_timeout { seconds: 90 }
          dispatcher_name: "kueue.x-k8s.io/multikueue-dispatcher-incremental"
          incremental_dispatcher_config {
            step_size: 2
            round_timeout { nanos: 500000000 }
          }
          fencing: "Lease"
        })pb")));
}

TEST(MultiKueueConfigurationTest, NegativeDurationIsReadForTheServerToRefuse) {
  const Document doc =
      ParseOne(std::string(kConfigV1beta2) + "multiKueue: {gcInterval: -1s}\n");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_EQ(doc.configuration->multi_kueue().gc_interval().seconds(), -1);
}

TEST(MultiKueueConfigurationTest, BadDurationNamesTheField) {
  const Document doc = ParseOne(std::string(kConfigV1beta2) +
                                "multiKueue: {workerLostTimeout: soon}\n");
  EXPECT_EQ(doc.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(doc.status.message(),
              HasSubstr("multiKueue.workerLostTimeout: must be a duration"));
}

TEST(MultiKueueConfigurationTest, FieldsKqDoesNotUseAreIgnoredWithAWarning) {
  const Document doc = ParseOne(std::string(kConfigV1beta2) + R"(multiKueue:
  externalFrameworks: [{name: Foo.v1.example.com}]
  clusterProfile: {accessProviders: [{name: p}]}
)");
  ASSERT_TRUE(doc.status.ok()) << doc.status;
  EXPECT_THAT(doc.warnings,
              ElementsAre(HasSubstr("multiKueue.externalFrameworks: ignored"),
                          HasSubstr("multiKueue.clusterProfile: ignored")));
  EXPECT_TRUE(doc.configuration->has_multi_kueue());
}

}  // namespace
}  // namespace kq::manifest
