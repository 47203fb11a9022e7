#pragma once

// Helpers shared by the ports of Kueue's scheduler tables to kq's admission
// state (schedule_kueue_test.cc, schedule_fair_sharing_test.cc): Kueue's
// TestSchedule fixture, the case shape, and the checks of one cycle's
// outcome (admissions held, workloads left in the queues, conditions).

#include <algorithm>
#include <cctype>
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
#include "tests/testing/builders.h"

namespace kq {

// Printers so that failed comparisons of admissions and conditions read as
// values rather than bytes.
inline void PrintTo(const Admission& admission, std::ostream* os) {
  *os << "{" << admission.cluster_queue;
  for (const PodSetAssignment& psa : admission.pod_set_assignments) {
    *os << " " << psa.name << "(count=" << psa.count << ":";
    for (const auto& [resource, flavor] : psa.flavors) {
      *os << " " << resource << "=" << flavor;
    }
    *os << ";";
    for (const auto& [resource, usage] : psa.resource_usage) {
      *os << " " << resource << ":" << usage.ToString();
    }
    *os << ")";
  }
  *os << "}";
}

inline void PrintTo(const Condition& condition, std::ostream* os) {
  *os << condition.type << "=" << condition.status << " " << condition.reason
      << ": " << condition.message;
}

}  // namespace kq

