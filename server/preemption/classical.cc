#include "server/preemption/classical.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "server/core/quantity.h"
#include "server/preemption/ordering.h"
#include "server/preemption/policy.h"

namespace kq::preemption {
namespace {

using cache::ClusterQueueSnapshot;
using cache::CohortSnapshot;
using cache::FlavorResource;
using cache::FlavorResourceQuantities;

// Kueue's preemptionVariant: how a candidate may be preempted.
enum class Variant {
  // Not a candidate.
  kNever,
  // In the preemptor's own ClusterQueue.
  kWithinClusterQueue,
  // The preemptor's ClusterQueue sits closer to the quota the candidate
  // uses, so it may be preempted whatever its priority.
  kHierarchicalReclaim,
  // Only if the preemptor's ClusterQueue does not borrow afterwards.
  kReclaimWithoutBorrowing,
  // Even if the preemptor's ClusterQueue borrows afterwards.
  kReclaimWhileBorrowing,
};

const char* ReasonOf(Variant variant) {
  switch (variant) {
    case Variant::kWithinClusterQueue:
      return kReasonInClusterQueue;
    case Variant::kHierarchicalReclaim:
    case Variant::kReclaimWithoutBorrowing:
      return kReasonInCohortReclamation;
    case Variant::kReclaimWhileBorrowing:
      return kReasonInCohortReclaimWhileBorrowing;
    case Variant::kNever:
      break;
  }
  return "Unknown";
}

// One entry of the candidate sequence (Kueue's candidateElem).
struct Element {
  Candidate candidate;
  // The lowest common ancestor of the candidate's ClusterQueue and the
  // preemptor's; null for candidates in the preemptor's ClusterQueue.
  const CohortSnapshot* lca = nullptr;
  Variant variant = Variant::kNever;
  // The ClusterQueue whose quota it holds.
  ClusterQueueSnapshot* holder = nullptr;
  // What CandidatesOrdering compares, read once per candidate instead of
  // once per comparison.
  bool evicted = false;
  int64_t priority = 0;
  absl::Time reserved;
  // The uid's first 16 bytes (UidPrefix): candidates reserved at the same
  // instant (one batch's admissions) tie on everything before the uid.
  std::pair<uint64_t, uint64_t> uid_prefix;
  // Its usage, computed when the search first removes it.
  std::optional<FlavorResourceQuantities> usage;
};

// A ClusterQueue whose holders may be candidates: one the walk of Kueue's
// collectCandidatesForHierarchicalReclaim reaches, above nominal quota on
// a contested flavor-resource.
struct Source {
  const ClusterQueueSnapshot* cq = nullptr;
  // The cohort whose subtree the walk was collecting when it reached `cq`.
  const CohortSnapshot* lca = nullptr;
  bool hierarchical_advantage = false;
};

// The first 16 bytes of `uid`, big-endian and zero-padded, so that two
// prefixes order as their strings do, up to ties.
std::pair<uint64_t, uint64_t> UidPrefix(const Uid& uid) {
  unsigned char bytes[16] = {};
  uid.WithText([&](absl::string_view text) {
    // An empty uid's view has no data to copy (memcpy from null).
    if (!text.empty()) {
      std::memcpy(bytes, text.data(), std::min(text.size(), sizeof(bytes)));
    }
  });
  uint64_t hi = 0;
  uint64_t lo = 0;
  for (int i = 0; i < 8; ++i) hi = (hi << 8) | bytes[i];
  for (int i = 8; i < 16; ++i) lo = (lo << 8) | bytes[i];
  return {hi, lo};
}

// Whether a chain of parents from `cq` reaches a cohort cycle; Kueue marks
// such ClusterQueues inactive, and walking their ancestors would not end.
bool InCohortCycle(const ClusterQueueSnapshot& cq) {
  return cq.parent != nullptr && cq.parent->has_cycle;
}

// The search state for one preemptor (Kueue's candidateIterator together
// with the preemptionCtx). Thread-compatible; lives for one call.
class ClassicalSearch {
 public:
  ClassicalSearch(ClusterQueueSnapshot& cq, const Preemptor& preemptor,
                  const HoldingQuota& holders, absl::Time now,
                  const Features& features, WithinNominalMemo* memo,
                  const ClassicalOptions& options)
      : cq_(cq),
        preemptor_(preemptor),
        holders_(holders),
        now_(now),
        features_(features),
        preemptor_priority_(EffectivePriority(*preemptor.workload, features)),
        ordering_(features.admission_fair_sharing
                      ? std::make_optional<CandidatesOrdering>(cq.name(), now,
                                                               features)
                      : std::nullopt),
        options_(options),
        memo_(memo == nullptr ? nullptr
                              : &memo->For(preemptor.frs_need_preemption)) {}

