#include "tests/cli/kqd_fixture.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/queue_service.pb.h"

#include "manifest/manifest.h"
#include "tests/cli/test_objects.h"

namespace kq::cli::testing {

const char kSeedSetup[] = R"yaml(
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

KqdFixture::KqdFixture()
    : now_(absl::Now() + absl::Hours(72) + absl::Minutes(30)) {}

void KqdFixture::SetUp() { RestartKqd({}); }

void KqdFixture::RestartKqd(const kq::testing::KqdServerOptions& options) {
  client_.reset();
  kqd_.reset();
  absl::StatusOr<std::unique_ptr<kq::testing::KqdServer>> kqd =
      kq::testing::KqdServer::Start(options);
  ASSERT_TRUE(kqd.ok()) << kqd.status();
  kqd_ = *std::move(kqd);
  client_ = std::make_unique<RecordingClient>(kqd_->client());
}

void KqdFixture::Clear() {
  out_.str("");
  err_.str("");
}

void KqdFixture::ApplyYaml(const std::string& yaml,
                           const std::string& namespace_name) {
  absl::StatusOr<std::vector<manifest::Document>> docs =
      manifest::ParseManifests(yaml);
  ASSERT_TRUE(docs.ok()) << docs.status();
  v1::ApplyRequest request;
  for (manifest::Document& doc : *docs) {
    ASSERT_TRUE(doc.status.ok()) << doc.status;
    if (doc.config_object.has_value()) {
      v1::ConfigObject& object = *request.add_objects() = *doc.config_object;
      if (object.has_local_queue() &&
          object.local_queue().metadata().namespace_().empty()) {
        object.mutable_local_queue()->mutable_metadata()->set_namespace_(
            namespace_name);
      }
    } else if (doc.workload.has_value()) {
      v1::Workload& workload = *request.add_workloads() = *doc.workload;
      if (workload.metadata().namespace_().empty()) {
        workload.mutable_metadata()->set_namespace_(namespace_name);
      }
    }
  }
  absl::StatusOr<v1::ApplyResponse> applied = kqd().Apply(request);
  ASSERT_TRUE(applied.ok()) << applied.status();
}

v1::Workload KqdFixture::Submit(const v1::Workload& workload) {
  absl::StatusOr<v1::SubmitWorkloadResponse> submitted =
      kqd().SubmitWorkload(workload);
  EXPECT_TRUE(submitted.ok()) << submitted.status();
  return submitted.ok() ? submitted->workload() : v1::Workload();
}

v1::Workload KqdFixture::GetWorkload(const std::string& namespace_name,
                                     const std::string& name) {
  absl::StatusOr<v1::GetWorkloadResponse> got =
      kqd().GetWorkload(namespace_name, name);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? got->workload() : v1::Workload();
}

v1::ConfigObject KqdFixture::GetObject(const std::string& kind,
                                       const std::string& namespace_name,
                                       const std::string& name) {
  absl::StatusOr<v1::ConfigObject> got =
      kqd().GetObject(kind, namespace_name, name);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *got : v1::ConfigObject();
}

std::vector<v1::Workload> KqdFixture::AllWorkloads() {
  v1::ListWorkloadsRequest request;
  request.set_include_finished(true);
  absl::StatusOr<v1::ListWorkloadsResponse> listed =
      kqd().ListWorkloads(request);
  EXPECT_TRUE(listed.ok()) << listed.status();
  if (!listed.ok()) return {};
  return {listed->workloads().begin(), listed->workloads().end()};
}

v1::Workload KqdFixture::SubmitAdmitted() {
  v1::Workload submitted = Submit(ParseText<v1::Workload>(R"pb(
    metadata { namespace: "team-ml" name: "job-llm-finetune-0919" }
    spec {
      queue_name: "ml-jobs"
      priority_class_name: "production-training"
      priority_class_source: "kueue.x-k8s.io/workloadpriorityclass"
      pod_sets {
        name: "main"
        count: 4
        requests { key: "cpu" value: "8" }
        requests { key: "memory" value: "32Gi" }
        requests { key: "nvidia.com/gpu" value: "1" }
      }
    }
  )pb"));
  EXPECT_TRUE(IsTrue(submitted, "Admitted")) << submitted.DebugString();
  return submitted;
}

v1::Workload KqdFixture::SubmitPending() {
  v1::Workload submitted = Submit(ParseText<v1::Workload>(R"pb(
    metadata { namespace: "team-ml" name: "job-pending" }
    spec {
      queue_name: "ml-jobs"
      pod_sets {
        name: "main"
        count: 16
        requests { key: "cpu" value: "8" }
        requests { key: "nvidia.com/gpu" value: "1" }
      }
    }
  )pb"));
  EXPECT_FALSE(IsTrue(submitted, "QuotaReserved")) << submitted.DebugString();
  return submitted;
}

v1::Workload KqdFixture::SubmitFinished() {
  v1::Workload submitted = Submit(ParseText<v1::Workload>(R"pb(
    metadata { namespace: "team-ml" name: "job-done" }
    spec {
      queue_name: "ml-jobs"
      pod_sets {
        name: "main"
        count: 1
        requests { key: "cpu" value: "2" }
        requests { key: "memory" value: "4Gi" }
      }
    }
  )pb"));
  EXPECT_TRUE(IsTrue(submitted, "Admitted")) << submitted.DebugString();
  absl::StatusOr<v1::Workload> finished =
      kqd().FinishWorkload("team-ml", "job-done", /*succeeded=*/true, "");
  EXPECT_TRUE(finished.ok()) << finished.status();
  return finished.ok() ? *finished : v1::Workload();
}

void KqdFixture::SetStopPolicy(const std::string& kind,
                               const std::string& namespace_name,
                               const std::string& name,
                               const std::string& policy) {
  v1::SetStopPolicyRequest request;
  request.set_kind(kind);
  request.set_namespace_(namespace_name);
  request.set_name(name);
  request.set_stop_policy(policy);
  absl::StatusOr<v1::ConfigObject> set = kqd().SetStopPolicy(request);
  ASSERT_TRUE(set.ok()) << set.status();
}

const v1::Condition* FindCondition(const v1::Workload& workload,
                                   const std::string& type) {
  for (const v1::Condition& condition : workload.status().conditions()) {
    if (condition.type() == type) return &condition;
  }
  return nullptr;
}

bool IsTrue(const v1::Workload& workload, const std::string& type) {
  const v1::Condition* condition = FindCondition(workload, type);
  return condition != nullptr && condition->status() == "True";
}

}  // namespace kq::cli::testing
