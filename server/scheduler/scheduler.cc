#include "server/scheduler/scheduler.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace kq::scheduler {
namespace {

// A nominated head with its assignment.
struct Entry {
  const Head* head;
  cache::ClusterQueueSnapshot* cq;
  Assignment assignment;
  // Whether admitting needs quota above nominal somewhere (Kueue's
  // borrowing level, reduced to "borrows or not" until hierarchical levels
  // are needed).
  bool borrows = false;
};

bool AssignmentBorrows(const cache::ClusterQueueSnapshot& cq,
                       const cache::FlavorResourceQuantities& usage) {
  for (const auto& [fr, v] : usage) {
    if (cq.BorrowingWith(fr, v)) return true;
  }
  return false;
}

}  // namespace

Labels NamespaceLabels(const std::map<std::string, Namespace>& namespaces,
                       const std::string& name) {
  Labels labels;
  auto it = namespaces.find(name);
  if (it != namespaces.end()) labels = it->second.meta.labels;
  labels["kubernetes.io/metadata.name"] = name;
  return labels;
}

CycleResult Schedule(cache::Cache& cache, const std::vector<Head>& heads,
                     const SchedulingContext& context,
                     absl::Time /*now: backoff and requeue times*/) {
  CycleResult result;
  std::vector<Entry> entries;
  std::vector<EntryResult> inadmissible;

  // 1. Nominate: rule out heads that cannot be evaluated, assign flavors to
  //    the others against the cache as it is at the start of the pass.
  for (const Head& head : heads) {
    const Workload& wl = *head.workload;
    cache::ClusterQueueSnapshot* cq =
        cache.FindClusterQueue(head.cluster_queue);
    EntryResult rejected{head.workload, head.cluster_queue,
                         EntryResult::Status::kInadmissible};
    bool failed_checks = false;
    for (const AdmissionCheckState& check : wl.admission_checks) {
      failed_checks =
          failed_checks || check.state == "Retry" || check.state == "Rejected";
    }
    if (failed_checks) {
      rejected.reason = "PendingEvaluation";
      rejected.message = "The workload has failed admission checks";
    } else if (cq != nullptr && !cq->active) {
      rejected.reason = "Suspended";
      rejected.message =
          absl::StrCat("ClusterQueue ", head.cluster_queue, " is inactive");
    } else if (cq == nullptr) {
      rejected.reason = "Misconfigured";
      rejected.message =
          absl::StrCat("ClusterQueue ", head.cluster_queue, " not found");
    } else if (!cq->spec.namespace_selector ||
               !SelectorMatches(*cq->spec.namespace_selector,
                                NamespaceLabels(*context.namespaces,
                                                wl.meta.namespace_name))) {
      // Kueue's rule: no namespaceSelector selects no namespace.
      rejected.reason = "Misconfigured";
      rejected.message =
          "workload namespace doesn't match ClusterQueue selector";
      rejected.namespace_mismatch = true;
    } else {
      Entry entry{&head, cq, AssignFlavors(wl, *cq, *context.flavors)};
      entry.borrows = AssignmentBorrows(*cq, entry.assignment.usage);
      entries.push_back(std::move(entry));
      continue;
    }
    inadmissible.push_back(std::move(rejected));
  }

  // 2. Order (Kueue's classical iterator): not borrowing first, then higher
  //    priority, then earlier creation; UID and key make the order total.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    const Workload& x = *a.head->workload;
    const Workload& y = *b.head->workload;
    return std::make_tuple(a.borrows, -int64_t{x.priority},
                           x.meta.creation_timestamp, x.meta.uid,
                           x.meta.namespace_name, x.meta.name) <
           std::make_tuple(b.borrows, -int64_t{y.priority},
                           y.meta.creation_timestamp, y.meta.uid,
                           y.meta.namespace_name, y.meta.name);
  });

  // 3. Process: admit each entry that still fits now that earlier entries
  //    of this pass hold their quota.
  for (Entry& entry : entries) {
    EntryResult r{entry.head->workload, entry.head->cluster_queue};
    if (entry.assignment.mode == AssignmentMode::kNoFit) {
      r.status = EntryResult::Status::kNoFit;
      r.reason = entry.assignment.no_fit_reason;
      r.message = entry.assignment.Message();
    } else if (!entry.cq->Fits(entry.assignment.usage)) {
      r.status = EntryResult::Status::kSkipped;
      r.reason = "WaitingForQuota";
      r.message = "Workload no longer fits after processing another workload";
    } else {
      entry.cq->AddUsage(entry.assignment.usage);
      r.status = EntryResult::Status::kAdmitted;
      r.admission = entry.assignment.ToAdmission(entry.head->cluster_queue);
    }
    result.entries.push_back(std::move(r));
  }
  for (EntryResult& r : inadmissible) result.entries.push_back(std::move(r));
  return result;
}

}  // namespace kq::scheduler