  std::vector<Target> Run() {
    if (options_.skip_hopeless && !MightFindTargets()) return {};
    BuildCandidates(SourcesForHierarchicalReclaim());
    // 1. Which runs to try: with borrowing allowed, without, or both. The
    // order only keeps compatibility with earlier Kueue versions.
    const bool borrow_forbidden = IsBorrowingWithinCohortForbidden(cq_.spec);
    std::vector<bool> attempts;
    if (no_candidate_from_other_queues_ ||
        (borrow_forbidden &&
         !QueueUnderNominalInResourcesNeedingPreemption())) {
      attempts = {true};
    } else if (borrow_forbidden && no_candidate_for_hierarchical_reclaim_) {
      attempts = {false, true};
    } else {
      attempts = {true, false};
    }
    // 2. Each run removes valid candidates in order until the preemptor
    // fits, then adds back those not needed.
    for (bool borrow : attempts) {
      std::vector<Element*> targets;
      for (size_t i = 0; i < candidates_.size() || OrderNextCandidate(); ++i) {
        Element& element = candidates_[i];
        if (!IsValid(element, borrow)) continue;
        Remove(element);
        targets.push_back(&element);
        if (PreemptorFits(borrow)) {
          FillBack(targets, borrow);
          Restore(targets);
          std::vector<Target> result;
          for (const Element* t : targets) {
            result.push_back(
                {.workload = t->candidate.workload,
                 .reason = ReasonOf(t->variant),
                 .cluster_queue = std::string(t->candidate.cluster_queue)});
          }
          return result;
        }
      }
      Restore(targets);
    }
    return {};
  }

 private:
  // Kueue's NewCandidateIterator: the three lists (hierarchy, priority,
  // same queue), each in CandidatesOrdering, then evicted ones of each
  // before the rest.
  void BuildCandidates(const std::vector<Source>& sources) {
    std::vector<Element> same_queue = CollectSameQueueCandidates();
    std::vector<Element> hierarchy;
    std::vector<Element> priority;
    for (const Source& source : sources) {
      AppendCandidatesFromCq(
          *source.cq, source.lca, source.hierarchical_advantage,
          source.hierarchical_advantage ? &hierarchy : &priority);
    }
    no_candidate_from_other_queues_ = hierarchy.empty() && priority.empty();
    no_candidate_for_hierarchical_reclaim_ = hierarchy.empty();
    candidates_.reserve(hierarchy.size() + priority.size() + same_queue.size());
    lists_ = {OrderedList(std::move(hierarchy)),
              OrderedList(std::move(priority)),
              OrderedList(std::move(same_queue))};
  }

  // CandidatesOrdering, over the values read once per candidate; the
  // LocalQueue usage criterion (admission fair sharing) needs the ordering
  // itself.
  bool Before(const Element& a, const Element& b) const {
    if (ordering_.has_value()) return (*ordering_)(a.candidate, b.candidate);
    if (a.evicted != b.evicted) return a.evicted;
    const bool a_same = a.holder == &cq_;
    const bool b_same = b.holder == &cq_;
    if (a_same != b_same) return b_same;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.reserved != b.reserved) return a.reserved > b.reserved;
    if (a.uid_prefix != b.uid_prefix) return a.uid_prefix < b.uid_prefix;
    const Workload& wa = *a.candidate.workload;
    const Workload& wb = *b.candidate.workload;
    if (int c = wa.meta.uid.compare(wb.meta.uid); c != 0) return c < 0;
    return std::tie(wa.meta.namespace_name, wa.meta.name) <
           std::tie(wb.meta.namespace_name, wb.meta.name);
  }

