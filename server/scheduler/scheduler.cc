#include "server/scheduler/scheduler.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

#include "server/core/conditions.h"
#include "server/core/shape_key.h"
#include "server/scheduler/fair_sharing_iterator.h"
#include "server/scheduler/podset_reducer.h"

namespace kq::scheduler {
namespace {

// A nominated head with its assignment and, for a Preempt assignment, the
// workloads to evict.
struct Entry {
  const Head* head;
  cache::ClusterQueueSnapshot* cq;
  // Shared with the NominationMemo; its last_state is the one computed,
  // `last_state` is this entry's bookmark.
  std::shared_ptr<const Assignment> nominated;
  // nominated->RepresentativeMode().
  AssignmentMode mode;
  LastAssignment last_state;
  std::vector<PreemptionTarget> targets;
  // QueueOrderTimestamp of the workload, for the classical order.
  absl::Time order_time;

  const Assignment& assignment() const { return *nominated; }
};

// Kueue's InitialAssignment result (getInitialAssignments).
struct Nomination {
  Assignment assignment;
  std::vector<PreemptionTarget> targets;
};

// Capacity held until the end of the pass by a Preempt entry: without
// candidates, what it would take up to its limits; with targets, its whole
// usage.
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

// A head's entry for `nomination`. Its bookmark is what the assignment
// would stamp now: the flavor indices only while some scan is in progress
// (a bookmark whose scans all finished resumes nothing), this pass's
// generation and cycle.
Entry EntryOf(const Head& head, cache::ClusterQueueSnapshot* cq,
              const NominationMemo::Nomination& nomination,
              std::vector<PreemptionTarget> targets,
              const SchedulingContext& context) {
  LastAssignment last_state;
  if (nomination.pending_flavors) {
    last_state.last_tried_flavor_idx =
        nomination.assignment->last_state.last_tried_flavor_idx;
  }
  last_state.cluster_queue_generation = GenerationOf(context, cq->name());
  last_state.scheduling_cycle = context.scheduling_cycle;
  return Entry{&head,
               cq,
               nomination.assignment,
               nomination.mode,
               std::move(last_state),
               std::move(targets)};
}

// The equivalence key of a head for NominationMemo: everything the flavor
// assigner and the preemption searches read of the workload. The pod
// template is not read (its requests are in `requests`); the queue-order
// time only matters to LowerOrNewerEqualPriority.
void BuildNominationKey(const Workload& wl,
                        const cache::ClusterQueueSnapshot& cq,
                        std::string& key) {
  ShapeKeyWriter out(key);
  out.Str(cq.name()).Tag('P').Int(wl.priority);
  if (cq.spec.preemption.within_cluster_queue ==
          kPolicyLowerOrNewerEqualPriority ||
      cq.spec.preemption.reclaim_within_cohort ==
          kPolicyLowerOrNewerEqualPriority) {
    out.Tag('T').Int(absl::ToUnixNanos(QueueOrderTimestamp(wl)));
  }
  for (const auto& [name, value] : wl.meta.annotations) {
    // Kueue's priority boost (a feature gate) adds to the priority.
    if (name == kPriorityBoostAnnotation) out.Tag('B').Str(value);
  }
  for (const auto& [pod_set, count] : wl.reclaimable_pods) {
    out.Tag('R').Str(pod_set).Int(count);
  }
  for (const PodSet& ps : wl.pod_sets) {
    out.Tag('S').Str(ps.name).Int(ps.count).Int(ps.min_count.value_or(-1));
    out.Placement(ps);
  }
}

}  // namespace

NominationMemo::Nomination NominationMemo::Nomination::Of(
    std::shared_ptr<const Assignment> assignment) {
  Nomination nomination;
  nomination.mode = assignment->RepresentativeMode();
  nomination.pending_flavors = assignment->last_state.PendingFlavors();
  nomination.assignment = std::move(assignment);
  return nomination;
}

void NominationMemo::Insert(absl::string_view key, uint64_t tree_generation,
                            const Nomination& nomination) {
  // Stale entries are only overwritten; queue-order times in keys make
  // them many on a busy server, so the memo starts over at a bound.
  if (nominations_.size() >= kMaxEntries) nominations_.clear();
  nominations_.insert_or_assign(std::string(key),
                                std::make_pair(tree_generation, nomination));
}

namespace {

// Kueue's getInitialAssignments: the full assignment when it fits, or when
// it needs preemption and the oracle finds targets; otherwise, when some pod
// set may shrink, the largest counts that fit or have targets (partial
// admission); otherwise the full assignment as it is, without targets.
Nomination InitialAssignment(const Workload& wl,
                             const cache::ClusterQueueSnapshot& cq,
                             const SchedulingContext& context,
                             const PreemptionOracle& oracle,
                             const LastAssignment* last) {
  FlavorAssignerOptions options;
  options.enable_fair_sharing = context.fair_sharing;
  options.scheduling_cycle = context.scheduling_cycle;
  options.resources = context.resources;
  options.cluster_queue_generation = GenerationOf(context, cq.name());
  FlavorAssigner assigner(wl, cq, *context.flavors, oracle, last, options);
  Assignment full = assigner.Assign();
  const AssignmentMode mode = full.RepresentativeMode();
  if (mode == AssignmentMode::kFit) return {std::move(full), {}};
  if (mode == AssignmentMode::kPreempt) {
    std::vector<PreemptionTarget> targets = oracle.GetTargets(cq, wl, full);
    if (!targets.empty()) return {std::move(full), std::move(targets)};
  }
  if (CanBePartiallyAdmitted(wl)) {
    PodSetReducer<Nomination> reducer(
        wl.pod_sets,
        [&](const std::vector<int32_t>& counts) -> std::optional<Nomination> {
          Assignment partial = assigner.Assign(counts);
          const AssignmentMode partial_mode = partial.RepresentativeMode();
          if (partial_mode == AssignmentMode::kFit) {
            return Nomination{std::move(partial), {}};
          }
          if (partial_mode == AssignmentMode::kPreempt) {
            std::vector<PreemptionTarget> targets =
                oracle.GetTargets(cq, wl, partial);
            if (!targets.empty()) {
              return Nomination{std::move(partial), std::move(targets)};
            }
          }
          return std::nullopt;
        });
    if (std::optional<Nomination> partial = reducer.Search()) {
      return *std::move(partial);
    }
  }
  return {std::move(full), {}};
}

// Kueue's fits(): whether `usage` fits in `cq` once every workload in
// `removed` (the targets of this pass so far plus the entry's own) no
// longer holds its quota. The removal is simulated and undone.
bool FitsAfterRemoval(cache::Cache& cache, cache::ClusterQueueSnapshot& cq,
                      const cache::FlavorResourceQuantities& usage,
                      const std::set<const Workload*>& removed) {
  std::vector<
      std::pair<cache::ClusterQueueSnapshot*, cache::FlavorResourceQuantities>>
      undo;
  for (const Workload* wl : removed) {
    if (!wl->admission.has_value()) continue;
    cache::ClusterQueueSnapshot* holder =
        cache.FindClusterQueue(wl->admission->cluster_queue);
    if (holder == nullptr) continue;
    undo.emplace_back(holder, cache::UsageOf(*wl));
    holder->RemoveUsage(undo.back().second);
  }
  const bool fits = cq.Fits(usage);
  for (auto& [holder, removed_usage] : undo) holder->AddUsage(removed_usage);
  return fits;
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
  return EntryOrderLess(a, a_borrowing, QueueOrderTimestamp(a), b, b_borrowing,
                        QueueOrderTimestamp(b));
}

bool EntryOrderLess(const Workload& a, int a_borrowing, absl::Time a_time,
                    const Workload& b, int b_borrowing, absl::Time b_time) {
  // Kueue's step 1 (entries already holding quota first, for a second pass)
  // never applies: kq's heads do not hold quota.
  return std::make_tuple(
             a_borrowing, -int64_t{a.priority}, a_time, std::cref(a.meta.uid),
             std::cref(a.meta.namespace_name), std::cref(a.meta.name)) <
         std::make_tuple(
             b_borrowing, -int64_t{b.priority}, b_time, std::cref(b.meta.uid),
             std::cref(b.meta.namespace_name), std::cref(b.meta.name));
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
  // Every usage change of the pass is put back before it returns (searches,
  // reservations, fair-sharing trials) except its admissions, which mark
  // their trees changed themselves.
  cache::Cache::Simulation simulation(cache);

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
      failed_checks = failed_checks || check.state == kCheckStateRetry ||
                      check.state == kCheckStateRejected;
    }
    if (failed_checks) {
      rejected.reason = kReasonPendingEvaluation;
      rejected.message = "The workload has failed admission checks";
    } else if (cq != nullptr && !cq->active) {
      rejected.reason = kReasonSuspended;
      rejected.message =
          absl::StrCat("ClusterQueue ", head.cluster_queue, " is inactive");
    } else if (cq == nullptr) {
      rejected.reason = kReasonMisconfigured;
      rejected.message =
          absl::StrCat("ClusterQueue ", head.cluster_queue, " not found");
    } else if (!cq->spec.namespace_selector ||
               // An empty selector ({}) selects every namespace.
               (!(cq->spec.namespace_selector->match_labels.empty() &&
                  cq->spec.namespace_selector->match_expressions.empty()) &&
                !SelectorMatches(*cq->spec.namespace_selector,
                                 NamespaceLabels(*context.namespaces,
                                                 wl.meta.namespace_name)))) {
      // Kueue's rule: no namespaceSelector selects no namespace.
      rejected.reason = kReasonMisconfigured;
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
      // Only heads whose scans start at the first flavor are equivalent by
      // their key: a bookmark with every scan finished (-1) starts there
      // too.
      NominationMemo* memo = context.nomination_memo;
      const bool memoisable =
          memo != nullptr && (last == nullptr || !last->PendingFlavors());
      if (memoisable) {
        BuildNominationKey(wl, *cq, memo->key_buffer());
        if (const NominationMemo::Nomination* memoised =
                memo->Find(memo->key_buffer(), cq->tree_generation())) {
          entries.push_back(EntryOf(head, cq, *memoised, {}, context));
          continue;
        }
      }
      Nomination nomination = InitialAssignment(wl, *cq, context, oracle, last);
      const NominationMemo::Nomination nominated =
          NominationMemo::Nomination::Of(std::make_shared<const Assignment>(
              std::move(nomination.assignment)));
      if (memoisable && nomination.targets.empty()) {
        memo->Insert(memo->key_buffer(), cq->tree_generation(), nominated);
      }
      entries.push_back(
          EntryOf(head, cq, nominated, std::move(nomination.targets), context));
      continue;
    }
    if (head.last_assignment != nullptr) {
      rejected.last_assignment = *head.last_assignment;
    }
    inadmissible.push_back(std::move(rejected));
  }

