// Two shortcuts of the classical search must never change an answer:
// - the bound that ends a search early when the preemptor cannot fit
//   whatever is removed (ClassicalOptions::skip_hopeless): over many
//   generated quota trees, holders and preemptors, the search with it
//   chooses exactly the targets, reasons and order the full search
//   (Kueue's) chooses, and leaves the tree as it was;
// - a WithinNominalMemo kept while holders come and go (kqd keeps one from
//   pass to pass): each search through it answers as a search without it.
//
// The trees mix what the bound reads: cohorts nested two deep with their
// own quota, standalone ClusterQueues, two flavors, borrowing and lending
// limits, every preemption policy, borrowWithinCohort with and without a
// priority threshold, evicted holders, preemptors contesting one or both
// flavors, and now and then a ClusterQueue over its quota.

#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/cache/cache.h"
#include "server/preemption/classical.h"
#include "server/preemption/holders.h"
#include "tests/server/preemption/preemption_test_util.h"
#include "tests/testing/builders.h"

namespace kq::preemption {
namespace {

using ::kq::cache::Cache;
using ::kq::cache::ClusterQueueSnapshot;
using ::kq::cache::FlavorResource;
using ::kq::cache::FlavorResourceQuantities;
using ::kq::preemption::test_util::kAny;
using ::kq::preemption::test_util::kLowerOrNewer;
using ::kq::preemption::test_util::kLowerPriority;
using ::kq::preemption::test_util::kNever;
using ::kq::preemption::test_util::kNow;
using ::kq::preemption::test_util::UsageOfTree;
using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::WorkloadBuilder;

constexpr const char* kFlavors[] = {"default", "spot"};

class Generator {
 public:
  explicit Generator(uint32_t seed) : random_(seed) {}

  int Uniform(int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random_);
  }
  bool OneIn(int n) { return Uniform(1, n) == 1; }
  template <typename T, size_t N>
  const T& Pick(const T (&values)[N]) {
    return values[Uniform(0, N - 1)];
  }
  const std::string& Pick(const std::vector<std::string>& values) {
    return values[Uniform(0, values.size() - 1)];
  }

