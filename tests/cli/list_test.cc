// `kq list` (cli/commands/list.h) through RunCli against a real kqd
// (KqdFixture), golden outputs for every kind and flag. Ported from
// kueuectl's cmd/kueuectl/app/list tests where kqd can make the situation:
// TestClusterQueueCmd (active/inactive, label selectors, not found),
// TestLocalQueueCmd (namespace, clusterqueue and label filters, not found
// with and without -A), TestResourceFlavorCmd (node labels, selectors, not
// found), TestWorkloadCmd (namespace, localqueue, clusterqueue, statuses,
// label selector, --for, position in queue, not found). The printer cases
// that need ages and conditions kqd does not make (an Admitted=False
// condition, hours-old objects) are ported against the printers, with
// kueuectl's expected rows.

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/app.h"
#include "cli/command.h"
#include "cli/printers/list_printer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "kq/client/client.h"
#include "tests/cli/kqd_fixture.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::ParseText;

// Flavors with and without node labels, one with a taint (which no
// ClusterQueue uses: kq's workloads here do not tolerate it); four
// ClusterQueues (two in cohort research, one behind an admission check that
// stays Pending, one inactive for a missing flavor); LocalQueues in three
// namespaces, ml-jobs in two of them.
constexpr char kSetup[] = R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: gpu-a100
  labels:
    tier: gpu
spec:
  nodeLabels:
    node-pool: gpu
    cloud.google.com/gke-accelerator: nvidia-tesla-a100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: spot
  labels:
    tier: spot
spec:
  nodeLabels:
    node-pool: spot
  nodeTaints:
  - key: cloud.google.com/gke-spot
    value: "true"
    effect: NoSchedule
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-cpu
  labels:
    tier: cpu
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata:
  name: manual-check
spec:
  controllerName: example.com/manual
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: ai-training-queue
  labels:
    team: ml
spec:
  cohort: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: gpu-a100
      resources:
      - name: cpu
        nominalQuota: 64
      - name: memory
        nominalQuota: 256Gi
      - name: nvidia.com/gpu
        nominalQuota: 16
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cpu-queue
  labels:
    team: infra
spec:
  cohort: research
  queueingStrategy: StrictFIFO
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-cpu
      resources:
      - name: cpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: checked-queue
  labels:
    team: infra
spec:
  namespaceSelector: {}
  admissionChecks: ["manual-check"]
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-cpu
      resources:
      - name: cpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: broken-queue
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: missing-flavor
      resources:
      - name: cpu
        nominalQuota: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: team-ml
  name: ml-jobs
  labels:
    tier: prod
spec:
  clusterQueue: ai-training-queue
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: team-ml
  name: cpu-jobs
spec:
  clusterQueue: cpu-queue
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: team-data
  name: ml-jobs
spec:
  clusterQueue: ai-training-queue
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: default
  name: dev
spec:
  clusterQueue: checked-queue
)yaml";

class ListTest : public testing::KqdFixture {
 protected:
  ListTest() {
    env_.connect = [this](const client::ClientOptions&) -> client::Client& {
      return client();
    };
    env_.out = &out_;
    env_.err = &err_;
    env_.now = now_;
  }

  // `kq list ARGS...`, with out_ and err_ emptied first.
  int List(std::vector<std::string> args) {
    Clear();
    args.insert(args.begin(), {"kq", "list"});
    return RunCli(args, env_);
  }

  // One pod of `cpu`, optionally the Job of kq-k8s-shim's annotation.
  v1::Workload Wl(const std::string& ns, const std::string& name,
                  const std::string& queue, const std::string& cpu,
                  const std::string& job = "", int count = 1) {
    v1::Workload wl;
    wl.mutable_metadata()->set_namespace_(ns);
    wl.mutable_metadata()->set_name(name);
    if (!job.empty()) {
      (*wl.mutable_metadata()->mutable_annotations())["kq.dev/job-name"] = job;
      (*wl.mutable_metadata()->mutable_labels())["app"] = "train";
    }
    wl.mutable_spec()->set_queue_name(queue);
    v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(count);
    (*ps->mutable_requests())["cpu"] = cpu;
    return wl;
  }

  // The setup, and workloads in every state:
  //   team-ml/train-big (Job train-big): admitted, 32 of 64 cpu;
  //   team-ml/train-huge (Job train-huge), wait-a, team-data/wait-b,
  //     team-ml/wait-c: pending in ai-training-queue, in that order (each
  //     asks more than the 32 cpu left);
  //   team-ml/cpu-run: admitted in cpu-queue; team-ml/cpu-done: finished;
  //   default/checked: QuotaReserved, waiting for manual-check.
  void Seed() {
    ApplyYaml(kSetup);
    Submit(Wl("team-ml", "train-big", "ml-jobs", "8", "train-big", 4));
    Submit(Wl("team-ml", "train-huge", "ml-jobs", "8", "train-huge", 16));
    Submit(Wl("team-ml", "wait-a", "ml-jobs", "40"));
    Submit(Wl("team-data", "wait-b", "ml-jobs", "40"));
    Submit(Wl("team-ml", "wait-c", "ml-jobs", "40"));
    Submit(Wl("team-ml", "cpu-run", "cpu-jobs", "2"));
    Submit(Wl("team-ml", "cpu-done", "cpu-jobs", "1"));
    ASSERT_TRUE(kqd().FinishWorkload("team-ml", "cpu-done", true, "").ok());
    Submit(Wl("default", "checked", "dev", "1"));
    Clear();
  }

