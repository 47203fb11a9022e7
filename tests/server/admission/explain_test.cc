// Explain and SimulateAdmission (server/admission/explain.h, what_if.h)
// over kq's admission state. The tables are Kueue's where Kueue has the
// same question answered:
//   - positions: pkg/visibility/storage/pending_workloads_cq_test.go
//     (TestPendingWorkloadsInCQ) and pending_workloads_lq_test.go
//     (TestPendingWorkloadsInLQ), each workload's PositionInClusterQueue
//     and PositionInLocalQueue;
//   - flavor attempts: pkg/scheduler/flavorassigner/flavorassigner_test.go
//     (TestAssignFlavors), each pod set's FlavorAssignmentAttempts (flavor,
//     mode, reasons); Kueue's clusterQueueUsage is held by workloads that
//     reserve it, and the shortages (kq's addition) are checked against the
//     quota numbers of the case;
//   - victims: pkg/scheduler/preemption/preemption_test.go (TestPreemption),
//     the workloads whose wantWorkloads carry Preempted=True, with its
//     reason;
//   - invalid workloads: pkg/webhooks/workload_webhook_test.go
//     (TestValidateWorkload), as kq's ValidateWorkload refuses them.
// Cases without a Kueue counterpart (an admitted workload, an unknown one,
// a missing LocalQueue, the what-if leaving the live state alone) are kq's
// and named in kq's words.
//
// Ported from TestPendingWorkloadsInCQ / InLQ: every case that does not
// page. Not ported: "limit query parameter set", "offset query parameter
// set", "limit offset query parameters set" / "limit and offset query
// parameters set", "negative limit is clamped ...", "excessive limit ..."
// (Explain reports one workload's positions; there is no paging), "empty
// cluster queue" and "nonexistent queue name" (they list a queue, not a
// workload).
// Ported from TestAssignFlavors: the cases below; the others exercise the
// flavor assigner itself (tests/server/scheduler has them) and add nothing
// to how Explain reports an assignment.
// Ported from TestPreemption: "preempt lowest priority", "preempt
// multiple", "reclaim quota from borrower"; the rest test the search
// (tests/server/preemption).

#include "server/admission/explain.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/admission/what_if.h"
#include "server/cache/cache.h"
#include "server/core/objects.h"
#include "server/queue/manager.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::admission {

void PrintTo(const ResourceShortage& s, std::ostream* os) {
  *os << "{" << s.resource << " requested=" << s.requested.ToString()
      << " available=" << s.available.ToString()
      << " nominal=" << s.nominal_quota.ToString() << " borrowingLimit="
      << (s.borrowing_limit ? s.borrowing_limit->ToString() : "none") << "}";
}

void PrintTo(const FlavorAttemptView& at, std::ostream* os) {
  *os << "{" << at.pod_set << "/" << at.flavor << " " << at.mode << " [";
  for (const std::string& r : at.reasons) *os << r << "; ";
  *os << "]";
  for (const ResourceShortage& s : at.shortages) {
    *os << " ";
    PrintTo(s, os);
  }
  *os << "}";
}

void PrintTo(const Victim& v, std::ostream* os) {
  *os << "{" << v.workload.first << "/" << v.workload.second << " in "
      << v.cluster_queue << ": " << v.reason << "}";
}

namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::NamespaceBuilder;
using ::kq::testing::Qty;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// Kueue's case name in snake_case, for gtest.
std::string SnakeCase(const std::string& name) {
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

WorkloadBuilder Wl(std::string name, std::string namespace_name) {
  WorkloadBuilder builder(std::move(name));
  builder.Namespace(std::move(namespace_name));
  return builder;
}

void Load(AdmissionState& state, const std::vector<ConfigObject>& objects,
          const std::vector<Workload>& workloads) {
  for (const ConfigObject& o : objects) state.LoadObject(o);
  for (const Workload& wl : workloads) state.LoadWorkload(wl);
  state.Rebuild(kNow);
}

// Everything Explain and SimulateAdmission must leave as it was: the
// workloads, the usage in the quota tree and the queues.
struct Snapshot {
  WorkloadSet workloads;
  std::map<std::string, cache::FlavorResourceQuantities> usage;
  std::map<std::string, std::vector<NamespacedName>> active, inadmissible;

  explicit Snapshot(const AdmissionState& state)
      : workloads(state.workloads()) {
    for (const auto& [name, cq] : state.cache().cluster_queues()) {
      usage[name] = cq->node.usage;
      active[name] = state.queues().ActiveWorkloads(name);
      inadmissible[name] = state.queues().InadmissibleWorkloads(name);
    }
    for (const auto& [name, cohort] : state.cache().cohorts()) {
      usage[absl::StrCat("cohort/", name)] = cohort->node.usage;
    }
  }
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

std::vector<Victim> Sorted(std::vector<Victim> victims) {
  std::sort(
      victims.begin(), victims.end(),
      [](const Victim& a, const Victim& b) { return a.workload < b.workload; });
  return victims;
}

// ---------------------------------------------------------------------------
// Positions: Kueue's TestPendingWorkloadsInCQ and TestPendingWorkloadsInLQ.

struct Positions {
  int64_t in_cluster_queue;
  int64_t in_local_queue;
};

struct PositionCase {
  std::string kueue_name;
  std::vector<ConfigObject> objects;
  std::vector<Workload> workloads;
  // "namespace/name" -> Kueue's PositionInClusterQueue and
  // PositionInLocalQueue of the workloads the request lists.
  std::map<NamespacedName, Positions> want;
};

void PrintTo(const PositionCase& c, std::ostream* os) { *os << c.kueue_name; }

constexpr int32_t kLowPrio = 50;
constexpr int32_t kHighPrio = 100;

Workload Pending(std::string name, std::string namespace_name,
                 std::string queue, int32_t priority, absl::Time created) {
  return Wl(std::move(name), std::move(namespace_name))
      .Queue(std::move(queue))
      .Priority(priority)
      .Created(created)
      .PodSet("main", 1)
      .Build();
}

std::vector<PositionCase> PositionCases() {
  const absl::Time now = kNow;
  const absl::Time later = kNow + absl::Seconds(1);
  // TestPendingWorkloadsInCQ's namespaces and queues.
  const std::string ns = "foo", ns_b = "bar";
  // TestPendingWorkloadsInLQ's.
  const std::string ns_a = "nsA", lq_ns_b = "nsB";

  std::vector<Workload> four_in_one_cq = {
      Pending("lqA-high-prio", ns, "lqA", kHighPrio, now),
      Pending("lqA-low-prio", ns, "lqA", kLowPrio, now),
      Pending("lqB-high-prio", ns, "lqB", kHighPrio, later),
      Pending("lqB-low-prio", ns, "lqB", kLowPrio, later),
  };
  std::vector<Workload> four_in_one_cq_lq = {
      Pending("lqA-high-prio", ns_a, "lqA", kHighPrio, now),
      Pending("lqA-low-prio", ns_a, "lqA", kLowPrio, now),
      Pending("lqB-high-prio", ns_a, "lqB", kHighPrio, later),
      Pending("lqB-low-prio", ns_a, "lqB", kLowPrio, later),
  };
  std::vector<Workload> four_in_two_cqs = {
      Pending("lqA-high-prio", ns_a, "lqA", kHighPrio, now),
      Pending("lqA-low-prio", ns_a, "lqA", kLowPrio, now),
      Pending("lqB-high-prio", lq_ns_b, "lqB", kHighPrio, later),
      Pending("lqB-low-prio", lq_ns_b, "lqB", kLowPrio, later),
  };
  std::vector<ConfigObject> two_cqs = {
      ClusterQueueBuilder("cqA").Build(),
      ClusterQueueBuilder("cqB").Build(),
      LocalQueueBuilder(ns_a, "lqA", "cqA").Build(),
      LocalQueueBuilder(lq_ns_b, "lqB", "cqB").Build(),
  };

  return {
      // TestPendingWorkloadsInCQ.
      {.kueue_name = "single ClusterQueue and single LocalQueue setup with two "
                     "workloads and default query parameters",
       .objects = {ClusterQueueBuilder("cqA").Build(),
                   LocalQueueBuilder(ns, "lqA", "cqA").Build()},
       .workloads = {Pending("a", ns, "lqA", kHighPrio, now),
                     Pending("b", ns, "lqA", kLowPrio, now)},
       .want = {{{ns, "a"}, {0, 0}}, {{ns, "b"}, {1, 1}}}},
      {.kueue_name = "single ClusterQueue and two LocalQueue setup with four "
                     "workloads and default query parameters",
       .objects = {ClusterQueueBuilder("cqA").Build(),
                   LocalQueueBuilder(ns, "lqA", "cqA").Build(),
                   LocalQueueBuilder(ns, "lqB", "cqA").Build()},
       .workloads = four_in_one_cq,
       .want = {{{ns, "lqA-high-prio"}, {0, 0}},
                {{ns, "lqB-high-prio"}, {1, 0}},
                {{ns, "lqA-low-prio"}, {2, 1}},
                {{ns, "lqB-low-prio"}, {3, 1}}}},
      {.kueue_name = "same LocalQueue name reused across different namespaces "
                     "reports position within each namespace's own "
                     "LocalQueue",
       .objects = {ClusterQueueBuilder("cqA").Build(),
                   LocalQueueBuilder(ns, "lqA", "cqA").Build(),
                   LocalQueueBuilder(ns_b, "lqA", "cqA").Build()},
       .workloads = {Pending("a", ns, "lqA", kHighPrio, now),
                     Pending("b", ns_b, "lqA", kHighPrio, later)},
       .want = {{{ns, "a"}, {0, 0}}, {{ns_b, "b"}, {1, 0}}}},
      // TestPendingWorkloadsInLQ. Its first case has the name of
      // TestPendingWorkloadsInCQ's first: "LQ: " keeps the test names apart.
      {.kueue_name = "LQ: single ClusterQueue and single LocalQueue setup with "
                     "two workloads and default query parameters",
       .objects = {ClusterQueueBuilder("cqA").Build(),
                   LocalQueueBuilder(ns_a, "lqA", "cqA").Build()},
       .workloads = {Pending("a", ns_a, "lqA", kHighPrio, now),
                     Pending("b", ns_a, "lqA", kLowPrio, now)},
       .want = {{{ns_a, "a"}, {0, 0}}, {{ns_a, "b"}, {1, 1}}}},
      {.kueue_name = "single ClusterQueue and two LocalQueue setup with four "
                     "workloads and default query parameters; LocalQueue A "
                     "request",
       .objects = {ClusterQueueBuilder("cqA").Build(),
                   LocalQueueBuilder(ns_a, "lqA", "cqA").Build(),
                   LocalQueueBuilder(ns_a, "lqB", "cqA").Build()},
       .workloads = four_in_one_cq_lq,
       .want = {{{ns_a, "lqA-high-prio"}, {0, 0}},
                {{ns_a, "lqA-low-prio"}, {2, 1}}}},
      {.kueue_name = "single ClusterQueue and two LocalQueue setup with four "
                     "workloads and default query parameters; LocalQueue B "
                     "request",
       .objects = {ClusterQueueBuilder("cqA").Build(),
                   LocalQueueBuilder(ns_a, "lqA", "cqA").Build(),
                   LocalQueueBuilder(ns_a, "lqB", "cqA").Build()},
       .workloads = four_in_one_cq_lq,
       .want = {{{ns_a, "lqB-high-prio"}, {1, 0}},
                {{ns_a, "lqB-low-prio"}, {3, 1}}}},
      {.kueue_name = "two Namespaces, two ClusterQueue and two LocalQueue "
                     "setup with four workloads and default query parameters, "
                     "LocalQueue A request",
       .objects = two_cqs,
       .workloads = four_in_two_cqs,
       .want = {{{ns_a, "lqA-high-prio"}, {0, 0}},
                {{ns_a, "lqA-low-prio"}, {1, 1}}}},
      {.kueue_name = "two Namespaces, two ClusterQueue and two LocalQueue "
                     "setup with four workloads and default query parameters, "
                     "LocalQueue B request",
       .objects = two_cqs,
       .workloads = four_in_two_cqs,
       .want = {{{lq_ns_b, "lqB-high-prio"}, {0, 0}},
                {{lq_ns_b, "lqB-low-prio"}, {1, 1}}}},
  };
}

class ExplainPositionTest : public ::testing::TestWithParam<PositionCase> {};

TEST_P(ExplainPositionTest, PositionsInClusterQueueAndLocalQueue) {
  const PositionCase& tc = GetParam();
  AdmissionState state;
  Load(state, tc.objects, tc.workloads);
  for (const auto& [key, want] : tc.want) {
    ASSERT_OK_AND_ASSIGN(Explanation got, Explain(state, key, kNow));
    EXPECT_EQ(got.state, "Pending") << key.second;
    EXPECT_EQ(got.position_in_cluster_queue,
              std::optional<int64_t>(want.in_cluster_queue))
        << key.second;
    EXPECT_EQ(got.position_in_local_queue,
              std::optional<int64_t>(want.in_local_queue))
        << key.second;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, ExplainPositionTest, ::testing::ValuesIn(PositionCases()),
    [](const ::testing::TestParamInfo<PositionCase>& info) {
      return SnakeCase(info.param.kueue_name);
    });

// ---------------------------------------------------------------------------
// Flavor attempts and shortages: Kueue's TestAssignFlavors.

struct AttemptCase {
  std::string kueue_name;
  // Flavors, the ClusterQueue(s) and LocalQueue "main" in namespace
  // "default" pointing at test-clusterqueue.
  std::vector<ConfigObject> objects;
  // Workloads holding Kueue's clusterQueueUsage and
  // secondaryClusterQueueUsage.
  std::vector<Workload> holding;
  // The pending workload explained (Kueue's wlPods).
  Workload workload;
  std::vector<FlavorAttemptView> want_attempts;
};

void PrintTo(const AttemptCase& c, std::ostream* os) { *os << c.kueue_name; }

// Kueue's resourceFlavors of TestAssignFlavors that the cases use.
std::vector<ConfigObject> AssignFlavorsFixture() {
  return {
      NamespaceBuilder("default").Build(),
      ResourceFlavorBuilder("default").Build(),
      ResourceFlavorBuilder("one").NodeLabel("type", "one").Build(),
      ResourceFlavorBuilder("two").NodeLabel("type", "two").Build(),
      ResourceFlavorBuilder("tainted")
          .Taint("instance", "spot", "NoSchedule")
          .Build(),
      LocalQueueBuilder("default", "main", "test-clusterqueue").Build(),
  };
}

// The pending workload of a case: pod set "main" of `count` pods.
WorkloadBuilder Incoming(int32_t count = 1) {
  WorkloadBuilder builder("wl");
  builder.Namespace("default").Queue("main").Created(kNow).PodSet("main",
                                                                  count);
  return builder;
}

// A workload holding `amount` of cpu of `flavor` in `cq`.
Workload CpuHolder(std::string name, const std::string& cq,
                   const std::string& flavor, const std::string& amount) {
  return Wl(std::move(name), "default")
      .Request("cpu", amount)
      .ReserveQuota(AdmissionBuilder(cq).Assign("cpu", flavor, amount).Build(),
                    kNow)
      .Build();
}

ResourceShortage Short(std::string resource, const char* requested,
                       const char* available, const char* nominal,
                       std::optional<const char*> borrowing_limit = {}) {
  ResourceShortage s{std::move(resource), Qty(requested), Qty(available),
                     Qty(nominal), std::nullopt};
  if (borrowing_limit) s.borrowing_limit = Qty(*borrowing_limit);
  return s;
}

std::vector<AttemptCase> AttemptCases() {
  return {
      {.kueue_name = "single flavor, fits",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .ResourceGroup({"cpu", "memory"})
                       .Quota("default", "cpu", "1")
                       .Quota("memory", "2Mi")
                       .Build()},
       .workload =
           Incoming().Request("cpu", "1").Request("memory", "1Mi").Build(),
       .want_attempts = {{"main", "default", "Fit", {}, {}}}},
      {.kueue_name = "single flavor, used resources, doesn't fit",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .ResourceGroup({"cpu"})
                       .Quota("default", "cpu", "4")
                       .Build()},
       .holding = {CpuHolder("used", "test-clusterqueue", "default", "3")},
       .workload = Incoming().Request("cpu", "2").Build(),
       .want_attempts = {{"main",
                          "default",
                          "Preempt",
                          {"insufficient unused quota for cpu in flavor "
                           "default, 1 more needed"},
                          {Short("cpu", "2", "1", "4")}}}},
      {.kueue_name = "multiple resources in a group, doesn't fit",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .ResourceGroup({"cpu", "memory"})
                       .Quota("one", "cpu", "2")
                       .Quota("memory", "1Gi")
                       .Quota("two", "cpu", "4")
                       .Quota("memory", "5Mi")
                       .Build()},
       .workload =
           Incoming().Request("cpu", "3").Request("memory", "10Mi").Build(),
       .want_attempts =
           {{"main",
             "one",
             "NoFit",
             {"insufficient quota for cpu in flavor one, previously "
              "considered podsets requests (0) + current podset request (3) "
              "> maximum capacity (2)"},
             {Short("cpu", "3", "2", "2")}},
            {"main",
             "two",
             "NoFit",
             {"insufficient quota for memory in flavor two, previously "
              "considered podsets requests (0) + current podset request "
              "(10Mi) > maximum capacity (5Mi)"},
             {Short("memory", "10Mi", "5Mi", "5Mi")}}}},
      {.kueue_name = "multiple flavors, fits while skipping tainted flavor",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .ResourceGroup({"cpu"})
                       .Quota("tainted", "cpu", "4")
                       .Quota("two", "cpu", "4")
                       .Build()},
       .workload = Incoming().Request("cpu", "3").Build(),
       .want_attempts = {{"main",
                          "tainted",
                          "NoFit",
                          {"untolerated taint {instance spot NoSchedule "
                           "<nil>} in flavor tainted"},
                          {}},
                         {"main", "two", "Fit", {}, {}}}},
      {.kueue_name = "not enough space to borrow",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .Cohort("test-cohort")
                       .ResourceGroup({"cpu"})
                       .Quota("one", "cpu", "1")
                       .Build(),
                   ClusterQueueBuilder("test-secondary-clusterqueue")
                       .Cohort("test-cohort")
                       .ResourceGroup({"cpu"})
                       .Quota("one", "cpu", "10")
                       .LendingLimit("0")
                       .Build()},
       .holding = {CpuHolder("secondary-used", "test-secondary-clusterqueue",
                             "one", "9")},
       .workload = Incoming().Request("cpu", "2").Build(),
       .want_attempts = {{"main",
                          "one",
                          "NoFit",
                          {"insufficient quota for cpu in flavor one, "
                           "previously considered podsets requests (0) + "
                           "current podset request (2) > maximum capacity "
                           "(1)"},
                          {Short("cpu", "2", "1", "1")}}}},
      {.kueue_name = "past min, but can preempt in ClusterQueue",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .ResourceGroup({"cpu"})
                       .Quota("one", "cpu", "2")
                       .Build()},
       .holding = {CpuHolder("used", "test-clusterqueue", "one", "1")},
       .workload = Incoming().Request("cpu", "2").Build(),
       .want_attempts = {{"main",
                          "one",
                          "Preempt",
                          {"insufficient unused quota for cpu in flavor one, "
                           "1 more needed"},
                          {Short("cpu", "2", "1", "2")}}}},
      {.kueue_name = "resource not listed in clusterQueue",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .ResourceGroup({"cpu"})
                       .Quota("one", "cpu", "4")
                       .Build()},
       .workload = Incoming().Request("example.com/gpu", "2").Build(),
       .want_attempts = {{"main",
                          "",
                          "NoFit",
                          {"resource example.com/gpu unavailable in "
                           "ClusterQueue"},
                          {}}}},
      {.kueue_name = "num pods fit",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .ResourceGroup({"pods", "cpu"})
                       .Quota("default", "pods", "3")
                       .Quota("cpu", "10")
                       .Build()},
       .workload = Incoming(3).Request("cpu", "1").Build(),
       .want_attempts = {{"main", "default", "Fit", {}, {}}}},
      {.kueue_name = "num pods don't fit",
       .objects = {ClusterQueueBuilder("test-clusterqueue")
                       .ResourceGroup({"pods", "cpu"})
                       .Quota("default", "pods", "2")
                       .Quota("cpu", "10")
                       .Build()},
       .workload = Incoming(3).Request("cpu", "1").Build(),
       .want_attempts = {{"main",
                          "default",
                          "NoFit",
                          {"insufficient quota for pods in flavor default, "
                           "previously considered podsets requests (0) + "
                           "current podset request (3) > maximum capacity "
                           "(2)"},
                          {Short("pods", "3", "2", "2")}}}},
  };
}

