// Kueue's reclaimable pods (status.reclaimablePods) in kq: the quota an
// admitted workload holds shrinks as its pods become reclaimable (Kueue's
// totalRequestsFromAdmission, ported from pkg/workload/workload_test.go
// TestNewInfo), reports are checked as Kueue's webhook does (ported from
// pkg/webhooks/workload_webhook_test.go), and the admission state keeps the
// quota tree equal to what the stored workloads hold while reports, passes,
// preemptions and releases interleave. Last, the field survives the codec
// (the store, the API and `kq simulate` scenarios) and a scenario that
// carries it.
//
// Not ported from TestNewInfo: "pending with reclaim; reclaimablePods
// on/off" (a pending workload's requests; kq computes them inside the
// flavor assigner, covered by TestAssignFlavors' "with reclaimable pods"
// cases in tests/server/scheduler/flavor_assigner_test.cc). Not ported from
// the webhook tests: the "elastic workload" cases (workload slices) and
// "non-elastic workload: stale reclaimable pod count is still rejected when
// its podSet scales down" (kq's pod sets never change after submission).

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/cache/cache.h"
#include "server/codec/codec.h"
#include "server/core/objects.h"
#include "server/simulator/simulator.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::admission {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

cache::FlavorResource FR(std::string flavor, std::string resource) {
  return {std::move(flavor), std::move(resource)};
}

// ---------------------------------------------------------------------------
// TestNewInfo: the usage of an admitted workload.

struct UsageCase {
  std::string name;  // Kueue's
  Workload workload;
  bool reclaimable_pods_gate = true;
  cache::FlavorResourceQuantities want;
};

void PrintTo(const UsageCase& c, std::ostream* os) { *os << c.name; }

class UsageOfWorkloadTest : public ::testing::TestWithParam<UsageCase> {};

TEST_P(UsageOfWorkloadTest, TotalRequestsFromAdmission) {
  const UsageCase& tc = GetParam();
  EXPECT_EQ(cache::UsageOf(tc.workload, tc.reclaimable_pods_gate), tc.want);
}

// Kueue's cases: one pod set "main" of `pods` pods of 10m CPU and 10Ki
// memory, admitted in flavor f1 with `admitted` pods charged `cpu` and
// `memory`, with `reclaimable` pods (none when negative).
Workload AdmittedMain(int32_t pods, int32_t admitted, const std::string& cpu,
                      const std::string& memory, int32_t reclaimable) {
  Workload wl = WorkloadBuilder("wl")
                    .PodSet("main", pods)
                    .Request("cpu", "10m")
                    .Request("memory", "10Ki")
                    .ReserveQuota(AdmissionBuilder("")
                                      .PodSet("main", admitted)
                                      .Assign("cpu", "f1", cpu)
                                      .Assign("memory", "f1", memory)
                                      .Build())
                    .Build();
  if (reclaimable >= 0) wl.reclaimable_pods = {{"main", reclaimable}};
  return wl;
}

std::string UsageCaseName(const ::testing::TestParamInfo<UsageCase>& info) {
  std::string out;
  for (char c : info.param.name) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, UsageOfWorkloadTest,
    ::testing::ValuesIn(std::vector<UsageCase>{
        {.name = "admitted with reclaim; reclaimablePods on",
         .workload = AdmittedMain(5, 3, "30m", "30Ki", 2),
         .want = {{FR("f1", "cpu"), 3 * 10}, {FR("f1", "memory"), 3 * 10240}}},
        {.name = "admitted with reclaim; reclaimablePods off",
         .workload = AdmittedMain(5, 5, "50m", "50Ki", 2),
         .reclaimable_pods_gate = false,
         .want = {{FR("f1", "cpu"), 5 * 10}, {FR("f1", "memory"), 5 * 10240}}},
        {.name = "admitted with reclaim and increased reclaim",
         .workload = AdmittedMain(5, 3, "30m", "30Ki", 3),
         .want = {{FR("f1", "cpu"), 2 * 10}, {FR("f1", "memory"), 2 * 10240}}},
        {.name = "admitted with stale reclaim exceeding scaled-down podSet "
                 "count",
         .workload = AdmittedMain(2, 5, "50m", "50Ki", 5),
         .want = {{FR("f1", "cpu"), 0}, {FR("f1", "memory"), 0}}},
        {.name = "partially admitted",
         .workload = AdmittedMain(5, 3, "30m", "30Ki", -1),
         .want = {{FR("f1", "cpu"), 3 * 10}, {FR("f1", "memory"), 3 * 10240}}},
    }),
    UsageCaseName);

