// Kueue's pkg/scheduler/scheduler_test.go, ported to kq's admission state:
// TestSchedule, TestLastSchedulingContext and TestEntryOrdering. Each
// TestSchedule case loads Kueue's fixture plus its own objects and
// workloads into an AdmissionState and runs exactly one Kueue scheduling
// cycle (RunPasses with max_passes = 1); TestLastSchedulingContext runs a
// cycle, deletes workloads, and runs another. The assertions are Kueue's,
// where kq models them: the admissions held after the cycle
// (wantAssignments), the workloads left in each ClusterQueue's heap
// (wantLeft) and parked as inadmissible (wantInadmissibleLeft), and the
// QuotaReserved / Admitted conditions of wantWorkloads. Kueue's events and
// metrics have no counterpart here. Case names are Kueue's, in snake_case.
//
// Kueue runs every case with and without WorkloadRequestUseMergePatch (how
// status is patched; nothing to model in kq) and
// UnadmittedWorkloadsObservability. Kueue's wantWorkloads are written for
// the latter on (its default at HEAD), and kq writes the same: the tiered
// QuotaReserved=False reasons (WaitingForQuota, ExceedsMaxQuota, ...) and
// the Admitted=False NoReservation that comes with them (Unadmitted()).
// status.resourceRequests, which the scheduler also writes, has no
// counterpart in kq and is not checked.
//
// TestSchedule cases not ported, and why:
//   error during admission
//       injects a failure of the workload status patch; kq's admission
//       state applies admissions in memory and cannot fail there.
//   partial admission disabled, multiple variable pod sets
//       needs the PartialAdmission feature gate off; kq always has it on
//       (Kueue's default).
//   container does not satisfy limitRange constraints
//       needs LimitRange objects, which kq does not have.
//   container resource requests exceed limits
//       needs container limits, which kq's pod sets do not carry.
//   workload-slice fits in single clusterQueue
//       needs workload slices (ElasticJobsViaWorkloadSlices).
//   block preemptions and signal `BlockedOnPreemptionGates` when a
//       preemption gate is present
//   do not signal `BlockedOnPreemptionGates` when a preemption gate is
//       present, but the workload fits without preemption
//   do not signal `BlockedOnPreemptionGates` when a preemption gate is
//       present, but the workload had nothing to preempt
//       need preemption gates (MultiKueueOrchestratedPreemption), which kq
//       workloads do not have.
//
// Every other TestSchedule case that issues preemptions is ported. They differ
// from Kueue's in one respect: Kueue's victims keep their quota until their
// job reconciler confirms the stop, while kq completes each eviction at
// once (Requeued=True, quota released). So the victims are missing from
// want_assignments, those with a LocalQueue are back in its heap
// (want_left), and freeing the quota moves the cohort's inadmissible
// workloads back to their heaps. The victims' Evicted and Preempted
// conditions and the preemptor's "Pending the preemption of N workload(s)"
// are Kueue's.
//
// Ported cases whose only preemption aspect is that the preemption oracle
// finds no candidates run, like every case, with kq's classical oracle
// (Oracle), which finds none there either. Two ported
// cases ("admit to second flavor when first needs preemption;
// WhenCanPreempt: TryNextFlavor" and "BorrowingOverPreemption preference:
// borrow in second flavor instead of preempting in first") have a first
// flavor where Kueue's oracle finds a candidate; either way the fitting
// second flavor is preferred, so the outcome is the same.
//
// TestLastSchedulingContext cases not ported: "when the next flavor is
// full, but can preempt on first" and "TryNextFlavor, but second flavor is
// full and can preempt on first" (both issue preemptions in the first
// cycle; not ported yet now that kq preempts).
//
// TestEntryOrdering cases not ported: the PrioritySortingWithinCohort=false
// variants (kq always sorts by priority), the requeuing timestamp
// "Creation" variant (kq's is fixed to Kueue's default, Eviction) and
// "PrioritizePreemptorWorkloads is enabled" (an alpha gate kq does not
// have).

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/core/objects.h"
#include "server/queue/manager.h"
#include "server/scheduler/scheduler.h"
#include "tests/server/admission/schedule_kueue_util.h"
#include "tests/testing/builders.h"

namespace kq::admission {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::NamespaceBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;

using kueue_port::Assignments;
using kueue_port::DepIn;
using kueue_port::ExpectConditions;
using kueue_port::kNow;
using kueue_port::Left;
using kueue_port::NoLongerFits;
using kueue_port::PreemptedBy;
using kueue_port::Preemptor;
using kueue_port::ReservedAndAdmitted;
using kueue_port::ScheduleCase;
using kueue_port::ScheduleFixture;
using kueue_port::SnakeCase;
using kueue_port::Unadmitted;
using kueue_port::Wl;

// ---------------------------------------------------------------------------
// Helpers shared by the tables.

// QuotaReserved=True with Admitted=False: some admission check is not Ready.
std::vector<Condition> ReservedWaitingForChecks(const std::string& cq) {
  return {Condition{kConditionQuotaReserved, "True", "QuotaReserved",
                    absl::StrCat("Quota reserved in ClusterQueue ", cq)},
          Condition{kConditionAdmitted, "False", "UnsatisfiedAdmissionChecks",
                    "The workload has not all checks ready"}};
}

// The "multiple preemptions ..." cases' ClusterQueues: other-alpha and
// other-beta in cohort "other", 2 CPUs each, preempting lower priorities
// within themselves (and, with `borrow_within_cohort`, while borrowing).
std::vector<ConfigObject> OtherCohortObjects(bool borrow_within_cohort) {
  std::vector<ConfigObject> objects;
  for (const std::string name : {"other-alpha", "other-beta"}) {
    ClusterQueueBuilder cq(name);
    cq.Cohort("other").WithinClusterQueue("LowerPriority");
    if (borrow_within_cohort) cq.BorrowWithinCohort("LowerPriority");
    cq.ResourceGroup({"cpu"}).Quota("default", "cpu", "2");
    objects.push_back(cq.Build());
  }
  objects.push_back(
      LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build());
  objects.push_back(
      LocalQueueBuilder("eng-beta", "other", "other-beta").Build());
  return objects;
}

// A priority-0 workload of LocalQueue "other" holding 2 CPUs of flavor
// default in `cq`.
Workload OtherHolder(std::string name, std::string namespace_name,
                     const std::string& cq) {
  return Wl(std::move(name), std::move(namespace_name))
      .Priority(0)
      .Queue("other")
      .Request("cpu", "2")
      .ReserveQuota(AdmissionBuilder(cq).Assign("cpu", "default", "2").Build(),
                    kNow)
      .Build();
}

// The "prefer ... preemption" cases' ClusterQueues: other-alpha (10 GPUs
// of on-demand and of spot; preempts lower priorities within itself and
// reclaims from lower priorities) and other-beta (no GPUs; preempting the
// same way only with `beta_preempts`) in cohort "other".
std::vector<ConfigObject> GpuCohortObjects(bool beta_preempts) {
  std::vector<ConfigObject> objects;
  for (const auto& [name, gpus] :
       std::vector<std::pair<std::string, std::string>>{{"other-alpha", "10"},
                                                        {"other-beta", "0"}}) {
    ClusterQueueBuilder cq(name);
    cq.Cohort("other");
    if (name == "other-alpha" || beta_preempts) {
      cq.WithinClusterQueue("LowerPriority")
          .ReclaimWithinCohort("LowerPriority");
    }
    cq.ResourceGroup({"gpu"})
        .Quota("on-demand", "gpu", gpus)
        .Quota("spot", "gpu", gpus);
    objects.push_back(cq.Build());
  }
  objects.push_back(
      LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build());
  objects.push_back(
      LocalQueueBuilder("eng-beta", "other", "other-beta").Build());
  return objects;
}

// A workload of LocalQueue "other" holding `gpus` GPUs of `flavor` in `cq`.
Workload GpuHolder(std::string name, std::string namespace_name,
                   const std::string& cq, const std::string& flavor,
                   int32_t priority, const std::string& gpus) {
  return Wl(std::move(name), std::move(namespace_name))
      .Priority(priority)
      .Queue("other")
      .Request("gpu", gpus)
      .ReserveQuota(AdmissionBuilder(cq).Assign("gpu", flavor, gpus).Build(),
                    kNow)
      .Build();
}

// The "partial admission single variable pod set, preempt ..." preemptor:
// `count` pods of one GPU each, at least 10.
Workload PartialPreemptor(int32_t count) {
  Workload wl = Wl("new", "eng-beta")
                    .Queue("main")
                    .Priority(4)
                    .PodSet("one", count)
                    .MinCount(10)
                    .Request("example.com/gpu", "1")
                    .Build();
  wl.meta.uid = "wl-new";
  wl.meta.labels["kueue.x-k8s.io/job-uid"] = "job-new";
  return wl;
}

// The conditions on the victim of PartialPreemptor in eng-beta.
std::vector<Condition> PartialVictim() {
  const std::string message =
      "Preempted to accommodate a workload (UID: wl-new, JobUID: job-new) "
      "due to prioritization in the ClusterQueue; preemptor path: "
      "/eng/eng-beta; preemptee path: /eng/eng-beta";
  return {Condition{kConditionEvicted, "True", "Preempted", message},
          Condition{"Preempted", "True", "InClusterQueue", message}};
}

// ---------------------------------------------------------------------------
// TestSchedule

class ScheduleKueueTest : public ::testing::TestWithParam<ScheduleCase> {};

TEST_P(ScheduleKueueTest, OneCycle) {
  const ScheduleCase& tc = GetParam();
  AdmissionState state;
  for (const ConfigObject& o : ScheduleFixture()) state.LoadObject(o);
  for (const ConfigObject& o : tc.objects) state.LoadObject(o);
  for (const Workload& wl : tc.workloads) state.LoadWorkload(wl);
  state.Rebuild(kNow);

  // One Kueue cycle; none when no ClusterQueue has a head to pop (Kueue's
  // Heads() then returns nothing).
  state.RunPasses(kNow, PassLimits{.max_passes = 1});

  EXPECT_EQ(Assignments(state), tc.want_assignments);
  EXPECT_EQ(Left(state, /*inadmissible=*/false), tc.want_left);
  EXPECT_EQ(Left(state, /*inadmissible=*/true), tc.want_inadmissible_left);
  ExpectConditions(state, tc.want_conditions);
}

// Kueue's three "capacity (not) blocked when lending clusterqueue ..."
// cases: ClusterQueueA (2 GPUs, one used by a1) has a2 pending for 2;
// ClusterQueueB (no GPUs, same cohort) has b1 pending for 1. Unless A can
// always reclaim (Any), a2 holds the capacity it would take and b1 must
// not borrow it.
ScheduleCase CapacityCase(std::string kueue_name, std::string reclaim) {
  const bool blocked = reclaim != "Any";
  ScheduleCase tc{
      .kueue_name = std::move(kueue_name),
      .objects =
          {
              ClusterQueueBuilder("ClusterQueueA")
                  .Cohort("root")
                  .ResourceGroup({"gpu"})
                  .Quota("on-demand", "gpu", "2")
                  .ReclaimWithinCohort(reclaim)
                  .Build(),
              ClusterQueueBuilder("ClusterQueueB")
                  .Cohort("root")
                  .ResourceGroup({"gpu"})
                  .Quota("on-demand", "gpu", "0")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "lq", "ClusterQueueA").Build(),
              LocalQueueBuilder("eng-beta", "lq", "ClusterQueueB").Build(),
          },
      .workloads =
          {
              Wl("a1-admitted", "eng-alpha")
                  .Queue("lq")
                  .Request("gpu", "1")
                  .ReserveQuota(AdmissionBuilder("ClusterQueueA")
                                    .Assign("gpu", "on-demand", "1")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("a2-pending", "eng-alpha")
                  .Queue("lq")
                  .Request("gpu", "2")
                  .Build(),
              Wl("b1-pending", "eng-beta")
                  .Created(kNow)
                  .Queue("lq")
                  .Request("gpu", "1")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/a1-admitted", AdmissionBuilder("ClusterQueueA")
                                            .Assign("gpu", "on-demand", "1")
                                            .Build()},
          },
      .want_inadmissible_left = {{"ClusterQueueA", {"eng-alpha/a2-pending"}}},
      .want_conditions =
          {
              {"eng-alpha/a2-pending",
               Unadmitted("WaitingForQuota",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for gpu in flavor "
                          "on-demand, 1 more needed")},
          },
  };
  if (blocked) {
    tc.want_left["ClusterQueueB"] = {"eng-beta/b1-pending"};
    tc.want_conditions["eng-beta/b1-pending"] = NoLongerFits();
  } else {
    tc.want_assignments["eng-beta/b1-pending"] =
        AdmissionBuilder("ClusterQueueB")
            .Assign("gpu", "on-demand", "1")
            .Build();
    tc.want_conditions["eng-beta/b1-pending"] =
        ReservedAndAdmitted("ClusterQueueB");
  }
  return tc;
}