class ExplainAttemptTest : public ::testing::TestWithParam<AttemptCase> {};

TEST_P(ExplainAttemptTest, FlavorAttempts) {
  const AttemptCase& tc = GetParam();
  AdmissionState state;
  std::vector<ConfigObject> objects = AssignFlavorsFixture();
  objects.insert(objects.end(), tc.objects.begin(), tc.objects.end());
  std::vector<Workload> workloads = tc.holding;
  workloads.push_back(tc.workload);
  Load(state, objects, workloads);
  const Snapshot before(state);

  ASSERT_OK_AND_ASSIGN(Explanation got,
                       Explain(state, KeyOf(tc.workload), kNow));
  EXPECT_EQ(got.state, "Pending");
  EXPECT_EQ(got.cluster_queue, "test-clusterqueue");
  EXPECT_EQ(got.attempts, tc.want_attempts);
  // Nobody holds quota that the preemption search may take.
  EXPECT_TRUE(got.victims.empty());
  EXPECT_TRUE(Snapshot(state) == before) << "Explain changed the state";
}

INSTANTIATE_TEST_SUITE_P(Kueue, ExplainAttemptTest,
                         ::testing::ValuesIn(AttemptCases()),
                         [](const ::testing::TestParamInfo<AttemptCase>& info) {
                           return SnakeCase(info.param.kueue_name);
                         });

