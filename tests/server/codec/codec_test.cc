#include "server/codec/codec.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "server/core/spec_shape.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::codec {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::AdmissionCheckBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::IsOkAndHolds;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::NamespaceBuilder;
using ::kq::testing::Qty;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::kq::testing::WorkloadPriorityClassBuilder;
using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kCreated =
    absl::FromUnixSeconds(1'700'000'000) + absl::Microseconds(123456);
const absl::Time kLater = absl::FromUnixSeconds(1'700'000'100);

// Differences between two messages, for failure output.
std::string ProtoDiff(const google::protobuf::Message& want,
                      const google::protobuf::Message& got) {
  std::string report;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&report);
  differencer.Compare(want, got);
  return report;
}

// Parses a text-format proto; fails the test on a typo.
template <typename Message>
Message ParseText(const std::string& text) {
  Message message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

// ---------------------------------------------------------------------------
// Round trips: core -> proto -> (wire) -> core is the identity.

struct ObjectCase {
  std::string name;
  ConfigObject object;
};

class ConfigObjectRoundTripTest : public ::testing::TestWithParam<ObjectCase> {
};

TEST_P(ConfigObjectRoundTripTest, CoreToProtoToCore) {
  const ConfigObject& want = GetParam().object;
  v1::ConfigObject proto = ToProto(want);
  // Through the wire format too, as the SQLite store does.
  v1::ConfigObject reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(proto.SerializeAsString()));
  absl::StatusOr<ConfigObject> got = FromProto(reparsed);
  ASSERT_OK(got.status());
  EXPECT_EQ(KindOf(*got), KindOf(want));
  EXPECT_TRUE(*got == want) << ProtoDiff(proto, ToProto(*got));
}

INSTANTIATE_TEST_SUITE_P(
    Objects, ConfigObjectRoundTripTest,
    ::testing::ValuesIn(std::vector<ObjectCase>{
        {.name = "namespace",
         .object = NamespaceBuilder("team-a")
                       .Uid("u-ns")
                       .Revision(3)
                       .Created(kCreated)
                       .Label("team", "a")
                       .Annotation("owner", "ml")
                       .Build()},
        {.name = "namespace_minimal", .object = NamespaceBuilder("b").Build()},
        {.name = "resource_flavor",
         .object = ResourceFlavorBuilder("gpu-a100")
                       .NodeLabel("cloud.google.com/gke-accelerator", "a100")
                       .NodeLabel("pool", "gpu")
                       .Taint("nvidia.com/gpu", "present", "NoSchedule")
                       .Toleration({.key = "spot",
                                    .op = "Exists",
                                    .effect = "NoExecute",
                                    .toleration_seconds = 30})
                       .Toleration({.key = "k", .op = "Equal", .value = "v"})
                       .TopologyName("default-topology")
                       .Revision(7)
                       .Build()},
        {.name = "cluster_queue_full",
         .object = ClusterQueueBuilder("cq")
                       .Uid("u-cq")
                       .Created(kCreated)
                       .Cohort("research")
                       .QueueingStrategy(QueueingStrategy::kStrictFIFO)
                       .NamespaceSelector(LabelSelector{
                           .match_labels = {{"team", "a"}},
                           .match_expressions = {{.key = "env",
                                                  .op = "In",
                                                  .values = {"prod", "dev"}}}})
                       .ResourceGroup({"cpu", "memory"})
                       .Flavor("default")
                       .Quota("cpu", "9")
                       .BorrowingLimit("1")
                       .Quota("memory", "36Gi")
                       .LendingLimit("4Gi")
                       .Flavor("spot")
                       .Quota("cpu", "500m")
                       .Quota("memory", "1500Mi")
                       .ResourceGroup({"nvidia.com/gpu"})
                       .Flavor("a100")
                       .Quota("nvidia.com/gpu", "8")
                       .BorrowingLimit("0")
                       .LendingLimit("2")
                       .WhenCanBorrow(FungibilityPolicy::kTryNextFlavor)
                       .WhenCanPreempt(FungibilityPolicy::kMayStopSearch)
                       .FungibilityPreference("PreemptionOverBorrowing")
                       .ReclaimWithinCohort("Any")
                       .BorrowWithinCohort("LowerPriority", 100)
                       .WithinClusterQueue("LowerOrNewerEqualPriority")
                       .AdmissionCheck("prov", {"a100"})
                       .AdmissionCheck("other")
                       .StopPolicy(StopPolicy::kHoldAndDrain)
                       .FairSharingWeight("2500m")
                       .Build()},
        {.name = "cluster_queue_no_namespace_selector",
         .object = ClusterQueueBuilder("cq")
                       .NoNamespaceSelector()
                       .StopPolicy(StopPolicy::kHold)
                       .Build()},
        {.name = "cluster_queue_select_all",
         .object = ClusterQueueBuilder("cq").NamespaceSelectorAll().Build()},
        {.name = "cohort",
         .object = CohortBuilder("research")
                       .Parent("org")
                       .Quota("default", "cpu", "100")
                       .Quota("default", "memory", "1Ti")
                       .LendingLimit("512Gi")
                       .FairSharingWeight("3")
                       .Build()},
        {.name = "local_queue",
         .object = LocalQueueBuilder("team-a", "lq", "cq")
                       .StopPolicy(StopPolicy::kHold)
                       .FairSharingWeight("1")
                       .Uid("u-lq")
                       .Build()},
        {.name = "workload_priority_class",
         .object = WorkloadPriorityClassBuilder("high", 10000)
                       .Description("production jobs")
                       .Build()},
        {.name = "negative_priority_class",
         .object = WorkloadPriorityClassBuilder("low", -5).Build()},
        {.name = "admission_check",
         .object = AdmissionCheckBuilder("prov")
                       .ControllerName("kueue.x-k8s.io/provisioning-request")
                       .Parameters("kueue.x-k8s.io",
                                   "ProvisioningRequestConfig", "prov-config")
                       .Build()},
        {.name = "admission_check_no_parameters",
         .object = AdmissionCheckBuilder("ac").ControllerName("x").Build()},
    }),
    [](const auto& info) { return info.param.name; });

TEST(WorkloadRoundTripTest, FullWorkload) {
  Workload want =
      WorkloadBuilder("job-1")
          .Namespace("team-a")
          .Uid("u-1")
          .Revision(42)
          .Created(kCreated)
          .Label("kueue.x-k8s.io/queue-name", "lq")
          .Annotation("note", "x")
          .Queue("lq")
          .PriorityClass("high")
          .Priority(10000)
          .Active(false)
          .MaximumExecutionTimeSeconds(3600)
          .PodSet("driver", 1)
          .Request("cpu", "500m")
          .Request("memory", "256Gi")
          .NodeSelector("pool", "cpu")
          .PodSet("workers", 8)
          .MinCount(2)
          .Request("cpu", "16")
          .Request("nvidia.com/gpu", "1")
          .Request("example.com/scratch-storage", "10Gi")
          .Toleration({.key = "nvidia.com/gpu", .op = "Exists"})
          .RequiredNodeAffinity("zone", "In", {"a", "b"})
          .RequiredNodeAffinity("spot", "DoesNotExist", {})
          .Template(R"({"spec":{"containers":[{"image":"busybox"}]}})")
          .Admitted(AdmissionBuilder("cq")
                        .PodSet("driver", 1)
                        .Assign("cpu", "default", "500m")
                        .Assign("memory", "default", "256Gi")
                        .PodSet("workers", 8)
                        .Assign("cpu", "default", "128")
                        .Assign("nvidia.com/gpu", "a100", "8")
                        .Build(),
                    kLater)
          .Condition("Requeued", "False", "Backoff", "waiting", kLater)
          .AdmissionCheck("prov", "Ready", "provisioned", kLater)
          .AdmissionCheck("other", "Pending")
          .RequeueCount(3)
          .RequeueAt(kLater + absl::Nanoseconds(5))
          .Build();

  v1::Workload proto = ToProto(want);
  v1::Workload reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(proto.SerializeAsString()));
  absl::StatusOr<Workload> got = FromProto(reparsed);
  ASSERT_OK(got.status());
  EXPECT_TRUE(*got == want) << ProtoDiff(proto, ToProto(*got));
}