TEST(UsageOfWorkloadTest, WithoutAdmissionIsEmpty) {
  Workload wl =
      WorkloadBuilder("wl").PodSet("main", 5).Request("cpu", "1").Build();
  wl.reclaimable_pods = {{"main", 2}};
  EXPECT_TRUE(cache::UsageOf(wl).empty());
}

TEST(UsageOfWorkloadTest, AbsentAdmittedCountStandsForThePodSetCount) {
  // Kueue's ptr.Deref(psa.Count, podSet.Count): 4 pods charged 4 CPUs, 1
  // reclaimable, 3 CPUs held.
  Workload wl = WorkloadBuilder("wl")
                    .PodSet("main", 4)
                    .Request("cpu", "1")
                    .ReserveQuota(AdmissionBuilder("cq")
                                      .PodSet("main", 0)
                                      .Assign("cpu", "default", "4")
                                      .Build())
                    .Build();
  wl.reclaimable_pods = {{"main", 1}};
  EXPECT_EQ(cache::UsageOf(wl),
            (cache::FlavorResourceQuantities{{FR("default", "cpu"), 3'000}}));
}

// ---------------------------------------------------------------------------
// The webhook's checks.

struct CheckCase {
  std::string name;  // Kueue's
  Workload workload;
  std::vector<ReclaimablePod> pods;
  std::string want_error;  // empty: accepted
};

void PrintTo(const CheckCase& c, std::ostream* os) { *os << c.name; }

class CheckReclaimablePodsTest : public ::testing::TestWithParam<CheckCase> {};

TEST_P(CheckReclaimablePodsTest, AsKueuesWebhook) {
  const CheckCase& tc = GetParam();
  absl::StatusOr<std::map<std::string, int32_t>> got =
      CheckReclaimablePods(tc.workload, tc.pods);
  if (tc.want_error.empty()) {
    ASSERT_TRUE(got.ok()) << got.status();
    std::map<std::string, int32_t> want;
    for (const ReclaimablePod& p : tc.pods) want[p.name] = p.count;
    EXPECT_EQ(*got, want);
  } else {
    EXPECT_THAT(got.status(),
                StatusIs(absl::StatusCode::kInvalidArgument, tc.want_error));
  }
}

// Pod sets ps1 and ps2 of 3 pods, holding quota when `reserved`, with
// `reclaimable` already reported.
Workload TwoPodSets(bool reserved, std::map<std::string, int32_t> reclaimable) {
  WorkloadBuilder b("wl");
  b.PodSet("ps1", 3).PodSet("ps2", 3);
  if (reserved) {
    b.ReserveQuota(AdmissionBuilder("cluster-queue")
                       .PodSet("ps1", 3)
                       .PodSet("ps2", 3)
                       .Build());
  }
  Workload wl = b.Build();
  wl.reclaimable_pods = std::move(reclaimable);
  return wl;
}

std::string CheckCaseName(const ::testing::TestParamInfo<CheckCase>& info) {
  std::string out;
  for (char c : info.param.name) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, CheckReclaimablePodsTest,
    ::testing::ValuesIn(std::vector<CheckCase>{
        // Kueue reports both errors; kq the first of them.
        {.name = "invalid reclaimablePods",
         .workload = WorkloadBuilder("wl").PodSet("ps1", 3).Build(),
         .pods = {{"ps1", 4}, {"ps2", 1}},
         .want_error = "status.reclaimablePods[ps1].count: Invalid value: 4: "
                       "should be less or equal to 3"},
        {.name = "reclaimable pod count can change up",
         .workload = TwoPodSets(true, {{"ps1", 1}}),
         .pods = {{"ps1", 2}, {"ps2", 1}}},
        {.name = "reclaimable pod count cannot change down",
         .workload = TwoPodSets(true, {{"ps1", 2}, {"ps2", 1}}),
         .pods = {{"ps1", 1}},
         .want_error = "status.reclaimablePods[ps1].count: Invalid value: 1: "
                       "cannot be less than 2"},
        // kq's own cases.
        {.name = "unknown pod set",
         .workload = TwoPodSets(false, {}),
         .pods = {{"ps3", 1}},
         .want_error = "status.reclaimablePods[ps3].name: Unsupported value: "
                       "\"ps3\": supported values: \"ps1\", \"ps2\""},
        {.name = "negative count",
         .workload = TwoPodSets(false, {}),
         .pods = {{"ps1", -1}},
         .want_error = "status.reclaimablePods[ps1].count: Invalid value: -1: "
                       "should be greater than or equal to 0"},
        {.name = "duplicate entry",
         .workload = TwoPodSets(false, {}),
         .pods = {{"ps1", 1}, {"ps1", 2}},
         .want_error = "status.reclaimablePods[1]: Duplicate value: "
                       "{\"name\":\"ps1\"}"},
        {.name = "entry removed while holding quota",
         .workload = TwoPodSets(true, {{"ps1", 2}, {"ps2", 1}}),
         .pods = {{"ps1", 2}},
         .want_error =
             "status.reclaimablePods[ps2]: Required value: cannot be removed"},
        {.name = "a pending workload may lower its counts",
         .workload = TwoPodSets(false, {{"ps1", 2}, {"ps2", 1}}),
         .pods = {{"ps1", 1}}},
        {.name = "every pod of a pod set",
         .workload = TwoPodSets(true, {}),
         .pods = {{"ps1", 3}, {"ps2", 0}}},
    }),
    CheckCaseName);

// ---------------------------------------------------------------------------
// The admission state.

const NamespacedName kRunning{"ns", "running"};
const NamespacedName kWaiting{"ns", "waiting"};

// One ClusterQueue "cq" with 4 CPUs of flavor "default" that preempts lower
// priorities within itself.
class ReclaimableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_.LoadObject(ResourceFlavorBuilder("default").Build());
    state_.LoadObject(ClusterQueueBuilder("cq")
                          .NamespaceSelectorAll()
                          .WithinClusterQueue("LowerPriority")
                          .ResourceGroup({"cpu"})
                          .Flavor("default")
                          .Quota("cpu", "4")
                          .Build());
    state_.LoadObject(LocalQueueBuilder("ns", "lq", "cq").Build());
    state_.Rebuild(kStart);
  }

  // Submits `pods` pods of `cpu` CPUs each and runs the passes.
  const Workload& Submit(const std::string& name, int32_t pods,
                         const std::string& cpu, int32_t priority = 0) {
    const Workload& wl = state_.AddWorkload(WorkloadBuilder(name)
                                                .Namespace("ns")
                                                .Queue("lq")
                                                .Priority(priority)
                                                .PodSet("main", pods)
                                                .Request("cpu", cpu)
                                                .Build(),
                                            "uid-" + name, kStart);
    state_.RunPasses(kStart);
    return Get(KeyOf(wl));
  }

  const Workload& Get(const NamespacedName& key) {
    return *state_.FindWorkload(key);
  }

  // CPU reserved and CPU admitted in "cq", in milli-CPU.
  int64_t Reserved() const {
    auto it = CqUsage().node.usage.find(kCpu);
    return it == CqUsage().node.usage.end() ? 0 : it->second;
  }
  int64_t AdmittedUsage() const {
    auto it = CqUsage().admitted_usage.find(kCpu);
    return it == CqUsage().admitted_usage.end() ? 0 : it->second;
  }
  const cache::ClusterQueueSnapshot& CqUsage() const {
    return *state_.cache().FindClusterQueue("cq");
  }

  const cache::FlavorResource kCpu{"default", "cpu"};
  AdmissionState state_;
};

TEST_F(ReclaimableTest,
       AdmittedWorkloadShrinksAndAPendingOneThatNowFitsIsAdmitted) {
  ASSERT_TRUE(HoldsQuota(Submit("running", 4, "1")));
  ASSERT_FALSE(HoldsQuota(Submit("waiting", 1, "2")));
  ASSERT_TRUE(state_.queues().IsInadmissible(kWaiting));
  ASSERT_FALSE(state_.needs_scheduling());
  EXPECT_EQ(Reserved(), 4'000);
  EXPECT_EQ(AdmittedUsage(), 4'000);

  absl::StatusOr<Workload> reported =
      state_.SetReclaimablePods(kRunning, {{"main", 2}}, kStart);
  ASSERT_TRUE(reported.ok()) << reported.status();
  EXPECT_EQ(reported->reclaimable_pods,
            (std::map<std::string, int32_t>{{"main", 2}}));
  EXPECT_EQ(Get(kRunning).reclaimable_pods, reported->reclaimable_pods);
  // The admission stays as granted; the quota held shrinks.
  EXPECT_EQ(Get(kRunning).admission->pod_set_assignments[0].count, 4);
  EXPECT_EQ(Reserved(), 2'000);
  EXPECT_EQ(AdmittedUsage(), 2'000);
  EXPECT_EQ(state_.pending_changes().workloads.count(kRunning), 1u);
  // The parked workload is retried in the next pass, and fits.
  EXPECT_TRUE(state_.needs_scheduling());
  EXPECT_FALSE(state_.queues().IsInadmissible(kWaiting));
  state_.RunPasses(kStart);
  EXPECT_TRUE(HoldsQuota(Get(kWaiting)));
  EXPECT_EQ(Reserved(), 4'000);

  // Releases remove what was held: the tree goes back to zero.
  ASSERT_TRUE(
      state_.FinishWorkload(kRunning, "Succeeded", "done", kStart).ok());
  EXPECT_EQ(Reserved(), 2'000);
  EXPECT_EQ(AdmittedUsage(), 2'000);
  ASSERT_TRUE(
      state_.FinishWorkload(kWaiting, "Succeeded", "done", kStart).ok());
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(AdmittedUsage(), 0);
}

TEST_F(ReclaimableTest, MoreReclaimablePodsShrinkTheUsageFurther) {
  ASSERT_TRUE(HoldsQuota(Submit("running", 4, "1")));
  ASSERT_TRUE(state_.SetReclaimablePods(kRunning, {{"main", 1}}, kStart).ok());
  EXPECT_EQ(Reserved(), 3'000);
  ASSERT_TRUE(state_.SetReclaimablePods(kRunning, {{"main", 4}}, kStart).ok());
  EXPECT_EQ(Reserved(), 0);
  ASSERT_TRUE(
      state_.FinishWorkload(kRunning, "Succeeded", "done", kStart).ok());
  EXPECT_EQ(Reserved(), 0);
}

TEST_F(ReclaimableTest, RebuildRecomputesTheSameUsage) {
  ASSERT_TRUE(HoldsQuota(Submit("running", 4, "1")));
  ASSERT_TRUE(state_.SetReclaimablePods(kRunning, {{"main", 3}}, kStart).ok());
  EXPECT_EQ(Reserved(), 1'000);
  state_.Rebuild(kStart);
  EXPECT_EQ(Reserved(), 1'000);
  EXPECT_EQ(AdmittedUsage(), 1'000);
}

TEST_F(ReclaimableTest, PendingWorkloadAsksOnlyForThePodsLeft) {
  // 5 one-CPU pods do not fit in 4 CPUs; with 2 reclaimable, 3 do.
  ASSERT_FALSE(HoldsQuota(Submit("waiting", 5, "1")));
  ASSERT_TRUE(state_.queues().IsInadmissible(kWaiting));
  ASSERT_TRUE(state_.SetReclaimablePods(kWaiting, {{"main", 2}}, kStart).ok());
  EXPECT_TRUE(state_.needs_scheduling());
  EXPECT_TRUE(state_.queues().Contains(kWaiting));
  EXPECT_FALSE(state_.queues().IsInadmissible(kWaiting));
  state_.RunPasses(kStart);
  const Workload& wl = Get(kWaiting);
  ASSERT_TRUE(HoldsQuota(wl));
  ASSERT_EQ(wl.admission->pod_set_assignments.size(), 1u);
  EXPECT_EQ(wl.admission->pod_set_assignments[0].count, 3);
  EXPECT_EQ(Reserved(), 3'000);
  ASSERT_TRUE(
      state_.FinishWorkload(kWaiting, "Succeeded", "done", kStart).ok());
  EXPECT_EQ(Reserved(), 0);
}

TEST_F(ReclaimableTest, PreemptionRemovesWhatTheVictimHolds) {
  // The victim holds 2 of its 4 CPUs; the preemptor needs 3: only the
  // victim's 2 CPUs and the 2 free make room, and afterwards the tree holds
  // exactly the preemptor's 3.
  ASSERT_TRUE(HoldsQuota(Submit("running", 4, "1")));
  ASSERT_TRUE(state_.SetReclaimablePods(kRunning, {{"main", 2}}, kStart).ok());
  state_.RunPasses(kStart);
  EXPECT_EQ(Reserved(), 2'000);
  Submit("waiting", 1, "3", /*priority=*/100);
  EXPECT_TRUE(HoldsQuota(Get(kWaiting)));
  EXPECT_FALSE(HoldsQuota(Get(kRunning)));
  EXPECT_EQ(Reserved(), 3'000);
  EXPECT_EQ(AdmittedUsage(), 3'000);
}

TEST_F(ReclaimableTest, UnchangedListChangesNothing) {
  ASSERT_TRUE(HoldsQuota(Submit("running", 4, "1")));
  ASSERT_TRUE(state_.SetReclaimablePods(kRunning, {{"main", 1}}, kStart).ok());
  state_.RunPasses(kStart);
  state_.TakeChanges();
  ASSERT_TRUE(state_.SetReclaimablePods(kRunning, {{"main", 1}}, kStart).ok());
  EXPECT_TRUE(state_.pending_changes().empty());
  EXPECT_FALSE(state_.needs_scheduling());
  EXPECT_EQ(Reserved(), 3'000);
}

TEST_F(ReclaimableTest, InvalidReportsChangeNothing) {
  ASSERT_TRUE(HoldsQuota(Submit("running", 4, "1")));
  ASSERT_TRUE(state_.SetReclaimablePods(kRunning, {{"main", 2}}, kStart).ok());
  state_.RunPasses(kStart);
  state_.TakeChanges();

  EXPECT_THAT(
      state_.SetReclaimablePods(kRunning, {{"launcher", 1}}, kStart).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Workload \"ns/running\": status.reclaimablePods"
               "[launcher].name: Unsupported value: \"launcher\": "
               "supported values: \"main\""));
  EXPECT_THAT(
      state_.SetReclaimablePods(kRunning, {{"main", 5}}, kStart).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("status.reclaimablePods[main].count: Invalid value: "
                         "5: should be less or equal to 4")));
  EXPECT_THAT(
      state_.SetReclaimablePods(kRunning, {{"main", -1}}, kStart).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("status.reclaimablePods[main].count")));
  EXPECT_THAT(
      state_.SetReclaimablePods(kRunning, {{"main", 1}}, kStart).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("cannot be less than 2")));
  EXPECT_THAT(state_.SetReclaimablePods(kRunning, {}, kStart).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("status.reclaimablePods[main]: Required "
                                 "value: cannot be removed")));
  EXPECT_THAT(
      state_.SetReclaimablePods(kRunning, {{"main", 3}, {"main", 3}}, kStart)
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("Duplicate value")));
  EXPECT_THAT(
      state_.SetReclaimablePods({"ns", "nope"}, {{"main", 1}}, kStart).status(),
      StatusIs(absl::StatusCode::kNotFound, "Workload \"ns/nope\" not found"));

  EXPECT_TRUE(state_.pending_changes().empty());
  EXPECT_EQ(Get(kRunning).reclaimable_pods,
            (std::map<std::string, int32_t>{{"main", 2}}));
  EXPECT_EQ(Reserved(), 2'000);
}

TEST_F(ReclaimableTest, SubmittedStatusIsCleared) {
  Workload wl = WorkloadBuilder("running")
                    .Namespace("ns")
                    .Queue("lq")
                    .PodSet("main", 4)
                    .Request("cpu", "1")
                    .Build();
  wl.reclaimable_pods = {{"main", 3}};
  const Workload& added = state_.AddWorkload(wl, "uid", kStart);
  EXPECT_TRUE(added.reclaimable_pods.empty());
}

// ---------------------------------------------------------------------------
// The codec, and a `kq simulate` scenario.

TEST(ReclaimableCodecTest, RoundTrip) {
  Workload want = WorkloadBuilder("w")
                      .Namespace("ns")
                      .Queue("lq")
                      .PodSet("driver", 1)
                      .Request("cpu", "1")
                      .PodSet("workers", 8)
                      .Request("cpu", "2")
                      .Build();
  want.reclaimable_pods = {{"workers", 3}, {"driver", 0}};
  v1::Workload proto = codec::ToProto(want);
  ASSERT_EQ(proto.status().reclaimable_pods_size(), 2);
  // By name, as Kueue keys the list.
  EXPECT_EQ(proto.status().reclaimable_pods(0).name(), "driver");
  EXPECT_EQ(proto.status().reclaimable_pods(0).count(), 0);
  EXPECT_EQ(proto.status().reclaimable_pods(1).name(), "workers");
  EXPECT_EQ(proto.status().reclaimable_pods(1).count(), 3);
  v1::Workload reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(proto.SerializeAsString()));
  absl::StatusOr<Workload> got = codec::FromProto(reparsed);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->reclaimable_pods, want.reclaimable_pods);
  EXPECT_TRUE(*got == want);
}

TEST(ReclaimableCodecTest, DuplicateEntryIsRejected) {
  v1::Workload proto = codec::ToProto(
      WorkloadBuilder("w").Queue("lq").Request("cpu", "1").Build());
  for (int count : {1, 2}) {
    v1::ReclaimablePod* rp = proto.mutable_status()->add_reclaimable_pods();
    rp->set_name("main");
    rp->set_count(count);
  }
  EXPECT_THAT(codec::FromProto(proto).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "status.reclaimablePods[1].name: duplicate value "
                       "\"main\""));
}

TEST(ReclaimableSimulateTest, ScenarioCarriesReclaimablePods) {
  // "running" holds 4 CPUs of which 3 pods' worth are reclaimable; the
  // pending 3-CPU workload fits beside the 1 CPU still held.
  simulator::Scenario scenario;
  scenario.objects.push_back(ResourceFlavorBuilder("default").Build());
  scenario.objects.push_back(ClusterQueueBuilder("cq")
                                 .NamespaceSelectorAll()
                                 .ResourceGroup({"cpu"})
                                 .Flavor("default")
                                 .Quota("cpu", "4")
                                 .Build());
  scenario.objects.push_back(LocalQueueBuilder("ns", "lq", "cq").Build());
  Workload running = WorkloadBuilder("running")
                         .Namespace("ns")
                         .Queue("lq")
                         .PodSet("main", 4)
                         .Request("cpu", "1")
                         .Admitted(AdmissionBuilder("cq")
                                       .PodSet("main", 4)
                                       .Assign("cpu", "default", "4")
                                       .Build())
                         .Build();
  running.reclaimable_pods = {{"main", 3}};
  // Through the codec, as `kq simulate` reads scenarios.
  absl::StatusOr<Workload> decoded = codec::FromProto(codec::ToProto(running));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  scenario.workloads.push_back(*decoded);
  scenario.workloads.push_back(WorkloadBuilder("waiting")
                                   .Namespace("ns")
                                   .Queue("lq")
                                   .Request("cpu", "3")
                                   .Build());
  absl::StatusOr<simulator::Result> result =
      simulator::Simulate(std::move(scenario), {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->workloads.size(), 2u);
  EXPECT_EQ(result->workloads[0].meta.name, "running");
  EXPECT_EQ(result->workloads[0].reclaimable_pods.at("main"), 3);
  EXPECT_EQ(result->workloads[1].meta.name, "waiting");
  EXPECT_TRUE(HoldsQuota(result->workloads[1]));
}

}  // namespace
}  // namespace kq::admission
