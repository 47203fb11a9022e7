// `kq describe workload` with QueueService.Explain, and `kq simulate
// --server` with QueueService.Simulate, against a real kqd (KqdFixture);
// and the explanation's printer.

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

#include "kq/client/client.h"
#include "tests/cli/kqd_fixture.h"
#include "tests/cli/recording_client.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::string Golden(const char* text) { return std::string(text).substr(1); }

// An answer of kqd for a pending job: short of GPUs, second in its
// ClusterQueue.
v1::ExplainResponse PendingExplanation() {
  return testing::ParseText<v1::ExplainResponse>(R"pb(
    state: "Pending"
    cluster_queue: "ai-training-queue"
    reason: "WaitingForQuota"
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
  Reason:                    WaitingForQuota
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

class DescribeExplainTest : public testing::KqdFixture {
 protected:
  int Describe(const std::string& name) {
    CommandContext ctx = Context();
    return RunDescribe(
        {.kind = "workload", .name = name, .namespace_name = "team-ml"}, ctx);
  }

  // What `kq describe` shows of the workload alone, as kqd has it now.
  std::string Description(const std::string& name) {
    return DescribeWorkload(GetWorkload("team-ml", name), now_);
  }
};

TEST_F(DescribeExplainTest, PendingWorkloadNamesTheMissingResourceAndPosition) {
  // The admitted job holds 4 of the 16 GPUs. job-ahead (priority 1000)
  // asks 13 and job-pending 16: both wait, job-pending second.
  ApplySeedQueues();
  SubmitAdmitted();
  Submit(testing::ParseText<v1::Workload>(R"pb(
    metadata { namespace: "team-ml" name: "job-ahead" }
    spec {
      queue_name: "ml-jobs"
      priority_class_name: "production-training"
      priority_class_source: "kueue.x-k8s.io/workloadpriorityclass"
      pod_sets {
        name: "main"
        count: 1
        requests { key: "nvidia.com/gpu" value: "13" }
      }
    }
  )pb"));
  Submit(testing::ParseText<v1::Workload>(R"pb(
    metadata { namespace: "team-ml" name: "job-pending" }
    spec {
      queue_name: "ml-jobs"
      pod_sets {
        name: "main"
        count: 16
        requests { key: "cpu" value: "1" }
        requests { key: "nvidia.com/gpu" value: "1" }
      }
    }
  )pb"));
  ASSERT_EQ(Describe("job-pending"), kExitOk) << err_.str();
  const std::vector<v1::ExplainResponse> explained = client().explain_answers();
  ASSERT_EQ(explained.size(), 1u);
  EXPECT_EQ(out_.str(), Description("job-pending") +
                            DescribeExplanation(explained[0], now_));
  EXPECT_THAT(out_.str(), HasSubstr("Position In ClusterQueue:  1\n"));
  EXPECT_THAT(out_.str(), HasSubstr("nvidia.com/gpu  16         12"));
  EXPECT_EQ(err_.str(), "");
}

TEST_F(DescribeExplainTest, FinishedWorkloadIsNotExplained) {
  ApplySeedQueues();
  SubmitFinished();
  ASSERT_EQ(Describe("job-done"), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), Description("job-done"));
  EXPECT_EQ(err_.str(), "");
}

TEST_F(DescribeExplainTest, AdmittedWorkloadIsExplainedToo) {
  ApplySeedQueues();
  SubmitAdmitted();
  ASSERT_EQ(Describe("job-llm-finetune-0919"), kExitOk) << err_.str();
  // One admission (this one) in kqd's 15-minute window.
  EXPECT_THAT(out_.str(), EndsWith(Golden(R"(
Explain:
  State:           Admitted
  ClusterQueue:    ai-training-queue
  Reason:          Admitted
  Message:         The workload is admitted
  Admission Rate:  0.07 per minute
)")));
}

TEST_F(DescribeExplainTest, ExplainFailureIsAWarningAfterTheDescription) {
  ApplySeedQueues();
  SubmitPending();
  const std::string description = Description("job-pending");
  // kqd goes away between the workload and its explanation. A client that
  // gives up on it soon, instead of retrying the Explain for a minute.
  std::unique_ptr<client::Client> impatient = kqd_->NewClient(
      {.deadline = absl::Seconds(10), .retry_budget = absl::Milliseconds(200)});
  testing::RecordingClient recorder(*impatient);
  recorder.AfterGetWorkload([this] { kqd_->Stop(); });
  CommandContext ctx{.client = recorder, .out = out_, .err = err_, .now = now_};
  ASSERT_EQ(RunDescribe({.kind = "workload",
                         .name = "job-pending",
                         .namespace_name = "team-ml"},
                        ctx),
            kExitOk);
  EXPECT_EQ(out_.str(), description);
  EXPECT_THAT(err_.str(),
              StartsWith("Warning: cannot explain workload job-pending: "
                         "UNAVAILABLE: "));
  EXPECT_THAT(err_.str(), EndsWith("\n"));
}

TEST_F(DescribeExplainTest, FinishedMeanwhileIsNotAWarning) {
  ApplySeedQueues();
  SubmitPending();
  // Cancelled between the workload and its explanation.
  client().AfterGetWorkload([this] {
    ASSERT_TRUE(kqd().CancelWorkload("team-ml", "job-pending").ok());
  });
  ASSERT_EQ(Describe("job-pending"), kExitOk);
  EXPECT_EQ(err_.str(), "");
}

// ClusterQueue cq: 4 cpu on flavor default, preempting lower priorities;
// LocalQueues ns/q and default/q; priority classes high (1000) and low
// (-1); ns/low (low, 2 cpu) admitted. A workload of 1 or 2 cpu fits beside
// it; 4 cpu fit by preempting it, at a priority above low's; 8 never fit.
class SimulateLiveTest : public testing::KqdFixture {
 protected:
  void SetUp() override {
    KqdFixture::SetUp();
    ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: ns
  name: q
spec:
  clusterQueue: cq
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: default
  name: q
spec:
  clusterQueue: cq
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: high
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: low
value: -1
)yaml");
    const v1::Workload low = Submit(BuildWorkload({.queue = "q",
                                                   .namespace_name = "ns",
                                                   .name = "low",
                                                   .requests = {{"cpu", "2"}},
                                                   .priority_class = "low"}));
    ASSERT_TRUE(testing::IsTrue(low, "Admitted")) << low.DebugString();
  }

  int Simulate(SimulateOptions options) {
    options.live = true;
    CommandContext ctx = Context();
    return RunSimulateLive(options, ctx);
  }
};

TEST_F(SimulateLiveTest, FromFlagsAdmissibleWithVictims) {
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
  Reason:        Admitted
  Message:       The workload is admitted
  Would Preempt:
    WORKLOAD  CLUSTERQUEUE  REASON
    --------  ------------  ------
    ns/low    cq            InClusterQueue
)"));
  std::vector<v1::SimulateRequest> requests = client().simulate_requests();
  ASSERT_EQ(requests.size(), 1u);
  const v1::Workload& sent = requests[0].workload();
  EXPECT_EQ(sent.metadata().namespace_(), "ns");
  EXPECT_EQ(sent.metadata().name(), "try");
  EXPECT_EQ(sent.spec().queue_name(), "q");
  EXPECT_EQ(sent.spec().priority_class_name(), "high");
  EXPECT_EQ(sent.spec().pod_sets(0).requests().at("cpu"), "4");
}

TEST_F(SimulateLiveTest, FileWorkloadsEachGetAnAnswer) {
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
  Reason:        Admitted
  Message:       The workload is admitted

workload ns/big: not admissible
  Reason:   ExceedsMaxQuota
  Message:  couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, previously considered podsets requests (0) + current podset request (8) > maximum capacity (4)
)"));
  EXPECT_EQ(err_.str(),
            "Warning: w.yaml: document 1 (ResourceFlavor default): skipped: "
            "--server simulates workloads against the live state only\n");
}

TEST_F(SimulateLiveTest, JsonListsTheAnswers) {
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
  // kqd checks the priority class as a submission would. (A missing
  // LocalQueue is no error: the answer is "not admissible, Misconfigured".)
  EXPECT_EQ(Simulate({.requests = {"cpu=1"},
                      .workload = {.queue = "q",
                                   .namespace_name = "ns",
                                   .name = "try",
                                   .priority_class = "nope"}}),
            kExitError);
  EXPECT_EQ(err_.str(),
            "kq: NOT_FOUND: workload ns/try: Workload \"ns/try\": "
            "spec.priorityClassName: WorkloadPriorityClass \"nope\" not "
            "found\n");
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
  EXPECT_THAT(client().calls(), IsEmpty());
}

}  // namespace
}  // namespace kq::cli