// After a scheduling pass the deciding condition is the QuotaReserved=False
// the pass wrote (Kueue's NoFit reason and Assignment.Message()), and the
// attempts still say which resource is short.
TEST(ExplainTest, PendingWorkloadShortOfCpu) {
  AdmissionState state;
  std::vector<ConfigObject> objects = AssignFlavorsFixture();
  objects.push_back(ClusterQueueBuilder("test-clusterqueue")
                        .Cohort("test-cohort")
                        .ResourceGroup({"cpu"})
                        .Quota("one", "cpu", "1")
                        .BorrowingLimit("3")
                        .Build());
  objects.push_back(ClusterQueueBuilder("test-secondary-clusterqueue")
                        .Cohort("test-cohort")
                        .ResourceGroup({"cpu"})
                        .Quota("one", "cpu", "10")
                        .LendingLimit("2")
                        .Build());
  const Workload wl = Incoming(2).Request("cpu", "1500m").Build();
  Load(state, objects,
       {CpuHolder("secondary-used", "test-secondary-clusterqueue", "one", "9"),
        wl});
  state.RunPasses(kNow);

  ASSERT_OK_AND_ASSIGN(Explanation got, Explain(state, KeyOf(wl), kNow));
  EXPECT_EQ(got.state, "Pending");
  // 2 pods of 1500m: 3 CPUs. The cohort has the queue's 1 plus the 2 the
  // secondary queue lends, of which its usage above its local 8 takes 1:
  // 2 are available, 3 at most (within the borrowing limit of 3). Short of
  // unused quota, and preemption cannot help: nominal 1 is below 3, the
  // whole cohort is needed and borrowWithinCohort is Never.
  EXPECT_EQ(got.reason, "WaitingForQuota");
  EXPECT_EQ(got.message,
            "couldn't assign flavors to pod set main: insufficient unused "
            "quota for cpu in flavor one, 1 more needed");
  EXPECT_EQ(got.position_in_cluster_queue, std::optional<int64_t>(0));
  EXPECT_EQ(got.position_in_local_queue, std::optional<int64_t>(0));
  EXPECT_EQ(got.attempts,
            (std::vector<FlavorAttemptView>{
                {"main",
                 "one",
                 "NoFit",
                 {"insufficient unused quota for cpu in flavor one, 1 more "
                  "needed"},
                 {Short("cpu", "3", "2", "1", "3")}}}));
  EXPECT_TRUE(got.victims.empty());
}

