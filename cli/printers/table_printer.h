#pragma once

// `kq get` tables: kubectl's look with Kueue's printer columns.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "cli/kinds.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {

// How to render a table.
struct TableOptions {
  // `-o wide`: adds each kind's extra columns.
  bool wide = false;
  // `-A`: namespaced kinds get a leading NAMESPACE column.
  bool all_namespaces = false;
};

// Renders configuration objects, all of `kind`, as a kubectl table with a
// header line, in the given order. `now` is the reference time of the AGE
// column, so output is reproducible. Returns "" for no objects: callers
// print NoResourcesFound() instead. Columns:
//   ClusterQueue   NAME COHORT PENDING WORKLOADS
//     wide:        NAME COHORT STRATEGY PENDING WORKLOADS ADMITTED WORKLOADS
//                  ACTIVE USAGE ("flavor: res used/nominal, ...; flavor: ...")
//   LocalQueue     NAME CLUSTERQUEUE PENDING WORKLOADS ADMITTED WORKLOADS
//     wide:        + ACTIVE
//   ResourceFlavor NAME AGE (wide: + NODE LABELS)
//   Cohort         NAME PARENT AGE
//   WorkloadPriorityClass NAME VALUE AGE (wide: + DESCRIPTION)
//   AdmissionCheck NAME CONTROLLER AGE
//   ProvisioningRequestConfig NAME PROVISIONING CLASS AGE
//     wide:        + MANAGED RESOURCES BACKOFF LIMIT
//   Namespace      NAME AGE
std::string PrintObjectTable(Kind kind,
                             absl::Span<const v1::ConfigObject> objects,
                             const TableOptions& options, absl::Time now);

// Renders workloads as a kubectl table:
//   NAME QUEUE RESERVED IN ADMITTED FINISHED AGE
//   wide: + PRIORITY STATUS FLAVORS REASON
// where ADMITTED and FINISHED are the status of those conditions ("" when
// absent), STATUS is WorkloadState(), FLAVORS is FormatPodSetFlavors() and
// REASON the QuotaReserved=False reason of a pending workload. Returns ""
// for no workloads.
std::string PrintWorkloadTable(absl::Span<const v1::Workload> workloads,
                               const TableOptions& options, absl::Time now);

// The header and one row of PrintWorkloadTable (NAMESPACE first with
// options.all_namespaces), for tables printed a row at a time.
std::vector<std::string> WorkloadTableHeader(const TableOptions& options);
std::vector<std::string> WorkloadTableRow(const v1::Workload& workload,
                                          const TableOptions& options,
                                          absl::Time now);

// kubectl's `get` table spacing (minimum column width 6, padding 3).
inline constexpr int kTableMinWidth = 6;
inline constexpr int kTablePadding = 3;

// The per-flavor usage summary of the wide ClusterQueue table: every flavor
// and resource of the spec, in spec order (covered resources first), as
// "gpu-a100: cpu 32/64, memory 128Gi/256Gi; default-cpu: cpu 0/128", usage
// from status.flavors_reservation ("0" when absent).
std::string FormatClusterQueueUsage(const v1::ClusterQueue& cluster_queue);

// kubectl's message for an empty listing: "No resources found in NS
// namespace." for a namespaced kind listed in one namespace, otherwise "No
// resources found".
std::string NoResourcesFound(Kind kind, bool all_namespaces,
                             absl::string_view namespace_name);

}  // namespace kq::cli
