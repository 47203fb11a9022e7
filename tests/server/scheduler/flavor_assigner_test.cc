// Kueue's flavor assigner tables, ported from
// pkg/scheduler/flavorassigner/flavorassigner_test.go (TestAssignFlavors,
// TestDeletedFlavors, TestHierarchical, TestIsPreferred,
// TestFlavorScanRecordsLastTriedFlavorIdx) and podset_reducer_test.go
// (TestSearch). Case names are Kueue's, verbatim in the table and converted
// to snake_case for gtest (apostrophes dropped, other punctuation and spaces
// become "_"). As in Kueue, the preemption oracle of these tables is a fake
// that answers per flavor-resource and otherwise says Preempt with
// borrowing level 0; the cases run with Kueue's default gates
// (FlavorFungibility, UnadmittedWorkloadsObservability and ReclaimablePods
// on) unless a case turns one off, as Kueue's featureGates do.
//
// Each TestAssignFlavors case asserts what Kueue's asserts: the
// representative mode; per pod set its flavors (name, mode, tried-flavor
// index), requests, count and status reasons (compared sorted); the
// borrowing level, the usage and the NoFit reason; and the flavor attempts
// with Kueue's flexible rule (when a pod set got a Fit attempt only the
// attempts that were made are compared, otherwise every wanted attempt must
// be there and equal).
//
// Not ported, with the reason:
//   TestAssignFlavors:
//   - "multiple flavors, leader worker set, leader and workers request the
//     same resources fits",
//   - "multiple flavors, leader worker set, workers request GPU, leader does
//     not request GPU, fits",
//   - "multiple flavors, leader worker set, workers request GPU, leader does
//     not request GPU, does not fit, without group it would fit":
//     pod set groups come from topologyRequest.podSetGroupName (TAS), which
//     kq's PodSet does not have.
//   - "workload slice preemption fits in the original workload resource
//     flavor",
//   - "workload slice preemption does not fit in the original workload
//     resource flavor": elastic workload slices.
//   - "multiple TAS flavors assigned to different resources in the same
//     PodSet leads to NoFit": TAS.
//   TestFlavorScanRecordsLastTriedFlavorIdx:
//   - "quota fits but the pod is larger than any node: bookmark still names
//     the first flavor",
//   - "quota fits but the topology is fragmented: bookmark still names the
//     first flavor": their mode comes from TAS placement. The `wantPlan`
//     (TopologyAssignment) assertion of the other cases is TAS too.

#include "server/scheduler/flavor_assigner.h"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "server/scheduler/podset_reducer.h"
#include "tests/testing/builders.h"

namespace kq::scheduler {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::Qty;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;

constexpr AssignmentMode kNoFit = AssignmentMode::kNoFit;
constexpr AssignmentMode kPreempt = AssignmentMode::kPreempt;
constexpr AssignmentMode kFit = AssignmentMode::kFit;
constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;
constexpr char kGpu[] = "example.com/gpu";

// A Kueue case name as a gtest name.
std::string TestName(const std::string& kueue_name) {
  std::string out;
  bool separator = false;
  for (char c : kueue_name) {
    if (c == '\'') continue;
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (separator && !out.empty()) out += '_';
      separator = false;
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      separator = true;
    }
  }
  return out;
}

cache::FlavorResource FR(std::string flavor, std::string resource) {
  return {std::move(flavor), std::move(resource)};
}

std::string Describe(const FlavorAssignmentAttempt& a) {
  std::ostringstream os;
  os << "{" << a.flavor << " " << a.mode << " borrow=" << a.borrow
     << " possibility="
     << (a.preemption_possibility
             ? PreemptionPossibilityName(*a.preemption_possibility)
             : "nil")
     << " reasons=[";
  for (const std::string& r : a.reasons) os << "\"" << r << "\" ";
  os << "] noFitReason=" << a.no_fit_reason << "}";
  return os.str();
}

FlavorAssignmentAttempt FitAttempt(std::string flavor, int borrow = 0) {
  return {.flavor = std::move(flavor), .mode = kFit, .borrow = borrow};
}

FlavorAssignmentAttempt NoFitAttempt(std::string flavor,
                                     std::vector<std::string> reasons,
                                     std::string no_fit_reason,
                                     int borrow = 0) {
  return {.flavor = std::move(flavor),
          .mode = kNoFit,
          .borrow = borrow,
          .reasons = std::move(reasons),
          .no_fit_reason = std::move(no_fit_reason)};
}

FlavorAssignmentAttempt PreemptAttempt(std::string flavor,
                                       PreemptionPossibility possibility,
                                       int borrow, std::string reason) {
  return {.flavor = std::move(flavor),
          .mode = kPreempt,
          .borrow = borrow,
          .preemption_possibility = possibility,
          .reasons = {std::move(reason)}};
}

// Kueue's testOracle: a fixed answer per flavor-resource, Preempt with
// borrowing level 0 for the others.
class TestOracle : public PreemptionOracle {
 public:
  explicit TestOracle(
      std::map<cache::FlavorResource, PreemptionSimulation> results = {})
      : results_(std::move(results)) {}

  PreemptionSimulation SimulatePreemption(const cache::ClusterQueueSnapshot& cq,
                                          const Workload& workload,
                                          const cache::FlavorResource& fr,
                                          int64_t quantity) const override {
    auto it = results_.find(fr);
    if (it != results_.end()) return it->second;
    return {PreemptionPossibility::kPreempt, 0};
  }
  // The flavor assigner never asks for targets.
  std::vector<PreemptionTarget> GetTargets(
      const cache::ClusterQueueSnapshot& cq, const Workload& workload,
      const Assignment& assignment) const override {
    return {};
  }

 private:
  std::map<cache::FlavorResource, PreemptionSimulation> results_;
};

// The flavor of one resource as Kueue's cases want it (the borrowing level
// per resource is unexported in Kueue and not compared).
struct WantFlavor {
  std::string name;
  AssignmentMode mode = kNoFit;
  int tried_flavor_idx = 0;
  friend bool operator==(const WantFlavor&, const WantFlavor&) = default;
  friend std::ostream& operator<<(std::ostream& os, const WantFlavor& f) {
    return os << "{" << f.name << " " << f.mode << " " << f.tried_flavor_idx
              << "}";
  }
};

struct WantPodSet {
  std::string name;
  std::map<std::string, WantFlavor> flavors;
  std::map<std::string, std::string> requests;  // quantity literals
  std::vector<std::string> reasons;             // the status, any order
  int32_t count = 1;
  std::vector<FlavorAssignmentAttempt> attempts;
};

// Kueue's flexAssertConsidered for one pod set.
void ExpectAttempts(const std::string& pod_set,
                    const std::vector<FlavorAssignmentAttempt>& want,
                    const std::vector<FlavorAssignmentAttempt>& got) {
  if (want.empty()) return;
  std::map<std::string, FlavorAssignmentAttempt> want_by_flavor, got_by_flavor;
  for (const auto& a : want) want_by_flavor[a.flavor] = a;
  bool has_fit = false;
  for (const auto& a : got) {
    got_by_flavor[a.flavor] = a;
    has_fit = has_fit || a.mode == kFit;
  }
  if (has_fit) {
    for (const auto& [flavor, g] : got_by_flavor) {
      auto w = want_by_flavor.find(flavor);
      if (w == want_by_flavor.end()) {
        ADD_FAILURE() << "pod set " << pod_set << ": unexpected attempt "
                      << Describe(g);
        continue;
      }
      // A wanted "does not provide resource" entry is not compared with a
      // Fit.
      bool does_not_provide_only =
          w->second.mode == kNoFit && !w->second.reasons.empty();
      for (const std::string& r : w->second.reasons) {
        does_not_provide_only =
            does_not_provide_only &&
            r.find("does not provide resource") != std::string::npos;
      }
      if (g.mode == kFit && does_not_provide_only) continue;
      EXPECT_EQ(Describe(g), Describe(w->second)) << "pod set " << pod_set;
    }
    return;
  }
  for (const auto& [flavor, w] : want_by_flavor) {
    auto g = got_by_flavor.find(flavor);
    if (g == got_by_flavor.end()) {
      ADD_FAILURE() << "pod set " << pod_set << ": missing attempt "
                    << Describe(w);
      continue;
    }
    EXPECT_EQ(Describe(g->second), Describe(w)) << "pod set " << pod_set;
  }
}

// Compares an assignment with Kueue's wantAssignment, except attempts.
void ExpectAssignment(const Assignment& got,
                      const std::vector<WantPodSet>& want_pod_sets,
                      int want_borrowing,
                      const cache::FlavorResourceQuantities& want_usage,
                      const std::string& want_no_fit_reason) {
  ASSERT_EQ(got.pod_sets.size(), want_pod_sets.size());
  for (size_t i = 0; i < want_pod_sets.size(); ++i) {
    const WantPodSet& want = want_pod_sets[i];
    const PodSetAssignmentResult& ps = got.pod_sets[i];
    SCOPED_TRACE("pod set " + want.name);
    EXPECT_EQ(ps.name, want.name);
    std::map<std::string, WantFlavor> flavors;
    for (const auto& [resource, fa] : ps.flavors) {
      flavors[resource] = {fa.name, fa.mode, fa.tried_flavor_idx};
    }
    EXPECT_EQ(flavors, want.flavors);
    ResourceList want_requests;
    for (const auto& [resource, q] : want.requests) {
      want_requests[resource] = Qty(q);
    }
    EXPECT_EQ(ps.requests, want_requests);
    std::vector<std::string> reasons = ps.reasons;
    std::vector<std::string> want_reasons = want.reasons;
    std::sort(reasons.begin(), reasons.end());
    std::sort(want_reasons.begin(), want_reasons.end());
    EXPECT_EQ(reasons, want_reasons);
    EXPECT_EQ(ps.error, "");
    EXPECT_EQ(ps.count, want.count);
  }
  EXPECT_EQ(got.borrowing, want_borrowing);
  EXPECT_EQ(got.usage, want_usage);
  EXPECT_EQ(got.no_fit_reason, want_no_fit_reason);
}

// The resource flavors of Kueue's TestAssignFlavors.
std::map<std::string, ResourceFlavor> AssignFlavorsFlavors() {
  const Toleration spot{.key = "instance",
                        .op = "Equal",
                        .value = "spot",
                        .effect = "NoSchedule"};
  std::vector<ResourceFlavor> list = {
      ResourceFlavorBuilder("default").Build(),
      ResourceFlavorBuilder("one").NodeLabel("type", "one").Build(),
      ResourceFlavorBuilder("two").NodeLabel("type", "two").Build(),
      ResourceFlavorBuilder("b_one").NodeLabel("b_type", "one").Build(),
      ResourceFlavorBuilder("b_two").NodeLabel("b_type", "two").Build(),
      ResourceFlavorBuilder("tainted")
          .Taint("instance", "spot", "NoSchedule")
          .Build(),
      ResourceFlavorBuilder("taint_and_toleration")
          .Taint("instance", "spot", "NoSchedule")
          .Toleration(spot)
          .Build(),
      ResourceFlavorBuilder("label-x-a").NodeLabel("x", "a").Build(),
      ResourceFlavorBuilder("label-xy-b")
          .NodeLabel("x", "b")
          .NodeLabel("y", "k")
          .Build(),
  };
  std::map<std::string, ResourceFlavor> flavors;
  for (ResourceFlavor& f : list) flavors[f.meta.name] = std::move(f);
  return flavors;
}

std::set<std::string> NamesOf(
    const std::map<std::string, ResourceFlavor>& flavors) {
  std::set<std::string> names;
  for (const auto& [name, flavor] : flavors) names.insert(name);
  return names;
}

const Toleration kSpotToleration{
    .key = "instance", .op = "Equal", .value = "spot", .effect = "NoSchedule"};

// ---------------------------------------------------------------------------
// TestAssignFlavors

struct AssignFlavorsCase {
  std::string name;  // Kueue's
  Workload workload;
  ClusterQueue cluster_queue;
  cache::FlavorResourceQuantities cluster_queue_usage;
  std::optional<ClusterQueue> secondary_cluster_queue;
  cache::FlavorResourceQuantities secondary_cluster_queue_usage;
  bool enable_fair_sharing = false;
  std::map<cache::FlavorResource, PreemptionSimulation> simulation_result;
  AssignmentMode want_rep_mode = kNoFit;
  std::vector<WantPodSet> want_pod_sets;
  int want_borrowing = 0;
  cache::FlavorResourceQuantities want_usage;
  std::string want_no_fit_reason;
  // Kueue's ReclaimablePods gate.
  bool reclaimable_pods = true;
};

// Prints the case name when a case fails.
void PrintTo(const AssignFlavorsCase& c, std::ostream* os) { *os << c.name; }

class AssignFlavorsTest : public ::testing::TestWithParam<AssignFlavorsCase> {};

TEST_P(AssignFlavorsTest, Assign) {
  const AssignFlavorsCase& tc = GetParam();
  const std::map<std::string, ResourceFlavor> flavors = AssignFlavorsFlavors();
  std::map<std::string, ClusterQueue> cqs{
      {tc.cluster_queue.meta.name, tc.cluster_queue}};
  if (tc.secondary_cluster_queue) {
    cqs[tc.secondary_cluster_queue->meta.name] = *tc.secondary_cluster_queue;
  }
  cache::Cache cache;
  cache.Rebuild(cqs, {}, NamesOf(flavors), {});
  cache::ClusterQueueSnapshot* cq =
      cache.FindClusterQueue(tc.cluster_queue.meta.name);
  ASSERT_NE(cq, nullptr);
  cq->AddUsage(tc.cluster_queue_usage);
  if (tc.secondary_cluster_queue) {
    cache.FindClusterQueue(tc.secondary_cluster_queue->meta.name)
        ->AddUsage(tc.secondary_cluster_queue_usage);
  }

  TestOracle oracle(tc.simulation_result);
  FlavorAssigner assigner(
      tc.workload, *cq, flavors, oracle, nullptr,
      FlavorAssignerOptions{.enable_fair_sharing = tc.enable_fair_sharing,
                            .reclaimable_pods = tc.reclaimable_pods});
  Assignment got = assigner.Assign();

  EXPECT_EQ(got.RepresentativeMode(), tc.want_rep_mode);
  ExpectAssignment(got, tc.want_pod_sets, tc.want_borrowing, tc.want_usage,
                   tc.want_no_fit_reason);
  for (size_t i = 0; i < tc.want_pod_sets.size() && i < got.pod_sets.size();
       ++i) {
    ExpectAttempts(tc.want_pod_sets[i].name, tc.want_pod_sets[i].attempts,
                   got.pod_sets[i].attempts);
  }
}