// Kueue's three "... can borrow ... from the same flavor in the same cycle"
// cases: cq1..cq3 in cohort "co", each with 10 of r1 and r2 (borrowing
// limit 10), wl1 (priority -1) in cq1 and wl2 (priority -2) in cq2.
std::vector<ConfigObject> SameFlavorBorrowingObjects() {
  std::vector<ConfigObject> objects;
  for (const std::string name : {"cq1", "cq2", "cq3"}) {
    objects.push_back(ClusterQueueBuilder(name)
                          .Cohort("co")
                          .ReclaimWithinCohort("Any")
                          .WithinClusterQueue("LowerPriority")
                          .ResourceGroup({"r1", "r2"})
                          .Flavor("default")
                          .Quota("r1", "10")
                          .BorrowingLimit("10")
                          .Quota("r2", "10")
                          .BorrowingLimit("10")
                          .Build());
  }
  objects.push_back(LocalQueueBuilder("sales", "lq1", "cq1").Build());
  objects.push_back(LocalQueueBuilder("sales", "lq2", "cq2").Build());
  objects.push_back(LocalQueueBuilder("sales", "lq3", "cq3").Build());
  return objects;
}

// Kueue's two "hierarchical cohort ... lending limit" cases: cq-lender (10
// CPUs, lending at most `lending_limit`) and cq-borrower (5, borrowing up
// to 10, all used by wl-existing) under cohort child of root.
std::vector<ConfigObject> LendingHierarchyObjects(
    absl::string_view lending_limit) {
  return {
      CohortBuilder("root").Build(),
      CohortBuilder("child").Parent("root").Build(),
      ClusterQueueBuilder("cq-lender")
          .Cohort("child")
          .NamespaceSelector(DepIn("eng"))
          .ResourceGroup({"cpu"})
          .Quota("on-demand", "cpu", "10")
          .LendingLimit(lending_limit)
          .Build(),
      ClusterQueueBuilder("cq-borrower")
          .Cohort("child")
          .NamespaceSelector(DepIn("eng"))
          .ResourceGroup({"cpu"})
          .Quota("on-demand", "cpu", "5")
          .BorrowingLimit("10")
          .Build(),
      LocalQueueBuilder("eng-alpha", "lq-lender", "cq-lender").Build(),
      LocalQueueBuilder("eng-alpha", "lq-borrower", "cq-borrower").Build(),
  };
}

Workload ExistingBorrowerWorkload() {
  return Wl("wl-existing", "eng-alpha")
      .PodSet("main", 1)
      .Request("cpu", "5")
      .ReserveQuota(AdmissionBuilder("cq-borrower")
                        .Assign("cpu", "on-demand", "5")
                        .Build(),
                    kNow)
      .Build();
}

Admission ExistingBorrowerAdmission() {
  return AdmissionBuilder("cq-borrower")
      .Assign("cpu", "on-demand", "5")
      .Build();
}

// The "PreemptionOverBorrowing" / "BorrowingOverPreemption" fixtures: a
// ClusterQueue with 5 on-demand CPUs (no borrowing) and 0 spot CPUs
// (borrowing 5), and a lender with 5 spot CPUs.
std::vector<ConfigObject> PreferenceObjects(const std::string& prefix,
                                            const std::string& preference) {
  return {
      ClusterQueueBuilder(prefix + "-cq")
          .Cohort(prefix + "-cohort")
          .WithinClusterQueue("LowerPriority")
          .WhenCanBorrow(FungibilityPolicy::kTryNextFlavor)
          .WhenCanPreempt(FungibilityPolicy::kTryNextFlavor)
          .FungibilityPreference(preference)
          .ResourceGroup({"cpu"})
          .Quota("on-demand", "cpu", "5")
          .BorrowingLimit("0")
          .Quota("spot", "cpu", "0")
          .BorrowingLimit("5")
          .Build(),
      ClusterQueueBuilder(prefix + "-lender")
          .Cohort(prefix + "-cohort")
          .ResourceGroup({"cpu"})
          .Quota("on-demand", "cpu", "0")
          .Quota("spot", "cpu", "5")
          .Build(),
      LocalQueueBuilder("default", prefix + "-queue", prefix + "-cq").Build(),
  };
}

