// `kq describe workload` with QueueService.Explain, and `kq simulate
// --server` with QueueService.Simulate, against FakeClient.

#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/printers/describe_printer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "tests/cli/fake_client.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string Golden(const char* text) { return std::string(text).substr(1); }

// What kqd answers for the seed's pending job: short of GPUs, second in
// its ClusterQueue.
v1::ExplainResponse PendingExplanation() {
  return testing::ParseText<v1::ExplainResponse>(R"pb(
    state: "Pending"
    cluster_queue: "ai-training-queue"
    reason: "Pending"
    message: "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more needed"
    position_in_cluster_queue: 1
    position_in_local_queue: 0
    attempts {
      pod_set: "main"
      flavor: "gpu-a100"
      mode: "NoFit"
      reasons: "insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more needed"
      shortages {
        resource: "nvidia.com/gpu"
        requested: "16"
        available: "12"
        nominal_quota: "16"
        borrowing_limit: "8"
      }
      shortages {
        resource: "cpu"
        requested: "128"
        available: "32"
        nominal_quota: "64"
      }
    }
    estimated_start_time { seconds: 1700000300 }
    admissions_per_minute: 0.4
  )pb");
}

TEST(DescribeExplanationTest, PendingShortOfAResource) {
  EXPECT_EQ(DescribeExplanation(PendingExplanation(), testing::kNow), Golden(R"(
Explain:
  State:                     Pending
  ClusterQueue:              ai-training-queue
  Reason:                    Pending
  Message:                   couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more needed
  Position In ClusterQueue:  1
  Position In LocalQueue:    0
  Estimated Start:           2023-11-14T22:18:20Z (in 5m)
  Admission Rate:            0.40 per minute
  Flavor Attempts:
    main on gpu-a100:
      Mode:     NoFit
      Reasons:  insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more needed
      RESOURCE        REQUESTED  AVAILABLE  NOMINAL  BORROWING-LIMIT
      --------        ---------  ---------  -------  ---------------
      nvidia.com/gpu  16         12         16       8
      cpu             128        32         64       -
)"));
}

TEST(DescribeExplanationTest, PreemptionVictimsAndAPodSetWithoutFlavor) {
  v1::ExplainResponse explanation = testing::ParseText<v1::ExplainResponse>(
      R"pb(
        state: "Pending"
        cluster_queue: "cq"
        attempts {
          pod_set: "main"
          flavor: "default"
          mode: "Preempt"
          reasons: "insufficient unused quota for cpu in flavor default, 2 more needed"
        }
        attempts {
          pod_set: "workers"
          mode: "NoFit"
          reasons: "resource example.com/fpga unavailable in ClusterQueue"
          reasons: "second reason"
        }
        victims {
          namespace: "ns"
          name: "low"
          cluster_queue: "cq"
          reason: "InClusterQueue"
        }
      )pb");
  EXPECT_EQ(DescribeExplanation(explanation, testing::kNow), Golden(R"(
Explain:
  State:         Pending
  ClusterQueue:  cq
  Flavor Attempts:
    main on default:
      Mode:     Preempt
      Reasons:  insufficient unused quota for cpu in flavor default, 2 more needed
    workers (no flavor):
      Mode:     NoFit
      Reasons:  resource example.com/fpga unavailable in ClusterQueue
                second reason
  Would Preempt:
    WORKLOAD  CLUSTERQUEUE  REASON
    --------  ------------  ------
    ns/low    cq            InClusterQueue
)"));
}

class DescribeExplainTest : public ::testing::Test {
 protected:
  int Describe(const std::string& name) {
    CommandContext ctx{
        .client = client_, .out = out_, .err = err_, .now = testing::kNow};
    return RunDescribe(
        {.kind = "workload", .name = name, .namespace_name = "team-ml"}, ctx);
  }

  testing::FakeClient client_{testing::kNow};
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(DescribeExplainTest, PendingWorkloadNamesTheMissingResourceAndPosition) {
  client_.PutWorkload(testing::PendingWorkload());
  client_.SetExplanation("team-ml", "job-pending", PendingExplanation());
  ASSERT_EQ(Describe("job-pending"), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            DescribeWorkload(testing::PendingWorkload(), testing::kNow) +
                DescribeExplanation(PendingExplanation(), testing::kNow));
  EXPECT_THAT(out_.str(), HasSubstr("Position In ClusterQueue:  1\n"));
  EXPECT_THAT(out_.str(), HasSubstr("nvidia.com/gpu  16         12"));
  EXPECT_EQ(err_.str(), "");
}

TEST_F(DescribeExplainTest, FinishedWorkloadIsNotExplained) {
  client_.PutWorkload(testing::FinishedWorkload());
  ASSERT_EQ(Describe("job-done"), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            DescribeWorkload(testing::FinishedWorkload(), testing::kNow));
  EXPECT_EQ(err_.str(), "");
}

TEST_F(DescribeExplainTest, AdmittedWorkloadIsExplainedToo) {
  client_.PutWorkload(testing::AdmittedWorkload());
  v1::ExplainResponse explanation;
  explanation.set_state("Admitted");
  explanation.set_cluster_queue("ai-training-queue");
  explanation.set_reason("Admitted");
  explanation.set_message("The workload is admitted");
  client_.SetExplanation("team-ml", "job-llm-finetune-0919", explanation);
  ASSERT_EQ(Describe("job-llm-finetune-0919"), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), EndsWith(Golden(R"(
Explain:
  State:         Admitted
  ClusterQueue:  ai-training-queue
  Reason:        Admitted
  Message:       The workload is admitted
)")));
}

TEST_F(DescribeExplainTest, ExplainFailureIsAWarningAfterTheDescription) {
  client_.PutWorkload(testing::PendingWorkload());
  client_.SetExplanation("team-ml", "job-pending",
                         absl::UnavailableError("kqd is shutting down"));
  ASSERT_EQ(Describe("job-pending"), kExitOk);
  EXPECT_EQ(out_.str(),
            DescribeWorkload(testing::PendingWorkload(), testing::kNow));
  EXPECT_EQ(err_.str(),
            "Warning: cannot explain workload job-pending: UNAVAILABLE: kqd "
            "is shutting down\n");
}

TEST_F(DescribeExplainTest, FinishedMeanwhileIsNotAWarning) {
  client_.PutWorkload(testing::PendingWorkload());
  client_.SetExplanation(
      "team-ml", "job-pending",
      absl::FailedPreconditionError("workload team-ml/job-pending already "
                                    "finished"));
  ASSERT_EQ(Describe("job-pending"), kExitOk);
  EXPECT_EQ(err_.str(), "");
}

class SimulateLiveTest : public ::testing::Test {
 protected:
  int Simulate(SimulateOptions options) {
    options.live = true;
    CommandContext ctx{
        .client = client_, .out = out_, .err = err_, .now = testing::kNow};
    return RunSimulateLive(options, ctx);
  }

  testing::FakeClient client_{testing::kNow};
  std::ostringstream out_;
  std::ostringstream err_;
};

// kqd's answer: admissible in cq on default when it asks for at most 4
// cpu, preempting ns/low for more than 2.
absl::StatusOr<v1::SimulateResponse> Answer(const v1::SimulateRequest& r) {
  v1::SimulateResponse response;
  *response.mutable_workload() = r.workload();
  const std::string cpu = r.workload().spec().pod_sets(0).requests().at("cpu");
  if (cpu == "8") {
    response.set_admissible(false);
    response.set_reason("Pending");
    response.set_message(
        "couldn't assign flavors to pod set main: insufficient quota for cpu "
        "in flavor default, request > maximum capacity (8 > 4)");
    return response;
  }
  response.set_admissible(true);
  v1::Admission& admission =
      *response.mutable_workload()->mutable_status()->mutable_admission();
  admission.set_cluster_queue("cq");
  v1::PodSetAssignment& assignment = *admission.add_pod_set_assignments();
  assignment.set_name("main");
  (*assignment.mutable_flavors())["cpu"] = "default";
  if (cpu == "4") {
    v1::PreemptionVictim& victim = *response.add_victims();
    victim.set_namespace_("ns");
    victim.set_name("low");
    victim.set_cluster_queue("cq");
    victim.set_reason("InClusterQueue");
  }
  return response;
}

TEST_F(SimulateLiveTest, FromFlagsAdmissibleWithVictims) {
  client_.SetSimulateAnswer(Answer);
  ASSERT_EQ(Simulate({.requests = {"cpu=4"},
                      .workload = {.queue = "q",
                                   .namespace_name = "ns",
                                   .name = "try",
                                   .count = 1,
                                   .priority_class = "high"}}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), Golden(R"(
workload ns/try: admissible
  ClusterQueue:  cq
  Flavors:       main: cpu=default
  Would Preempt:
    WORKLOAD  CLUSTERQUEUE  REASON
    --------  ------------  ------
    ns/low    cq            InClusterQueue
)"));
  std::vector<v1::SimulateRequest> requests = client_.simulate_requests();
  ASSERT_EQ(requests.size(), 1u);
  const v1::Workload& sent = requests[0].workload();
  EXPECT_EQ(sent.metadata().namespace_(), "ns");
  EXPECT_EQ(sent.metadata().name(), "try");
  EXPECT_EQ(sent.spec().queue_name(), "q");
  EXPECT_EQ(sent.spec().priority_class_name(), "high");
  EXPECT_EQ(sent.spec().pod_sets(0).requests().at("cpu"), "4");
}

TEST_F(SimulateLiveTest, FileWorkloadsEachGetAnAnswer) {
  client_.SetSimulateAnswer(Answer);
  ASSERT_EQ(Simulate({.sources = {{"w.yaml", R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: small
spec:
  queueName: q
  podSets:
  - {name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: big
spec:
  queueName: q
  podSets:
  - {name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: "8"}}}]}}}
)yaml"}},
                      .namespace_name = "ns"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), Golden(R"(
workload ns/small: admissible
  ClusterQueue:  cq
  Flavors:       main: cpu=default

workload ns/big: not admissible
  Reason:   Pending
  Message:  couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, request > maximum capacity (8 > 4)
)"));
  EXPECT_EQ(err_.str(),
            "Warning: w.yaml: document 1 (ResourceFlavor default): skipped: "
            "--server simulates workloads against the live state only\n");
}

TEST_F(SimulateLiveTest, JsonListsTheAnswers) {
  client_.SetSimulateAnswer(Answer);
  ASSERT_EQ(Simulate({.requests = {"cpu=4"},
                      .workload = {.queue = "q", .name = "try"},
                      .output = "json"}),
            kExitOk);
  nlohmann::json list = nlohmann::json::parse(out_.str());
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["admissible"], true);
  EXPECT_EQ(list["items"][0]["victims"][0]["name"], "low");
  EXPECT_EQ(list["items"][0]["workload"]["status"]["admission"]["clusterQueue"],
            "cq");
}

TEST_F(SimulateLiveTest, ServerErrorsFailTheCommand) {
  client_.SetSimulateAnswer(
      [](const v1::SimulateRequest&) -> absl::StatusOr<v1::SimulateResponse> {
        return absl::NotFoundError("LocalQueue ns/q not found");
      });
  EXPECT_EQ(
      Simulate(
          {.requests = {"cpu=1"},
           .workload = {.queue = "q", .namespace_name = "ns", .name = "try"}}),
      kExitError);
  EXPECT_EQ(err_.str(),
            "kq: NOT_FOUND: workload ns/try: LocalQueue ns/q not found\n");
}

TEST_F(SimulateLiveTest, UsageErrors) {
  struct Case {
    std::string name;
    SimulateOptions options;
    std::string want_err;
  };
  for (const Case& tc : std::vector<Case>{
           {"nothing_to_simulate",
            {},
            "error: kq simulate --server needs -f FILE, or --queue and "
            "--request\n"},
           {"request_without_queue",
            {.requests = {"cpu=1"}},
            "error: --queue is required with --request\n"},
           {"bad_request",
            {.requests = {"cpu"}, .workload = {.queue = "q"}},
            "error: invalid --request item \"cpu\": want NAME=QUANTITY, e.g. "
            "cpu=8\n"},
           {"file_and_flags",
            {.sources = {{"a.yaml", ""}}, .requests = {"cpu=1"}},
            "error: give either -f FILE or --request/--queue, not both\n"},
           {"bad_output",
            {.requests = {"cpu=1"}, .output = "name"},
            "error: unknown output format \"name\": use wide, json or "
            "yaml\n"},
       }) {
    SCOPED_TRACE(tc.name);
    err_.str("");
    EXPECT_EQ(Simulate(tc.options), kExitUsage);
    EXPECT_EQ(err_.str(), tc.want_err);
  }
  EXPECT_THAT(client_.simulate_requests(), IsEmpty());
}

}  // namespace
}  // namespace kq::cli
