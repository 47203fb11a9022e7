#include "tests/cli/test_objects.h"

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli::testing {

template <typename Message>
Message ParseText(const std::string& text) {
  Message message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    ADD_FAILURE() << "bad text proto:\n" << text;
  }
  return message;
}

template v1::ConfigObject ParseText<v1::ConfigObject>(const std::string&);
template v1::Workload ParseText<v1::Workload>(const std::string&);
template v1::ExplainResponse ParseText<v1::ExplainResponse>(const std::string&);

void SetAge(v1::ObjectMeta& metadata, absl::Duration age) {
  metadata.mutable_creation_timestamp()->set_seconds(
      absl::ToUnixSeconds(kNow - age));
}

v1::ConfigObject GpuFlavor() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    resource_flavor {
      metadata { name: "gpu-a100" revision: 3 uid: "uid-gpu" }
      spec {
        node_labels {
          key: "cloud.google.com/gke-accelerator"
          value: "nvidia-tesla-a100"
        }
      }
    }
  )pb");
  SetAge(*object.mutable_resource_flavor()->mutable_metadata(),
         absl::Seconds(45));
  return object;
}

v1::ConfigObject CpuFlavor() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    resource_flavor { metadata { name: "default-cpu" revision: 2 } }
  )pb");
  SetAge(*object.mutable_resource_flavor()->mutable_metadata(), absl::Hours(3));
  return object;
}

v1::ConfigObject TrainingQueue() {
  // The seed's ClusterQueue: the gpu-a100 flavor lists nvidia.com/gpu
  // first, unlike coveredResources, to show that printers follow the
  // covered order.
  auto object = ParseText<v1::ConfigObject>(R"pb(
    cluster_queue {
      metadata { name: "ai-training-queue" revision: 7 }
      spec {
        queueing_strategy: "BestEffortFIFO"
        namespace_selector {}
        preemption {
          reclaim_within_cohort: "Any"
          within_cluster_queue: "LowerPriority"
        }
        resource_groups {
          covered_resources: [ "cpu", "memory", "nvidia.com/gpu" ]
          flavors {
            name: "gpu-a100"
            resources {
              name: "nvidia.com/gpu"
              nominal_quota: "16"
              borrowing_limit: "8"
            }
            resources { name: "cpu" nominal_quota: "64" }
            resources { name: "memory" nominal_quota: "256Gi" }
          }
          flavors {
            name: "default-cpu"
            resources { name: "cpu" nominal_quota: "128" }
            resources { name: "memory" nominal_quota: "512Gi" }
          }
        }
      }
      status {
        conditions {
          type: "Active"
          status: "True"
          reason: "Ready"
          message: "Can admit new workloads"
        }
        flavors_reservation {
          name: "gpu-a100"
          resources { name: "cpu" total: "32" }
          resources { name: "memory" total: "128Gi" }
          resources { name: "nvidia.com/gpu" total: "4" }
        }
        flavors_usage {
          name: "gpu-a100"
          resources { name: "cpu" total: "32" }
          resources { name: "memory" total: "128Gi" }
          resources { name: "nvidia.com/gpu" total: "4" }
        }
        pending_workloads: 2
        reserving_workloads: 1
        admitted_workloads: 1
      }
    }
  )pb");
  SetAge(*object.mutable_cluster_queue()->mutable_metadata(), absl::Hours(26));
  return object;
}

v1::ConfigObject CpuQueue() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    cluster_queue {
      metadata { name: "cpu-queue" revision: 8 }
      spec {
        cohort_name: "team"
        queueing_strategy: "StrictFIFO"
        resource_groups {
          covered_resources: [ "cpu" ]
          flavors {
            name: "default-cpu"
            resources {
              name: "cpu"
              nominal_quota: "8"
              borrowing_limit: "4"
              lending_limit: "2"
            }
          }
        }
      }
    }
  )pb");
  SetAge(*object.mutable_cluster_queue()->mutable_metadata(), absl::Hours(1));
  return object;
}