std::vector<ScheduleCase> ScheduleCases() {
  std::vector<ScheduleCase> cases;

  cases.push_back({
      .kueue_name = "use second flavor when the first has no preemption "
                    "candidates; WhenCanPreempt: MayStopSearch",
      .objects =
          {
              ClusterQueueBuilder("other-alpha")
                  .WithinClusterQueue("LowerPriority")
                  .WhenCanPreempt(FungibilityPolicy::kMayStopSearch)
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "50")
                  .BorrowingLimit("50")
                  .Quota("spot", "cpu", "100")
                  .BorrowingLimit("0")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build(),
          },
      .workloads =
          {
              Wl("admitted", "eng-alpha")
                  .Queue("other")
                  .Request("cpu", "50")
                  .Admitted(AdmissionBuilder("other-alpha")
                                .Assign("cpu", "on-demand", "50")
                                .Build(),
                            kNow)
                  .Build(),
              Wl("new", "eng-alpha")
                  .Queue("other")
                  .Request("cpu", "20")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/admitted", AdmissionBuilder("other-alpha")
                                         .Assign("cpu", "on-demand", "50")
                                         .Build()},
              {"eng-alpha/new", AdmissionBuilder("other-alpha")
                                    .Assign("cpu", "spot", "20")
                                    .Build()},
          },
      .want_conditions = {{"eng-alpha/new",
                           ReservedAndAdmitted("other-alpha")}},
  });

  cases.push_back({
      .kueue_name =
          "workload fits in single clusterQueue, with check state ready",
      .workloads =
          {
              Wl("foo", "sales")
                  .Queue("main")
                  .PodSet("one", 10)
                  .Request("cpu", "1")
                  .AdmissionCheck("check", "Ready")
                  .Build(),
          },
      .want_assignments = {{"sales/foo", AdmissionBuilder("sales")
                                             .PodSet("one", 10)
                                             .Assign("cpu", "default", "10000m")
                                             .Build()}},
      .want_conditions = {{"sales/foo", ReservedAndAdmitted("sales")}},
  });

  // Kueue only checks that nothing panics and the workload is untouched;
  // kq also sees that it is in no queue and holds nothing.
  cases.push_back({
      .kueue_name =
          "skip workload with missing or deleted ClusterQueue (NoFit)",
      .workloads =
          {
              Wl("missing-cq-workload", "sales")
                  .Queue("non-existent-queue")
                  .PodSet("set", 1)
                  .Request("cpu", "1")
                  .Build(),
          },
  });

  cases.push_back({
      .kueue_name =
          "flavors with mixed misconfiguration and insufficient quota",
      .objects =
          {
              ClusterQueueBuilder("custom-cq")
                  .QueueingStrategy(QueueingStrategy::kStrictFIFO)
                  .ResourceGroup({"cpu"})
                  .Quota("spot-tainted", "cpu", "20")
                  .BorrowingLimit("20")
                  .Quota("on-demand", "cpu", "15")
                  .BorrowingLimit("15")
                  .Build(),
              LocalQueueBuilder("sales", "custom-q", "custom-cq").Build(),
          },
      .workloads =
          {
              Wl("existing-on-demand-job", "sales")
                  .Queue("custom-q")
                  .Request("cpu", "10")
                  .Admitted(AdmissionBuilder("custom-cq")
                                .Assign("cpu", "on-demand", "10")
                                .Build(),
                            kNow)
                  .Build(),
              Wl("new-job", "sales")
                  .Queue("custom-q")
                  .Request("cpu", "10")
                  .Build(),
          },
      .want_assignments = {{"sales/existing-on-demand-job",
                            AdmissionBuilder("custom-cq")
                                .Assign("cpu", "on-demand", "10000m")
                                .Build()}},
      .want_left = {{"custom-cq", {"sales/new-job"}}},
      .want_conditions =
          {
              {"sales/new-job",
               Unadmitted(
                   "WaitingForQuota",
                   "couldn't assign flavors to pod set main: "
                   "insufficient unused quota for cpu in flavor "
                   "on-demand, 5 more needed, untolerated taint {key val "
                   "NoSchedule <nil>} in flavor spot-tainted")},
          },
  });

  cases.push_back({
      .kueue_name = "flavors with mixed taint mismatch and exceeding limits",
      .objects =
          {
              ClusterQueueBuilder("custom-cq2")
                  .QueueingStrategy(QueueingStrategy::kStrictFIFO)
                  .ResourceGroup({"cpu"})
                  .Quota("spot-tainted", "cpu", "20")
                  .BorrowingLimit("20")
                  .Quota("on-demand", "cpu", "5")
                  .BorrowingLimit("5")
                  .Build(),
              LocalQueueBuilder("sales", "custom-q2", "custom-cq2").Build(),
          },
      .workloads = {Wl("new-job2", "sales")
                        .Queue("custom-q2")
                        .Request("cpu", "10")
                        .Build()},
      .want_left = {{"custom-cq2", {"sales/new-job2"}}},
      .want_conditions =
          {
              {"sales/new-job2",
               Unadmitted("ExceedsMaxQuota",
                          "couldn't assign flavors to pod set main: "
                          "insufficient quota for cpu in flavor on-demand, "
                          "previously considered podsets requests (0) + "
                          "current podset request (10) > maximum capacity (5), "
                          "untolerated taint {key val NoSchedule <nil>} in "
                          "flavor spot-tainted")},
          },
  });

  cases.push_back({
      .kueue_name = "flavors are structurally incompatible",
      .objects =
          {
              ClusterQueueBuilder("custom-cq3")
                  .QueueingStrategy(QueueingStrategy::kStrictFIFO)
                  .ResourceGroup({"cpu"})
                  .Quota("spot-tainted", "cpu", "20")
                  .BorrowingLimit("20")
                  .Quota("spot-tainted-2", "cpu", "5")
                  .BorrowingLimit("5")
                  .Build(),
              LocalQueueBuilder("sales", "custom-q3", "custom-cq3").Build(),
          },
      .workloads = {Wl("new-job3", "sales")
                        .Queue("custom-q3")
                        .Request("cpu", "1")
                        .Build()},
      .want_left = {{"custom-cq3", {"sales/new-job3"}}},
      .want_conditions =
          {
              {"sales/new-job3",
               Unadmitted(
                   "NoMatchingFlavor",
                   "couldn't assign flavors to pod set main: untolerated "
                   "taint {key val NoSchedule <nil>} in flavor "
                   "spot-tainted, untolerated taint {key val2 NoSchedule "
                   "<nil>} in flavor spot-tainted-2")},
          },
  });

  cases.push_back({
      .kueue_name =
          "workload fits in single clusterQueue, with check state pending",
      .workloads =
          {
              Wl("foo", "sales")
                  .Queue("main")
                  .PodSet("one", 10)
                  .Request("cpu", "1")
                  .AdmissionCheck("check", "Pending")
                  .Build(),
          },
      .want_assignments = {{"sales/foo", AdmissionBuilder("sales")
                                             .PodSet("one", 10)
                                             .Assign("cpu", "default", "10000m")
                                             .Build()}},
      .want_conditions = {{"sales/foo", ReservedWaitingForChecks("sales")}},
  });

  cases.push_back({
      .kueue_name = "single clusterQueue full",
      .workloads =
          {
              Wl("new", "sales")
                  .Queue("main")
                  .PodSet("one", 11)
                  .Request("cpu", "1")
                  .Build(),
              Wl("assigned", "sales")
                  .PodSet("one", 40)
                  .Request("cpu", "1")
                  .ReserveQuota(AdmissionBuilder("sales")
                                    .PodSet("one", 40)
                                    .Assign("cpu", "default", "40000m")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_assignments = {{"sales/assigned",
                            AdmissionBuilder("sales")
                                .PodSet("one", 40)
                                .Assign("cpu", "default", "40000m")
                                .Build()}},
      .want_left = {{"sales", {"sales/new"}}},
      .want_conditions =
          {
              {"sales/new",
               Unadmitted(
                   "WaitingForQuota",
                   "couldn't assign flavors to pod set one: insufficient "
                   "unused quota for cpu in flavor default, 1 more "
                   "needed")},
          },
  });

  cases.push_back({
      .kueue_name = "failed to match clusterQueue selector",
      .workloads =
          {
              Wl("new", "sales")
                  .Queue("blocked")
                  .PodSet("one", 1)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_inadmissible_left = {{"eng-alpha", {"sales/new"}}},
      .want_conditions =
          {
              {"sales/new",
               Unadmitted("Misconfigured",
                          "workload namespace doesn't match ClusterQueue "
                          "selector")},
          },
  });

  cases.push_back({
      .kueue_name = "admit in different cohorts",
      .workloads =
          {
              Wl("new", "sales")
                  .Queue("main")
                  .PodSet("one", 1)
                  .Request("cpu", "1")
                  .Build(),
              // Will borrow.
              Wl("new", "eng-alpha")
                  .Queue("main")
                  .PodSet("one", 51)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_assignments =
          {
              {"sales/new", AdmissionBuilder("sales")
                                .PodSet("one", 1)
                                .Assign("cpu", "default", "1000m")
                                .Build()},
              {"eng-alpha/new", AdmissionBuilder("eng-alpha")
                                    .PodSet("one", 51)
                                    .Assign("cpu", "on-demand", "51000m")
                                    .Build()},
          },
      .want_conditions =
          {
              {"sales/new", ReservedAndAdmitted("sales")},
              {"eng-alpha/new", ReservedAndAdmitted("eng-alpha")},
          },
  });

  cases.push_back({
      .kueue_name = "admit in same cohort with no borrowing",
      .workloads =
          {
              Wl("new", "eng-alpha")
                  .Queue("main")
                  .PodSet("one", 40)
                  .Request("cpu", "1")
                  .Build(),
              Wl("new", "eng-beta")
                  .Queue("main")
                  .PodSet("one", 40)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/new", AdmissionBuilder("eng-alpha")
                                    .PodSet("one", 40)
                                    .Assign("cpu", "on-demand", "40000m")
                                    .Build()},
              {"eng-beta/new", AdmissionBuilder("eng-beta")
                                   .PodSet("one", 40)
                                   .Assign("cpu", "on-demand", "40000m")
                                   .Build()},
          },
      .want_conditions =
          {
              {"eng-alpha/new", ReservedAndAdmitted("eng-alpha")},
              {"eng-beta/new", ReservedAndAdmitted("eng-beta")},
          },
  });

  cases.push_back({
      .kueue_name = "assign multiple resources and flavors",
      .workloads =
          {
              Wl("new", "eng-beta")
                  .Queue("main")
                  .PodSet("one", 10)
                  .Request("cpu", "6")
                  .Request("example.com/gpu", "1")
                  .PodSet("two", 40)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-beta/new", AdmissionBuilder("eng-beta")
                                   .PodSet("one", 10)
                                   .Assign("cpu", "on-demand", "60000m")
                                   .Assign("example.com/gpu", "model-a", "10")
                                   .PodSet("two", 40)
                                   .Assign("cpu", "spot", "40000m")
                                   .Build()},
          },
      .want_conditions = {{"eng-beta/new", ReservedAndAdmitted("eng-beta")}},
  });

  cases.push_back({
      .kueue_name = "cannot borrow if cohort was assigned and would result in "
                    "overadmission",
      .workloads =
          {
              Wl("new", "eng-alpha")
                  .Queue("main")
                  .PodSet("one", 45)
                  .Request("cpu", "1")
                  .Build(),
              Wl("new", "eng-beta")
                  .Queue("main")
                  .PodSet("one", 56)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_assignments = {{"eng-alpha/new",
                            AdmissionBuilder("eng-alpha")
                                .PodSet("one", 45)
                                .Assign("cpu", "on-demand", "45000m")
                                .Build()}},
      .want_left = {{"eng-beta", {"eng-beta/new"}}},
      .want_conditions =
          {
              {"eng-alpha/new", ReservedAndAdmitted("eng-alpha")},
              {"eng-beta/new", NoLongerFits()},
          },
  });

  cases.push_back({
      .kueue_name = "can borrow if cohort was assigned and will not result in "
                    "overadmission",
      .workloads =
          {
              Wl("new", "eng-alpha")
                  .Queue("main")
                  .PodSet("one", 45)
                  .Request("cpu", "1")
                  .Build(),
              Wl("new", "eng-beta")
                  .Queue("main")
                  .PodSet("one", 55)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/new", AdmissionBuilder("eng-alpha")
                                    .PodSet("one", 45)
                                    .Assign("cpu", "on-demand", "45000m")
                                    .Build()},
              {"eng-beta/new", AdmissionBuilder("eng-beta")
                                   .PodSet("one", 55)
                                   .Assign("cpu", "on-demand", "55000m")
                                   .Build()},
          },
      .want_conditions =
          {
              {"eng-alpha/new", ReservedAndAdmitted("eng-alpha")},
              {"eng-beta/new", ReservedAndAdmitted("eng-beta")},
          },
  });

  cases.push_back({
      .kueue_name =
          "can borrow if needs reclaim from cohort in different flavor",
      .workloads =
          {
              Wl("can-reclaim", "eng-alpha")
                  .Queue("main")
                  .Request("cpu", "100")
                  .Build(),
              Wl("needs-to-borrow", "eng-beta")
                  .Queue("main")
                  .Request("cpu", "1")
                  .Build(),
              Wl("user-on-demand", "eng-beta")
                  .Request("cpu", "50")
                  .ReserveQuota(AdmissionBuilder("eng-beta")
                                    .Assign("cpu", "on-demand", "50000m")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("user-spot", "eng-beta")
                  .Request("cpu", "1")
                  .ReserveQuota(AdmissionBuilder("eng-beta")
                                    .Assign("cpu", "spot", "1000m")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-beta/user-spot", AdmissionBuilder("eng-beta")
                                         .Assign("cpu", "spot", "1000m")
                                         .Build()},
              {"eng-beta/user-on-demand",
               AdmissionBuilder("eng-beta")
                   .Assign("cpu", "on-demand", "50000m")
                   .Build()},
              {"eng-beta/needs-to-borrow",
               AdmissionBuilder("eng-beta")
                   .Assign("cpu", "on-demand", "1000m")
                   .Build()},
          },
      .want_left = {{"eng-alpha", {"eng-alpha/can-reclaim"}}},
      .want_conditions =
          {
              {"eng-alpha/can-reclaim",
               Unadmitted(
                   "WaitingForQuota",
                   "couldn't assign flavors to pod set main: "
                   "insufficient unused quota for cpu in flavor "
                   "on-demand, 50 more needed, insufficient unused quota "
                   "for cpu in flavor spot, 1 more needed")},
              {"eng-beta/needs-to-borrow", ReservedAndAdmitted("eng-beta")},
          },
  });

  cases.push_back({
      .kueue_name = "workload exceeds lending limit when borrow in cohort",
      .workloads =
          {
              Wl("a", "lend")
                  .Request("cpu", "2")
                  .ReserveQuota(AdmissionBuilder("lend-b")
                                    .Assign("cpu", "default", "2000m")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("b", "lend").Queue("lend-b-queue").Request("cpu", "3").Build(),
          },
      .want_assignments = {{"lend/a", AdmissionBuilder("lend-b")
                                          .Assign("cpu", "default", "2000m")
                                          .Build()}},
      .want_inadmissible_left = {{"lend-b", {"lend/b"}}},
      .want_conditions =
          {
              {"lend/b",
               Unadmitted(
                   "WaitingForQuota",
                   "couldn't assign flavors to pod set main: "
                   "insufficient unused quota for cpu in flavor default, "
                   "1 more needed")},
          },
  });

  // lender (10) reserves 10-3=7 CPUs and lends at most 3; borrower (5) has
  // used its nominal quota, so the 4 CPUs of wl-pending do not fit.
  cases.push_back({
      .kueue_name = "hierarchical cohort respects lending limit when borrowing",
      .objects = LendingHierarchyObjects("3"),
      .workloads =
          {
              ExistingBorrowerWorkload(),
              Wl("wl-pending", "eng-alpha")
                  .Queue("lq-borrower")
                  .PodSet("main", 1)
                  .Request("cpu", "4")
                  .Build(),
          },
      .want_assignments = {{"eng-alpha/wl-existing",
                            ExistingBorrowerAdmission()}},
      .want_inadmissible_left = {{"cq-borrower", {"eng-alpha/wl-pending"}}},
      .want_conditions =
          {
              {"eng-alpha/wl-pending",
               Unadmitted("WaitingForQuota",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "on-demand, 1 more needed")},
          },
  });

  // Same, with a lending limit of 5: the 5 CPUs of wl-borrowing fit.
  cases.push_back({
      .kueue_name = "hierarchical cohort allows borrowing up to lending limit",
      .objects = LendingHierarchyObjects("5"),
      .workloads =
          {
              ExistingBorrowerWorkload(),
              Wl("wl-borrowing", "eng-alpha")
                  .Queue("lq-borrower")
                  .PodSet("main", 1)
                  .Request("cpu", "5")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/wl-existing", ExistingBorrowerAdmission()},
              {"eng-alpha/wl-borrowing", AdmissionBuilder("cq-borrower")
                                             .Assign("cpu", "on-demand", "5")
                                             .Build()},
          },
      .want_conditions = {{"eng-alpha/wl-borrowing",
                           ReservedAndAdmitted("cq-borrower")}},
  });

  cases.push_back({
      .kueue_name = "cannot borrow resource not listed in clusterQueue",
      .workloads = {Wl("new", "eng-alpha")
                        .Queue("main")
                        .Request("example.com/gpu", "1")
                        .Build()},
      .want_left = {{"eng-alpha", {"eng-alpha/new"}}},
      .want_conditions =
          {
              {"eng-alpha/new",
               Unadmitted("NoMatchingFlavor",
                          "couldn't assign flavors to pod set main: resource "
                          "example.com/gpu unavailable in ClusterQueue")},
          },
  });

  cases.push_back({
      .kueue_name = "not enough resources to borrow, fallback to next flavor; "
                    "WhenCanPreempt: TryNextFlavor",
      .workloads =
          {
              Wl("new", "eng-alpha")
                  .Queue("main")
                  .PodSet("one", 60)
                  .Request("cpu", "1")
                  .Build(),
              Wl("existing", "eng-beta")
                  .PodSet("one", 45)
                  .Request("cpu", "1")
                  .ReserveQuota(AdmissionBuilder("eng-beta")
                                    .PodSet("one", 45)
                                    .Assign("cpu", "on-demand", "45000m")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/new", AdmissionBuilder("eng-alpha")
                                    .PodSet("one", 60)
                                    .Assign("cpu", "spot", "60000m")
                                    .Build()},
              {"eng-beta/existing", AdmissionBuilder("eng-beta")
                                        .PodSet("one", 45)
                                        .Assign("cpu", "on-demand", "45000m")
                                        .Build()},
          },
      .want_conditions = {{"eng-alpha/new", ReservedAndAdmitted("eng-alpha")}},
  });

  cases.push_back({
      .kueue_name = "workload should not fit in nonexistent clusterQueue",
      .workloads = {Wl("foo", "sales")
                        .Queue("cq-nonexistent-queue")
                        .Request("cpu", "1")
                        .Build()},
  });

  // The ClusterQueue is inactive (its flavor does not exist): its head is
  // not even popped.
  cases.push_back({
      .kueue_name =
          "workload should not fit in clusterQueue with nonexistent flavor",
      .workloads = {Wl("foo", "sales")
                        .Queue("flavor-nonexistent-queue")
                        .Request("cpu", "1")
                        .Build()},
      .want_left = {{"flavor-nonexistent-cq", {"sales/foo"}}},
  });

  cases.push_back({
      .kueue_name = "no overadmission while borrowing",
      .objects =
          {
              ClusterQueueBuilder("eng-gamma")
                  .Cohort("eng")
                  .ReclaimWithinCohort("Any")
                  .WithinClusterQueue("LowerPriority")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "50")
                  .BorrowingLimit("10")
                  .Quota("spot", "cpu", "0")
                  .BorrowingLimit("100")
                  .Build(),
              LocalQueueBuilder("eng-gamma", "main", "eng-gamma").Build(),
          },
      .workloads =
          {
              Wl("new", "eng-beta")
                  .Queue("main")
                  .Created(kNow - absl::Seconds(2))
                  .PodSet("one", 50)
                  .Request("cpu", "1")
                  .Build(),
              Wl("new-alpha", "eng-alpha")
                  .Queue("main")
                  .Created(kNow - absl::Seconds(1))
                  .PodSet("one", 1)
                  .Request("cpu", "1")
                  .Build(),
              Wl("new-gamma", "eng-gamma")
                  .Queue("main")
                  .Created(kNow)
                  .PodSet("one", 50)
                  .Request("cpu", "1")
                  .Build(),
              Wl("existing", "eng-gamma")
                  .PodSet("borrow-on-demand", 51)
                  .Request("cpu", "1")
                  .PodSet("use-all-spot", 100)
                  .Request("cpu", "1")
                  .ReserveQuota(AdmissionBuilder("eng-gamma")
                                    .PodSet("borrow-on-demand", 51)
                                    .Assign("cpu", "on-demand", "51")
                                    .PodSet("use-all-spot", 100)
                                    .Assign("cpu", "spot", "100")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-gamma/existing", AdmissionBuilder("eng-gamma")
                                         .PodSet("borrow-on-demand", 51)
                                         .Assign("cpu", "on-demand", "51")
                                         .PodSet("use-all-spot", 100)
                                         .Assign("cpu", "spot", "100")
                                         .Build()},
              {"eng-beta/new", AdmissionBuilder("eng-beta")
                                   .PodSet("one", 50)
                                   .Assign("cpu", "on-demand", "50")
                                   .Build()},
              {"eng-alpha/new-alpha", AdmissionBuilder("eng-alpha")
                                          .PodSet("one", 1)
                                          .Assign("cpu", "on-demand", "1")
                                          .Build()},
          },
      .want_inadmissible_left = {{"eng-gamma", {"eng-gamma/new-gamma"}}},
      .want_conditions =
          {
              {"eng-alpha/new-alpha", ReservedAndAdmitted("eng-alpha")},
              {"eng-beta/new", ReservedAndAdmitted("eng-beta")},
              {"eng-gamma/new-gamma",
               Unadmitted(
                   "WaitingForQuota",
                   "couldn't assign flavors to pod set one: insufficient "
                   "unused quota for cpu in flavor on-demand, 41 more "
                   "needed, insufficient unused quota for cpu in flavor "
                   "spot, 50 more needed")},
          },
  });

  cases.push_back({
      .kueue_name = "partial admission single variable pod set",
      .workloads =
          {
              Wl("new", "sales")
                  .Queue("main")
                  .PodSet("one", 50)
                  .MinCount(20)
                  .Request("cpu", "2")
                  .Build(),
          },
      .want_assignments = {{"sales/new", AdmissionBuilder("sales")
                                             .PodSet("one", 25)
                                             .Assign("cpu", "default", "50000m")
                                             .Build()}},
      .want_conditions = {{"sales/new", ReservedAndAdmitted("sales")}},
  });

  cases.push_back({
      .kueue_name = "partial admission multiple variable pod sets",
      .workloads =
          {
              Wl("new", "sales")
                  .Queue("main")
                  .PodSet("one", 20)
                  .Request("cpu", "1")
                  .PodSet("two", 30)
                  .MinCount(10)
                  .Request("cpu", "1")
                  .PodSet("three", 15)
                  .MinCount(5)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_assignments = {{"sales/new", AdmissionBuilder("sales")
                                             .PodSet("one", 20)
                                             .Assign("cpu", "default", "20000m")
                                             .PodSet("two", 20)
                                             .Assign("cpu", "default", "20000m")
                                             .PodSet("three", 10)
                                             .Assign("cpu", "default", "10000m")
                                             .Build()}},
      .want_conditions = {{"sales/new", ReservedAndAdmitted("sales")}},
  });

  cases.push_back({
      .kueue_name = "two workloads can borrow different resources from the "
                    "same flavor in the same cycle",
      .objects = SameFlavorBorrowingObjects(),
      .workloads =
          {
              Wl("wl1", "sales")
                  .Queue("lq1")
                  .Priority(-1)
                  .PodSet("main", 1)
                  .Request("r1", "16")
                  .Build(),
              Wl("wl2", "sales")
                  .Queue("lq2")
                  .Priority(-2)
                  .PodSet("main", 1)
                  .Request("r2", "16")
                  .Build(),
          },
      .want_assignments =
          {
              {"sales/wl1",
               AdmissionBuilder("cq1").Assign("r1", "default", "16").Build()},
              {"sales/wl2",
               AdmissionBuilder("cq2").Assign("r2", "default", "16").Build()},
          },
      .want_conditions =
          {
              {"sales/wl1", ReservedAndAdmitted("cq1")},
              {"sales/wl2", ReservedAndAdmitted("cq2")},
          },
  });

  cases.push_back({
      .kueue_name = "two workloads can borrow the same resources from the same "
                    "flavor in the same cycle if fits in the cohort quota",
      .objects = SameFlavorBorrowingObjects(),
      .workloads =
          {
              Wl("wl1", "sales")
                  .Queue("lq1")
                  .Priority(-1)
                  .PodSet("main", 1)
                  .Request("r1", "16")
                  .Build(),
              Wl("wl2", "sales")
                  .Queue("lq2")
                  .Priority(-2)
                  .PodSet("main", 1)
                  .Request("r1", "14")
                  .Build(),
          },
      .want_assignments =
          {
              {"sales/wl1",
               AdmissionBuilder("cq1").Assign("r1", "default", "16").Build()},
              {"sales/wl2",
               AdmissionBuilder("cq2").Assign("r1", "default", "14").Build()},
          },
      .want_conditions =
          {
              {"sales/wl1", ReservedAndAdmitted("cq1")},
              {"sales/wl2", ReservedAndAdmitted("cq2")},
          },
  });

  cases.push_back({
      .kueue_name = "only one workload can borrow one resources from the same "
                    "flavor in the same cycle if cohort quota cannot fit",
      .objects = SameFlavorBorrowingObjects(),
      .workloads =
          {
              Wl("wl1", "sales")
                  .Queue("lq1")
                  .Priority(-1)
                  .PodSet("main", 1)
                  .Request("r1", "16")
                  .Build(),
              Wl("wl2", "sales")
                  .Queue("lq2")
                  .Priority(-2)
                  .PodSet("main", 1)
                  .Request("r1", "16")
                  .Build(),
          },
      .want_assignments =
          {{"sales/wl1",
            AdmissionBuilder("cq1").Assign("r1", "default", "16").Build()}},
      .want_left = {{"cq2", {"sales/wl2"}}},
      .want_conditions =
          {
              {"sales/wl1", ReservedAndAdmitted("cq1")},
              {"sales/wl2", NoLongerFits()},
          },
  });

  // cq_a may preempt while borrowing but finds no candidates; it holds the
  // one CPU it could still borrow, which leaves enough for b in cq_b.
  cases.push_back({
      .kueue_name = "preemption while borrowing, workload waiting for "
                    "preemption should not block a borrowing workload in "
                    "another CQ",
      .objects =
          {
              ClusterQueueBuilder("cq_shared")
                  .Cohort("preemption-while-borrowing")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "4")
                  .BorrowingLimit("0")
                  .Build(),
              ClusterQueueBuilder("cq_a")
                  .Cohort("preemption-while-borrowing")
                  .ReclaimWithinCohort("LowerPriority")
                  .BorrowWithinCohort("LowerPriority")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "0")
                  .BorrowingLimit("3")
                  .Build(),
              ClusterQueueBuilder("cq_b")
                  .Cohort("preemption-while-borrowing")
                  .ReclaimWithinCohort("LowerPriority")
                  .BorrowWithinCohort("LowerPriority")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "0")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "lq_a", "cq_a").Build(),
              LocalQueueBuilder("eng-beta", "lq_b", "cq_b").Build(),
          },
      .workloads =
          {
              Wl("a", "eng-alpha")
                  .Queue("lq_a")
                  .Created(kNow + absl::Seconds(1))
                  .PodSet("main", 1)
                  .Request("cpu", "3")
                  .Build(),
              Wl("b", "eng-beta")
                  .Queue("lq_b")
                  .Created(kNow + absl::Seconds(2))
                  .PodSet("main", 1)
                  .Request("cpu", "1")
                  .Build(),
              Wl("admitted_a", "eng-alpha")
                  .Queue("lq_a")
                  .PodSet("main", 1)
                  .Request("cpu", "2")
                  .ReserveQuota(AdmissionBuilder("cq_a")
                                    .Assign("cpu", "default", "2")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/admitted_a",
               AdmissionBuilder("cq_a").Assign("cpu", "default", "2").Build()},
              {"eng-beta/b",
               AdmissionBuilder("cq_b").Assign("cpu", "default", "1").Build()},
          },
      .want_inadmissible_left = {{"cq_a", {"eng-alpha/a"}}},
      .want_conditions =
          {
              {"eng-alpha/a",
               Unadmitted(
                   "WaitingForQuota",
                   "couldn't assign flavors to pod set main: "
                   "insufficient unused quota for cpu in flavor default, "
                   "2 more needed")},
              {"eng-beta/b", ReservedAndAdmitted("cq_b")},
          },
  });

  cases.push_back({
      .kueue_name = "A workload is only eligible to do preemptions if it fits "
                    "fully within nominal quota",
      .objects =
          {
              ClusterQueueBuilder("other-alpha")
                  .Cohort("other")
                  .ReclaimWithinCohort("Any")
                  .WithinClusterQueue("LowerPriority")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "2")
                  .Build(),
              ClusterQueueBuilder("other-beta")
                  .Cohort("other")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "2")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build(),
              LocalQueueBuilder("eng-beta", "other", "other-beta").Build(),
          },
      .workloads =
          {
              Wl("a1", "eng-alpha")
                  .Priority(-1)
                  .Queue("other")
                  .Request("cpu", "1")
                  .ReserveQuota(AdmissionBuilder("other-alpha")
                                    .Assign("cpu", "on-demand", "1")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("b1", "eng-beta")
                  .Priority(-1)
                  .Queue("other")
                  .Request("cpu", "1")
                  .ReserveQuota(AdmissionBuilder("other-beta")
                                    .Assign("cpu", "on-demand", "1")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("incoming", "eng-alpha")
                  .Priority(1)
                  .Queue("other")
                  .Request("cpu", "3")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/a1", AdmissionBuilder("other-alpha")
                                   .Assign("cpu", "on-demand", "1")
                                   .Build()},
              {"eng-beta/b1", AdmissionBuilder("other-beta")
                                  .Assign("cpu", "on-demand", "1")
                                  .Build()},
          },
      .want_inadmissible_left = {{"other-alpha", {"eng-alpha/incoming"}}},
      .want_conditions =
          {
              {"eng-alpha/incoming",
               Unadmitted("WaitingForQuota",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "on-demand, 1 more needed")},
          },
  });

  cases.push_back({
      .kueue_name = "not enough resources",
      .workloads = {Wl("new", "sales")
                        .Queue("main")
                        .PodSet("one", 1)
                        .Request("cpu", "100")
                        .Build()},
      .want_left = {{"sales", {"sales/new"}}},
      .want_conditions =
          {
              {"sales/new",
               Unadmitted(
                   "ExceedsMaxQuota",
                   "couldn't assign flavors to pod set one: insufficient "
                   "quota for cpu in flavor default, previously "
                   "considered podsets requests (0) + current podset "
                   "request (100) > maximum capacity (50)")},
          },
  });

  cases.push_back(
      CapacityCase("capacity not blocked when lending clusterqueue can "
                   "reclaim (ReclaimWithinCohort=Any)",
                   "Any"));
  cases.push_back(
      CapacityCase("capacity blocked when lending clusterqueue not guaranteed "
                   "to reclaim (ReclaimWithinCohort=LowerPriority)",
                   "LowerPriority"));
  cases.push_back(
      CapacityCase("capacity blocked when lending clusterqueue not guaranteed "
                   "to reclaim (ReclaimWithinCohort=Never)",
                   "Never"));

  // The quota is at cohort GUARANTEED (4 CPUs), parent of ClusterQueue
  // guaranteed; best-effort hangs from ROOT. The guaranteed workload borrows
  // less (one level) and goes first despite its lower priority.
  cases.push_back({
      .kueue_name = "in a hierarchical cohort, workload borrowing less is "
                    "scheduled first",
      .objects =
          {
              CohortBuilder("root").Build(),
              CohortBuilder("guaranteed")
                  .Parent("root")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "4")
                  .Build(),
              ClusterQueueBuilder("guaranteed")
                  .Cohort("guaranteed")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "0")
                  .Build(),
              ClusterQueueBuilder("best-effort")
                  .Cohort("root")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "0")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "lq-guaranteed", "guaranteed")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "lq-best-effort", "best-effort")
                  .Build(),
          },
      .workloads =
          {
              Wl("guaranteed", "eng-alpha")
                  .Queue("lq-guaranteed")
                  .Priority(0)
                  .PodSet("one", 1)
                  .Request("cpu", "4")
                  .Build(),
              Wl("best-effort", "eng-alpha")
                  .Queue("lq-best-effort")
                  .Priority(3)
                  .PodSet("one", 1)
                  .Request("cpu", "4")
                  .Build(),
          },
      .want_assignments = {{"eng-alpha/guaranteed",
                            AdmissionBuilder("guaranteed")
                                .PodSet("one", 1)
                                .Assign("cpu", "default", "4")
                                .Build()}},
      .want_left = {{"best-effort", {"eng-alpha/best-effort"}}},
      .want_conditions =
          {
              {"eng-alpha/best-effort", NoLongerFits()},
              {"eng-alpha/guaranteed", ReservedAndAdmitted("guaranteed")},
          },
  });

  // `new` cannot take on-demand: the workload using it in cq2 is within
  // nominal quota and cannot be preempted. The assigner sees that and picks
  // spot.
  cases.push_back({
      .kueue_name =
          "don't assign flavor if there are no candidates for preemption",
      .objects =
          {
              ClusterQueueBuilder("cq1")
                  .Cohort("cohort")
                  .WithinClusterQueue("LowerPriority")
                  .ReclaimWithinCohort("Any")
                  .BorrowWithinCohort("LowerPriority")
                  .WhenCanPreempt(FungibilityPolicy::kMayStopSearch)
                  .WhenCanBorrow(FungibilityPolicy::kMayStopSearch)
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "0")
                  .BorrowingLimit("1")
                  .Quota("spot", "cpu", "0")
                  .BorrowingLimit("1")
                  .Build(),
              ClusterQueueBuilder("cq2")
                  .Cohort("cohort")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "1")
                  .Quota("spot", "cpu", "1")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "lq1", "cq1").Build(),
              LocalQueueBuilder("eng-alpha", "lq2", "cq2").Build(),
          },
      .workloads =
          {
              Wl("admitted", "eng-alpha")
                  .Queue("lq2")
                  .Request("cpu", "1")
                  .Admitted(AdmissionBuilder("cq2")
                                .Assign("cpu", "on-demand", "1")
                                .Build(),
                            kNow - absl::Seconds(1))
                  .Priority(0)
                  .Build(),
              Wl("new", "eng-alpha")
                  .Queue("lq1")
                  .Request("cpu", "1")
                  .Priority(100)
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/new",
               AdmissionBuilder("cq1").Assign("cpu", "spot", "1").Build()},
              {"eng-alpha/admitted",
               AdmissionBuilder("cq2").Assign("cpu", "on-demand", "1").Build()},
          },
      .want_conditions = {{"eng-alpha/new", ReservedAndAdmitted("cq1")}},
  });

  cases.push_back({
      .kueue_name = "pending admission check with nofit and fit flavors",
      .workloads =
          {
              Wl("pending-check", "eng-beta")
                  .Queue("main")
                  .Request("cpu", "80")
                  .AdmissionCheck("check", "Pending")
                  .Build(),
          },
      .want_assignments =
          {{"eng-beta/pending-check",
            AdmissionBuilder("eng-beta").Assign("cpu", "spot", "80").Build()}},
      .want_conditions = {{"eng-beta/pending-check",
                           ReservedWaitingForChecks("eng-beta")}},
  });

  cases.push_back({
      .kueue_name = "admit to second flavor when first needs preemption; "
                    "WhenCanPreempt: TryNextFlavor",
      .objects =
          {
              ClusterQueueBuilder("preempt-attempts-cq")
                  .WithinClusterQueue("LowerPriority")
                  .WhenCanPreempt(FungibilityPolicy::kTryNextFlavor)
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "1")
                  .Quota("spot", "cpu", "1")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "preempt-attempts-lq",
                                "preempt-attempts-cq")
                  .Build(),
          },
      .workloads =
          {
              Wl("blocker", "eng-alpha")
                  .Queue("preempt-attempts-lq")
                  .Request("cpu", "1")
                  .Priority(50)
                  .Admitted(AdmissionBuilder("preempt-attempts-cq")
                                .Assign("cpu", "on-demand", "1")
                                .Build(),
                            kNow)
                  .Build(),
              Wl("test-wl", "eng-alpha")
                  .Queue("preempt-attempts-lq")
                  .Request("cpu", "1")
                  .Priority(100)
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/test-wl", AdmissionBuilder("preempt-attempts-cq")
                                        .Assign("cpu", "spot", "1")
                                        .Build()},
              {"eng-alpha/blocker", AdmissionBuilder("preempt-attempts-cq")
                                        .Assign("cpu", "on-demand", "1")
                                        .Build()},
          },
      .want_conditions = {{"eng-alpha/test-wl",
                           ReservedAndAdmitted("preempt-attempts-cq")}},
  });

  cases.push_back({
      .kueue_name = "admit workload with zero-quantity request for resource "
                    "not in ClusterQueue",
      .workloads =
          {
              Wl("zero-resource-wl", "sales")
                  .Queue("main")
                  .Request("cpu", "1")
                  .Request("example.com/gpu", "0")
                  .Build(),
          },
      .want_assignments = {{"sales/zero-resource-wl",
                            AdmissionBuilder("sales")
                                .Assign("cpu", "default", "1000m")
                                .Build()}},
      .want_conditions = {{"sales/zero-resource-wl",
                           ReservedAndAdmitted("sales")}},
  });

  // nopc-root has 5 spot CPUs; nopc-mid holds nopc-cq (5 on-demand, all
  // used, no borrowing) and an idle sibling with 5 on-demand. On-demand
  // finds no preemption candidates (same priority), so the shallower
  // borrowing level it would have must not make it outrank spot, which
  // fits.
  cases.push_back({
      .kueue_name = "PreemptionOverBorrowing preference: select fitting second "
                    "flavor over first flavor with no preemption candidates",
      .objects =
          {
              CohortBuilder("nopc-root")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "0")
                  .Quota("spot", "cpu", "5")
                  .Build(),
              CohortBuilder("nopc-mid").Parent("nopc-root").Build(),
              ClusterQueueBuilder("nopc-cq")
                  .Cohort("nopc-mid")
                  .WithinClusterQueue("LowerPriority")
                  .WhenCanBorrow(FungibilityPolicy::kTryNextFlavor)
                  .WhenCanPreempt(FungibilityPolicy::kTryNextFlavor)
                  .FungibilityPreference("PreemptionOverBorrowing")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "5")
                  .BorrowingLimit("0")
                  .Quota("spot", "cpu", "0")
                  .Build(),
              ClusterQueueBuilder("nopc-sibling")
                  .Cohort("nopc-mid")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "5")
                  .Quota("spot", "cpu", "0")
                  .Build(),
              LocalQueueBuilder("default", "nopc-queue", "nopc-cq").Build(),
          },
      .workloads =
          {
              Wl("admitted-nopc", "default")
                  .Queue("nopc-queue")
                  .Priority(0)
                  .Request("cpu", "5")
                  .Admitted(AdmissionBuilder("nopc-cq")
                                .Assign("cpu", "on-demand", "5000m")
                                .Build(),
                            kNow)
                  .Build(),
              Wl("pending-nopc", "default")
                  .Queue("nopc-queue")
                  .Priority(0)
                  .Request("cpu", "5")
                  .Build(),
          },
      .want_assignments =
          {
              {"default/admitted-nopc", AdmissionBuilder("nopc-cq")
                                            .Assign("cpu", "on-demand", "5000m")
                                            .Build()},
              {"default/pending-nopc", AdmissionBuilder("nopc-cq")
                                           .Assign("cpu", "spot", "5000m")
                                           .Build()},
          },
      .want_conditions = {{"default/pending-nopc",
                           ReservedAndAdmitted("nopc-cq")}},
  });

  cases.push_back({
      .kueue_name = "BorrowingOverPreemption preference: borrow in second "
                    "flavor instead of preempting in first",
      .objects = PreferenceObjects("bop", "BorrowingOverPreemption"),
      .workloads =
          {
              Wl("low-bop", "default")
                  .Queue("bop-queue")
                  .Priority(-1)
                  .Request("cpu", "5")
                  .Admitted(AdmissionBuilder("bop-cq")
                                .Assign("cpu", "on-demand", "5000m")
                                .Build(),
                            kNow)
                  .Build(),
              Wl("high-bop", "default")
                  .Queue("bop-queue")
                  .Priority(0)
                  .Request("cpu", "5")
                  .Build(),
          },
      .want_assignments =
          {
              {"default/low-bop", AdmissionBuilder("bop-cq")
                                      .Assign("cpu", "on-demand", "5000m")
                                      .Build()},
              {"default/high-bop", AdmissionBuilder("bop-cq")
                                       .Assign("cpu", "spot", "5000m")
                                       .Build()},
          },
      .want_conditions = {{"default/high-bop", ReservedAndAdmitted("bop-cq")}},
  });

  cases.push_back({
      .kueue_name = "prevent integer overflow when sum of requests over "
                    "podsets exceeds MaxInt64",
      .objects =
          {
              ClusterQueueBuilder("overflow-cq")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "10000")
                  .Build(),
              LocalQueueBuilder("default", "overflow-queue", "overflow-cq")
                  .Build(),
          },
      .workloads =
          {
              Wl("vuln-wl", "default")
                  .Queue("overflow-queue")
                  .PodSet("ps1", 1)
                  .Request("cpu", "1000000m")
                  .PodSet("ps2", 1)
                  .Request("cpu", "9223372036854775000m")
                  .Build(),
          },
      .want_inadmissible_left = {{"overflow-cq", {"default/vuln-wl"}}},
      .want_conditions =
          {
              {"default/vuln-wl",
               Unadmitted(
                   "ExceedsMaxQuota",
                   "couldn't assign flavors to pod set ps2: insufficient "
                   "quota for cpu in flavor default, previously "
                   "considered podsets requests (1k) + current podset "
                   "request (9223372036854775) > maximum capacity "
                   "(10k)")},
          },
  });

  cases.push_back({
      .kueue_name =
          "prevent integer overflow in ResourceValue conversion to MilliValue",
      .objects =
          {
              ClusterQueueBuilder("overflow-cq")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "10")
                  .Build(),
              LocalQueueBuilder("default", "overflow-queue", "overflow-cq")
                  .Build(),
          },
      .workloads =
          {
              Wl("vuln-wl", "default")
                  .Queue("overflow-queue")
                  .PodSet("ps1", 1)
                  .Request("cpu", "9223372036854776")
                  .Build(),
          },
      .want_inadmissible_left = {{"overflow-cq", {"default/vuln-wl"}}},
      .want_conditions =
          {
              {"default/vuln-wl",
               Unadmitted(
                   "ExceedsMaxQuota",
                   "couldn't assign flavors to pod set ps1: insufficient "
                   "quota for cpu in flavor default, previously "
                   "considered podsets requests (0) + current podset "
                   "request (9223372036854775807m) > maximum capacity "
                   "(10)")},
          },
  });

  // ---- Preemption. Kueue's victims keep their quota until their job
  // reconciler confirms the stop; kq completes each eviction at once, so
  // the victims are left out of want_assignments (their quota is free)
  // and, when their LocalQueue exists, are back in its heap.
  cases.push_back({
      .kueue_name = "preempt workloads in ClusterQueue and cohort",
      .workloads =
          {
              Preemptor(Wl("preemptor", "eng-beta")
                            .Queue("main")
                            .Request("cpu", "20")
                            .Build()),
              Wl("use-all-spot", "eng-alpha")
                  .Request("cpu", "100")
                  .ReserveQuota(AdmissionBuilder("eng-alpha")
                                    .Assign("cpu", "spot", "100")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("low-1", "eng-beta")
                  .Priority(-1)
                  .Request("cpu", "30")
                  .ReserveQuota(AdmissionBuilder("eng-beta")
                                    .Assign("cpu", "on-demand", "30")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("low-2", "eng-beta")
                  .Priority(-2)
                  .Request("cpu", "10")
                  .ReserveQuota(AdmissionBuilder("eng-beta")
                                    .Assign("cpu", "on-demand", "10")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("borrower", "eng-alpha")
                  .Request("cpu", "60")
                  .ReserveQuota(AdmissionBuilder("eng-alpha")
                                    .Assign("cpu", "on-demand", "60")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/use-all-spot", AdmissionBuilder("eng-alpha")
                                             .Assign("cpu", "spot", "100")
                                             .Build()},
              {"eng-beta/low-1", AdmissionBuilder("eng-beta")
                                     .Assign("cpu", "on-demand", "30")
                                     .Build()},
          },
      .want_left = {{"eng-beta", {"eng-beta/preemptor"}}},
      .want_conditions =
          {
              {"eng-alpha/borrower",
               PreemptedBy("InCohortReclamation",
                           "reclamation within the cohort", "/eng/eng-beta",
                           "/eng/eng-alpha")},
              {"eng-beta/low-2",
               PreemptedBy("InClusterQueue",
                           "prioritization in the ClusterQueue",
                           "/eng/eng-beta", "/eng/eng-beta")},
              {"eng-beta/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "on-demand, 20 more needed, insufficient unused "
                          "quota for cpu in flavor spot, 20 more needed. "
                          "Pending the preemption of 2 workload(s)")},
          },
  });

  // Kueue also leaves "pending" parked inadmissible in other-alpha; kq
  // frees use-all's quota in the same cycle, which moves the inadmissible
  // workloads of the cohort back to their heaps (as Kueue does once the
  // eviction completes).
  cases.push_back({
      .kueue_name = "multiple CQs need preemption",
      .objects =
          {
              ClusterQueueBuilder("other-alpha")
                  .Cohort("other")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "50")
                  .BorrowingLimit("50")
                  .Build(),
              ClusterQueueBuilder("other-beta")
                  .Cohort("other")
                  .ReclaimWithinCohort("Any")
                  .WithinClusterQueue("LowerPriority")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "50")
                  .BorrowingLimit("10")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build(),
              LocalQueueBuilder("eng-beta", "other", "other-beta").Build(),
          },
      .workloads =
          {
              Preemptor(Wl("preemptor", "eng-beta")
                            .Priority(-1)
                            .Queue("other")
                            .Request("cpu", "1")
                            .Build()),
              Wl("pending", "eng-alpha")
                  .Priority(1)
                  .Queue("other")
                  .Request("cpu", "1")
                  .Build(),
              Wl("use-all", "eng-alpha")
                  .Request("cpu", "100")
                  .ReserveQuota(AdmissionBuilder("other-alpha")
                                    .Assign("cpu", "on-demand", "100")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_left = {{"other-alpha", {"eng-alpha/pending"}},
                    {"other-beta", {"eng-beta/preemptor"}}},
      .want_conditions =
          {
              {"eng-alpha/pending",
               Unadmitted("WaitingForQuota",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "on-demand, 1 more needed")},
              {"eng-alpha/use-all",
               PreemptedBy("InCohortReclamation",
                           "reclamation within the cohort", "/other/other-beta",
                           "/other/other-alpha")},
              {"eng-beta/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "on-demand, 1 more needed. Pending the preemption "
                          "of 1 workload(s)")},
          },
  });

  // Two ClusterQueues of one cohort preempt in the same cycle, each within
  // itself. The victims have a LocalQueue, so kq puts them back in their
  // heaps next to the preemptors.
  cases.push_back({
      .kueue_name = "multiple preemptions without borrowing",
      .objects = OtherCohortObjects(/*borrow_within_cohort=*/false),
      .workloads =
          {
              OtherHolder("a1", "eng-alpha", "other-alpha"),
              OtherHolder("b1", "eng-beta", "other-beta"),
              Preemptor(Wl("preemptor", "eng-alpha")
                            .Priority(100)
                            .Queue("other")
                            .Request("cpu", "2")
                            .Build()),
              Preemptor(Wl("preemptor", "eng-beta")
                            .Priority(100)
                            .Queue("other")
                            .Request("cpu", "2")
                            .Build()),
          },
      .want_left = {{"other-alpha", {"eng-alpha/a1", "eng-alpha/preemptor"}},
                    {"other-beta", {"eng-beta/b1", "eng-beta/preemptor"}}},
      .want_conditions =
          {
              {"eng-alpha/a1",
               PreemptedBy("InClusterQueue",
                           "prioritization in the ClusterQueue",
                           "/other/other-alpha", "/other/other-alpha")},
              {"eng-beta/b1",
               PreemptedBy("InClusterQueue",
                           "prioritization in the ClusterQueue",
                           "/other/other-beta", "/other/other-beta")},
              {"eng-alpha/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "default, 2 more needed. Pending the preemption of "
                          "1 workload(s)")},
              {"eng-beta/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "default, 2 more needed. Pending the preemption of "
                          "1 workload(s)")},
          },
  });

  // A Fit entry and a Preempt entry of one cohort in the same cycle: the
  // fit is admitted first and the preemptor still fits once its victim
  // goes.
  {
    std::vector<ConfigObject> objects;
    for (const auto& [name, cpus] :
         std::vector<std::pair<std::string, std::string>>{
             {"other-alpha", "1"}, {"other-beta", "2"}}) {
      objects.push_back(ClusterQueueBuilder(name)
                            .Cohort("other")
                            .WithinClusterQueue("LowerPriority")
                            .ResourceGroup({"cpu"})
                            .Quota("default", "cpu", cpus)
                            .Build());
    }
    objects.push_back(
        LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build());
    objects.push_back(
        LocalQueueBuilder("eng-beta", "other", "other-beta").Build());
    cases.push_back({
        .kueue_name =
            "multiple preemptions preemption possible after earlier workload "
            "fits",
        .objects = std::move(objects),
        .workloads =
            {
                OtherHolder("b1", "eng-beta", "other-beta"),
                Wl("fit", "eng-alpha")
                    .Priority(100)
                    .Queue("other")
                    .Request("cpu", "1")
                    .Build(),
                Preemptor(Wl("preemptor", "eng-beta")
                              .Priority(99)
                              .Queue("other")
                              .Request("cpu", "2")
                              .Build()),
            },
        .want_assignments =
            {
                {"eng-alpha/fit", AdmissionBuilder("other-alpha")
                                      .Assign("cpu", "default", "1")
                                      .Build()},
            },
        .want_left = {{"other-beta", {"eng-beta/b1", "eng-beta/preemptor"}}},
        .want_conditions =
            {
                {"eng-alpha/fit", ReservedAndAdmitted("other-alpha")},
                {"eng-beta/b1",
                 PreemptedBy("InClusterQueue",
                             "prioritization in the ClusterQueue",
                             "/other/other-beta", "/other/other-beta")},
                {"eng-beta/preemptor",
                 Unadmitted("WaitingForPreemptedWorkloads",
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for cpu in flavor "
                            "default, 1 more needed. Pending the preemption "
                            "of 1 workload(s)")},
            },
    });
  }

  // on-demand needs preemption within other-alpha, spot reclamation from
  // other-beta; the oracle rates reclamation better, so spot is chosen.
  {
    cases.push_back({
        .kueue_name = "prefer reclamation over cq priority based preemption",
        .objects = GpuCohortObjects(/*beta_preempts=*/true),
        .workloads =
            {
                GpuHolder("a1", "eng-alpha", "other-alpha", "on-demand", 50,
                          "5"),
                GpuHolder("b1", "eng-beta", "other-beta", "spot", 50, "5"),
                Preemptor(Wl("preemptor", "eng-alpha")
                              .Priority(100)
                              .Queue("other")
                              .Request("gpu", "6")
                              .Build()),
            },
        .want_assignments =
            {
                {"eng-alpha/a1", AdmissionBuilder("other-alpha")
                                     .Assign("gpu", "on-demand", "5")
                                     .Build()},
            },
        .want_left = {{"other-alpha", {"eng-alpha/preemptor"}},
                      {"other-beta", {"eng-beta/b1"}}},
        .want_conditions =
            {
                {"eng-beta/b1",
                 PreemptedBy("InCohortReclamation",
                             "reclamation within the cohort",
                             "/other/other-alpha", "/other/other-beta")},
                {"eng-alpha/preemptor",
                 Unadmitted("WaitingForPreemptedWorkloads",
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for gpu in flavor "
                            "on-demand, 1 more needed, insufficient unused "
                            "quota for gpu in flavor spot, 1 more needed. "
                            "Pending the preemption of 1 workload(s)")},
            },
    });
  }

  // on-demand needs preemption within other-alpha; spot would need both
  // that and reclamation, which is no better, so on-demand is kept.
  cases.push_back({
      .kueue_name =
          "prefer first preemption flavor when second flavor requires both "
          "reclaim and cq priority preemption",
      .objects = GpuCohortObjects(/*beta_preempts=*/false),
      .workloads =
          {
              GpuHolder("a1", "eng-alpha", "other-alpha", "on-demand", 50, "5"),
              GpuHolder("a2", "eng-alpha", "other-alpha", "spot", 50, "5"),
              GpuHolder("b1", "eng-beta", "other-beta", "spot", 50, "5"),
              Preemptor(Wl("preemptor", "eng-alpha")
                            .Priority(100)
                            .Queue("other")
                            .Request("gpu", "6")
                            .Build()),
          },
      .want_assignments =
          {
              {"eng-alpha/a2", AdmissionBuilder("other-alpha")
                                   .Assign("gpu", "spot", "5")
                                   .Build()},
              {"eng-beta/b1", AdmissionBuilder("other-beta")
                                  .Assign("gpu", "spot", "5")
                                  .Build()},
          },
      .want_left = {{"other-alpha", {"eng-alpha/a1", "eng-alpha/preemptor"}}},
      .want_conditions =
          {
              {"eng-alpha/a1",
               PreemptedBy("InClusterQueue",
                           "prioritization in the ClusterQueue",
                           "/other/other-alpha", "/other/other-alpha")},
              {"eng-alpha/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for gpu in flavor "
                          "on-demand, 1 more needed, insufficient unused "
                          "quota for gpu in flavor spot, 6 more needed. "
                          "Pending the preemption of 1 workload(s)")},
          },
  });

  // Both flavors need preemption within other-alpha (b1 is too high
  // priority to reclaim from), so the first is kept.
  cases.push_back({
      .kueue_name =
          "prefer first preemption flavor when second flavor also requires cq "
          "preemption",
      .objects = GpuCohortObjects(/*beta_preempts=*/false),
      .workloads =
          {
              GpuHolder("a1", "eng-alpha", "other-alpha", "on-demand", 50, "6"),
              GpuHolder("a2", "eng-alpha", "other-alpha", "spot", 50, "5"),
              GpuHolder("b1", "eng-beta", "other-beta", "spot", 9001, "5"),
              Preemptor(Wl("preemptor", "eng-alpha")
                            .Priority(100)
                            .Queue("other")
                            .Request("gpu", "5")
                            .Build()),
          },
      .want_assignments =
          {
              {"eng-alpha/a2", AdmissionBuilder("other-alpha")
                                   .Assign("gpu", "spot", "5")
                                   .Build()},
              {"eng-beta/b1", AdmissionBuilder("other-beta")
                                  .Assign("gpu", "spot", "5")
                                  .Build()},
          },
      .want_left = {{"other-alpha", {"eng-alpha/a1", "eng-alpha/preemptor"}}},
      .want_conditions =
          {
              {"eng-alpha/a1",
               PreemptedBy("InClusterQueue",
                           "prioritization in the ClusterQueue",
                           "/other/other-alpha", "/other/other-alpha")},
              {"eng-alpha/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for gpu in flavor "
                          "on-demand, 1 more needed, insufficient unused "
                          "quota for gpu in flavor spot, 5 more needed. "
                          "Pending the preemption of 1 workload(s)")},
          },
  });

  // WL2 (within CQ2's nominal quota, reclaimWithinCohort Any) is processed
  // before the older WL1 of CQ1, which needs to borrow, and reclaims from
  // CQ3's borrower of lowest priority. Freeing that quota at once moves
  // WL1 back to CQ1's heap in kq (Kueue: inadmissible until the eviction
  // completes).
  {
    Workload wl2 = Wl("WL2", "eng-beta")
                       .Created(kNow + absl::Seconds(1))
                       .Queue("lq")
                       .Request("gpu", "10")
                       .Build();
    wl2.meta.uid = "wl-WL2";
    wl2.meta.labels["kueue.x-k8s.io/job-uid"] = "job-WL2";
    auto holder = [](std::string name, std::string ns, const std::string& cq,
                     int32_t priority) {
      return Wl(std::move(name), std::move(ns))
          .Priority(priority)
          .Queue("lq")
          .Request("gpu", "5")
          .ReserveQuota(
              AdmissionBuilder(cq).Assign("gpu", "on-demand", "5").Build(),
              kNow)
          .Build();
    };
    const std::string message =
        "Preempted to accommodate a workload (UID: wl-WL2, JobUID: job-WL2) "
        "due to reclamation within the cohort; preemptor path: /other/CQ2; "
        "preemptee path: /other/CQ3";
    cases.push_back({
        .kueue_name =
            "workload requiring reclaimation prioritized over wl in another "
            "full cq",
        .objects =
            {
                ClusterQueueBuilder("CQ1")
                    .Cohort("other")
                    .ResourceGroup({"gpu"})
                    .Quota("on-demand", "gpu", "10")
                    .Build(),
                ClusterQueueBuilder("CQ2")
                    .Cohort("other")
                    .ReclaimWithinCohort("Any")
                    .ResourceGroup({"gpu"})
                    .Quota("on-demand", "gpu", "10")
                    .Build(),
                ClusterQueueBuilder("CQ3")
                    .Cohort("other")
                    .ResourceGroup({"gpu"})
                    .Quota("on-demand", "gpu", "0")
                    .Build(),
                LocalQueueBuilder("eng-alpha", "lq", "CQ1").Build(),
                LocalQueueBuilder("eng-beta", "lq", "CQ2").Build(),
                LocalQueueBuilder("eng-gamma", "lq", "CQ3").Build(),
            },
        .workloads =
            {
                holder("Admitted-Workload-1", "eng-alpha", "CQ1", 0),
                Wl("WL1", "eng-alpha")
                    .Created(kNow)
                    .Queue("lq")
                    .Request("gpu", "10")
                    .Build(),
                wl2,
                holder("Admitted-Workload-2", "eng-gamma", "CQ3", 0),
                holder("Admitted-Workload-3", "eng-gamma", "CQ3", 1),
            },
        .want_assignments =
            {
                {"eng-alpha/Admitted-Workload-1",
                 AdmissionBuilder("CQ1")
                     .Assign("gpu", "on-demand", "5")
                     .Build()},
                {"eng-gamma/Admitted-Workload-3",
                 AdmissionBuilder("CQ3")
                     .Assign("gpu", "on-demand", "5")
                     .Build()},
            },
        .want_left = {{"CQ1", {"eng-alpha/WL1"}},
                      {"CQ2", {"eng-beta/WL2"}},
                      {"CQ3", {"eng-gamma/Admitted-Workload-2"}}},
        .want_conditions =
            {
                {"eng-alpha/WL1",
                 Unadmitted("WaitingForQuota",
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for gpu in flavor "
                            "on-demand, 5 more needed")},
                {"eng-beta/WL2",
                 Unadmitted("WaitingForPreemptedWorkloads",
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for gpu in flavor "
                            "on-demand, 5 more needed. Pending the preemption "
                            "of 1 workload(s)")},
                {"eng-gamma/Admitted-Workload-2",
                 {Condition{kConditionEvicted, "True", "Preempted", message},
                  Condition{"Preempted", "True", "InCohortReclamation",
                            message}}},
            },
    });
  }

  // A zero request of a resource the ClusterQueue does not cover does not
  // stop preemption.
  cases.push_back({
      .kueue_name =
          "preempt when workload requests zero of a resource not defined in "
          "ClusterQueue",
      .objects =
          {
              ClusterQueueBuilder("preempt-zero-gpu-cq")
                  .WithinClusterQueue("LowerPriority")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "4")
                  .Build(),
              LocalQueueBuilder("sales", "preempt-zero-gpu-lq",
                                "preempt-zero-gpu-cq")
                  .Build(),
          },
      .workloads =
          {
              Preemptor(Wl("preemptor", "sales")
                            .Queue("preempt-zero-gpu-lq")
                            .Request("cpu", "2")
                            .Request("example.com/gpu", "0")
                            .Build()),
              Wl("low-priority", "sales")
                  .Priority(-1)
                  .Queue("preempt-zero-gpu-lq")
                  .Request("cpu", "4")
                  .ReserveQuota(AdmissionBuilder("preempt-zero-gpu-cq")
                                    .Assign("cpu", "default", "4000m")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_left = {{"preempt-zero-gpu-cq",
                     {"sales/low-priority", "sales/preemptor"}}},
      .want_conditions =
          {
              {"sales/low-priority",
               PreemptedBy("InClusterQueue",
                           "prioritization in the ClusterQueue",
                           "/preempt-zero-gpu-cq", "/preempt-zero-gpu-cq")},
              {"sales/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "default, 2 more needed. Pending the preemption of "
                          "1 workload(s)")},
          },
  });

  // Preempting in on-demand (no borrowing) is preferred over borrowing
  // spot. low-pob is Admitted too, so its eviction also resets Admitted.
  {
    Workload high = Wl("high-pob", "default")
                        .Queue("pob-queue")
                        .Priority(0)
                        .Request("cpu", "5")
                        .Build();
    high.meta.uid = "wl-high-pob";
    high.meta.labels["kueue.x-k8s.io/job-uid"] = "job-high-pob";
    const std::string message =
        "Preempted to accommodate a workload (UID: wl-high-pob, JobUID: "
        "job-high-pob) due to prioritization in the ClusterQueue; preemptor "
        "path: /pob-cohort/pob-cq; preemptee path: /pob-cohort/pob-cq";
    cases.push_back({
        .kueue_name =
            "PreemptionOverBorrowing preference: preempt in first flavor "
            "instead of borrowing in second",
        .objects = PreferenceObjects("pob", "PreemptionOverBorrowing"),
        .workloads =
            {
                Wl("low-pob", "default")
                    .Queue("pob-queue")
                    .Priority(-1)
                    .Request("cpu", "5")
                    .Admitted(AdmissionBuilder("pob-cq")
                                  .Assign("cpu", "on-demand", "5000m")
                                  .Build(),
                              kNow)
                    .Build(),
                high,
            },
        .want_left = {{"pob-cq", {"default/high-pob", "default/low-pob"}}},
        .want_conditions =
            {
                {"default/high-pob",
                 Unadmitted("WaitingForPreemptedWorkloads",
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for cpu in flavor "
                            "on-demand, 5 more needed. Pending the preemption "
                            "of 1 workload(s)")},
                {"default/low-pob",
                 {Condition{kConditionEvicted, "True", "Preempted", message},
                  Condition{"Preempted", "True", "InClusterQueue", message},
                  Condition{kConditionAdmitted, "False", "NoReservation",
                            "The workload has no reservation"}}},
            },
    });
  }

  // "new" (20 pods, at least 10) preempts "old" to run in full; with 30
  // pods it cannot run in full (20 GPUs at most), so partial admission
  // settles on 20 and preempts for that. "old" has no LocalQueue.
  cases.push_back({
      .kueue_name = "partial admission single variable pod set, preempt first",
      .workloads =
          {
              PartialPreemptor(20),
              Wl("old", "eng-beta")
                  .Priority(-4)
                  .PodSet("one", 10)
                  .Request("example.com/gpu", "1")
                  .ReserveQuota(AdmissionBuilder("eng-beta")
                                    .PodSet("one", 10)
                                    .Assign("example.com/gpu", "model-a", "10")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_left = {{"eng-beta", {"eng-beta/new"}}},
      .want_conditions =
          {
              {"eng-beta/new",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set one: "
                          "insufficient unused quota for example.com/gpu in "
                          "flavor model-a, 10 more needed. Pending the "
                          "preemption of 1 workload(s)")},
              {"eng-beta/old", PartialVictim()},
          },
  });

  cases.push_back({
      .kueue_name = "partial admission single variable pod set, preempt with "
                    "partial admission",
      .workloads =
          {
              PartialPreemptor(30),
              Wl("old", "eng-beta")
                  .Priority(-4)
                  .PodSet("one", 10)
                  .Request("example.com/gpu", "1")
                  .ReserveQuota(AdmissionBuilder("eng-beta")
                                    .PodSet("one", 10)
                                    .Assign("example.com/gpu", "model-a", "10")
                                    .Build(),
                                kNow)
                  .Build(),
          },
      .want_left = {{"eng-beta", {"eng-beta/new"}}},
      .want_conditions =
          {
              {"eng-beta/new",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set one: "
                          "insufficient unused quota for example.com/gpu in "
                          "flavor model-a, 10 more needed. Pending the "
                          "preemption of 1 workload(s)")},
              {"eng-beta/old", PartialVictim()},
          },
  });

  // Both preemptors need 3 of the cohort's 5 CPUs: only the first may
  // preempt; the second no longer fits once the first holds its usage, so
  // b1 is not preempted for nothing.
  {
    std::vector<ConfigObject> objects =
        OtherCohortObjects(/*borrow_within_cohort=*/true);
    objects.push_back(ClusterQueueBuilder("resource-bank")
                          .Cohort("other")
                          .ResourceGroup({"cpu"})
                          .Quota("default", "cpu", "1")
                          .Build());
    cases.push_back({
        .kueue_name =
            "multiple preemptions skip preemption when shared limited "
            "resource",
        .objects = std::move(objects),
        .workloads =
            {
                OtherHolder("a1", "eng-alpha", "other-alpha"),
                OtherHolder("b1", "eng-beta", "other-beta"),
                Preemptor(Wl("preemptor", "eng-alpha")
                              .Priority(100)
                              .Queue("other")
                              .Request("cpu", "3")
                              .Build()),
                Wl("pretending-preemptor", "eng-beta")
                    .Priority(99)
                    .Queue("other")
                    .Request("cpu", "3")
                    .Build(),
            },
        .want_assignments =
            {
                {"eng-beta/b1", AdmissionBuilder("other-beta")
                                    .Assign("cpu", "default", "2")
                                    .Build()},
            },
        .want_left = {{"other-alpha", {"eng-alpha/a1", "eng-alpha/preemptor"}},
                      {"other-beta", {"eng-beta/pretending-preemptor"}}},
        .want_conditions =
            {
                {"eng-alpha/a1",
                 PreemptedBy("InClusterQueue",
                             "prioritization in the ClusterQueue",
                             "/other/other-alpha", "/other/other-alpha")},
                {"eng-alpha/preemptor",
                 Unadmitted("WaitingForPreemptedWorkloads",
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for cpu in flavor "
                            "default, 2 more needed. Pending the preemption "
                            "of 1 workload(s)")},
                {"eng-beta/pretending-preemptor", NoLongerFits()},
            },
    });
  }

  // Of the three workloads of other-alpha only the two lowest-priority ones
  // go; nothing is reclaimed from other-beta.
  {
    std::vector<ConfigObject> objects = {
        ClusterQueueBuilder("other-alpha")
            .Cohort("other")
            .ReclaimWithinCohort("Any")
            .WithinClusterQueue("LowerPriority")
            .ResourceGroup({"cpu"})
            .Quota("on-demand", "cpu", "2")
            .Build(),
        ClusterQueueBuilder("other-beta")
            .Cohort("other")
            .ResourceGroup({"cpu"})
            .Quota("on-demand", "cpu", "2")
            .Build(),
        ClusterQueueBuilder("other-gamma")
            .Cohort("other")
            .ResourceGroup({"cpu"})
            .Quota("on-demand", "cpu", "2")
            .Build(),
        LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build(),
        LocalQueueBuilder("eng-beta", "other", "other-beta").Build(),
        LocalQueueBuilder("eng-gamma", "other", "other-gamma").Build(),
    };
    auto holder = [](std::string name, std::string ns, const std::string& cq,
                     int32_t priority) {
      return Wl(std::move(name), std::move(ns))
          .Priority(priority)
          .Queue("other")
          .Request("cpu", "1")
          .ReserveQuota(
              AdmissionBuilder(cq).Assign("cpu", "on-demand", "1").Build(),
              kNow)
          .Build();
    };
    auto one_cpu = [](const std::string& cq) {
      return AdmissionBuilder(cq).Assign("cpu", "on-demand", "1").Build();
    };
    Workload incoming = Wl("incoming", "eng-alpha")
                            .Priority(0)
                            .Queue("other")
                            .Request("cpu", "2")
                            .Build();
    incoming.meta.uid = "wl-incoming";
    incoming.meta.labels["kueue.x-k8s.io/job-uid"] = "job-incoming";
    const std::string message =
        "Preempted to accommodate a workload (UID: wl-incoming, JobUID: "
        "job-incoming) due to prioritization in the ClusterQueue; preemptor "
        "path: /other/other-alpha; preemptee path: /other/other-alpha";
    const std::vector<Condition> preempted = {
        Condition{kConditionEvicted, "True", "Preempted", message},
        Condition{"Preempted", "True", "InClusterQueue", message}};
    cases.push_back({
        .kueue_name = "minimal preemptions when target queue is exhausted",
        .objects = std::move(objects),
        .workloads =
            {
                holder("a1", "eng-alpha", "other-alpha", -2),
                holder("a2", "eng-alpha", "other-alpha", -2),
                holder("a3", "eng-alpha", "other-alpha", -1),
                holder("b1", "eng-beta", "other-beta", 0),
                holder("b2", "eng-beta", "other-beta", 0),
                holder("b3", "eng-beta", "other-beta", 0),
                incoming,
            },
        .want_assignments =
            {
                {"eng-alpha/a3", one_cpu("other-alpha")},
                {"eng-beta/b1", one_cpu("other-beta")},
                {"eng-beta/b2", one_cpu("other-beta")},
                {"eng-beta/b3", one_cpu("other-beta")},
            },
        .want_left = {{"other-alpha",
                       {"eng-alpha/a1", "eng-alpha/a2", "eng-alpha/incoming"}}},
        .want_conditions =
            {
                {"eng-alpha/a1", preempted},
                {"eng-alpha/a2", preempted},
                {"eng-alpha/incoming",
                 Unadmitted("WaitingForPreemptedWorkloads",
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for cpu in flavor "
                            "on-demand, 2 more needed. Pending the preemption "
                            "of 2 workload(s)")},
            },
    });
  }

  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, ScheduleKueueTest, ::testing::ValuesIn(ScheduleCases()),
    [](const ::testing::TestParamInfo<ScheduleCase>& info) {
      return SnakeCase(info.param.kueue_name);
    });