TEST(ExplainTest, AdmittedWorkload) {
  AdmissionState state;
  std::vector<ConfigObject> objects = AssignFlavorsFixture();
  objects.push_back(ClusterQueueBuilder("test-clusterqueue")
                        .ResourceGroup({"cpu"})
                        .Quota("default", "cpu", "4")
                        .Build());
  const Workload wl = Incoming()
                          .Request("cpu", "1")
                          .Admitted(AdmissionBuilder("test-clusterqueue")
                                        .Assign("cpu", "default", "1")
                                        .Build(),
                                    kNow)
                          .Build();
  Load(state, objects, {wl});

  ASSERT_OK_AND_ASSIGN(Explanation got, Explain(state, KeyOf(wl), kNow));
  EXPECT_EQ(got.workload, wl);
  EXPECT_EQ(got.state, "Admitted");
  EXPECT_EQ(got.cluster_queue, "test-clusterqueue");
  EXPECT_EQ(got.reason, "Admitted");
  EXPECT_EQ(got.message, "The workload is admitted");
  EXPECT_EQ(got.position_in_cluster_queue, std::nullopt);
  EXPECT_EQ(got.position_in_local_queue, std::nullopt);
  EXPECT_TRUE(got.attempts.empty());
  EXPECT_TRUE(got.victims.empty());
}

TEST(ExplainTest, MissingLocalQueue) {
  AdmissionState state;
  const Workload wl = Incoming().Queue("nope").Request("cpu", "1").Build();
  Load(state, AssignFlavorsFixture(), {wl});

  ASSERT_OK_AND_ASSIGN(Explanation got, Explain(state, KeyOf(wl), kNow));
  EXPECT_EQ(got.state, "Pending");
  EXPECT_EQ(got.cluster_queue, "");
  EXPECT_EQ(got.reason, "Misconfigured");
  EXPECT_EQ(got.message, "LocalQueue nope doesn't exist");
  EXPECT_EQ(got.position_in_cluster_queue, std::nullopt);
  EXPECT_EQ(got.position_in_local_queue, std::nullopt);
  EXPECT_TRUE(got.attempts.empty());
}

TEST(ExplainTest, UnknownWorkloadIsNotFound) {
  AdmissionState state;
  Load(state, AssignFlavorsFixture(), {});
  EXPECT_THAT(Explain(state, {"default", "ghost"}, kNow),
              StatusIs(absl::StatusCode::kNotFound,
                       "Workload \"default/ghost\" not found"));
}

// ---------------------------------------------------------------------------
// Victims: Kueue's TestPreemption.

struct PreemptionCase {
  std::string kueue_name;
  std::vector<Workload> admitted;
  // Kueue's incoming workload (UID wl-in, JobUID job-in), queued in the
  // LocalQueue named after targetCQ.
  Workload incoming;
  std::string target_cq;
  // The workloads Kueue's wantWorkloads mark Preempted, by name.
  std::vector<Victim> want_victims;
};

void PrintTo(const PreemptionCase& c, std::ostream* os) { *os << c.kueue_name; }

// TestPreemption's flavors and the ClusterQueues the ported cases use, with
// a LocalQueue in "default" for each, named after it.
std::vector<ConfigObject> PreemptionFixture() {
  std::vector<ConfigObject> objects = {
      NamespaceBuilder("default").Build(),
      ResourceFlavorBuilder("default").Build(),
      ResourceFlavorBuilder("alpha").Build(),
      ResourceFlavorBuilder("beta").Build(),
      ClusterQueueBuilder("standalone")
          .WithinClusterQueue("LowerPriority")
          .ResourceGroup({"cpu"})
          .Quota("default", "cpu", "6")
          .ResourceGroup({"memory"})
          .Quota("alpha", "memory", "3Gi")
          .Quota("beta", "memory", "3Gi")
          .Build(),
      ClusterQueueBuilder("c1")
          .Cohort("cohort")
          .WithinClusterQueue("LowerPriority")
          .ReclaimWithinCohort("LowerPriority")
          .ResourceGroup({"cpu", "memory"})
          .Quota("default", "cpu", "6")
          .BorrowingLimit("6")
          .Quota("memory", "3Gi")
          .BorrowingLimit("3Gi")
          .Build(),
      ClusterQueueBuilder("c2")
          .Cohort("cohort")
          .WithinClusterQueue("Never")
          .ReclaimWithinCohort("Any")
          .ResourceGroup({"cpu", "memory"})
          .Quota("default", "cpu", "6")
          .BorrowingLimit("6")
          .Quota("memory", "3Gi")
          .BorrowingLimit("3Gi")
          .Build(),
  };
  for (const char* cq : {"standalone", "c1", "c2"}) {
    objects.push_back(LocalQueueBuilder("default", cq, cq).Build());
  }
  return objects;
}

