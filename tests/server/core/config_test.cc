// Tests of Kueue's Configuration in kq: ValidateConfiguration, ported from
// pkg/config/validation_test.go (TestValidate), and EffectiveRequests,
// ported from the exclusion and transformation cases of
// pkg/workload/workload_test.go (TestNewInfo).
//
// Not ported here, with the reason:
//   TestValidate:
//   - "unsupported preemption strategy", "invalid .resources.transformations
//     .strategy", "quotaCheckStrategy with unsupported value": unknown
//     strings cannot be represented by kq's enums; the codec refuses them
//     (tests/server/codec/codec_test.cc ports them).
//   - "quotaCheckStrategy validation skipped when feature gate disabled":
//     kq runs with Kueue's default gates (QuotaCheckStrategy on).
//   TestNewInfo: the cases without exclusions or transformations test
//   workload.Info (reclaimable pods, admission usage, DRA), not
//   EffectiveRequests.

#include "server/core/config.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/core/quantity.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq {
namespace {

using ::kq::testing::IsOk;
using ::kq::testing::Qty;
using ::kq::testing::StatusIs;

constexpr FairSharingStrategy kS2a =
    FairSharingStrategy::kLessThanOrEqualToFinalShare;
constexpr FairSharingStrategy kS2b = FairSharingStrategy::kLessThanInitialShare;
constexpr TransformationStrategy kRetain = TransformationStrategy::kRetain;
constexpr TransformationStrategy kReplace = TransformationStrategy::kReplace;

// A Kueue case name as a gtest name: runs of other characters become "_".
std::string TestName(const std::string& kueue_name) {
  std::string out;
  bool separator = false;
  for (char c : kueue_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (separator && !out.empty()) out += '_';
      separator = false;
      out += c;
    } else {
      separator = true;
    }
  }
  return out;
}

ResourceList Resources(const std::map<std::string, std::string>& literals) {
  ResourceList list;
  for (const auto& [name, text] : literals) list[name] = Qty(text);
  return list;
}

// ---------------------------------------------------------------------------
// ValidateConfiguration

struct ValidateCase {
  std::string name;  // Kueue's, or kq's own in snake_case
  Configuration config;
  std::string want_error;  // empty: valid
};

void PrintTo(const ValidateCase& tc, std::ostream* os) { *os << tc.name; }

class ValidateConfigurationTest
    : public ::testing::TestWithParam<ValidateCase> {};

TEST_P(ValidateConfigurationTest, Validate) {
  const ValidateCase& tc = GetParam();
  if (tc.want_error.empty()) {
    EXPECT_THAT(ValidateConfiguration(tc.config), IsOk());
  } else {
    EXPECT_THAT(ValidateConfiguration(tc.config),
                StatusIs(absl::StatusCode::kInvalidArgument, tc.want_error));
  }
}

Configuration WithStrategies(std::vector<FairSharingStrategy> strategies) {
  Configuration config;
  config.fair_sharing.emplace().preemption_strategies = std::move(strategies);
  return config;
}

Configuration WithResources(ResourceConfig resources) {
  Configuration config;
  config.resources = std::move(resources);
  return config;
}