// ---------------------------------------------------------------------------
// TestLastSchedulingContext: the flavor-scan bookmark across cycles.

// Kueue's eng-cohort-{alpha,beta,theta}: StrictFIFO, reclaim from lower
// priority, on-demand 50 (borrowing up to 50) and spot 100 (no borrowing).
// `try_next_flavor` sets both fungibility policies to TryNextFlavor (theta)
// instead of MayStopSearch.
ClusterQueue CohortQueue(std::string name, bool try_next_flavor) {
  const FungibilityPolicy policy = try_next_flavor
                                       ? FungibilityPolicy::kTryNextFlavor
                                       : FungibilityPolicy::kMayStopSearch;
  return ClusterQueueBuilder(std::move(name))
      .Cohort("cohort")
      .QueueingStrategy(QueueingStrategy::kStrictFIFO)
      .WithinClusterQueue("Never")
      .ReclaimWithinCohort("LowerPriority")
      .WhenCanPreempt(policy)
      .WhenCanBorrow(policy)
      .ResourceGroup({"cpu"})
      .Quota("on-demand", "cpu", "50")
      .BorrowingLimit("50")
      .Quota("spot", "cpu", "100")
      .BorrowingLimit("0")
      .Build();
}

std::vector<ConfigObject> CohortQueues() {
  return {CohortQueue("eng-cohort-alpha", false),
          CohortQueue("eng-cohort-beta", false),
          CohortQueue("eng-cohort-theta", true)};
}

