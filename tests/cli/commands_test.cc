// Command tests: `kq` verbs against a real kqd (KqdFixture), through the
// same functions main() reaches, with string streams instead of stdio.

#include "cli/commands/commands.h"

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "tests/cli/kqd_fixture.h"

namespace kq::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::kSeedSetup;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

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

class CommandsTest : public testing::KqdFixture {
 protected:
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

  // The names of kqd's objects of `kind`, "namespace/name" for
  // LocalQueues.
  std::vector<std::string> ObjectNames(const std::string& kind) {
    absl::StatusOr<v1::ListObjectsResponse> listed =
        kqd().ListObjects(kind, "");
    EXPECT_TRUE(listed.ok()) << listed.status();
    std::vector<std::string> names;
    if (!listed.ok()) return names;
    for (const v1::ConfigObject& object : listed->objects()) {
      if (object.has_local_queue()) {
        names.push_back(object.local_queue().metadata().namespace_() + "/" +
                        object.local_queue().metadata().name());
      } else if (object.has_resource_flavor()) {
        names.push_back(object.resource_flavor().metadata().name());
      } else if (object.has_cluster_queue()) {
        names.push_back(object.cluster_queue().metadata().name());
      }
    }
    return names;
  }
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
  const std::vector<v1::ApplyRequest> requests = client().apply_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].objects_size(), 5);
  EXPECT_EQ(requests[0].workloads_size(), 1);
  // Templates go as text, and only names are printed: answers in text too.
  EXPECT_FALSE(
      requests[0].workloads(0).spec().pod_sets(0).template_json().empty());
  EXPECT_EQ(requests[0].template_form(), v1::TEMPLATE_FORM_JSON);
  EXPECT_EQ(GetWorkload("team-ml", "job-llm-finetune-0919").metadata().name(),
            "job-llm-finetune-0919");
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
  // kqd appends five random characters to generateName.
  EXPECT_THAT(out_.str(), MatchesRegex("workload\\.kueue\\.x-k8s\\.io/"
                                       "job-sample-job-[a-z0-9]{5} created\n"));
  const std::vector<v1::Workload> workloads = AllWorkloads();
  ASSERT_EQ(workloads.size(), 1u);
  EXPECT_EQ(workloads[0].metadata().generate_name(), "job-sample-job-");
  EXPECT_EQ(out_.str(),
            absl::StrCat("workload.kueue.x-k8s.io/",
                         workloads[0].metadata().name(), " created\n"));
}

