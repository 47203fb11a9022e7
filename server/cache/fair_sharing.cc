#include "server/cache/fair_sharing.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <system_error>

namespace kq::cache {
namespace {

constexpr double kDefaultWeight = 1.0;

// Go's cmp.Compare on floats: NaN sorts before every number and equals
// itself. Shares are never NaN in practice; keeping Go's rule makes the
// comparison a total order anyway.
int CompareFloat(double a, double b) {
  const bool a_nan = std::isnan(a);
  const bool b_nan = std::isnan(b);
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return 0;
    return a_nan ? -1 : 1;
  }
  if (a < b) return -1;
  if (a > b) return 1;
  return 0;
}

// The parent whose tree the node borrows from. A parent in a cohort cycle
// counts as none, as in the rest of the cache: Kueue leaves cyclic cohorts
// out of its snapshot, so such a node is a root there.
template <typename Node>
const CohortSnapshot* BorrowParent(const Node& n) {
  return n.parent != nullptr && !n.parent->has_cycle ? n.parent : nullptr;
}

// Kueue's dominantResourceShare for either kind of node.
template <typename Node>
DRS ShareOf(const Node& n, double weight,
            const FlavorResourceQuantities& request) {
  DRS drs;
  drs.fair_weight = weight;
  const CohortSnapshot* parent = BorrowParent(n);
  if (parent == nullptr) return drs;

  // 1. What the node borrows, per resource name, over every flavor it has
  //    subtree quota for. A request for a flavor-resource outside the
  //    subtree quota is ignored, as in Kueue.
  const ResourceNode& r = n.node;
  std::map<std::string, int64_t> borrowed;
  for (const auto& [fr, quota] : r.subtree_quota) {
    int64_t amount = SaturatingSub(
        SaturatingAdd(r.Get(request, fr), r.Get(r.usage, fr)), quota);
    if (amount > 0) {
      borrowed[fr.resource] = SaturatingAdd(borrowed[fr.resource], amount);
      drs.borrowed_flavor_resources.push_back(fr);
    }
  }
  if (borrowed.empty()) return drs;
  drs.borrowing = true;

  // 2. Each borrowed resource against what the parent's tree could lend;
  //    the largest ratio dominates. Resources are visited in name order,
  //    so keeping the first of equal ratios picks the smaller name, as
  //    Kueue's explicit tie-break does.
  std::map<std::string, int64_t> lendable = Lendable(*parent);
  for (const auto& [resource, amount] : borrowed) {
    auto it = lendable.find(resource);
    if (it == lendable.end() || it->second <= 0) continue;
    double ratio =
        static_cast<double>(amount) * 1000.0 / static_cast<double>(it->second);
    if (ratio > drs.unweighted_ratio) {
      drs.unweighted_ratio = ratio;
      drs.dominant_resource = resource;
    }
  }
  return drs;
}

}  // namespace

DRS DRS::Negative() {
  DRS drs;
  drs.unweighted_ratio = -1;
  drs.fair_weight = kDefaultWeight;
  return drs;
}

bool DRS::IsBorrowingOn(const FlavorResourceQuantities& requested) const {
  for (const FlavorResource& fr : borrowed_flavor_resources) {
    auto it = requested.find(fr);
    if (it != requested.end() && it->second > 0) return true;
  }
  return false;
}

double DRS::PreciseWeightedShare() const {
  if (IsZero()) return 0.0;
  if (fair_weight == 0) return std::numeric_limits<double>::infinity();
  return unweighted_ratio / fair_weight;
}

std::string DRS::PreciseWeightedShareSerialized() const {
  double share = PreciseWeightedShare();
  if (std::isnan(share)) return "NaN";
  if (std::isinf(share)) return share > 0 ? "+Inf" : "-Inf";
  // Fixed notation of a double needs at most ~330 characters (DBL_MAX
  // has 309 integer digits; the shortest round-trip fraction is short).
  char buf[400];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), share, std::chars_format::fixed);
  if (ec != std::errc()) return "NaN";  // unreachable with this buffer
  return std::string(buf, end);
}

int64_t DRS::WeightedShare() const {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (ZeroWeightBorrows()) return kMax;
  double share = std::ceil(PreciseWeightedShare());
  // Go's int64() of an out-of-range float is unspecified; saturating keeps
  // a huge share the largest one.
  if (!(share < 9223372036854775808.0)) return kMax;
  if (share < -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(share);
}

int CompareDRS(const DRS& a, const DRS& b) {
  const bool a_inf = a.ZeroWeightBorrows();
  const bool b_inf = b.ZeroWeightBorrows();
  if (a_inf && b_inf)
    return CompareFloat(a.unweighted_ratio, b.unweighted_ratio);
  if (a_inf) return 1;
  if (b_inf) return -1;
  return CompareFloat(a.PreciseWeightedShare(), b.PreciseWeightedShare());
}

double FairWeight(const std::optional<Quantity>& weight) {
  if (!weight) return kDefaultWeight;
  // Dividing the exact milli-count by 1000 rounds once, to the double
  // nearest the decimal weight, as Kueue's AsFloat64Slow does.
  return static_cast<double>(weight->milli()) / 1000.0;
}

DRS DominantResourceShare(const ClusterQueueSnapshot& cq,
                          const FlavorResourceQuantities& request) {
  return ShareOf(cq, FairWeight(cq.spec.fair_sharing_weight), request);
}

DRS DominantResourceShare(const CohortSnapshot& cohort,
                          const FlavorResourceQuantities& request) {
  return ShareOf(cohort, FairWeight(cohort.fair_sharing_weight), request);
}

}  // namespace kq::cache