// A workload in namespace default holding `cpu` of `flavor` in `cq`,
// admitted, with no queue (Kueue's placeholders).
Workload Placeholder(std::string name, const std::string& cq,
                     const std::string& flavor, absl::string_view cpu) {
  return Wl(std::move(name), "default")
      .Request("cpu", cpu)
      .Admitted(AdmissionBuilder(cq).Assign("cpu", flavor, cpu).Build(), kNow)
      .Build();
}

Admission CpuAdmission(const std::string& cq, const std::string& flavor,
                       absl::string_view cpu) {
  return AdmissionBuilder(cq).Assign("cpu", flavor, cpu).Build();
}

struct LastSchedulingContextCase {
  std::string kueue_name;
  // The ClusterQueues of the case (Kueue's cqs).
  std::vector<ConfigObject> cluster_queues;
  std::vector<Workload> workloads;
  // Deleted between the two cycles (kq finishes them, which frees their
  // quota and requeues inadmissible workloads as a deletion does).
  std::vector<NamespacedName> delete_workloads;
  // After the first cycle: every admission held, and conditions.
  std::map<std::string, Admission> want_assignments;
  std::map<std::string, std::vector<Condition>> want_conditions;
  // After the second cycle: every admitted workload's admission.
  std::map<std::string, Admission> want_admissions_on_second_schedule;
};

