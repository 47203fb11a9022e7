#pragma once

// `kq list` tables: kueuectl's list printers (cmd/kueuectl/app/list/
// list_*_printer.go), kubectl's table look. `kq get` keeps its own columns
// (table_printer.h).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {

struct ListTableOptions {
  // `-o wide`, which kueuectl lacks: a few more columns after AGE.
  bool wide = false;
  // `-A`: namespaced kinds get a leading NAMESPACE column.
  bool all_namespaces = false;
};

// Each renders its objects, in the given order, with a header line; ""
// for none (callers print NoResourcesFound()). `now` is the AGE reference.
//
// ClusterQueues: NAME COHORT PENDING WORKLOADS ADMITTED WORKLOADS ACTIVE AGE,
// ACTIVE "true" while the Active condition is True; wide adds STRATEGY and
// USAGE (FormatClusterQueueUsage).
std::string PrintClusterQueueList(absl::Span<const v1::ConfigObject> objects,
                                  const ListTableOptions& options,
                                  absl::Time now);
// LocalQueues: [NAMESPACE] NAME CLUSTERQUEUE PENDING WORKLOADS ADMITTED
// WORKLOADS AGE; wide adds ACTIVE.
std::string PrintLocalQueueList(absl::Span<const v1::ConfigObject> objects,
                                const ListTableOptions& options,
                                absl::Time now);
// ResourceFlavors: NAME NODE LABELS AGE, the labels "k=v, k2=v2" sorted;
// wide adds NODE TAINTS ("key=value:Effect, ...").
std::string PrintResourceFlavorList(absl::Span<const v1::ConfigObject> objects,
                                    const ListTableOptions& options,
                                    absl::Time now);

// (namespace, name).
using ObjectName = std::pair<std::string, std::string>;

// What a workload row shows beyond the workload, which the command finds.
struct WorkloadListResources {
  // The ClusterQueue of each LocalQueue: the CLUSTERQUEUE of a workload
  // that holds no admission.
  std::map<ObjectName, std::string> local_queue_cluster_queues;
  // The visibility API's positionInLocalQueue of each pending workload
  // listed there: its POSITION IN QUEUE.
  std::map<ObjectName, int32_t> positions_in_local_queue;
};

// Workloads: [NAMESPACE] NAME JOB TYPE JOB NAME LOCALQUEUE CLUSTERQUEUE
// STATUS POSITION IN QUEUE EXEC TIME AGE, where STATUS is
// WorkloadListStatus(), EXEC TIME runs from Admitted=True to Finished=True
// (or now) and is empty before admission; wide adds PRIORITY and REASON
// (the QuotaReserved=False reason of a pending workload).
std::string PrintWorkloadList(absl::Span<const v1::Workload> workloads,
                              const WorkloadListResources& resources,
                              const ListTableOptions& options, absl::Time now);

// The ClusterQueue a workload row names: its admission's, else its
// LocalQueue's (empty when neither is known), as kueuectl's printer.
std::string WorkloadClusterQueue(const v1::Workload& workload,
                                 const WorkloadListResources& resources);

// kueuectl's STATUS (workload.Status, upper-cased): FINISHED, ADMITTED,
// QUOTARESERVED or PENDING.
std::string WorkloadListStatus(const v1::Workload& workload);

// The job a workload stands for, as kueuectl reads its owner references:
// JOB TYPE is the owner's singular resource name with its API group
// ("job" for a batch/v1 Job, whose discovery names no group). kq's
// workloads carry no owner references; those kq-k8s-shim makes for a
// batch/v1 Job carry its name in the kq.dev/job-name annotation. Nullopt
// for a workload submitted to kqd directly.
struct JobOwner {
  std::string type;
  std::string name;
};
std::optional<JobOwner> JobOf(const v1::Workload& workload);

}  // namespace kq::cli