  // One of the three lists, ordered lazily: a search usually stops after a
  // few candidates of a hundred, so the list is a heap (linear to build)
  // that yields its candidates in CandidatesOrdering as the search reaches
  // them, instead of being sorted whole.
  struct OrderedList {
    OrderedList() = default;
    explicit OrderedList(std::vector<Element> elements)
        : elements(std::move(elements)) {}
    std::vector<Element> elements;
    // Indices into `elements` not yet yielded, a heap with the next first.
    std::vector<uint32_t> heap;
    bool heap_built = false;
  };

  // Appends the next candidate of the sequence Kueue's candidate iterator
  // builds (the evicted candidates of the three lists, list by list, then
  // the rest of each list, each list in CandidatesOrdering) to
  // candidates_; false when there is none left.
  bool OrderNextCandidate() {
    // Evicted candidates sort first in each list: they are its first
    // yields, and the first phase takes those alone.
    auto after = [this](uint32_t a, uint32_t b, const OrderedList& list) {
      return Before(list.elements[b], list.elements[a]);
    };
    while (phase_ < 2) {
      OrderedList& list = lists_[list_];
      if (!list.heap_built) {
        list.heap.resize(list.elements.size());
        for (uint32_t i = 0; i < list.heap.size(); ++i) list.heap[i] = i;
        std::make_heap(
            list.heap.begin(), list.heap.end(),
            [&](uint32_t a, uint32_t b) { return after(a, b, list); });
        list.heap_built = true;
      }
      if (!list.heap.empty() &&
          (phase_ == 1 || list.elements[list.heap.front()].evicted)) {
        std::pop_heap(
            list.heap.begin(), list.heap.end(),
            [&](uint32_t a, uint32_t b) { return after(a, b, list); });
        candidates_.push_back(std::move(list.elements[list.heap.back()]));
        list.heap.pop_back();
        return true;
      }
      if (++list_ == lists_.size()) {
        list_ = 0;
        ++phase_;
      }
    }
    return false;
  }

  // Kueue's classifyPreemptionVariant, for a workload that uses one of the
  // contested flavor-resources.
  // `candidate_priority` is its EffectivePriority.
  Variant Classify(const Workload& workload, int64_t candidate_priority,
                   const std::string& cluster_queue,
                   bool hierarchical_advantage) const {
    const bool same_queue = cluster_queue == cq_.name();
    const std::string& policy = same_queue
                                    ? cq_.spec.preemption.within_cluster_queue
                                    : cq_.spec.preemption.reclaim_within_cohort;
    if (!SatisfiesPreemptionPolicy(*preemptor_.workload, preemptor_priority_,
                                   workload, candidate_priority, policy)) {
      return Variant::kNever;
    }
    if (same_queue) return Variant::kWithinClusterQueue;
    if (hierarchical_advantage) return Variant::kHierarchicalReclaim;
    if (IsBorrowingWithinCohortForbidden(cq_.spec)) {
      return Variant::kReclaimWithoutBorrowing;
    }
    // Kueue's isAboveBorrowingThreshold: a candidate of equal or higher
    // priority, or above the threshold, may only be reclaimed if the
    // preemptor does not borrow.
    const std::optional<int32_t>& threshold =
        cq_.spec.preemption.borrow_within_cohort_max_priority_threshold;
    if (candidate_priority >= preemptor_priority_ ||
        (threshold.has_value() && candidate_priority > int64_t{*threshold})) {
      return Variant::kReclaimWithoutBorrowing;
    }
    return Variant::kReclaimWhileBorrowing;
  }

