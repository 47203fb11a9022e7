#pragma once

// Fair sharing's numbers: the dominant resource share (DRS) of a
// ClusterQueue or a Cohort, as Kueue computes it in
// pkg/cache/scheduler/fair_sharing.go. The DRS of a node is how much it
// borrows from its parent, relative to what the tree above could lend it:
// for each resource, the amount above the node's subtree quota (summed over
// flavors) in per-mille of the lendable capacity of the parent's tree; the
// largest of these ratios, divided by the node's fair-sharing weight.
//
// Example:
//   const ClusterQueueSnapshot& cq = *cache.FindClusterQueue("team-a");
//   DRS share = DominantResourceShare(cq);
//   status.weighted_share = share.WeightedShare();  // 0 when not borrowing
//   if (CompareDRS(share, DominantResourceShare(other)) > 0) { ... }

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/cache/cache.h"
#include "server/core/quantity.h"

namespace kq::cache {

// The dominant resource share of one node (Kueue's DRS), with what is
// needed to compare two shares exactly. Thread-compatible value type.
struct DRS {
  // The node's fair-sharing weight; 0 makes any borrowing infinitely
  // expensive.
  double fair_weight = 1.0;
  // Borrowed amount over lendable capacity, per mille, for the dominant
  // resource; not divided by the weight. 0 when nothing is borrowed (or
  // nothing borrowed has lendable capacity); -1 in NegativeDRS().
  double unweighted_ratio = 0;
  // The resource that yields unweighted_ratio; on a tie the alphabetically
  // smaller name. Empty when the ratio is 0.
  std::string dominant_resource;
  // Whether usage (with the request) exceeds the subtree quota on some
  // flavor-resource, even one with no lendable capacity.
  bool borrowing = false;
  // The flavor-resources on which the node borrows, in flavor-resource
  // order.
  std::vector<FlavorResource> borrowed_flavor_resources;

  // A share below every real share, to start a search for the maximum
  // (Kueue's NegativeDRS).
  static DRS Negative();

  // Whether the unweighted ratio is 0, i.e. the node borrows nothing that
  // the tree could lend.
  bool IsZero() const { return unweighted_ratio == 0; }
  // Whether usage exceeds the subtree quota for some flavor-resource.
  bool IsBorrowing() const { return borrowing; }
  // Whether the node borrows on a flavor-resource that `requested` asks a
  // positive amount of.
  bool IsBorrowingOn(const FlavorResourceQuantities& requested) const;

  // The share divided by the weight: 0 when IsZero(), +infinity for a
  // weight of 0.
  double PreciseWeightedShare() const;
  // PreciseWeightedShare() printed as Go's FormatFloat(x, 'f', -1, 64):
  // the shortest decimal that reads back exactly, "+Inf" for infinity.
  std::string PreciseWeightedShareSerialized() const;
  // The integer share that status and metrics report (Kueue's
  // roundedWeightedShare): the weighted share rounded up, INT64_MAX for a
  // node of weight 0 that borrows. Shares beyond int64 saturate at
  // INT64_MAX.
  int64_t WeightedShare() const;

  // Whether the node has weight 0 and a non-zero share.
  bool ZeroWeightBorrows() const { return fair_weight == 0 && !IsZero(); }
};

// Kueue's CompareDRS: negative when `a` is the smaller share (preferred
// for admission), positive when it is the larger (preferred as a source of
// preemption victims), 0 when equal. A node of weight 0 that borrows is
// larger than any other; two such nodes compare by unweighted ratio;
// otherwise the weighted shares compare.
int CompareDRS(const DRS& a, const DRS& b);

// The fair-sharing weight as Kueue reads spec.fairSharing.weight: 1 when
// absent, the quantity's value otherwise.
double FairWeight(const std::optional<Quantity>& weight);

// The dominant resource share of `cq`, counting `request` as extra usage
// (the workload being considered). 0 for a queue without a cohort. Only
// flavor-resources the queue has quota for count.
DRS DominantResourceShare(const ClusterQueueSnapshot& cq,
                          const FlavorResourceQuantities& request = {});

// The dominant resource share of `cohort` within its parent, counting
// `request` as extra usage stored in it. 0 for a root cohort.
DRS DominantResourceShare(const CohortSnapshot& cohort,
                          const FlavorResourceQuantities& request = {});

}  // namespace kq::cache
