#include "cli/printers/table_printer.h"

#include <string>
#include <vector>

#include "cli/kinds.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using testing::kNow;

struct ObjectTableCase {
  std::string name;
  Kind kind;
  std::vector<v1::ConfigObject> objects;
  TableOptions options;
  std::string want;
};

class ObjectTableTest : public ::testing::TestWithParam<ObjectTableCase> {};

TEST_P(ObjectTableTest, MatchesGolden) {
  const ObjectTableCase& tc = GetParam();
  EXPECT_EQ(PrintObjectTable(tc.kind, tc.objects, tc.options, kNow), tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, ObjectTableTest,
    ::testing::ValuesIn(std::vector<ObjectTableCase>{
        {.name = "cluster_queue",
         .kind = Kind::kClusterQueue,
         .objects = {testing::TrainingQueue(), testing::CpuQueue()},
         .want = "NAME                COHORT   PENDING WORKLOADS\n"
                 "ai-training-queue            2\n"
                 "cpu-queue           team     0\n"},
        {.name = "cluster_queue_wide",
         .kind = Kind::kClusterQueue,
         .objects = {testing::TrainingQueue(), testing::CpuQueue()},
         .options = {.wide = true},
         .want =
             "NAME                COHORT   STRATEGY         PENDING WORKLOADS  "
             " ADMITTED WORKLOADS   ACTIVE   USAGE\n"
             "ai-training-queue            BestEffortFIFO   2                  "
             " 1                    True     gpu-a100: cpu 32/64, memory "
             "128Gi/256Gi, nvidia.com/gpu 4/16; default-cpu: cpu 0/128, "
             "memory 0/512Gi\n"
             "cpu-queue           team     StrictFIFO       0                  "
             " 0                             default-cpu: cpu 0/8\n"},
        {.name = "cluster_queue_all_namespaces_has_no_namespace_column",
         .kind = Kind::kClusterQueue,
         .objects = {testing::CpuQueue()},
         .options = {.all_namespaces = true},
         .want = "NAME        COHORT   PENDING WORKLOADS\n"
                 "cpu-queue   team     0\n"},
        {.name = "local_queue_all_namespaces",
         .kind = Kind::kLocalQueue,
         .objects = {testing::DevQueue(), testing::MlJobsQueue()},
         .options = {.all_namespaces = true},
         .want =
             "NAMESPACE   NAME      CLUSTERQUEUE        PENDING WORKLOADS   "
             "ADMITTED WORKLOADS\n"
             "default     dev       cpu-queue           0                   "
             "0\n"
             "team-ml     ml-jobs   ai-training-queue   2                   "
             "1\n"},
        {.name = "local_queue_wide",
         .kind = Kind::kLocalQueue,
         .objects = {testing::MlJobsQueue()},
         .options = {.wide = true},
         .want = "NAME      CLUSTERQUEUE        PENDING WORKLOADS   ADMITTED "
                 "WORKLOADS   ACTIVE\n"
                 "ml-jobs   ai-training-queue   2                   1          "
                 "          True\n"},
        {.name = "resource_flavor",
         .kind = Kind::kResourceFlavor,
         .objects = {testing::GpuFlavor(), testing::CpuFlavor()},
         .want = "NAME          AGE\n"
                 "gpu-a100      45s\n"
                 "default-cpu   3h\n"},
        {.name = "resource_flavor_wide",
         .kind = Kind::kResourceFlavor,
         .objects = {testing::GpuFlavor(), testing::CpuFlavor()},
         .options = {.wide = true},
         .want = "NAME          AGE   NODE LABELS\n"
                 "gpu-a100      45s   "
                 "cloud.google.com/gke-accelerator=nvidia-tesla-a100\n"
                 "default-cpu   3h    <none>\n"},
        {.name = "cohort",
         .kind = Kind::kCohort,
         .objects = {testing::TeamCohort()},
         .want = "NAME   PARENT   AGE\n"
                 "team   org      2d\n"},
        {.name = "workload_priority_class",
         .kind = Kind::kWorkloadPriorityClass,
         .objects = {testing::ProductionPriority()},
         .want = "NAME                  VALUE   AGE\n"
                 "production-training   1000    119s\n"},
        {.name = "workload_priority_class_wide",
         .kind = Kind::kWorkloadPriorityClass,
         .objects = {testing::ProductionPriority()},
         .options = {.wide = true},
         .want = "NAME                  VALUE   AGE    DESCRIPTION\n"
                 "production-training   1000    119s   Production model "
                 "training\n"},
        {.name = "admission_check",
         .kind = Kind::kAdmissionCheck,
         .objects = {testing::ProvisioningCheck()},
         .want = "NAME                  CONTROLLER                            "
                 "AGE\n"
                 "provision-gpu-nodes   kueue.x-k8s.io/provisioning-request   "
                 "7h5m\n"},
        {.name = "provisioning_request_config",
         .kind = Kind::kProvisioningRequestConfig,
         .objects = {testing::GpuProvisionConfig()},
         .want = "NAME                   PROVISIONING CLASS           AGE\n"
                 "gpu-provision-config   queued-provisioning.gke.io   7h\n"},
        {.name = "provisioning_request_config_wide",
         .kind = Kind::kProvisioningRequestConfig,
         .objects = {testing::GpuProvisionConfig()},
         .options = {.wide = true},
         .want = "NAME                   PROVISIONING CLASS           AGE   "
                 "MANAGED RESOURCES   BACKOFF LIMIT\n"
                 "gpu-provision-config   queued-provisioning.gke.io   7h    "
                 "nvidia.com/gpu      3\n"},
        {.name = "multikueue_config",
         .kind = Kind::kMultiKueueConfig,
         .objects = {testing::WorkersConfig()},
         .want = "NAME              AGE\n"
                 "multikueue-test   60m\n"},
        {.name = "multikueue_config_wide",
         .kind = Kind::kMultiKueueConfig,
         .objects = {testing::WorkersConfig()},
         .options = {.wide = true},
         .want = "NAME              AGE   CLUSTERS\n"
                 "multikueue-test   60m   worker1,worker2\n"},
        // Kueue's printer columns: Connected (the Active condition) and Age.
        {.name = "multikueue_cluster",
         .kind = Kind::kMultiKueueCluster,
         .objects = {testing::Worker1Cluster()},
         .want = "NAME      CONNECTED   AGE\n"
                 "worker1   True        50m\n"},
        {.name = "namespace",
         .kind = Kind::kNamespace,
         .objects = {testing::TeamMlNamespace()},
         .want = "NAME      AGE\n"
                 "team-ml   10d\n"},
        {.name = "empty",
         .kind = Kind::kClusterQueue,
         .objects = {},
         .options = {.wide = true},
         .want = ""},
    }),
    [](const auto& info) { return info.param.name; });

std::vector<v1::Workload> ThreeWorkloads() {
  return {testing::AdmittedWorkload(), testing::PendingWorkload(),
          testing::FinishedWorkload()};
}

TEST(WorkloadTableTest, Normal) {
  EXPECT_EQ(
      PrintWorkloadTable(ThreeWorkloads(), {}, kNow),
      "NAME                    QUEUE     RESERVED IN         ADMITTED   "
      "FINISHED   AGE\n"
      "job-llm-finetune-0919   ml-jobs   ai-training-queue   True          "
      "        120m\n"
      "job-pending             ml-jobs                       False         "
      "        5m7s\n"
      "job-done                ml-jobs   ai-training-queue   True       "
      "True       3d\n");
}

TEST(WorkloadTableTest, Wide) {
  EXPECT_EQ(
      PrintWorkloadTable(ThreeWorkloads(), {.wide = true}, kNow),
      "NAME                    QUEUE     RESERVED IN         ADMITTED   "
      "FINISHED   AGE    PRIORITY   STATUS     FLAVORS                      "
      "                                REASON\n"
      "job-llm-finetune-0919   ml-jobs   ai-training-queue   True          "
      "        120m   1000       Admitted   main: "
      "cpu=gpu-a100,memory=gpu-a100,nvidia.com/gpu=gpu-a100\n"
      "job-pending             ml-jobs                       False         "
      "        5m7s   100        Pending                                    "
      "                             WaitingForQuota\n"
      "job-done                ml-jobs   ai-training-queue   True       "
      "True       3d     0          Finished   main: "
      "cpu=default-cpu,memory=default-cpu\n");
}

TEST(WorkloadTableTest, AllNamespacesAddsNamespaceColumn) {
  EXPECT_EQ(PrintWorkloadTable(
                {testing::AdmittedWorkload(), testing::PendingWorkload()},
                {.all_namespaces = true}, kNow),
            "NAMESPACE   NAME                    QUEUE     RESERVED IN         "
            "ADMITTED   FINISHED   AGE\n"
            "team-ml     job-llm-finetune-0919   ml-jobs   ai-training-queue   "
            "True                  120m\n"
            "team-ml     job-pending             ml-jobs                       "
            "False                 5m7s\n");
}

TEST(WorkloadTableTest, EmptyIsEmpty) {
  EXPECT_EQ(PrintWorkloadTable({}, {.wide = true}, kNow), "");
}

TEST(NoResourcesFoundTest, NamesTheNamespaceOnlyForNamespacedKinds) {
  EXPECT_EQ(NoResourcesFound(Kind::kWorkload, false, "team-ml"),
            "No resources found in team-ml namespace.");
  EXPECT_EQ(NoResourcesFound(Kind::kLocalQueue, true, "team-ml"),
            "No resources found");
  EXPECT_EQ(NoResourcesFound(Kind::kClusterQueue, false, "default"),
            "No resources found");
}

TEST(FormatClusterQueueUsageTest, FollowsCoveredResourcesOrder) {
  EXPECT_EQ(FormatClusterQueueUsage(testing::TrainingQueue().cluster_queue()),
            "gpu-a100: cpu 32/64, memory 128Gi/256Gi, nvidia.com/gpu 4/16; "
            "default-cpu: cpu 0/128, memory 0/512Gi");
}

}  // namespace
}  // namespace kq::cli