void PrintTo(const LastSchedulingContextCase& c, std::ostream* os) {
  *os << c.kueue_name;
}

class LastSchedulingContextKueueTest
    : public ::testing::TestWithParam<LastSchedulingContextCase> {};

TEST_P(LastSchedulingContextKueueTest, TwoCycles) {
  const LastSchedulingContextCase& tc = GetParam();
  AdmissionState state;
  state.LoadObject(NamespaceBuilder("default").Build());
  state.LoadObject(ResourceFlavorBuilder("on-demand").Build());
  state.LoadObject(ResourceFlavorBuilder("spot").Build());
  for (const ConfigObject& o : tc.cluster_queues) state.LoadObject(o);
  state.LoadObject(LocalQueueBuilder("default", "main", "eng-alpha").Build());
  state.LoadObject(
      LocalQueueBuilder("default", "main-alpha", "eng-cohort-alpha").Build());
  state.LoadObject(
      LocalQueueBuilder("default", "main-beta", "eng-cohort-beta").Build());
  state.LoadObject(
      LocalQueueBuilder("default", "main-theta", "eng-cohort-theta").Build());
  for (const Workload& wl : tc.workloads) state.LoadWorkload(wl);
  state.Rebuild(kNow);

  ASSERT_EQ(state.RunPasses(kNow, PassLimits{.max_passes = 1}), 1);
  EXPECT_EQ(Assignments(state), tc.want_assignments);
  ExpectConditions(state, tc.want_conditions);

  const absl::Time later = kNow + absl::Seconds(1);
  for (const NamespacedName& key : tc.delete_workloads) {
    ASSERT_TRUE(
        state.FinishWorkload(key, "Succeeded", "deleted by the test", later)
            .ok());
  }
  state.RunPasses(later, PassLimits{.max_passes = 1});
  EXPECT_EQ(Assignments(state, /*admitted_only=*/true),
            tc.want_admissions_on_second_schedule);
}