  Environment env_;
};

// ---------------------------------------------------------------------------
// ClusterQueues.

TEST_F(ListTest, ClusterQueuesTable) {
  Seed();
  const std::string want =
      "NAME                COHORT     PENDING WORKLOADS   ADMITTED WORKLOADS   "
      "ACTIVE   AGE\n"
      "ai-training-queue   research   4                   1                    "
      "true     3d\n"
      "broken-queue                   0                   0                    "
      "false    3d\n"
      "checked-queue                  0                   0                    "
      "true     3d\n"
      "cpu-queue           research   0                   1                    "
      "true     3d\n";
  for (const char* alias : {"clusterqueue", "cq", "clusterqueues"}) {
    SCOPED_TRACE(alias);
    EXPECT_EQ(List({alias}), kExitOk) << err_.str();
    EXPECT_EQ(out_.str(), want);
    EXPECT_EQ(err_.str(), "");
  }
}

// kueuectl: "should print active cluster queue list", "should print
// inactive cluster queue list".
TEST_F(ListTest, ClusterQueuesActiveFilter) {
  Seed();
  EXPECT_EQ(List({"cq", "--active", "false"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME           COHORT   PENDING WORKLOADS   ADMITTED WORKLOADS   "
            "ACTIVE   AGE\n"
            "broken-queue            0                   0                    "
            "false    3d\n");
  EXPECT_EQ(List({"cq", "--active=true"}), kExitOk);
  EXPECT_THAT(out_.str(), Not(HasSubstr("broken-queue")));
  EXPECT_THAT(out_.str(), HasSubstr("ai-training-queue"));
  // Go's ParseBool spellings.
  EXPECT_EQ(List({"cq", "--active", "F"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("broken-queue"));
}

TEST_F(ListTest, ClusterQueuesActiveErrors) {
  Seed();
  EXPECT_EQ(List({"cq", "--active", "true,false"}), kExitUsage);
  EXPECT_EQ(err_.str(), "error: only one active flag can be provided\n");
  EXPECT_EQ(List({"cq", "--active", "true", "--active", "false"}), kExitUsage);
  EXPECT_EQ(err_.str(), "error: only one active flag can be provided\n");
  EXPECT_EQ(List({"cq", "--active", "maybe"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: invalid argument \"maybe\" for \"--active\" flag: "
            "strconv.ParseBool: parsing \"maybe\": invalid syntax\n");
  EXPECT_EQ(out_.str(), "");
}

// kueuectl: "should print cluster queue list with label selector" (and
// its short flag).
TEST_F(ListTest, ClusterQueuesLabelSelector) {
  Seed();
  const std::string infra =
      "NAME            COHORT     PENDING WORKLOADS   ADMITTED WORKLOADS   "
      "ACTIVE   AGE\n"
      "checked-queue              0                   0                    "
      "true     3d\n"
      "cpu-queue       research   0                   1                    "
      "true     3d\n";
  EXPECT_EQ(List({"cq", "--selector", "team=infra"}), kExitOk);
  EXPECT_EQ(out_.str(), infra);
  EXPECT_EQ(List({"cq", "-l", "team==infra"}), kExitOk);
  EXPECT_EQ(out_.str(), infra);
  EXPECT_EQ(List({"cq", "-l", "team notin (ml),team"}), kExitOk);
  EXPECT_EQ(out_.str(), infra);
  EXPECT_EQ(List({"cq", "-l", "!team", "-o", "name"}), kExitOk);
  EXPECT_EQ(out_.str(), "clusterqueue.kueue.x-k8s.io/broken-queue\n");
  EXPECT_EQ(List({"cq", "-l", "team!=infra", "-o", "name"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "clusterqueue.kueue.x-k8s.io/ai-training-queue\n"
            "clusterqueue.kueue.x-k8s.io/broken-queue\n");
  EXPECT_EQ(List({"cq", "-l", "team=nobody"}), kExitOk);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "No resources found\n");
}

TEST_F(ListTest, ClusterQueuesFieldSelector) {
  Seed();
  EXPECT_EQ(
      List({"cq", "--field-selector", "metadata.name=cpu-queue", "-o", "name"}),
      kExitOk);
  EXPECT_EQ(out_.str(), "clusterqueue.kueue.x-k8s.io/cpu-queue\n");
  EXPECT_EQ(List({"cq", "--field-selector",
                  "metadata.name!=cpu-queue,metadata.name!=broken-queue", "-o",
                  "name"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "clusterqueue.kueue.x-k8s.io/ai-training-queue\n"
            "clusterqueue.kueue.x-k8s.io/checked-queue\n");
  EXPECT_EQ(List({"cq", "--field-selector", "spec.cohort=research"}),
            kExitUsage);
  EXPECT_EQ(err_.str(), "error: field label not supported: spec.cohort\n");
}

TEST_F(ListTest, ClusterQueuesWide) {
  Seed();
  EXPECT_EQ(
      List({"cq", "-o", "wide", "--field-selector", "metadata.name=cpu-queue"}),
      kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME        COHORT     PENDING WORKLOADS   ADMITTED WORKLOADS   "
            "ACTIVE   AGE   STRATEGY     USAGE\n"
            "cpu-queue   research   0                   1                    "
            "true     3d    StrictFIFO   default-cpu: cpu 2/4\n");
}

TEST_F(ListTest, ClusterQueuesJsonAndYaml) {
  Seed();
  EXPECT_EQ(List({"cq", "-o", "json", "-l", "team=infra"}), kExitOk);
  nlohmann::json list = nlohmann::json::parse(out_.str());
  EXPECT_EQ(list["kind"], "List");
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0]["kind"], "ClusterQueue");
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "checked-queue");
  EXPECT_EQ(list["items"][1]["metadata"]["name"], "cpu-queue");
  EXPECT_EQ(
      List({"cq", "-o", "yaml", "--field-selector", "metadata.name=cpu-queue"}),
      kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("kind: List\n"));
  EXPECT_THAT(out_.str(), HasSubstr("  name: cpu-queue\n"));
}

// kueuectl: "should print not found error".
TEST_F(ListTest, NoClusterQueues) {
  EXPECT_EQ(List({"cq"}), kExitOk);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "No resources found\n");
  // -o json still prints the (empty) List, as kueuectl's printer does.
  EXPECT_EQ(List({"cq", "-o", "json"}), kExitOk);
  EXPECT_EQ(nlohmann::json::parse(out_.str())["items"].size(), 0u);
  EXPECT_EQ(err_.str(), "No resources found\n");
}

// ---------------------------------------------------------------------------
// LocalQueues.

// kueuectl: "should print local queue list with namespace filter".
TEST_F(ListTest, LocalQueuesOfANamespace) {
  Seed();
  for (const char* alias : {"localqueue", "lq", "localqueues"}) {
    SCOPED_TRACE(alias);
    EXPECT_EQ(List({alias, "-n", "team-ml"}), kExitOk) << err_.str();
    EXPECT_EQ(out_.str(),
              "NAME       CLUSTERQUEUE        PENDING WORKLOADS   "
              "ADMITTED WORKLOADS   AGE\n"
              "cpu-jobs   cpu-queue           0                   1"
              "                    3d\n"
              "ml-jobs    ai-training-queue   3                   1"
              "                    3d\n");
  }
  // The default namespace is "default".
  EXPECT_EQ(List({"lq"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME   CLUSTERQUEUE    PENDING WORKLOADS   ADMITTED WORKLOADS   "
            "AGE\n"
            "dev    checked-queue   0                   0                    "
            "3d\n");
}

TEST_F(ListTest, LocalQueuesOfAllNamespaces) {
  Seed();
  EXPECT_EQ(List({"lq", "-A"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAMESPACE   NAME       CLUSTERQUEUE        PENDING WORKLOADS   "
            "ADMITTED WORKLOADS   AGE\n"
            "default     dev        checked-queue       0                   "
            "0                    3d\n"
            "team-data   ml-jobs    ai-training-queue   1                   "
            "0                    3d\n"
            "team-ml     cpu-jobs   cpu-queue           0                   "
            "1                    3d\n"
            "team-ml     ml-jobs    ai-training-queue   3                   "
            "1                    3d\n");
}

// kueuectl: "should print local queue list with clusterqueue filter",
// "... with label selector filter" (and its short flag).
TEST_F(ListTest, LocalQueuesFilters) {
  Seed();
  EXPECT_EQ(
      List({"lq", "-A", "--clusterqueue", "ai-training-queue", "-o", "name"}),
      kExitOk);
  EXPECT_EQ(out_.str(),
            "localqueue.kueue.x-k8s.io/ml-jobs\n"
            "localqueue.kueue.x-k8s.io/ml-jobs\n");
  EXPECT_EQ(List({"lq", "-A", "-c", "cpu-queue"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAMESPACE   NAME       CLUSTERQUEUE   PENDING WORKLOADS   "
            "ADMITTED WORKLOADS   AGE\n"
            "team-ml     cpu-jobs   cpu-queue      0                   "
            "1                    3d\n");
  EXPECT_EQ(List({"lq", "-A", "--selector", "tier=prod", "-o", "wide"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "NAMESPACE   NAME      CLUSTERQUEUE        PENDING WORKLOADS   "
            "ADMITTED WORKLOADS   AGE   ACTIVE\n"
            "team-ml     ml-jobs   ai-training-queue   3                   "
            "1                    3d    true\n");
  EXPECT_EQ(List({"lq", "-n", "team-ml", "--field-selector",
                  "metadata.namespace=team-data"}),
            kExitOk);
  EXPECT_EQ(err_.str(), "No resources found in team-ml namespace.\n");
}

// kueuectl: "should print not found error" and "... with all-namespaces
// filter".
TEST_F(ListTest, NoLocalQueues) {
  EXPECT_EQ(List({"lq"}), kExitOk);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "No resources found in default namespace.\n");
  EXPECT_EQ(List({"lq", "-A"}), kExitOk);
  EXPECT_EQ(err_.str(), "No resources found\n");
}

// ---------------------------------------------------------------------------
// ResourceFlavors.

// kueuectl: "should print resource flavor list with node labels", "... with
// label selector filter" (and its short flag).
TEST_F(ListTest, ResourceFlavors) {
  Seed();
  const std::string want =
      "NAME          NODE LABELS                                         "
      "                AGE\n"
      "default-cpu                                                       "
      "                3d\n"
      "gpu-a100      cloud.google.com/gke-accelerator=nvidia-tesla-a100, "
      "node-pool=gpu   3d\n"
      "spot          node-pool=spot                                      "
      "                3d\n";
  for (const char* alias : {"resourceflavor", "rf", "resourceflavors"}) {
    SCOPED_TRACE(alias);
    EXPECT_EQ(List({alias}), kExitOk) << err_.str();
    EXPECT_EQ(out_.str(), want);
  }
  EXPECT_EQ(List({"rf", "-l", "tier=cpu"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME          NODE LABELS   AGE\n"
            "default-cpu                 3d\n");
  EXPECT_EQ(List({"rf", "--selector", "tier in (spot, tpu)", "-o", "wide"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME   NODE LABELS      AGE   NODE TAINTS\n"
            "spot   node-pool=spot   3d    "
            "cloud.google.com/gke-spot=true:NoSchedule\n");
  EXPECT_EQ(List({"rf", "-o", "name"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "resourceflavor.kueue.x-k8s.io/default-cpu\n"
            "resourceflavor.kueue.x-k8s.io/gpu-a100\n"
            "resourceflavor.kueue.x-k8s.io/spot\n");
}

TEST_F(ListTest, NoResourceFlavors) {
  EXPECT_EQ(List({"rf"}), kExitOk);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "No resources found\n");
}

// ---------------------------------------------------------------------------
// Workloads.

constexpr char kWorkloadHeader[] =
    "NAME         JOB TYPE   JOB NAME     LOCALQUEUE   CLUSTERQUEUE        "
    "STATUS     POSITION IN QUEUE   EXEC TIME   AGE\n";

// kueuectl: "should print workload list with namespace filter", "... with
// Job types", "... with position in queue": every status, the Jobs of
// kq-k8s-shim's workloads, the positions of the pending ones.
TEST_F(ListTest, WorkloadsOfANamespace) {
  Seed();
  const std::string want =
      std::string(kWorkloadHeader) +
      "cpu-done                             cpu-jobs     cpu-queue           "
      "FINISHED                       0s          3d\n"
      "cpu-run                              cpu-jobs     cpu-queue           "
      "ADMITTED                       3d          3d\n"
      "train-big    job        train-big    ml-jobs      ai-training-queue   "
      "ADMITTED                       3d          3d\n"
      "train-huge   job        train-huge   ml-jobs      ai-training-queue   "
      "PENDING    0                               3d\n"
      "wait-a                               ml-jobs      ai-training-queue   "
      "PENDING    1                               3d\n"
      "wait-c                               ml-jobs      ai-training-queue   "
      "PENDING    2                               3d\n";
  for (const char* alias : {"workload", "wl", "workloads", "kwl",
                            "kueueworkload", "kueueworkloads"}) {
    SCOPED_TRACE(alias);
    EXPECT_EQ(List({alias, "-n", "team-ml"}), kExitOk) << err_.str();
    EXPECT_EQ(out_.str(), want);
    EXPECT_EQ(err_.str(), "");
  }
  // One visibility call for the one ClusterQueue with pending workloads.
  std::vector<v1::PendingWorkloadsRequest> asked =
      client().pending_workloads_requests();
  ASSERT_FALSE(asked.empty());
  EXPECT_EQ(asked.back().cluster_queue(), "ai-training-queue");
  EXPECT_EQ(asked.back().limit(), 100'000);
}

// The POSITION IN QUEUE column is what `kq describe` (Explain) says, and
// ns-b's LocalQueue of the same name has positions of its own.
TEST_F(ListTest, WorkloadPositionsAreDescribes) {
  Seed();
  EXPECT_EQ(List({"wl", "-A", "--status", "pending"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAMESPACE   NAME         JOB TYPE   JOB NAME     LOCALQUEUE   "
            "CLUSTERQUEUE        STATUS    POSITION IN QUEUE   EXEC TIME   "
            "AGE\n"
            "team-data   wait-b                               ml-jobs      "
            "ai-training-queue   PENDING   0                               "
            "3d\n"
            "team-ml     train-huge   job        train-huge   ml-jobs      "
            "ai-training-queue   PENDING   0                               "
            "3d\n"
            "team-ml     wait-a                               ml-jobs      "
            "ai-training-queue   PENDING   1                               "
            "3d\n"
            "team-ml     wait-c                               ml-jobs      "
            "ai-training-queue   PENDING   2                               "
            "3d\n");
  for (const auto& [ns, name, position] :
       std::vector<std::tuple<std::string, std::string, int>>{
           {"team-data", "wait-b", 0},
           {"team-ml", "train-huge", 0},
           {"team-ml", "wait-a", 1},
           {"team-ml", "wait-c", 2}}) {
    absl::StatusOr<v1::ExplainResponse> explained = kqd().Explain(ns, name);
    ASSERT_TRUE(explained.ok()) << explained.status();
    EXPECT_EQ(explained->position_in_local_queue(), position) << name;
  }
}

// kueuectl: "should print workload list with localqueue filter" (and its
// short flag), "... with clusterqueue filter" (and its short flag).
TEST_F(ListTest, WorkloadQueueFilters) {
  Seed();
  EXPECT_EQ(List({"wl", "-A", "--localqueue", "ml-jobs", "-o", "name"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/wait-b\n"
            "workload.kueue.x-k8s.io/train-big\n"
            "workload.kueue.x-k8s.io/train-huge\n"
            "workload.kueue.x-k8s.io/wait-a\n"
            "workload.kueue.x-k8s.io/wait-c\n");
  EXPECT_EQ(List({"wl", "-n", "team-ml", "-q", "cpu-jobs", "-o", "name"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/cpu-done\n"
            "workload.kueue.x-k8s.io/cpu-run\n");
  // -c takes the row's ClusterQueue: pending workloads count too.
  EXPECT_EQ(
      List({"wl", "-A", "--clusterqueue", "ai-training-queue", "-o", "name"}),
      kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/wait-b\n"
            "workload.kueue.x-k8s.io/train-big\n"
            "workload.kueue.x-k8s.io/train-huge\n"
            "workload.kueue.x-k8s.io/wait-a\n"
            "workload.kueue.x-k8s.io/wait-c\n");
  EXPECT_EQ(List({"wl", "-c", "checked-queue"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME      JOB TYPE   JOB NAME   LOCALQUEUE   CLUSTERQUEUE    "
            "STATUS          POSITION IN QUEUE   EXEC TIME   AGE\n"
            "checked                         dev          checked-queue   "
            "QUOTARESERVED                                   3d\n");
}

// kueuectl: "should print workload list with all status flag", "... with
// only admitted and finished status flags", "... with only pending
// filter", "... with only quotareserved filter", "... with only admitted
// filter", "... with only finished status filter".
TEST_F(ListTest, WorkloadStatusFilters) {
  Seed();
  struct Case {
    std::vector<std::string> args;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {{"--status", "all"},
            "workload.kueue.x-k8s.io/checked\n"
            "workload.kueue.x-k8s.io/wait-b\n"
            "workload.kueue.x-k8s.io/cpu-done\n"
            "workload.kueue.x-k8s.io/cpu-run\n"
            "workload.kueue.x-k8s.io/train-big\n"
            "workload.kueue.x-k8s.io/train-huge\n"
            "workload.kueue.x-k8s.io/wait-a\n"
            "workload.kueue.x-k8s.io/wait-c\n"},
           {{"--status", "admitted", "--status", "finished"},
            "workload.kueue.x-k8s.io/cpu-done\n"
            "workload.kueue.x-k8s.io/cpu-run\n"
            "workload.kueue.x-k8s.io/train-big\n"},
           {{"--status", "admitted,finished"},
            "workload.kueue.x-k8s.io/cpu-done\n"
            "workload.kueue.x-k8s.io/cpu-run\n"
            "workload.kueue.x-k8s.io/train-big\n"},
           {{"--status", "PENDING"},
            "workload.kueue.x-k8s.io/wait-b\n"
            "workload.kueue.x-k8s.io/train-huge\n"
            "workload.kueue.x-k8s.io/wait-a\n"
            "workload.kueue.x-k8s.io/wait-c\n"},
           {{"--status", "quotareserved"}, "workload.kueue.x-k8s.io/checked\n"},
           {{"--status", "admitted"},
            "workload.kueue.x-k8s.io/cpu-run\n"
            "workload.kueue.x-k8s.io/train-big\n"},
           {{"--status", "finished"}, "workload.kueue.x-k8s.io/cpu-done\n"},
           {{"--status", "finished", "--status", "all"},
            "workload.kueue.x-k8s.io/checked\n"
            "workload.kueue.x-k8s.io/wait-b\n"
            "workload.kueue.x-k8s.io/cpu-done\n"
            "workload.kueue.x-k8s.io/cpu-run\n"
            "workload.kueue.x-k8s.io/train-big\n"
            "workload.kueue.x-k8s.io/train-huge\n"
            "workload.kueue.x-k8s.io/wait-a\n"
            "workload.kueue.x-k8s.io/wait-c\n"},
       }) {
    std::vector<std::string> args = {"wl", "-A", "-o", "name"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    SCOPED_TRACE(absl::StrJoin(c.args, " "));
    EXPECT_EQ(List(args), kExitOk) << err_.str();
    EXPECT_EQ(out_.str(), c.want);
  }
  EXPECT_EQ(List({"wl", "--status", "running"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: invalid status value (running). Must be \"all\", "
            "\"pending\", \"admitted\" or \"finished\"\n");
}

// kueuectl: "should print workload list with label selector filter" (and
// its short flag).
TEST_F(ListTest, WorkloadSelectors) {
  Seed();
  EXPECT_EQ(List({"wl", "-A", "--selector", "app=train", "-o", "name"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/train-big\n"
            "workload.kueue.x-k8s.io/train-huge\n");
  EXPECT_EQ(List({"wl", "-A", "-l", "app!=train", "--field-selector",
                  "status.admission.clusterQueue=cpu-queue", "-o", "name"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "workload.kueue.x-k8s.io/cpu-done\n"
            "workload.kueue.x-k8s.io/cpu-run\n");
  EXPECT_EQ(List({"wl", "-A", "--field-selector",
                  "metadata.namespace=team-data,metadata.name==wait-b", "-o",
                  "name"}),
            kExitOk);
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/wait-b\n");
  EXPECT_EQ(List({"wl", "-l", "app in (train"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: unable to parse label selector \"app in (train\": found "
            "'', expected: ',' or ')'\n");
  EXPECT_EQ(List({"wl", "--field-selector", "spec.queueName=ml-jobs"}),
            kExitUsage);
  EXPECT_EQ(err_.str(), "error: field label not supported: spec.queueName\n");
}

// kueuectl: "should print workload list with resource filter", "... with
// full resource filter" (as batch/v1 Jobs: kq knows no other kind).
TEST_F(ListTest, WorkloadsForAJob) {
  Seed();
  const std::string want =
      "NAME        JOB TYPE   JOB NAME    LOCALQUEUE   CLUSTERQUEUE        "
      "STATUS     POSITION IN QUEUE   EXEC TIME   AGE\n"
      "train-big   job        train-big   ml-jobs      ai-training-queue   "
      "ADMITTED                       3d          3d\n";
  for (const char* form :
       {"job/train-big", "jobs/train-big", "job.batch/train-big",
        "Job/train-big", "jobs.v1.batch/train-big"}) {
    SCOPED_TRACE(form);
    EXPECT_EQ(List({"wl", "-n", "team-ml", "--for", form}), kExitOk)
        << err_.str();
    EXPECT_EQ(out_.str(), want);
  }
  EXPECT_EQ(List({"wl", "-n", "team-data", "--for", "job/train-big"}), kExitOk);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "No resources found in team-data namespace.\n");
  EXPECT_EQ(List({"wl", "--for", "train-big"}), kExitUsage);
  EXPECT_EQ(err_.str(), "error: --for must be in resource/name form\n");
  EXPECT_EQ(List({"wl", "--for", "job/a/b"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: arguments in resource/name form may not have more than "
            "one slash\n");
  EXPECT_EQ(List({"wl", "--for", "rayjob/train-big"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: --for: kq knows the workloads of batch/v1 Jobs only "
            "(job/NAME), not \"rayjob\"\n");
}

TEST_F(ListTest, WorkloadsWideAndJson) {
  Seed();
  // REASON is kqd's QuotaReserved=False reason, whatever it is worded.
  const v1::Workload huge = GetWorkload("team-ml", "train-huge");
  const v1::Condition* pending = testing::FindCondition(huge, "QuotaReserved");
  ASSERT_NE(pending, nullptr);
  ASSERT_FALSE(pending->reason().empty());
  EXPECT_EQ(List({"wl", "-n", "team-ml", "--field-selector",
                  "metadata.name=train-huge", "-o", "wide"}),
            kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME         JOB TYPE   JOB NAME     LOCALQUEUE   CLUSTERQUEUE   "
            "     STATUS    POSITION IN QUEUE   EXEC TIME   AGE   PRIORITY   "
            "REASON\n"
            "train-huge   job        train-huge   ml-jobs      "
            "ai-training-queue   PENDING   0                               "
            "3d    0          " +
                pending->reason() + "\n");
  EXPECT_EQ(List({"wl", "-n", "team-data", "-o", "json"}), kExitOk);
  nlohmann::json list = nlohmann::json::parse(out_.str());
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["kind"], "Workload");
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "wait-b");
  EXPECT_EQ(List({"wl", "-n", "team-data", "-o", "yaml"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("  name: wait-b\n"));
  EXPECT_EQ(List({"wl", "-o", "table"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: --output must be one of wide, json, yaml, name; got "
            "\"table\"\n");
}

// A workload whose LocalQueue does not exist has no ClusterQueue, and so
// no position.
TEST_F(ListTest, WorkloadOfAMissingLocalQueue) {
  ApplyYaml(kSetup);
  Submit(Wl("default", "orphan", "nowhere", "1"));
  EXPECT_EQ(List({"wl"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "NAME     JOB TYPE   JOB NAME   LOCALQUEUE   CLUSTERQUEUE   "
            "STATUS    POSITION IN QUEUE   EXEC TIME   AGE\n"
            "orphan                         nowhere                     "
            "PENDING                                   3d\n");
  EXPECT_THAT(client().pending_workloads_requests(), IsEmpty());
}

// A kqd from before the visibility API: the table, without positions.
TEST_F(ListTest, KqdWithoutPendingWorkloadsLeavesPositionsEmpty) {
  class OldKqd : public testing::RecordingClient {
   public:
    using RecordingClient::RecordingClient;
    absl::StatusOr<v1::PendingWorkloadsResponse> PendingWorkloads(
        const v1::PendingWorkloadsRequest&) override {
      return absl::UnimplementedError("unknown method PendingWorkloads");
    }
  };
  Seed();
  OldKqd old(kqd());
  env_.connect = [&](const client::ClientOptions&) -> client::Client& {
    return old;
  };
  EXPECT_EQ(List({"wl", "-n", "team-data"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAME     JOB TYPE   JOB NAME   LOCALQUEUE   CLUSTERQUEUE        "
            "STATUS    POSITION IN QUEUE   EXEC TIME   AGE\n"
            "wait-b                         ml-jobs      ai-training-queue   "
            "PENDING                                   3d\n");
  EXPECT_EQ(err_.str(),
            "Warning: kqd does not serve PendingWorkloads; POSITION IN QUEUE "
            "is left empty\n");
}

// kueuectl: "should print not found error" and "... with all-namespaces
// filter".
TEST_F(ListTest, NoWorkloads) {
  EXPECT_EQ(List({"wl"}), kExitOk);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "No resources found in default namespace.\n");
  EXPECT_EQ(List({"wl", "-A"}), kExitOk);
  EXPECT_EQ(err_.str(), "No resources found\n");
}

// ---------------------------------------------------------------------------
// The command line and kqd's errors.

TEST_F(ListTest, UsageErrors) {
  EXPECT_EQ(List({}), kExitUsage);
  EXPECT_EQ(List({"pods"}), kExitUsage);
  // Flags belong to their kinds, as in kueuectl.
  EXPECT_EQ(List({"rf", "--active", "true"}), kExitUsage);
  EXPECT_EQ(List({"cq", "-A"}), kExitUsage);
  EXPECT_EQ(List({"lq", "--status", "pending"}), kExitUsage);
  EXPECT_EQ(List({"wl", "--status", "pending", "admitted"}), kExitUsage);
  EXPECT_THAT(client().calls(), IsEmpty());
}

TEST_F(ListTest, GlobalServerFlagFollowsTheKind) {
  std::string server;
  env_.connect = [&](const client::ClientOptions& options) -> client::Client& {
    server = options.target;
    return client();
  };
  EXPECT_EQ(List({"cq", "--server", "kqd.example:7070"}), kExitOk)
      << err_.str();
  EXPECT_EQ(server, "kqd.example:7070");
}

TEST_F(ListTest, KqdDownIsAServerError) {
  // A client that gives up soon, instead of retrying the read for a minute.
  std::unique_ptr<client::Client> impatient = kqd_->NewClient(
      {.deadline = absl::Seconds(10), .retry_budget = absl::Milliseconds(200)});
  env_.connect = [&](const client::ClientOptions&) -> client::Client& {
    return *impatient;
  };
  kqd_->Stop();
  for (const char* kind : {"cq", "lq", "rf", "wl"}) {
    SCOPED_TRACE(kind);
    EXPECT_EQ(List({kind}), kExitError);
    // Refused by the connect check, or, while the channel still takes the
    // stopped kqd for up, by the call itself.
    EXPECT_THAT(err_.str(),
                ::testing::AnyOf(
                    ::testing::StartsWith("kq: UNAVAILABLE: "),
                    ::testing::StartsWith("The connection to the server ")));
  }
}

// The gRPC call's errors as the client sees them.
TEST_F(ListTest, PendingWorkloadsErrorsCrossTheWire) {
  ApplyYaml(kSetup);
  v1::PendingWorkloadsRequest request;
  request.set_cluster_queue("ai-training-queue");
  request.set_limit(100'001);
  absl::StatusOr<v1::PendingWorkloadsResponse> got =
      kqd().PendingWorkloads(request);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), "limit: must be at most 100000");
  request.set_limit(0);
  request.set_cluster_queue("nope");
  got = kqd().PendingWorkloads(request);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(got.status().message(), "ClusterQueue \"nope\" not found");
  request.set_cluster_queue("");
  request.set_namespace_("team-ml");
  request.set_local_queue("ml-jobs");
  got = kqd().PendingWorkloads(request);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->items_size(), 0);
}

// ---------------------------------------------------------------------------
// Printers, with kueuectl's ages and conditions.

v1::Workload PrinterWorkload(const std::string& name, absl::Duration age,
                             const std::string& queue,
                             const std::string& cluster_queue) {
  v1::Workload wl;
  wl.mutable_metadata()->set_namespace_("default");
  wl.mutable_metadata()->set_name(name);
  testing::SetAge(*wl.mutable_metadata(), age);
  wl.mutable_spec()->set_queue_name(queue);
  wl.mutable_status()->mutable_admission()->set_cluster_queue(cluster_queue);
  return wl;
}

void AddCondition(v1::Workload& wl, const std::string& type,
                  const std::string& status, absl::Duration ago) {
  v1::Condition* c = wl.mutable_status()->add_conditions();
  c->set_type(type);
  c->set_status(status);
  c->mutable_last_transition_time()->set_seconds(
      absl::ToUnixSeconds(testing::kNow - ago));
}

// kueuectl's "should print workload list with all status flag", rows as
// its printer gives them (JOB NAME from kq-k8s-shim's annotation).
TEST(ListPrinterTest, WorkloadStatusesAndExecTimes) {
  std::vector<v1::Workload> wls;
  wls.push_back(PrinterWorkload("wl1", absl::Hours(1), "lq1", "cq1"));
  wls.push_back(PrinterWorkload("wl2", absl::Hours(2), "lq2", "cq2"));
  AddCondition(wls.back(), "Admitted", "True", absl::Hours(1));
  wls.push_back(PrinterWorkload("wl3", absl::Hours(2), "lq3", "cq3"));
  AddCondition(wls.back(), "Admitted", "False", absl::Hours(1));
  wls.push_back(PrinterWorkload("wl4", absl::Hours(3), "lq4", "cq4"));
  AddCondition(wls.back(), "Admitted", "True", absl::Hours(2));
  AddCondition(wls.back(), "Finished", "True", absl::Hours(1));
  wls.push_back(PrinterWorkload("wl5", absl::Hours(3), "lq5", "cq5"));
  AddCondition(wls.back(), "Admitted", "True", absl::Hours(2));
  AddCondition(wls.back(), "Finished", "False", absl::Hours(1));
  for (size_t i = 0; i < wls.size(); ++i) {
    (*wls[i].mutable_metadata()->mutable_annotations())["kq.dev/job-name"] =
        absl::StrCat("j", i + 1);
  }
  EXPECT_EQ(PrintWorkloadList(wls, {}, {}, testing::kNow),
            "NAME   JOB TYPE   JOB NAME   LOCALQUEUE   CLUSTERQUEUE   STATUS  "
            "   POSITION IN QUEUE   EXEC TIME   AGE\n"
            "wl1    job        j1         lq1          cq1            PENDING "
            "                                   60m\n"
            "wl2    job        j2         lq2          cq2            ADMITTED"
            "                       60m         120m\n"
            "wl3    job        j3         lq3          cq3            PENDING "
            "                                   120m\n"
            "wl4    job        j4         lq4          cq4            FINISHED"
            "                       60m         3h\n"
            "wl5    job        j5         lq5          cq5            ADMITTED"
            "                       120m        3h\n");
}

// kueuectl's "should print workload list with position in queue".
TEST(ListPrinterTest, PositionsAndLocalQueueClusterQueues) {
  std::vector<v1::Workload> wls = {
      PrinterWorkload("wl1", absl::Hours(1), "lq1", ""),
      PrinterWorkload("wl2", absl::Hours(2), "lq2", "")};
  WorkloadListResources resources;
  resources.local_queue_cluster_queues[{"default", "lq1"}] = "cq1";
  resources.local_queue_cluster_queues[{"default", "lq2"}] = "cq2";
  resources.positions_in_local_queue[{"default", "wl1"}] = 12;
  resources.positions_in_local_queue[{"default", "wl2"}] = 22;
  EXPECT_EQ(PrintWorkloadList(wls, resources, {.all_namespaces = true},
                              testing::kNow),
            "NAMESPACE   NAME   JOB TYPE   JOB NAME   LOCALQUEUE   "
            "CLUSTERQUEUE   STATUS    POSITION IN QUEUE   EXEC TIME   AGE\n"
            "default     wl1                          lq1          cq1       "
            "     PENDING   12                              60m\n"
            "default     wl2                          lq2          cq2       "
            "     PENDING   22                              120m\n");
}

// kueuectl's TestClusterQueuePrinter-like rows: hours-old queues.
TEST(ListPrinterTest, ClusterQueueAndResourceFlavorAges) {
  v1::ConfigObject cq = ParseText<v1::ConfigObject>(R"pb(
    cluster_queue {
      metadata { name: "cq1" }
      spec { cohort_name: "cohort1" }
      status {
        pending_workloads: 1
        admitted_workloads: 2
        conditions { type: "Active" status: "True" }
      }
    }
  )pb");
  testing::SetAge(*cq.mutable_cluster_queue()->mutable_metadata(),
                  absl::Hours(1));
  EXPECT_EQ(PrintClusterQueueList({cq}, {}, testing::kNow),
            "NAME   COHORT    PENDING WORKLOADS   ADMITTED WORKLOADS   ACTIVE  "
            " AGE\n"
            "cq1    cohort1   1                   2                    true    "
            " 60m\n");
  v1::ConfigObject rf = ParseText<v1::ConfigObject>(R"pb(
    resource_flavor {
      metadata { name: "rf1" }
      spec {
        node_labels { key: "key2" value: "value2" }
        node_labels { key: "key1" value: "value1" }
      }
    }
  )pb");
  testing::SetAge(*rf.mutable_resource_flavor()->mutable_metadata(),
                  absl::Hours(1));
  EXPECT_EQ(PrintResourceFlavorList({rf}, {}, testing::kNow),
            "NAME   NODE LABELS                AGE\n"
            "rf1    key1=value1, key2=value2   60m\n");
}

}  // namespace
}  // namespace kq::cli