std::vector<AssignFlavorsCase> AssignFlavorsCases() {
  const FlavorFungibility kMayStopBoth{
      .when_can_borrow = FungibilityPolicy::kMayStopSearch,
      .when_can_preempt = FungibilityPolicy::kMayStopSearch};
  const FlavorFungibility kTryNextBoth{
      .when_can_borrow = FungibilityPolicy::kTryNextFlavor,
      .when_can_preempt = FungibilityPolicy::kTryNextFlavor};
  const FlavorFungibility kBorrowTryNext{
      .when_can_borrow = FungibilityPolicy::kTryNextFlavor,
      .when_can_preempt = FungibilityPolicy::kMayStopSearch};

  // Shared by the "when borrowing while preemption is needed" cases.
  auto borrowing_preempting_cq = [&](FlavorFungibility ff,
                                     bool one_has_borrowing_limit) {
    ClusterQueueBuilder b("test-clusterqueue");
    b.ReclaimWithinCohort("LowerPriority")
        .BorrowWithinCohort("LowerPriority")
        .ResourceGroup({"cpu"})
        .Flavor("one")
        .Quota("cpu", "0");
    if (one_has_borrowing_limit) b.BorrowingLimit("12");
    b.Flavor("two").Quota("cpu", "12").Cohort("test-cohort");
    ClusterQueue cq = b.Build();
    cq.flavor_fungibility = ff;
    return cq;
  };
  auto secondary_one = [](const std::string& cpu) {
    return ClusterQueueBuilder("test-secondary-clusterqueue")
        .ResourceGroup({"cpu"})
        .Flavor("one")
        .Quota("cpu", cpu)
        .Cohort("test-cohort")
        .Build();
  };
  auto with_ff = [](ClusterQueue cq, FlavorFungibility ff) {
    cq.flavor_fungibility = ff;
    return cq;
  };
  // Five 1-CPU pods of which two are reclaimable.
  auto two_of_five_reclaimable = [] {
    Workload wl =
        WorkloadBuilder("wl").PodSet("main", 5).Request("cpu", "1").Build();
    wl.reclaimable_pods = {{"main", 2}};
    return wl;
  };
  auto pods_and_cpu_cq = [](const std::string& pods) {
    return ClusterQueueBuilder("test-clusterqueue")
        .ResourceGroup({"pods", "cpu"})
        .Flavor("default")
        .Quota("pods", pods)
        .Quota("cpu", "10")
        .Build();
  };
  auto fair_sharing_cq = [&](const std::string& reclaim) {
    return with_ff(ClusterQueueBuilder("test-clusterqueue")
                       .ReclaimWithinCohort(reclaim)
                       .ResourceGroup({"cpu"})
                       .Flavor("one")
                       .Quota("cpu", "0")
                       .Flavor("two")
                       .Quota("cpu", "12")
                       .Cohort("test-cohort")
                       .Build(),
                   kMayStopBoth);
  };
  auto pods_cpu_cq = [&](const std::string& one_cpu,
                         std::optional<std::string> one_borrowing_limit,
                         std::optional<std::string> one_lending_limit,
                         const std::string& two_cpu,
                         std::optional<std::string> two_lending_limit) {
    ClusterQueueBuilder b("test-clusterqueue");
    b.ResourceGroup({"pods", "cpu"})
        .Flavor("one")
        .Quota("pods", "10")
        .Quota("cpu", one_cpu);
    if (one_borrowing_limit) b.BorrowingLimit(*one_borrowing_limit);
    if (one_lending_limit) b.LendingLimit(*one_lending_limit);
    b.Flavor("two").Quota("pods", "10").Quota("cpu", two_cpu);
    if (two_lending_limit) b.LendingLimit(*two_lending_limit);
    return b.Build();
  };

  const std::string kOneCpuExceeds3of2 =
      "insufficient quota for cpu in flavor one, previously considered "
      "podsets requests (0) + current podset request (3) > maximum capacity "
      "(2)";
  const std::string kNeedsTenMore =
      "insufficient unused quota for cpu in flavor one, 10 more needed";

  // The four "when borrowing while preemption is needed for flavor one"
  // cases that stop on flavor one.
  auto preempt_on_one = [&](std::string name, FlavorFungibility ff,
                            bool borrowing_limit) {
    return AssignFlavorsCase{
        .name = std::move(name),
        .workload = WorkloadBuilder("wl").Request("cpu", "12").Build(),
        .cluster_queue = borrowing_preempting_cq(ff, borrowing_limit),
        .secondary_cluster_queue = secondary_one("12"),
        .secondary_cluster_queue_usage = {{FR("one", "cpu"), 10'000}},
        .simulation_result = {{FR("one", "cpu"),
                               {PreemptionPossibility::kPreempt, 1}}},
        .want_rep_mode = kPreempt,
        .want_pod_sets = {{.name = "main",
                           .flavors = {{"cpu", {"one", kPreempt, 0}}},
                           .requests = {{"cpu", "12"}},
                           .reasons = {kNeedsTenMore},
                           .attempts = {PreemptAttempt(
                               "one", PreemptionPossibility::kPreempt, 1,
                               kNeedsTenMore)}}},
        .want_borrowing = 1,
        .want_usage = {{FR("one", "cpu"), 12'000}},
    };
  };
  auto fits_on_two = [&](std::string name, FlavorFungibility ff) {
    return AssignFlavorsCase{
        .name = std::move(name),
        .workload = WorkloadBuilder("wl").Request("cpu", "12").Build(),
        .cluster_queue = borrowing_preempting_cq(ff, true),
        .secondary_cluster_queue = secondary_one("12"),
        .want_rep_mode = kFit,
        .want_pod_sets = {{.name = "main",
                           .flavors = {{"cpu", {"two", kFit, -1}}},
                           .requests = {{"cpu", "12"}},
                           .attempts = {FitAttempt("one", 1),
                                        FitAttempt("two")}}},
        .want_usage = {{FR("two", "cpu"), 12'000}},
    };
  };
  auto no_candidates_on_one = [&](std::string name) {
    return AssignFlavorsCase{
        .name = std::move(name),
        .workload = WorkloadBuilder("wl").Request("cpu", "2").Build(),
        .cluster_queue = with_ff(ClusterQueueBuilder("test-clusterqueue")
                                     .ReclaimWithinCohort("LowerPriority")
                                     .BorrowWithinCohort("LowerPriority")
                                     .ResourceGroup({"cpu"})
                                     .Flavor("one")
                                     .Quota("cpu", "0")
                                     .BorrowingLimit("2")
                                     .Flavor("two")
                                     .Quota("cpu", "0")
                                     .BorrowingLimit("2")
                                     .Cohort("test-cohort")
                                     .Build(),
                                 kMayStopBoth),
        .secondary_cluster_queue =
            ClusterQueueBuilder("test-secondary-clusterqueue")
                .ResourceGroup({"cpu"})
                .Flavor("one")
                .Quota("cpu", "2")
                .Flavor("two")
                .Quota("cpu", "2")
                .Cohort("test-cohort")
                .Build(),
        .secondary_cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
        .simulation_result = {{FR("one", "cpu"),
                               {PreemptionPossibility::kNoCandidates, 0}}},
        .want_rep_mode = kFit,
        .want_pod_sets =
            {{.name = "main",
              .flavors = {{"cpu", {"two", kFit, -1}}},
              .requests = {{"cpu", "2"}},
              .attempts = {PreemptAttempt(
                               "one", PreemptionPossibility::kNoCandidates, 0,
                               "insufficient unused quota for cpu in flavor "
                               "one, 2 more needed"),
                           FitAttempt("two", 1)}}},
        .want_borrowing = 1,
        .want_usage = {{FR("two", "cpu"), 2'000}},
    };
  };
  auto fair_sharing_any = [&](std::string name) {
    return AssignFlavorsCase{
        .name = std::move(name),
        .workload = WorkloadBuilder("wl").Request("cpu", "12").Build(),
        .cluster_queue = fair_sharing_cq("Any"),
        .secondary_cluster_queue = secondary_one("12"),
        .secondary_cluster_queue_usage = {{FR("one", "cpu"), 10'000}},
        .enable_fair_sharing = true,
        .simulation_result = {{FR("one", "cpu"),
                               {PreemptionPossibility::kPreempt, 1}}},
        .want_rep_mode = kPreempt,
        .want_pod_sets = {{.name = "main",
                           .flavors = {{"cpu", {"one", kPreempt, 0}}},
                           .requests = {{"cpu", "12"}},
                           .reasons = {kNeedsTenMore},
                           .attempts = {PreemptAttempt(
                               "one", PreemptionPossibility::kPreempt, 1,
                               kNeedsTenMore)}}},
        .want_borrowing = 1,
        .want_usage = {{FR("one", "cpu"), 12'000}},
    };
  };
  auto fair_sharing_never = [&](std::string name) {
    return AssignFlavorsCase{
        .name = std::move(name),
        .workload = WorkloadBuilder("wl").Request("cpu", "12").Build(),
        .cluster_queue = fair_sharing_cq("Never"),
        .secondary_cluster_queue = secondary_one("12"),
        .secondary_cluster_queue_usage = {{FR("one", "cpu"), 10'000}},
        .enable_fair_sharing = true,
        .simulation_result = {{FR("one", "cpu"),
                               {PreemptionPossibility::kNoCandidates, 0}}},
        .want_rep_mode = kFit,
        .want_pod_sets = {{.name = "main",
                           .flavors = {{"cpu", {"two", kFit, -1}}},
                           .requests = {{"cpu", "12"}},
                           .attempts = {NoFitAttempt("one", {kNeedsTenMore},
                                                     kReasonWaitingForQuota,
                                                     /*borrow=*/1),
                                        FitAttempt("two")}}},
        .want_usage = {{FR("two", "cpu"), 12'000}},
    };
  };
  auto preempt_before_next = [&](std::string name) {
    return AssignFlavorsCase{
        .name = std::move(name),
        .workload = WorkloadBuilder("wl").Request("cpu", "9").Build(),
        .cluster_queue = with_ff(
            pods_cpu_cq("10", std::nullopt, std::nullopt, "10", std::nullopt),
            kMayStopBoth),
        .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
        .want_rep_mode = kPreempt,
        .want_pod_sets = {{.name = "main",
                           .flavors = {{"cpu", {"one", kPreempt, 0}},
                                       {"pods", {"one", kFit, 0}}},
                           .requests = {{"cpu", "9"}, {"pods", "1"}},
                           .reasons = {"insufficient unused quota for cpu in "
                                       "flavor one, 1 more needed"},
                           .attempts = {PreemptAttempt(
                               "one", PreemptionPossibility::kPreempt, 0,
                               "insufficient unused quota for cpu in flavor "
                               "one, 1 more needed")}}},
        .want_usage = {{FR("one", "cpu"), 9'000}, {FR("one", "pods"), 1}},
    };
  };

  return {
      {
          .name = "single flavor, fits",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .Request("memory", "1Mi")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu", "memory"})
                               .Flavor("default")
                               .Quota("cpu", "1")
                               .Quota("memory", "2Mi")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}},
                                         {"memory", {"default", kFit, -1}}},
                             .requests = {{"cpu", "1"}, {"memory", "1Mi"}},
                             .attempts = {FitAttempt("default")}}},
          .want_usage = {{FR("default", "cpu"), 1'000},
                         {FR("default", "memory"), kMi}},
      },
      {
          .name = "single flavor, fits tainted flavor",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .Toleration(kSpotToleration)
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("tainted")
                               .Quota("cpu", "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"tainted", kFit, -1}}},
                             .requests = {{"cpu", "1"}},
                             .attempts = {FitAttempt("tainted")}}},
          .want_usage = {{FR("tainted", "cpu"), 1'000}},
      },
      {
          .name = "single flavor, fits tainted flavor with toleration",
          .workload = WorkloadBuilder("wl").Request("cpu", "1").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("taint_and_toleration")
                               .Quota("cpu", "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu",
                                          {"taint_and_toleration", kFit, -1}}},
                             .requests = {{"cpu", "1"}},
                             .attempts = {FitAttempt("taint_and_toleration")}}},
          .want_usage = {{FR("taint_and_toleration", "cpu"), 1'000}},
      },
      {
          .name = "single flavor, used resources, doesn't fit",
          .workload = WorkloadBuilder("wl").Request("cpu", "2").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("default")
                               .Quota("cpu", "4")
                               .Build(),
          .cluster_queue_usage = {{FR("default", "cpu"), 3'000}},
          .want_rep_mode = kPreempt,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kPreempt, -1}}},
                             .requests = {{"cpu", "2"}},
                             .reasons = {"insufficient unused quota for cpu in "
                                         "flavor default, 1 more needed"},
                             .attempts = {PreemptAttempt(
                                 "default", PreemptionPossibility::kPreempt, 0,
                                 "insufficient unused quota for cpu in flavor "
                                 "default, 1 more needed")}}},
          .want_usage = {{FR("default", "cpu"), 2'000}},
      },
      {
          .name = "multiple resource groups, fits",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "3")
                          .Request("memory", "10Mi")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "2")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .ResourceGroup({"memory"})
                               .Flavor("b_one")
                               .Quota("memory", "1Gi")
                               .Flavor("b_two")
                               .Quota("memory", "5Gi")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"cpu", {"two", kFit, -1}},
                            {"memory", {"b_one", kFit, 0}}},
                .requests = {{"cpu", "3"}, {"memory", "10Mi"}},
                .attempts = {NoFitAttempt("one", {kOneCpuExceeds3of2},
                                          kReasonExceedsMaxQuota),
                             FitAttempt("two"), FitAttempt("b_one"),
                             NoFitAttempt("b_two",
                                          {"flavor b_two does not provide "
                                           "resource memory"},
                                          kReasonNoMatchingFlavor)}}},
          .want_usage = {{FR("two", "cpu"), 3'000},
                         {FR("b_one", "memory"), 10 * kMi}},
      },
      {
          .name = "multiple resource groups, one could fit with preemption, "
                  "other doesn't fit",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "3")
                          .Request("memory", "10Mi")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "3")
                               .ResourceGroup({"memory"})
                               .Flavor("b_one")
                               .Quota("memory", "1Mi")
                               .Build(),
          .cluster_queue_usage = {{FR("one", "cpu"), 1'000}},
          .want_pod_sets = {{.name = "main",
                             .requests = {{"cpu", "3"}, {"memory", "10Mi"}},
                             .reasons = {"insufficient quota for memory in "
                                         "flavor b_one, previously considered "
                                         "podsets requests (0) + current "
                                         "podset request (10Mi) > maximum "
                                         "capacity (1Mi)"},
                             .attempts = {NoFitAttempt(
                                 "b_one",
                                 {"insufficient quota for memory in flavor "
                                  "b_one, previously considered podsets "
                                  "requests (0) + current podset request "
                                  "(10Mi) > maximum capacity (1Mi)"},
                                 kReasonExceedsMaxQuota)}}},
          .want_no_fit_reason = kReasonExceedsMaxQuota,
      },
      {
          .name = "multiple resource groups with multiple resources, fits",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "3")
                          .Request("memory", "10Mi")
                          .Request(kGpu, "3")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu", "memory"})
                               .Flavor("one")
                               .Quota("cpu", "2")
                               .Quota("memory", "1Gi")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Quota("memory", "15Mi")
                               .ResourceGroup({kGpu})
                               .Flavor("b_one")
                               .Quota(kGpu, "4")
                               .Flavor("b_two")
                               .Quota(kGpu, "2")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"cpu", {"two", kFit, -1}},
                            {"memory", {"two", kFit, -1}},
                            {kGpu, {"b_one", kFit, 0}}},
                .requests = {{"cpu", "3"}, {"memory", "10Mi"}, {kGpu, "3"}},
                .attempts = {FitAttempt("b_one"),
                             NoFitAttempt("one", {kOneCpuExceeds3of2},
                                          kReasonExceedsMaxQuota),
                             FitAttempt("two")}}},
          .want_usage = {{FR("two", "cpu"), 3'000},
                         {FR("two", "memory"), 10 * kMi},
                         {FR("b_one", kGpu), 3}},
      },
      {
          .name = "multiple resource groups with multiple resources, fits "
                  "with different modes",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "3")
                          .Request("memory", "10Mi")
                          .Request(kGpu, "3")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu", "memory"})
                               .Flavor("one")
                               .Quota("cpu", "2")
                               .Quota("memory", "1Gi")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Quota("memory", "15Mi")
                               .ResourceGroup({kGpu})
                               .Flavor("b_one")
                               .Quota(kGpu, "4")
                               .Cohort("test-cohort")
                               .Build(),
          .cluster_queue_usage = {{FR("two", "memory"), 10 * kMi}},
          .secondary_cluster_queue =
              ClusterQueueBuilder("test-secondary-clusterqueue")
                  .ResourceGroup({kGpu})
                  .Flavor("b_one")
                  .Quota(kGpu, "0")
                  .Cohort("test-cohort")
                  .Build(),
          .secondary_cluster_queue_usage = {{FR("b_one", kGpu), 2}},
          .simulation_result = {{FR("two", "memory"),
                                 {PreemptionPossibility::kPreempt, 1}}},
          .want_rep_mode = kPreempt,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"cpu", {"two", kFit, -1}},
                            {"memory", {"two", kPreempt, -1}},
                            {kGpu, {"b_one", kPreempt, -1}}},
                .requests = {{"cpu", "3"}, {"memory", "10Mi"}, {kGpu, "3"}},
                .reasons = {kOneCpuExceeds3of2,
                            "insufficient unused quota for memory in flavor "
                            "two, 5Mi more needed",
                            "insufficient unused quota for example.com/gpu in "
                            "flavor b_one, 1 more needed"},
                .attempts =
                    {PreemptAttempt("b_one", PreemptionPossibility::kPreempt, 0,
                                    "insufficient unused quota for "
                                    "example.com/gpu in flavor b_one, "
                                    "1 more needed"),
                     NoFitAttempt("one", {kOneCpuExceeds3of2},
                                  kReasonExceedsMaxQuota),
                     PreemptAttempt("two", PreemptionPossibility::kPreempt, 1,
                                    "insufficient unused quota for "
                                    "memory in flavor two, 5Mi more "
                                    "needed")}}},
          .want_borrowing = 1,
          .want_usage = {{FR("two", "cpu"), 3'000},
                         {FR("two", "memory"), 10 * kMi},
                         {FR("b_one", kGpu), 3}},
      },
      {
          .name = "multiple resources in a group, doesn't fit",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "3")
                          .Request("memory", "10Mi")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu", "memory"})
                               .Flavor("one")
                               .Quota("cpu", "2")
                               .Quota("memory", "1Gi")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Quota("memory", "5Mi")
                               .Build(),
          .want_pod_sets =
              {{.name = "main",
                .requests = {{"cpu", "3"}, {"memory", "10Mi"}},
                .reasons = {kOneCpuExceeds3of2,
                            "insufficient quota for memory in "
                            "flavor two, previously considered "
                            "podsets requests (0) + current "
                            "podset request (10Mi) > maximum "
                            "capacity (5Mi)"},
                .attempts = {NoFitAttempt("one", {kOneCpuExceeds3of2},
                                          kReasonExceedsMaxQuota),
                             NoFitAttempt("two",
                                          {"insufficient quota for memory "
                                           "in flavor two, previously "
                                           "considered podsets requests "
                                           "(0) + current podset request "
                                           "(10Mi) > maximum capacity "
                                           "(5Mi)"},
                                          kReasonExceedsMaxQuota)}}},
          .want_no_fit_reason = kReasonExceedsMaxQuota,
      },
      {
          .name = "multiple flavors, fits while skipping tainted flavor",
          .workload = WorkloadBuilder("wl").Request("cpu", "3").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("tainted")
                               .Quota("cpu", "4")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"two", kFit, -1}}},
                             .requests = {{"cpu", "3"}},
                             .attempts = {NoFitAttempt(
                                              "tainted",
                                              {"untolerated taint {instance "
                                               "spot NoSchedule <nil>} in "
                                               "flavor tainted"},
                                              kReasonNoMatchingFlavor),
                                          FitAttempt("two")}}},
          .want_usage = {{FR("two", "cpu"), 3'000}},
      },
      {
          .name = "multiple flavors, fits a node selector",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          // ignored1:foo should get ignored
                          .NodeSelector("type", "two")
                          .NodeSelector("ignored1", "foo")
                          // this expression should get ignored
                          .RequiredNodeAffinity("ignored2", "In", {"bar"})
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"two", kFit, -1}}},
                             .requests = {{"cpu", "1"}},
                             .attempts = {NoFitAttempt(
                                              "one",
                                              {"flavor one doesn't match node "
                                               "affinity"},
                                              kReasonNoMatchingFlavor),
                                          FitAttempt("two")}}},
          .want_usage = {{FR("two", "cpu"), 1'000}},
      },
      {
          .name = "multiple flavors, fits with node affinity",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .Request("memory", "1Mi")
                          .NodeSelector("ignored1", "foo")
                          .RequiredNodeAffinity("type", "In", {"two"})
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu", "memory"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Quota("memory", "1Gi")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Quota("memory", "1Gi")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"two", kFit, -1}},
                                         {"memory", {"two", kFit, -1}}},
                             .requests = {{"cpu", "1"}, {"memory", "1Mi"}},
                             .attempts = {NoFitAttempt(
                                              "one",
                                              {"flavor one doesn't match node "
                                               "affinity"},
                                              kReasonNoMatchingFlavor),
                                          FitAttempt("two")}}},
          .want_usage = {{FR("two", "cpu"), 1'000}, {FR("two", "memory"), kMi}},
      },
      {
          .name = "multiple flavors, node affinity fits any flavor",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .RequiredNodeAffinity("ignored2", "In", {"bar"})
                          // Although this term selects two, the first term
                          // matches any flavor, and terms are ORed.
                          .RequiredNodeAffinity("cpuType", "In", {"two"})
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"one", kFit, 0}}},
                             .requests = {{"cpu", "1"}},
                             .attempts = {FitAttempt("one")}}},
          .want_usage = {{FR("one", "cpu"), 1'000}},
      },
      {
          .name = "multiple flavors with different label keys, selector only "
                  "uses flavor's own keys",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .NodeSelector("x", "a")
                          .NodeSelector("y", "g")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("label-x-a")
                               .Quota("cpu", "4")
                               .Flavor("label-xy-b")
                               .Quota("cpu", "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"label-x-a", kFit, 0}}},
                             .requests = {{"cpu", "1"}}}},
          .want_usage = {{FR("label-x-a", "cpu"), 1'000}},
      },
      {
          .name = "labelless flavor in group with labeled flavor, workload "
                  "uses labeled selector",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .NodeSelector("type", "two")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("default")
                               .Quota("cpu", "4")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, 0}}},
                             .requests = {{"cpu", "1"}}}},
          .want_usage = {{FR("default", "cpu"), 1'000}},
      },
      {
          .name = "multiple flavors, doesn't fit node affinity",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .RequiredNodeAffinity("type", "In", {"three"})
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Build(),
          .want_pod_sets =
              {{.name = "main",
                .requests = {{"cpu", "1"}},
                .reasons = {"flavor one doesn't match node "
                            "affinity",
                            "flavor two doesn't match node "
                            "affinity"},
                .attempts = {NoFitAttempt("one",
                                          {"flavor one doesn't match node "
                                           "affinity"},
                                          kReasonNoMatchingFlavor),
                             NoFitAttempt("two",
                                          {"flavor two doesn't match node "
                                           "affinity"},
                                          kReasonNoMatchingFlavor)}}},
          .want_no_fit_reason = kReasonNoMatchingFlavor,
      },
      {
          .name = "multiple specs, fit different flavors",
          .workload = WorkloadBuilder("wl")
                          .PodSet("driver", 1)
                          .Request("cpu", "5")
                          .PodSet("worker", 1)
                          .Request("cpu", "3")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Flavor("two")
                               .Quota("cpu", "10")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "driver",
                .flavors = {{"cpu", {"two", kFit, -1}}},
                .requests = {{"cpu", "5"}},
                .attempts = {NoFitAttempt("one",
                                          {"insufficient quota for cpu in "
                                           "flavor one, previously considered "
                                           "podsets requests (0) + current "
                                           "podset request (5) > maximum "
                                           "capacity (4)"},
                                          kReasonExceedsMaxQuota),
                             FitAttempt("two")}},
               {.name = "worker",
                .flavors = {{"cpu", {"one", kFit, 0}}},
                .requests = {{"cpu", "3"}},
                .attempts = {FitAttempt("one")}}},
          .want_usage = {{FR("one", "cpu"), 3'000}, {FR("two", "cpu"), 5'000}},
      },
      {
          .name = "multiple specs, fits borrowing",
          .workload = WorkloadBuilder("wl")
                          .PodSet("driver", 1)
                          .Request("cpu", "4")
                          .Request("memory", "1Gi")
                          .PodSet("worker", 1)
                          .Request("cpu", "6")
                          .Request("memory", "4Gi")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu", "memory"})
                               .Flavor("default")
                               .Quota("cpu", "2")
                               .BorrowingLimit("98")
                               .Quota("memory", "2Gi")
                               .Cohort("test-cohort")
                               .Build(),
          .secondary_cluster_queue =
              ClusterQueueBuilder("test-secondary-clusterqueue")
                  .ResourceGroup({"cpu", "memory"})
                  .Flavor("default")
                  .Quota("cpu", "198")
                  .Quota("memory", "198Gi")
                  .Cohort("test-cohort")
                  .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "driver",
                             .flavors = {{"cpu", {"default", kFit, -1}},
                                         {"memory", {"default", kFit, -1}}},
                             .requests = {{"cpu", "4"}, {"memory", "1Gi"}},
                             .attempts = {FitAttempt("default", 1)}},
                            {.name = "worker",
                             .flavors = {{"cpu", {"default", kFit, -1}},
                                         {"memory", {"default", kFit, -1}}},
                             .requests = {{"cpu", "6"}, {"memory", "4Gi"}},
                             .attempts = {FitAttempt("default", 1)}}},
          .want_borrowing = 1,
          .want_usage = {{FR("default", "cpu"), 10'000},
                         {FR("default", "memory"), 5 * kGi}},
      },
      {
          .name = "not enough space to borrow",
          .workload = WorkloadBuilder("wl").Request("cpu", "2").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "1")
                               .Cohort("test-cohort")
                               .Build(),
          .secondary_cluster_queue =
              ClusterQueueBuilder("test-secondary-clusterqueue")
                  .ResourceGroup({"cpu"})
                  .Flavor("one")
                  .Quota("cpu", "10")
                  .LendingLimit("0")
                  .Cohort("test-cohort")
                  .Build(),
          .secondary_cluster_queue_usage = {{FR("one", "cpu"), 9'000}},
          .want_pod_sets = {{.name = "main",
                             .requests = {{"cpu", "2"}},
                             .reasons = {"insufficient quota for cpu in flavor "
                                         "one, previously considered podsets "
                                         "requests (0) + current podset "
                                         "request (2) > maximum capacity (1)"},
                             .attempts = {NoFitAttempt(
                                 "one",
                                 {"insufficient quota for cpu in flavor one, "
                                  "previously considered podsets requests (0) "
                                  "+ current podset request (2) > maximum "
                                  "capacity (1)"},
                                 kReasonExceedsMaxQuota)}}},
          .want_no_fit_reason = kReasonExceedsMaxQuota,
      },
      {
          .name = "past max, but can preempt in ClusterQueue",
          .workload = WorkloadBuilder("wl").Request("cpu", "2").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "2")
                               .BorrowingLimit("8")
                               .Cohort("test-cohort")
                               .Build(),
          .cluster_queue_usage = {{FR("one", "cpu"), 9'000}},
          .secondary_cluster_queue =
              ClusterQueueBuilder("test-secondary-clusterqueue")
                  .ResourceGroup({"cpu"})
                  .Flavor("one")
                  .Quota("cpu", "98")
                  .Cohort("test-cohort")
                  .Build(),
          .secondary_cluster_queue_usage = {{FR("one", "cpu"), 9'000}},
          .simulation_result = {{FR("one", "cpu"),
                                 {PreemptionPossibility::kPreempt, 1}}},
          .want_rep_mode = kPreempt,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"one", kPreempt, -1}}},
                             .requests = {{"cpu", "2"}},
                             .reasons = {"insufficient unused quota for cpu in "
                                         "flavor one, 1 more needed"},
                             .attempts = {PreemptAttempt(
                                 "one", PreemptionPossibility::kPreempt, 1,
                                 "insufficient unused quota for cpu in flavor "
                                 "one, 1 more needed")}}},
          .want_borrowing = 1,
          .want_usage = {{FR("one", "cpu"), 2'000}},
      },
      {
          .name = "past min, but can preempt in ClusterQueue",
          .workload = WorkloadBuilder("wl").Request("cpu", "2").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "2")
                               .Build(),
          .cluster_queue_usage = {{FR("one", "cpu"), 1'000}},
          .want_rep_mode = kPreempt,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"one", kPreempt, -1}}},
                             .requests = {{"cpu", "2"}},
                             .reasons = {"insufficient unused quota for cpu in "
                                         "flavor one, 1 more needed"},
                             .attempts = {PreemptAttempt(
                                 "one", PreemptionPossibility::kPreempt, 0,
                                 "insufficient unused quota for cpu in flavor "
                                 "one, 1 more needed")}}},
          .want_usage = {{FR("one", "cpu"), 2'000}},
      },
      {
          .name = "past min, but can preempt in cohort and ClusterQueue",
          .workload = WorkloadBuilder("wl").Request("cpu", "2").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "3")
                               .Cohort("test-cohort")
                               .Build(),
          .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
          .secondary_cluster_queue =
              ClusterQueueBuilder("test-secondary-clusterqueue")
                  .ResourceGroup({"cpu"})
                  .Flavor("one")
                  .Quota("cpu", "7")
                  .Cohort("test-cohort")
                  .Build(),
          .secondary_cluster_queue_usage = {{FR("one", "cpu"), 8'000}},
          .simulation_result = {{FR("one", "cpu"),
                                 {PreemptionPossibility::kPreempt, 1}}},
          .want_rep_mode = kPreempt,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"one", kPreempt, -1}}},
                             .requests = {{"cpu", "2"}},
                             .reasons = {"insufficient unused quota for cpu in "
                                         "flavor one, 2 more needed"},
                             .attempts = {PreemptAttempt(
                                 "one", PreemptionPossibility::kPreempt, 1,
                                 "insufficient unused quota for cpu in flavor "
                                 "one, 2 more needed")}}},
          .want_borrowing = 1,
          .want_usage = {{FR("one", "cpu"), 2'000}},
      },
      {
          .name = "can only preempt flavors that match affinity",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "2")
                          .NodeSelector("type", "two")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Build(),
          .cluster_queue_usage = {{FR("one", "cpu"), 3'000},
                                  {FR("two", "cpu"), 3'000}},
          .want_rep_mode = kPreempt,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"cpu", {"two", kPreempt, -1}}},
                .requests = {{"cpu", "2"}},
                .reasons = {"flavor one doesn't match node "
                            "affinity",
                            "insufficient unused quota for cpu in "
                            "flavor two, 1 more needed"},
                .attempts = {NoFitAttempt("one",
                                          {"flavor one doesn't match node "
                                           "affinity"},
                                          kReasonNoMatchingFlavor),
                             PreemptAttempt(
                                 "two", PreemptionPossibility::kPreempt, 0,
                                 "insufficient unused quota for "
                                 "cpu in flavor two, 1 more "
                                 "needed")}}},
          .want_usage = {{FR("two", "cpu"), 2'000}},
      },
      {
          .name = "each podset requires preemption on a different flavor",
          .workload = WorkloadBuilder("wl")
                          .PodSet("launcher", 1)
                          .Request("cpu", "2")
                          .PodSet("workers", 10)
                          .Request("cpu", "1")
                          .Toleration(kSpotToleration)
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Flavor("tainted")
                               .Quota("cpu", "10")
                               .Build(),
          .cluster_queue_usage = {{FR("one", "cpu"), 3'000},
                                  {FR("tainted", "cpu"), 3'000}},
          .want_rep_mode = kPreempt,
          .want_pod_sets =
              {{.name = "launcher",
                .flavors = {{"cpu", {"one", kPreempt, -1}}},
                .requests = {{"cpu", "2"}},
                .reasons = {"insufficient unused quota for cpu in flavor one, "
                            "1 more needed",
                            "untolerated taint {instance spot NoSchedule "
                            "<nil>} in flavor tainted"},
                .attempts = {PreemptAttempt("one",
                                            PreemptionPossibility::kPreempt, 0,
                                            "insufficient unused quota for cpu "
                                            "in flavor one, 1 more needed"),
                             NoFitAttempt("tainted",
                                          {"untolerated taint {instance spot "
                                           "NoSchedule <nil>} in flavor "
                                           "tainted"},
                                          kReasonNoMatchingFlavor)}},
               {.name = "workers",
                .flavors = {{"cpu", {"tainted", kPreempt, -1}}},
                .requests = {{"cpu", "10"}},
                .reasons = {"insufficient quota for cpu in flavor one, "
                            "previously considered podsets requests (2) + "
                            "current podset request (10) > maximum capacity "
                            "(4)",
                            "insufficient unused quota for cpu in flavor "
                            "tainted, 3 more needed"},
                .count = 10,
                .attempts = {NoFitAttempt("one",
                                          {"insufficient quota for cpu in "
                                           "flavor one, previously considered "
                                           "podsets requests (2) + current "
                                           "podset request (10) > maximum "
                                           "capacity (4)"},
                                          kReasonExceedsMaxQuota),
                             PreemptAttempt("tainted",
                                            PreemptionPossibility::kPreempt, 0,
                                            "insufficient unused quota for cpu "
                                            "in flavor tainted, 3 more "
                                            "needed")}}},
          .want_usage = {{FR("one", "cpu"), 2'000},
                         {FR("tainted", "cpu"), 10'000}},
      },
      {
          .name = "resource not listed in clusterQueue",
          .workload = WorkloadBuilder("wl").Request(kGpu, "2").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Build(),
          .want_pod_sets = {{.name = "main",
                             .requests = {{kGpu, "2"}},
                             .reasons = {"resource example.com/gpu unavailable "
                                         "in ClusterQueue"}}},
          .want_no_fit_reason = kReasonNoMatchingFlavor,
      },
      {
          .name = "zero resource request not in clusterQueue should succeed",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .Request(kGpu, "0")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("default")
                               .Quota("cpu", "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}}},
                             .requests = {{"cpu", "1"}, {kGpu, "0"}},
                             .attempts = {FitAttempt("default")}}},
          .want_usage = {{FR("default", "cpu"), 1'000}},
      },
      {
          .name = "zero resource request defined in clusterQueue should get "
                  "flavor assigned",
          .workload = WorkloadBuilder("wl")
                          .Request("cpu", "1")
                          .Request(kGpu, "0")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu", kGpu})
                               .Flavor("default")
                               .Quota("cpu", "4")
                               .Quota(kGpu, "4")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}},
                                         {kGpu, {"default", kFit, -1}}},
                             .requests = {{"cpu", "1"}, {kGpu, "0"}},
                             .attempts = {FitAttempt("default")}}},
          .want_usage = {{FR("default", "cpu"), 1'000},
                         {FR("default", kGpu), 0}},
      },
      {
          .name = "num pods fit",
          .workload = WorkloadBuilder("wl")
                          .PodSet("main", 3)
                          .Request("cpu", "1")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"pods", "cpu"})
                               .Flavor("default")
                               .Quota("pods", "3")
                               .Quota("cpu", "10")
                               .Build(),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}},
                                         {"pods", {"default", kFit, -1}}},
                             .requests = {{"cpu", "3"}, {"pods", "3"}},
                             .count = 3,
                             .attempts = {FitAttempt("default")}}},
          .want_usage = {{FR("default", "pods"), 3},
                         {FR("default", "cpu"), 3'000}},
      },
      {
          .name = "num pods don't fit",
          .workload = WorkloadBuilder("wl")
                          .PodSet("main", 3)
                          .Request("cpu", "1")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"pods", "cpu"})
                               .Flavor("default")
                               .Quota("pods", "2")
                               .Quota("cpu", "10")
                               .Build(),
          .want_pod_sets = {{.name = "main",
                             .requests = {{"cpu", "3"}, {"pods", "3"}},
                             .reasons = {"insufficient quota for pods in "
                                         "flavor default, previously "
                                         "considered podsets requests (0) + "
                                         "current podset request (3) > "
                                         "maximum capacity (2)"},
                             .count = 3,
                             .attempts = {NoFitAttempt(
                                 "default",
                                 {"insufficient quota for pods in flavor "
                                  "default, previously considered podsets "
                                  "requests (0) + current podset request (3) "
                                  "> maximum capacity (2)"},
                                 kReasonExceedsMaxQuota)}}},
          .want_no_fit_reason = kReasonExceedsMaxQuota,
      },
      {
          .name = "with reclaimable pods; reclaimablePods on",
          .workload = two_of_five_reclaimable(),
          .cluster_queue = pods_and_cpu_cq("3"),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}},
                                         {"pods", {"default", kFit, -1}}},
                             .requests = {{"cpu", "3"}, {"pods", "3"}},
                             .count = 3,
                             .attempts = {FitAttempt("default")}}},
          .want_usage = {{FR("default", "pods"), 3},
                         {FR("default", "cpu"), 3'000}},
      },
      {
          .name = "with reclaimable pods; reclaimablePods off",
          .workload = two_of_five_reclaimable(),
          .cluster_queue = pods_and_cpu_cq("5"),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}},
                                         {"pods", {"default", kFit, -1}}},
                             .requests = {{"cpu", "5"}, {"pods", "5"}},
                             .count = 5}},
          .want_usage = {{FR("default", "pods"), 5},
                         {FR("default", "cpu"), 5'000}},
          .reclaimable_pods = false,
      },
      preempt_before_next("preempt before try next flavor"),
      preempt_before_next(
          "preempt before try next flavor; using "
          "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch"),
      {
          .name = "preempt try next flavor",
          .workload = WorkloadBuilder("wl").Request("cpu", "9").Build(),
          .cluster_queue =
              pods_cpu_cq("10", std::nullopt, std::nullopt, "10", std::nullopt),
          .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"cpu", {"two", kFit, -1}},
                            {"pods", {"two", kFit, -1}}},
                .requests = {{"cpu", "9"}, {"pods", "1"}},
                .attempts = {PreemptAttempt(
                                 "one", PreemptionPossibility::kPreempt, 0,
                                 "insufficient unused quota for "
                                 "cpu in flavor one, 1 more "
                                 "needed"),
                             FitAttempt("two")}}},
          .want_usage = {{FR("two", "cpu"), 9'000}, {FR("two", "pods"), 1}},
      },
      {
          .name = "borrow try next flavor, found the first flavor",
          .workload = WorkloadBuilder("wl").Request("cpu", "9").Build(),
          .cluster_queue =
              with_ff(
                  [&] {
                    ClusterQueue cq =
                        pods_cpu_cq("10", "1", std::nullopt, "1", std::nullopt);
                    cq.cohort_name = "test-cohort";
                    return cq;
                  }(),
                  kTryNextBoth),
          .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
          .secondary_cluster_queue = secondary_one("1"),
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"cpu", {"one", kFit, -1}},
                            {"pods", {"one", kFit, -1}}},
                .requests = {{"cpu", "9"}, {"pods", "1"}},
                .attempts = {FitAttempt("one", 1),
                             NoFitAttempt("two",
                                          {"insufficient quota for cpu in "
                                           "flavor two, previously considered "
                                           "podsets requests (0) + current "
                                           "podset request (9) > maximum "
                                           "capacity (1)"},
                                          kReasonExceedsMaxQuota)}}},
          .want_borrowing = 1,
          .want_usage = {{FR("one", "cpu"), 9'000}, {FR("one", "pods"), 1}},
      },
      {
          .name = "borrow try next flavor, found the second flavor",
          .workload = WorkloadBuilder("wl").Request("cpu", "9").Build(),
          .cluster_queue =
              with_ff(
                  [&] {
                    ClusterQueue cq = pods_cpu_cq("10", "1", std::nullopt, "10",
                                                  std::nullopt);
                    cq.cohort_name = "test-cohort";
                    return cq;
                  }(),
                  kTryNextBoth),
          .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
          .secondary_cluster_queue = secondary_one("1"),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"two", kFit, -1}},
                                         {"pods", {"two", kFit, -1}}},
                             .requests = {{"cpu", "9"}, {"pods", "1"}},
                             .attempts = {FitAttempt("one", 1),
                                          FitAttempt("two")}}},
          .want_usage = {{FR("two", "cpu"), 9'000}, {FR("two", "pods"), 1}},
      },
      {
          .name = "borrow before try next flavor",
          .workload = WorkloadBuilder("wl").Request("cpu", "9").Build(),
          .cluster_queue =
              [&] {
                ClusterQueue cq =
                    pods_cpu_cq("10", "1", std::nullopt, "10", std::nullopt);
                cq.cohort_name = "test-cohort";
                return cq;
              }(),
          .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
          .secondary_cluster_queue = secondary_one("1"),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"one", kFit, 0}},
                                         {"pods", {"one", kFit, 0}}},
                             .requests = {{"cpu", "9"}, {"pods", "1"}},
                             .attempts = {FitAttempt("one", 1)}}},
          .want_borrowing = 1,
          .want_usage = {{FR("one", "cpu"), 9'000}, {FR("one", "pods"), 1}},
      },
      preempt_on_one("when borrowing while preemption is needed for flavor "
                     "one; WhenCanBorrow=MayStopSearch",
                     kMayStopBoth, /*borrowing_limit=*/true),
      preempt_on_one("when borrowing while preemption is needed for flavor "
                     "one; WhenCanBorrow=MayStopSearch,WhenCanPreempt="
                     "MayStopSearch",
                     kMayStopBoth, /*borrowing_limit=*/true),
      preempt_on_one("when borrowing while preemption is needed for flavor "
                     "one, no borrowingLimit; WhenCanBorrow=MayStopSearch",
                     kMayStopBoth, /*borrowing_limit=*/false),
      preempt_on_one("when borrowing while preemption is needed for flavor "
                     "one, no borrowingLimit; WhenCanBorrow=MayStopSearch,"
                     "WhenCanPreempt=MayStopSearch",
                     kMayStopBoth, /*borrowing_limit=*/false),
      fits_on_two("when borrowing while preemption is needed for flavor one; "
                  "WhenCanBorrow=TryNextFlavor",
                  kBorrowTryNext),
      fits_on_two("when borrowing while preemption is needed for flavor one; "
                  "WhenCanBorrow=TryNextFlavor,WhenCanPreempt=MayStopSearch",
                  kBorrowTryNext),
      {
          .name = "when borrowing while preemption is needed, but "
                  "borrowingLimit exceeds the quota available in the cohort",
          .workload = WorkloadBuilder("wl").Request("cpu", "12").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ReclaimWithinCohort("LowerPriority")
                               .BorrowWithinCohort("LowerPriority")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "0")
                               .BorrowingLimit("12")
                               .Cohort("test-cohort")
                               .Build(),
          .secondary_cluster_queue = secondary_one("11"),
          .secondary_cluster_queue_usage = {{FR("one", "cpu"), 10'000}},
          .want_pod_sets = {{.name = "main",
                             .requests = {{"cpu", "12"}},
                             .reasons = {"insufficient quota for cpu in flavor "
                                         "one, previously considered podsets "
                                         "requests (0) + current podset "
                                         "request (12) > maximum capacity "
                                         "(11)"},
                             .attempts = {NoFitAttempt(
                                 "one",
                                 {"insufficient quota for cpu in flavor one, "
                                  "previously considered podsets requests (0) "
                                  "+ current podset request (12) > maximum "
                                  "capacity (11)"},
                                 kReasonExceedsMaxQuota)}}},
          .want_no_fit_reason = kReasonExceedsMaxQuota,
      },
      {
          .name = "lend try next flavor, found the second flavor",
          .workload = WorkloadBuilder("wl").Request("cpu", "9").Build(),
          .cluster_queue =
              with_ff(
                  [&] {
                    ClusterQueue cq =
                        pods_cpu_cq("10", std::nullopt, "1", "10", "0");
                    cq.cohort_name = "test-cohort";
                    return cq;
                  }(),
                  kTryNextBoth),
          .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
          .secondary_cluster_queue = secondary_one("1"),
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"two", kFit, -1}},
                                         {"pods", {"two", kFit, -1}}},
                             .requests = {{"cpu", "9"}, {"pods", "1"}},
                             .attempts = {FitAttempt("one", 1),
                                          FitAttempt("two")}}},
          .want_usage = {{FR("two", "cpu"), 9'000}, {FR("two", "pods"), 1}},
      },
      {
          .name = "lend try next flavor, found the first flavor",
          .workload = WorkloadBuilder("wl").Request("cpu", "9").Build(),
          .cluster_queue =
              with_ff(
                  [&] {
                    ClusterQueue cq =
                        pods_cpu_cq("10", std::nullopt, "1", "1", "0");
                    cq.cohort_name = "test-cohort";
                    return cq;
                  }(),
                  kTryNextBoth),
          .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
          .secondary_cluster_queue = secondary_one("1"),
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"cpu", {"one", kFit, -1}},
                            {"pods", {"one", kFit, -1}}},
                .requests = {{"cpu", "9"}, {"pods", "1"}},
                .attempts = {FitAttempt("one", 1),
                             NoFitAttempt("two",
                                          {"insufficient quota for cpu in "
                                           "flavor two, previously considered "
                                           "podsets requests (0) + current "
                                           "podset request (9) > maximum "
                                           "capacity (1)"},
                                          kReasonExceedsMaxQuota)}}},
          .want_borrowing = 1,
          .want_usage = {{FR("one", "cpu"), 9'000}, {FR("one", "pods"), 1}},
      },
      no_candidates_on_one(
          "cannot preempt in cohort (oracle returns None) for the first "
          "flavor, tries the second flavor (which fits)"),
      no_candidates_on_one(
          "cannot preempt in cohort (oracle returns None) for the first "
          "flavor, tries the second flavor (which fits); using deprecated "
          "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch"),
      {
          .name = "quota exhausted, but can preempt in cohort and "
                  "ClusterQueue",
          .workload = WorkloadBuilder("wl").Request("cpu", "9").Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"pods", "cpu"})
                               .Flavor("one")
                               .Quota("pods", "10")
                               .Quota("cpu", "10")
                               .LendingLimit("0")
                               .Cohort("test-cohort")
                               .Build(),
          .cluster_queue_usage = {{FR("one", "cpu"), 2'000}},
          .secondary_cluster_queue =
              ClusterQueueBuilder("test-secondary-clusterqueue")
                  .ResourceGroup({"pods", "cpu"})
                  .Flavor("one")
                  .Quota("pods", "0")
                  .Quota("cpu", "0")
                  .Cohort("test-cohort")
                  .Build(),
          .simulation_result = {{FR("one", "cpu"),
                                 {PreemptionPossibility::kPreempt, 1}}},
          .want_rep_mode = kPreempt,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"one", kPreempt, -1}},
                                         {"pods", {"one", kFit, -1}}},
                             .requests = {{"cpu", "9"}, {"pods", "1"}},
                             .reasons = {"insufficient unused quota for cpu in "
                                         "flavor one, 1 more needed"},
                             .attempts = {PreemptAttempt(
                                 "one", PreemptionPossibility::kPreempt, 1,
                                 "insufficient unused quota for cpu in flavor "
                                 "one, 1 more needed")}}},
          .want_borrowing = 1,
          .want_usage = {{FR("one", "cpu"), 9'000}, {FR("one", "pods"), 1}},
      },
      fair_sharing_any("when borrowing while preemption is needed for flavor "
                       "one, fair sharing enabled, reclaimWithinCohort=Any"),
      fair_sharing_any("when borrowing while preemption is needed for flavor "
                       "one, fair sharing enabled, reclaimWithinCohort=Any; "
                       "using deprecated WhenCanBorrow=MayStopSearch,"
                       "WhenCanPreempt=MayStopSearch"),
      fair_sharing_never("when borrowing while preemption is needed for "
                         "flavor one, fair sharing enabled, "
                         "reclaimWithinCohort=Never"),
      fair_sharing_never("when borrowing while preemption is needed for "
                         "flavor one, fair sharing enabled, "
                         "reclaimWithinCohort=Never; using deprecated "
                         "WhenCanBorrow=MayStopSearch,WhenCanPreempt="
                         "MayStopSearch"),
      {
          .name = "multi-podset, one fits and another fails, fitting podset "
                  "attempts skipped in resolveNoFitReason",
          .workload = WorkloadBuilder("wl")
                          .PodSet("fitting-podset", 1)
                          .Request("cpu", "1")
                          .NodeSelector("type", "one")
                          .PodSet("blocking-podset", 1)
                          .Request("cpu", "5")
                          .Build(),
          .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "2")
                               .Flavor("two")
                               .Quota("cpu", "2")
                               .Build(),
          .want_pod_sets =
              {{.name = "fitting-podset",
                .flavors = {{"cpu", {"one", kFit, 0}}},
                .requests = {{"cpu", "1"}},
                .attempts = {FitAttempt("one"),
                             NoFitAttempt("two", {}, kReasonNoMatchingFlavor)}},
               {.name = "blocking-podset",
                .requests = {{"cpu", "5"}},
                .reasons = {"insufficient quota for cpu in flavor one, "
                            "previously considered podsets requests (1) + "
                            "current podset request (5) > maximum capacity "
                            "(2)",
                            "insufficient quota for cpu in flavor two, "
                            "previously considered podsets requests (0) + "
                            "current podset request (5) > maximum capacity "
                            "(2)"},
                .attempts = {NoFitAttempt("one",
                                          {"insufficient quota for cpu in "
                                           "flavor one, previously considered "
                                           "podsets requests (1) + current "
                                           "podset request (5) > maximum "
                                           "capacity (2)"},
                                          kReasonExceedsMaxQuota),
                             NoFitAttempt("two",
                                          {"insufficient quota for cpu in "
                                           "flavor two, previously considered "
                                           "podsets requests (0) + current "
                                           "podset request (5) > maximum "
                                           "capacity (2)"},
                                          kReasonExceedsMaxQuota)}}},
          .want_usage = {{FR("one", "cpu"), 1'000}},
          .want_no_fit_reason = kReasonExceedsMaxQuota,
      },
  };
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, AssignFlavorsTest, ::testing::ValuesIn(AssignFlavorsCases()),
    [](const ::testing::TestParamInfo<AssignFlavorsCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// TestDeletedFlavors: the ClusterQueue still lists a flavor whose
// ResourceFlavor is gone. Kueue compares the whole assignment here,
// attempts included.

struct DeletedFlavorsCase {
  std::string name;  // Kueue's
  Workload workload;
  ClusterQueue cluster_queue;
  AssignmentMode want_rep_mode = kNoFit;
  std::vector<WantPodSet> want_pod_sets;
  cache::FlavorResourceQuantities want_usage;
  std::string want_no_fit_reason;
};

// Prints the case name when a case fails.
void PrintTo(const DeletedFlavorsCase& c, std::ostream* os) { *os << c.name; }

class DeletedFlavorsTest : public ::testing::TestWithParam<DeletedFlavorsCase> {
};

TEST_P(DeletedFlavorsTest, Assign) {
  const DeletedFlavorsCase& tc = GetParam();
  cache::Cache cache;
  cache.Rebuild({{tc.cluster_queue.meta.name, tc.cluster_queue}}, {},
                {"flavor", "deleted-flavor"}, {});
  // Only "flavor" is left.
  const std::map<std::string, ResourceFlavor> flavors{
      {"flavor", ResourceFlavorBuilder("flavor").Build()}};
  TestOracle oracle;
  FlavorAssigner assigner(tc.workload,
                          *cache.FindClusterQueue(tc.cluster_queue.meta.name),
                          flavors, oracle);
  Assignment got = assigner.Assign();

  EXPECT_EQ(got.RepresentativeMode(), tc.want_rep_mode);
  ExpectAssignment(got, tc.want_pod_sets, /*want_borrowing=*/0, tc.want_usage,
                   tc.want_no_fit_reason);
  for (size_t i = 0; i < tc.want_pod_sets.size() && i < got.pod_sets.size();
       ++i) {
    std::vector<std::string> want, have;
    for (const auto& a : tc.want_pod_sets[i].attempts) {
      want.push_back(Describe(a));
    }
    for (const auto& a : got.pod_sets[i].attempts) have.push_back(Describe(a));
    EXPECT_EQ(have, want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, DeletedFlavorsTest,
    ::testing::ValuesIn(std::vector<DeletedFlavorsCase>{
        {
            .name = "multiple flavors, skip missing ResourceFlavor",
            .workload = WorkloadBuilder("wl").Request("cpu", "3").Build(),
            .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                                 .ResourceGroup({"cpu"})
                                 .Flavor("deleted-flavor")
                                 .Quota("cpu", "4")
                                 .Flavor("flavor")
                                 .Quota("cpu", "4")
                                 .Build(),
            .want_rep_mode = kFit,
            .want_pod_sets =
                {{.name = "main",
                  .flavors = {{"cpu", {"flavor", kFit, -1}}},
                  .requests = {{"cpu", "3"}},
                  .attempts = {NoFitAttempt("deleted-flavor",
                                            {"flavor deleted-flavor not "
                                             "found"},
                                            kReasonNoMatchingFlavor),
                               FitAttempt("flavor")}}},
            .want_usage = {{FR("flavor", "cpu"), 3'000}},
        },
        {
            .name = "flavor not found",
            .workload = WorkloadBuilder("wl").Request("cpu", "1").Build(),
            .cluster_queue = ClusterQueueBuilder("test-clusterqueue")
                                 .ResourceGroup({"cpu"})
                                 .Flavor("deleted-flavor")
                                 .Quota("cpu", "4")
                                 .Build(),
            .want_pod_sets =
                {{.name = "main",
                  .requests = {{"cpu", "1"}},
                  .reasons = {"flavor deleted-flavor not found"},
                  .attempts = {NoFitAttempt("deleted-flavor",
                                            {"flavor deleted-flavor not found"},
                                            kReasonNoMatchingFlavor)}}},
            .want_no_fit_reason = kReasonNoMatchingFlavor,
        },
    }),
    [](const ::testing::TestParamInfo<DeletedFlavorsCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// TestHierarchical: flavors one, two, three and a three-level cohort tree
// (three <- two <- one) where each cohort has 4 CPUs of a different flavor;
// the ClusterQueue is in cohort "one", a sibling in cohort "two".

struct HierarchicalCase {
  std::string name;  // Kueue's
  int64_t request_cpu = 4;
  // The test ClusterQueue's flavors (nominal, optional borrowing limit).
  std::vector<std::pair<std::string, std::optional<std::string>>>
      test_cluster_queue_quotas = {
          {"0", std::nullopt}, {"0", std::nullopt}, {"0", std::nullopt}};
  cache::FlavorResourceQuantities test_cluster_queue_usage;
  cache::FlavorResourceQuantities other_cluster_queue_usage;
  std::optional<FlavorFungibility> flavor_fungibility;
  std::map<cache::FlavorResource, PreemptionSimulation> simulation_result;
  AssignmentMode want_mode = kNoFit;
  std::map<std::string, std::string> want_assignment;  // resource -> flavor
};

// Prints the case name when a case fails.
void PrintTo(const HierarchicalCase& c, std::ostream* os) { *os << c.name; }

class HierarchicalTest : public ::testing::TestWithParam<HierarchicalCase> {};

TEST_P(HierarchicalTest, Assign) {
  const HierarchicalCase& tc = GetParam();
  const std::vector<std::string> names = {"one", "two", "three"};
  std::map<std::string, ResourceFlavor> flavors;
  for (const std::string& n : names) {
    flavors[n] = ResourceFlavorBuilder(n).Build();
  }
  std::map<std::string, Cohort> cohorts{
      {"three", CohortBuilder("three").Quota("three", "cpu", "4").Build()},
      {"two",
       CohortBuilder("two").Parent("three").Quota("two", "cpu", "4").Build()},
      {"one",
       CohortBuilder("one").Parent("two").Quota("one", "cpu", "4").Build()},
  };
  ClusterQueueBuilder test_cq("test-clusterqueue");
  test_cq.Cohort("one")
      .WithinClusterQueue("LowerPriority")
      .ReclaimWithinCohort("LowerPriority")
      .WhenCanPreempt(FungibilityPolicy::kTryNextFlavor)
      .ResourceGroup({"cpu"});
  for (size_t i = 0; i < names.size(); ++i) {
    test_cq.Flavor(names[i]).Quota("cpu",
                                   tc.test_cluster_queue_quotas[i].first);
    if (tc.test_cluster_queue_quotas[i].second) {
      test_cq.BorrowingLimit(*tc.test_cluster_queue_quotas[i].second);
    }
  }
  ClusterQueue test = test_cq.Build();
  if (tc.flavor_fungibility) test.flavor_fungibility = *tc.flavor_fungibility;
  ClusterQueueBuilder other_cq("other-clusterqueue");
  other_cq.Cohort("two").ResourceGroup({"cpu"});
  for (const std::string& n : names) other_cq.Flavor(n).Quota("cpu", "0");

  cache::Cache cache;
  cache.Rebuild(
      {{"test-clusterqueue", test}, {"other-clusterqueue", other_cq.Build()}},
      cohorts, NamesOf(flavors), {});
  cache.FindClusterQueue("other-clusterqueue")
      ->AddUsage(tc.other_cluster_queue_usage);
  cache::ClusterQueueSnapshot* cq = cache.FindClusterQueue("test-clusterqueue");
  cq->AddUsage(tc.test_cluster_queue_usage);

  Workload wl = WorkloadBuilder("wl")
                    .Request("cpu", std::to_string(tc.request_cpu))
                    .Build();
  TestOracle oracle(tc.simulation_result);
  Assignment got = FlavorAssigner(wl, *cq, flavors, oracle).Assign();

  EXPECT_EQ(got.RepresentativeMode(), tc.want_mode);
  ASSERT_FALSE(got.pod_sets.empty());
  std::map<std::string, std::string> assigned;
  for (const auto& [resource, fa] : got.pod_sets[0].flavors) {
    assigned[resource] = fa.name;
  }
  EXPECT_EQ(assigned, tc.want_assignment);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, HierarchicalTest,
    ::testing::ValuesIn(std::vector<HierarchicalCase>{
        {
            .name = "Select the top flavor",
            .test_cluster_queue_usage = {{FR("one", "cpu"), 4'000}},
            .other_cluster_queue_usage = {{FR("two", "cpu"), 4'000}},
            .want_mode = kFit,
            .want_assignment = {{"cpu", "three"}},
        },
        {
            .name = "Select the first flavor which fits",
            .test_cluster_queue_usage = {{FR("one", "cpu"), 4'000}},
            .want_mode = kFit,
            .want_assignment = {{"cpu", "two"}},
        },
        {
            .name = "Select deeper-borrowing flavor that fits when "
                    "shallower-borrowing flavor has no preemption candidates",
            .test_cluster_queue_quotas = {{"4", "0"},
                                          {"0", std::nullopt},
                                          {"0", std::nullopt}},
            .test_cluster_queue_usage = {{FR("one", "cpu"), 4'000}},
            .flavor_fungibility =
                FlavorFungibility{
                    .when_can_borrow = FungibilityPolicy::kTryNextFlavor,
                    .when_can_preempt = FungibilityPolicy::kTryNextFlavor,
                    .preference = "PreemptionOverBorrowing"},
            .simulation_result = {{FR("one", "cpu"),
                                   {PreemptionPossibility::kNoCandidates, 1}}},
            .want_mode = kFit,
            .want_assignment = {{"cpu", "two"}},
        },
    }),
    [](const ::testing::TestParamInfo<HierarchicalCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// TestIsPreferred: every vector of Kueue's table.

struct IsPreferredCase {
  std::string name;  // Kueue's
  GranularMode a;
  GranularMode b;
  FlavorFungibility config;
  bool want_preferred = false;
};

// Prints the case name when a case fails.
void PrintTo(const IsPreferredCase& c, std::ostream* os) { *os << c.name; }

class IsPreferredTest : public ::testing::TestWithParam<IsPreferredCase> {};

TEST_P(IsPreferredTest, Compare) {
  const IsPreferredCase& tc = GetParam();
  EXPECT_EQ(IsPreferred(tc.a, tc.b, tc.config), tc.want_preferred);
}

constexpr PreemptionMode kModeNoFit = PreemptionMode::kNoFit;
constexpr PreemptionMode kModeNoCandidates =
    PreemptionMode::kNoPreemptionCandidates;
constexpr PreemptionMode kModePreempt = PreemptionMode::kPreempt;
constexpr PreemptionMode kModeFit = PreemptionMode::kFit;
const FlavorFungibility kTryNextNoPreference{
    .when_can_borrow = FungibilityPolicy::kTryNextFlavor,
    .when_can_preempt = FungibilityPolicy::kTryNextFlavor};
const FlavorFungibility kTryNextBorrowingOverPreemption{
    .when_can_borrow = FungibilityPolicy::kTryNextFlavor,
    .when_can_preempt = FungibilityPolicy::kTryNextFlavor,
    .preference = "BorrowingOverPreemption"};
const FlavorFungibility kTryNextPreemptionOverBorrowing{
    .when_can_borrow = FungibilityPolicy::kTryNextFlavor,
    .when_can_preempt = FungibilityPolicy::kTryNextFlavor,
    .preference = "PreemptionOverBorrowing"};
const FlavorFungibility kPreemptionOverBorrowing{.preference =
                                                     "PreemptionOverBorrowing"};

INSTANTIATE_TEST_SUITE_P(
    Kueue, IsPreferredTest,
    ::testing::ValuesIn(std::vector<IsPreferredCase>{
        {"feature gate disabled prioritises preemption",
         {kModeFit, 0},
         {kModePreempt, 0},
         kTryNextNoPreference,
         true},
        {"explicit BorrowingOverPreemption prioritises borrowing distance",
         {kModePreempt, 1},
         {kModeFit, 2},
         kTryNextBorrowingOverPreemption,
         false},
        {"explicit PreemptionOverBorrowing prioritises lower preemption",
         {kModePreempt, 1},
         {kModeFit, 2},
         kTryNextPreemptionOverBorrowing,
         true},
        {"explicit PreemptionOverBorrowing breaks borrowing ties with "
         "preemption",
         {kModePreempt, 1},
         {kModeFit, 1},
         kTryNextPreemptionOverBorrowing,
         false},
        {"explicit PreemptionOverBorrowing rejects no-candidate flavor before "
         "borrowing comparison",
         {kModeNoCandidates, 1},
         {kModeFit, 2},
         kTryNextPreemptionOverBorrowing,
         false},
        {"explicit PreemptionOverBorrowing prefers fit over "
         "shallower-borrowing no-candidate flavor",
         {kModeFit, 2},
         {kModeNoCandidates, 1},
         kTryNextPreemptionOverBorrowing,
         true},
        {"no-candidate flavor remains preferable to no-fit flavor",
         {kModeNoCandidates, 1},
         {kModeNoFit, 0},
         {},
         true},
        {"no-fit flavor remains worse than no-candidate flavor",
         {kModeNoFit, 0},
         {kModeNoCandidates, 1},
         {},
         false},
        {"no-candidate flavors retain borrowing preference",
         {kModeNoCandidates, 1},
         {kModeNoCandidates, 2},
         kPreemptionOverBorrowing,
         true},
        {"no-candidate flavors retain borrowing preference in reverse",
         {kModeNoCandidates, 2},
         {kModeNoCandidates, 1},
         kPreemptionOverBorrowing,
         false},
    }),
    [](const ::testing::TestParamInfo<IsPreferredCase>& info) {
      return TestName(info.param.name);
    });

// KUEUE.md's invariants of isPreferred over every pair of modes: never
// reflexive, never both ways, no-fit never preferred.
TEST(IsPreferredInvariantsTest, HoldForAllModes) {
  const std::vector<PreemptionMode> modes = {
      PreemptionMode::kNoFit, PreemptionMode::kNoPreemptionCandidates,
      PreemptionMode::kPreempt, PreemptionMode::kReclaim, PreemptionMode::kFit};
  for (const FlavorFungibility& ff :
       {FlavorFungibility{}, kTryNextBorrowingOverPreemption,
        kTryNextPreemptionOverBorrowing}) {
    for (PreemptionMode ma : modes) {
      for (int la = 0; la < 3; ++la) {
        GranularMode a{ma, la};
        EXPECT_FALSE(IsPreferred(a, a, ff));
        if (ma == PreemptionMode::kNoFit) {
          EXPECT_FALSE(IsPreferred(a, {PreemptionMode::kNoFit, 0}, ff));
        }
        for (PreemptionMode mb : modes) {
          for (int lb = 0; lb < 3; ++lb) {
            GranularMode b{mb, lb};
            EXPECT_FALSE(IsPreferred(a, b, ff) && IsPreferred(b, a, ff));
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// TestFlavorScanRecordsLastTriedFlavorIdx: two flavors with the same quota
// in a cohort with a sibling; which bookmark the scan records.

struct ScanBookmarkCase {
  std::string name;  // Kueue's
  std::string nominal_per_flavor;
  std::string cohort_spare;
  std::string request;
  cache::FlavorResourceQuantities cluster_queue_usage;
  std::map<cache::FlavorResource, PreemptionSimulation> simulation_result;
  FlavorFungibility fungibility;
  AssignmentMode want_mode = kNoFit;
  int want_tried_flavor_idx = 0;
};

// Prints the case name when a case fails.
void PrintTo(const ScanBookmarkCase& c, std::ostream* os) { *os << c.name; }

class FlavorScanRecordsLastTriedFlavorIdxTest
    : public ::testing::TestWithParam<ScanBookmarkCase> {};

TEST_P(FlavorScanRecordsLastTriedFlavorIdxTest, Assign) {
  const ScanBookmarkCase& tc = GetParam();
  std::map<std::string, ResourceFlavor> flavors{
      {"flavor-1", ResourceFlavorBuilder("flavor-1").Build()},
      {"flavor-2", ResourceFlavorBuilder("flavor-2").Build()}};
  ClusterQueue cq = ClusterQueueBuilder("cq")
                        .Cohort("cohort")
                        .ResourceGroup({"cpu"})
                        .Flavor("flavor-1")
                        .Quota("cpu", tc.nominal_per_flavor)
                        .Flavor("flavor-2")
                        .Quota("cpu", tc.nominal_per_flavor)
                        .Build();
  cq.flavor_fungibility = tc.fungibility;
  ClusterQueue sibling = ClusterQueueBuilder("sibling")
                             .Cohort("cohort")
                             .ResourceGroup({"cpu"})
                             .Flavor("flavor-1")
                             .Quota("cpu", tc.cohort_spare)
                             .Flavor("flavor-2")
                             .Quota("cpu", tc.cohort_spare)
                             .Build();
  cache::Cache cache;
  cache.Rebuild({{"cq", cq}, {"sibling", sibling}}, {}, NamesOf(flavors), {});
  cache::ClusterQueueSnapshot* snapshot = cache.FindClusterQueue("cq");
  snapshot->AddUsage(tc.cluster_queue_usage);

  Workload wl = WorkloadBuilder("wl").Request("cpu", tc.request).Build();
  TestOracle oracle(tc.simulation_result);
  Assignment got =
      FlavorAssigner(wl, *snapshot, flavors, oracle, nullptr,
                     {.scheduling_cycle = 7, .cluster_queue_generation = 3})
          .Assign();

  EXPECT_EQ(got.RepresentativeMode(), tc.want_mode);
  ASSERT_EQ(got.last_state.last_tried_flavor_idx.size(), 1u);
  const auto& tried = got.last_state.last_tried_flavor_idx[0];
  ASSERT_TRUE(tried.count("cpu")) << "no bookmark recorded for cpu";
  EXPECT_EQ(tried.at("cpu"), tc.want_tried_flavor_idx);
  EXPECT_EQ(got.last_state.scheduling_cycle, 7);
  EXPECT_EQ(got.last_state.cluster_queue_generation, 3);
}

const FlavorFungibility kScanTryNext{
    .when_can_borrow = FungibilityPolicy::kTryNextFlavor,
    .when_can_preempt = FungibilityPolicy::kTryNextFlavor,
    .preference = "PreemptionOverBorrowing"};
const FlavorFungibility kScanBorrowMayStop{
    .when_can_borrow = FungibilityPolicy::kMayStopSearch,
    .when_can_preempt = FungibilityPolicy::kTryNextFlavor,
    .preference = "PreemptionOverBorrowing"};
const FlavorFungibility kScanMayStop{
    .when_can_borrow = FungibilityPolicy::kMayStopSearch,
    .when_can_preempt = FungibilityPolicy::kMayStopSearch,
    .preference = "PreemptionOverBorrowing"};

INSTANTIATE_TEST_SUITE_P(
    Kueue, FlavorScanRecordsLastTriedFlavorIdxTest,
    ::testing::ValuesIn(std::vector<ScanBookmarkCase>{
        {
            .name = "quota and topology both fit on the first flavor: "
                    "bookmark names it",
            .nominal_per_flavor = "10",
            .cohort_spare = "0",
            .request = "2",
            .fungibility = kScanTryNext,
            .want_mode = kFit,
            .want_tried_flavor_idx = 0,
        },
        {
            .name = "fits only by borrowing: bookmark says start over",
            .nominal_per_flavor = "1",
            .cohort_spare = "20",
            .request = "2",
            .fungibility = kScanTryNext,
            .want_mode = kFit,
            .want_tried_flavor_idx = -1,
        },
        {
            .name = "fits only by borrowing, but WhenCanBorrow is "
                    "MayStopSearch: bookmark names the first flavor",
            .nominal_per_flavor = "1",
            .cohort_spare = "20",
            .request = "2",
            .fungibility = kScanBorrowMayStop,
            .want_mode = kFit,
            .want_tried_flavor_idx = 0,
        },
        {
            .name = "needs preemption and candidates exist: bookmark names "
                    "the first flavor",
            .nominal_per_flavor = "2",
            .cohort_spare = "0",
            .request = "2",
            .cluster_queue_usage = {{FR("flavor-1", "cpu"), 2'000},
                                    {FR("flavor-2", "cpu"), 2'000}},
            .simulation_result =
                {{FR("flavor-1", "cpu"), {PreemptionPossibility::kPreempt, 0}},
                 {FR("flavor-2", "cpu"), {PreemptionPossibility::kPreempt, 0}}},
            .fungibility = kScanMayStop,
            .want_mode = kPreempt,
            .want_tried_flavor_idx = 0,
        },
        {
            .name = "needs preemption but no candidates: bookmark says start "
                    "over whatever the policy",
            .nominal_per_flavor = "2",
            .cohort_spare = "0",
            .request = "2",
            .cluster_queue_usage = {{FR("flavor-1", "cpu"), 2'000},
                                    {FR("flavor-2", "cpu"), 2'000}},
            .simulation_result = {{FR("flavor-1", "cpu"),
                                   {PreemptionPossibility::kNoCandidates, 0}},
                                  {FR("flavor-2", "cpu"),
                                   {PreemptionPossibility::kNoCandidates, 0}}},
            .fungibility = kScanMayStop,
            .want_mode = kPreempt,
            .want_tried_flavor_idx = -1,
        },
    }),
    [](const ::testing::TestParamInfo<ScanBookmarkCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// podset_reducer_test.go TestSearch: `fits` accepts counts whose total is
// at most a limit and returns that total.

struct SearchCase {
  std::string name;  // Kueue's
  std::vector<PodSet> pod_sets;
  int32_t count_limit = 0;
  int32_t want_count = 0;
  bool want_found = false;
};

// Prints the case name when a case fails.
void PrintTo(const SearchCase& c, std::ostream* os) { *os << c.name; }

PodSet MakePodSet(std::string name, int32_t count,
                  std::optional<int32_t> min_count = std::nullopt) {
  return {.name = std::move(name), .count = count, .min_count = min_count};
}

class SearchTest : public ::testing::TestWithParam<SearchCase> {};

TEST_P(SearchTest, Search) {
  const SearchCase& tc = GetParam();
  PodSetReducer<int32_t> reducer(
      CompactVector<PodSet>(tc.pod_sets),
      [&](const std::vector<int32_t>& counts) -> std::optional<int32_t> {
        int32_t total = 0;
        for (int32_t c : counts) total += c;
        if (total > tc.count_limit) return std::nullopt;
        return total;
      });
  std::optional<int32_t> got = reducer.Search();
  EXPECT_EQ(got.has_value(), tc.want_found);
  // Kueue returns the zero value when nothing is found.
  EXPECT_EQ(got.value_or(0), tc.want_count);
}

std::vector<PodSet> FourPartial() {
  return {MakePodSet("ps1", 5, 3), MakePodSet("ps2", 5, 4),
          MakePodSet("ps3", 5, 1), MakePodSet("ps4", 5, 2)};
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, SearchTest,
    ::testing::ValuesIn(std::vector<SearchCase>{
        {.name = "empty", .count_limit = 10},
        {.name = "partial not available",
         .pod_sets = {MakePodSet("ps1", 1), MakePodSet("ps2", 2, 2)},
         .count_limit = 2},
        {.name = "partial available",
         .pod_sets = FourPartial(),
         .count_limit = 15,
         .want_count = 15,
         .want_found = true},
        {.name = "one partial available",
         .pod_sets = {MakePodSet("ps1", 5, 3), MakePodSet("ps2", 5),
                      MakePodSet("ps3", 5), MakePodSet("ps4", 5)},
         .count_limit = 19,
         .want_count = 19,
         .want_found = true},
        {.name = "to min",
         .pod_sets = FourPartial(),
         .count_limit = 10,
         .want_count = 10,
         .want_found = true},
        {.name = "to max",
         .pod_sets = FourPartial(),
         .count_limit = 20,
         .want_count = 20,
         .want_found = true},
        {.name = "no overflow",
         .pod_sets =
             {MakePodSet("ps1", 150'000, 1), MakePodSet("ps2", 150'000, 1),
              MakePodSet("ps3", 150'000, 1), MakePodSet("ps4", 150'000, 1),
              MakePodSet("ps5", 150'000, 1), MakePodSet("ps6", 150'000, 1),
              MakePodSet("ps7", 150'000, 1), MakePodSet("ps8", 150'000, 1)},
         .count_limit = 150'000,
         .want_count = 150'000,
         .want_found = true},
        {.name = "max pods on 1.27",
         .pod_sets = {MakePodSet("ps1", 150'000, 1), MakePodSet("ps2", 1),
                      MakePodSet("ps3", 1), MakePodSet("ps4", 1),
                      MakePodSet("ps5", 1), MakePodSet("ps6", 1),
                      MakePodSet("ps7", 1), MakePodSet("ps8", 1)},
         .count_limit = 150'000,
         .want_count = 150'000,
         .want_found = true},
        {.name = "podset with replica count 0",
         .pod_sets = {MakePodSet("ps1", 0, 0)},
         .count_limit = 0},
    }),
    [](const ::testing::TestParamInfo<SearchCase>& info) {
      return TestName(info.param.name);
    });

// ---------------------------------------------------------------------------
// kq's own tests: the bookmark round trip, the NoPreemptionOracle, malformed
// node affinity and partial counts.

// One ClusterQueue with flavors one, two, three of 4 CPUs each.
class FlavorAssignerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* n : {"one", "two", "three"}) {
      flavors_[n] = ResourceFlavorBuilder(n).Build();
    }
    cache_.Rebuild({{"cq", ClusterQueueBuilder("cq")
                               .ResourceGroup({"cpu"})
                               .Flavor("one")
                               .Quota("cpu", "4")
                               .Flavor("two")
                               .Quota("cpu", "4")
                               .Flavor("three")
                               .Quota("cpu", "4")
                               .Build()}},
                   {}, NamesOf(flavors_), {});
    cq_ = cache_.FindClusterQueue("cq");
  }

  std::map<std::string, ResourceFlavor> flavors_;
  cache::Cache cache_;
  cache::ClusterQueueSnapshot* cq_ = nullptr;
  NoPreemptionOracle oracle_;
};

TEST_F(FlavorAssignerFixture, ScanResumesAfterTheLastTriedFlavor) {
  Workload wl = WorkloadBuilder("wl").Request("cpu", "1").Build();
  Assignment first = FlavorAssigner(wl, *cq_, flavors_, oracle_).Assign();
  EXPECT_EQ(first.pod_sets[0].flavors.at("cpu").name, "one");
  ASSERT_EQ(first.last_state.last_tried_flavor_idx,
            (std::vector<std::map<std::string, int>>{{{"cpu", 0}}}));
  EXPECT_TRUE(first.last_state.PendingFlavors());

  // The next assignment starts after flavor one.
  Assignment second =
      FlavorAssigner(wl, *cq_, flavors_, oracle_, &first.last_state).Assign();
  EXPECT_EQ(second.pod_sets[0].flavors.at("cpu").name, "two");
  EXPECT_EQ(second.last_state.last_tried_flavor_idx[0].at("cpu"), 1);

  // Reaching the last flavor records -1: start over next time.
  Assignment third =
      FlavorAssigner(wl, *cq_, flavors_, oracle_, &second.last_state).Assign();
  EXPECT_EQ(third.pod_sets[0].flavors.at("cpu").name, "three");
  EXPECT_EQ(third.last_state.last_tried_flavor_idx[0].at("cpu"), -1);
  EXPECT_FALSE(third.last_state.PendingFlavors());
  Assignment fourth =
      FlavorAssigner(wl, *cq_, flavors_, oracle_, &third.last_state).Assign();
  EXPECT_EQ(fourth.pod_sets[0].flavors.at("cpu").name, "one");
}

TEST(LastAssignmentTest, NextFlavorToTry) {
  LastAssignment last{.last_tried_flavor_idx = {{{"cpu", 1}}, {{"cpu", -1}}}};
  EXPECT_EQ(last.NextFlavorToTry(0, "cpu"), 2);
  EXPECT_EQ(last.NextFlavorToTry(1, "cpu"), 0);
  EXPECT_EQ(last.NextFlavorToTry(0, "memory"), 0);
  EXPECT_EQ(last.NextFlavorToTry(2, "cpu"), 0);
}

TEST(LastAssignmentTest, OutdatedOnlyWhenOldAndGenerationMoved) {
  LastAssignment last{.cluster_queue_generation = 5, .scheduling_cycle = 10};
  // This or the previous cycle: kept even though the generation moved.
  EXPECT_FALSE(LastAssignmentOutdated(last, 9, 10));
  EXPECT_FALSE(LastAssignmentOutdated(last, 9, 11));
  // Older: dropped once the generation moved.
  EXPECT_FALSE(LastAssignmentOutdated(last, 5, 12));
  EXPECT_TRUE(LastAssignmentOutdated(last, 6, 12));
}

TEST_F(FlavorAssignerFixture, NoPreemptionOracleGivesPreemptWithoutFit) {
  cq_->AddUsage({{FR("one", "cpu"), 3'000},
                 {FR("two", "cpu"), 3'000},
                 {FR("three", "cpu"), 3'000}});
  Workload wl = WorkloadBuilder("wl").Request("cpu", "2").Build();
  Assignment got = FlavorAssigner(wl, *cq_, flavors_, oracle_).Assign();
  // No candidates anywhere: every flavor is tried, the first is kept.
  EXPECT_EQ(got.RepresentativeMode(), kPreempt);
  EXPECT_EQ(got.pod_sets[0].flavors.at("cpu"),
            (FlavorAssignment{.name = "one",
                              .mode = kPreempt,
                              .tried_flavor_idx = -1,
                              .borrow = 0}));
  EXPECT_EQ(got.Message(),
            "couldn't assign flavors to pod set main: insufficient unused "
            "quota for cpu in flavor one, 1 more needed, insufficient unused "
            "quota for cpu in flavor three, 1 more needed, insufficient "
            "unused quota for cpu in flavor two, 1 more needed");
  EXPECT_EQ(got.pod_sets[0].attempts[0].preemption_possibility,
            PreemptionPossibility::kNoCandidates);
  EXPECT_EQ(got.no_fit_reason, "");
}

TEST_F(FlavorAssignerFixture, MalformedNodeAffinityIsAnError) {
  Workload wl = WorkloadBuilder("wl").Request("cpu", "1").Build();
  wl.pod_sets[0].required_node_affinity = {
      {.match_expressions = {{.key = "kubernetes.io/arch", .op = "Foo"}}}};
  std::map<std::string, ResourceFlavor> flavors = flavors_;
  flavors["one"].node_labels["kubernetes.io/arch"] = "amd64";
  Assignment got = FlavorAssigner(wl, *cq_, flavors, oracle_).Assign();
  EXPECT_EQ(got.RepresentativeMode(), kNoFit);
  EXPECT_EQ(got.Message(),
            "failed to assign flavors to pod set main: "
            "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported "
            "value: \"Foo\"");
  EXPECT_EQ(got.no_fit_reason, kReasonNoMatchingFlavor);
}

TEST_F(FlavorAssignerFixture, CountsScaleRequests) {
  Workload wl = WorkloadBuilder("wl")
                    .PodSet("main", 8)
                    .MinCount(2)
                    .Request("cpu", "500m")
                    .Build();
  FlavorAssigner assigner(wl, *cq_, flavors_, oracle_);
  EXPECT_EQ(assigner.Assign().RepresentativeMode(), kFit);
  const std::vector<int32_t> counts = {3};
  Assignment got = assigner.Assign(counts);
  EXPECT_EQ(got.pod_sets[0].count, 3);
  EXPECT_EQ(got.usage,
            (cache::FlavorResourceQuantities{{FR("one", "cpu"), 1'500}}));
  EXPECT_EQ(got.ToAdmission("cq").pod_set_assignments[0],
            (PodSetAssignment{.name = "main",
                              .flavors = {{"cpu", "one"}},
                              .resource_usage = {{"cpu", Qty("1500m")}},
                              .count = 3}));
}

// Non-CPU requests are rounded up per pod before multiplying by the count.
TEST_F(FlavorAssignerFixture, NonCpuRequestsRoundUpPerPod) {
  std::map<std::string, ClusterQueue> cqs{{"mem", ClusterQueueBuilder("mem")
                                                      .ResourceGroup({"memory"})
                                                      .Flavor("one")
                                                      .Quota("memory", "1Gi")
                                                      .Build()}};
  cache::Cache cache;
  cache.Rebuild(cqs, {}, NamesOf(flavors_), {});
  Workload wl = WorkloadBuilder("wl")
                    .PodSet("main", 2)
                    .Request("memory", "1500m")
                    .Build();
  Assignment got =
      FlavorAssigner(wl, *cache.FindClusterQueue("mem"), flavors_, oracle_)
          .Assign();
  EXPECT_EQ(got.usage,
            (cache::FlavorResourceQuantities{{FR("one", "memory"), 4}}));
}

// ---------------------------------------------------------------------------
// FlavorAssignerOptions.resources: Kueue's Configuration.resources seen by
// the flavor assigner. Kueue's flavorassigner and scheduler unit tables have
// no cases for it (they always pass QuotaCheckBlockUndeclared and build
// workload.Info without exclusions or transformations), so the cases below
// port its integration specs (test/integration/singlecluster/scheduler/
// excluderesources, resourcetransformations, quotacheckstrategy) under their
// names, asserting one flavor assignment instead of the eventual admission:
// the pod set requests, flavors, usage and Admission.resourceUsage. Where a
// spec waits for a workload to stay pending, the case asserts the mode and
// reason with NoPreemptionOracle (no candidates), as the scheduler would see
// it. kq's own cases are in snake_case.

struct ResourceConfigCase {
  std::string name;
  Workload workload;
  ClusterQueue cluster_queue;
  cache::FlavorResourceQuantities cluster_queue_usage;
  ResourceConfig resources;
  AssignmentMode want_rep_mode = kNoFit;
  std::vector<WantPodSet> want_pod_sets;
  cache::FlavorResourceQuantities want_usage;
  // nullopt: not compared (see NoFitReasonFollowsKueuesResourceOrder).
  std::optional<std::string> want_no_fit_reason = "";
  // Admission.podSetAssignments[].resourceUsage, per pod set, when Fit.
  std::vector<std::map<std::string, std::string>> want_resource_usage;
};

void PrintTo(const ResourceConfigCase& c, std::ostream* os) { *os << c.name; }

class ResourceConfigTest : public ::testing::TestWithParam<ResourceConfigCase> {
};

TEST_P(ResourceConfigTest, Assign) {
  const ResourceConfigCase& tc = GetParam();
  std::map<std::string, ResourceFlavor> flavors;
  for (const ResourceGroup& group : tc.cluster_queue.resource_groups) {
    for (const FlavorQuotas& f : group.flavors) {
      flavors[f.name] = ResourceFlavorBuilder(f.name).Build();
    }
  }
  cache::Cache cache;
  cache.Rebuild({{tc.cluster_queue.meta.name, tc.cluster_queue}}, {},
                NamesOf(flavors), {});
  cache::ClusterQueueSnapshot* cq =
      cache.FindClusterQueue(tc.cluster_queue.meta.name);
  ASSERT_NE(cq, nullptr);
  cq->AddUsage(tc.cluster_queue_usage);

  NoPreemptionOracle oracle;
  Assignment got =
      FlavorAssigner(tc.workload, *cq, flavors, oracle, nullptr,
                     FlavorAssignerOptions{.resources = &tc.resources})
          .Assign();

  EXPECT_EQ(got.RepresentativeMode(), tc.want_rep_mode);
  ExpectAssignment(got, tc.want_pod_sets, /*want_borrowing=*/0, tc.want_usage,
                   tc.want_no_fit_reason.value_or(got.no_fit_reason));
  if (tc.want_resource_usage.empty()) return;
  const Admission admission = got.ToAdmission(tc.cluster_queue.meta.name);
  ASSERT_EQ(admission.pod_set_assignments.size(),
            tc.want_resource_usage.size());
  for (size_t i = 0; i < tc.want_resource_usage.size(); ++i) {
    ResourceList want;
    for (const auto& [resource, q] : tc.want_resource_usage[i]) {
      want[resource] = Qty(q);
    }
    EXPECT_EQ(admission.pod_set_assignments[i].resource_usage, want)
        << "pod set " << admission.pod_set_assignments[i].name;
  }
}

std::vector<ResourceConfigCase> ResourceConfigCases() {
  // SchedulerWithExcludeResourcePrefixes.
  const ClusterQueue exclude_cq = ClusterQueueBuilder("test-cq")
                                      .ResourceGroup({"cpu", "memory",
                                                      "networking.other.com/"
                                                      "vpc"})
                                      .Flavor("default")
                                      .Quota("cpu", "10")
                                      .Quota("memory", "10Gi")
                                      .Quota("networking.other.com/vpc", "1000")
                                      .Build();
  const ResourceConfig exclude{
      .exclude_resource_prefixes = {"networking.example.com/",
                                    "storage.example.com/"}};

  // Quota check strategy.
  const ClusterQueue cpu_cq = ClusterQueueBuilder("test-cq")
                                  .ResourceGroup({"cpu"})
                                  .Flavor("default")
                                  .Quota("cpu", "10")
                                  .Build();
  const Workload undeclared_wl = WorkloadBuilder("undeclared-penalty-wl")
                                     .Request("cpu", "2")
                                     .Request(kGpu, "100")
                                     .Build();
  const ResourceConfig ignore_undeclared{
      .quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared};

  // Resource Transformations.
  const ClusterQueue transform_cq =
      ClusterQueueBuilder("test-cq")
          .ResourceGroup({"example.com/accelerator-memory",
                          "example.com/credits", "nvidia.com/gpu",
                          "nvidia.com/total-gpucores",
                          "nvidia.com/total-gpumem"})
          .Flavor("default")
          .Quota("example.com/accelerator-memory", "100Gi")
          .Quota("example.com/credits", "1000")
          .Quota("nvidia.com/gpu", "50")
          .Quota("nvidia.com/total-gpucores", "1000")
          .Quota("nvidia.com/total-gpumem", "102400")
          .Build();
  const ResourceConfig transform{
      .transformations = {
          {.input = "nvidia.com/mig-1g.5gb",
           .strategy = TransformationStrategy::kReplace,
           .outputs = {{"example.com/accelerator-memory", Qty("5Ki")},
                       {"example.com/credits", Qty("10")}}},
          {.input = "nvidia.com/gpucores",
           .strategy = TransformationStrategy::kReplace,
           .multiply_by = "nvidia.com/gpu",
           .outputs = {{"nvidia.com/total-gpucores", Qty("1")}}},
          {.input = "nvidia.com/gpumem",
           .strategy = TransformationStrategy::kReplace,
           .multiply_by = "nvidia.com/gpu",
           .outputs = {{"nvidia.com/total-gpumem", Qty("1")}}}}};

  // Resource Transformation: Retain CPU -> cpu_credits.
  ClusterQueue credits_cq = ClusterQueueBuilder("team-cluster-queue")
                                .WithinClusterQueue("LowerPriority")
                                .ResourceGroup({"cpu"})
                                .Flavor("on-demand")
                                .Quota("cpu", "9")
                                .Flavor("spot")
                                .Quota("cpu", "9")
                                .ResourceGroup({"cpu_credits"})
                                .Flavor("credits")
                                .Quota("cpu_credits", "8")
                                .Build();
  const ResourceConfig cpu_credits{
      .transformations = {{.input = "cpu",
                           .strategy = TransformationStrategy::kRetain,
                           .outputs = {{"cpu_credits", Qty("1")}}}}};

  return {
      {
          .name = "should admit workload ignoring excluded resource",
          .workload = WorkloadBuilder("test-wl")
                          .Request("cpu", "1")
                          .Request("networking.example.com/vpc", "100")
                          .Build(),
          .cluster_queue = exclude_cq,
          .resources = exclude,
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}}},
                             .requests = {{"cpu", "1"}}}},
          .want_usage = {{FR("default", "cpu"), 1'000}},
          .want_resource_usage = {{{"cpu", "1"}}},
      },
      {
          .name = "should ignore multiple excluded resource prefixes",
          .workload = WorkloadBuilder("multi-exclude-wl")
                          .Request("cpu", "2")
                          .Request("networking.example.com/vpc", "10")
                          .Request("storage.example.com/disk", "50")
                          .Build(),
          .cluster_queue = exclude_cq,
          .resources = exclude,
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}}},
                             .requests = {{"cpu", "2"}}}},
          .want_usage = {{FR("default", "cpu"), 2'000}},
          .want_resource_usage = {{{"cpu", "2"}}},
      },
      {
          // quota-wl-1 (8 CPUs) is admitted; quota-wl-2 stays pending.
          .name = "should enforce quota for non-excluded resources",
          .workload = WorkloadBuilder("quota-wl-2")
                          .Request("cpu", "5")
                          .Request("networking.example.com/vpc", "1")
                          .Build(),
          .cluster_queue = exclude_cq,
          .cluster_queue_usage = {{FR("default", "cpu"), 8'000}},
          .resources = exclude,
          .want_rep_mode = kPreempt,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kPreempt, -1}}},
                             .requests = {{"cpu", "5"}},
                             .reasons = {"insufficient unused quota for cpu "
                                         "in flavor default, 3 more needed"}}},
          .want_usage = {{FR("default", "cpu"), 5'000}},
      },
      {
          .name = "should use exact prefix matching",
          .workload = WorkloadBuilder("prefix-test-wl")
                          .Request("cpu", "1")
                          .Request("networking.other.com/vpc", "100")
                          .Build(),
          .cluster_queue = exclude_cq,
          .resources = exclude,
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}},
                                         {"networking.other.com/vpc",
                                          {"default", kFit, -1}}},
                             .requests = {{"cpu", "1"},
                                          {"networking.other.com/vpc",
                                           "100"}}}},
          .want_usage = {{FR("default", "cpu"), 1'000},
                         {FR("default", "networking.other.com/vpc"), 100}},
          .want_resource_usage = {{{"cpu", "1"},
                                   {"networking.other.com/vpc", "100"}}},
      },
      {
          .name = "should ignore undeclared resources and not use them to "
                  "calculate entry penalty",
          .workload = undeclared_wl,
          .cluster_queue = cpu_cq,
          .resources = ignore_undeclared,
          .want_rep_mode = kFit,
          // The pod set keeps the request; only the quota check skips it.
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}}},
                             .requests = {{"cpu", "2"}, {kGpu, "100"}}}},
          .want_usage = {{FR("default", "cpu"), 2'000}},
          .want_resource_usage = {{{"cpu", "2"}}},
      },
      {
          // With the gate off Kueue checks every resource: BlockUndeclared.
          .name = "should not admit workload with undeclared resources",
          .workload = undeclared_wl,
          .cluster_queue = cpu_cq,
          .want_pod_sets = {{.name = "main",
                             .requests = {{"cpu", "2"}, {kGpu, "100"}},
                             .reasons = {"resource example.com/gpu "
                                         "unavailable in ClusterQueue"}}},
          .want_no_fit_reason = kReasonNoMatchingFlavor,
      },
      {
          .name = "should transform resources with MultiplyBy",
          .workload = WorkloadBuilder("multiply-wl")
                          .Request("nvidia.com/gpu", "2")
                          .Request("nvidia.com/gpucores", "20")
                          .Request("nvidia.com/gpumem", "1024")
                          .Build(),
          .cluster_queue = transform_cq,
          .resources = transform,
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"nvidia.com/gpu", {"default", kFit, -1}},
                            {"nvidia.com/total-gpucores",
                             {"default", kFit, -1}},
                            {"nvidia.com/total-gpumem", {"default", kFit, -1}}},
                .requests = {{"nvidia.com/gpu", "2"},
                             {"nvidia.com/total-gpucores", "40"},
                             {"nvidia.com/total-gpumem", "2048"}}}},
          .want_usage = {{FR("default", "nvidia.com/gpu"), 2},
                         {FR("default", "nvidia.com/total-gpucores"), 40},
                         {FR("default", "nvidia.com/total-gpumem"), 2048}},
          .want_resource_usage = {{{"nvidia.com/gpu", "2"},
                                   {"nvidia.com/total-gpucores", "40"},
                                   {"nvidia.com/total-gpumem", "2048"}}},
      },
      {
          .name = "should handle multiple PodSets with transformations",
          .workload = WorkloadBuilder("multi-podset-wl")
                          .PodSet("ps01", 1)
                          .Request("nvidia.com/mig-1g.5gb", "2")
                          .PodSet("ps02", 2)
                          .Request("nvidia.com/gpu", "1")
                          .Request("nvidia.com/gpucores", "10")
                          .Build(),
          .cluster_queue = transform_cq,
          .resources = transform,
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "ps01",
                .flavors = {{"example.com/accelerator-memory",
                             {"default", kFit, -1}},
                            {"example.com/credits", {"default", kFit, -1}}},
                .requests = {{"example.com/accelerator-memory", "10240"},
                             {"example.com/credits", "20"}}},
               {.name = "ps02",
                .flavors = {{"nvidia.com/gpu", {"default", kFit, -1}},
                            {"nvidia.com/total-gpucores",
                             {"default", kFit, -1}}},
                .requests = {{"nvidia.com/gpu", "2"},
                             {"nvidia.com/total-gpucores", "20"}},
                .count = 2}},
          .want_usage = {{FR("default", "example.com/accelerator-memory"),
                          10240},
                         {FR("default", "example.com/credits"), 20},
                         {FR("default", "nvidia.com/gpu"), 2},
                         {FR("default", "nvidia.com/total-gpucores"), 20}},
          .want_resource_usage = {{{"example.com/accelerator-memory", "10240"},
                                   {"example.com/credits", "20"}},
                                  {{"nvidia.com/gpu", "2"},
                                   {"nvidia.com/total-gpucores", "20"}}},
      },
      {
          // wl-1 and wl-2 (3 CPUs each) hold 6 of the 8 credits.
          .name = "Creating a 3rd workload that should stay pending (not "
                  "enough credits)",
          .workload = WorkloadBuilder("wl").Request("cpu", "3").Build(),
          .cluster_queue = credits_cq,
          .cluster_queue_usage = {{FR("on-demand", "cpu"), 6'000},
                                  {FR("credits", "cpu_credits"), 6}},
          .resources = cpu_credits,
          .want_rep_mode = kPreempt,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"on-demand", kFit, 0}},
                                         {"cpu_credits",
                                          {"credits", kPreempt, -1}}},
                             .requests = {{"cpu", "3"}, {"cpu_credits", "3"}},
                             .reasons = {"insufficient unused quota for "
                                         "cpu_credits in flavor credits, 1 "
                                         "more needed"}}},
          .want_usage = {{FR("on-demand", "cpu"), 3'000},
                         {FR("credits", "cpu_credits"), 3}},
      },
      // kq's own: a transformation output the ClusterQueue does not cover
      // is an undeclared resource like any other.
      {
          .name = "transformation_output_not_in_cluster_queue_blocks",
          .workload = WorkloadBuilder("wl").Request("cpu", "2").Build(),
          .cluster_queue = cpu_cq,
          .resources = cpu_credits,
          .want_pod_sets = {{.name = "main",
                             .requests = {{"cpu", "2"}, {"cpu_credits", "2"}},
                             .reasons = {"resource cpu_credits unavailable "
                                         "in ClusterQueue"}}},
          .want_no_fit_reason = kReasonNoMatchingFlavor,
      },
      {
          .name = "transformation_output_not_in_cluster_queue_ignored",
          .workload = WorkloadBuilder("wl").Request("cpu", "2").Build(),
          .cluster_queue = cpu_cq,
          .resources = {.transformations = cpu_credits.transformations,
                        .quota_check_strategy =
                            QuotaCheckStrategy::kIgnoreUndeclared},
          .want_rep_mode = kFit,
          .want_pod_sets = {{.name = "main",
                             .flavors = {{"cpu", {"default", kFit, -1}}},
                             .requests = {{"cpu", "2"}, {"cpu_credits", "2"}}}},
          .want_usage = {{FR("default", "cpu"), 2'000}},
          .want_resource_usage = {{{"cpu", "2"}}},
      },
      {
          // Replace drops the input, so a ClusterQueue without it admits.
          .name = "replaced_input_needs_no_quota",
          .workload = WorkloadBuilder("wl")
                          .Request("nvidia.com/mig-1g.5gb", "1")
                          .Build(),
          .cluster_queue = transform_cq,
          .resources = transform,
          .want_rep_mode = kFit,
          .want_pod_sets =
              {{.name = "main",
                .flavors = {{"example.com/accelerator-memory",
                             {"default", kFit, -1}},
                            {"example.com/credits", {"default", kFit, -1}}},
                .requests = {{"example.com/accelerator-memory", "5Ki"},
                             {"example.com/credits", "10"}}}},
          .want_usage = {{FR("default", "example.com/accelerator-memory"),
                          5 * 1024},
                         {FR("default", "example.com/credits"), 10}},
      },
      {
          // Without the Configuration the same workload asks for a resource
          // the ClusterQueue does not have.
          .name = "untransformed_input_is_undeclared",
          .workload = WorkloadBuilder("wl")
                          .Request("nvidia.com/mig-1g.5gb", "1")
                          .Build(),
          .cluster_queue = transform_cq,
          .want_pod_sets = {{.name = "main",
                             .requests = {{"nvidia.com/mig-1g.5gb", "1"}},
                             .reasons = {"resource nvidia.com/mig-1g.5gb "
                                         "unavailable in ClusterQueue"}}},
          .want_no_fit_reason = kReasonNoMatchingFlavor,
      },
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, ResourceConfigTest,
                         ::testing::ValuesIn(ResourceConfigCases()),
                         [](const auto& info) {
                           return TestName(info.param.name);
                         });

// Kueue walks a pod set's resources in the order of its SliceRequests
// (VectorizedResourceRequests, beta and on): FNV-1a 64 hash of the name,
// then the name (pkg/resources/slice_requests.go). "example.com/gpu" and
// "cpu_credits" hash below "cpu", so Kueue stops on the undeclared resource
// before trying cpu, records no flavor attempt, and resolveNoFitReason
// reports NoMatchingFlavor; kq follows the same order.
TEST(ResourceOrderTest, NoFitReasonFollowsKueuesResourceOrder) {
  const ClusterQueue cq = ClusterQueueBuilder("test-cq")
                              .ResourceGroup({"cpu"})
                              .Flavor("default")
                              .Quota("cpu", "10")
                              .Build();
  cache::Cache cache;
  cache.Rebuild({{"test-cq", cq}}, {}, {"default"}, {});
  const std::map<std::string, ResourceFlavor> flavors = {
      {"default", ResourceFlavorBuilder("default").Build()}};
  NoPreemptionOracle oracle;
  const ResourceConfig cpu_credits{
      .transformations = {
          {.input = "cpu", .outputs = {{"cpu_credits", Qty("1")}}}}};
  const ResourceConfig none;
  for (const auto& [workload, resources] :
       std::vector<std::pair<Workload, const ResourceConfig*>>{
           {WorkloadBuilder("undeclared")
                .Request("cpu", "2")
                .Request(kGpu, "100")
                .Build(),
            &none},
           {WorkloadBuilder("credits").Request("cpu", "2").Build(),
            &cpu_credits}}) {
    SCOPED_TRACE(workload.meta.name);
    Assignment got =
        FlavorAssigner(workload, *cache.FindClusterQueue("test-cq"), flavors,
                       oracle, nullptr,
                       FlavorAssignerOptions{.resources = resources})
            .Assign();
    EXPECT_EQ(got.RepresentativeMode(), kNoFit);
    EXPECT_TRUE(got.pod_sets[0].attempts.empty());
    EXPECT_EQ(got.no_fit_reason, kReasonNoMatchingFlavor);
  }
}

}  // namespace
}  // namespace kq::scheduler
