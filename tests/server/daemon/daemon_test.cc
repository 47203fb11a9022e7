// Tests of kqd's --config file reading (ReadConfigurationFile): one Kueue
// Configuration document, converted and validated, or an error naming the
// file.

#include "server/daemon/daemon.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/core/config.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::daemon {
namespace {

using ::kq::testing::IsOkAndHolds;
using ::kq::testing::Qty;
using ::kq::testing::ScopedTempDir;
using ::kq::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kWantOneConfiguration[] =
    "expected exactly one document of kind Configuration "
    "(config.kueue.x-k8s.io/v1beta1 or v1beta2)";

class ReadConfigurationFileTest : public ::testing::Test {
 protected:
  // Writes `text` to a file in the test's directory; returns its path.
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_.File(name);
    std::ofstream out(path);
    out << text;
    return path;
  }

  ScopedTempDir dir_{"kq_config"};
};

TEST_F(ReadConfigurationFileTest, V1beta2Configuration) {
  const std::string path = Write("config.yaml", R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: :8081
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
resources:
  quotaCheckStrategy: IgnoreUndeclared
  transformations:
  - input: nvidia.com/mig-1g.5gb
    strategy: Replace
    outputs:
      example.com/accelerator-memory: 5Ki
      example.com/credits: 10
)");
  Configuration want;
  want.fair_sharing = FairSharingConfig{
      .preemption_strategies = {FairSharingStrategy::kLessThanInitialShare}};
  want.resources.quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared;
  want.resources.transformations = {
      {.input = "nvidia.com/mig-1g.5gb",
       .strategy = TransformationStrategy::kReplace,
       .outputs = {{"example.com/accelerator-memory", Qty("5Ki")},
                   {"example.com/credits", Qty("10")}}}};
  EXPECT_THAT(ReadConfigurationFile(path), IsOkAndHolds(want));
}

TEST_F(ReadConfigurationFileTest, V1beta1ConfigurationWithWarnings) {
  // Warnings (an unknown field, an ignored admission setting) are logged,
  // not fatal.
  const std::string path = Write("config.yaml", R"(
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing: {enable: true}
waitForPodsReady: {enable: true, timeout: 5m}
resources:
  excludeResourcePrefixes: [networking.example.com/]
  unknownField: 1
)");
  Configuration want;
  want.fair_sharing = FairSharingConfig{};
  want.resources.exclude_resource_prefixes = {"networking.example.com/"};
  EXPECT_THAT(ReadConfigurationFile(path), IsOkAndHolds(want));
}

TEST_F(ReadConfigurationFileTest, JsonConfiguration) {
  const std::string path =
      Write("config.json",
            R"({"apiVersion": "config.kueue.x-k8s.io/v1beta2",
          "kind": "Configuration",
          "resources": {"excludeResourcePrefixes": ["example.com/"]}})");
  Configuration want;
  want.resources.exclude_resource_prefixes = {"example.com/"};
  EXPECT_THAT(ReadConfigurationFile(path), IsOkAndHolds(want));
}

TEST_F(ReadConfigurationFileTest, MissingFileIsNotFound) {
  const std::string path = dir_.File("absent");
  EXPECT_THAT(
      ReadConfigurationFile(path),
      StatusIs(absl::StatusCode::kNotFound, "--config: cannot read " + path));
}

struct BadFileCase {
  std::string name;
  std::string text;
  std::string want_message;  // after "<path>: "
};

class ReadConfigurationFileErrorTest
    : public ReadConfigurationFileTest,
      public ::testing::WithParamInterface<BadFileCase> {};

TEST_P(ReadConfigurationFileErrorTest, IsInvalidArgumentNamingTheFile) {
  const std::string path = Write("config.yaml", GetParam().text);
  EXPECT_THAT(ReadConfigurationFile(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       path + ": " + GetParam().want_message));
}

