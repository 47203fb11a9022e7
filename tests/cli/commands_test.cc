// Command tests: `kq` verbs against FakeClient, through the same functions
// main() reaches, with string streams instead of stdio.

#include "cli/commands/commands.h"

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "tests/cli/fake_client.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// The seed example of the project, as users write it.
constexpr char kSeedSetup[] = R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu-a100
spec:
  nodeLabels:
    cloud.google.com/gke-accelerator: nvidia-tesla-a100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-cpu
spec: {}  # matches every CPU node
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: ai-training-queue
spec:
  queueingStrategy: BestEffortFIFO
  namespaceSelector: {}
  preemption:
    reclaimWithinCohort: Any
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: gpu-a100
      resources:
      - name: "nvidia.com/gpu"
        nominalQuota: 16
      - name: "cpu"
        nominalQuota: 64
      - name: "memory"
        nominalQuota: 256Gi
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: team-ml
  name: ml-jobs
spec:
  clusterQueue: ai-training-queue
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: production-training
value: 1000
description: "Production model training"
)yaml";

constexpr char kSeedJob[] = R"yaml(
apiVersion: batch/v1
kind: Job
metadata:
  namespace: team-ml
  name: llm-finetune-0919
  labels:
    kueue.x-k8s.io/queue-name: ml-jobs
spec:
  suspend: true
  parallelism: 4
  completions: 4
  template:
    spec:
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests:
            nvidia.com/gpu: 1
            cpu: "8"
            memory: "32Gi"
      restartPolicy: Never
)yaml";

class CommandsTest : public ::testing::Test {
 protected:
  CommandContext Context() {
    return CommandContext{
        .client = client_, .out = out_, .err = err_, .now = testing::kNow};
  }

  int Apply(std::vector<ManifestSource> sources,
            const std::string& ns = "default") {
    CommandContext ctx = Context();
    return RunApply({.sources = std::move(sources), .namespace_name = ns}, ctx);
  }

  int Get(const GetOptions& options) {
    CommandContext ctx = Context();
    return RunGet(options, ctx);
  }

  // Applies the seed and forgets its output.
  void ApplySeed() {
    ASSERT_EQ(Apply({{"setup.yaml", kSeedSetup}, {"job.yaml", kSeedJob}}),
              kExitOk)
        << err_.str();
    Clear();
  }

  void Clear() {
    out_.str("");
    err_.str("");
  }