  // Kueue's getCandidatesFromCQ: the holders of `cq` that use a contested
  // flavor-resource (from the memo when there is one) and may be preempted.
  void AppendCandidatesFromCq(const ClusterQueueSnapshot& cq,
                              const CohortSnapshot* lca,
                              bool hierarchical_advantage,
                              std::vector<Element>* result) const {
    auto append = [&](const Workload* workload) {
      const int64_t priority = EffectivePriority(*workload, features_);
      Variant variant =
          Classify(*workload, priority, cq.name(), hierarchical_advantage);
      if (variant == Variant::kNever) return;
      result->push_back(
          {.candidate = {.workload = workload, .cluster_queue = cq.name()},
           .lca = lca,
           .variant = variant,
           // The search changes usage through the Cache it was given.
           .holder = const_cast<ClusterQueueSnapshot*>(&cq),
           .evicted = IsEvicted(*workload),
           .priority = priority,
           .reserved = QuotaReservationTime(*workload, now_),
           .uid_prefix = UidPrefix(workload->meta.uid)});
    };
    ForEachUser(cq, append);
  }

  // Calls `fn` with each workload holding quota in `cq` that uses one of
  // the contested flavor-resources, from the memo when there is one.
  template <typename Fn>
  void ForEachUser(const ClusterQueueSnapshot& cq, Fn&& fn) const {
    if (memo_ != nullptr) {
      for (const Workload* workload : memo_->Users(cq, holders_)) {
        fn(workload);
      }
      return;
    }
    for (const Workload* workload : holders_.InClusterQueue(cq.name())) {
      if (WorkloadUsesResources(*workload, preemptor_.frs_need_preemption)) {
        fn(workload);
      }
    }
  }

  // Kueue's collectSameQueueCandidates.
  std::vector<Element> CollectSameQueueCandidates() const {
    std::vector<Element> result;
    if (cq_.spec.preemption.within_cluster_queue == kPolicyNever) {
      return result;
    }
    AppendCandidatesFromCq(cq_, nullptr, false, &result);
    return result;
  }

  // Kueue's collectCandidatesForHierarchicalReclaim, as the ClusterQueues
  // whose holders it collects.
  std::vector<Source> SourcesForHierarchicalReclaim() const {
    std::vector<Source> sources;
    WalkSources(/*only_with_advantage=*/false, [&](const Source& source) {
      sources.push_back(source);
      return true;
    });
    return sources;
  }

  // Kueue's walk for collectCandidatesForHierarchicalReclaim: the ancestors
  // from the parent to the root; at each, the part of its subtree not
  // visited yet. Once some subtree on the way has room for the request, the
  // preemptor has the hierarchical advantage over everything found from
  // there on. Calls `visit` with each Source in that order until it returns
  // false; `only_with_advantage` skips the subtrees visited without the
  // advantage. Returns false when `visit` stopped the walk.
  template <typename Visit>
  bool WalkSources(bool only_with_advantage, Visit&& visit) const {
    if (!cq_.HasParent() || InCohortCycle(cq_) ||
        cq_.spec.preemption.reclaim_within_cohort == kPolicyNever) {
      return true;
    }
    auto [advantage, remaining] =
        QuantitiesFitInQuota(cq_.node, preemptor_.requests);
    const CohortSnapshot* previous = nullptr;
    for (const CohortSnapshot* current = cq_.parent; current != nullptr;
         current = current->parent) {
      if ((advantage || !only_with_advantage) &&
          !WalkSubtree(*current, current, previous, advantage, visit)) {
        return false;
      }
      auto [fits, still_remaining] =
          QuantitiesFitInQuota(current->node, remaining);
      remaining = std::move(still_remaining);
      advantage = advantage || fits;
      previous = current;
    }
    return true;
  }

