#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/cli/fake_client.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

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

class SubmitTest : public ::testing::Test {
 protected:
  int Run(const SubmitOptions& options) {
    CommandContext ctx{
        .client = client_, .out = out_, .err = err_, .now = testing::kNow};
    return RunSubmit(options, ctx);
  }

  testing::FakeClient client_{testing::kNow};
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(SubmitTest, BuildsOnePodSetWorkload) {
  ASSERT_EQ(Run({.queue = "ml-jobs",
                 .namespace_name = "team-ml",
                 .name = "train-1",
                 .count = 4,
                 .requests = "cpu=8,nvidia.com/gpu=1",
                 .priority_class = "production-training"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/train-1 created\n");
  ASSERT_EQ(client_.submitted().size(), 1u);
  const v1::Workload& sent = client_.submitted()[0];
  EXPECT_EQ(sent.metadata().name(), "train-1");
  EXPECT_EQ(sent.metadata().namespace_(), "team-ml");
  EXPECT_EQ(sent.spec().queue_name(), "ml-jobs");
  EXPECT_EQ(sent.spec().priority_class_name(), "production-training");
  EXPECT_EQ(sent.spec().priority_class_source(),
            "kueue.x-k8s.io/workloadpriorityclass");
  ASSERT_EQ(sent.spec().pod_sets_size(), 1);
  EXPECT_EQ(sent.spec().pod_sets(0).name(), "main");
  EXPECT_EQ(sent.spec().pod_sets(0).count(), 4);
  EXPECT_EQ(sent.spec().pod_sets(0).requests().at("cpu"), "8");
  EXPECT_EQ(sent.spec().pod_sets(0).requests().at("nvidia.com/gpu"), "1");
}

TEST_F(SubmitTest, WithoutNameAsksForAGeneratedOne) {
  ASSERT_EQ(Run({.queue = "q", .requests = "cpu=1"}), kExitOk) << err_.str();
  ASSERT_EQ(client_.submitted().size(), 1u);
  EXPECT_EQ(client_.submitted()[0].metadata().name(), "");
  EXPECT_EQ(client_.submitted()[0].metadata().generate_name(), "wl-");
  EXPECT_EQ(client_.submitted()[0].metadata().namespace_(), "default");
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/wl-00001 created\n");
}

TEST_F(SubmitTest, PrintsAdmissionWhenAdmittedAtOnce) {
  client_.AdmitOnSubmit("ai-training-queue", "gpu-a100");
  ASSERT_EQ(Run({.queue = "ml-jobs",
                 .name = "train-2",
                 .requests = "nvidia.com/gpu=1,cpu=8",
                 .pod_set = "workers"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/train-2 created\n"
            "admitted by ClusterQueue ai-training-queue on flavors "
            "cpu=gpu-a100,nvidia.com/gpu=gpu-a100\n");
  EXPECT_EQ(client_.submitted()[0].spec().pod_sets(0).name(), "workers");
}

TEST_F(SubmitTest, BadRequestIsAUsageErrorAndSendsNothing) {
  EXPECT_EQ(Run({.queue = "q", .requests = "cpu=8,gpu"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("error: invalid --request item \"gpu\""));
  EXPECT_THAT(client_.submitted(), IsEmpty());
  EXPECT_EQ(out_.str(), "");
}

TEST_F(SubmitTest, ServerErrorIsReportedWithItsCode) {
  ASSERT_EQ(Run({.queue = "q", .name = "dup", .requests = "cpu=1"}), kExitOk);
  out_.str("");
  EXPECT_EQ(Run({.queue = "q", .name = "dup", .requests = "cpu=1"}),
            kExitError);
  EXPECT_EQ(err_.str(),
            "kq: ALREADY_EXISTS: workload \"dup\" already exists\n");
  EXPECT_EQ(out_.str(), "");
}

}  // namespace
}  // namespace kq::cli