// An admitted workload of TestPreemption: `cpu` of flavor default in `cq`.
Workload Admitted(std::string name, int32_t priority, const std::string& cq,
                  const std::string& cpu) {
  return Wl(std::move(name), "default")
      .Priority(priority)
      .Queue(cq)
      .Request("cpu", cpu)
      .ReserveQuota(AdmissionBuilder(cq).Assign("cpu", "default", cpu).Build(),
                    kNow)
      .Build();
}

Workload In(int32_t priority, const std::string& cq, const std::string& cpu) {
  return Wl("in", "default")
      .Uid("wl-in")
      .Label("kueue.x-k8s.io/job-uid", "job-in")
      .Priority(priority)
      .Queue(cq)
      .Created(kNow)
      .Request("cpu", cpu)
      .Build();
}

std::vector<PreemptionCase> PreemptionCases() {
  return {
      {.kueue_name = "preempt lowest priority",
       .admitted = {Admitted("low", -1, "standalone", "2"),
                    Admitted("mid", 0, "standalone", "2"),
                    Admitted("high", 1, "standalone", "2")},
       .incoming = In(1, "standalone", "2"),
       .target_cq = "standalone",
       .want_victims = {{{"default", "low"}, "standalone", "InClusterQueue"}}},
      {.kueue_name = "preempt multiple",
       .admitted = {Admitted("low", -1, "standalone", "2"),
                    Admitted("mid", 0, "standalone", "2"),
                    Admitted("high", 1, "standalone", "2")},
       .incoming = In(1, "standalone", "3"),
       .target_cq = "standalone",
       .want_victims = {{{"default", "low"}, "standalone", "InClusterQueue"},
                        {{"default", "mid"}, "standalone", "InClusterQueue"}}},
      {.kueue_name = "reclaim quota from borrower",
       .admitted = {Admitted("c1-low", -1, "c1", "3"),
                    Admitted("c2-mid", 0, "c2", "3"),
                    Admitted("c2-high", 1, "c2", "6")},
       .incoming = In(1, "c1", "3"),
       .target_cq = "c1",
       .want_victims = {{{"default", "c2-mid"}, "c2", "InCohortReclamation"}}},
  };
}

class PreemptionVictimTest : public ::testing::TestWithParam<PreemptionCase> {};

TEST_P(PreemptionVictimTest, ExplainListsVictims) {
  const PreemptionCase& tc = GetParam();
  AdmissionState state;
  std::vector<Workload> workloads = tc.admitted;
  workloads.push_back(tc.incoming);
  Load(state, PreemptionFixture(), workloads);
  const Snapshot before(state);

  ASSERT_OK_AND_ASSIGN(Explanation got,
                       Explain(state, KeyOf(tc.incoming), kNow));
  EXPECT_EQ(got.cluster_queue, tc.target_cq);
  ASSERT_EQ(got.attempts.size(), 1u);
  EXPECT_EQ(got.attempts[0].flavor, "default");
  EXPECT_EQ(got.attempts[0].mode, "Preempt");
  EXPECT_EQ(Sorted(got.victims), tc.want_victims);
  EXPECT_TRUE(Snapshot(state) == before) << "Explain changed the state";
}

// The stored pending workload, dry-run: admitted after preempting Kueue's
// victims, whose Preempted condition names its UID; the live state is
// untouched.
TEST_P(PreemptionVictimTest, SimulateStoredPendingWorkload) {
  const PreemptionCase& tc = GetParam();
  AdmissionState state;
  std::vector<Workload> workloads = tc.admitted;
  workloads.push_back(tc.incoming);
  Load(state, PreemptionFixture(), workloads);
  const Snapshot before(state);

  // Only the name counts: the stored copy is simulated.
  Workload by_name;
  by_name.meta.namespace_name = "default";
  by_name.meta.name = "in";
  ASSERT_OK_AND_ASSIGN(WhatIf got, SimulateAdmission(state, by_name, kNow));
  EXPECT_TRUE(got.admissible);
  ASSERT_TRUE(got.workload.admission.has_value());
  EXPECT_EQ(got.workload.admission->cluster_queue, tc.target_cq);
  EXPECT_EQ(got.workload.admission->pod_set_assignments.at(0).flavors.at("cpu"),
            "default");
  EXPECT_EQ(got.workload.meta.uid, "wl-in");
  EXPECT_EQ(got.victims, tc.want_victims);
  // No admission checks: admitted as soon as the quota is reserved.
  EXPECT_EQ(got.reason, "Admitted");
  EXPECT_EQ(got.message, "The workload is admitted");
  const Condition* reserved =
      FindCondition(got.workload.conditions, kConditionQuotaReserved);
  ASSERT_NE(reserved, nullptr);
  EXPECT_EQ(reserved->message,
            absl::StrCat("Quota reserved in ClusterQueue ", tc.target_cq));
  EXPECT_TRUE(Snapshot(state) == before) << "SimulateAdmission changed the "
                                            "live state";
}