  // Kueue's collectCandidatesInSubtree: skips `skip` (already visited) and
  // subtrees within their quota on the contested flavor-resources.
  template <typename Visit>
  bool WalkSubtree(const CohortSnapshot& current,
                   const CohortSnapshot* subtree_root,
                   const CohortSnapshot* skip, bool hierarchical_advantage,
                   Visit& visit) const {
    for (const CohortSnapshot* child : current.child_cohorts) {
      if (child == skip) continue;
      if (WithinNominalBeforeRemovals(child->node)) continue;
      if (!WalkSubtree(*child, subtree_root, skip, hierarchical_advantage,
                       visit)) {
        return false;
      }
    }
    for (const ClusterQueueSnapshot* child : current.child_cluster_queues) {
      if (child == &cq_) continue;
      if (WithinNominalBeforeRemovals(child->node)) continue;
      if (!visit(Source{.cq = child,
                        .lca = subtree_root,
                        .hierarchical_advantage = hierarchical_advantage})) {
        return false;
      }
    }
    return true;
  }

  // Whether a run of Run() could find targets, from a bound that reads
  // little beyond the preemptor's own ClusterQueue. Removing usage only
  // ever frees room (Kueue's available() grows as usage falls), so a run
  // finds nothing when the preemptor would not fit even with every
  // candidate it may remove gone:
  // - the run that may not borrow needs the preemptor's ClusterQueue within
  //   nominal quota afterwards, and only candidates of that ClusterQueue
  //   lower its usage;
  // - the run that may borrow removes, outside that ClusterQueue, only
  //   candidates reclaimed hierarchically or while borrowing; when neither
  //   is possible, only candidates of the preemptor's ClusterQueue.
  // In a busy cohort most searches end here: everything they could take
  // from other ClusterQueues may only be reclaimed without borrowing, and
  // their own ClusterQueue borrows whatever they take from it. Without the
  // bound, each would read and order every candidate of the cohort first.
  bool MightFindTargets() {
    // The usage of every candidate in the preemptor's ClusterQueue, on the
    // requested flavor-resources (all PreemptorFits reads).
    FlavorResourceQuantities own;
    if (cq_.spec.preemption.within_cluster_queue != kPolicyNever) {
      ForEachUser(cq_, [&](const Workload* workload) {
        if (!SatisfiesPreemptionPolicy(
                *preemptor_.workload, preemptor_priority_, *workload,
                EffectivePriority(*workload, features_),
                cq_.spec.preemption.within_cluster_queue)) {
          return;
        }
        const FlavorResourceQuantities usage = cache::UsageOf(*workload);
        for (const auto& [fr, value] : preemptor_.requests) {
          auto it = usage.find(fr);
          if (it != usage.end()) own[fr] = SaturatingAdd(own[fr], it->second);
        }
      });
    }
    if (!own.empty()) cq_.RemoveUsage(own);
    bool within_nominal = true;
    for (const auto& [fr, value] : preemptor_.requests) {
      if (cq_.BorrowingWith(fr, value)) within_nominal = false;
    }
    const bool fits_with_own_removed =
        within_nominal || PreemptorFits(/*allow_borrowing=*/true);
    if (!own.empty()) cq_.AddUsage(own);
    if (fits_with_own_removed) return true;
    // Whether the run that may borrow can take from other ClusterQueues:
    // some ClusterQueue reached with the hierarchical advantage, or, when
    // the preemptor may borrow while reclaiming, any ClusterQueue reached.
    // Walked only now, as the tree is again as the search found it.
    const bool borrowing_allowed = !IsBorrowingWithinCohortForbidden(cq_.spec);
    const bool walk_ended = WalkSources(
        /*only_with_advantage=*/!borrowing_allowed,
        [](const Source&) { return false; });
    return !walk_ended;
  }

  // IsWithinNominalInResources while the tree is as the search found it
  // (collecting candidates): the memo's answer when there is one.
  bool WithinNominalBeforeRemovals(const cache::ResourceNode& node) const {
    if (memo_ != nullptr) return memo_->IsWithinNominal(node);
    return IsWithinNominalInResources(node, preemptor_.frs_need_preemption);
  }