namespace kq::admission::kueue_port {

inline const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// Kueue's case name in snake_case, for gtest: words split at spaces,
// punctuation and lower-to-upper case changes, apostrophes dropped
// ("don't ...; WhenCanPreempt: MayStop" ->
// "dont_..._when_can_preempt_may_stop").
inline std::string SnakeCase(const std::string& name) {
  std::string out;
  char prev = 0;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\'') continue;
    if (std::isalnum(u)) {
      if (std::isupper(u) && prev != 0 &&
          (std::islower(static_cast<unsigned char>(prev)) ||
           std::isdigit(static_cast<unsigned char>(prev)))) {
        out += '_';
      }
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
    prev = c;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

inline std::string Key(const NamespacedName& key) {
  return absl::StrCat(key.first, "/", key.second);
}

// Kueue's MakeWorkload(name, namespace).
inline ::kq::testing::WorkloadBuilder Wl(std::string name,
                                         std::string namespace_name) {
  ::kq::testing::WorkloadBuilder builder(std::move(name));
  builder.Namespace(std::move(namespace_name));
  return builder;
}

// A namespace selector matching label dep in `values`.
inline LabelSelector DepIn(std::string value) {
  LabelSelector selector;
  selector.match_expressions.push_back(
      LabelSelectorRequirement{"dep", "In", {std::move(value)}});
  return selector;
}

// Conditions as Kueue's wantWorkloads list them (times are not compared).
inline Condition Pending(std::string reason, std::string message) {
  return Condition{kConditionQuotaReserved, "False", std::move(reason),
                   std::move(message)};
}

// A workload the cycle did not admit, as Kueue's wantWorkloads list it with
// UnadmittedWorkloadsObservability (on by default at Kueue's HEAD): the
// scheduler's QuotaReserved=False reason and message, and the
// Admitted=False NoReservation that UnsetQuotaReservationWithCondition's
// SyncAdmittedCondition adds.
inline std::vector<Condition> Unadmitted(std::string reason,
                                         std::string message) {
  return {Pending(std::move(reason), std::move(message)),
          Condition{kConditionAdmitted, "False", kReasonNoReservation,
                    kMessageNoReservation}};
}

// QuotaReserved=True and Admitted=True, as Kueue's admit() writes them when
// every admission check is Ready.
inline std::vector<Condition> ReservedAndAdmitted(const std::string& cq) {
  return {Condition{kConditionQuotaReserved, "True", "QuotaReserved",
                    absl::StrCat("Quota reserved in ClusterQueue ", cq)},
          Condition{kConditionAdmitted, "True", "Admitted",
                    "The workload is admitted"}};
}

// Kueue's preemptor fixture: UID wl-preemptor, JobUID job-preemptor.
inline Workload Preemptor(Workload wl) {
  wl.meta.uid = "wl-preemptor";
  wl.meta.labels["kueue.x-k8s.io/job-uid"] = "job-preemptor";
  return wl;
}

// The Evicted and Preempted conditions Kueue's IssuePreemptions writes on a
// victim of the wl-preemptor fixture.
inline std::vector<Condition> PreemptedBy(const std::string& reason,
                                          const std::string& human_reason,
                                          const std::string& preemptor_path,
                                          const std::string& preemptee_path) {
  const std::string message = absl::StrCat(
      "Preempted to accommodate a workload (UID: wl-preemptor, JobUID: "
      "job-preemptor) due to ",
      human_reason, "; preemptor path: ", preemptor_path,
      "; preemptee path: ", preemptee_path);
  return {Condition{kConditionEvicted, "True", "Preempted", message},
          Condition{"Preempted", "True", reason, message}};
}

// Kueue's "Workload no longer fits after processing another workload".
inline std::vector<Condition> NoLongerFits() {
  return Unadmitted(
      kReasonWaitingForQuota,
      "Workload no longer fits after processing another workload");
}

// Admissions of every workload holding quota ("ns/name" -> admission), as
// Kueue's wantAssignments reads them from the cache. With `admitted_only`,
// only those also Admitted (TestLastSchedulingContext's check).
inline std::map<std::string, Admission> Assignments(
    const AdmissionState& state, bool admitted_only = false) {
  std::map<std::string, Admission> got;
  for (const Workload& wl : state.workloads()) {
    if (!wl.admission.has_value() ||
        !IsConditionTrue(wl.conditions, kConditionQuotaReserved)) {
      continue;
    }
    if (admitted_only && !IsConditionTrue(wl.conditions, kConditionAdmitted)) {
      continue;
    }
    got[Key(KeyOf(wl))] = *wl.admission;
  }
  return got;
}

// Kueue's qManager.Dump (`inadmissible` false) or DumpInadmissible (true):
// ClusterQueue -> its workloads, sorted, leaving out empty queues.
inline std::map<std::string, std::vector<std::string>> Left(
    const AdmissionState& state, bool inadmissible) {
  std::map<std::string, std::vector<std::string>> got;
  const queue::Manager& queues = state.queues_for_test();
  for (const auto& [name, cq] : state.cluster_queues()) {
    std::vector<NamespacedName> held = inadmissible
                                           ? queues.InadmissibleWorkloads(name)
                                           : queues.ActiveWorkloads(name);
    if (held.empty()) continue;
    std::vector<std::string> keys;
    for (const NamespacedName& key : held) keys.push_back(Key(key));
    std::sort(keys.begin(), keys.end());
    got[name] = std::move(keys);
  }
  return got;
}

// Checks the listed conditions (type, status, reason, message) of each
// listed workload.
inline void ExpectConditions(
    const AdmissionState& state,
    const std::map<std::string, std::vector<Condition>>& want) {
  std::map<std::string, const Workload*> by_key;
  for (const Workload& wl : state.workloads()) by_key[Key(KeyOf(wl))] = &wl;
  for (const auto& [name, conditions] : want) {
    auto it = by_key.find(name);
    if (it == by_key.end()) {
      ADD_FAILURE() << "workload " << name << " not found";
      continue;
    }
    for (const Condition& cond : conditions) {
      const Condition* got = FindCondition(it->second->conditions, cond.type);
      if (got == nullptr) {
        ADD_FAILURE() << name << ": no " << cond.type << " condition";
        continue;
      }
      EXPECT_EQ(absl::StrCat(got->status, " ", got->reason, ": ", got->message),
                absl::StrCat(cond.status, " ", cond.reason, ": ", cond.message))
          << name << " " << cond.type;
    }
  }
}

// Kueue's TestSchedule fixture: namespaces, ResourceFlavors, ClusterQueues
// and LocalQueues every case starts with.
inline std::vector<ConfigObject> ScheduleFixture() {
  using ::kq::testing::ClusterQueueBuilder;
  using ::kq::testing::LocalQueueBuilder;
  using ::kq::testing::NamespaceBuilder;
  using ::kq::testing::ResourceFlavorBuilder;
  return {
      NamespaceBuilder("default").Build(),
      NamespaceBuilder("eng-alpha").Label("dep", "eng").Build(),
      NamespaceBuilder("eng-beta").Label("dep", "eng").Build(),
      NamespaceBuilder("eng-gamma").Label("dep", "eng").Build(),
      NamespaceBuilder("sales").Label("dep", "sales").Build(),
      NamespaceBuilder("lend").Label("dep", "lend").Build(),
      ResourceFlavorBuilder("default").Build(),
      ResourceFlavorBuilder("on-demand").Build(),
      ResourceFlavorBuilder("spot").Build(),
      ResourceFlavorBuilder("model-a").Build(),
      ResourceFlavorBuilder("spot-tainted")
          .Taint("key", "val", "NoSchedule")
          .Build(),
      ResourceFlavorBuilder("spot-tainted-2")
          .Taint("key", "val2", "NoSchedule")
          .Build(),
      ClusterQueueBuilder("sales")
          .NamespaceSelector(DepIn("sales"))
          .QueueingStrategy(QueueingStrategy::kStrictFIFO)
          .ResourceGroup({"cpu"})
          .Quota("default", "cpu", "50")
          .BorrowingLimit("0")
          .Build(),
      ClusterQueueBuilder("eng-alpha")
          .Cohort("eng")
          .NamespaceSelector(DepIn("eng"))
          .QueueingStrategy(QueueingStrategy::kStrictFIFO)
          .ResourceGroup({"cpu"})
          .Quota("on-demand", "cpu", "50")
          .BorrowingLimit("50")
          .Quota("spot", "cpu", "100")
          .BorrowingLimit("0")
          .Build(),
      ClusterQueueBuilder("eng-beta")
          .Cohort("eng")
          .NamespaceSelector(DepIn("eng"))
          .QueueingStrategy(QueueingStrategy::kStrictFIFO)
          .ReclaimWithinCohort("Any")
          .WithinClusterQueue("LowerPriority")
          .ResourceGroup({"cpu"})
          .Quota("on-demand", "cpu", "50")
          .BorrowingLimit("10")
          .Quota("spot", "cpu", "0")
          .BorrowingLimit("100")
          .ResourceGroup({"example.com/gpu"})
          .Quota("model-a", "example.com/gpu", "20")
          .BorrowingLimit("0")
          .Build(),
      ClusterQueueBuilder("flavor-nonexistent-cq")
          .QueueingStrategy(QueueingStrategy::kStrictFIFO)
          .ResourceGroup({"cpu"})
          .Quota("nonexistent-flavor", "cpu", "50")
          .Build(),
      ClusterQueueBuilder("lend-a")
          .Cohort("lend")
          .NamespaceSelector(DepIn("lend"))
          .ResourceGroup({"cpu"})
          .Quota("default", "cpu", "3")
          .LendingLimit("2")
          .Build(),
      ClusterQueueBuilder("lend-b")
          .Cohort("lend")
          .NamespaceSelector(DepIn("lend"))
          .ResourceGroup({"cpu"})
          .Quota("default", "cpu", "2")
          .LendingLimit("2")
          .Build(),
      LocalQueueBuilder("sales", "main", "sales").Build(),
      LocalQueueBuilder("sales", "blocked", "eng-alpha").Build(),
      LocalQueueBuilder("eng-alpha", "main", "eng-alpha").Build(),
      LocalQueueBuilder("eng-beta", "main", "eng-beta").Build(),
      LocalQueueBuilder("sales", "flavor-nonexistent-queue",
                        "flavor-nonexistent-cq")
          .Build(),
      LocalQueueBuilder("sales", "cq-nonexistent-queue", "nonexistent-cq")
          .Build(),
      LocalQueueBuilder("lend", "lend-a-queue", "lend-a").Build(),
      LocalQueueBuilder("lend", "lend-b-queue", "lend-b").Build(),
  };
}

struct ScheduleCase {
  // Kueue's case name, verbatim.
  std::string kueue_name;
  // Objects besides the fixture (Kueue's additionalClusterQueues,
  // additionalLocalQueues and cohorts).
  std::vector<ConfigObject> objects;
  // Pending workloads and workloads already holding quota.
  std::vector<Workload> workloads;
  // Every workload holding quota after the cycle ("ns/name").
  std::map<std::string, Admission> want_assignments;
  // ClusterQueue -> workloads left in its heap / parked inadmissible.
  std::map<std::string, std::vector<std::string>> want_left;
  std::map<std::string, std::vector<std::string>> want_inadmissible_left;
  // "ns/name" -> conditions it must have after the cycle.
  std::map<std::string, std::vector<Condition>> want_conditions;
};

inline void PrintTo(const ScheduleCase& c, std::ostream* os) {
  *os << c.kueue_name;
}

}  // namespace kq::admission::kueue_port