  // 2. Order. Classical (EntryOrderLess): lower borrowing level first, then
  //    higher priority, then earlier queue-order timestamp, decided once.
  //    Fair sharing: a tournament per pop over the shares the cache has
  //    then, so the entries processed before count.
  std::optional<FairSharingIterator> fair_order;
  if (context.fair_sharing) {
    std::vector<FairSharingCandidate> candidates;
    candidates.reserve(entries.size());
    for (const Entry& entry : entries) {
      candidates.push_back(
          {entry.head->workload, entry.cq, &entry.assignment().usage});
    }
    fair_order.emplace(std::move(candidates));
  } else {
    // EntryOrderLess with each entry's queue-order time read once.
    for (Entry& entry : entries) {
      entry.order_time = QueueOrderTimestamp(*entry.head->workload);
    }
    std::sort(
        entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
          return EntryOrderLess(*a.head->workload, a.assignment().borrowing,
                                a.order_time, *b.head->workload,
                                b.assignment().borrowing, b.order_time);
        });
  }

  // 3. Process each entry against the cache as earlier entries left it.
  //    `preempted` are the targets of the entries that preempt in this pass
  //    (Kueue's preemptedWorkloads).
  std::vector<Reservation> reservations;
  std::set<const Workload*> preempted;
  for (size_t n = 0; n < entries.size(); ++n) {
    Entry& entry = fair_order ? entries[fair_order->Pop()] : entries[n];
    const Assignment& assignment = entry.assignment();
    EntryResult r{entry.head->workload, entry.head->cluster_queue};
    r.mode = entry.mode;
    r.borrowing = assignment.borrowing;
    // Skipped entries keep their bookmark too (Kueue's
    // FlavorFungibilityPreserveScanProgress).
    r.last_assignment = std::move(entry.last_state);
    // The workloads whose quota counts as free for this entry: the targets
    // of earlier entries of the pass and its own.
    bool overlaps = false;
    std::set<const Workload*> removed = preempted;
    for (const PreemptionTarget& t : entry.targets) {
      overlaps = overlaps || preempted.count(t.workload) > 0;
      removed.insert(t.workload);
    }
    if (r.mode == AssignmentMode::kNoFit) {
      // 3a. No flavor can take it.
      r.status = EntryResult::Status::kNoFit;
      r.reason = assignment.no_fit_reason;
      r.message = assignment.CachedMessage();
    } else if (r.mode == AssignmentMode::kPreempt && entry.targets.empty()) {
      // 3b. It needs preemption and there are no targets. Unless the
      //     ClusterQueue can always reclaim what it lends, hold the capacity
      //     it would take so that lower-ranked entries of the cohort cannot
      //     take it in this pass (Kueue's
      //     reserveCapacityForUnreclaimablePreempt).
      r.status = EntryResult::Status::kNoFit;
      r.no_preemption_candidates = true;
      r.reason = kReasonWaitingForQuota;
      r.message = assignment.CachedMessage();
      if (entry.cq->spec.preemption.reclaim_within_cohort != kPolicyAny) {
        Reservation reservation{entry.cq,
                                ResourcesToReserve(assignment, *entry.cq)};
        entry.cq->AddUsage(reservation.usage);
        reservations.push_back(std::move(reservation));
      }
    } else if (overlaps) {
      // 3c. An earlier entry of this pass preempts some of the same
      //     workloads: one preemption per victim per pass.
      r.status = EntryResult::Status::kSkipped;
      r.reason = kReasonWaitingForQuota;
      r.message =
          "Workload has overlapping preemption targets with another workload";
    } else if (!FitsAfterRemoval(cache, *entry.cq, assignment.usage, removed)) {
      // 3d. Earlier entries of this pass took the quota, counting the
      //     quota their preemptions free.
      r.status = EntryResult::Status::kSkipped;
      r.reason = kReasonWaitingForQuota;
      r.message = "Workload no longer fits after processing another workload";
    } else if (r.mode == AssignmentMode::kPreempt) {
      // 3e. Preempt: the targets are the caller's to evict. The entry's
      //     usage is held for the rest of the pass so later entries count
      //     the quota the victims free as taken; the bookmark is dropped so
      //     that the next pass reconsiders every flavor (Kueue's
      //     markPreemptionOutcome).
      for (const PreemptionTarget& t : entry.targets) {
        preempted.insert(t.workload);
      }
      Reservation reservation{entry.cq, assignment.usage};
      entry.cq->AddUsage(reservation.usage);
      reservations.push_back(std::move(reservation));
      r.status = EntryResult::Status::kPreempting;
      r.reason = kReasonWaitingForPreemptedWorkloads;
      r.message =
          absl::StrCat(assignment.Message(), ". Pending the preemption of ",
                       entry.targets.size(), " workload(s)");
      r.victims = entry.targets;
      r.last_assignment.reset();
    } else {
      // 3f. Admit.
      entry.cq->AddUsage(assignment.usage);
      entry.cq->MarkTreeChanged();
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
