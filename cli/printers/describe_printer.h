#pragma once

// `kq describe`: kubectl-describe-like text for kq's objects.

#include <string>

#include "absl/time/time.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {

// Describes a configuration object: the common header (Name, Namespace,
// Labels, Annotations, API Version, Kind, Metadata), then its Spec and
// Status as indented sections. A ClusterQueue gets a Quota table (Flavor,
// Resource, Nominal, Borrowing Limit, Lending Limit, Reserved, Admitted);
// a Cohort the same without usage. `now` dates the creation timestamp
// ("(5m ago)") so output is reproducible.
std::string DescribeObject(const v1::ConfigObject& object, absl::Time now);

// Describes a workload: the common header, Spec (Queue, Priority, pod sets
// with their requests), Status (State, Admission with the flavor and usage
// of every resource of every pod set, admission checks, Conditions as a
// Type/Status/Reason/Message table) and, while it is pending, a last line
// "Pending: <reason>: <message>" from its QuotaReserved=False condition.
std::string DescribeWorkload(const v1::Workload& workload, absl::Time now);

}  // namespace kq::cli