v1::ConfigObject MlJobsQueue() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    local_queue {
      metadata { name: "ml-jobs" namespace: "team-ml" revision: 9 }
      spec { cluster_queue: "ai-training-queue" }
      status {
        conditions { type: "Active" status: "True" reason: "Ready" }
        flavors_reservation {
          name: "gpu-a100"
          resources { name: "nvidia.com/gpu" total: "4" }
        }
        pending_workloads: 2
        reserving_workloads: 1
        admitted_workloads: 1
      }
    }
  )pb");
  SetAge(*object.mutable_local_queue()->mutable_metadata(), absl::Minutes(95));
  return object;
}

v1::ConfigObject DevQueue() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    local_queue {
      metadata { name: "dev" namespace: "default" revision: 10 }
      spec { cluster_queue: "cpu-queue" }
    }
  )pb");
  SetAge(*object.mutable_local_queue()->mutable_metadata(), absl::Minutes(5));
  return object;
}

v1::ConfigObject TeamCohort() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    cohort {
      metadata { name: "team" revision: 4 }
      spec {
        parent_name: "org"
        resource_groups {
          covered_resources: [ "cpu" ]
          flavors {
            name: "default-cpu"
            resources { name: "cpu" nominal_quota: "16" lending_limit: "8" }
          }
        }
      }
    }
  )pb");
  SetAge(*object.mutable_cohort()->mutable_metadata(), absl::Hours(48));
  return object;
}

v1::ConfigObject ProductionPriority() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    workload_priority_class {
      metadata { name: "production-training" revision: 5 }
      value: 1000
      description: "Production model training"
    }
  )pb");
  SetAge(*object.mutable_workload_priority_class()->mutable_metadata(),
         absl::Seconds(119));
  return object;
}

v1::ConfigObject ProvisioningCheck() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    admission_check {
      metadata { name: "provision-gpu-nodes" revision: 6 }
      spec {
        controller_name: "kueue.x-k8s.io/provisioning-request"
        parameters {
          api_group: "kueue.x-k8s.io"
          kind: "ProvisioningRequestConfig"
          name: "gpu-provision-config"
        }
      }
    }
  )pb");
  SetAge(*object.mutable_admission_check()->mutable_metadata(),
         absl::Hours(7) + absl::Minutes(5));
  return object;
}

v1::ConfigObject GpuProvisionConfig() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    provisioning_request_config {
      metadata { name: "gpu-provision-config" revision: 5 }
      spec {
        provisioning_class_name: "queued-provisioning.gke.io"
        parameters { key: "ValidUntilSeconds" value: "3600" }
        managed_resources: "nvidia.com/gpu"
        retry_strategy {
          backoff_limit_count: 3
          backoff_base_seconds: 60
          backoff_max_seconds: 1800
        }
        pod_set_updates_node_selector {
          key: "cloud.google.com/gke-nodepool"
          value_from_provisioning_class_detail: "NodePoolName"
        }
        pod_set_merge_policy: "IdenticalWorkloadSchedulingRequirements"
      }
    }
  )pb");
  SetAge(*object.mutable_provisioning_request_config()->mutable_metadata(),
         absl::Hours(7));
  return object;
}

v1::ConfigObject WorkersConfig() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    multi_kueue_config {
      metadata { name: "multikueue-test" revision: 7 }
      spec {
        clusters: [ "worker1", "worker2" ]
        quota_management: "Manual"
      }
    }
  )pb");
  SetAge(*object.mutable_multi_kueue_config()->mutable_metadata(),
         absl::Hours(1));
  return object;
}

v1::ConfigObject Worker1Cluster() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    multi_kueue_cluster {
      metadata { name: "worker1" revision: 8 }
      spec {
        cluster_source {
          kube_config {
            location: "/etc/kq/workers/worker1.yaml"
            location_type: "Path"
          }
        }
      }
      status {
        conditions {
          type: "Active"
          status: "True"
          reason: "Active"
          message: "Connected"
        }
      }
    }
  )pb");
  SetAge(*object.mutable_multi_kueue_cluster()->mutable_metadata(),
         absl::Minutes(50));
  return object;
}