// status.requeueState keeps each of its fields alone or together, and a
// workload whose state loses both holds none (it reads as Kueue's nil).
TEST(WorkloadRoundTripTest, RequeueState) {
  const absl::Time at = absl::FromUnixSeconds(1'767'323'046);
  for (const auto& [count, requeue_at] : std::vector<
           std::pair<std::optional<int32_t>, std::optional<absl::Time>>>{
           {3, std::nullopt}, {std::nullopt, at}, {0, at}}) {
    Workload want =
        WorkloadBuilder("w").Queue("lq").Request("cpu", "1").Build();
    SetRequeueCount(want, count);
    SetRequeueAt(want, requeue_at);
    absl::StatusOr<Workload> got = FromProto(ToProto(want));
    ASSERT_OK(got.status());
    EXPECT_TRUE(*got == want) << ProtoDiff(ToProto(want), ToProto(*got));
    EXPECT_EQ(RequeueCount(*got), count);
    EXPECT_EQ(RequeueAt(*got), requeue_at);
    EXPECT_EQ(ToProto(*got).status().requeue_state().has_count(),
              count.has_value());

    SetRequeueCount(*got, std::nullopt);
    SetRequeueAt(*got, std::nullopt);
    EXPECT_FALSE(got->requeue_state.has_value());
    EXPECT_FALSE(ToProto(*got).status().has_requeue_state());
  }
}

TEST(WorkloadRoundTripTest, MinimalWorkload) {
  Workload want = WorkloadBuilder("w").Queue("lq").Request("cpu", "1").Build();
  absl::StatusOr<Workload> got = FromProto(ToProto(want));
  ASSERT_OK(got.status());
  EXPECT_TRUE(*got == want) << ProtoDiff(ToProto(want), ToProto(*got));
  EXPECT_FALSE(got->admission.has_value());
  EXPECT_FALSE(got->requeue_state.has_value());
}

// ---------------------------------------------------------------------------
// Proto -> core details.

TEST(CodecTest, ObjectMetaFieldsMapOneToOne) {
  auto proto = ParseText<v1::ConfigObject>(R"pb(
    local_queue {
      metadata {
        name: "lq"
        namespace: "ns"
        uid: "u"
        revision: 9
        creation_timestamp { seconds: 1700000000 nanos: 5000 }
        labels { key: "a" value: "1" }
        annotations { key: "b" value: "2" }
        generate_name: "lq-"
      }
      spec { cluster_queue: "cq" }
    }
  )pb");
  ASSERT_OK_AND_ASSIGN(ConfigObject object, FromProto(proto));
  const ObjectMeta& meta = MetaOf(object);
  EXPECT_EQ(meta.name, "lq");
  EXPECT_EQ(meta.namespace_name, "ns");
  EXPECT_EQ(meta.uid, "u");
  EXPECT_EQ(meta.revision, 9);
  EXPECT_EQ(meta.creation_timestamp,
            absl::FromUnixSeconds(1'700'000'000) + absl::Microseconds(5));
  EXPECT_EQ(meta.labels, (Labels{{"a", "1"}}));
  EXPECT_EQ(meta.annotations, (Labels{{"b", "2"}}));
  EXPECT_EQ(meta.generate_name, "lq-");
  EXPECT_EQ(std::get<LocalQueue>(object).cluster_queue, "cq");
  EXPECT_EQ(ToProto(object).local_queue().metadata().generate_name(), "lq-");
}

TEST(CodecTest, EmptyEnumStringsMeanKueueDefaults) {
  auto proto = ParseText<v1::ConfigObject>(R"pb(
    cluster_queue { metadata { name: "cq" } }
  )pb");
  ASSERT_OK_AND_ASSIGN(ConfigObject object, FromProto(proto));
  const ClusterQueue& cq = std::get<ClusterQueue>(object);
  EXPECT_EQ(cq.queueing_strategy, QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(cq.stop_policy, StopPolicy::kNone);
  EXPECT_EQ(cq.flavor_fungibility.when_can_borrow,
            FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(cq.flavor_fungibility.when_can_preempt,
            FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(cq.preemption.reclaim_within_cohort, "Never");
  EXPECT_EQ(cq.preemption.borrow_within_cohort_policy, "Never");
  EXPECT_EQ(cq.preemption.within_cluster_queue, "Never");
  EXPECT_FALSE(cq.namespace_selector.has_value());
  EXPECT_FALSE(cq.fair_sharing_weight.has_value());
}

TEST(CodecTest, EnumStringsParse) {
  auto proto = ParseText<v1::ConfigObject>(R"pb(
    cluster_queue {
      metadata { name: "cq" }
      spec {
        queueing_strategy: "StrictFIFO"
        stop_policy: "HoldAndDrain"
        flavor_fungibility {
          when_can_borrow: "TryNextFlavor"
          when_can_preempt: "MayStopSearch"
        }
        namespace_selector {}
      }
    }
  )pb");
  ASSERT_OK_AND_ASSIGN(ConfigObject object, FromProto(proto));
  const ClusterQueue& cq = std::get<ClusterQueue>(object);
  EXPECT_EQ(cq.queueing_strategy, QueueingStrategy::kStrictFIFO);
  EXPECT_EQ(cq.stop_policy, StopPolicy::kHoldAndDrain);
  EXPECT_EQ(cq.flavor_fungibility.when_can_borrow,
            FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(cq.flavor_fungibility.when_can_preempt,
            FungibilityPolicy::kMayStopSearch);
  // An empty selector is present and selects every namespace.
  ASSERT_TRUE(cq.namespace_selector.has_value());
  EXPECT_EQ(*cq.namespace_selector, LabelSelector{});
}

TEST(CodecTest, EnumsPrintKueueNames) {
  v1::ConfigObject proto =
      ToProto(ClusterQueueBuilder("cq")
                  .QueueingStrategy(QueueingStrategy::kStrictFIFO)
                  .StopPolicy(StopPolicy::kHold)
                  .WhenCanBorrow(FungibilityPolicy::kTryNextFlavor)
                  .Build());
  const v1::ClusterQueueSpec& spec = proto.cluster_queue().spec();
  EXPECT_EQ(spec.queueing_strategy(), "StrictFIFO");
  EXPECT_EQ(spec.stop_policy(), "Hold");
  EXPECT_EQ(spec.flavor_fungibility().when_can_borrow(), "TryNextFlavor");
  EXPECT_EQ(spec.flavor_fungibility().when_can_preempt(), "TryNextFlavor");

  v1::ConfigObject lq = ToProto(LocalQueueBuilder("ns", "lq", "cq")
                                    .StopPolicy(StopPolicy::kHoldAndDrain)
                                    .Build());
  EXPECT_EQ(lq.local_queue().spec().stop_policy(), "HoldAndDrain");
}

TEST(CodecTest, QuantitiesKeepTheirUserWrittenForm) {
  v1::ConfigObject proto = ToProto(ClusterQueueBuilder("cq")
                                       .Flavor("default")
                                       .Quota("cpu", "16")
                                       .Quota("memory", "256Gi")
                                       .Quota("nvidia.com/gpu", "8")
                                       .Quota("ephemeral-storage", "100Gi")
                                       .Quota("pods", "5k")
                                       .Quota("example.com/cpu-half", "500m")
                                       .BorrowingLimit("250m")
                                       .Build());
  const v1::FlavorQuotas& flavor =
      proto.cluster_queue().spec().resource_groups(0).flavors(0);
  ASSERT_EQ(flavor.resources_size(), 6);
  EXPECT_EQ(flavor.resources(0).nominal_quota(), "16");
  EXPECT_EQ(flavor.resources(1).nominal_quota(), "256Gi");
  EXPECT_EQ(flavor.resources(2).nominal_quota(), "8");
  EXPECT_EQ(flavor.resources(3).nominal_quota(), "100Gi");
  EXPECT_EQ(flavor.resources(4).nominal_quota(), "5k");
  EXPECT_EQ(flavor.resources(5).nominal_quota(), "500m");
  EXPECT_EQ(flavor.resources(5).borrowing_limit(), "250m");
  EXPECT_FALSE(flavor.resources(0).has_borrowing_limit());
  EXPECT_FALSE(flavor.resources(0).has_lending_limit());

  v1::Workload wl = ToProto(WorkloadBuilder("w")
                                .Request("cpu", "1500m")
                                .Request("memory", "512Mi")
                                .Build());
  EXPECT_EQ(wl.spec().pod_sets(0).requests().at("cpu"), "1500m");
  EXPECT_EQ(wl.spec().pod_sets(0).requests().at("memory"), "512Mi");
}

TEST(CodecTest, ActiveAbsentMeansTrue) {
  auto proto = ParseText<v1::Workload>(R"pb(
    metadata { name: "w" namespace: "ns" }
  )pb");
  ASSERT_OK_AND_ASSIGN(Workload wl, FromProto(proto));
  EXPECT_TRUE(wl.active);

  proto.mutable_spec()->set_active(false);
  ASSERT_OK_AND_ASSIGN(wl, FromProto(proto));
  EXPECT_FALSE(wl.active);
  EXPECT_FALSE(ToProto(wl).spec().active());
  EXPECT_TRUE(ToProto(wl).spec().has_active());
}

TEST(CodecTest, AdmissionPresenceFollowsHasAdmission) {
  auto proto = ParseText<v1::Workload>(R"pb(
    metadata { name: "w" }
    status {
      admission {
        cluster_queue: "cq"
        pod_set_assignments {
          name: "main"
          count: 3
          flavors { key: "cpu" value: "default" }
          resource_usage { key: "cpu" value: "3" }
        }
      }
    }
  )pb");
  ASSERT_OK_AND_ASSIGN(Workload wl, FromProto(proto));
  ASSERT_TRUE(wl.admission.has_value());
  EXPECT_EQ(*wl.admission, AdmissionBuilder("cq")
                               .PodSet("main", 3)
                               .Assign("cpu", "default", "3")
                               .Build());

  proto.mutable_status()->clear_admission();
  ASSERT_OK_AND_ASSIGN(wl, FromProto(proto));
  EXPECT_FALSE(wl.admission.has_value());
  EXPECT_FALSE(ToProto(wl).status().has_admission());
}

TEST(CodecTest, UnsetTimesStayAbsent) {
  Workload wl = WorkloadBuilder("w").Condition("Active", "True").Build();
  v1::Workload proto = ToProto(wl);
  EXPECT_FALSE(proto.metadata().has_creation_timestamp());
  EXPECT_FALSE(proto.status().conditions(0).has_last_transition_time());
  EXPECT_FALSE(proto.status().requeue_state().has_requeue_at());
}

TEST(CodecTest, TemplateIsKeptAsJson) {
  auto proto = ParseText<v1::Workload>(R"pb(
    metadata { name: "w" }
    spec {
      pod_sets {
        name: "main"
        count: 1
        template {
          fields {
            key: "spec"
            value {
              struct_value {
                fields {
                  key: "restartPolicy"
                  value { string_value: "Never" }
                }
              }
            }
          }
        }
      }
    }
  )pb");
  ASSERT_OK_AND_ASSIGN(Workload wl, FromProto(proto));
  EXPECT_EQ(wl.pod_sets[0].template_json,
            R"({"spec":{"restartPolicy":"Never"}})");
  v1::Workload back = ToProto(wl);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      back.spec().pod_sets(0).template_(),
      proto.spec().pod_sets(0).template_()))
      << ProtoDiff(proto.spec().pod_sets(0), back.spec().pod_sets(0));
}

TEST(CodecTest, TemplateJsonIsCanonical) {
  v1::Workload proto;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  R"({"zeta": 1, "alpha": {"b": 2.5, "a": [1, "x", null, true]},
                      "mid": "m", "e": {}, "big": 1e20})",
                  proto.mutable_spec()->add_pod_sets()->mutable_template_())
                  .ok());
  ASSERT_OK_AND_ASSIGN(Workload wl, FromProto(proto));
  const std::string want =
      R"({"alpha":{"a":[1,"x",null,true],"b":2.5},"big":1e+20,"e":{},)"
      R"("mid":"m","zeta":1})";
  EXPECT_EQ(wl.pod_sets[0].template_json, want);
  // Stable through further round trips, whatever order protobuf prints.
  for (int i = 0; i < 5; ++i) {
    v1::Workload reparsed;
    ASSERT_TRUE(reparsed.ParseFromString(ToProto(wl).SerializeAsString()));
    ASSERT_OK_AND_ASSIGN(Workload again, FromProto(reparsed));
    EXPECT_EQ(again.pod_sets[0].template_json, want);
  }
}

// The codec converts templates between Struct and text itself; the result
// must be what protobuf's own JSON writer and parser give (through
// nlohmann's parse and sorted dump for the text), on values that exercise
// numbers, escapes and nesting.
class TemplateConversionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TemplateConversionTest, MatchesProtobufJson) {
  google::protobuf::Struct original;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(GetParam(), &original).ok())
      << GetParam();
  std::string protobuf_json;
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString(original, &protobuf_json)
          .ok());
  const std::string want =
      nlohmann::json::parse(protobuf_json)
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  v1::Workload proto;
  *proto.mutable_spec()->add_pod_sets()->mutable_template_() = original;
  ASSERT_OK_AND_ASSIGN(Workload wl, FromProto(proto));
  EXPECT_EQ(wl.pod_sets[0].template_json, want);
  // Back to a Struct: what protobuf's parser makes of the text.
  google::protobuf::Struct parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(want, &parsed).ok());
  const v1::Workload answer = ToProto(wl);
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(
      differencer.Compare(answer.spec().pod_sets(0).template_(), parsed))
      << diff;
  // Sent as text instead, the template is kept as given and answered as
  // the same Struct.
  v1::Workload as_text;
  as_text.mutable_spec()->add_pod_sets()->set_template_json(GetParam());
  ASSERT_OK_AND_ASSIGN(Workload from_text, FromClientProto(as_text));
  EXPECT_EQ(from_text.pod_sets[0].template_json, GetParam());
  EXPECT_TRUE(differencer.Compare(
      ToProto(from_text).spec().pod_sets(0).template_(), original))
      << diff;
}