std::vector<LastSchedulingContextCase> LastSchedulingContextCases() {
  std::vector<LastSchedulingContextCase> cases;

  // The first flavor is unblocked by removing workloads; the second cannot
  // be used (NoFit).
  cases.push_back({
      .kueue_name = "scheduling on the first flavor is unblocked after some "
                    "workloads were deleted",
      .cluster_queues =
          {
              ClusterQueueBuilder("eng-alpha")
                  .QueueingStrategy(QueueingStrategy::kBestEffortFIFO)
                  .WithinClusterQueue("LowerPriority")
                  .WhenCanPreempt(FungibilityPolicy::kMayStopSearch)
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "50")
                  .BorrowingLimit("50")
                  .Quota("spot", "cpu", "10")
                  .BorrowingLimit("0")
                  .Build(),
          },
      .workloads =
          {
              Wl("low-1", "default")
                  .Queue("main")
                  .Request("cpu", "50")
                  .Admitted(CpuAdmission("eng-alpha", "on-demand", "50"), kNow)
                  .Build(),
              Wl("preemptor", "default")
                  .Queue("main")
                  .Request("cpu", "20")
                  .Build(),
          },
      .delete_workloads = {{"default", "low-1"}},
      .want_assignments = {{"default/low-1",
                            CpuAdmission("eng-alpha", "on-demand", "50")}},
      .want_conditions =
          {
              {"default/preemptor",
               Unadmitted("WaitingForQuota",
                          "couldn't assign flavors to pod set main: "
                          "insufficient quota for cpu in flavor spot, "
                          "previously considered podsets requests (0) + "
                          "current podset request (20) > maximum capacity "
                          "(10), insufficient unused quota for cpu in flavor "
                          "on-demand, 20 more needed")},
          },
      .want_admissions_on_second_schedule =
          {
              {"default/preemptor",
               CpuAdmission("eng-alpha", "on-demand", "20")},
          },
  });

  cases.push_back({
      .kueue_name = "borrow before next flavor",
      .cluster_queues = CohortQueues(),
      .workloads =
          {
              Placeholder("placeholder", "eng-cohort-alpha", "on-demand", "50"),
              Wl("borrower", "default")
                  .Queue("main-alpha")
                  .Request("cpu", "20")
                  .Build(),
              Wl("workload1", "default")
                  .Queue("main-beta")
                  .Request("cpu", "20")
                  .Build(),
          },
      .want_assignments =
          {
              {"default/placeholder",
               CpuAdmission("eng-cohort-alpha", "on-demand", "50")},
              {"default/borrower",
               CpuAdmission("eng-cohort-alpha", "on-demand", "20")},
              {"default/workload1",
               CpuAdmission("eng-cohort-beta", "on-demand", "20")},
          },
      .want_conditions =
          {
              {"default/borrower", ReservedAndAdmitted("eng-cohort-alpha")},
              {"default/workload1", ReservedAndAdmitted("eng-cohort-beta")},
          },
      .want_admissions_on_second_schedule =
          {
              {"default/placeholder",
               CpuAdmission("eng-cohort-alpha", "on-demand", "50")},
              {"default/workload1",
               CpuAdmission("eng-cohort-beta", "on-demand", "20")},
              {"default/borrower",
               CpuAdmission("eng-cohort-alpha", "on-demand", "20")},
          },
  });

  cases.push_back({
      .kueue_name = "borrow after all flavors",
      .cluster_queues = CohortQueues(),
      .workloads =
          {
              Placeholder("placeholder", "eng-cohort-alpha", "on-demand", "50"),
              Placeholder("placeholder1", "eng-cohort-theta", "on-demand",
                          "50"),
              Wl("workload", "default")
                  .Queue("main-theta")
                  .Request("cpu", "20")
                  .Build(),
          },
      .want_assignments =
          {
              {"default/placeholder",
               CpuAdmission("eng-cohort-alpha", "on-demand", "50")},
              {"default/placeholder1",
               CpuAdmission("eng-cohort-theta", "on-demand", "50")},
              {"default/workload",
               CpuAdmission("eng-cohort-theta", "spot", "20")},
          },
      .want_conditions = {{"default/workload",
                           ReservedAndAdmitted("eng-cohort-theta")}},
      .want_admissions_on_second_schedule =
          {
              {"default/placeholder",
               CpuAdmission("eng-cohort-alpha", "on-demand", "50")},
              {"default/placeholder1",
               CpuAdmission("eng-cohort-theta", "on-demand", "50")},
              {"default/workload",
               CpuAdmission("eng-cohort-theta", "spot", "20")},
          },
  });

  cases.push_back({
      .kueue_name = "when the next flavor is full, but can borrow on first",
      .cluster_queues = CohortQueues(),
      .workloads =
          {
              Placeholder("placeholder", "eng-cohort-alpha", "on-demand", "40"),
              Placeholder("placeholder1", "eng-cohort-theta", "on-demand",
                          "40"),
              Placeholder("placeholder2", "eng-cohort-theta", "spot", "100"),
              Wl("workload", "default")
                  .Queue("main-theta")
                  .Request("cpu", "20")
                  .Build(),
          },
      .want_assignments =
          {
              {"default/placeholder",
               CpuAdmission("eng-cohort-alpha", "on-demand", "40")},
              {"default/placeholder1",
               CpuAdmission("eng-cohort-theta", "on-demand", "40")},
              {"default/placeholder2",
               CpuAdmission("eng-cohort-theta", "spot", "100")},
              {"default/workload",
               CpuAdmission("eng-cohort-theta", "on-demand", "20")},
          },
      .want_conditions = {{"default/workload",
                           ReservedAndAdmitted("eng-cohort-theta")}},
      .want_admissions_on_second_schedule =
          {
              {"default/placeholder",
               CpuAdmission("eng-cohort-alpha", "on-demand", "40")},
              {"default/placeholder1",
               CpuAdmission("eng-cohort-theta", "on-demand", "40")},
              {"default/placeholder2",
               CpuAdmission("eng-cohort-theta", "spot", "100")},
              {"default/workload",
               CpuAdmission("eng-cohort-theta", "on-demand", "20")},
          },
  });

  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, LastSchedulingContextKueueTest,
    ::testing::ValuesIn(LastSchedulingContextCases()),
    [](const ::testing::TestParamInfo<LastSchedulingContextCase>& info) {
      return SnakeCase(info.param.kueue_name);
    });

