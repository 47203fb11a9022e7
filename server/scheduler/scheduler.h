#pragma once

// One Kueue scheduling cycle ("pass"): at most one head per ClusterQueue,
// nominated, ordered and admitted against the live quota cache. Pure: no
// I/O, no threads, no clock (time is a parameter); reasons are data.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "server/cache/cache.h"
#include "server/core/objects.h"
#include "server/scheduler/flavor_assigner.h"

namespace kq::scheduler {

// A workload popped from its ClusterQueue for this pass.
struct Head {
  const Workload* workload = nullptr;
  std::string cluster_queue;
  // The flavor-scan bookmark the caller kept for this workload (the
  // `last_assignment` of its previous EntryResult), or null. Ignored when
  // LastAssignmentOutdated() says so. Must outlive the call.
  const LastAssignment* last_assignment = nullptr;
};

// What the pass decided for one head.
struct EntryResult {
  enum class Status {
    kAdmitted,      // quota reserved; usage added to the cache
    kNoFit,         // no flavor fits now
    kSkipped,       // fitted when nominated, not after earlier admissions
    kInadmissible,  // not evaluated: queue inactive, namespace mismatch, ...
    kPreempting,    // preemption targets found; waits for them to go
  };
  const Workload* workload = nullptr;
  std::string cluster_queue;
  Status status = Status::kNoFit;
  // Set when admitted.
  Admission admission;
  // QuotaReserved=False reason and message when not admitted (Kueue's
  // entry.quotaReservedReason and inadmissibleMsg, KEP-10852's tiers). For
  // kNoFit the reason is the assignment's NoFitReason, which Kueue can leave
  // empty (e.g. a pod set whose other resources got flavors fails on a
  // resource the ClusterQueue does not cover); the message always says why.
  std::string reason;
  std::string message;
  // Not admitted because of the ClusterQueue's namespaceSelector (Kueue's
  // RequeueReasonNamespaceMismatch).
  bool namespace_mismatch = false;
  // The assignment needed preemption and there was nothing to preempt
  // (Kueue's RequeueReasonPreemptionNoCandidates; status is kNoFit).
  bool no_preemption_candidates = false;
  // With kPreempting: the workloads to evict (Kueue's IssuePreemptions
  // targets), in the order the search chose them. The caller evicts them;
  // the head is requeued with Kueue's RequeueReasonPendingPreemption.
  std::vector<PreemptionTarget> victims;
  // The flavor assignment's mode, for heads that were nominated.
  AssignmentMode mode = AssignmentMode::kNoFit;
  // Its borrowing level (0: within the ClusterQueue's nominal quota).
  int borrowing = 0;
  // The flavor-scan bookmark to keep for this workload and pass back in its
  // next Head; nullopt means drop it. Heads that were not nominated return
  // the bookmark they came with. A bookmark whose scans all reached their
  // group's last flavor carries no indices: it resumes nothing, like none.
  std::optional<LastAssignment> last_assignment;
};

struct CycleResult {
  // One per head, in processing order.
  std::vector<EntryResult> entries;
};

// Flavor assignments (with no preemption targets) of earlier passes, each
// valid while the cohort tree it was computed over is unchanged
// (ClusterQueueSnapshot::tree_generation()): a head that asks for the same
// thing (same ClusterQueue, pod sets, priority, and queue-order time where
// the preemption policies compare it) as an earlier one gets the same
// nomination without running the flavor assigner and the preemption search
// again, as long as nothing was admitted, preempted or released in its
// tree since, whatever happened in other trees. This is what keeps a cycle
// over deep queues of heads that do not fit (thousands pending behind full
// quota) cheap: Kueue re-evaluates each of them from scratch. What the
// nomination reads besides the tree (objects, namespaces) changes only with
// a Cache rebuild, which gives every tree a new generation.
// Thread-compatible.
class NominationMemo {
 public:
  // A memoised nomination with what the pass reads of it for every head.
  struct Nomination {
    // Computes mode and pending_flavors from `assignment`.
    static Nomination Of(std::shared_ptr<const Assignment> assignment);

    std::shared_ptr<const Assignment> assignment;
    // assignment->RepresentativeMode().
    AssignmentMode mode = AssignmentMode::kNoFit;
    // assignment->last_state.PendingFlavors().
    bool pending_flavors = false;
  };

  // The nomination memoised for `key` over a tree at `tree_generation`, or
  // null. The pointer is valid until the next Insert.
  const Nomination* Find(absl::string_view key, uint64_t tree_generation) {
    auto it = nominations_.find(key);
    if (it == nominations_.end() || it->second.first != tree_generation) {
      return nullptr;
    }
    ++hits_;
    return &it->second.second;
  }
  void Insert(absl::string_view key, uint64_t tree_generation,
              const Nomination& nomination);
  // Declares a tree at `to` identical to the one at `from`: what was
  // computed over one is valid for the other (a test's twin Cache).
  void Rebase(uint64_t from, uint64_t to) {
    for (auto& [key, entry] : nominations_) {
      if (entry.first == from) entry.first = to;
    }
  }
  void Clear() { nominations_.clear(); }
  size_t size() const { return nominations_.size(); }
  int64_t hits() const { return hits_; }
  // A buffer for building keys without allocating per head.
  std::string& key_buffer() { return key_buffer_; }