INSTANTIATE_TEST_SUITE_P(
    Values, TemplateConversionTest,
    ::testing::Values(
        R"({})",
        R"({"spec": {"containers": [{"name": "c", "image": "busybox:1.36",
            "command": ["sh", "-c", "sleep 10"],
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
            "ports": [{"containerPort": 8080}]}],
            "restartPolicy": "Never"},
            "metadata": {"labels": {"app": "x", "kueue.x-k8s.io/queue-name": "q"}}})",
        R"({"ints": [0, 1, -1, 42, 65535, 123456789012, 9007199254740992,
            9007199254740993, 18446744073709551615, 1e15, 1e16, 1e20, 1e21,
            -1e300, 1.7976931348623157e308, 5e-324]})",
        R"({"fractions": [0.5, -0.25, 0.1, 2.5, 3.14159, 1e-7, 1.0000001,
            0.30000000000000004, 123.456e2, -0.0]})",
        R"({"strings": ["", "plain", "quote \" and backslash \\",
            "tab\tnewline\nreturn\r", "\u0001\u001f", "<>&'", "é ü 日本 😀",
            "\u2028\u2029", "/slash"]})",
        R"({"mixed": [null, true, false, {}, [], [[]], {"a": {"b": {"c": [1,
            {"d": null}]}}}], "": "empty key", "key with spaces": 1})"));