  // Kueue's candidateIsValid: earlier removals may have brought the
  // candidate's ClusterQueue, or a cohort between it and the common
  // ancestor, back within nominal quota, and then it has nothing to give.
  bool IsValid(const Element& element, bool borrow) const {
    if (element.holder == &cq_) return true;
    if (borrow && element.variant == Variant::kReclaimWithoutBorrowing) {
      return false;
    }
    const ClusterQueueSnapshot* cq = element.holder;
    if (IsWithinNominalInResources(cq->node, preemptor_.frs_need_preemption)) {
      return false;
    }
    for (const CohortSnapshot* node = cq->parent;
         node != nullptr && node != element.lca; node = node->parent) {
      if (IsWithinNominalInResources(node->node,
                                     preemptor_.frs_need_preemption)) {
        return false;
      }
    }
    return true;
  }

  // Kueue's queueUnderNominalInResourcesNeedingPreemption: usage strictly
  // below nominal on every contested flavor-resource.
  bool QueueUnderNominalInResourcesNeedingPreemption() const {
    for (const FlavorResource& fr : preemptor_.frs_need_preemption) {
      auto quota = cq_.node.quotas.find(fr);
      const int64_t nominal =
          quota == cq_.node.quotas.end() ? 0 : quota->second.nominal;
      if (nominal <= cq_.node.Get(cq_.node.usage, fr)) return false;
    }
    return true;
  }

  // Kueue's workloadFits (without TAS): every request fits in what the
  // ClusterQueue has available, and without borrowing unless allowed.
  bool PreemptorFits(bool allow_borrowing) const {
    for (const auto& [fr, value] : preemptor_.requests) {
      if (!allow_borrowing && cq_.BorrowingWith(fr, value)) return false;
      if (value > cq_.Available(fr)) return false;
    }
    return true;
  }

  // Kueue's fillBackWorkloads: in reverse order of removal, skipping the
  // last one removed, add each target back and keep it out of the targets
  // when the preemptor still fits.
  void FillBack(std::vector<Element*>& targets, bool allow_borrowing) {
    for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
      Add(*targets[i]);
      if (PreemptorFits(allow_borrowing)) {
        targets[i] = targets.back();
        targets.pop_back();
      } else {
        Remove(*targets[i]);
      }
    }
  }

  void Restore(const std::vector<Element*>& targets) {
    for (Element* t : targets) Add(*t);
  }

  static const FlavorResourceQuantities& UsageOf(Element& element) {
    if (!element.usage.has_value()) {
      element.usage = cache::UsageOf(*element.candidate.workload);
    }
    return *element.usage;
  }

  void Remove(Element& element) {
    element.holder->RemoveUsage(UsageOf(element));
  }

  void Add(Element& element) { element.holder->AddUsage(UsageOf(element)); }

  ClusterQueueSnapshot& cq_;
  const Preemptor& preemptor_;
  const HoldingQuota& holders_;
  const absl::Time now_;
  const Features features_;
  // EffectivePriority of the preemptor, read once.
  const int64_t preemptor_priority_;
  // CandidatesOrdering itself, for admission fair sharing only (see Before).
  const std::optional<CandidatesOrdering> ordering_;
  const ClassicalOptions options_;
  // For the preemptor's contested flavor-resources; null without a memo.
  WithinNominalMemo::Table* const memo_;
  // The candidate sequence, in the order it is tried, as far as the search
  // has gone (OrderNextCandidate); reserved whole, so its elements stay put.
  std::vector<Element> candidates_;
  // Kueue's three lists: hierarchy, priority, same queue.
  std::array<OrderedList, 3> lists_;
  // Where OrderNextCandidate is: phase 0 takes the evicted candidates,
  // phase 1 the rest, each from lists_[list_] on.
  int phase_ = 0;
  size_t list_ = 0;
  bool no_candidate_from_other_queues_ = true;
  bool no_candidate_for_hierarchical_reclaim_ = true;
};

}  // namespace