 private:
  std::mt19937 random_;
};

// One generated search and everything it reads.
struct Scenario {
  Cache cache;
  // Stable addresses: the holders index points into it.
  std::deque<Workload> workloads;
  std::vector<const Workload*> holding;
  std::vector<std::string> cluster_queues;
  Workload incoming;
  Preemptor preemptor;
};

// Admits a new workload to a random ClusterQueue where it fits, now and
// then where it does not; returns it, or null when it was not admitted.
const Workload* AddHolder(Generator& g, Scenario& s) {
  const std::string& cq_name = g.Pick(s.cluster_queues);
  const std::string flavor = g.Pick(kFlavors);
  const int cpu = g.Uniform(1, 4);
  ClusterQueueSnapshot* cq = s.cache.FindClusterQueue(cq_name);
  const FlavorResourceQuantities usage = {{{flavor, "cpu"}, cpu * 1000}};
  if (!cq->Fits(usage) && !g.OneIn(10)) return nullptr;
  const size_t i = s.workloads.size();
  WorkloadBuilder workload(absl::StrCat("w", i));
  workload.Uid(absl::StrCat("uid-", g.Uniform(0, 99), "-", i))
      .Priority(g.Uniform(0, 3))
      .Created(kNow - absl::Minutes(g.Uniform(0, 50)))
      .Request("cpu", absl::StrCat(cpu));
  workload.ReserveQuota(AdmissionBuilder(cq_name)
                            .Assign("cpu", flavor, absl::StrCat(cpu))
                            .Build(),
                        kNow - absl::Minutes(g.Uniform(0, 5)));
  if (g.OneIn(8)) {
    workload.Condition(kConditionEvicted, "True", "Preempted", "",
                       kNow - absl::Minutes(1));
  }
  s.workloads.push_back(workload.Build());
  cq->AddUsage(usage);
  s.holding.push_back(&s.workloads.back());
  return s.holding.back();
}

void Generate(Generator& g, Scenario& s) {
  // Cohorts: a root, and up to two children of it, any of them with quota.
  std::vector<Cohort> cohorts;
  std::vector<std::string> cohort_names = {"root"};
  const int children = g.Uniform(0, 2);
  for (int i = 0; i < children; ++i)
    cohort_names.push_back(absl::StrCat("c", i));
  for (const std::string& name : cohort_names) {
    CohortBuilder cohort(name);
    if (name != "root") cohort.Parent("root");
    if (g.OneIn(3)) {
      cohort.Quota("default", "cpu", absl::StrCat(g.Uniform(0, 6)));
    }
    cohorts.push_back(cohort.Build());
  }
  // ClusterQueues, a few of them standalone.
  static const char* kWithin[] = {kNever, kLowerPriority, kLowerOrNewer, kAny};
  static const char* kReclaim[] = {kNever, kLowerPriority, kAny};
  std::vector<ClusterQueue> cluster_queues;
  const int count = g.Uniform(2, 6);
  for (int i = 0; i < count; ++i) {
    const std::string name = absl::StrCat("cq", i);
    ClusterQueueBuilder cq(name);
    if (!g.OneIn(6)) cq.Cohort(g.Pick(cohort_names));
    cq.ResourceGroup({"cpu"});
    for (const char* flavor : kFlavors) {
      const int nominal = g.Uniform(0, 8);
      cq.Quota(flavor, "cpu", absl::StrCat(nominal));
      if (g.OneIn(3)) cq.BorrowingLimit(absl::StrCat(g.Uniform(0, 6)));
      if (g.OneIn(4)) cq.LendingLimit(absl::StrCat(g.Uniform(0, nominal)));
    }
    cq.WithinClusterQueue(g.Pick(kWithin))
        .ReclaimWithinCohort(g.Pick(kReclaim));
    switch (g.Uniform(0, 2)) {
      case 0:
        break;
      case 1:
        cq.BorrowWithinCohort(kLowerPriority);
        break;
      default:
        cq.BorrowWithinCohort(kLowerPriority, g.Uniform(0, 3));
    }
    cluster_queues.push_back(cq.Build());
    s.cluster_queues.push_back(name);
  }
  std::map<std::string, ClusterQueue> cq_map;
  for (const ClusterQueue& cq : cluster_queues) cq_map[cq.meta.name] = cq;
  std::map<std::string, Cohort> cohort_map;
  for (const Cohort& cohort : cohorts) cohort_map[cohort.meta.name] = cohort;
  s.cache.Rebuild(cq_map, cohort_map, {"default", "spot"}, {});

  // Holders: admitted where they fit, now and then where they do not.
  const int holders = g.Uniform(0, 24);
  for (int i = 0; i < holders; ++i) AddHolder(g, s);

  // The preemptor: one flavor contested, sometimes a second one requested
  // too, contested or not.
  s.incoming = WorkloadBuilder("in")
                   .Uid("uid-in")
                   .Priority(g.Uniform(0, 4))
                   .Created(kNow - absl::Minutes(g.Uniform(0, 50)))
                   .Request("cpu", "1")
                   .Build();
  const int first = g.Uniform(0, 1);
  const FlavorResource contested{kFlavors[first], "cpu"};
  s.preemptor = Preemptor{.workload = &s.incoming,
                          .cluster_queue = g.Pick(s.cluster_queues),
                          .requests = {{contested, g.Uniform(1, 8) * 1000}},
                          .frs_need_preemption = {contested}};
  if (g.OneIn(3)) {
    const FlavorResource other{kFlavors[1 - first], "cpu"};
    s.preemptor.requests[other] = g.Uniform(1, 4) * 1000;
    if (g.OneIn(2)) s.preemptor.frs_need_preemption.insert(other);
  }
}

std::string Describe(const std::vector<Target>& targets) {
  std::string out;
  for (const Target& target : targets) {
    absl::StrAppend(&out, target.workload->meta.name, "/", target.reason, "/",
                    target.cluster_queue, " ");
  }
  return out;
}

TEST(ClassicalBoundTest, SkippingHopelessSearchesChangesNoAnswer) {
  int with_targets = 0;
  int without_targets = 0;
  std::map<std::string, int> reasons;
  for (uint32_t seed = 1; seed <= 4000; ++seed) {
    Generator g(seed);
    Scenario s;
    Generate(g, s);
    const auto before = UsageOfTree(s.cache);
    const HoldingQuota holders(s.holding);

    const std::vector<Target> full =
        ClassicalTargets(s.cache, s.preemptor, holders, kNow, {}, nullptr,
                         {.skip_hopeless = false});
    const std::vector<Target> bounded =
        ClassicalTargets(s.cache, s.preemptor, holders, kNow, {});
    WithinNominalMemo memo;
    const std::vector<Target> memoised =
        ClassicalTargets(s.cache, s.preemptor, holders, kNow, {}, &memo);

    ASSERT_EQ(Describe(bounded), Describe(full)) << "seed " << seed;
    ASSERT_EQ(Describe(memoised), Describe(full)) << "seed " << seed;
    ASSERT_EQ(UsageOfTree(s.cache), before) << "seed " << seed;
    (full.empty() ? without_targets : with_targets)++;
    for (const Target& target : full) ++reasons[target.reason];
  }

  // Both outcomes, and every reason, are common: the comparison is not
  // vacuous.
  EXPECT_GT(with_targets, 400);
  EXPECT_GT(without_targets, 400);
  EXPECT_GT(reasons[kReasonInClusterQueue], 400);
  EXPECT_GT(reasons[kReasonInCohortReclamation], 100);
  EXPECT_GT(reasons[kReasonInCohortReclaimWhileBorrowing], 100);
}

// The case the generated ones rarely reach: the preemptor has nothing to
// take in its own ClusterQueue, must borrow, and has no hierarchical
// advantage; only reclaiming while borrowing makes room. The bound must
// not end that search.
TEST(ClassicalBoundTest, ReclaimWhileBorrowingIsNotSkipped) {
  Cache cache;
  auto queue = [](const std::string& name, const std::string& nominal) {
    return ClusterQueueBuilder(name)
        .Cohort("root")
        .Quota("default", "cpu", nominal)
        .WithinClusterQueue(kLowerPriority)
        .ReclaimWithinCohort(kAny)
        .BorrowWithinCohort(kLowerPriority)
        .Build();
  };
  std::vector<Workload> admitted = {
      test_util::HoldingCpu("b1", 0, "b", "2"),
      test_util::HoldingCpu("b2", 0, "b", "2"),
      test_util::HoldingCpu("c1", 5, "c", "4"),
  };
  std::vector<const Workload*> holding = test_util::BuildTree(
      cache, {queue("a", "2"), queue("b", "0"), queue("c", "6")},
      {CohortBuilder("root").Build()}, {"default"}, admitted);
  const Workload incoming = test_util::Incoming(3, {{"cpu", "3"}}).Build();
  const FlavorResource cpu{"default", "cpu"};
  const Preemptor preemptor{.workload = &incoming,
                            .cluster_queue = "a",
                            .requests = {{cpu, 3000}},
                            .frs_need_preemption = {cpu}};
  for (bool skip_hopeless : {false, true}) {
    const std::vector<Target> targets =
        ClassicalTargets(cache, preemptor, holding, kNow, {}, nullptr,
                         {.skip_hopeless = skip_hopeless});
    EXPECT_EQ(Describe(targets),
              "b1/InCohortReclaimWhileBorrowing/b "
              "b2/InCohortReclaimWhileBorrowing/b ")
        << "skip_hopeless " << skip_hopeless;
  }
}

// kqd keeps one WithinNominalMemo from pass to pass while workloads are
// admitted and released in between: what it kept about a ClusterQueue's
// holders must be read again whenever they change.
TEST(ClassicalBoundTest, MemoKeptWhileHoldersChangeChangesNoAnswer) {
  int changes = 0;
  for (uint32_t seed = 1; seed <= 1000; ++seed) {
    Generator g(seed);
    Scenario s;
    Generate(g, s);
    HoldingQuota holders(s.holding);
    std::vector<const Workload*> held = s.holding;
    WithinNominalMemo memo;
    for (int step = 0; step < 6; ++step) {
      // The usage changed with the holders: the Oracle forgets the answers
      // about nodes, and only those.
      memo.ClearUsage();
      const std::vector<Target> fresh =
          ClassicalTargets(s.cache, s.preemptor, holders, kNow, {});
      const std::vector<Target> kept =
          ClassicalTargets(s.cache, s.preemptor, holders, kNow, {}, &memo);
      ASSERT_EQ(Describe(kept), Describe(fresh))
          << "seed " << seed << " step " << step;
      if (!held.empty() && g.OneIn(2)) {
        const size_t i = g.Uniform(0, held.size() - 1);
        const Workload* released = held[i];
        held.erase(held.begin() + i);
        holders.Remove(released, released->admission->cluster_queue);
        s.cache.FindClusterQueue(released->admission->cluster_queue)
            ->RemoveUsage(cache::UsageOf(*released));
        ++changes;
      } else if (const Workload* admitted = AddHolder(g, s)) {
        held.push_back(admitted);
        holders.Add(admitted);
        ++changes;
      }
    }
  }
  EXPECT_GT(changes, 3000);
}

}  // namespace
}  // namespace kq::preemption