TEST(CodecTest, StoredFormKeepsTheTemplateAsTextBothWays) {
  v1::Workload proto;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  R"({"spec": {"containers": [{"name": "c", "image": "i"}]}})",
                  proto.mutable_spec()->add_pod_sets()->mutable_template_())
                  .ok());
  ASSERT_OK_AND_ASSIGN(Workload wl, FromProto(proto));
  const v1::Workload stored = ToStoredProto(wl);
  EXPECT_FALSE(stored.spec().pod_sets(0).has_template_());
  EXPECT_EQ(stored.spec().pod_sets(0).template_json(),
            wl.pod_sets[0].template_json);
  v1::Workload reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(stored.SerializeAsString()));
  ASSERT_OK_AND_ASSIGN(Workload loaded, FromProto(reparsed));
  EXPECT_EQ(loaded, wl);
  // Answers carry the Struct, never the stored text.
  const v1::Workload answer = ToProto(loaded);
  EXPECT_TRUE(answer.spec().pod_sets(0).template_json().empty());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      answer.spec().pod_sets(0).template_(),
      proto.spec().pod_sets(0).template_()));
}

TEST(CodecTest, ClientsMaySendTheTemplateAsText) {
  const std::string text = R"({ "b": 1.0, "a": [2, "\u00e9"] })";
  v1::Workload proto;
  proto.mutable_spec()->add_pod_sets()->set_template_json(text);
  // Kept as given, and answered so when asked.
  ASSERT_OK_AND_ASSIGN(Workload wl, FromClientProto(proto));
  EXPECT_EQ(wl.pod_sets[0].template_json, text);
  const v1::PodSet as_text =
      ToProto(wl, v1::TEMPLATE_FORM_JSON).spec().pod_sets(0);
  EXPECT_EQ(as_text.template_json(), text);
  EXPECT_FALSE(as_text.has_template_());
  // Unasked, as the Struct it stands for.
  const v1::PodSet as_struct = ToProto(wl).spec().pod_sets(0);
  EXPECT_TRUE(as_struct.template_json().empty());
  EXPECT_EQ(as_struct.template_().fields().at("b").number_value(), 1);
  EXPECT_EQ(as_struct.template_()
                .fields()
                .at("a")
                .list_value()
                .values(1)
                .string_value(),
            "\u00e9");
  // A Struct is kept as JSON text with sorted keys, and answered as such.
  v1::Workload from_struct;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(
          text, from_struct.mutable_spec()->add_pod_sets()->mutable_template_())
          .ok());
  ASSERT_OK_AND_ASSIGN(Workload wl2, FromClientProto(from_struct));
  EXPECT_EQ(
      ToProto(wl2, v1::TEMPLATE_FORM_JSON).spec().pod_sets(0).template_json(),
      "{\"a\":[2,\"\u00e9\"],\"b\":1}");
}