constexpr char kSupportedStrategies[] =
    "supported values: [LessThanOrEqualToFinalShare], "
    "[LessThanInitialShare], [LessThanOrEqualToFinalShare, "
    "LessThanInitialShare]";

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidateConfigurationTest,
    ::testing::ValuesIn(std::vector<ValidateCase>{
        // Kueue's TestValidate.
        {.name = "invalid an empty preemption strategy",
         .config = WithStrategies({}),
         .want_error = "fairSharing.preemptionStrategies: Required value: "
                       "must be specified"},
        {.name = "valid preemption strategy",
         .config = WithStrategies({kS2a, kS2b})},
        {.name = "invalid .resources.transformations.inputs",
         .config = WithResources(
             {.transformations = {{.input = "cpu", .strategy = kRetain},
                                  {.input = "memory", .strategy = kRetain},
                                  {.input = "cpu", .strategy = kRetain}}}),
         .want_error = "resources.transformations[2].input: Duplicate value: "
                       "\"cpu\""},
        {.name = "valid .resources.transformations",
         .config = WithResources(
             {.transformations = {{.input = "cpu", .strategy = kRetain},
                                  {.input = "memory", .strategy = kReplace}}})},
        {.name = "quotaCheckStrategy with value ignoreUndeclared not allowed "
                 "with excludeResourcePrefixes",
         .config = WithResources(
             {.exclude_resource_prefixes = {"foo.com/device"},
              .quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared}),
         .want_error = "resources.quotaCheckStrategy: Invalid value: "
                       "\"IgnoreUndeclared\": excludeResourcePrefixes is not "
                       "allowed when quotaCheckStrategy is IgnoreUndeclared"},
        {.name = "quotaCheckStrategy with value ignoreundeclared allowed "
                 "without excludeResourcePrefixes",
         .config = WithResources(
             {.quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared})},
        {.name = "quotaCheckStrategy with value blockundeclared allowed with "
                 "excludeResourcePrefixes",
         .config = WithResources(
             {.exclude_resource_prefixes = {"foo.com/device"},
              .quota_check_strategy = QuotaCheckStrategy::kBlockUndeclared})},
        // kq's own: every list Kueue's validStrategySets accepts, and orders
        // or repeats it does not.
        {.name = "default_configuration", .config = Configuration{}},
        {.name = "default_fair_sharing",
         .config = Configuration{.fair_sharing = FairSharingConfig{}}},
        {.name = "less_than_or_equal_to_final_share_alone",
         .config = WithStrategies({kS2a})},
        {.name = "less_than_initial_share_alone",
         .config = WithStrategies({kS2b})},
        {.name = "reversed_order",
         .config = WithStrategies({kS2b, kS2a}),
         .want_error = std::string("fairSharing.preemptionStrategies: "
                                   "Unsupported value: [LessThanInitialShare, "
                                   "LessThanOrEqualToFinalShare]: ") +
                       kSupportedStrategies},
        {.name = "repeated_strategy",
         .config = WithStrategies({kS2a, kS2a}),
         .want_error = std::string(
                           "fairSharing.preemptionStrategies: Unsupported "
                           "value: [LessThanOrEqualToFinalShare, "
                           "LessThanOrEqualToFinalShare]: ") +
                       kSupportedStrategies},
        {.name = "three_strategies",
         .config = WithStrategies({kS2a, kS2b, kS2a}),
         .want_error = std::string(
                           "fairSharing.preemptionStrategies: Unsupported "
                           "value: [LessThanOrEqualToFinalShare, "
                           "LessThanInitialShare, "
                           "LessThanOrEqualToFinalShare]: ") +
                       kSupportedStrategies},
        {.name = "duplicate_input_second",
         .config =
             WithResources({.transformations = {{.input = "nvidia.com/gpu"},
                                                {.input = "nvidia.com/gpu",
                                                 .strategy = kReplace}}}),
         .want_error = "resources.transformations[1].input: Duplicate value: "
                       "\"nvidia.com/gpu\""},
        {.name = "empty_input",
         .config = WithResources({.transformations = {{.input = "cpu"},
                                                      {.input = ""}}}),
         .want_error = "resources.transformations[1].input: Required value"},
        // Kueue lists the transformation errors before the quota check
        // strategy's; kq returns the first.
        {.name = "transformations_error_comes_first",
         .config = WithResources(
             {.exclude_resource_prefixes = {"foo.com/"},
              .transformations = {{.input = "cpu"}, {.input = "cpu"}},
              .quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared}),
         .want_error = "resources.transformations[1].input: Duplicate value: "
                       "\"cpu\""},
        {.name = "fair_sharing_error_comes_first",
         .config = Configuration{.fair_sharing =
                                     FairSharingConfig{
                                         .preemption_strategies = {kS2b, kS2a}},
                                 .resources =
                                     {.transformations = {{.input = "cpu"},
                                                          {.input = "cpu"}}}},
         .want_error = std::string("fairSharing.preemptionStrategies: "
                                   "Unsupported value: [LessThanInitialShare, "
                                   "LessThanOrEqualToFinalShare]: ") +
                       kSupportedStrategies},
        {.name = "excluded_prefixes_and_transformations_with_block_undeclared",
         .config = WithResources(
             {.exclude_resource_prefixes = {"example.com/"},
              .transformations = {{.input = "cpu",
                                   .outputs = Resources({{"credits",
                                                          "1"}})}}})},
    }),
    [](const auto& info) { return TestName(info.param.name); });

