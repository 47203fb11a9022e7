#include "server/core/validation.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/testing/builders.h"

namespace kq {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;
using ::testing::HasSubstr;

struct InvalidCase {
  std::string name;
  ConfigObject object;
  std::string want;  // exact message
};

class InvalidConfigTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidConfigTest, IsRefusedWithFieldPath) {
  absl::Status status = ValidateConfigObject(GetParam().object);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InvalidConfigTest,
    ::testing::ValuesIn(std::vector<InvalidCase>{
        {"name_with_capitals", ResourceFlavorBuilder("Bad").Build(),
         "metadata.name: \"Bad\" is not a valid name: a lowercase RFC 1123 "
         "subdomain must consist of lower case alphanumeric characters, '-' "
         "or '.', and must start and end with an alphanumeric character"},
        {"empty_name", ResourceFlavorBuilder("").Build(),
         "metadata.name: name is required"},
        {"flavor_in_two_groups",
         ClusterQueueBuilder("cq")
             .ResourceGroup({"cpu"})
             .Flavor("f")
             .Quota("cpu", "1")
             .ResourceGroup({"memory"})
             .Flavor("f")
             .Quota("memory", "1")
             .Build(),
         "spec.resourceGroups[1].flavors[0].name: flavor \"f\" is already in "
         "resourceGroups[0]"},
        {"resource_in_two_groups",
         ClusterQueueBuilder("cq")
             .ResourceGroup({"cpu"})
             .Flavor("a")
             .Quota("cpu", "1")
             .ResourceGroup({"cpu"})
             .Flavor("b")
             .Quota("cpu", "1")
             .Build(),
         "spec.resourceGroups[1].coveredResources[0]: resource \"cpu\" is "
         "already covered by resourceGroups[0]"},
        {"resource_listed_twice",
         ClusterQueueBuilder("cq")
             .ResourceGroup({"cpu"})
             .Flavor("a")
             .Quota("cpu", "1")
             .Quota("cpu", "2")
             .Build(),
         "spec.resourceGroups[0].flavors[0].resources[1].name: resource "
         "\"cpu\" is listed twice"},
        {"negative_quota",
         ClusterQueueBuilder("cq")
             .ResourceGroup({"cpu"})
             .Flavor("a")
             .Quota("cpu", "-1")
             .Build(),
         "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: must "
         "be greater than or equal to 0, got -1"},
        {"lending_limit_above_nominal",
         ClusterQueueBuilder("cq")
             .Cohort("c")
             .ResourceGroup({"cpu"})
             .Flavor("a")
             .Quota("cpu", "1")
             .LendingLimit("2")
             .Build(),
         "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must "
         "be less than or equal to nominalQuota"},
        {"uncovered_resource_quota",
         ClusterQueueBuilder("cq")
             .ResourceGroup({"cpu"})
             .Flavor("a")
             .Quota("memory", "1")
             .Build(),
         "spec.resourceGroups[0].flavors[0].resources[0].name: resource "
         "\"memory\" is not in this group's coveredResources"},
        {"borrow_within_cohort_without_reclaim",
         ClusterQueueBuilder("cq").BorrowWithinCohort("LowerPriority").Build(),
         "spec.preemption: reclaimWithinCohort=Never and "
         "borrowWithinCohort.Policy!=Never"},
        {"root_cohort_with_limits",
         CohortBuilder("c")
             .ResourceGroup({"cpu"})
             .Flavor("a")
             .Quota("cpu", "1")
             .BorrowingLimit("1")
             .Build(),
         "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
         "must be nil when cohort has no parent"},
        {"local_queue_without_namespace",
         LocalQueueBuilder("", "lq", "cq").Build(),
         "metadata.namespace: name is required"},
    }),
    [](const auto& info) { return info.param.name; });

TEST(ValidationTest, WorkloadRules) {
  Workload no_pod_sets = WorkloadBuilder("w").Queue("lq").Build();
  no_pod_sets.pod_sets.clear();
  EXPECT_EQ(ValidateWorkload(no_pod_sets).message(),
            "spec.podSets: must have at least 1 item");
  EXPECT_EQ(ValidateWorkload(WorkloadBuilder("w").Request("cpu", "1").Build())
                .message(),
            "spec.queueName: is required");
  EXPECT_EQ(ValidateWorkload(WorkloadBuilder("w")
                                 .Queue("lq")
                                 .PodSet("main", 2)
                                 .MinCount(3)
                                 .Build())
                .message(),
            "spec.podSets[0].minCount: must be between 1 and count "
            "(inclusive)");
  EXPECT_EQ(ValidateWorkload(
                WorkloadBuilder("w").Queue("lq").Request("cpu", "-1").Build())
                .message(),
            "spec.podSets[0].requests[cpu]: must be greater than or equal "
            "to 0, got -1");
  EXPECT_TRUE(ValidateWorkload(WorkloadBuilder("w")
                                   .Queue("lq")
                                   .Request("nvidia.com/gpu", "1")
                                   .Build())
                  .ok());
}

TEST(ValidationTest, SeedClusterQueueWarnings) {
  // The seed's shape: resources out of coveredResources order, a flavor
  // omitting a covered resource, a borrowingLimit without a cohort, and no
  // namespaceSelector.
  ClusterQueue cq = ClusterQueueBuilder("ai-training-queue")
                        .NoNamespaceSelector()
                        .ResourceGroup({"cpu", "memory", "nvidia.com/gpu"})
                        .Flavor("gpu-a100")
                        .Quota("nvidia.com/gpu", "16")
                        .BorrowingLimit("8")
                        .Quota("cpu", "64")
                        .Quota("memory", "256Gi")
                        .Flavor("default-cpu")
                        .Quota("cpu", "128")
                        .Quota("memory", "512Gi")
                        .Build();
  ASSERT_TRUE(ValidateConfigObject(cq).ok());
  std::vector<std::string> warnings = ConfigWarnings(cq);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_THAT(warnings[0], HasSubstr("another order than coveredResources"));
  EXPECT_THAT(warnings[1], HasSubstr("omits covered resource(s) "
                                     "nvidia.com/gpu"));
  EXPECT_THAT(warnings[2], HasSubstr("spec.cohort is empty"));
  EXPECT_THAT(warnings[3], HasSubstr("namespaceSelector is not set"));
  // A manifest Kueue accepts gets no warning.
  EXPECT_TRUE(ConfigWarnings(ClusterQueueBuilder("ok")
                                 .ResourceGroup({"cpu"})
                                 .Flavor("a")
                                 .Quota("cpu", "1")
                                 .Build())
                  .empty());
}

TEST(ValidationTest, SelectorsMatchKubernetesSemantics) {
  Labels labels{{"team", "ml"}, {"env", "prod"}};
  EXPECT_TRUE(SelectorMatches({}, labels));
  EXPECT_TRUE(SelectorMatches({.match_labels = {{"team", "ml"}}}, labels));
  EXPECT_FALSE(SelectorMatches({.match_labels = {{"team", "web"}}}, labels));
  EXPECT_TRUE(SelectorMatches(
      {.match_expressions = {{"env", "In", {"prod", "dev"}}}}, labels));
  EXPECT_FALSE(SelectorMatches(
      {.match_expressions = {{"env", "NotIn", {"prod"}}}}, labels));
  EXPECT_TRUE(SelectorMatches(
      {.match_expressions = {{"missing", "DoesNotExist", {}}}}, labels));
  EXPECT_FALSE(SelectorMatches(
      {.match_expressions = {{"missing", "Exists", {}}}}, labels));
}

}  // namespace
}  // namespace kq