std::pair<bool, FlavorResourceQuantities> QuantitiesFitInQuota(
    const cache::ResourceNode& node, const FlavorResourceQuantities& requests) {
  bool fits = true;
  FlavorResourceQuantities remaining;
  for (const auto& [fr, value] : requests) {
    if (node.Get(node.subtree_quota, fr) <
        SaturatingAdd(node.Get(node.usage, fr), value)) {
      fits = false;
    }
    remaining[fr] =
        std::max<int64_t>(0, SaturatingSub(value, node.LocalAvailable(fr)));
  }
  return {fits, std::move(remaining)};
}

bool WorkloadUsesResources(const Workload& workload,
                           const std::set<FlavorResource>& frs) {
  if (!workload.admission.has_value()) return false;
  // Run for every holder a search looks at: compared in place, as `frs`
  // holds a few entries (a head's Preempt-mode flavor-resources), instead of
  // building a key to look up.
  for (const PodSetAssignment& ps : workload.admission->pod_set_assignments) {
    for (const auto& [resource, flavor] : ps.flavors) {
      for (const FlavorResource& fr : frs) {
        if (fr.resource == resource && fr.flavor == flavor) return true;
      }
    }
  }
  return false;
}

bool IsWithinNominalInResources(const cache::ResourceNode& node,
                                const std::set<FlavorResource>& frs) {
  for (const FlavorResource& fr : frs) {
    if (node.Get(node.subtree_quota, fr) < node.Get(node.usage, fr)) {
      return false;
    }
  }
  return true;
}

bool IsBorrowingWithinCohortForbidden(const ClusterQueue& cluster_queue) {
  return cluster_queue.preemption.borrow_within_cohort_policy.empty() ||
         cluster_queue.preemption.borrow_within_cohort_policy == kPolicyNever;
}

bool WithinNominalMemo::Table::IsWithinNominal(
    const cache::ResourceNode& node) {
  auto [it, inserted] = within_.try_emplace(&node, false);
  if (inserted) it->second = IsWithinNominalInResources(node, frs_);
  return it->second;
}

absl::Span<const Workload* const> WithinNominalMemo::Table::Users(
    const ClusterQueueSnapshot& cq, const HoldingQuota& holders) {
  auto [it, inserted] = users_.try_emplace(&cq);
  CqUsers& users = it->second;
  const uint64_t holders_version = holders.VersionOf(cq.name());
  if (inserted || users.cluster_queue != cq.name() ||
      users.holders_version != holders_version) {
    users.cluster_queue = cq.name();
    users.holders_version = holders_version;
    users.workloads.clear();
    for (const Workload* workload : holders.InClusterQueue(cq.name())) {
      if (WorkloadUsesResources(*workload, frs_)) {
        users.workloads.push_back(workload);
      }
    }
  }
  return users.workloads;
}

WithinNominalMemo::Table& WithinNominalMemo::For(
    const std::set<FlavorResource>& frs) {
  for (const std::unique_ptr<Table>& table : tables_) {
    if (table->frs_ == frs) return *table;
  }
  tables_.push_back(std::unique_ptr<Table>(new Table(frs)));
  return *tables_.back();
}

std::vector<Target> ClassicalTargets(cache::Cache& cache,
                                     const Preemptor& preemptor,
                                     const HoldingQuota& holders,
                                     absl::Time now, const Features& features,
                                     WithinNominalMemo* memo,
                                     const ClassicalOptions& options) {
  ClusterQueueSnapshot* cq = cache.FindClusterQueue(preemptor.cluster_queue);
  if (cq == nullptr || preemptor.workload == nullptr) return {};
  ClassicalSearch search(*cq, preemptor, holders, now, features, memo, options);
  return search.Run();
}

std::vector<Target> ClassicalTargets(
    cache::Cache& cache, const Preemptor& preemptor,
    absl::Span<const Workload* const> holding_quota, absl::Time now,
    const Features& features, WithinNominalMemo* memo,
    const ClassicalOptions& options) {
  return ClassicalTargets(cache, preemptor, HoldingQuota(holding_quota), now,
                          features, memo, options);
}

}  // namespace kq::preemption