TEST(FairSharingConfigTest, DefaultsAreKueuesV1beta1Defaults) {
  EXPECT_EQ(FairSharingConfig{}.preemption_strategies,
            (std::vector<FairSharingStrategy>{kS2a, kS2b}));
  EXPECT_STREQ(FairSharingStrategyName(kS2a), "LessThanOrEqualToFinalShare");
  EXPECT_STREQ(FairSharingStrategyName(kS2b), "LessThanInitialShare");
  const Configuration config;
  EXPECT_FALSE(config.fair_sharing.has_value());
  EXPECT_EQ(config.resources.quota_check_strategy,
            QuotaCheckStrategy::kBlockUndeclared);
}

// ---------------------------------------------------------------------------
// EffectiveRequests, as Kueue's Info.TotalRequests sees it.

struct PodSetIn {
  std::string name;
  int32_t count = 1;
  std::map<std::string, std::string> requests;  // per pod, literals
};

struct PodSetWant {
  std::string name;
  std::map<std::string, int64_t> requests;  // Kueue's amounts, all pods
};

struct EffectiveRequestsCase {
  std::string name;  // Kueue's
  std::vector<PodSetIn> pod_sets;
  ResourceConfig resources;
  std::vector<PodSetWant> want;
};

void PrintTo(const EffectiveRequestsCase& tc, std::ostream* os) {
  *os << tc.name;
}

// Kueue's totalRequestsFromPodSets without reclaim or DRA: the effective
// per-pod requests as amounts (milli-CPU, whole units otherwise), floored
// at zero and multiplied by the count.
std::map<std::string, int64_t> TotalRequests(const PodSetIn& ps,
                                             const ResourceConfig& resources) {
  std::map<std::string, int64_t> total;
  for (const auto& [name, q] :
       EffectiveRequests(Resources(ps.requests), resources)) {
    total[name] =
        SaturatingMul(std::max<int64_t>(0, ResourceAmount(name, q)), ps.count);
  }
  return total;
}

class NewInfoTotalRequestsTest
    : public ::testing::TestWithParam<EffectiveRequestsCase> {};

TEST_P(NewInfoTotalRequestsTest, EffectiveRequests) {
  const EffectiveRequestsCase& tc = GetParam();
  ASSERT_EQ(tc.pod_sets.size(), tc.want.size());
  for (size_t i = 0; i < tc.pod_sets.size(); ++i) {
    SCOPED_TRACE("pod set " + tc.want[i].name);
    EXPECT_EQ(TotalRequests(tc.pod_sets[i], tc.resources), tc.want[i].requests);
  }
}

// The transformations of Kueue's "transformAllowance*" cases: memory above
// 1024 per GPU is charged as overage.
ResourceConfig GpuMemoryAllowance() {
  return {.transformations = {
              {.input = "nvidia.com/gpumem",
               .strategy = kReplace,
               .multiply_by = "nvidia.com/gpu",
               .outputs =
                   Resources({{"quota.example.com/gpu-memory-overage", "1"}})},
              {.input = "nvidia.com/gpu",
               .strategy = kRetain,
               .outputs = Resources(
                   {{"quota.example.com/gpu-memory-overage", "-1024"}})}}};
}