TEST(CodecTest, ClientTemplateTextMustBeOneJsonObject) {
  const auto with_text = [](const std::string& text) {
    v1::Workload proto;
    proto.mutable_spec()->add_pod_sets()->set_name("a");
    proto.mutable_spec()->add_pod_sets()->set_template_json(text);
    return FromClientProto(proto).status();
  };
  const std::string path = "spec.podSets[1].templateJson: ";
  EXPECT_THAT(with_text("[1]"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + "must be a JSON object (a PodTemplateSpec), not "
                              "an array"));
  EXPECT_THAT(with_text(R"("spec")"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + "must be a JSON object (a PodTemplateSpec), not "
                              "a string"));
  EXPECT_THAT(with_text(R"({"spec": {"x": [1, -1e400]}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + "number overflow parsing '-1e400'"));
  const absl::Status unparsable = with_text(R"({"spec": )");
  EXPECT_THAT(unparsable,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(path + "parse error at line 1, column 10")));
  EXPECT_THAT(unparsable.message(), Not(HasSubstr("json.exception")));
  EXPECT_THAT(with_text(R"({} {})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(path + "parse error at line 1, column 4")));
  EXPECT_THAT(with_text("{\"a\": \"\xff\"}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(path)));
  EXPECT_OK(with_text(R"( {"spec": {"x": [1, 1e300, null, true]}} )"));
  // No deeper than a Struct can be in an answer: 30 levels.
  const auto nested = [](int levels) {
    std::string text;
    for (int i = 0; i < levels; ++i) text += i % 2 == 0 ? "{\"a\":" : "[";
    text += "1";
    for (int i = levels - 1; i >= 0; --i) text += i % 2 == 0 ? "}" : "]";
    return text;
  };
  EXPECT_OK(with_text(nested(30)));
  EXPECT_THAT(with_text(nested(31)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + "nested deeper than 30 levels"));
  EXPECT_THAT(with_text(nested(100000)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + "nested deeper than 30 levels"));
  // What nlohmann would let through: a NUL ends its input, and it skips a
  // byte order mark.
  EXPECT_THAT(with_text(std::string(R"({"a": 1})") + '\0' + "junk"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + "contains a NUL byte"));
  EXPECT_THAT(with_text("\xEF\xBB\xBF{}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + "starts with a byte order mark"));

  auto both = ParseText<v1::Workload>(R"pb(
    spec {
      pod_sets {
        name: "main"
        template_json: "{}"
        template {}
      }
    }
  )pb");
  EXPECT_THAT(FromClientProto(both),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "spec.podSets[0]: set template or templateJson, not "
                       "both"));
  auto on_disk = ParseText<v1::Workload>(R"pb(
    spec { pod_sets { name: "main" template_on_disk: true } }
  )pb");
  EXPECT_THAT(FromClientProto(on_disk),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.podSets[0].templateOnDisk: set only by "
                                 "kqd's store")));
}

// A template kept on disk is marked in the stored form and never written
// there as text, even while the engine has the text attached.
TEST(CodecTest, StoredFormMarksATemplateKeptOnDisk) {
  Workload wl;
  wl.pod_sets.resize(2);
  wl.pod_sets[0].name = "launcher";
  wl.pod_sets[0].template_on_disk = true;
  wl.pod_sets[0].template_json = R"({"spec":{}})";
  wl.pod_sets[1].name = "workers";
  wl.pod_sets[1].template_json = R"({"inline":true})";
  const v1::Workload stored = ToStoredProto(wl);
  EXPECT_TRUE(stored.spec().pod_sets(0).template_on_disk());
  EXPECT_EQ(stored.spec().pod_sets(0).template_json(), "");
  EXPECT_FALSE(stored.spec().pod_sets(1).template_on_disk());
  EXPECT_EQ(stored.spec().pod_sets(1).template_json(), R"({"inline":true})");
  ASSERT_OK_AND_ASSIGN(Workload loaded, FromProto(stored));
  EXPECT_TRUE(loaded.pod_sets[0].template_on_disk);
  EXPECT_EQ(loaded.pod_sets[0].template_json, "");
  EXPECT_EQ(loaded.pod_sets[1].template_json, R"({"inline":true})");
  // Answers carry the attached text as a Struct and never the mark.
  const v1::Workload answer = ToProto(wl);
  EXPECT_FALSE(answer.spec().pod_sets(0).template_on_disk());
  EXPECT_EQ(answer.spec().pod_sets(0).template_().fields().count("spec"), 1u);
}

// A template sent as a Struct gets its digest from the parsed template, not
// by parsing its text again: the digest of its text all the same, so that
// digests stored before and workloads sent either way stay comparable.
TEST(SpecShapeDigestTest, StructTemplatesGetTheDigestOfTheirText) {
  for (const char* json : {
           R"({})",
           R"({"metadata":{"labels":{"a":"b"}}})",
           R"({"spec":{"containers":[{"name":"c","image":"i",
               "resources":{"requests":{"cpu":"1","memory":"1Gi"},
               "limits":{"cpu":"2"}},"ports":[{"containerPort":80,
               "protocol":"TCP"}],"env":[{"name":"X","value":"1"}]}],
               "restartPolicy":"Never"}})",
           R"({"spec":{"initContainers":[{"resources":{"requests":
               {"cpu":"500m"}}}],"containers":[{"resources":{}},
               {"resources":{"requests":{"nvidia.com/gpu":4}},
               "ports":[]}],"nodeSelector":{"pool":"gpu"},
               "tolerations":[{"key":"k","operator":"Exists",
               "tolerationSeconds":30}],"priority":7,
               "runtimeClassName":"gvisor","overhead":{"cpu":"10m"},
               "resources":{"requests":{"cpu":"1"},"limits":{"cpu":"2"}}}})",
           R"({"spec":{"affinity":{"nodeAffinity":{
               "requiredDuringSchedulingIgnoredDuringExecution":{
               "nodeSelectorTerms":[{"matchExpressions":[{"key":"zone",
               "operator":"In","values":["a","b"]}]}]}}},
               "topologySpreadConstraints":[{"maxSkew":1,
               "topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
               "labelSelector":{"matchLabels":{"app":"x"}}}],
               "resourceClaims":[{"name":"gpu"}],"hostNetwork":true,
               "schedulerName":null,"containers":[[1,2],{"ports":[{
               "containerPort":8080.5}]}]}})",
       }) {
    SCOPED_TRACE(json);
    v1::Workload proto;
    v1::PodSet* ps = proto.mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                    json, ps->mutable_template_())
                    .ok());
    ASSERT_OK_AND_ASSIGN(Workload wl, FromClientProto(proto));
    EXPECT_EQ(wl.pod_sets[0].spec_shape,
              SpecShapeDigest(wl.pod_sets[0].template_json.str()));
    // And the same template sent as text gets the same digest.
    v1::Workload text;
    v1::PodSet* text_ps = text.mutable_spec()->add_pod_sets();
    text_ps->set_name("main");
    text_ps->set_template_json(wl.pod_sets[0].template_json);
    ASSERT_OK_AND_ASSIGN(Workload from_text, FromClientProto(text));
    EXPECT_EQ(from_text.pod_sets[0].spec_shape, wl.pod_sets[0].spec_shape);
  }
}

