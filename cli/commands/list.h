#pragma once

// `kq list`: kueuectl's `list` (cmd/kueuectl/app/list) against kqd.
//
//   kq list clusterqueue|cq|clusterqueues [-l SEL] [--field-selector SEL]
//       [--active=true|false] [-o ...]
//   kq list localqueue|lq|localqueues [-c CQ] [-n NS|-A] [-l ...] [-o ...]
//   kq list resourceflavor|rf|resourceflavors [-l ...] [-o ...]
//   kq list workload|wl|workloads|kwl|kueueworkload(s) [-c CQ] [-q LQ]
//       [--status all|pending|quotareserved|admitted|finished]...
//       [--for job/NAME] [-n NS|-A] [-l ...] [--field-selector ...] [-o ...]
//
// `-o` is "" (kueuectl's table), "wide" (the table with a few more
// columns), "json" or "yaml" (a v1 List of Kueue-shaped objects, as `kq
// get` prints) or "name". Selectors are matched by kq on kqd's listing
// (cli/selectors.h); field selectors support metadata.name and
// metadata.namespace, and status.admission.clusterQueue for workloads
// (the fields Kueue's CRDs make selectable).

#include <string>
#include <vector>

#include "cli/command.h"

namespace CLI {
class App;
}  // namespace CLI

namespace kq::cli {

struct ListOptions {
  enum class Kind { kClusterQueue, kLocalQueue, kResourceFlavor, kWorkload };
  Kind kind = Kind::kClusterQueue;
  std::string namespace_name = "default";
  bool all_namespaces = false;
  std::string label_selector;
  std::string field_selector;
  std::string output;
  // clusterqueue: --active values as typed (a bool each; at most one).
  std::vector<std::string> active;
  // localqueue, workload: --clusterqueue.
  std::string cluster_queue;
  // workload: --localqueue, --status (repeatable, or comma-separated), --for.
  std::string local_queue;
  std::vector<std::string> statuses;
  std::string for_object;
};

// Adds `list` and its four kinds (with kueuectl's aliases and flags) to
// `app`, parsing into `options`. Returns `list`: when it was parsed, run
// RunList(options, ...).
CLI::App* AddListCommand(CLI::App& app, ListOptions& options);

// Lists the kind as kueuectl does: fetch (one ListObjects or ListWorkloads
// call, plus the LocalQueues and one PendingWorkloads call per ClusterQueue
// of the pending workloads shown), filter, print. Filters, as kueuectl's:
//   - cq --active: the Active condition is (not) True;
//   - lq -c: spec.clusterQueue;
//   - workload -q: spec.queueName; -c: the row's CLUSTERQUEUE (its
//     admission's, else its LocalQueue's; kueuectl looks at the admission
//     only, which leaves out pending workloads); --status: the STATUS
//     column; --for job/NAME: workloads kq-k8s-shim made for that Job.
// An empty result prints "No resources found" (with " in NS namespace."
// for namespaced kinds without -A) to ctx.err and succeeds. Bad flag
// values are usage errors (kExitUsage), kqd's errors kExitError.
int RunList(const ListOptions& options, CommandContext& ctx);

}  // namespace kq::cli