INSTANTIATE_TEST_SUITE_P(
    TestNewInfo, NewInfoTotalRequestsTest,
    ::testing::ValuesIn(std::vector<EffectiveRequestsCase>{
        {.name = "filterResources",
         .pod_sets = {{.name = "main",
                       .requests = {{"cpu", "10m"},
                                    {"memory", "512Ki"},
                                    {"networking.example.com/vpc1", "1"}}}},
         .resources = {.exclude_resource_prefixes =
                           {"dummyPrefix", "networking.example.com/"}},
         .want = {{.name = "main",
                   .requests = {{"cpu", 10}, {"memory", 512 * 1024}}}}},
        {.name = "transformResources",
         .pod_sets = {{.name = "a",
                       .requests = {{"nvidia.com/mig-1g.5gb", "2"},
                                    {"nvidia.com/mig-2g.10gb", "1"},
                                    {"cpu", "1"}}},
                      {.name = "b",
                       .count = 2,
                       .requests = {{"nvidia.com/gpu", "1"}, {"cpu", "2"}}},
                      {.name = "c",
                       .requests = {{"nvidia.com/vgpu", "2"},
                                    {"nvidia.com/vgpucores", "20"},
                                    {"nvidia.com/vgpumem", "1024"}}},
                      {.name = "d",
                       .count = 2,
                       .requests = {{"nvidia.com/vgpu", "2"},
                                    {"nvidia.com/vgpucores", "30"},
                                    {"nvidia.com/vgpumem", "2048"}}}},
         .resources = {.transformations =
                           {{.input = "nvidia.com/mig-1g.5gb",
                             .strategy = kReplace,
                             .outputs = Resources(
                                 {{"example.com/accelerator-memory", "5Ki"},
                                  {"example.com/credits", "10"}})},
                            {.input = "nvidia.com/mig-2g.10gb",
                             .strategy = kReplace,
                             .outputs = Resources(
                                 {{"example.com/accelerator-memory", "10Ki"},
                                  {"example.com/credits", "15"}})},
                            {.input = "nvidia.com/gpu",
                             .strategy = kRetain,
                             .outputs = Resources(
                                 {{"example.com/accelerator-memory", "40Ki"},
                                  {"example.com/credits", "100"}})},
                            {.input = "nvidia.com/vgpucores",
                             .strategy = kReplace,
                             .multiply_by = "nvidia.com/vgpu",
                             .outputs = Resources(
                                 {{"nvidia.com/total-vgpucores", "1"}})},
                            {.input = "nvidia.com/vgpumem",
                             .strategy = kReplace,
                             .multiply_by = "nvidia.com/vgpu",
                             .outputs = Resources({{"nvidia.com/total-vgpumem",
                                                    "1"}})}}},
         .want = {{.name = "a",
                   .requests = {{"cpu", 1000},
                                {"example.com/accelerator-memory", 20 * 1024},
                                {"example.com/credits", 35}}},
                  {.name = "b",
                   .requests = {{"cpu", 4 * 1000},
                                {"example.com/accelerator-memory", 80 * 1024},
                                {"example.com/credits", 200},
                                {"nvidia.com/gpu", 2}}},
                  {.name = "c",
                   .requests = {{"nvidia.com/vgpu", 2},
                                {"nvidia.com/total-vgpucores", 2 * 20},
                                {"nvidia.com/total-vgpumem", 2 * 1024}}},
                  {.name = "d",
                   .requests = {{"nvidia.com/vgpu", 2 * 2},
                                {"nvidia.com/total-vgpucores", 2 * 2 * 30},
                                {"nvidia.com/total-vgpumem", 2 * 2 * 2048}}}}},
        {.name = "transformAllowanceAboveIt",
         .pod_sets = {{.name = "a",
                       .requests = {{"nvidia.com/gpumem", "2048"},
                                    {"nvidia.com/gpu", "2"}}}},
         .resources = GpuMemoryAllowance(),
         .want = {{.name = "a",
                   .requests = {{"quota.example.com/gpu-memory-overage", 2048},
                                {"nvidia.com/gpu", 2}}}}},
        {.name = "transformAllowanceExactlyAtIt",
         .pod_sets = {{.name = "a",
                       .requests = {{"nvidia.com/gpumem", "1024"},
                                    {"nvidia.com/gpu", "2"}}}},
         .resources = GpuMemoryAllowance(),
         .want = {{.name = "a",
                   .requests = {{"quota.example.com/gpu-memory-overage", 0},
                                {"nvidia.com/gpu", 2}}}}},
        {.name = "transformAllowanceUnderIt",
         .pod_sets = {{.name = "a",
                       .requests = {{"nvidia.com/gpumem", "512"},
                                    {"nvidia.com/gpu", "2"}}}},
         .resources = GpuMemoryAllowance(),
         .want = {{.name = "a",
                   .requests = {{"quota.example.com/gpu-memory-overage", 0},
                                {"nvidia.com/gpu", 2}}}}},
        {.name = "transformAllowanceDoesNotReachADirectRequest",
         .pod_sets = {{.name = "a",
                       .requests = {{"example.com/gpu", "8"},
                                    {"example.com/credit", "3"}}}},
         .resources = {.transformations = {{.input = "example.com/credit",
                                            .strategy = kReplace,
                                            .outputs = Resources(
                                                {{"example.com/gpu", "-1"}})}}},
         .want = {{.name = "a", .requests = {{"example.com/gpu", 8}}}}},
        {.name = "transformOutputSharingANameWithARequestIsAdded",
         .pod_sets = {{.name = "a",
                       .requests = {{"example.com/gpu", "1"},
                                    {"example.com/credit", "1"}}}},
         .resources = {.transformations = {{.input = "example.com/credit",
                                            .strategy = kReplace,
                                            .outputs = Resources(
                                                {{"example.com/gpu", "1"}})}}},
         .want = {{.name = "a", .requests = {{"example.com/gpu", 2}}}}},
        {.name = "transformOutputSharingANameWithItsRetainedInputIsAdded",
         .pod_sets = {{.name = "a", .requests = {{"example.com/gpu", "1"}}}},
         .resources = {.transformations = {{.input = "example.com/gpu",
                                            .strategy = kRetain,
                                            .outputs = Resources(
                                                {{"example.com/gpu", "5"}})}}},
         .want = {{.name = "a", .requests = {{"example.com/gpu", 6}}}}},
        {.name = "transformRetainWithMultiplyBy",
         .pod_sets = {{.name = "a",
                       .requests = {{"example.com/gpumem", "1024"},
                                    {"example.com/gpu", "2"}}}},
         .resources = {.transformations = {{.input = "example.com/gpumem",
                                            .strategy = kRetain,
                                            .multiply_by = "example.com/gpu",
                                            .outputs = Resources(
                                                {{"example.com/gpumem-quota",
                                                  "1"}})}}},
         .want = {{.name = "a",
                   .requests = {{"example.com/gpumem", 1024},
                                {"example.com/gpumem-quota", 2048},
                                {"example.com/gpu", 2}}}}},
        // Kueue leaves the strategy unset, which defaults to Retain; kq's
        // default member value is the same.
        {.name = "transformRetainWithMultiplyByUnderOne",
         .pod_sets = {{.name = "a",
                       .requests = {{"example.com/gpumem", "1024"},
                                    {"cpu", "500m"}}}},
         .resources = {.transformations = {{.input = "example.com/gpumem",
                                            .multiply_by = "cpu",
                                            .outputs = Resources(
                                                {{"example.com/gpumem-quota",
                                                  "1"}})}}},
         .want = {{.name = "a",
                   .requests = {{"example.com/gpumem", 1024},
                                {"example.com/gpumem-quota", 512},
                                {"cpu", 500}}}}},
        {.name = "transformOutputSharingANameWithItsRetainedInputIsAddedToThe"
                 "AmountRequested",
         .pod_sets = {{.name = "a",
                       .requests = {{"example.com/gpu", "1"},
                                    {"example.com/node", "2"}}}},
         .resources = {.transformations = {{.input = "example.com/gpu",
                                            .strategy = kRetain,
                                            .multiply_by = "example.com/node",
                                            .outputs = Resources(
                                                {{"example.com/gpu", "1"}})}}},
         .want = {{.name = "a",
                   .requests = {{"example.com/gpu", 3},
                                {"example.com/node", 2}}}}},
        {.name = "transformProductPastTheRangeIsNotFlooredAway",
         .pod_sets = {{.name = "a",
                       .requests = {{"example.com/credit", "10000000000"}}}},
         .resources =
             {.transformations = {{.input = "example.com/credit",
                                   .strategy = kReplace,
                                   .outputs = Resources({{"example.com/gpu",
                                                          "10000000000"}})}}},
         .want = {{.name = "a",
                   .requests = {{"example.com/gpu",
                                 std::numeric_limits<int64_t>::max()}}}}},
        {.name = "transformMilliValues",
         .pod_sets = {{.name = "",
                       .requests = {{"cpu", "100m"}, {"memory", "100M"}}}},
         .resources = {.transformations =
                           {{.input = "cpu",
                             .strategy = kReplace,
                             .outputs = Resources({{"example.com/cpu-credits",
                                                    "3000"}})},
                            {.input = "memory",
                             .strategy = kReplace,
                             .outputs = Resources(
                                 {{"example.com/memory-credits", "3m"}})}}},
         // 100m * 3000 = 300; 100M * 3m = 300k.
         .want = {{.name = "",
                   .requests = {{"example.com/cpu-credits", 300},
                                {"example.com/memory-credits", 300 * 1000}}}}},
    }),
    [](const auto& info) { return TestName(info.param.name); });