// kqd makes the digest from the template a client sends, as text or as a
// Struct, ignores one a client sends, and keeps it in the stored form only.
TEST(SpecShapeDigestTest, MadeFromTheClientsTemplateAndStored) {
  auto text = ParseText<v1::Workload>(R"pb(
    spec {
      pod_sets {
        name: "main"
        template_json: "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
        spec_shape: 7
      }
    }
  )pb");
  ASSERT_OK_AND_ASSIGN(Workload from_text, FromClientProto(text));
  const uint64_t digest = from_text.pod_sets[0].spec_shape;
  EXPECT_EQ(digest, SpecShapeDigest(text.spec().pod_sets(0).template_json()));
  EXPECT_NE(digest, 7u);
  auto as_struct = ParseText<v1::Workload>(R"pb(
    spec {
      pod_sets {
        name: "main"
        template {
          fields {
            key: "spec"
            value {
              struct_value {
                fields {
                  key: "containers"
                  value {
                    list_value {
                      values {
                        struct_value {
                          fields {
                            key: "resources"
                            value {
                              struct_value {
                                fields {
                                  key: "requests"
                                  value {
                                    struct_value {
                                      fields {
                                        key: "cpu"
                                        value { string_value: "1" }
                                      }
                                    }
                                  }
                                }
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  )pb");
  ASSERT_OK_AND_ASSIGN(Workload from_struct, FromClientProto(as_struct));
  EXPECT_EQ(from_struct.pod_sets[0].spec_shape, digest);

  from_text.pod_sets[0].template_on_disk = true;
  const v1::Workload stored = ToStoredProto(from_text);
  EXPECT_EQ(stored.spec().pod_sets(0).spec_shape(), digest);
  ASSERT_OK_AND_ASSIGN(Workload loaded, FromProto(stored));
  EXPECT_EQ(loaded.pod_sets[0].spec_shape, digest);
  EXPECT_EQ(ToProto(from_text).spec().pod_sets(0).spec_shape(), 0u);
}

TEST(CodecTest, ClientsCannotMarkATemplateOnDisk) {
  auto proto = ParseText<v1::Workload>(R"pb(
    spec {
      pod_sets { name: "a" }
      pod_sets { name: "b" template_on_disk: true }
    }
  )pb");
  EXPECT_THAT(FromClientProto(proto),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.podSets[1].templateOnDisk")));
}

TEST(CodecTest, NoTemplateMeansEmptyJson) {
  ASSERT_OK_AND_ASSIGN(Workload wl,
                       FromProto(ParseText<v1::Workload>(
                           R"pb(spec { pod_sets { name: "main" } })pb")));
  EXPECT_EQ(wl.pod_sets[0].template_json, "");
  EXPECT_FALSE(ToProto(wl).spec().pod_sets(0).has_template_());
}

TEST(CodecTest, TimestampsKeepNanosecondsAndPreEpochTimes) {
  const std::vector<absl::Time> times = {
      absl::UnixEpoch(),
      absl::FromUnixSeconds(1'700'000'000) + absl::Nanoseconds(999'999'999),
      absl::FromUnixSeconds(-1) + absl::Nanoseconds(1),
      absl::FromUnixSeconds(-86'400 * 365),
      absl::InfiniteFuture(),
      absl::InfinitePast(),
  };
  for (absl::Time t : times) {
    SCOPED_TRACE(absl::FormatTime(t));
    google::protobuf::Timestamp ts = ToProto(t);
    EXPECT_GE(ts.nanos(), 0);
    EXPECT_LT(ts.nanos(), 1'000'000'000);
    EXPECT_EQ(FromProto(ts), t);
  }
  google::protobuf::Timestamp ts =
      ToProto(absl::FromUnixSeconds(-1) + absl::Milliseconds(250));
  EXPECT_EQ(ts.seconds(), -1);
  EXPECT_EQ(ts.nanos(), 250'000'000);
}

TEST(CodecTest, ServerComputedStatusIsIgnored) {
  auto proto = ParseText<v1::ConfigObject>(R"pb(
    cluster_queue {
      metadata { name: "cq" }
      status { pending_workloads: 5 admitted_workloads: 2 }
    }
  )pb");
  ASSERT_OK_AND_ASSIGN(ConfigObject object, FromProto(proto));
  EXPECT_FALSE(ToProto(object).cluster_queue().has_status());
}

// ---------------------------------------------------------------------------
// Errors.

struct ErrorCase {
  std::string name;
  std::string text;  // text-format proto
  std::string want_message;
};

class ConfigObjectErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigObjectErrorTest, NamesTheField) {
  auto proto = ParseText<v1::ConfigObject>(GetParam().text);
  EXPECT_THAT(FromProto(proto), StatusIs(absl::StatusCode::kInvalidArgument,
                                         GetParam().want_message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigObjectErrorTest,
    ::testing::ValuesIn(std::vector<ErrorCase>{
        {.name = "no_kind",
         .text = "",
         .want_message = "config object has no kind set"},
        {.name = "unknown_queueing_strategy",
         .text = R"pb(cluster_queue { spec { queueing_strategy: "X" } })pb",
         .want_message = "spec.queueingStrategy: unsupported value \"X\": "
                         "must be BestEffortFIFO or StrictFIFO"},
        {.name = "unknown_stop_policy",
         .text = R"pb(cluster_queue { spec { stop_policy: "Pause" } })pb",
         .want_message = "spec.stopPolicy: unsupported value \"Pause\": "
                         "must be None, Hold or HoldAndDrain"},
        {.name = "unknown_local_queue_stop_policy",
         .text = R"pb(local_queue { spec { stop_policy: "hold" } })pb",
         .want_message = "spec.stopPolicy: unsupported value \"hold\": "
                         "must be None, Hold or HoldAndDrain"},
        {.name = "unknown_when_can_borrow",
         .text = R"pb(cluster_queue {
                        spec {
                          flavor_fungibility { when_can_borrow: "Borrow" }
                        }
                      })pb",
         .want_message = "spec.flavorFungibility.whenCanBorrow: unsupported "
                         "value \"Borrow\": must be MayStopSearch or "
                         "TryNextFlavor"},
        {.name = "unknown_when_can_preempt",
         .text = R"pb(cluster_queue {
                        spec { flavor_fungibility { when_can_preempt: "x" } }
                      })pb",
         .want_message = "spec.flavorFungibility.whenCanPreempt: unsupported "
                         "value \"x\": must be MayStopSearch or "
                         "TryNextFlavor"},
        {.name = "malformed_nominal_quota",
         .text = R"pb(cluster_queue {
                        spec {
                          resource_groups {
                            flavors {
                              name: "a"
                              resources { name: "cpu" nominal_quota: "1" }
                            }
                            flavors {
                              name: "b"
                              resources { name: "cpu" nominal_quota: "abc" }
                            }
                          }
                        }
                      })pb",
         .want_message = "spec.resourceGroups[0].flavors[1].resources[0]."
                         "nominalQuota: quantity \"abc\" is malformed: "
                         "expected a number"},
        {.name = "empty_nominal_quota",
         .text = R"pb(cohort {
                        spec {
                          resource_groups {}
                          resource_groups {
                            flavors { resources { name: "cpu" } }
                          }
                        }
                      })pb",
         .want_message = "spec.resourceGroups[1].flavors[0].resources[0]."
                         "nominalQuota: quantity \"\" is malformed: empty"},
        {.name = "malformed_borrowing_limit",
         .text = R"pb(cluster_queue {
                        spec {
                          resource_groups {
                            flavors {
                              resources {
                                name: "cpu"
                                nominal_quota: "1"
                                borrowing_limit: "1x"
                              }
                            }
                          }
                        }
                      })pb",
         .want_message = "spec.resourceGroups[0].flavors[0].resources[0]."
                         "borrowingLimit: quantity \"1x\" is malformed: "
                         "unknown suffix \"x\""},
        {.name = "malformed_lending_limit",
         .text = R"pb(cluster_queue {
                        spec {
                          resource_groups {
                            flavors {
                              resources {
                                name: "cpu"
                                nominal_quota: "1"
                                lending_limit: "x"
                              }
                            }
                          }
                        }
                      })pb",
         .want_message = "spec.resourceGroups[0].flavors[0].resources[0]."
                         "lendingLimit: quantity \"x\" is malformed: "
                         "expected a number"},
        {.name = "malformed_fair_sharing_weight",
         .text =
             R"pb(local_queue { spec { fair_sharing { weight: "heavy" } } })pb",
         .want_message = "spec.fairSharing.weight: quantity \"heavy\" is "
                         "malformed: expected a number"},
    }),
    [](const auto& info) { return info.param.name; });

TEST(WorkloadErrorTest, MalformedRequestNamesPodSetAndResource) {
  auto proto = ParseText<v1::Workload>(R"pb(
    spec {
      pod_sets {
        name: "main"
        requests { key: "cpu" value: "abc" }
      }
    }
  )pb");
  EXPECT_THAT(FromProto(proto),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "spec.podSets[0].requests[cpu]: quantity \"abc\" is "
                       "malformed: expected a number"));
}

TEST(WorkloadErrorTest, PriorityClassSourceIsKueuesEnum) {
  for (PriorityClassSource source :
       {PriorityClassSource::kNone, PriorityClassSource::kWorkloadPriorityClass,
        PriorityClassSource::kPodPriorityClass}) {
    v1::Workload proto;
    proto.mutable_spec()->set_priority_class_source(
        PriorityClassSourceName(source));
    ASSERT_OK_AND_ASSIGN(Workload wl, FromClientProto(proto));
    EXPECT_EQ(wl.priority_class_source, source);
    EXPECT_EQ(ToProto(wl).spec().priority_class_source(),
              PriorityClassSourceName(source));
  }
  v1::Workload proto;
  proto.mutable_spec()->set_priority_class_source("example.com/mine");
  EXPECT_THAT(FromClientProto(proto),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "spec.priorityClassSource: Unsupported value: "
                       "\"example.com/mine\": supported values: "
                       "\"kueue.x-k8s.io/workloadpriorityclass\", "
                       "\"scheduling.k8s.io/priorityclass\", \"\""));
  // A row stored before kq checked the value still loads, without it.
  ASSERT_OK_AND_ASSIGN(Workload stored, FromProto(proto));
  EXPECT_EQ(stored.priority_class_source, PriorityClassSource::kNone);
}

TEST(WorkloadErrorTest, MalformedRequestInSecondPodSet) {
  auto proto = ParseText<v1::Workload>(R"pb(
    spec {
      pod_sets {
        name: "a"
        requests { key: "cpu" value: "1" }
      }
      pod_sets {
        name: "b"
        requests { key: "memory" value: "1Qi" }
      }
    }
  )pb");
  EXPECT_THAT(FromProto(proto),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.podSets[1].requests[memory]: ")));
}

TEST(WorkloadErrorTest, MalformedResourceUsage) {
  auto proto = ParseText<v1::Workload>(R"pb(
    status {
      admission {
        pod_set_assignments {}
        pod_set_assignments { resource_usage { key: "cpu" value: "?" } }
      }
    }
  )pb");
  EXPECT_THAT(
      FromProto(proto),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("status.admission.podSetAssignments[1]."
                         "resourceUsage[cpu]: quantity \"?\" is malformed")));
}

TEST(WorkloadErrorTest, ValidWorkloadParses) {
  auto proto = ParseText<v1::Workload>(R"pb(
    metadata { name: "w" namespace: "ns" }
    spec {
      queue_name: "lq"
      pod_sets {
        name: "main"
        count: 2
        requests { key: "cpu" value: "2" }
      }
    }
  )pb");
  EXPECT_THAT(FromProto(proto), IsOkAndHolds(WorkloadBuilder("w")
                                                 .Namespace("ns")
                                                 .Queue("lq")
                                                 .PodSet("main", 2)
                                                 .Request("cpu", "2")
                                                 .Build()));
}

// ---------------------------------------------------------------------------
// Kueue's Configuration. Error cases named like Kueue's TestValidate
// (pkg/config/validation_test.go) are its cases for values that kq's enums
// cannot hold, so the codec refuses them; Kueue names the list field
// (fairSharing.preemptionStrategies), kq the element.

constexpr FairSharingStrategy kS2a =
    FairSharingStrategy::kLessThanOrEqualToFinalShare;
constexpr FairSharingStrategy kS2b = FairSharingStrategy::kLessThanInitialShare;

TEST(ConfigurationCodecTest, EmptyProtoIsKueuesDefaults) {
  EXPECT_THAT(FromProto(v1::Configuration()), IsOkAndHolds(Configuration{}));
}

TEST(ConfigurationCodecTest, FairSharingWithoutStrategiesGetsTheDefaultList) {
  ASSERT_OK_AND_ASSIGN(
      Configuration config,
      FromProto(ParseText<v1::Configuration>("fair_sharing {}")));
  ASSERT_TRUE(config.fair_sharing.has_value());
  EXPECT_EQ(config.fair_sharing->preemption_strategies,
            (std::vector<FairSharingStrategy>{kS2a, kS2b}));
}

TEST(ConfigurationCodecTest, StrategiesKeepTheirOrder) {
  const std::vector<std::pair<std::string, std::vector<FairSharingStrategy>>>
      cases = {
          {R"pb(preemption_strategies: "LessThanOrEqualToFinalShare")pb",
           {kS2a}},
          {R"pb(preemption_strategies: "LessThanInitialShare")pb", {kS2b}},
          {R"pb(preemption_strategies: "LessThanOrEqualToFinalShare"
                preemption_strategies: "LessThanInitialShare")pb",
           {kS2a, kS2b}},
      };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    ASSERT_OK_AND_ASSIGN(
        Configuration config,
        FromProto(ParseText<v1::Configuration>("fair_sharing {" + text + "}")));
    ASSERT_TRUE(config.fair_sharing.has_value());
    EXPECT_EQ(config.fair_sharing->preemption_strategies, want);
  }
}

TEST(ConfigurationCodecTest, Resources) {
  auto proto = ParseText<v1::Configuration>(R"pb(
    resources {
      quota_check_strategy: "IgnoreUndeclared"
      transformations {
        input: "nvidia.com/mig-1g.5gb"
        strategy: "Replace"
        outputs { key: "example.com/accelerator-memory" value: "5Ki" }
        outputs { key: "example.com/credits" value: "10" }
      }
      transformations {
        input: "nvidia.com/gpucores"
        multiply_by: "nvidia.com/gpu"
        outputs { key: "nvidia.com/total-gpucores" value: "1" }
      }
      transformations {
        input: "nvidia.com/gpu"
        strategy: "Retain"
        outputs { key: "quota.example.com/overage" value: "-1024" }
      }
    }
  )pb");
  Configuration want;
  want.resources.quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared;
  want.resources.transformations = {
      {.input = "nvidia.com/mig-1g.5gb",
       .strategy = TransformationStrategy::kReplace,
       .outputs = {{"example.com/accelerator-memory", Qty("5Ki")},
                   {"example.com/credits", Qty("10")}}},
      {.input = "nvidia.com/gpucores",
       .strategy = TransformationStrategy::kRetain,
       .multiply_by = "nvidia.com/gpu",
       .outputs = {{"nvidia.com/total-gpucores", Qty("1")}}},
      {.input = "nvidia.com/gpu",
       .strategy = TransformationStrategy::kRetain,
       .outputs = {{"quota.example.com/overage", Qty("-1024")}}},
  };
  EXPECT_THAT(FromProto(proto), IsOkAndHolds(want));

  auto block = ParseText<v1::Configuration>(R"pb(
    resources {
      quota_check_strategy: "BlockUndeclared"
      exclude_resource_prefixes: "networking.example.com/"
      exclude_resource_prefixes: "storage.example.com/"
    }
  )pb");
  Configuration want_block;
  want_block.resources.exclude_resource_prefixes = {"networking.example.com/",
                                                    "storage.example.com/"};
  EXPECT_THAT(FromProto(block), IsOkAndHolds(want_block));
}

struct ConfigurationErrorCase {
  std::string name;
  std::string text;  // text-format v1::Configuration
  std::string want_message;
};

class ConfigurationErrorTest
    : public ::testing::TestWithParam<ConfigurationErrorCase> {};

TEST_P(ConfigurationErrorTest, NamesTheField) {
  auto proto = ParseText<v1::Configuration>(GetParam().text);
  EXPECT_THAT(FromProto(proto), StatusIs(absl::StatusCode::kInvalidArgument,
                                         GetParam().want_message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigurationErrorTest,
    ::testing::ValuesIn(std::vector<ConfigurationErrorCase>{
        // Kueue's "unsupported preemption strategy".
        {.name = "unsupported_preemption_strategy",
         .text = R"pb(fair_sharing {
                        preemption_strategies: "LessThanOrEqualToFinalShare"
                        preemption_strategies: "UNKNOWN"
                        preemption_strategies: "LessThanInitialShare"
                        preemption_strategies: "LessThanOrEqualToFinalShare"
                      })pb",
         .want_message = "fairSharing.preemptionStrategies[1]: unsupported "
                         "value \"UNKNOWN\": must be "
                         "LessThanOrEqualToFinalShare or "
                         "LessThanInitialShare"},
        {.name = "known_strategies_in_an_unsupported_order",
         .text = R"pb(fair_sharing {
                        preemption_strategies: "LessThanInitialShare"
                        preemption_strategies: "LessThanOrEqualToFinalShare"
                      })pb",
         .want_message = "fairSharing.preemptionStrategies: Unsupported "
                         "value: [LessThanInitialShare, "
                         "LessThanOrEqualToFinalShare]: supported values: "
                         "[LessThanOrEqualToFinalShare], "
                         "[LessThanInitialShare], "
                         "[LessThanOrEqualToFinalShare, "
                         "LessThanInitialShare]"},
        // Kueue's "invalid .resources.transformations.strategy".
        {.name = "invalid_resources_transformations_strategy",
         .text = R"pb(resources {
                        transformations { input: "cpu" strategy: "invalid" }
                      })pb",
         .want_message = "resources.transformations[0].strategy: unsupported "
                         "value \"invalid\": must be Retain or Replace"},
        {.name = "transformation_strategy_is_case_sensitive",
         .text = R"pb(resources {
                        transformations { input: "cpu" }
                        transformations { input: "memory" strategy: "replace" }
                      })pb",
         .want_message = "resources.transformations[1].strategy: unsupported "
                         "value \"replace\": must be Retain or Replace"},
        // Kueue's "quotaCheckStrategy with unsupported value".
        {.name = "quota_check_strategy_with_unsupported_value",
         .text = R"pb(resources { quota_check_strategy: "test" })pb",
         .want_message = "resources.quotaCheckStrategy: unsupported value "
                         "\"test\": must be BlockUndeclared or "
                         "IgnoreUndeclared"},
        {.name = "malformed_output_quantity",
         .text = R"pb(resources {
                        transformations {
                          input: "nvidia.com/mig-1g.5gb"
                          outputs { key: "cpu" value: "abc" }
                        }
                      })pb",
         .want_message = "resources.transformations[0].outputs[cpu]: "
                         "quantity \"abc\" is malformed: expected a number"},
        {.name = "malformed_output_quantity_in_second_transformation",
         .text = R"pb(resources {
                        transformations {
                          input: "a"
                          outputs { key: "x" value: "1" }
                        }
                        transformations {
                          input: "b"
                          outputs { key: "memory" value: "1Qi" }
                        }
                      })pb",
         .want_message = "resources.transformations[1].outputs[memory]: "
                         "quantity \"1Qi\" is malformed: unknown suffix "
                         "\"Qi\""},
        // Validated after conversion: Kueue's "invalid
        // .resources.transformations.inputs" and "quotaCheckStrategy with
        // value ignoreUndeclared not allowed with excludeResourcePrefixes".
        {.name = "invalid_resources_transformations_inputs",
         .text = R"pb(resources {
                        transformations { input: "cpu" strategy: "Retain" }
                        transformations { input: "memory" strategy: "Retain" }
                        transformations { input: "cpu" strategy: "Retain" }
                      })pb",
         .want_message = "resources.transformations[2].input: Duplicate "
                         "value: \"cpu\""},
        {.name = "ignore_undeclared_with_exclude_resource_prefixes",
         .text = R"pb(resources {
                        quota_check_strategy: "IgnoreUndeclared"
                        exclude_resource_prefixes: "foo.com/device"
                      })pb",
         .want_message = "resources.quotaCheckStrategy: Invalid value: "
                         "\"IgnoreUndeclared\": excludeResourcePrefixes is "
                         "not allowed when quotaCheckStrategy is "
                         "IgnoreUndeclared"},
    }),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// ProvisioningRequestConfig and podSetUpdates.