constexpr char kV1beta2Header[] =
    "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, ReadConfigurationFileErrorTest,
    ::testing::ValuesIn(std::vector<BadFileCase>{
        {.name = "two_documents",
         .text = std::string(kV1beta2Header) + "---\n" + kV1beta2Header,
         .want_message = std::string(kWantOneConfiguration) +
                         ", got 2 documents"},
        {.name = "empty_file",
         .text = "",
         .want_message = std::string(kWantOneConfiguration) +
                         ", got 0 documents"},
        {.name = "cluster_queue_document",
         .text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
                 "metadata: {name: cq}\n",
         .want_message = std::string(kWantOneConfiguration) +
                         ", got kind ClusterQueue (kueue.x-k8s.io/v1beta2)"},
        {.name = "config_map_document",
         .text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue}\n"
                 "data: {controller_manager_config.yaml: \"\"}\n",
         .want_message = std::string(kWantOneConfiguration) +
                         ", got kind ConfigMap (v1)"},
        {.name = "unserved_configuration_version",
         .text = "apiVersion: config.kueue.x-k8s.io/v1\nkind: Configuration\n",
         .want_message = "apiVersion: Configuration is not served in "
                         "config.kueue.x-k8s.io/v1; use "
                         "config.kueue.x-k8s.io/v1beta1 or "
                         "config.kueue.x-k8s.io/v1beta2"},
        {.name = "bad_strategy",
         .text = std::string(kV1beta2Header) +
                 "fairSharing: {preemptionStrategies: [Fastest]}\n",
         .want_message = "fairSharing.preemptionStrategies[0]: unsupported "
                         "value \"Fastest\": must be "
                         "LessThanOrEqualToFinalShare or "
                         "LessThanInitialShare"},
        {.name = "unsupported_strategy_order",
         .text = std::string(kV1beta2Header) +
                 "fairSharing:\n  preemptionStrategies: "
                 "[LessThanInitialShare, LessThanOrEqualToFinalShare]\n",
         .want_message = "fairSharing.preemptionStrategies: Unsupported "
                         "value: [LessThanInitialShare, "
                         "LessThanOrEqualToFinalShare]: supported values: "
                         "[LessThanOrEqualToFinalShare], "
                         "[LessThanInitialShare], "
                         "[LessThanOrEqualToFinalShare, "
                         "LessThanInitialShare]"},
        {.name = "v1beta2_fair_sharing_without_strategies",
         .text = std::string(kV1beta2Header) + "fairSharing: {}\n",
         .want_message = "fairSharing.preemptionStrategies: required "
                         "(v1beta2 has no default; v1beta1's is "
                         "[LessThanOrEqualToFinalShare, "
                         "LessThanInitialShare])"},
        {.name = "bad_transformation_strategy",
         .text = std::string(kV1beta2Header) +
                 "resources:\n  transformations: [{input: cpu, strategy: "
                 "Swap}]\n",
         .want_message = "resources.transformations[0].strategy: unsupported "
                         "value \"Swap\": must be Retain or Replace"},
        {.name = "bad_output_quantity",
         .text = std::string(kV1beta2Header) +
                 "resources:\n  transformations: [{input: gpu, outputs: "
                 "{cpu: lots}}]\n",
         .want_message = "resources.transformations[0].outputs[cpu]: "
                         "quantity \"lots\" is malformed: expected a number"},
        {.name = "ignore_undeclared_with_excluded_prefixes",
         .text = std::string(kV1beta2Header) +
                 "resources:\n  quotaCheckStrategy: IgnoreUndeclared\n"
                 "  excludeResourcePrefixes: [foo.com/device]\n",
         .want_message = "resources.quotaCheckStrategy: Invalid value: "
                         "\"IgnoreUndeclared\": excludeResourcePrefixes is "
                         "not allowed when quotaCheckStrategy is "
                         "IgnoreUndeclared"},
        {.name = "wrong_type",
         .text = std::string(kV1beta2Header) + "resources: [cpu]\n",
         .want_message = "resources: must be an object, got a list"},
    }),
    [](const auto& info) { return info.param.name; });

TEST_F(ReadConfigurationFileTest, YamlSyntaxErrorNamesTheFile) {
  const std::string path =
      Write("config.yaml", std::string(kV1beta2Header) + "resources: [a\n");
  EXPECT_THAT(
      ReadConfigurationFile(path),
      StatusIs(absl::StatusCode::kInvalidArgument, StartsWith(path + ": ")));
}

}  // namespace
}  // namespace kq::daemon