// kq's own: the per-pod list itself, where Kueue's cases see amounts.

TEST(EffectiveRequestsTest, WithoutConfigurationRequestsAreUnchanged) {
  const ResourceList requests =
      Resources({{"cpu", "1500m"}, {"memory", "1Gi"}, {"example.com/x", "0"}});
  EXPECT_EQ(EffectiveRequests(requests, ResourceConfig{}), requests);
}

TEST(EffectiveRequestsTest, PrefixesMatchTheStartOfTheName) {
  const ResourceConfig config{.exclude_resource_prefixes = {"example.com/"}};
  EXPECT_EQ(EffectiveRequests(Resources({{"example.com/vpc", "1"},
                                         {"other.example.com/vpc", "1"},
                                         {"example.com", "1"},
                                         {"cpu", "1"}}),
                              config),
            Resources({{"other.example.com/vpc", "1"},
                       {"example.com", "1"},
                       {"cpu", "1"}}));
}

TEST(EffectiveRequestsTest, ExclusionAppliesBeforeTransformation) {
  // An excluded input is not transformed, and an excluded multiplier does
  // not scale.
  const ResourceConfig config{
      .exclude_resource_prefixes = {"excluded.example.com/"},
      .transformations = {
          {.input = "excluded.example.com/mig",
           .strategy = kReplace,
           .outputs = Resources({{"example.com/credits", "10"}})},
          {.input = "example.com/gpumem",
           .strategy = kReplace,
           .multiply_by = "excluded.example.com/gpu",
           .outputs = Resources({{"example.com/memory", "1"}})}}};
  EXPECT_EQ(EffectiveRequests(Resources({{"excluded.example.com/mig", "2"},
                                         {"excluded.example.com/gpu", "4"},
                                         {"example.com/gpumem", "1024"}}),
                              config),
            Resources({{"example.com/memory", "1024"}}));
}