// The same workload as a new submission: same victims, UID what-if.
TEST_P(PreemptionVictimTest, SimulateNewWorkload) {
  const PreemptionCase& tc = GetParam();
  AdmissionState state;
  Load(state, PreemptionFixture(), tc.admitted);
  const Snapshot before(state);

  ASSERT_OK_AND_ASSIGN(WhatIf got, SimulateAdmission(state, tc.incoming, kNow));
  EXPECT_TRUE(got.admissible);
  EXPECT_EQ(got.workload.meta.uid, kWhatIfUid);
  EXPECT_EQ(got.workload.meta.creation_timestamp, kNow);
  EXPECT_EQ(got.victims, tc.want_victims);
  EXPECT_TRUE(Snapshot(state) == before) << "SimulateAdmission changed the "
                                            "live state";
  EXPECT_EQ(state.FindWorkload({"default", "in"}), nullptr);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, PreemptionVictimTest, ::testing::ValuesIn(PreemptionCases()),
    [](const ::testing::TestParamInfo<PreemptionCase>& info) {
      return SnakeCase(info.param.kueue_name);
    });

// ---------------------------------------------------------------------------
// SimulateAdmission: fits, does not fit, refused.

TEST(SimulateAdmissionTest, FitsOnTheUntaintedFlavor) {
  // TestAssignFlavors' "multiple flavors, fits while skipping tainted
  // flavor", dry-run: admitted on flavor two.
  AdmissionState state;
  std::vector<ConfigObject> objects = AssignFlavorsFixture();
  objects.push_back(ClusterQueueBuilder("test-clusterqueue")
                        .ResourceGroup({"cpu"})
                        .Quota("tainted", "cpu", "4")
                        .Quota("two", "cpu", "4")
                        .Build());
  Load(state, objects, {});
  const Snapshot before(state);

  ASSERT_OK_AND_ASSIGN(
      WhatIf got,
      SimulateAdmission(state, Incoming().Request("cpu", "3").Build(), kNow));
  EXPECT_TRUE(got.admissible);
  EXPECT_EQ(got.workload.admission,
            std::optional<Admission>(AdmissionBuilder("test-clusterqueue")
                                         .Assign("cpu", "two", "3")
                                         .Build()));
  EXPECT_TRUE(got.victims.empty());
  EXPECT_EQ(got.reason, "Admitted");
  EXPECT_EQ(got.message, "The workload is admitted");
  EXPECT_TRUE(Snapshot(state) == before);
}

TEST(SimulateAdmissionTest, FitsOnEveryResourceOfOneFlavor) {
  // TestAssignFlavors' "single flavor, fits", dry-run.
  AdmissionState state;
  std::vector<ConfigObject> objects = AssignFlavorsFixture();
  objects.push_back(ClusterQueueBuilder("test-clusterqueue")
                        .ResourceGroup({"cpu", "memory"})
                        .Quota("default", "cpu", "1")
                        .Quota("memory", "2Mi")
                        .Build());
  Load(state, objects, {});

  ASSERT_OK_AND_ASSIGN(
      WhatIf got,
      SimulateAdmission(
          state,
          Incoming().Request("cpu", "1").Request("memory", "1Mi").Build(),
          kNow));
  EXPECT_TRUE(got.admissible);
  EXPECT_EQ(got.workload.admission,
            std::optional<Admission>(AdmissionBuilder("test-clusterqueue")
                                         .Assign("cpu", "default", "1")
                                         .Assign("memory", "default", "1Mi")
                                         .Build()));
}

TEST(SimulateAdmissionTest, DoesNotFit) {
  // TestAssignFlavors' "not enough space to borrow", dry-run: the
  // scheduler's NoFit reason and message.
  AdmissionState state;
  std::vector<ConfigObject> objects = AssignFlavorsFixture();
  objects.push_back(ClusterQueueBuilder("test-clusterqueue")
                        .Cohort("test-cohort")
                        .ResourceGroup({"cpu"})
                        .Quota("one", "cpu", "1")
                        .Build());
  objects.push_back(ClusterQueueBuilder("test-secondary-clusterqueue")
                        .Cohort("test-cohort")
                        .ResourceGroup({"cpu"})
                        .Quota("one", "cpu", "10")
                        .LendingLimit("0")
                        .Build());
  Load(
      state, objects,
      {CpuHolder("secondary-used", "test-secondary-clusterqueue", "one", "9")});
  const Snapshot before(state);

  ASSERT_OK_AND_ASSIGN(
      WhatIf got,
      SimulateAdmission(state, Incoming().Request("cpu", "2").Build(), kNow));
  EXPECT_FALSE(got.admissible);
  EXPECT_EQ(got.workload.admission, std::nullopt);
  EXPECT_TRUE(got.victims.empty());
  EXPECT_EQ(got.reason, "ExceedsMaxQuota");
  EXPECT_EQ(got.message,
            "couldn't assign flavors to pod set main: insufficient quota for "
            "cpu in flavor one, previously considered podsets requests (0) + "
            "current podset request (2) > maximum capacity (1)");
  EXPECT_TRUE(Snapshot(state) == before);
}

TEST(SimulateAdmissionTest, MissingLocalQueueWaits) {
  AdmissionState state;
  Load(state, AssignFlavorsFixture(), {});
  ASSERT_OK_AND_ASSIGN(
      WhatIf got,
      SimulateAdmission(
          state, Incoming().Queue("nope").Request("cpu", "1").Build(), kNow));
  EXPECT_FALSE(got.admissible);
  EXPECT_EQ(got.reason, "Misconfigured");
  EXPECT_EQ(got.message, "LocalQueue nope doesn't exist");
}

TEST(SimulateAdmissionTest, OtherPendingWorkloadsComeFirst) {
  // An earlier pending workload of the same queue takes the quota first,
  // as it would now.
  AdmissionState state;
  std::vector<ConfigObject> objects = AssignFlavorsFixture();
  objects.push_back(ClusterQueueBuilder("test-clusterqueue")
                        .ResourceGroup({"cpu"})
                        .Quota("default", "cpu", "4")
                        .Build());
  Workload earlier = Incoming().Name("earlier").Request("cpu", "3").Build();
  earlier.meta.creation_timestamp = kNow - absl::Minutes(1);
  earlier.meta.uid = "uid-earlier";
  Load(state, objects, {earlier});

  ASSERT_OK_AND_ASSIGN(
      WhatIf got,
      SimulateAdmission(state, Incoming().Request("cpu", "2").Build(), kNow));
  EXPECT_FALSE(got.admissible);
  EXPECT_EQ(got.reason, "WaitingForQuota");
  EXPECT_TRUE(got.victims.empty());
  // The live copy of the earlier workload is still pending.
  EXPECT_FALSE(HoldsQuota(*state.FindWorkload(KeyOf(earlier))));
}