  testing::FakeClient client_{testing::kNow};
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(CommandsTest, ApplySeedSendsOneRequestAndPrintsEachResult) {
  EXPECT_EQ(Apply({{"setup.yaml", kSeedSetup}, {"job.yaml", kSeedJob}}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "resourceflavor.kueue.x-k8s.io/gpu-a100 created\n"
            "resourceflavor.kueue.x-k8s.io/default-cpu created\n"
            "clusterqueue.kueue.x-k8s.io/ai-training-queue created\n"
            "localqueue.kueue.x-k8s.io/ml-jobs created\n"
            "workloadpriorityclass.kueue.x-k8s.io/production-training "
            "created\n"
            "workload.kueue.x-k8s.io/job-llm-finetune-0919 created\n");
  ASSERT_EQ(client_.apply_requests().size(), 1u);
  EXPECT_EQ(client_.apply_requests()[0].objects_size(), 5);
  EXPECT_EQ(client_.apply_requests()[0].workloads_size(), 1);
  // Templates go as text, and only names are printed: answers in text too.
  EXPECT_FALSE(client_.apply_requests()[0]
                   .workloads(0)
                   .spec()
                   .pod_sets(0)
                   .template_json()
                   .empty());
  EXPECT_EQ(client_.apply_requests()[0].template_form(),
            v1::TEMPLATE_FORM_JSON);
  ASSERT_TRUE(client_.FindWorkload("team-ml", "job-llm-finetune-0919"));
}

TEST_F(CommandsTest, ApplyAgainIsUnchangedAndAChangeIsConfigured) {
  ApplySeed();
  ASSERT_EQ(Apply({{"setup.yaml", kSeedSetup}}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "resourceflavor.kueue.x-k8s.io/gpu-a100 unchanged\n"
            "resourceflavor.kueue.x-k8s.io/default-cpu unchanged\n"
            "clusterqueue.kueue.x-k8s.io/ai-training-queue unchanged\n"
            "localqueue.kueue.x-k8s.io/ml-jobs unchanged\n"
            "workloadpriorityclass.kueue.x-k8s.io/production-training "
            "unchanged\n");
  Clear();
  ASSERT_EQ(Apply({{"wpc.yaml", R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: production-training
value: 2000
)yaml"}}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "workloadpriorityclass.kueue.x-k8s.io/production-training "
            "configured\n");
}

TEST_F(CommandsTest, ApplyPrintsTheNameTheServerGenerated) {
  EXPECT_EQ(Apply({{"job.yaml", R"yaml(
apiVersion: batch/v1
kind: Job
metadata:
  generateName: sample-job-
  namespace: team-ml
  labels:
    kueue.x-k8s.io/queue-name: ml-jobs
spec:
  suspend: true
  template:
    spec:
      containers:
      - name: c
        resources:
          requests:
            cpu: "1"
)yaml"}}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/job-sample-job-00001 created\n");
  ASSERT_EQ(client_.apply_requests().size(), 1u);
  EXPECT_EQ(client_.apply_requests()[0].workloads(0).metadata().generate_name(),
            "job-sample-job-");
}

TEST_F(CommandsTest, ApplyUnsupportedKindStillAppliesTheRestAndFails) {
  EXPECT_EQ(Apply({{"mixed.yaml", R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu-a100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueConfig
metadata:
  name: multikueue-config
spec:
  clusters: [worker1]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: ml-jobs
spec:
  clusterQueue: ai-training-queue
)yaml"}},
                  "team-ml"),
            kExitError);
  EXPECT_THAT(err_.str(),
              StartsWith("error: mixed.yaml: document 2 (MultiKueueConfig "
                         "multikueue-config): "));
  EXPECT_EQ(out_.str(),
            "resourceflavor.kueue.x-k8s.io/gpu-a100 created\n"
            "localqueue.kueue.x-k8s.io/ml-jobs created\n");
  // The valid documents reached the server, the LocalQueue in -n's
  // namespace.
  ASSERT_EQ(client_.apply_requests().size(), 1u);
  EXPECT_EQ(client_.apply_requests()[0].objects_size(), 2);
  std::vector<v1::ConfigObject> queues = client_.Objects("LocalQueue");
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_EQ(queues[0].local_queue().metadata().namespace_(), "team-ml");
}

TEST_F(CommandsTest, ApplyInvalidDocumentAppliesNothing) {
  EXPECT_EQ(Apply({{"setup.yaml", R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu-a100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: broken
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: gpu-a100
      resources:
      - name: cpu
        borrowingLimit: 4  # nominalQuota is required
)yaml"}}),
            kExitError);
  EXPECT_THAT(err_.str(),
              StartsWith("error: setup.yaml: document 2 (ClusterQueue "
                         "broken): "));
  EXPECT_THAT(client_.apply_requests(), IsEmpty());
  EXPECT_EQ(out_.str(), "");
}

TEST_F(CommandsTest, ApplyNotYamlAppliesNothing) {
  EXPECT_EQ(Apply({{"good.yaml", kSeedSetup}, {"bad.yaml", "a: [b\n"}}),
            kExitError);
  EXPECT_THAT(err_.str(), StartsWith("error: bad.yaml: "));
  EXPECT_THAT(client_.apply_requests(), IsEmpty());
}

TEST_F(CommandsTest, ApplyNothingIsAnError) {
  EXPECT_EQ(Apply({{"empty.yaml", "---\n"}}), kExitError);
  EXPECT_EQ(err_.str(), "error: no objects passed to apply\n");
  EXPECT_THAT(client_.apply_requests(), IsEmpty());
}

TEST_F(CommandsTest, ApplyServerErrorIsReportedWithItsCode) {
  // A Workload needs a namespace; an explicit empty -n leaves it without one
  // and the server refuses the whole transaction.
  EXPECT_EQ(Apply({{"job.yaml", R"yaml(
apiVersion: batch/v1
kind: Job
metadata:
  name: no-namespace
  labels:
    kueue.x-k8s.io/queue-name: ml-jobs
spec:
  suspend: true
  template:
    spec:
      containers:
      - name: c
        resources:
          requests:
            cpu: "1"
)yaml"}},
                  ""),
            kExitError);
  EXPECT_EQ(err_.str(),
            "kq: INVALID_ARGUMENT: Workload \"job-no-namespace\": "
            "metadata.namespace: required\n");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(CommandsTest, ApplyAndGetProvisioningRequestConfig) {
  ASSERT_EQ(Apply({{"prov.yaml", R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata:
  name: provision-gpu-nodes
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters:
    apiGroup: kueue.x-k8s.io
    kind: ProvisioningRequestConfig
    name: gpu-provision-config
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ProvisioningRequestConfig
metadata:
  name: gpu-provision-config
spec:
  provisioningClassName: queued-provisioning.gke.io
  managedResources: [nvidia.com/gpu]
)yaml"}}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "admissioncheck.kueue.x-k8s.io/provision-gpu-nodes created\n"
            "provisioningrequestconfig.kueue.x-k8s.io/gpu-provision-config "
            "created\n");
  Clear();
  ASSERT_EQ(Get({.kind = "provreqconfig", .output = "name"}), kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "provisioningrequestconfig.kueue.x-k8s.io/gpu-provision-config\n");
  Clear();
  ASSERT_EQ(
      Get({.kind = "prc", .name = "gpu-provision-config", .output = "yaml"}),
      kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("kind: ProvisioningRequestConfig"));
  EXPECT_THAT(out_.str(),
              HasSubstr("provisioningClassName: queued-provisioning.gke.io"));
}

TEST_F(CommandsTest, GetOneObjectAsJsonIsTheKueueObject) {
  ApplySeed();
  ASSERT_EQ(Get({.kind = "cq", .name = "ai-training-queue", .output = "json"}),
            kExitOk)
      << err_.str();
  nlohmann::json json = nlohmann::json::parse(out_.str(), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out_.str();
  EXPECT_EQ(json["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(json["kind"], "ClusterQueue");
  EXPECT_EQ(json["metadata"]["name"], "ai-training-queue");
  EXPECT_TRUE(json["spec"]["resourceGroups"].is_array());
}

TEST_F(CommandsTest, GetListAsJsonIsAList) {
  ApplySeed();
  ASSERT_EQ(Get({.kind = "resourceflavors", .output = "json"}), kExitOk)
      << err_.str();
  nlohmann::json json = nlohmann::json::parse(out_.str(), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out_.str();
  EXPECT_EQ(json["apiVersion"], "v1");
  EXPECT_EQ(json["kind"], "List");
  ASSERT_EQ(json["items"].size(), 2u);
  EXPECT_EQ(json["items"][0]["kind"], "ResourceFlavor");
  EXPECT_EQ(json["items"][0]["metadata"]["name"], "default-cpu");
  EXPECT_EQ(json["items"][1]["metadata"]["name"], "gpu-a100");
}

TEST_F(CommandsTest, GetWorkloadAsYaml) {
  ApplySeed();
  ASSERT_EQ(Get({.kind = "wl",
                 .name = "job-llm-finetune-0919",
                 .namespace_name = "team-ml",
                 .output = "yaml"}),
            kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("kind: Workload"));
  EXPECT_THAT(out_.str(), HasSubstr("name: job-llm-finetune-0919"));
}

TEST_F(CommandsTest, GetNames) {
  ApplySeed();
  ASSERT_EQ(Get({.kind = "rf", .output = "name"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "resourceflavor.kueue.x-k8s.io/default-cpu\n"
            "resourceflavor.kueue.x-k8s.io/gpu-a100\n");
  Clear();
  ASSERT_EQ(
      Get({.kind = "workloads", .all_namespaces = true, .output = "name"}),
      kExitOk);
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/job-llm-finetune-0919\n");
}

TEST_F(CommandsTest, GetTableListsTheNamespace) {
  ApplySeed();
  ASSERT_EQ(Get({.kind = "lq", .namespace_name = "team-ml"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME      CLUSTERQUEUE        PENDING WORKLOADS   ADMITTED "
            "WORKLOADS\n"
            "ml-jobs   ai-training-queue   0                   0\n");
}

TEST_F(CommandsTest, GetWorkloadsIncludesFinishedOnes) {
  client_.PutWorkload(testing::PendingWorkload());
  client_.PutWorkload(testing::FinishedWorkload());
  ASSERT_EQ(
      Get({.kind = "workloads", .namespace_name = "team-ml", .output = "name"}),
      kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/job-done\n"
            "workload.kueue.x-k8s.io/job-pending\n");
}

TEST_F(CommandsTest, GetEmptySaysNoResourcesFoundOnStderr) {
  EXPECT_EQ(Get({.kind = "lq"}), kExitOk);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "No resources found in default namespace.\n");
  Clear();
  EXPECT_EQ(Get({.kind = "cq", .output = "wide"}), kExitOk);
  EXPECT_EQ(err_.str(), "No resources found\n");
  Clear();
  EXPECT_EQ(Get({.kind = "wl", .all_namespaces = true}), kExitOk);
  EXPECT_EQ(err_.str(), "No resources found\n");
}

TEST_F(CommandsTest, GetMissingObjectIsNotFound) {
  EXPECT_EQ(Get({.kind = "cq", .name = "nope"}), kExitError);
  EXPECT_EQ(err_.str(), "kq: NOT_FOUND: ClusterQueue \"nope\" not found\n");
}

TEST_F(CommandsTest, GetUsageErrors) {
  EXPECT_EQ(Get({.kind = "pods"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: the server doesn't have a resource type \"pods\"\n");
  Clear();
  EXPECT_EQ(Get({.kind = "cq", .output = "xml"}), kExitUsage);
  Clear();
  EXPECT_EQ(Get({.kind = "wl", .name = "a", .all_namespaces = true}),
            kExitUsage);
}

TEST_F(CommandsTest, DescribeWorkloadShowsWhyItIsPending) {
  client_.PutWorkload(testing::PendingWorkload());
  CommandContext ctx = Context();
  ASSERT_EQ(RunDescribe({.kind = "workload",
                         .name = "job-pending",
                         .namespace_name = "team-ml"},
                        ctx),
            kExitOk);
  EXPECT_THAT(out_.str(), StartsWith("Name:         job-pending\n"));
  EXPECT_THAT(out_.str(),
              HasSubstr("\nPending: Pending: couldn't assign flavors"));
}

TEST_F(CommandsTest, DescribeObjectAndMissingObject) {
  ApplySeed();
  CommandContext ctx = Context();
  ASSERT_EQ(RunDescribe({.kind = "cq", .name = "ai-training-queue"}, ctx),
            kExitOk);
  EXPECT_THAT(out_.str(), StartsWith("Name:         ai-training-queue\n"));
  EXPECT_THAT(out_.str(), HasSubstr("Kind:         ClusterQueue\n"));
  Clear();
  EXPECT_EQ(RunDescribe({.kind = "lq", .name = "ml-jobs"}, ctx), kExitError);
  EXPECT_EQ(err_.str(), "kq: NOT_FOUND: LocalQueue \"ml-jobs\" not found\n");
}

TEST_F(CommandsTest, CancelFinishesThePendingWorkload) {
  client_.PutWorkload(testing::PendingWorkload());
  CommandContext ctx = Context();
  ASSERT_EQ(RunCancel({.args = {"workload", "job-pending"},
                       .namespace_name = "team-ml"},
                      ctx),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/job-pending cancelled\n");
  std::optional<v1::Workload> stored =
      client_.FindWorkload("team-ml", "job-pending");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->status().conditions().rbegin()->reason(), "Cancelled");

  Clear();
  EXPECT_EQ(
      RunCancel({.args = {"job-pending"}, .namespace_name = "team-ml"}, ctx),
      kExitError);
  EXPECT_EQ(err_.str(),
            "kq: FAILED_PRECONDITION: workload \"job-pending\" already "
            "finished\n");
}

TEST_F(CommandsTest, CancelOfAnotherKindIsAUsageError) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunCancel({.args = {"cq", "a"}}, ctx), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: cancel works on workloads only, got kind \"cq\"\n");
}

TEST_F(CommandsTest, FinishRecordsFailure) {
  client_.PutWorkload(testing::AdmittedWorkload());
  CommandContext ctx = Context();
  ASSERT_EQ(RunFinish({.args = {"job-llm-finetune-0919"},
                       .namespace_name = "team-ml",
                       .failed = true,
                       .message = "OOM"},
                      ctx),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/job-llm-finetune-0919 finished\n");
  std::optional<v1::Workload> stored =
      client_.FindWorkload("team-ml", "job-llm-finetune-0919");
  ASSERT_TRUE(stored.has_value());
  const v1::Condition& finished = *stored->status().conditions().rbegin();
  EXPECT_EQ(finished.type(), "Finished");
  EXPECT_EQ(finished.reason(), "Failed");
  EXPECT_EQ(finished.message(), "OOM");
}

TEST_F(CommandsTest, FinishOfPendingWorkloadIsRefused) {
  client_.PutWorkload(testing::PendingWorkload());
  CommandContext ctx = Context();
  EXPECT_EQ(
      RunFinish({.args = {"wl", "job-pending"}, .namespace_name = "team-ml"},
                ctx),
      kExitError);
  EXPECT_EQ(err_.str(),
            "kq: FAILED_PRECONDITION: workload \"job-pending\" holds no quota "
            "reservation\n");
}

TEST_F(CommandsTest, DeleteObjectsAndWorkloads) {
  ApplySeed();
  CommandContext ctx = Context();
  ASSERT_EQ(
      RunDelete({.kind = "lq", .name = "ml-jobs", .namespace_name = "team-ml"},
                ctx),
      kExitOk)
      << err_.str();
  ASSERT_EQ(RunDelete({.kind = "clusterqueues",
                       .name = "ai-training-queue",
                       .namespace_name = "team-ml"},
                      ctx),
            kExitOk)
      << err_.str();
  ASSERT_EQ(RunDelete({.kind = "workload",
                       .name = "job-llm-finetune-0919",
                       .namespace_name = "team-ml"},
                      ctx),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "localqueue.kueue.x-k8s.io/ml-jobs deleted\n"
            "clusterqueue.kueue.x-k8s.io/ai-training-queue deleted\n"
            "workload.kueue.x-k8s.io/job-llm-finetune-0919 deleted\n");
  // Cluster-scoped kinds are deleted without a namespace.
  using Call = std::tuple<std::string, std::string, std::string>;
  EXPECT_THAT(
      client_.deletes(),
      ::testing::ElementsAre(Call{"LocalQueue", "team-ml", "ml-jobs"},
                             Call{"ClusterQueue", "", "ai-training-queue"}));
  EXPECT_TRUE(client_.Objects("ClusterQueue").empty());

  Clear();
  EXPECT_EQ(RunDelete({.kind = "rf", .name = "nope"}, ctx), kExitError);
  EXPECT_EQ(err_.str(), "kq: NOT_FOUND: ResourceFlavor \"nope\" not found\n");
}

}  // namespace
}  // namespace kq::cli