TEST(ProvisioningRequestConfigCodecTest, RoundTripsEveryField) {
  ProvisioningRequestConfig want;
  want.meta.name = "gpu-provision-config";
  want.meta.uid = "u-prc";
  want.meta.revision = 7;
  want.meta.creation_timestamp = kCreated;
  want.provisioning_class_name = "queued-provisioning.gke.io";
  want.parameters = {{"ValidUntilSeconds", "3600"}, {"empty", ""}};
  want.managed_resources = {"nvidia.com/gpu", "cpu"};
  want.retry_strategy = {.backoff_limit_count = 0,
                         .backoff_base_seconds = 5,
                         .backoff_max_seconds = 90};
  want.pod_set_updates_node_selector = {
      {"cloud.google.com/gke-nodepool", "NodePoolName"}, {"zone", "Zone"}};
  want.pod_set_merge_policy = "IdenticalPodTemplates";
  v1::ConfigObject proto = ToProto(ConfigObject(want));
  ASSERT_TRUE(proto.has_provisioning_request_config());
  v1::ConfigObject reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(proto.SerializeAsString()));
  ASSERT_OK_AND_ASSIGN(ConfigObject got, FromProto(reparsed));
  EXPECT_TRUE(got == ConfigObject(want)) << ProtoDiff(proto, ToProto(got));
  EXPECT_EQ(KeyOf(got).kind, ObjectKind::kProvisioningRequestConfig);
}

