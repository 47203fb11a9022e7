#pragma once

// `kq describe`: kubectl-describe-like text for kq's objects.

#include <string>

#include "absl/time/time.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {

// Describes a configuration object: the common header (Name, Namespace,
// Labels, Annotations, API Version, Kind, Metadata), then its Spec and
// Status as indented sections. A ClusterQueue gets a Quota table (Flavor,
// Resource, Nominal, Borrowing Limit, Lending Limit, Reserved, Admitted);
// a Cohort the same without usage; a ProvisioningRequestConfig its class,
// parameters, managed resources, retry strategy, node selector updates and
// merge policy; a MultiKueueConfig its clusters; a MultiKueueCluster its
// cluster source and Active condition. `now` dates the creation timestamp
// ("(5m ago)") so output is reproducible.
std::string DescribeObject(const v1::ConfigObject& object, absl::Time now);

// Describes a workload: the common header, Spec (Queue, Priority, pod sets
// with their requests), Status (State, Admission with the flavor and usage
// of every resource of every pod set, admission checks, Conditions as a
// Type/Status/Reason/Message table, each check's podSetUpdates under "Pod
// Set Updates" when it reports some) and, while it is pending, a last line
// "Pending: <reason>: <message>" from its QuotaReserved=False condition.
std::string DescribeWorkload(const v1::Workload& workload, absl::Time now);

// The "Explain:" section appended to a workload's description, from
// QueueService.Explain: State, ClusterQueue, the deciding Reason and
// Message, the 0-based Position In ClusterQueue / LocalQueue while queued,
// Estimated Start ("(in 5m)" from `now`) and Admission Rate when kqd has a
// rate, then per flavor attempt ("<pod set> on <flavor>") its Mode,
// Reasons and a table RESOURCE REQUESTED AVAILABLE NOMINAL BORROWING-LIMIT
// of the short resources ("-" for unlimited borrowing), and the workloads
// it would preempt (WORKLOAD CLUSTERQUEUE REASON).
std::string DescribeExplanation(const v1::ExplainResponse& explanation,
                                absl::Time now);

}  // namespace kq::cli