 private:
  static constexpr size_t kMaxEntries = 1 << 16;
  absl::flat_hash_map<std::string, std::pair<uint64_t, Nomination>>
      nominations_;
  std::string key_buffer_;
  int64_t hits_ = 0;
};

// What the pass reads besides the cache. All references must outlive the
// call.
struct SchedulingContext {
  const std::map<std::string, ResourceFlavor>* flavors = nullptr;
  // Namespace labels by namespace name. A namespace kq has no object for
  // has just Kubernetes' automatic label kubernetes.io/metadata.name.
  const std::map<std::string, Namespace>* namespaces = nullptr;
  // Simulates preemption for the flavor assigner. Null: no preemption is
  // possible (NoPreemptionOracle).
  const PreemptionOracle* oracle = nullptr;
  // Kueue's schedulingCycle, recorded in the bookmarks and compared by
  // LastAssignmentOutdated(). The caller increments it once per pass.
  int64_t scheduling_cycle = 0;
  // Kueue's AllocatableResourceGeneration by ClusterQueue name (0 when
  // absent or null): the caller bumps a ClusterQueue's generation whenever
  // quota is freed in it (a workload holding quota finishes, is evicted or
  // deleted) or its cohort tree's quotas change, so that old bookmarks are
  // dropped.
  const std::map<std::string, int64_t>* cluster_queue_generations = nullptr;
  // Kueue's fair sharing (a Configuration with fairSharing): entries are
  // ordered by the fair-sharing tournament (FairSharingIterator) instead of
  // the classical iterator, and flavor assignment may preempt while
  // borrowing when reclaimWithinCohort is not Never. Fair-sharing
  // preemption itself is the oracle's.
  bool fair_sharing = false;
  // How pod requests become quota requests (Kueue's Configuration
  // resources); null: as written, undeclared resources block.
  const ResourceConfig* resources = nullptr;
  // Nominations computed over the quota tree as it is now, by equivalence
  // key; see NominationMemo. Null: every head is assigned from scratch.
  NominationMemo* nomination_memo = nullptr;
};

// Runs one pass over `heads`: nominates each (checks the queue is active
// and admits the namespace, assigns flavors, tries partial admission when
// the full workload does not fit), orders the entries as Kueue's classical
// iterator (borrowing level, then priority, then queue-order time) or, with
// context.fair_sharing, by Kueue's fair-sharing tournament (each next entry
// chosen over the cache as the entries before it left it), then processes
// them in order: NoFit is reported; Preempt without preemption
// targets is reported as WaitingForQuota and, unless the ClusterQueue's
// reclaimWithinCohort is Any, holds the capacity it would take for the
// rest of the pass; Preempt with targets that overlap those of an earlier
// entry of the pass is skipped; an entry (Preempt or Fit) that does not fit
// once every target chosen so far in the pass is removed is skipped; a
// Preempt that fits returns its targets (kPreempting, QuotaReserved=False
// WaitingForPreemptedWorkloads) and holds its usage for the rest of the
// pass; a Fit that fits is admitted, adding its usage to `cache` so later
// entries see it. Capacity held for the pass is released from `cache`
// before returning; nothing is evicted here.
// Thread-compatible.
CycleResult Schedule(cache::Cache& cache, const std::vector<Head>& heads,
                     const SchedulingContext& context, absl::Time now);

// The order in which a pass processes its nominated entries (Kueue's
// classical iterator, makeClassicalIterator, with
// PrioritySortingWithinCohort on): whether the entry of `a`, whose flavor
// assignment borrows at level `a_borrowing` (0: within nominal quota), comes
// before the entry of `b`. Lower borrowing level first, then higher
// priority, then earlier QueueOrderTimestamp(). Where Kueue leaves the order
// unspecified (its sort is not stable), UID, namespace and name make it
// total.
bool EntryOrderLess(const Workload& a, int a_borrowing, const Workload& b,
                    int b_borrowing);
// The same with each workload's QueueOrderTimestamp() given, for a sort
// that reads it once per entry.
bool EntryOrderLess(const Workload& a, int a_borrowing, absl::Time a_time,
                    const Workload& b, int b_borrowing, absl::Time b_time);

// Labels of a namespace as Kubernetes sets them, including
// kubernetes.io/metadata.name.
Labels NamespaceLabels(const std::map<std::string, Namespace>& namespaces,
                       const std::string& name);

}  // namespace kq::scheduler