// ---------------------------------------------------------------------------
// TestEntryOrdering: the classical iterator's order, through
// scheduler::EntryOrderLess.

struct OrderEntry {
  Workload workload;
  // The flavor assignment's borrowing level.
  int borrowing = 0;
};

OrderEntry Entry(std::string name, absl::Duration created_after_now,
                 int32_t priority = 0, int borrowing = 0) {
  return {WorkloadBuilder(std::move(name))
              .Created(kNow + created_after_now)
              .Priority(priority)
              .Build(),
          borrowing};
}

OrderEntry WithCondition(OrderEntry entry, std::string type, std::string reason,
                         absl::Duration after_now) {
  SetCondition(&entry.workload.conditions,
               Condition{std::move(type), "True", std::move(reason), "",
                         kNow + after_now});
  return entry;
}

OrderEntry WithUid(OrderEntry entry, std::string uid) {
  entry.workload.meta.uid = std::move(uid);
  return entry;
}

std::vector<std::string> SortedNames(std::vector<OrderEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const OrderEntry& a, const OrderEntry& b) {
              return scheduler::EntryOrderLess(a.workload, a.borrowing,
                                               b.workload, b.borrowing);
            });
  std::vector<std::string> names;
  for (const OrderEntry& e : entries) names.push_back(e.workload.meta.name);
  return names;
}

TEST(EntryOrderingKueueTest, MatchesKueueOrder) {
  const absl::Duration s = absl::Seconds(1);
  // Kueue's `input`.
  const std::vector<OrderEntry> input = {
      Entry("old_borrowing", 0 * s, 0, 1),
      Entry("old", 1 * s),
      Entry("new", 3 * s),
      Entry("high_pri_borrowing", 3 * s, 1, 1),
      Entry("new_high_pri", 4 * s, 1),
      Entry("new_borrowing", 3 * s, 0, 1),
      WithCondition(Entry("evicted_borrowing", 1 * s, 0, 1), kConditionEvicted,
                    "PodsReadyTimeout", 2 * s),
      WithCondition(Entry("recently_evicted", 0 * s), kConditionEvicted,
                    "PodsReadyTimeout", 2 * s),
      Entry("high_pri_borrowing_more", 3 * s, 1, 2),
  };
  // Kueue's `inputForOrderingPreemptedWorkloads`. Three entries tie on
  // borrowing, priority and timestamp; Kueue's small-slice sort keeps them
  // in input order, kq breaks ties by UID, so the UIDs follow that order.
  const std::vector<OrderEntry> preempted = {
      WithUid(
          WithCondition(Entry("old-mid-recently-preempted-in-queue", 0 * s, 1),
                        "Preempted", "InClusterQueue", 5 * s),
          "1"),
      WithUid(WithCondition(
                  Entry("old-mid-recently-reclaimed-while-borrowing", 0 * s, 1),
                  "Preempted", "InCohortReclaimWhileBorrowing", 6 * s),
              "2"),
      WithUid(
          WithCondition(Entry("old-mid-more-recently-reclaimed-while-borrowing",
                              0 * s, 1),
                        "Preempted", "InCohortReclaimWhileBorrowing", 7 * s),
          "3"),
      WithUid(Entry("old-mid-not-preempted-yet", 1 * s, 1), "4"),
      WithUid(Entry("preemptor", 7 * s, 2), "5"),
  };
  // Kueue's `inputForOrderingPreemptorWorkloads` (its IsPreemptor flag only
  // matters with PrioritizePreemptorWorkloads on).
  const std::vector<OrderEntry> preemptors = {
      Entry("preemptor-borrowing", 1 * s, 1, 1),
      Entry("preemptor-not-borrowing", 2 * s, 1),
      Entry("not-preemptor-not-borrowing", 0 * s, 2),
  };

  struct Case {
    std::string kueue_name;
    std::vector<OrderEntry> input;
    std::vector<std::string> want_order;
  };
  const std::vector<Case> cases = {
      {"Priority sorting is enabled (default) using pods-ready Eviction "
       "timestamp (default)",
       input,
       {"new_high_pri", "old", "recently_evicted", "new", "high_pri_borrowing",
        "old_borrowing", "evicted_borrowing", "new_borrowing",
        "high_pri_borrowing_more"}},
      {"Some workloads are preempted; Priority sorting is enabled",
       preempted,
       {"preemptor", "old-mid-recently-preempted-in-queue",
        "old-mid-recently-reclaimed-while-borrowing",
        "old-mid-more-recently-reclaimed-while-borrowing",
        "old-mid-not-preempted-yet"}},
      {"Some workloads are preemptors; PrioritizePreemptorWorkloads is "
       "disabled",
       preemptors,
       {"not-preemptor-not-borrowing", "preemptor-not-borrowing",
        "preemptor-borrowing"}},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.kueue_name);
    EXPECT_EQ(SortedNames(tc.input), tc.want_order);
    // The order is total: it does not depend on the input order.
    std::vector<OrderEntry> reversed(tc.input.rbegin(), tc.input.rend());
    EXPECT_EQ(SortedNames(reversed), tc.want_order);
  }
}

// Through the admission state, the same order decides which of two heads
// competing for the last borrowable quota goes first: with equal borrowing
// and priority, the earlier queue-order timestamp, which for a workload
// evicted for PodsReadyTimeout is its eviction rather than its creation.
TEST(EntryOrderingKueueTest, EvictionTimestampDecidesWhichHeadGoesFirst) {
  AdmissionState state;
  state.LoadObject(NamespaceBuilder("default").Build());
  state.LoadObject(ResourceFlavorBuilder("default").Build());
  state.LoadObject(ClusterQueueBuilder("lender")
                       .Cohort("co")
                       .ResourceGroup({"cpu"})
                       .Quota("default", "cpu", "2")
                       .Build());
  for (const std::string name : {"cq-a", "cq-b"}) {
    state.LoadObject(ClusterQueueBuilder(name)
                         .Cohort("co")
                         .ResourceGroup({"cpu"})
                         .Quota("default", "cpu", "0")
                         .Build());
    state.LoadObject(LocalQueueBuilder("default", name, name).Build());
  }
  // Both borrow the lender's 2 CPUs. a was created first, but was evicted
  // after b was created.
  state.LoadWorkload(WithCondition({WorkloadBuilder("a")
                                        .Queue("cq-a")
                                        .Created(kNow)
                                        .Request("cpu", "2")
                                        .Build()},
                                   kConditionEvicted, "PodsReadyTimeout",
                                   absl::Seconds(10))
                         .workload);
  state.LoadWorkload(WorkloadBuilder("b")
                         .Queue("cq-b")
                         .Created(kNow + absl::Seconds(5))
                         .Request("cpu", "2")
                         .Build());
  const absl::Time now = kNow + absl::Seconds(20);
  state.Rebuild(now);
  ASSERT_EQ(state.RunPasses(now, PassLimits{.max_passes = 1}), 1);

  EXPECT_EQ(
      Assignments(state),
      (std::map<std::string, Admission>{
          {"default/b",
           AdmissionBuilder("cq-b").Assign("cpu", "default", "2").Build()}}));
  ExpectConditions(state, {{"default/a", NoLongerFits()}});
}

}  // namespace
}  // namespace kq::admission
