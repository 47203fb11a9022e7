#include "cli/printers/describe_printer.h"

#include <string>

#include "gtest/gtest.h"

#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using testing::kNow;

// Golden text written as a raw string that starts on its own line.
std::string Golden(const char* text) { return std::string(text).substr(1); }

TEST(DescribeWorkloadTest, Pending) {
  EXPECT_EQ(DescribeWorkload(testing::PendingWorkload(), kNow), Golden(R"(
Name:         job-pending
Namespace:    team-ml
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         Workload
Metadata:
  Creation Timestamp:  2023-11-14T22:08:13Z (5m7s ago)
  Resource Version:    14
Spec:
  Queue:     ml-jobs
  Priority:  100
  Active:    true
  Pod Sets:
    main:
      Count:  16
      Requests:
        cpu:             8
        nvidia.com/gpu:  1
Status:
  State:  Pending
  Conditions:
    Type           Status  Reason           Message
    ----           ------  ------           -------
    QuotaReserved  False   WaitingForQuota  couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more needed
    Admitted       False   NoReservation    The workload has no reservation
Pending: WaitingForQuota: couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 4 more needed
)"));
}

TEST(DescribeWorkloadTest, Admitted) {
  EXPECT_EQ(DescribeWorkload(testing::AdmittedWorkload(), kNow), Golden(R"(
Name:         job-llm-finetune-0919
Namespace:    team-ml
Labels:       kueue.x-k8s.io/queue-name=ml-jobs
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         Workload
Metadata:
  Creation Timestamp:  2023-11-14T20:13:20Z (120m ago)
  Resource Version:    12
  UID:                 uid-llm
Spec:
  Queue:           ml-jobs
  Priority Class:  production-training
  Priority:        1000
  Active:          true
  Pod Sets:
    main:
      Count:  4
      Requests:
        cpu:             8
        memory:          32Gi
        nvidia.com/gpu:  1
Status:
  State:  Admitted
  Admission:
    Cluster Queue:  ai-training-queue
    Pod Set Assignments:
      main:
        Count:  4
        Resources:
          Resource        Flavor    Usage
          --------        ------    -----
          cpu             gpu-a100  32
          memory          gpu-a100  128Gi
          nvidia.com/gpu  gpu-a100  4
  Conditions:
    Type           Status  Reason         Message
    ----           ------  ------         -------
    QuotaReserved  True    QuotaReserved  Quota reserved in ClusterQueue ai-training-queue
    Admitted       True    Admitted       The workload is admitted
)"));
}

TEST(DescribeWorkloadTest, AdmissionCheckPodSetUpdates) {
  v1::Workload workload = testing::AdmittedWorkload();
  v1::AdmissionCheckState* prov =
      workload.mutable_status()->add_admission_checks();
  prov->set_name("prov");
  prov->set_state("Ready");
  prov->set_message("provisioned");
  v1::PodSetUpdate* update = prov->add_pod_set_updates();
  update->set_name("main");
  (*update->mutable_annotations())
      ["autoscaling.x-k8s.io/consume-provisioning-request"] = "wl-prov-1";
  (*update->mutable_node_selector())["cloud.google.com/gke-nodepool"] =
      "pool-1";
  v1::Toleration* toleration = update->add_tolerations();
  toleration->set_key("nvidia.com/gpu");
  toleration->set_operator_("Exists");
  toleration->set_effect("NoSchedule");
  v1::AdmissionCheckState* other =
      workload.mutable_status()->add_admission_checks();
  other->set_name("other");
  other->set_state("Ready");
  const std::string got = DescribeWorkload(workload, kNow);
  EXPECT_NE(got.find(R"(
  Admission Checks:
    Name   State  Message
    ----   -----  -------
    prov   Ready  provisioned
    other  Ready
  Pod Set Updates:
    prov:
      main:
        Labels:         <none>
        Annotations:    autoscaling.x-k8s.io/consume-provisioning-request=wl-prov-1
        Node Selector:  cloud.google.com/gke-nodepool=pool-1
        Tolerations:    nvidia.com/gpu:NoSchedule op=Exists
  Conditions:
)"),
            std::string::npos)
      << got;
}

TEST(DescribeObjectTest, ClusterQueue) {
  EXPECT_EQ(DescribeObject(testing::TrainingQueue(), kNow), Golden(R"(
Name:         ai-training-queue
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         ClusterQueue
Metadata:
  Creation Timestamp:  2023-11-13T20:13:20Z (26h ago)
  Resource Version:    7
Spec:
  Cohort:              <none>
  Queueing Strategy:   BestEffortFIFO
  Namespace Selector:  <all namespaces>
  Stop Policy:         None
  Preemption:
    Reclaim Within Cohort:  Any
    Within Cluster Queue:   LowerPriority
    Borrow Within Cohort:   Never
  Flavor Fungibility:
    When Can Borrow:   MayStopSearch
    When Can Preempt:  TryNextFlavor
  Admission Checks:    <none>
Quota:
  Flavor       Resource        Nominal  Borrowing Limit  Lending Limit  Reserved  Admitted
  ------       --------        -------  ---------------  -------------  --------  --------
  gpu-a100     cpu             64       -                -              32        32
  gpu-a100     memory          256Gi    -                -              128Gi     128Gi
  gpu-a100     nvidia.com/gpu  16       8                -              4         4
  default-cpu  cpu             128      -                -              0         0
  default-cpu  memory          512Gi    -                -              0         0
Status:
  Pending Workloads:    2
  Reserving Workloads:  1
  Admitted Workloads:   1
  Conditions:
    Type    Status  Reason  Message
    ----    ------  ------  -------
    Active  True    Ready   Can admit new workloads
)"));
}

TEST(DescribeObjectTest, CohortWithLimits) {
  EXPECT_EQ(DescribeObject(testing::TeamCohort(), kNow), Golden(R"(
Name:         team
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         Cohort
Metadata:
  Creation Timestamp:  2023-11-12T22:13:20Z (2d ago)
  Resource Version:    4
Spec:
  Parent:  org
Quota:
  Flavor       Resource  Nominal  Borrowing Limit  Lending Limit
  ------       --------  -------  ---------------  -------------
  default-cpu  cpu       16       -                8
)"));
}

TEST(DescribeObjectTest, LocalQueue) {
  EXPECT_EQ(DescribeObject(testing::MlJobsQueue(), kNow), Golden(R"(
Name:         ml-jobs
Namespace:    team-ml
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         LocalQueue
Metadata:
  Creation Timestamp:  2023-11-14T20:38:20Z (95m ago)
  Resource Version:    9
Spec:
  Cluster Queue:  ai-training-queue
  Stop Policy:    None
Status:
  Pending Workloads:    2
  Reserving Workloads:  1
  Admitted Workloads:   1
  Usage:
    Flavor    Resource        Reserved  Admitted
    ------    --------        --------  --------
    gpu-a100  nvidia.com/gpu  4         0
  Conditions:
    Type    Status  Reason  Message
    ----    ------  ------  -------
    Active  True    Ready
)"));
}

TEST(DescribeObjectTest, ResourceFlavor) {
  EXPECT_EQ(DescribeObject(testing::GpuFlavor(), kNow), Golden(R"(
Name:         gpu-a100
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         ResourceFlavor
Metadata:
  Creation Timestamp:  2023-11-14T22:12:35Z (45s ago)
  Resource Version:    3
  UID:                 uid-gpu
Spec:
  Node Labels:  cloud.google.com/gke-accelerator=nvidia-tesla-a100
  Node Taints:  <none>
  Tolerations:  <none>
)"));
}

TEST(DescribeObjectTest, AdmissionCheck) {
  EXPECT_EQ(DescribeObject(testing::ProvisioningCheck(), kNow), Golden(R"(
Name:         provision-gpu-nodes
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         AdmissionCheck
Metadata:
  Creation Timestamp:  2023-11-14T15:08:20Z (7h5m ago)
  Resource Version:    6
Spec:
  Controller Name:  kueue.x-k8s.io/provisioning-request
  Parameters:
    API Group:  kueue.x-k8s.io
    Kind:       ProvisioningRequestConfig
    Name:       gpu-provision-config
Status:
  Conditions:  <none>
)"));
}

TEST(DescribeObjectTest, ProvisioningRequestConfig) {
  EXPECT_EQ(DescribeObject(testing::GpuProvisionConfig(), kNow), Golden(R"(
Name:         gpu-provision-config
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         ProvisioningRequestConfig
Metadata:
  Creation Timestamp:  2023-11-14T15:13:20Z (7h ago)
  Resource Version:    5
Spec:
  Provisioning Class Name:  queued-provisioning.gke.io
  Parameters:               ValidUntilSeconds=3600
  Managed Resources:        nvidia.com/gpu
  Retry Strategy:
    Backoff Limit Count:   3
    Backoff Base Seconds:  60
    Backoff Max Seconds:   1800
  Pod Set Updates:
    Node Selector:
      Key                            Value From Provisioning Class Detail
      ---                            ------------------------------------
      cloud.google.com/gke-nodepool  NodePoolName
  Pod Set Merge Policy:  IdenticalWorkloadSchedulingRequirements
)"));
}

TEST(DescribeObjectTest, MultiKueueConfig) {
  EXPECT_EQ(DescribeObject(testing::WorkersConfig(), kNow), Golden(R"(
Name:         multikueue-test
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         MultiKueueConfig
Metadata:
  Creation Timestamp:  2023-11-14T21:13:20Z (60m ago)
  Resource Version:    7
Spec:
  Clusters:          worker1
                     worker2
  Quota Management:  Manual
)"));
}

TEST(DescribeObjectTest, MultiKueueCluster) {
  EXPECT_EQ(DescribeObject(testing::Worker1Cluster(), kNow), Golden(R"(
Name:         worker1
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         MultiKueueCluster
Metadata:
  Creation Timestamp:  2023-11-14T21:23:20Z (50m ago)
  Resource Version:    8
Spec:
  Cluster Source:
    Kube Config:
      Location:       /etc/kq/workers/worker1.yaml
      Location Type:  Path
Status:
  Conditions:
    Type    Status  Reason  Message
    ----    ------  ------  -------
    Active  True    Active  Connected
)"));
}

TEST(DescribeObjectTest, WorkloadPriorityClass) {
  EXPECT_EQ(DescribeObject(testing::ProductionPriority(), kNow), Golden(R"(
Name:         production-training
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  kueue.x-k8s.io/v1beta1
Kind:         WorkloadPriorityClass
Metadata:
  Creation Timestamp:  2023-11-14T22:11:21Z (119s ago)
  Resource Version:    5
Value:        1000
Description:  Production model training
)"));
}

TEST(DescribeObjectTest, Namespace) {
  EXPECT_EQ(DescribeObject(testing::TeamMlNamespace(), kNow), Golden(R"(
Name:         team-ml
Namespace:
Labels:       team=ml
Annotations:  <none>
API Version:  v1
Kind:         Namespace
Metadata:
  Creation Timestamp:  2023-11-04T22:13:20Z (10d ago)
  Resource Version:    1
)"));
}

}  // namespace
}  // namespace kq::cli
