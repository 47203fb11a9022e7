#pragma once

// Shared fixtures of the CLI tests: a fixed "now" and the objects of the
// seed example (kq's ResourceFlavors, ClusterQueue, LocalQueue, ...) with
// status filled in as kqd would report it.

#include <string>

#include "absl/time/time.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli::testing {

// The time every test runs "at": 2023-11-14T22:13:20Z.
inline const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// Parses a text-format proto; fails the current test on a parse error.
template <typename Message>
Message ParseText(const std::string& text);

// Sets `metadata` creation time to kNow - `age`.
void SetAge(v1::ObjectMeta& metadata, absl::Duration age);

// Configuration objects (each created at a distinct, stated age).
v1::ConfigObject GpuFlavor();           // gpu-a100, 45s, one node label
v1::ConfigObject CpuFlavor();           // default-cpu, 3h, no labels
v1::ConfigObject TrainingQueue();       // ClusterQueue ai-training-queue
v1::ConfigObject CpuQueue();            // ClusterQueue cpu-queue, cohort team
v1::ConfigObject MlJobsQueue();         // LocalQueue team-ml/ml-jobs
v1::ConfigObject DevQueue();            // LocalQueue default/dev
v1::ConfigObject TeamCohort();          // Cohort team, parent org, 2d
v1::ConfigObject ProductionPriority();  // WorkloadPriorityClass, 1000
v1::ConfigObject ProvisioningCheck();   // AdmissionCheck
// ProvisioningRequestConfig gpu-provision-config, 7h, every field set.
v1::ConfigObject GpuProvisionConfig();
// MultiKueueConfig multikueue-test (worker1, worker2), 1h.
v1::ConfigObject WorkersConfig();
// MultiKueueCluster worker1, Path, Active=True, 50m.
v1::ConfigObject Worker1Cluster();
v1::ConfigObject TeamMlNamespace();  // Namespace team-ml, 10d

// Workloads in team-ml, queue ml-jobs.
v1::Workload AdmittedWorkload();  // job-llm-finetune-0919, 2h, 4 GPU pods
v1::Workload PendingWorkload();   // job-pending, 5m7s, QuotaReserved=False
v1::Workload FinishedWorkload();  // job-done, 3d, Finished=True

}  // namespace kq::cli::testing
