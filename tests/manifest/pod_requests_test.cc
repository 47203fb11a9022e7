#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"

namespace kq::manifest {
namespace {

using ::testing::HasSubstr;
using Requests = std::map<std::string, std::string>;

struct PodRequestsCase {
  std::string name;
  std::string pod_spec;  // JSON
  Requests want;
};

void PrintTo(const PodRequestsCase& tc, std::ostream* os) { *os << tc.name; }

class PodRequestsTest : public ::testing::TestWithParam<PodRequestsCase> {};

TEST_P(PodRequestsTest, ComputesKueuePerPodRequests) {
  const PodRequestsCase& tc = GetParam();
  absl::StatusOr<Requests> got =
      PodRequests(nlohmann::json::parse(tc.pod_spec));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PodRequestsTest,
    ::testing::ValuesIn(std::vector<PodRequestsCase>{
        {.name = "single_container",
         .pod_spec = R"({"containers": [{"name": "c", "resources": {
             "requests": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 1},
             "limits": {"nvidia.com/gpu": 1}}}]})",
         .want = {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "1"}}},
        {.name = "containers_add_up_exactly",
         .pod_spec = R"({"containers": [
             {"resources": {"requests": {"cpu": "8", "memory": "16Gi"}}},
             {"resources": {"requests": {"cpu": "8", "memory": "16Gi"}}},
             {"resources": {"requests": {"cpu": "500m"}}},
             {"resources": {"requests": {"cpu": 1}}}]})",
         .want = {{"cpu", "17500m"}, {"memory", "32Gi"}}},
        {.name = "milli_plus_whole",
         .pod_spec = R"({"containers": [
             {"resources": {"requests": {"cpu": "500m"}}},
             {"resources": {"requests": {"cpu": "1"}}}]})",
         .want = {{"cpu", "1500m"}}},
        {.name = "mixed_suffixes_print_decimal",
         .pod_spec = R"({"containers": [
             {"resources": {"requests": {"memory": "1Gi"}}},
             {"resources": {"requests": {"memory": "1G"}}}]})",
         .want = {{"memory", "2073741824"}}},
        {.name = "limits_stand_in_for_missing_requests",
         .pod_spec = R"({"containers": [{"resources": {
             "requests": {"cpu": "1"},
             "limits": {"cpu": "4", "memory": "2Gi"}}}]})",
         .want = {{"cpu", "1"}, {"memory", "2Gi"}}},
        {.name = "regular_init_container_takes_the_max",
         .pod_spec = R"({
             "initContainers": [
               {"resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}],
             "containers": [
               {"resources": {"requests": {"cpu": "1", "memory": "4Gi"}}}]})",
         .want = {{"cpu", "3"}, {"memory", "4Gi"}}},
        {.name = "sidecar_adds_to_containers_and_later_init_containers",
         .pod_spec = R"({
             "initContainers": [
               {"name": "before", "resources": {"requests": {"cpu": "2"}}},
               {"name": "sidecar", "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "500m"}}},
               {"name": "after", "resources": {"requests": {"cpu": "2"}}}],
             "containers": [{"resources": {"requests": {"cpu": "1"}}}]})",
         // Containers run with the sidecar: 1 + 0.5 = 1.5. The init
         // container started after the sidecar runs beside it: 2 + 0.5.
         .want = {{"cpu", "2500m"}}},
        {.name = "init_container_before_sidecar_runs_alone",
         .pod_spec = R"({
             "initContainers": [
               {"resources": {"requests": {"cpu": "2"}}},
               {"restartPolicy": "Always",
                "resources": {"requests": {"cpu": "500m"}}}],
             "containers": [{"resources": {"requests": {"cpu": "1"}}}]})",
         .want = {{"cpu", "2"}}},
        {.name = "overhead_is_added_once",
         .pod_spec = R"({
             "containers": [
               {"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
               {"resources": {"requests": {"cpu": "1"}}}],
             "overhead": {"cpu": "250m", "memory": "1Gi"}})",
         .want = {{"cpu", "2250m"}, {"memory", "2Gi"}}},
        {.name = "no_resources",
         .pod_spec = R"({"containers": [{}]})",
         .want = {}},
        {.name = "empty_pod_spec", .pod_spec = "{}", .want = {}},
    }),
    [](const auto& info) { return info.param.name; });

TEST(PodRequestsErrorTest, NamesTheFieldAndTheProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"containers": {"name": "c"}})",
       "containers: must be a list, got an object"},
      {R"({"containers": ["c"]})",
       "containers[0]: must be an object, got a string"},
      {R"({"containers": [{"resources": {"requests": {"cpu": "lots"}}}]})",
       "containers[0].resources.requests[cpu]: \"lots\" is not a quantity"},
      {R"({"containers": [{"resources": {"limits": {"cpu": [1]}}}]})",
       "containers[0].resources.limits[cpu]: must be a quantity string or "
       "number, got a list"},
      {R"({"initContainers": [{"restartPolicy": 1}]})",
       "initContainers[0].restartPolicy: must be a string, got a number"},
      {R"({"overhead": "1"})", "overhead: must be an object, got a string"},
      {R"({"containers": [
            {"resources": {"requests": {"cpu": "5P"}}},
            {"resources": {"requests": {"cpu": "5P"}}}]})",
       "too large"},
  };
  for (const auto& [spec, want] : cases) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Requests> got = PodRequests(nlohmann::json::parse(spec));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr(want));
  }
}

TEST(PodRequestsErrorTest, RejectsANonObjectPodSpec) {
  absl::StatusOr<Requests> got = PodRequests(nlohmann::json::array());
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("must be an object"));
}

}  // namespace
}  // namespace kq::manifest
