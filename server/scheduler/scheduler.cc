#include "server/scheduler/scheduler.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

#include "server/scheduler/podset_reducer.h"

namespace kq::scheduler {
namespace {

// A nominated head with its assignment.
struct Entry {
  const Head* head;
  cache::ClusterQueueSnapshot* cq;
  Assignment assignment;
};

// Capacity held by a Preempt entry without candidates until the end of the
// pass.
struct Reservation {
  cache::ClusterQueueSnapshot* cq;
  cache::FlavorResourceQuantities usage;
};

int64_t GenerationOf(const SchedulingContext& context,
                     const std::string& cluster_queue) {
  if (context.cluster_queue_generations == nullptr) return 0;
  auto it = context.cluster_queue_generations->find(cluster_queue);
  return it == context.cluster_queue_generations->end() ? 0 : it->second;
}

// Kueue's getInitialAssignments without preemption targets (kq has no
// preemptor yet, so a Preempt assignment never has any): the full
// assignment when it fits; otherwise, when some pod set may shrink, the
// largest counts that fit (partial admission); otherwise the full
// assignment as it is.
Assignment InitialAssignment(const Workload& wl,
                             const cache::ClusterQueueSnapshot& cq,
                             const SchedulingContext& context,
                             const PreemptionOracle& oracle,
                             const LastAssignment* last) {
  FlavorAssignerOptions options;
  options.scheduling_cycle = context.scheduling_cycle;
  options.cluster_queue_generation = GenerationOf(context, cq.name());
  FlavorAssigner assigner(wl, cq, *context.flavors, oracle, last, options);
  Assignment full = assigner.Assign();
  if (full.RepresentativeMode() == AssignmentMode::kFit) return full;
  // A Preempt assignment would be returned here with the preemptor's
  // targets when it finds some.
  if (CanBePartiallyAdmitted(wl)) {
    PodSetReducer<Assignment> reducer(
        wl.pod_sets,
        [&](const std::vector<int32_t>& counts) -> std::optional<Assignment> {
          Assignment partial = assigner.Assign(counts);
          if (partial.RepresentativeMode() != AssignmentMode::kFit) {
            return std::nullopt;
          }
          return partial;
        });
    if (std::optional<Assignment> partial = reducer.Search()) {
      return *std::move(partial);
    }
  }
  return full;
}

// Kueue's quotaResourcesToReserve for a Preempt assignment: what it would
// take of each flavor-resource up to what the ClusterQueue may still use —
// up to nominal + borrowingLimit when it borrows (all of it without a
// limit), up to nominal otherwise.
cache::FlavorResourceQuantities ResourcesToReserve(
    const Assignment& assignment, const cache::ClusterQueueSnapshot& cq) {
  cache::FlavorResourceQuantities reserved;
  for (const auto& [fr, usage] : assignment.usage) {
    cache::QuotaLimits quota;
    if (auto it = cq.node.quotas.find(fr); it != cq.node.quotas.end()) {
      quota = it->second;
    }
    const int64_t cq_usage = cq.node.Get(cq.node.usage, fr);
    int64_t amount;
    if (assignment.borrowing > 0) {
      amount = !quota.borrowing_limit
                   ? usage
                   : std::min(usage, SaturatingSub(
                                         SaturatingAdd(quota.nominal,
                                                       *quota.borrowing_limit),
                                         cq_usage));
      // Kueue does not floor this; a negative reservation (usage already
      // above nominal + borrowingLimit after a quota cut) would lower the
      // live cache's usage in a way RemoveUsage cannot undo.
      amount = std::max<int64_t>(0, amount);
    } else {
      amount = std::max<int64_t>(
          0, std::min(usage, SaturatingSub(quota.nominal, cq_usage)));
    }
    reserved[fr] = amount;
  }
  return reserved;
}

}  // namespace

bool EntryOrderLess(const Workload& a, int a_borrowing, const Workload& b,
                    int b_borrowing) {
  // Kueue's step 1 (entries already holding quota first, for a second pass)
  // never applies: kq's heads do not hold quota.
  return std::make_tuple(a_borrowing, -int64_t{a.priority},
                         QueueOrderTimestamp(a), std::cref(a.meta.uid),
                         std::cref(a.meta.namespace_name),
                         std::cref(a.meta.name)) <
         std::make_tuple(b_borrowing, -int64_t{b.priority},
                         QueueOrderTimestamp(b), std::cref(b.meta.uid),
                         std::cref(b.meta.namespace_name),
                         std::cref(b.meta.name));
}

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
  const NoPreemptionOracle no_preemption;
  const PreemptionOracle& oracle =
      context.oracle != nullptr ? *context.oracle : no_preemption;
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
      // Kueue's getAssignments: an outdated bookmark restarts every scan.
      const LastAssignment* last = head.last_assignment;
      if (last != nullptr &&
          LastAssignmentOutdated(*last, GenerationOf(context, cq->name()),
                                 context.scheduling_cycle)) {
        last = nullptr;
      }
      entries.push_back(
          Entry{&head, cq, InitialAssignment(wl, *cq, context, oracle, last)});
      continue;
    }
    if (head.last_assignment != nullptr) {
      rejected.last_assignment = *head.last_assignment;
    }
    inadmissible.push_back(std::move(rejected));
  }

  // 2. Order (Kueue's classical iterator, EntryOrderLess): lower borrowing
  //    level first, then higher priority, then earlier queue-order
  //    timestamp.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return EntryOrderLess(*a.head->workload, a.assignment.borrowing,
                          *b.head->workload, b.assignment.borrowing);
  });

  // 3. Process each entry against the cache as earlier entries left it.
  std::vector<Reservation> reservations;
  for (Entry& entry : entries) {
    const Assignment& assignment = entry.assignment;
    EntryResult r{entry.head->workload, entry.head->cluster_queue};
    r.mode = assignment.RepresentativeMode();
    r.borrowing = assignment.borrowing;
    // Skipped entries keep their bookmark too (Kueue's
    // FlavorFungibilityPreserveScanProgress).
    r.last_assignment = assignment.last_state;
    if (r.mode == AssignmentMode::kNoFit) {
      // 3a. No flavor can take it.
      r.status = EntryResult::Status::kNoFit;
      r.reason = assignment.no_fit_reason;
      r.message = assignment.Message();
    } else if (r.mode == AssignmentMode::kPreempt) {
      // 3b. It needs preemption and there are no targets. Unless the
      //     ClusterQueue can always reclaim what it lends, hold the capacity
      //     it would take so that lower-ranked entries of the cohort cannot
      //     take it in this pass (Kueue's
      //     reserveCapacityForUnreclaimablePreempt).
      r.status = EntryResult::Status::kNoFit;
      r.no_preemption_candidates = true;
      r.reason = kReasonWaitingForQuota;
      r.message = assignment.Message();
      if (entry.cq->spec.preemption.reclaim_within_cohort != "Any") {
        Reservation reservation{entry.cq,
                                ResourcesToReserve(assignment, *entry.cq)};
        entry.cq->AddUsage(reservation.usage);
        reservations.push_back(std::move(reservation));
      }
    } else if (!entry.cq->Fits(assignment.usage)) {
      // 3c. Earlier entries of this pass took the quota.
      r.status = EntryResult::Status::kSkipped;
      r.reason = kReasonWaitingForQuota;
      r.message = "Workload no longer fits after processing another workload";
    } else {
      // 3d. Admit.
      entry.cq->AddUsage(assignment.usage);
      r.status = EntryResult::Status::kAdmitted;
      r.admission = assignment.ToAdmission(entry.head->cluster_queue);
    }
    result.entries.push_back(std::move(r));
  }

  // 4. Release the capacity held for this pass: the cache outlives it
  //    (Kueue reserves in a per-cycle snapshot).
  for (const Reservation& reservation : reservations) {
    reservation.cq->RemoveUsage(reservation.usage);
  }
  for (EntryResult& r : inadmissible) result.entries.push_back(std::move(r));
  return result;
}

}  // namespace kq::scheduler