TEST_F(CommandsTest, ApplyUnsupportedKindStillAppliesTheRestAndFails) {
  EXPECT_EQ(Apply({{"mixed.yaml", R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu-a100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata:
  name: default
spec:
  levels: [{nodeLabel: kubernetes.io/hostname}]
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
  EXPECT_THAT(err_.str(), StartsWith("error: mixed.yaml: document 2 (Topology "
                                     "default): "));
  EXPECT_EQ(out_.str(),
            "resourceflavor.kueue.x-k8s.io/gpu-a100 created\n"
            "localqueue.kueue.x-k8s.io/ml-jobs created\n");
  // The valid documents reached the server, the LocalQueue in -n's
  // namespace.
  EXPECT_THAT(ObjectNames("ResourceFlavor"), ElementsAre("gpu-a100"));
  EXPECT_THAT(ObjectNames("LocalQueue"), ElementsAre("team-ml/ml-jobs"));
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
  EXPECT_THAT(ObjectNames("ResourceFlavor"), IsEmpty());
  EXPECT_THAT(ObjectNames("ClusterQueue"), IsEmpty());
  EXPECT_EQ(out_.str(), "");
}

TEST_F(CommandsTest, ApplyNotYamlAppliesNothing) {
  EXPECT_EQ(Apply({{"good.yaml", kSeedSetup}, {"bad.yaml", "a: [b\n"}}),
            kExitError);
  EXPECT_THAT(err_.str(), StartsWith("error: bad.yaml: "));
  EXPECT_THAT(ObjectNames("ResourceFlavor"), IsEmpty());
  EXPECT_THAT(ObjectNames("ClusterQueue"), IsEmpty());
  EXPECT_THAT(ObjectNames("LocalQueue"), IsEmpty());
}

TEST_F(CommandsTest, ApplyNothingIsAnError) {
  EXPECT_EQ(Apply({{"empty.yaml", "---\n"}}), kExitError);
  EXPECT_EQ(err_.str(), "error: no objects passed to apply\n");
  // Nothing to check on kqd: nothing was sent at all.
  EXPECT_THAT(client().calls(), IsEmpty());
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
            "kq: INVALID_ARGUMENT: Workload \"/job-no-namespace\": "
            "metadata.namespace: name is required\n");
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
  // The seed's job fits in the ClusterQueue: kqd admits it.
  ApplySeed();
  ASSERT_EQ(Get({.kind = "lq", .namespace_name = "team-ml"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME      CLUSTERQUEUE        PENDING WORKLOADS   ADMITTED "
            "WORKLOADS\n"
            "ml-jobs   ai-training-queue   0                   1\n");
}

TEST_F(CommandsTest, GetWorkloadsIncludesFinishedOnes) {
  ApplySeedQueues();
  SubmitPending();
  SubmitFinished();
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
  ApplySeedQueues();
  SubmitPending();
  CommandContext ctx = Context();
  ASSERT_EQ(RunDescribe({.kind = "workload",
                         .name = "job-pending",
                         .namespace_name = "team-ml"},
                        ctx),
            kExitOk);
  EXPECT_THAT(out_.str(), StartsWith("Name:         job-pending\n"));
  EXPECT_THAT(out_.str(),
              HasSubstr("\nPending: ExceedsMaxQuota: couldn't assign flavors "
                        "to pod set main: insufficient quota for cpu in "
                        "flavor gpu-a100"));
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
  EXPECT_EQ(err_.str(),
            "kq: NOT_FOUND: LocalQueue \"default/ml-jobs\" not found\n");
}

TEST_F(CommandsTest, CancelFinishesThePendingWorkload) {
  ApplySeedQueues();
  SubmitPending();
  CommandContext ctx = Context();
  ASSERT_EQ(RunCancel({.args = {"workload", "job-pending"},
                       .namespace_name = "team-ml"},
                      ctx),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/job-pending cancelled\n");
  const v1::Workload stored = GetWorkload("team-ml", "job-pending");
  ASSERT_TRUE(testing::IsTrue(stored, "Finished")) << stored.DebugString();
  EXPECT_EQ(testing::FindCondition(stored, "Finished")->reason(), "Cancelled");

  Clear();
  EXPECT_EQ(
      RunCancel({.args = {"job-pending"}, .namespace_name = "team-ml"}, ctx),
      kExitError);
  EXPECT_EQ(err_.str(),
            "kq: FAILED_PRECONDITION: Workload \"team-ml/job-pending\" "
            "already finished\n");
}

TEST_F(CommandsTest, CancelOfAnotherKindIsAUsageError) {
  CommandContext ctx = Context();
  EXPECT_EQ(RunCancel({.args = {"cq", "a"}}, ctx), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: cancel works on workloads only, got kind \"cq\"\n");
}

TEST_F(CommandsTest, FinishRecordsFailure) {
  ApplySeedQueues();
  SubmitAdmitted();
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
  const v1::Workload stored = GetWorkload("team-ml", "job-llm-finetune-0919");
  ASSERT_TRUE(testing::IsTrue(stored, "Finished")) << stored.DebugString();
  const v1::Condition& finished = *testing::FindCondition(stored, "Finished");
  EXPECT_EQ(finished.reason(), "Failed");
  EXPECT_EQ(finished.message(), "OOM");
}

TEST_F(CommandsTest, FinishOfPendingWorkloadIsRefused) {
  ApplySeedQueues();
  SubmitPending();
  CommandContext ctx = Context();
  EXPECT_EQ(
      RunFinish({.args = {"wl", "job-pending"}, .namespace_name = "team-ml"},
                ctx),
      kExitError);
  EXPECT_EQ(err_.str(),
            "kq: FAILED_PRECONDITION: Workload \"team-ml/job-pending\" holds "
            "no quota reservation; only admitted workloads finish (use cancel "
            "to drop a pending one)\n");
}

TEST_F(CommandsTest, DeleteObjectsAndWorkloads) {
  ApplySeed();
  CommandContext ctx = Context();
  // The workload first: kqd keeps a ClusterQueue while a workload holds
  // its quota.
  ASSERT_EQ(RunDelete({.kind = "workload",
                       .name = "job-llm-finetune-0919",
                       .namespace_name = "team-ml"},
                      ctx),
            kExitOk)
      << err_.str();
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
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/job-llm-finetune-0919 deleted\n"
            "localqueue.kueue.x-k8s.io/ml-jobs deleted\n"
            "clusterqueue.kueue.x-k8s.io/ai-training-queue deleted\n");
  // Deleting a workload cancels it.
  const v1::Workload cancelled =
      GetWorkload("team-ml", "job-llm-finetune-0919");
  ASSERT_TRUE(testing::IsTrue(cancelled, "Finished"))
      << cancelled.DebugString();
  EXPECT_EQ(testing::FindCondition(cancelled, "Finished")->reason(),
            "Cancelled");
  // Cluster-scoped kinds are deleted without a namespace.
  using Call = std::tuple<std::string, std::string, std::string>;
  EXPECT_THAT(client().deletes(),
              ElementsAre(Call{"LocalQueue", "team-ml", "ml-jobs"},
                          Call{"ClusterQueue", "", "ai-training-queue"}));
  EXPECT_THAT(ObjectNames("ClusterQueue"), IsEmpty());
  EXPECT_THAT(ObjectNames("LocalQueue"), IsEmpty());

  Clear();
  EXPECT_EQ(RunDelete({.kind = "rf", .name = "nope"}, ctx), kExitError);
  EXPECT_EQ(err_.str(), "kq: NOT_FOUND: ResourceFlavor \"nope\" not found\n");
}

}  // namespace
}  // namespace kq::cli
