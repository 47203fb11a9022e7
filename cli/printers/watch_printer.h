#pragma once

// `kq watch`: how one WatchEvent is shown.

#include <string>

#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

namespace kq::cli {

// "ADDED", "MODIFIED" or "DELETED" ("UNKNOWN" for an unset type).
std::string WatchEventType(const v1::WatchEvent& event);

// The Kueue kind of the event's object ("Workload", "ClusterQueue", ...);
// "" when it holds none.
std::string WatchEventKind(const v1::WatchEvent& event);

// "namespace/name" for namespaced objects, "name" otherwise.
std::string WatchEventName(const v1::WatchEvent& event);

// What the object is now, in one line:
//   Workload: "Finished: <reason>: <message>", "Evicting: <reason>:
//     <message>" (evicted, still holding quota), "Admitted by <cq> on
//     <flavors>", "QuotaReserved in <cq>, admission checks pending",
//     "Deactivated", "Pending: <message>";
//   ClusterQueue: "pending=N reserving=N admitted=N" [" stopPolicy=P"];
//   LocalQueue: "clusterQueue=<cq> pending=N reserving=N admitted=N"
//     [" stopPolicy=P"];
//   ResourceFlavor: "nodeLabels=k=v,..." (or "nodeLabels=<none>");
//   Cohort: "parent=<name>" (or "" for a root); WorkloadPriorityClass:
//   "value=N"; AdmissionCheck: "controller=<name>"; Namespace: "".
// DELETED events say "deleted".
std::string WatchEventSummary(const v1::WatchEvent& event);

// The event's workload or object in Kueue's JSON shape (ToKueueJson), null
// when it holds none.
nlohmann::json WatchEventObjectJson(const v1::WatchEvent& event);

// {"type": ..., "revision": N, "object": {...}}: kubectl's
// --output-watch-events document plus the revision.
nlohmann::json WatchEventJson(const v1::WatchEvent& event);

// A one-line summary of a workload, as for a Workload event.
std::string WorkloadSummary(const v1::Workload& workload);

}  // namespace kq::cli