TEST(EffectiveRequestsTest, ReplaceWithoutOutputsDropsTheInput) {
  // Kueue's API: "An empty Outputs combined with a Replace Strategy causes
  // the Input resource to be ignored by Kueue."
  const ResourceConfig config{
      .transformations = {{.input = "example.com/nic", .strategy = kReplace}}};
  EXPECT_EQ(EffectiveRequests(
                Resources({{"example.com/nic", "2"}, {"cpu", "1"}}), config),
            Resources({{"cpu", "1"}}));
}

TEST(EffectiveRequestsTest, AbsentMultiplierLeavesTheInputUnscaled) {
  const ResourceConfig config{
      .transformations = {{.input = "example.com/gpumem",
                           .strategy = kReplace,
                           .multiply_by = "example.com/gpu",
                           .outputs = Resources({{"example.com/mem", "2"}})}}};
  EXPECT_EQ(
      EffectiveRequests(Resources({{"example.com/gpumem", "100"}}), config),
      Resources({{"example.com/mem", "200"}}));
}

TEST(EffectiveRequestsTest, SubMilliProductsRoundUpToAMilliUnit) {
  // Kueue multiplies exactly; kq keeps milli-units and rounds up, as
  // Kubernetes' MilliValue() does when Kueue reads the CPU amount.
  const ResourceConfig config{
      .transformations = {{.input = "cpu",
                           .strategy = kReplace,
                           .outputs = Resources({{"example.com/c", "1m"}})}}};
  EXPECT_EQ(EffectiveRequests(Resources({{"cpu", "1m"}}), config),
            Resources({{"example.com/c", "1m"}}));
}

}  // namespace
}  // namespace kq
