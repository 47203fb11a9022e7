#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/workload.pb.h"

#include "tests/cli/kqd_fixture.h"

namespace kq::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

struct RequestCase {
  std::string name;
  std::string flag;
  std::map<std::string, std::string> want;
  // Non-empty: parsing fails and the message contains this.
  std::string want_error;
};

class ParseRequestsTest : public ::testing::TestWithParam<RequestCase> {};

TEST_P(ParseRequestsTest, Parses) {
  const RequestCase& tc = GetParam();
  absl::StatusOr<std::map<std::string, std::string>> got =
      ParseRequests(tc.flag);
  if (!tc.want_error.empty()) {
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(tc.want_error));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseRequestsTest,
    ::testing::ValuesIn(std::vector<RequestCase>{
        {.name = "gpu_job",
         .flag = "cpu=8,memory=32Gi,nvidia.com/gpu=1",
         .want = {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "1"}}},
        {.name = "spaces_around_items",
         .flag = " cpu = 500m , memory=1.5Gi",
         .want = {{"cpu", "500m"}, {"memory", "1.5Gi"}}},
        {.name = "exponent_and_decimal_suffixes",
         .flag = "a=1e3,b=2E-2,c=.5,d=3.,e=4k,f=5M,g=+6",
         .want = {{"a", "1e3"},
                  {"b", "2E-2"},
                  {"c", ".5"},
                  {"d", "3."},
                  {"e", "4k"},
                  {"f", "5M"},
                  {"g", "+6"}}},
        {.name = "missing_equals",
         .flag = "cpu=8,memory",
         .want_error = "invalid --request item \"memory\""},
        {.name = "empty_name",
         .flag = "=8",
         .want_error = "invalid --request item \"=8\""},
        {.name = "empty_quantity",
         .flag = "cpu=",
         .want_error = "\"\" is not a quantity"},
        {.name = "bad_suffix",
         .flag = "memory=32GB",
         .want_error = "\"32GB\" is not a quantity"},
        {.name = "not_a_number",
         .flag = "cpu=eight",
         .want_error = "\"eight\" is not a quantity"},
        {.name = "trailing_comma",
         .flag = "cpu=8,",
         .want_error = "invalid --request item \"\""},
        {.name = "duplicate",
         .flag = "cpu=8,cpu=4",
         .want_error = "\"cpu\" is requested twice"},
        {.name = "empty", .flag = "", .want_error = "--request is empty"},
    }),
    [](const auto& info) { return info.param.name; });

class SubmitTest : public testing::KqdFixture {
 protected:
  int Run(const SubmitOptions& options) {
    CommandContext ctx = Context();
    return RunSubmit(options, ctx);
  }
};

TEST_F(SubmitTest, BuildsOnePodSetWorkload) {
  // kqd resolves the priority class at submission. No LocalQueue ml-jobs:
  // the workload waits for one, and only its creation is printed.
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: production-training
value: 1000
)yaml");
  ASSERT_EQ(Run({.queue = "ml-jobs",
                 .namespace_name = "team-ml",
                 .name = "train-1",
                 .count = 4,
                 .requests = "cpu=8,nvidia.com/gpu=1",
                 .priority_class = "production-training"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/train-1 created\n");
  const v1::Workload stored = GetWorkload("team-ml", "train-1");
  EXPECT_EQ(stored.metadata().name(), "train-1");
  EXPECT_EQ(stored.metadata().namespace_(), "team-ml");
  EXPECT_EQ(stored.spec().queue_name(), "ml-jobs");
  EXPECT_EQ(stored.spec().priority_class_name(), "production-training");
  EXPECT_EQ(stored.spec().priority_class_source(),
            "kueue.x-k8s.io/workloadpriorityclass");
  ASSERT_EQ(stored.spec().pod_sets_size(), 1);
  EXPECT_EQ(stored.spec().pod_sets(0).name(), "main");
  EXPECT_EQ(stored.spec().pod_sets(0).count(), 4);
  EXPECT_EQ(stored.spec().pod_sets(0).requests().at("cpu"), "8");
  EXPECT_EQ(stored.spec().pod_sets(0).requests().at("nvidia.com/gpu"), "1");
}

TEST_F(SubmitTest, WithoutNameAsksForAGeneratedOne) {
  ASSERT_EQ(Run({.queue = "q", .requests = "cpu=1"}), kExitOk) << err_.str();
  ASSERT_EQ(client().submitted().size(), 1u);
  EXPECT_EQ(client().submitted()[0].metadata().name(), "");
  const std::vector<v1::Workload> stored = AllWorkloads();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].metadata().generate_name(), "wl-");
  EXPECT_EQ(stored[0].metadata().namespace_(), "default");
  // kqd appends five random characters to generateName.
  EXPECT_THAT(stored[0].metadata().name(), MatchesRegex("wl-[a-z0-9]{5}"));
  EXPECT_EQ(out_.str(),
            absl::StrCat("workload.kueue.x-k8s.io/",
                         stored[0].metadata().name(), " created\n"));
}

TEST_F(SubmitTest, PrintsAdmissionWhenAdmittedAtOnce) {
  // The seed's ClusterQueue, with room, behind LocalQueue default/ml-jobs:
  // the batch of the submission admits it.
  ApplySeedQueues();
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: ml-jobs
spec:
  clusterQueue: ai-training-queue
)yaml");
  ASSERT_EQ(Run({.queue = "ml-jobs",
                 .name = "train-2",
                 .requests = "nvidia.com/gpu=1,cpu=8",
                 .pod_set = "workers"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/train-2 created\n"
            "admitted by ClusterQueue ai-training-queue on flavors "
            "cpu=gpu-a100,nvidia.com/gpu=gpu-a100\n");
  EXPECT_EQ(GetWorkload("default", "train-2").spec().pod_sets(0).name(),
            "workers");
}

TEST_F(SubmitTest, BadRequestIsAUsageErrorAndSendsNothing) {
  EXPECT_EQ(Run({.queue = "q", .requests = "cpu=8,gpu"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("error: invalid --request item \"gpu\""));
  EXPECT_THAT(client().calls(), IsEmpty());
  EXPECT_THAT(AllWorkloads(), IsEmpty());
  EXPECT_EQ(out_.str(), "");
}

TEST_F(SubmitTest, ServerErrorIsReportedWithItsCode) {
  ASSERT_EQ(Run({.queue = "q", .name = "dup", .requests = "cpu=1"}), kExitOk);
  out_.str("");
  EXPECT_EQ(Run({.queue = "q", .name = "dup", .requests = "cpu=1"}),
            kExitError);
  EXPECT_EQ(err_.str(),
            "kq: ALREADY_EXISTS: Workload \"default/dup\" already exists\n");
  EXPECT_EQ(out_.str(), "");
}

}  // namespace
}  // namespace kq::cli