v1::ConfigObject TeamMlNamespace() {
  auto object = ParseText<v1::ConfigObject>(R"pb(
    namespace {
      metadata {
        name: "team-ml"
        revision: 1
        labels { key: "team" value: "ml" }
      }
    }
  )pb");
  SetAge(*object.mutable_namespace_()->mutable_metadata(), absl::Hours(240));
  return object;
}

v1::Workload AdmittedWorkload() {
  auto workload = ParseText<v1::Workload>(R"pb(
    metadata {
      name: "job-llm-finetune-0919"
      namespace: "team-ml"
      uid: "uid-llm"
      revision: 12
      labels { key: "kueue.x-k8s.io/queue-name" value: "ml-jobs" }
    }
    spec {
      queue_name: "ml-jobs"
      priority_class_name: "production-training"
      priority_class_source: "kueue.x-k8s.io/workloadpriorityclass"
      priority: 1000
      pod_sets {
        name: "main"
        count: 4
        requests { key: "cpu" value: "8" }
        requests { key: "memory" value: "32Gi" }
        requests { key: "nvidia.com/gpu" value: "1" }
      }
    }
    status {
      admission {
        cluster_queue: "ai-training-queue"
        pod_set_assignments {
          name: "main"
          count: 4
          flavors { key: "cpu" value: "gpu-a100" }
          flavors { key: "memory" value: "gpu-a100" }
          flavors { key: "nvidia.com/gpu" value: "gpu-a100" }
          resource_usage { key: "cpu" value: "32" }
          resource_usage { key: "memory" value: "128Gi" }
          resource_usage { key: "nvidia.com/gpu" value: "4" }
        }
      }
      conditions {
        type: "QuotaReserved"
        status: "True"
        reason: "QuotaReserved"
        message: "Quota reserved in ClusterQueue ai-training-queue"
      }
      conditions {
        type: "Admitted"
        status: "True"
        reason: "Admitted"
        message: "The workload is admitted"
      }
    }
  )pb");
  SetAge(*workload.mutable_metadata(), absl::Hours(2));
  return workload;
}

v1::Workload PendingWorkload() {
  auto workload = ParseText<v1::Workload>(R"pb(
    metadata { name: "job-pending" namespace: "team-ml" revision: 14 }
    spec {
      queue_name: "ml-jobs"
      priority: 100
      pod_sets {
        name: "main"
        count: 16
        requests { key: "cpu" value: "8" }
        requests { key: "nvidia.com/gpu" value: "1" }
      }
    }
    status {
      conditions {
        type: "QuotaReserved"
        status: "False"
        reason: "WaitingForQuota"
        message: "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more needed"
      }
      conditions {
        type: "Admitted"
        status: "False"
        reason: "NoReservation"
        message: "The workload has no reservation"
      }
    }
  )pb");
  SetAge(*workload.mutable_metadata(), absl::Seconds(5 * 60 + 7));
  return workload;
}

v1::Workload FinishedWorkload() {
  auto workload = ParseText<v1::Workload>(R"pb(
    metadata { name: "job-done" namespace: "team-ml" revision: 11 }
    spec {
      queue_name: "ml-jobs"
      pod_sets {
        name: "main"
        count: 1
        requests { key: "cpu" value: "2" }
        requests { key: "memory" value: "4Gi" }
      }
    }
    status {
      admission {
        cluster_queue: "ai-training-queue"
        pod_set_assignments {
          name: "main"
          count: 1
          flavors { key: "cpu" value: "default-cpu" }
          flavors { key: "memory" value: "default-cpu" }
        }
      }
      conditions {
        type: "QuotaReserved"
        status: "True"
        reason: "QuotaReserved"
      }
      conditions { type: "Admitted" status: "True" reason: "Admitted" }
      conditions { type: "Finished" status: "True" reason: "Succeeded" }
    }
  )pb");
  SetAge(*workload.mutable_metadata(), absl::Hours(72));
  return workload;
}

}  // namespace kq::cli::testing