// Kueue's CRD defaults: retryStrategy absent, or fields of it absent, read
// as backoffLimitCount 3, backoffBaseSeconds 60, backoffMaxSeconds 1800;
// what is set (0 included) stays.
TEST(ProvisioningRequestConfigCodecTest, RetryStrategyDefaults) {
  ASSERT_OK_AND_ASSIGN(ConfigObject absent,
                       FromProto(ParseText<v1::ConfigObject>(R"pb(
                         provisioning_request_config {
                           metadata { name: "c" }
                           spec { provisioning_class_name: "c" }
                         })pb")));
  EXPECT_EQ(std::get<ProvisioningRequestConfig>(absent).retry_strategy,
            (ProvisioningRequestRetryStrategy{.backoff_limit_count = 3,
                                              .backoff_base_seconds = 60,
                                              .backoff_max_seconds = 1800}));
  ASSERT_OK_AND_ASSIGN(
      ConfigObject partial, FromProto(ParseText<v1::ConfigObject>(R"pb(
        provisioning_request_config {
          metadata { name: "c" }
          spec {
            provisioning_class_name: "c"
            retry_strategy { backoff_limit_count: 2 backoff_base_seconds: 0 }
          }
        })pb")));
  EXPECT_EQ(std::get<ProvisioningRequestConfig>(partial).retry_strategy,
            (ProvisioningRequestRetryStrategy{.backoff_limit_count = 2,
                                              .backoff_base_seconds = 0,
                                              .backoff_max_seconds = 1800}));
  // The server writes the defaulted values, as `kubectl get` shows them.
  const v1::ProvisioningRequestRetryStrategy written =
      ToProto(absent).provisioning_request_config().spec().retry_strategy();
  EXPECT_TRUE(written.has_backoff_limit_count());
  EXPECT_EQ(written.backoff_limit_count(), 3);
  EXPECT_EQ(written.backoff_base_seconds(), 60);
  EXPECT_EQ(written.backoff_max_seconds(), 1800);
}

TEST(WorkloadRoundTripTest, AdmissionCheckPodSetUpdates) {
  Workload want = WorkloadBuilder("w")
                      .Queue("lq")
                      .PodSet("ps1", 1)
                      .Request("cpu", "1")
                      .PodSet("ps2", 1)
                      .Request("cpu", "1")
                      .AdmissionCheck("prov", "Ready", "provisioned", kLater)
                      .AdmissionCheck("other", "Pending")
                      .Build();
  want.admission_checks[0].pod_set_updates = {
      {.name = "ps1",
       .labels = {{"l1", "l1v"}},
       .annotations = {{"a1", "a1v"}},
       .node_selector = {{"ns1", "ms1v"}},
       .tolerations = {{.key = "t1",
                        .op = "Equal",
                        .value = "t1v",
                        .effect = "NoExecute",
                        .toleration_seconds = 5}}},
      {.name = "ps2"}};
  v1::Workload proto = ToProto(want);
  ASSERT_EQ(proto.status().admission_checks(0).pod_set_updates_size(), 2);
  EXPECT_EQ(proto.status().admission_checks(1).pod_set_updates_size(), 0);
  v1::Workload reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(proto.SerializeAsString()));
  ASSERT_OK_AND_ASSIGN(Workload got, FromProto(reparsed));
  EXPECT_TRUE(got == want) << ProtoDiff(proto, ToProto(got));
  EXPECT_EQ(FromProto(proto.status().admission_checks(0).pod_set_updates(0)),
            want.admission_checks[0].pod_set_updates[0]);
}

}  // namespace
}  // namespace kq::codec
