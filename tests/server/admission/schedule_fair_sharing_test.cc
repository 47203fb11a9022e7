// Kueue's TestScheduleForFairSharing (pkg/scheduler/scheduler_fs_test.go),
// ported to kq's admission state as schedule_kueue_test.cc ports
// TestSchedule: each case loads Kueue's TestSchedule fixture plus its own
// objects and workloads into an AdmissionState configured as the case's
// Kueue scheduler is (fair sharing on, with Kueue's default preemption
// strategies, unless the case says enableFairSharing: false) and runs
// exactly one Kueue scheduling cycle (RunPasses with max_passes = 1). The
// assertions are Kueue's where kq models them: the admissions held after
// the cycle (wantAssignments), the workloads left in each ClusterQueue's
// heap (wantLeft) and the QuotaReserved / Admitted / Evicted / Preempted
// conditions of wantWorkloads. Case names are Kueue's, in snake_case.
//
// Every case is ported. What Kueue checks that kq does not model: events
// (wantEvents), the admission_cycle_preemption_skips metric
// (wantSkippedPreemptions), and status.resourceRequests of pending
// workloads (see schedule_kueue_test.cc).
//
// Deviation shared with the TestSchedule port: Kueue's preemption victims
// keep their quota until their job reconciler confirms the stop, while kq
// completes each eviction at once (Requeued=True, quota released). So the
// victims are missing from want_assignments, and those with a LocalQueue
// are back in its heap (want_left).
//
// "multiple preemptions skip overlapping preemption targets" runs in Kueue
// with RecomputeAssignmentUponPreemptionTargetsOverlap off; kq never
// recomputes an assignment whose targets overlap, i.e. always behaves so.
//
// Kueue's cases configure ClusterQueues without API defaulting: a
// preemption block that sets only withinClusterQueue leaves
// reclaimWithinCohort at Go's zero value "", not "Never". The ports keep
// that value (ReclaimWithinCohort("")) where Kueue's case has it. It
// matters in "multiple preemptions within cq when fair sharing": Kueue's
// canPreemptWhileBorrowing (flavorassigner.go) counts "" as not Never, so
// under fair sharing the preemptors, which would borrow, may preempt.
//
// The fair preemption cases rely on the fair-sharing preemption oracle
// (preemption::Oracle with a FairSharingConfig); the ordering cases on
// scheduler::FairSharingIterator.

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/core/config.h"
#include "server/core/objects.h"
#include "tests/server/admission/schedule_kueue_util.h"
#include "tests/testing/builders.h"