TEST(SimulateAdmissionTest, GeneratedName) {
  AdmissionState state;
  std::vector<ConfigObject> objects = AssignFlavorsFixture();
  objects.push_back(ClusterQueueBuilder("test-clusterqueue")
                        .ResourceGroup({"cpu"})
                        .Quota("default", "cpu", "4")
                        .Build());
  Load(state, objects, {});
  Workload wl = Incoming().Name("").Request("cpu", "1").Build();
  wl.meta.generate_name = "job-";
  ASSERT_OK_AND_ASSIGN(WhatIf got, SimulateAdmission(state, wl, kNow));
  EXPECT_EQ(got.workload.meta.name, "job-what-if");
  EXPECT_TRUE(got.admissible);
}

// A victim whose runner holds a live lease keeps its quota in the live
// server until the runner stops it; the what-if assumes it stops at once.
TEST(SimulateAdmissionTest, VictimWithLiveRunnerCountsAsStopped) {
  AdmissionState state;
  Workload low = Admitted("low", -1, "standalone", "6");
  low.runner = Runner{"runner-1", kNow + absl::Hours(1)};
  Load(state, PreemptionFixture(), {low});
  const Snapshot before(state);

  ASSERT_OK_AND_ASSIGN(
      WhatIf got, SimulateAdmission(state, In(1, "standalone", "2"), kNow));
  EXPECT_TRUE(got.admissible);
  EXPECT_EQ(got.victims,
            (std::vector<Victim>{
                {{"default", "low"}, "standalone", "InClusterQueue"}}));
  EXPECT_TRUE(Snapshot(state) == before);
}

// A victim admitted again in the copy (on another flavor) still counts: its
// Preempted condition turned False with "Previously: <message>", and the
// reason is read back from the message.
TEST(SimulateAdmissionTest, VictimAdmittedAgainOnAnotherFlavor) {
  AdmissionState state;
  std::vector<ConfigObject> objects = {
      NamespaceBuilder("default").Build(),
      ResourceFlavorBuilder("f1").Build(),
      ResourceFlavorBuilder("f2").Build(),
      ClusterQueueBuilder("cq")
          .WithinClusterQueue("LowerPriority")
          .ResourceGroup({"cpu"})
          .Quota("f1", "cpu", "4")
          .Quota("f2", "cpu", "2")
          .Build(),
      LocalQueueBuilder("default", "cq", "cq").Build(),
  };
  auto holder = [](std::string name, int32_t priority) {
    return Wl(std::move(name), "default")
        .Priority(priority)
        .Queue("cq")
        .Request("cpu", "2")
        .ReserveQuota(AdmissionBuilder("cq").Assign("cpu", "f1", "2").Build(),
                      kNow)
        .Build();
  };
  Load(state, objects, {holder("low", -1), holder("mid", 0)});
  const Snapshot before(state);

  ASSERT_OK_AND_ASSIGN(WhatIf got,
                       SimulateAdmission(state, In(1, "cq", "4"), kNow));
  EXPECT_TRUE(got.admissible);
  EXPECT_EQ(got.victims, (std::vector<Victim>{
                             {{"default", "low"}, "cq", "InClusterQueue"},
                             {{"default", "mid"}, "cq", "InClusterQueue"}}));
  EXPECT_TRUE(Snapshot(state) == before);
}

// A stored workload that already holds quota is reported as it is.
TEST(SimulateAdmissionTest, StoredWorkloadHoldingQuota) {
  AdmissionState state;
  const Workload high = Admitted("high", 1, "standalone", "2");
  Load(state, PreemptionFixture(), {high});
  ASSERT_OK_AND_ASSIGN(WhatIf got, SimulateAdmission(state, high, kNow));
  EXPECT_TRUE(got.admissible);
  EXPECT_EQ(got.workload, high);
  EXPECT_EQ(got.reason, "QuotaReserved");
  EXPECT_TRUE(got.victims.empty());
}

// Kueue's TestValidateWorkload cases that kq's ValidateWorkload refuses at
// the same field (Kueue's path names the container; kq's pod sets carry
// the requests directly).
TEST(SimulateAdmissionTest, ShouldRejectNegativeContainerResourceRequest) {
  AdmissionState state;
  Load(state, AssignFlavorsFixture(), {});
  WorkloadBuilder wl("wl");
  wl.Namespace("default").Queue("main").PodSet("bad", 1).Request("cpu", "-1");
  EXPECT_THAT(SimulateAdmission(state, wl.Build(), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.podSets[0].requests[cpu]")));
}

TEST(SimulateAdmissionTest, TooManyVariableCountPodSets) {
  AdmissionState state;
  Load(state, AssignFlavorsFixture(), {});
  WorkloadBuilder wl("wl");
  wl.Namespace("default")
      .Queue("main")
      .PodSet("ps1", 3)
      .MinCount(2)
      .PodSet("ps2", 3)
      .MinCount(1);
  EXPECT_THAT(SimulateAdmission(state, wl.Build(), kNow),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.podSets: ")));
}

TEST(SimulateAdmissionTest, UnknownPriorityClassIsNotFound) {
  AdmissionState state;
  Load(state, AssignFlavorsFixture(), {});
  const Workload wl =
      Incoming().PriorityClass("missing").Request("cpu", "1").Build();
  EXPECT_THAT(SimulateAdmission(state, wl, kNow),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace kq::admission