namespace kq::admission {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::LocalQueueBuilder;

using kueue_port::Assignments;
using kueue_port::ExpectConditions;
using kueue_port::kNow;
using kueue_port::Left;
using kueue_port::NoLongerFits;
using kueue_port::PreemptedBy;
using kueue_port::Preemptor;
using kueue_port::ReservedAndAdmitted;
using kueue_port::ScheduleFixture;
using kueue_port::SnakeCase;
using kueue_port::Unadmitted;
using kueue_port::Wl;

struct FairSharingCase {
  // Kueue's case name, verbatim.
  std::string kueue_name;
  // Kueue's enableFairSharing.
  bool enable_fair_sharing = true;
  // Objects besides the fixture (Kueue's additionalClusterQueues,
  // additionalLocalQueues and cohorts).
  std::vector<ConfigObject> objects;
  // Pending workloads and workloads already holding quota.
  std::vector<Workload> workloads;
  // Every workload holding quota after the cycle ("ns/name").
  std::map<std::string, Admission> want_assignments;
  // ClusterQueue -> workloads left in its heap.
  std::map<std::string, std::vector<std::string>> want_left;
  // "ns/name" -> conditions it must have after the cycle.
  std::map<std::string, std::vector<Condition>> want_conditions;
};

void PrintTo(const FairSharingCase& c, std::ostream* os) {
  *os << c.kueue_name;
}

class ScheduleForFairSharingKueueTest
    : public ::testing::TestWithParam<FairSharingCase> {};

TEST_P(ScheduleForFairSharingKueueTest, OneCycle) {
  const FairSharingCase& tc = GetParam();
  AdmissionState state;
  if (tc.enable_fair_sharing) {
    state.SetConfiguration(Configuration{.fair_sharing = FairSharingConfig{}});
  }
  for (const ConfigObject& o : ScheduleFixture()) state.LoadObject(o);
  for (const ConfigObject& o : tc.objects) state.LoadObject(o);
  for (const Workload& wl : tc.workloads) state.LoadWorkload(wl);
  state.Rebuild(kNow);

  state.RunPasses(kNow, PassLimits{.max_passes = 1});

  EXPECT_EQ(Assignments(state), tc.want_assignments);
  EXPECT_EQ(Left(state, /*inadmissible=*/false), tc.want_left);
  EXPECT_EQ(Left(state, /*inadmissible=*/true),
            (std::map<std::string, std::vector<std::string>>{}));
  ExpectConditions(state, tc.want_conditions);
}

// A pending workload of `count` pods of `cpu` CPUs each, pod set "one".
Workload PendingOne(std::string name, std::string namespace_name,
                    std::string local_queue, int32_t count,
                    const std::string& cpu) {
  return Wl(std::move(name), std::move(namespace_name))
      .Queue(std::move(local_queue))
      .PodSet("one", count)
      .Request("cpu", cpu)
      .Build();
}

// The admission of pod set "one" with `count` pods using `cpu` CPUs of
// `flavor` in `cq`.
Admission OneAdmission(const std::string& cq, const std::string& flavor,
                       int32_t count, const std::string& cpu) {
  return AdmissionBuilder(cq)
      .PodSet("one", count)
      .Assign("cpu", flavor, cpu)
      .Build();
}

// A workload of `count` pods holding `cpu` CPUs of `flavor` in `cq`, pod
// set "one".
Workload HoldingOne(std::string name, std::string namespace_name,
                    std::string local_queue, const std::string& cq,
                    const std::string& flavor, int32_t count,
                    const std::string& cpu, const std::string& per_pod_cpu) {
  return Wl(std::move(name), std::move(namespace_name))
      .Queue(std::move(local_queue))
      .PodSet("one", count)
      .Request("cpu", per_pod_cpu)
      .ReserveQuota(OneAdmission(cq, flavor, count, cpu), kNow)
      .Build();
}

// A ClusterQueue of `cohort` with one group of cpu quotas (flavor,
// nominal).
ClusterQueue CpuQueue(
    std::string name, std::string cohort,
    const std::vector<std::pair<std::string, std::string>>& quotas) {
  ClusterQueueBuilder cq(std::move(name));
  cq.Cohort(std::move(cohort)).ResourceGroup({"cpu"});
  for (const auto& [flavor, nominal] : quotas) {
    cq.Quota(flavor, "cpu", nominal);
  }
  return cq.Build();
}

// A Cohort with nominal `cpu` of on-demand, under `parent` when not empty.
Cohort OnDemandCohort(std::string name, const std::string& cpu,
                      std::string parent = "") {
  CohortBuilder cohort(std::move(name));
  if (!cpu.empty())
    cohort.ResourceGroup({"cpu"}).Quota("on-demand", "cpu", cpu);
  if (!parent.empty()) cohort.Parent(std::move(parent));
  return cohort.Build();
}

// Evicted and Preempted conditions for a victim of a preemptor with UID
// `uid` and job UID `job_uid`.
std::vector<Condition> PreemptedByUid(const std::string& uid,
                                      const std::string& job_uid,
                                      const std::string& reason,
                                      const std::string& human_reason,
                                      const std::string& preemptor_path,
                                      const std::string& preemptee_path) {
  const std::string message = absl::StrCat(
      "Preempted to accommodate a workload (UID: ", uid, ", JobUID: ", job_uid,
      ") due to ", human_reason, "; preemptor path: ", preemptor_path,
      "; preemptee path: ", preemptee_path);
  return {Condition{kConditionEvicted, "True", "Preempted", message},
          Condition{"Preempted", "True", reason, message}};
}

Workload WithUid(Workload wl, std::string uid, std::string job_uid) {
  wl.meta.uid = std::move(uid);
  wl.meta.labels["kueue.x-k8s.io/job-uid"] = std::move(job_uid);
  return wl;
}

// The "multiple preemptions ..." cases' LocalQueues "other" of eng-alpha,
// eng-beta and eng-gamma.
std::vector<ConfigObject> OtherLocalQueues() {
  return {LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build(),
          LocalQueueBuilder("eng-beta", "other", "other-beta").Build(),
          LocalQueueBuilder("eng-gamma", "other", "other-gamma").Build()};
}

// A priority-0 workload of LocalQueue "other" holding 3 CPUs of flavor
// default in `cq`.
Workload OtherHolder(std::string name, std::string namespace_name,
                     const std::string& cq) {
  return Wl(std::move(name), std::move(namespace_name))
      .Priority(0)
      .Queue("other")
      .Request("cpu", "3")
      .ReserveQuota(AdmissionBuilder(cq).Assign("cpu", "default", "3").Build(),
                    kNow)
      .Build();
}

// The "prefer flavor with most local capacity" cases: queue1 of
// child-cohort (on-demand 5, spot 7 GPUs) under root-cohort (on-demand 2,
// spot 0), with 3 GPUs of each flavor, on-demand exhausted in the tree and
// spot in queue1.
FairSharingCase MostLocalCapacityCase(std::string kueue_name,
                                      bool enable_fair_sharing) {
  return {
      .kueue_name = std::move(kueue_name),
      .enable_fair_sharing = enable_fair_sharing,
      .objects =
          {
              CohortBuilder("root-cohort")
                  .ResourceGroup({"gpu"})
                  .Quota("on-demand", "gpu", "2")
                  .Quota("spot", "gpu", "0")
                  .Build(),
              CohortBuilder("child-cohort")
                  .Parent("root-cohort")
                  .ResourceGroup({"gpu"})
                  .Quota("on-demand", "gpu", "5")
                  .Quota("spot", "gpu", "7")
                  .Build(),
              ClusterQueueBuilder("queue1")
                  .Cohort("child-cohort")
                  .WithinClusterQueue("LowerPriority")
                  .ReclaimWithinCohort("Any")
                  .WhenCanPreempt(FungibilityPolicy::kTryNextFlavor)
                  .WhenCanBorrow(FungibilityPolicy::kTryNextFlavor)
                  .ResourceGroup({"gpu"})
                  .Quota("on-demand", "gpu", "3")
                  .Quota("spot", "gpu", "3")
                  .Build(),
              LocalQueueBuilder("default", "queue1", "queue1").Build(),
          },
      .workloads =
          {
              Wl("a1", "default")
                  .Queue("queue1")
                  .Request("gpu", "8")
                  .ReserveQuota(AdmissionBuilder("queue1")
                                    .Assign("gpu", "on-demand", "8")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("a2", "default")
                  .Queue("queue1")
                  .Request("gpu", "3")
                  .ReserveQuota(AdmissionBuilder("queue1")
                                    .Assign("gpu", "spot", "3")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("a3", "default").Queue("queue1").Request("gpu", "1").Build(),
          },
      .want_assignments =
          {
              {"default/a1", AdmissionBuilder("queue1")
                                 .Assign("gpu", "on-demand", "8")
                                 .Build()},
              {"default/a2",
               AdmissionBuilder("queue1").Assign("gpu", "spot", "3").Build()},
              {"default/a3",
               AdmissionBuilder("queue1").Assign("gpu", "spot", "1").Build()},
          },
      .want_conditions = {{"default/a3", ReservedAndAdmitted("queue1")}},
  };
}

std::vector<FairSharingCase> Cases() {
  std::vector<FairSharingCase> cases;

  cases.push_back({
      .kueue_name =
          "with fair sharing: schedule workload with lowest share first",
      .objects =
          {
              ClusterQueueBuilder("eng-shared")
                  .Cohort("eng")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "10")
                  .BorrowingLimit("0")
                  .Build(),
          },
      .workloads =
          {
              HoldingOne("all_nominal", "eng-alpha", "main", "eng-alpha",
                         "on-demand", 50, "50", "1"),
              // Uses half of the shared quota.
              HoldingOne("borrowing", "eng-beta", "main", "eng-beta",
                         "on-demand", 55, "55", "1"),
              Wl("older_new", "eng-beta")
                  .Queue("main")
                  .Created(kNow - absl::Minutes(1))
                  .PodSet("one", 1)
                  .Request("cpu", "1")
                  .Build(),
              Wl("new", "eng-alpha")
                  .Queue("main")
                  .Created(kNow)
                  .PodSet("one", 5)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/all_nominal",
               OneAdmission("eng-alpha", "on-demand", 50, "50")},
              {"eng-beta/borrowing",
               OneAdmission("eng-beta", "on-demand", 55, "55")},
              {"eng-alpha/new", OneAdmission("eng-alpha", "on-demand", 5, "5")},
          },
      .want_left = {{"eng-beta", {"eng-beta/older_new"}}},
      .want_conditions =
          {
              {"eng-alpha/new", ReservedAndAdmitted("eng-alpha")},
              {"eng-beta/older_new", NoLongerFits()},
          },
  });

  cases.push_back({
      .kueue_name = "with fair sharing: nominal-first ordering admits "
                    "workload fitting within nominal despite higher CQ DRS",
      .objects =
          {
              // Two resource groups covering cpu, as Kueue's case has them:
              // cpu takes its flavors from the first.
              ClusterQueueBuilder("fs-nom-a")
                  .Cohort("fs-nom")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "50")
                  .BorrowingLimit("0")
                  .ResourceGroup({"cpu"})
                  .Quota("spot", "cpu", "50")
                  .BorrowingLimit("50")
                  .Build(),
              ClusterQueueBuilder("fs-nom-b")
                  .Cohort("fs-nom")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "10")
                  .BorrowingLimit("50")
                  .ResourceGroup({"cpu"})
                  .Quota("spot", "cpu", "50")
                  .BorrowingLimit("0")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "fs-nom", "fs-nom-a").Build(),
              LocalQueueBuilder("eng-beta", "fs-nom", "fs-nom-b").Build(),
          },
      .workloads =
          {
              HoldingOne("spot-heavy", "eng-alpha", "fs-nom", "fs-nom-a",
                         "spot", 80, "80", "1"),
              HoldingOne("light-usage", "eng-beta", "fs-nom", "fs-nom-b",
                         "on-demand", 5, "5", "1"),
              Wl("borrow-wl", "eng-beta")
                  .Queue("fs-nom")
                  .Created(kNow - absl::Minutes(1))
                  .PodSet("one", 15)
                  .Request("cpu", "1")
                  .Build(),
              Wl("nom-wl", "eng-alpha")
                  .Queue("fs-nom")
                  .Created(kNow)
                  .PodSet("one", 45)
                  .Request("cpu", "1")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-alpha/spot-heavy",
               OneAdmission("fs-nom-a", "spot", 80, "80")},
              {"eng-beta/light-usage",
               OneAdmission("fs-nom-b", "on-demand", 5, "5")},
              {"eng-alpha/nom-wl",
               OneAdmission("fs-nom-a", "on-demand", 45, "45")},
          },
      .want_left = {{"fs-nom-b", {"eng-beta/borrow-wl"}}},
      .want_conditions =
          {
              {"eng-alpha/nom-wl", ReservedAndAdmitted("fs-nom-a")},
              {"eng-beta/borrow-wl", NoLongerFits()},
          },
  });

  /*
                  ROOT
              /            \
      COHORT-A (0/10)    COHORT-B (10/5)
           |              /         \
       cq-a (0/0)    cq-b (0/5)  cq-c (10/0)
  */
  // (usage/subtreeQuota). With wl-a, COHORT-A is at 5/10 and does not
  // borrow; with wl-b, COHORT-B is at 15/5 and borrows: at the root, wl-a
  // wins although cq-b would not borrow and cq-a would.
  cases.push_back({
      .kueue_name = "with fair sharing: hierarchical nominal-first prefers "
                    "non-borrowing subtree",
      .objects =
          {
              OnDemandCohort("root", ""),
              OnDemandCohort("Cohort-A", "10", "root"),
              OnDemandCohort("Cohort-B", "", "root"),
              CpuQueue("cq-a", "Cohort-A", {{"on-demand", "0"}}),
              CpuQueue("cq-b", "Cohort-B", {{"on-demand", "5"}}),
              CpuQueue("cq-c", "Cohort-B", {{"on-demand", "0"}}),
              LocalQueueBuilder("eng-alpha", "lq-a", "cq-a").Build(),
              LocalQueueBuilder("eng-alpha", "lq-b", "cq-b").Build(),
              LocalQueueBuilder("eng-alpha", "lq-c", "cq-c").Build(),
          },
      .workloads =
          {
              HoldingOne("c0", "eng-alpha", "lq-c", "cq-c", "on-demand", 1,
                         "10", "10"),
              PendingOne("wl-a", "eng-alpha", "lq-a", 1, "5"),
              PendingOne("wl-b", "eng-alpha", "lq-b", 1, "5"),
          },
      .want_assignments =
          {
              {"eng-alpha/c0", OneAdmission("cq-c", "on-demand", 1, "10")},
              {"eng-alpha/wl-a", OneAdmission("cq-a", "on-demand", 1, "5")},
          },
      .want_left = {{"cq-b", {"eng-alpha/wl-b"}}},
      .want_conditions =
          {
              {"eng-alpha/wl-a", ReservedAndAdmitted("cq-a")},
              {"eng-alpha/wl-b", NoLongerFits()},
          },
  });

  /*
                    ROOT
              /                \
      COHORT-A (0/10)      COHORT-B (10/5)
         |                  /         \
      SUB-A (0/10)      cq-b (0/5)  cq-c (10/0)
         |
      cq-a (0/0)
  */
  cases.push_back({
      .kueue_name =
          "with fair sharing: hierarchical nominal-first with deeper nesting",
      .objects =
          {
              OnDemandCohort("root", ""),
              OnDemandCohort("Cohort-A", "", "root"),
              OnDemandCohort("SUB-A", "10", "Cohort-A"),
              OnDemandCohort("Cohort-B", "", "root"),
              CpuQueue("cq-a", "SUB-A", {{"on-demand", "0"}}),
              CpuQueue("cq-b", "Cohort-B", {{"on-demand", "5"}}),
              CpuQueue("cq-c", "Cohort-B", {{"on-demand", "0"}}),
              LocalQueueBuilder("eng-alpha", "lq-a", "cq-a").Build(),
              LocalQueueBuilder("eng-alpha", "lq-b", "cq-b").Build(),
              LocalQueueBuilder("eng-alpha", "lq-c", "cq-c").Build(),
          },
      .workloads =
          {
              HoldingOne("c0", "eng-alpha", "lq-c", "cq-c", "on-demand", 1,
                         "10", "10"),
              PendingOne("wl-a", "eng-alpha", "lq-a", 1, "5"),
              PendingOne("wl-b", "eng-alpha", "lq-b", 1, "5"),
          },
      .want_assignments =
          {
              {"eng-alpha/c0", OneAdmission("cq-c", "on-demand", 1, "10")},
              {"eng-alpha/wl-a", OneAdmission("cq-a", "on-demand", 1, "5")},
          },
      .want_left = {{"cq-b", {"eng-alpha/wl-b"}}},
      .want_conditions =
          {
              {"eng-alpha/wl-a", ReservedAndAdmitted("cq-a")},
              {"eng-alpha/wl-b", NoLongerFits()},
          },
  });

  /*
                     ROOT
               /            \
      COHORT-A (6/18)      COHORT-B (20/18)
        /       \             /        \
    cq-a1 (0/5) cq-a2 (6/3) cq-b (0/5) cq-c (20/3)
  */
  cases.push_back({
      .kueue_name = "with fair sharing: hierarchical nominal-first with "
                    "mixed CQ and cohort quotas",
      .objects =
          {
              OnDemandCohort("root", ""),
              OnDemandCohort("Cohort-A", "10", "root"),
              OnDemandCohort("Cohort-B", "10", "root"),
              CpuQueue("cq-a1", "Cohort-A", {{"on-demand", "5"}}),
              CpuQueue("cq-a2", "Cohort-A", {{"on-demand", "3"}}),
              CpuQueue("cq-b", "Cohort-B", {{"on-demand", "5"}}),
              CpuQueue("cq-c", "Cohort-B", {{"on-demand", "3"}}),
              LocalQueueBuilder("eng-alpha", "lq-a1", "cq-a1").Build(),
              LocalQueueBuilder("eng-alpha", "lq-a2", "cq-a2").Build(),
              LocalQueueBuilder("eng-alpha", "lq-b", "cq-b").Build(),
              LocalQueueBuilder("eng-alpha", "lq-c", "cq-c").Build(),
          },
      .workloads =
          {
              HoldingOne("a2-admitted", "eng-alpha", "lq-a2", "cq-a2",
                         "on-demand", 1, "6", "6"),
              HoldingOne("c-admitted", "eng-alpha", "lq-c", "cq-c", "on-demand",
                         1, "20", "20"),
              PendingOne("wl-a1", "eng-alpha", "lq-a1", 1, "7"),
              PendingOne("wl-b", "eng-alpha", "lq-b", 1, "4"),
          },
      .want_assignments =
          {
              {"eng-alpha/a2-admitted",
               OneAdmission("cq-a2", "on-demand", 1, "6")},
              {"eng-alpha/c-admitted",
               OneAdmission("cq-c", "on-demand", 1, "20")},
              {"eng-alpha/wl-a1", OneAdmission("cq-a1", "on-demand", 1, "7")},
          },
      .want_left = {{"cq-b", {"eng-alpha/wl-b"}}},
      .want_conditions =
          {
              {"eng-alpha/wl-a1", ReservedAndAdmitted("cq-a1")},
              {"eng-alpha/wl-b", NoLongerFits()},
          },
  });

  // Both cohorts borrow from the root, on different flavors: COHORT-A on
  // spot, COHORT-B on on-demand. Both pending workloads want on-demand;
  // only COHORT-B borrows on it, so wl-a wins, and the 7 on-demand left
  // do not take wl-b after it.
  cases.push_back({
      .kueue_name = "with fair sharing: hierarchical nominal-first per-flavor "
                    "ignores cross-flavor borrowing",
      .objects =
          {
              OnDemandCohort("root", ""),
              OnDemandCohort("Cohort-A", "10", "root"),
              CohortBuilder("Cohort-B")
                  .ResourceGroup({"cpu"})
                  .Quota("spot", "cpu", "10")
                  .Parent("root")
                  .Build(),
              CpuQueue("cq-a", "Cohort-A", {{"on-demand", "0"}, {"spot", "0"}}),
              CpuQueue("cq-b", "Cohort-B", {{"on-demand", "5"}, {"spot", "0"}}),
              LocalQueueBuilder("eng-alpha", "lq-a", "cq-a").Build(),
              LocalQueueBuilder("eng-alpha", "lq-b", "cq-b").Build(),
          },
      .workloads =
          {
              HoldingOne("spot-admitted", "eng-alpha", "lq-a", "cq-a", "spot",
                         1, "5", "5"),
              HoldingOne("od-admitted", "eng-alpha", "lq-b", "cq-b",
                         "on-demand", 1, "8", "8"),
              PendingOne("wl-a", "eng-alpha", "lq-a", 1, "4"),
              PendingOne("wl-b", "eng-alpha", "lq-b", 1, "4"),
          },
      .want_assignments =
          {
              {"eng-alpha/spot-admitted", OneAdmission("cq-a", "spot", 1, "5")},
              {"eng-alpha/od-admitted",
               OneAdmission("cq-b", "on-demand", 1, "8")},
              {"eng-alpha/wl-a", OneAdmission("cq-a", "on-demand", 1, "4")},
          },
      .want_left = {{"cq-b", {"eng-alpha/wl-b"}}},
      .want_conditions =
          {
              {"eng-alpha/wl-a", ReservedAndAdmitted("cq-a")},
              {"eng-alpha/wl-b", NoLongerFits()},
          },
  });

  // Cohort A provides 200 CPUs, 70 of them free.
  /*
               A
           /       \
        B(30)      C(100)
       /    \      /    \
      d(10) e(20) f(0)  g(100)
  */
  // In (), the current admissions, proportional to the shares. Pending,
  // and the shares they would give: d1 70 -> d 80, B 100; e1 61 -> e 81,
  // B 91; f1 1 -> f 1, C 101; g1 1 -> g 101, C 101. d1 beats e1 in B (80 <
  // 81), then B (100) beats C (101) at A, although e1 would leave B lower.
  cases.push_back({
      .kueue_name =
          "hierarchical fair sharing schedule workload which wins tournament",
      .objects =
          {
              OnDemandCohort("A", "200"),
              OnDemandCohort("B", "", "A"),
              OnDemandCohort("C", "", "A"),
              CpuQueue("d", "B", {{"on-demand", "0"}}),
              CpuQueue("e", "B", {{"on-demand", "0"}}),
              CpuQueue("f", "C", {{"on-demand", "0"}}),
              CpuQueue("g", "C", {{"on-demand", "0"}}),
              LocalQueueBuilder("eng-alpha", "lq-d", "d").Build(),
              LocalQueueBuilder("eng-alpha", "lq-e", "e").Build(),
              LocalQueueBuilder("eng-alpha", "lq-f", "f").Build(),
              LocalQueueBuilder("eng-alpha", "lq-g", "g").Build(),
          },
      .workloads =
          {
              HoldingOne("d0", "eng-alpha", "lq-d", "d", "on-demand", 1, "10",
                         "10"),
              HoldingOne("e0", "eng-alpha", "lq-e", "e", "on-demand", 1, "20",
                         "20"),
              HoldingOne("g0", "eng-alpha", "lq-g", "g", "on-demand", 1, "100",
                         "100"),
              PendingOne("d1", "eng-alpha", "lq-d", 1, "70"),
              PendingOne("e1", "eng-alpha", "lq-e", 1, "61"),
              PendingOne("f1", "eng-alpha", "lq-f", 1, "1"),
              PendingOne("g1", "eng-alpha", "lq-g", 1, "1"),
          },
      .want_assignments =
          {
              {"eng-alpha/d0", OneAdmission("d", "on-demand", 1, "10")},
              {"eng-alpha/e0", OneAdmission("e", "on-demand", 1, "20")},
              {"eng-alpha/g0", OneAdmission("g", "on-demand", 1, "100")},
              {"eng-alpha/d1", OneAdmission("d", "on-demand", 1, "70")},
          },
      .want_left = {{"e", {"eng-alpha/e1"}},
                    {"f", {"eng-alpha/f1"}},
                    {"g", {"eng-alpha/g1"}}},
      .want_conditions =
          {
              {"eng-alpha/d1", ReservedAndAdmitted("d")},
              {"eng-alpha/e1", NoLongerFits()},
              {"eng-alpha/f1", NoLongerFits()},
              {"eng-alpha/g1", NoLongerFits()},
          },
  });

  // b0 holds 10 CPUs; b1 (50) and c1 (75) are pending. b1 goes first: b0 +
  // b1 = 60 < 75.
  cases.push_back({
      .kueue_name = "fair sharing schedule workload with lowest drf after "
                    "admission",
      .objects =
          {
              OnDemandCohort("A", "100"),
              CpuQueue("b", "A", {{"on-demand", "0"}}),
              CpuQueue("c", "A", {{"on-demand", "0"}}),
              LocalQueueBuilder("eng-alpha", "lq-b", "b").Build(),
              LocalQueueBuilder("eng-alpha", "lq-c", "c").Build(),
          },
      .workloads =
          {
              HoldingOne("b0", "eng-alpha", "lq-b", "b", "on-demand", 1, "10",
                         "10"),
              PendingOne("b1", "eng-alpha", "lq-b", 1, "50"),
              PendingOne("c1", "eng-alpha", "lq-c", 1, "75"),
          },
      .want_assignments =
          {
              {"eng-alpha/b0", OneAdmission("b", "on-demand", 1, "10")},
              {"eng-alpha/b1", OneAdmission("b", "on-demand", 1, "50")},
          },
      .want_left = {{"c", {"eng-alpha/c1"}}},
      .want_conditions =
          {
              {"eng-alpha/b1", ReservedAndAdmitted("b")},
              {"eng-alpha/c1", NoLongerFits()},
          },
  });

  // b0 holds 4 CPUs; b1 (priority 9001) and c1 are pending. c1 goes first:
  // its queue would borrow less. With weight 0 both shares are infinite,
  // and the unweighted ones decide.
  for (const auto& [kueue_name, weight] :
       std::vector<std::pair<std::string, std::string>>{
           {"fair sharing two queues with weight 0 schedules workload which "
            "borrows less",
            "0"},
           {"fair sharing two queues with high weight schedules workload "
            "which borrows less",
            "123456789"}}) {
    std::vector<ConfigObject> objects = {OnDemandCohort("A", "8")};
    for (const std::string name : {"b", "c"}) {
      objects.push_back(ClusterQueueBuilder(name)
                            .FairSharingWeight(weight)
                            .Cohort("A")
                            .ReclaimWithinCohort("Any")
                            .WithinClusterQueue("Never")
                            .ResourceGroup({"cpu"})
                            .Quota("on-demand", "cpu", "0")
                            .Build());
    }
    objects.push_back(LocalQueueBuilder("eng-alpha", "lq-b", "b").Build());
    objects.push_back(LocalQueueBuilder("eng-alpha", "lq-c", "c").Build());
    cases.push_back({
        .kueue_name = kueue_name,
        .objects = objects,
        .workloads =
            {
                HoldingOne("b0", "eng-alpha", "lq-b", "b", "on-demand", 1, "4",
                           "4"),
                Wl("b1", "eng-alpha")
                    .Queue("lq-b")
                    .Priority(9001)
                    .PodSet("one", 1)
                    .Request("cpu", "4")
                    .Build(),
                Wl("c1", "eng-alpha")
                    .Priority(0)
                    .Queue("lq-c")
                    .PodSet("one", 1)
                    .Request("cpu", "4")
                    .Build(),
            },
        .want_assignments =
            {
                {"eng-alpha/b0", OneAdmission("b", "on-demand", 1, "4")},
                {"eng-alpha/c1", OneAdmission("c", "on-demand", 1, "4")},
            },
        .want_left = {{"b", {"eng-alpha/b1"}}},
        .want_conditions =
            {
                {"eng-alpha/b1", NoLongerFits()},
                {"eng-alpha/c1", ReservedAndAdmitted("c")},
            },
    });
  }

  // Cohort A has queue a, its capacity given by the cohort; cohort B has
  // queue b, its capacity given by the queue; c has no cohort. Each admits
  // its workload.
  cases.push_back({
      .kueue_name = "fair sharing schedule singleton cqs and cq without cohort",
      .objects =
          {
              OnDemandCohort("A", "10"),
              OnDemandCohort("B", ""),
              CpuQueue("a", "A", {{"on-demand", "0"}}),
              CpuQueue("b", "B", {{"on-demand", "10"}}),
              ClusterQueueBuilder("c")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "10")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "lq-a", "a").Build(),
              LocalQueueBuilder("eng-alpha", "lq-b", "b").Build(),
              LocalQueueBuilder("eng-alpha", "lq-c", "c").Build(),
          },
      .workloads =
          {
              PendingOne("a1", "eng-alpha", "lq-a", 1, "10"),
              PendingOne("b1", "eng-alpha", "lq-b", 1, "10"),
              PendingOne("c1", "eng-alpha", "lq-c", 1, "10"),
          },
      .want_assignments =
          {
              {"eng-alpha/a1", OneAdmission("a", "on-demand", 1, "10")},
              {"eng-alpha/b1", OneAdmission("b", "on-demand", 1, "10")},
              {"eng-alpha/c1", OneAdmission("c", "on-demand", 1, "10")},
          },
      .want_conditions =
          {
              {"eng-alpha/a1", ReservedAndAdmitted("a")},
              {"eng-alpha/b1", ReservedAndAdmitted("b")},
              {"eng-alpha/c1", ReservedAndAdmitted("c")},
          },
  });

  // Equal shares: the higher priority (c1), then the earlier creation (c1)
  // go first.
  for (const bool by_priority : {true, false}) {
    cases.push_back({
        .kueue_name = by_priority
                          ? "fair sharing schedule highest priority first"
                          : "fair sharing schedule earliest timestamp first",
        .objects =
            {
                OnDemandCohort("A", "10"),
                OnDemandCohort("B", ""),
                CpuQueue("b", "A", {{"on-demand", "0"}}),
                CpuQueue("c", "A", {{"on-demand", "0"}}),
                LocalQueueBuilder("eng-alpha", "lq-b", "b").Build(),
                LocalQueueBuilder("eng-alpha", "lq-c", "c").Build(),
            },
        .workloads =
            {
                by_priority ? Wl("b1", "eng-alpha")
                                  .Queue("lq-b")
                                  .Priority(99)
                                  .PodSet("one", 1)
                                  .Request("cpu", "10")
                                  .Build()
                            : Wl("b1", "eng-alpha")
                                  .Created(kNow + absl::Seconds(1))
                                  .Queue("lq-b")
                                  .Priority(101)
                                  .PodSet("one", 1)
                                  .Request("cpu", "10")
                                  .Build(),
                by_priority ? Wl("c1", "eng-alpha")
                                  .Queue("lq-c")
                                  .Priority(101)
                                  .PodSet("one", 1)
                                  .Request("cpu", "10")
                                  .Build()
                            : Wl("c1", "eng-alpha")
                                  .Created(kNow)
                                  .Queue("lq-c")
                                  .Priority(101)
                                  .PodSet("one", 1)
                                  .Request("cpu", "10")
                                  .Build(),
            },
        .want_assignments =
            {
                {"eng-alpha/c1", OneAdmission("c", "on-demand", 1, "10")},
            },
        .want_left = {{"b", {"eng-alpha/b1"}}},
        .want_conditions =
            {
                {"eng-alpha/b1", NoLongerFits()},
                {"eng-alpha/c1", ReservedAndAdmitted("c")},
            },
    });
  }

  // ---- Preemption.

  {
    FairSharingCase tc{
        .kueue_name =
            "with fair sharing: preempt workload from CQ with the highest "
            "share",
        .objects =
            {
                ClusterQueueBuilder("eng-gamma")
                    .Cohort("eng")
                    .ResourceGroup({"cpu"})
                    .Quota("on-demand", "cpu", "50")
                    .BorrowingLimit("0")
                    .Build(),
            },
        .workloads =
            {
                Wl("all_spot", "eng-alpha")
                    .Request("cpu", "100")
                    .ReserveQuota(AdmissionBuilder("eng-alpha")
                                      .Assign("cpu", "spot", "100")
                                      .Build(),
                                  kNow)
                    .Build(),
                Preemptor(Wl("preemptor", "eng-beta")
                              .Queue("main")
                              .Request("cpu", "30")
                              .Build()),
            },
        .want_assignments =
            {
                {"eng-alpha/all_spot", AdmissionBuilder("eng-alpha")
                                           .Assign("cpu", "spot", "100")
                                           .Build()},
            },
        .want_left = {{"eng-beta", {"eng-beta/preemptor"}}},
        .want_conditions =
            {
                {"eng-alpha/alpha1",
                 PreemptedBy("InCohortReclamation",
                             "reclamation within the cohort", "/eng/eng-beta",
                             "/eng/eng-alpha")},
                {"eng-gamma/gamma1",
                 PreemptedBy("InCohortReclamation",
                             "reclamation within the cohort", "/eng/eng-beta",
                             "/eng/eng-gamma")},
                {"eng-beta/preemptor",
                 Unadmitted("WaitingForPreemptedWorkloads",
                            "couldn't assign flavors to pod set main: "
                            "insufficient unused quota for cpu in flavor "
                            "on-demand, 30 more needed, insufficient unused "
                            "quota for cpu in flavor spot, 30 more needed. "
                            "Pending the preemption of 2 workload(s)")},
            },
    };
    // alpha1..alpha4 (20 CPUs each) and gamma1 (10), gamma2..gamma4 (20)
    // hold on-demand; the preempted alpha1 and gamma1 have no LocalQueue.
    for (const auto& [cq, name, cpu] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"eng-alpha", "alpha1", "20"},
             {"eng-alpha", "alpha2", "20"},
             {"eng-alpha", "alpha3", "20"},
             {"eng-alpha", "alpha4", "20"},
             {"eng-gamma", "gamma1", "10"},
             {"eng-gamma", "gamma2", "20"},
             {"eng-gamma", "gamma3", "20"},
             {"eng-gamma", "gamma4", "20"}}) {
      const Admission admission =
          AdmissionBuilder(cq).Assign("cpu", "on-demand", cpu).Build();
      Workload wl = Wl(name, cq)
                        .Request("cpu", cpu)
                        .ReserveQuota(admission, kNow)
                        .Build();
      wl.meta.uid = name;
      tc.workloads.push_back(std::move(wl));
      if (name != "alpha1" && name != "gamma1") {
        tc.want_assignments[absl::StrCat(cq, "/", name)] = admission;
      }
    }
    cases.push_back(std::move(tc));
  }

  // Fair sharing on, each ClusterQueue preempts within itself.
  cases.push_back({
      .kueue_name = "multiple preemptions within cq when fair sharing",
      .objects =
          [] {
            std::vector<ConfigObject> objects;
            for (const std::string name :
                 {"other-alpha", "other-beta", "other-gamma"}) {
              // Kueue's case sets only withinClusterQueue, leaving
              // reclaimWithinCohort at Go's zero value "" (no API
              // defaulting in the unit test). Its flavor assigner counts ""
              // as not Never, so fair sharing lets these queues preempt
              // while borrowing; the preemptors need that.
              objects.push_back(ClusterQueueBuilder(name)
                                    .Cohort("other")
                                    .WithinClusterQueue("LowerPriority")
                                    .ReclaimWithinCohort("")
                                    .ResourceGroup({"cpu"})
                                    .Quota("default", "cpu", "2")
                                    .Build());
            }
            objects.push_back(ClusterQueueBuilder("resource-bank")
                                  .Cohort("other")
                                  .ResourceGroup({"cpu"})
                                  .Quota("default", "cpu", "3")
                                  .Build());
            for (ConfigObject& lq : OtherLocalQueues()) {
              objects.push_back(std::move(lq));
            }
            return objects;
          }(),
      .workloads =
          {
              OtherHolder("a1", "eng-alpha", "other-alpha"),
              OtherHolder("b1", "eng-beta", "other-beta"),
              OtherHolder("c1", "eng-gamma", "other-gamma"),
              Preemptor(Wl("preemptor", "eng-alpha")
                            .Priority(100)
                            .Queue("other")
                            .Request("cpu", "3")
                            .Build()),
              Preemptor(Wl("preemptor", "eng-beta")
                            .Priority(100)
                            .Queue("other")
                            .Request("cpu", "3")
                            .Build()),
              Preemptor(Wl("preemptor", "eng-gamma")
                            .Priority(100)
                            .Queue("other")
                            .Request("cpu", "3")
                            .Build()),
          },
      .want_left = {{"other-alpha", {"eng-alpha/a1", "eng-alpha/preemptor"}},
                    {"other-beta", {"eng-beta/b1", "eng-beta/preemptor"}},
                    {"other-gamma", {"eng-gamma/c1", "eng-gamma/preemptor"}}},
      .want_conditions =
          [] {
            std::map<std::string, std::vector<Condition>> want;
            for (const auto& [ns, victim, cq] :
                 std::vector<std::tuple<std::string, std::string, std::string>>{
                     {"eng-alpha", "a1", "other-alpha"},
                     {"eng-beta", "b1", "other-beta"},
                     {"eng-gamma", "c1", "other-gamma"}}) {
              const std::string path = absl::StrCat("/other/", cq);
              want[absl::StrCat(ns, "/", victim)] =
                  PreemptedBy("InClusterQueue",
                              "prioritization in the ClusterQueue", path, path);
              want[absl::StrCat(ns, "/preemptor")] =
                  Unadmitted("WaitingForPreemptedWorkloads",
                             "couldn't assign flavors to pod set main: "
                             "insufficient unused quota for cpu in flavor "
                             "default, 3 more needed. Pending the preemption "
                             "of 1 workload(s)");
            }
            return want;
          }(),
  });

  // Gamma uses more than its fair share of CPU; alpha and beta need CPU.
  // Alpha's workload has the higher priority, so it goes first; beta's
  // would preempt the same gamma workload and is skipped.
  cases.push_back({
      .kueue_name = "multiple preemptions skip overlapping preemption targets",
      .objects =
          [] {
            std::vector<ConfigObject> objects;
            for (const auto& [name, resource] :
                 std::vector<std::pair<std::string, std::string>>{
                     {"other-alpha", "alpha-resource"},
                     {"other-beta", "beta-resource"},
                     {"other-gamma", "gamma-resource"}}) {
              objects.push_back(ClusterQueueBuilder(name)
                                    .Cohort("other")
                                    .WithinClusterQueue("LowerPriority")
                                    .ReclaimWithinCohort("Any")
                                    .ResourceGroup({"cpu", resource})
                                    .Flavor("default")
                                    .Quota("cpu", "0")
                                    .Quota(resource, "1")
                                    .Build());
            }
            objects.push_back(ClusterQueueBuilder("resource-bank")
                                  .Cohort("other")
                                  .ResourceGroup({"cpu"})
                                  .Quota("default", "cpu", "9")
                                  .Build());
            for (ConfigObject& lq : OtherLocalQueues()) {
              objects.push_back(std::move(lq));
            }
            return objects;
          }(),
      .workloads =
          {
              Wl("a1", "eng-alpha")
                  .Priority(0)
                  .Queue("other")
                  .Request("alpha-resource", "1")
                  .ReserveQuota(AdmissionBuilder("other-alpha")
                                    .Assign("alpha-resource", "default", "1")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("b1", "eng-beta")
                  .Priority(0)
                  .Queue("other")
                  .Request("beta-resource", "1")
                  .ReserveQuota(AdmissionBuilder("other-beta")
                                    .Assign("beta-resource", "default", "1")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("c1", "eng-gamma")
                  .Priority(0)
                  .Queue("other")
                  .Request("cpu", "9")
                  .Request("gamma-resource", "1")
                  .ReserveQuota(AdmissionBuilder("other-gamma")
                                    .Assign("cpu", "default", "9")
                                    .Build(),
                                kNow)
                  .Build(),
              Preemptor(Wl("preemptor", "eng-alpha")
                            .Priority(100)
                            .Queue("other")
                            .Request("cpu", "3")
                            .Request("alpha-resource", "1")
                            .Build()),
              Wl("pretending-preemptor", "eng-beta")
                  .Priority(99)
                  .Queue("other")
                  .Request("cpu", "3")
                  .Request("beta-resource", "1")
                  .Build(),
          },
      .want_assignments =
          {
              {"eng-beta/b1", AdmissionBuilder("other-beta")
                                  .Assign("beta-resource", "default", "1")
                                  .Build()},
          },
      .want_left = {{"other-alpha", {"eng-alpha/a1", "eng-alpha/preemptor"}},
                    {"other-beta", {"eng-beta/pretending-preemptor"}},
                    {"other-gamma", {"eng-gamma/c1"}}},
      .want_conditions =
          {
              {"eng-alpha/a1",
               PreemptedBy("InClusterQueue",
                           "prioritization in the ClusterQueue",
                           "/other/other-alpha", "/other/other-alpha")},
              {"eng-gamma/c1",
               PreemptedBy("InCohortFairSharing",
                           "Fair Sharing within the cohort",
                           "/other/other-alpha", "/other/other-gamma")},
              {"eng-alpha/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for alpha-resource in "
                          "flavor default, 1 more needed, insufficient unused "
                          "quota for cpu in flavor default, 3 more needed. "
                          "Pending the preemption of 2 workload(s)")},
              {"eng-beta/pretending-preemptor",
               Unadmitted("WaitingForQuota",
                          "Workload has overlapping preemption targets with "
                          "another workload")},
          },
  });

  cases.push_back({
      .kueue_name = "not enough resources with fair sharing enabled",
      .workloads = {PendingOne("new", "sales", "main", 1, "100")},
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

  // Fair sharing lets other-alpha preempt while borrowing. On on-demand it
  // would preempt by priority within itself, on spot it reclaims from the
  // cohort; reclaiming is preferred.
  cases.push_back({
      .kueue_name = "with fair sharing: prefer reclamation over cq priority "
                    "based preemption; with preemption while borrowing",
      .objects =
          {
              ClusterQueueBuilder("other-alpha")
                  .Cohort("other")
                  .WithinClusterQueue("LowerPriority")
                  .ReclaimWithinCohort("LowerPriority")
                  .ResourceGroup({"gpu"})
                  .Quota("on-demand", "gpu", "7")
                  .Quota("spot", "gpu", "7")
                  .Build(),
              ClusterQueueBuilder("other-beta")
                  .Cohort("other")
                  .ResourceGroup({"gpu"})
                  .Quota("on-demand", "gpu", "3")
                  .Quota("spot", "gpu", "3")
                  .Build(),
              LocalQueueBuilder("eng-alpha", "other", "other-alpha").Build(),
              LocalQueueBuilder("eng-beta", "other", "other-beta").Build(),
          },
      .workloads =
          {
              Wl("a1", "eng-alpha")
                  .Priority(50)
                  .Queue("other")
                  .Request("gpu", "5")
                  .ReserveQuota(AdmissionBuilder("other-alpha")
                                    .Assign("gpu", "on-demand", "5")
                                    .Build(),
                                kNow)
                  .Build(),
              Wl("b1", "eng-beta")
                  .Priority(50)
                  .Queue("other")
                  .Request("gpu", "5")
                  .ReserveQuota(AdmissionBuilder("other-beta")
                                    .Assign("gpu", "spot", "5")
                                    .Build(),
                                kNow)
                  .Build(),
              Preemptor(Wl("preemptor", "eng-alpha")
                            .Priority(100)
                            .Queue("other")
                            .Request("gpu", "8")
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
               PreemptedBy("InCohortFairSharing",
                           "Fair Sharing within the cohort",
                           "/other/other-alpha", "/other/other-beta")},
              {"eng-alpha/preemptor",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for gpu in flavor "
                          "on-demand, 3 more needed, insufficient unused quota "
                          "for gpu in flavor spot, 3 more needed. Pending the "
                          "preemption of 1 workload(s)")},
          },
  });

  cases.push_back(MostLocalCapacityCase(
      "prefer flavor with most local capacity", /*enable_fair_sharing=*/true));
  cases.push_back(
      MostLocalCapacityCase("prefer flavor with most local capacity (FS=false)",
                            /*enable_fair_sharing=*/false));

  // Kueue's regression test for a panic when a queue without a cohort
  // preempts within itself under fair sharing.
  cases.push_back({
      .kueue_name = "fair sharing: in-CQ preemption for CQ without cohort; "
                    "repro for nil pointer panic",
      .objects =
          {
              // reclaimWithinCohort: Go's zero value, as in Kueue's case.
              ClusterQueueBuilder("no-cohort-cq")
                  .WithinClusterQueue("LowerPriority")
                  .ReclaimWithinCohort("")
                  .ResourceGroup({"cpu"})
                  .Quota("default", "cpu", "4")
                  .Build(),
              LocalQueueBuilder("default", "no-cohort-queue", "no-cohort-cq")
                  .Build(),
          },
      .workloads =
          {
              Wl("nc-low", "default")
                  .Queue("no-cohort-queue")
                  .Priority(-1)
                  .Request("cpu", "4")
                  .Admitted(AdmissionBuilder("no-cohort-cq")
                                .Assign("cpu", "default", "4")
                                .Build(),
                            kNow)
                  .Build(),
              WithUid(Wl("nc-high", "default")
                          .Queue("no-cohort-queue")
                          .Priority(100)
                          .Request("cpu", "4")
                          .Build(),
                      "wl-nc-high", "job-nc-high"),
          },
      .want_left = {{"no-cohort-cq", {"default/nc-high", "default/nc-low"}}},
      .want_conditions =
          {
              {"default/nc-high",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "default, 4 more needed. Pending the preemption of 1 "
                          "workload(s)")},
              {"default/nc-low",
               PreemptedByUid("wl-nc-high", "job-nc-high", "InClusterQueue",
                              "prioritization in the ClusterQueue",
                              "/no-cohort-cq", "/no-cohort-cq")},
          },
  });

  cases.push_back({
      .kueue_name = "PreemptionOverBorrowing with fair sharing: preempt in "
                    "first flavor instead of borrowing in second",
      .objects =
          {
              ClusterQueueBuilder("fs-pob-cq")
                  .FairSharingWeight("1")
                  .Cohort("fs-pob-cohort")
                  // reclaimWithinCohort: Go's zero value, as in Kueue's
                  // case.
                  .WithinClusterQueue("LowerPriority")
                  .ReclaimWithinCohort("")
                  .WhenCanBorrow(FungibilityPolicy::kTryNextFlavor)
                  .WhenCanPreempt(FungibilityPolicy::kTryNextFlavor)
                  .FungibilityPreference("PreemptionOverBorrowing")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "5")
                  .BorrowingLimit("0")
                  .Quota("spot", "cpu", "0")
                  .BorrowingLimit("5")
                  .Build(),
              ClusterQueueBuilder("fs-pob-lender")
                  .FairSharingWeight("1")
                  .Cohort("fs-pob-cohort")
                  .ResourceGroup({"cpu"})
                  .Quota("on-demand", "cpu", "0")
                  .Quota("spot", "cpu", "5")
                  .Build(),
              LocalQueueBuilder("default", "fs-pob-queue", "fs-pob-cq").Build(),
          },
      .workloads =
          {
              Wl("fs-low-pob", "default")
                  .Queue("fs-pob-queue")
                  .Priority(-1)
                  .Request("cpu", "5")
                  .Admitted(AdmissionBuilder("fs-pob-cq")
                                .Assign("cpu", "on-demand", "5000m")
                                .Build(),
                            kNow)
                  .Build(),
              WithUid(Wl("fs-high-pob", "default")
                          .Queue("fs-pob-queue")
                          .Priority(0)
                          .Request("cpu", "5")
                          .Build(),
                      "wl-fs-high-pob", "job-fs-high-pob"),
          },
      .want_left = {{"fs-pob-cq",
                     {"default/fs-high-pob", "default/fs-low-pob"}}},
      .want_conditions =
          {
              {"default/fs-high-pob",
               Unadmitted("WaitingForPreemptedWorkloads",
                          "couldn't assign flavors to pod set main: "
                          "insufficient unused quota for cpu in flavor "
                          "on-demand, 5 more needed. Pending the preemption of "
                          "1 workload(s)")},
              {"default/fs-low-pob",
               PreemptedByUid(
                   "wl-fs-high-pob", "job-fs-high-pob", "InClusterQueue",
                   "prioritization in the ClusterQueue",
                   "/fs-pob-cohort/fs-pob-cq", "/fs-pob-cohort/fs-pob-cq")},
          },
  });

  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, ScheduleForFairSharingKueueTest, ::testing::ValuesIn(Cases()),
    [](const ::testing::TestParamInfo<FairSharingCase>& info) {
      return SnakeCase(info.param.kueue_name);
    });

}  // namespace
}  // namespace kq::admission
