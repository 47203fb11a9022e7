// The runner handshake and operator actions of the admission state
// (server/admission/state.h: Heartbeat, Preempt, SetActive): a victim whose
// runner holds a live lease keeps its quota until the runner confirms the
// stop, its lease lapses or the eviction grace ends, so a preemptor never
// shares quota with it; without a runner, quota is released at once.

#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/core/objects.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::admission {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);
const NamespacedName kLow{"ns", "low"};
const NamespacedName kHigh{"ns", "high"};

// One ClusterQueue with room for one 4-CPU workload that preempts lower
// priorities within itself.
class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_.set_eviction_grace(absl::Seconds(30));
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

  const Workload& Submit(const std::string& name, int32_t priority,
                         absl::Time now) {
    const Workload& wl = state_.AddWorkload(WorkloadBuilder(name)
                                                .Namespace("ns")
                                                .Queue("lq")
                                                .Priority(priority)
                                                .Request("cpu", "4")
                                                .Build(),
                                            "uid-" + name, now);
    state_.RunPasses(now);
    return *state_.FindWorkload(KeyOf(wl));
  }

  const Workload& Get(const NamespacedName& key) {
    return *state_.FindWorkload(key);
  }

  // A low-priority workload admitted and run by runner "r1" with a 10 s
  // lease, then a high-priority one submitted that needs its quota.
  void AdmitLowWithRunnerThenSubmitHigh(absl::Time now) {
    ASSERT_TRUE(HoldsQuota(Submit("low", 0, now)));
    auto attached = state_.Heartbeat(kLow, "r1", absl::Seconds(10), false, now);
    ASSERT_TRUE(attached.ok()) << attached.status();
    EXPECT_FALSE(attached->stop);
    Submit("high", 100, now);
  }

  AdmissionState state_;
};

TEST_F(RunnerTest, WithoutRunnerVictimReleasesAtOnce) {
  ASSERT_TRUE(HoldsQuota(Submit("low", 0, kStart)));
  Submit("high", 100, kStart);
  EXPECT_TRUE(HoldsQuota(Get(kHigh)));
  EXPECT_FALSE(HoldsQuota(Get(kLow)));
  EXPECT_TRUE(IsConditionTrue(Get(kLow).conditions, kConditionRequeued));
}

TEST_F(RunnerTest, VictimWithRunnerKeepsQuotaUntilStopConfirmed) {
  AdmitLowWithRunnerThenSubmitHigh(kStart);
  // Evicted, still holding: the preemptor waits.
  EXPECT_TRUE(IsEvicting(Get(kLow)));
  EXPECT_EQ(Get(kLow).stop_deadline, kStart + absl::Seconds(30));
  EXPECT_FALSE(HoldsQuota(Get(kHigh)));
  EXPECT_EQ(state_.NextWakeup(), kStart + absl::Seconds(10));

  // The runner learns it must stop; renewing keeps the quota held.
  const absl::Time later = kStart + absl::Seconds(2);
  auto told = state_.Heartbeat(kLow, "r1", absl::Seconds(10), false, later);
  ASSERT_TRUE(told.ok()) << told.status();
  EXPECT_TRUE(told->stop);
  state_.RunPasses(later);
  EXPECT_FALSE(HoldsQuota(Get(kHigh)));

  // Confirmation releases the quota; the next pass admits the preemptor
  // and the victim is back in its queue.
  auto stopped = state_.Heartbeat(kLow, "r1", absl::Seconds(10), true, later);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_FALSE(HoldsQuota(stopped->workload));
  EXPECT_FALSE(stopped->workload.runner.has_value());
  state_.RunPasses(later);
  EXPECT_TRUE(HoldsQuota(Get(kHigh)));
  EXPECT_FALSE(HoldsQuota(Get(kLow)));
  EXPECT_TRUE(state_.queues().Contains(kLow));
  const Condition* requeued =
      FindCondition(Get(kLow).conditions, kConditionRequeued);
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->status, "True");
  EXPECT_EQ(requeued->reason, "Preempted");
}

TEST_F(RunnerTest, LapsedLeaseReleasesEvictedQuota) {
  AdmitLowWithRunnerThenSubmitHigh(kStart);
  // Before the lease ends nothing moves.
  state_.RunPasses(kStart + absl::Seconds(9));
  EXPECT_TRUE(IsEvicting(Get(kLow)));
  // The runner went silent: at lease expiry the quota is released and the
  // preemptor admitted in the same call.
  state_.RunPasses(kStart + absl::Seconds(10));
  EXPECT_FALSE(HoldsQuota(Get(kLow)));
  EXPECT_TRUE(HoldsQuota(Get(kHigh)));
}

TEST_F(RunnerTest, GraceEndsWaitEvenWhileRunnerHeartbeats) {
  AdmitLowWithRunnerThenSubmitHigh(kStart);
  for (int s = 5; s < 30; s += 5) {
    const absl::Time t = kStart + absl::Seconds(s);
    ASSERT_TRUE(state_.Heartbeat(kLow, "r1", absl::Seconds(10), false, t).ok());
    state_.RunPasses(t);
    ASSERT_TRUE(IsEvicting(Get(kLow))) << "at +" << s << "s";
  }
  state_.RunPasses(kStart + absl::Seconds(30));
  EXPECT_FALSE(HoldsQuota(Get(kLow)));
  EXPECT_TRUE(HoldsQuota(Get(kHigh)));
  // A late heartbeat learns the workload holds nothing: stop.
  EXPECT_THAT(state_
                  .Heartbeat(kLow, "r1", absl::Seconds(10), false,
                             kStart + absl::Seconds(31))
                  .status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("holds no quota")));
}

TEST_F(RunnerTest, OneRunnerPerWorkload) {
  ASSERT_TRUE(HoldsQuota(Submit("low", 0, kStart)));
  ASSERT_TRUE(
      state_.Heartbeat(kLow, "r1", absl::Seconds(10), false, kStart).ok());
  EXPECT_THAT(
      state_.Heartbeat(kLow, "r2", absl::Seconds(10), false, kStart).status(),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("\"r1\"")));
  // Once r1's lease lapsed, another runner may take over.
  auto taken = state_.Heartbeat(kLow, "r2", absl::Seconds(10), false,
                                kStart + absl::Seconds(11));
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->workload.runner->id, "r2");
}

TEST_F(RunnerTest, HeartbeatErrors) {
  EXPECT_THAT(
      state_.Heartbeat(kLow, "r1", absl::Seconds(10), false, kStart).status(),
      StatusIs(absl::StatusCode::kNotFound));
  ASSERT_TRUE(HoldsQuota(Submit("low", 0, kStart)));
  EXPECT_THAT(
      state_.Heartbeat(kLow, "", absl::Seconds(10), false, kStart).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("runner_id")));
  EXPECT_THAT(state_.Heartbeat(kLow, "r1", absl::ZeroDuration(), false, kStart)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease")));
  // Stopped without an eviction: the end of a run is FinishWorkload.
  EXPECT_THAT(
      state_.Heartbeat(kLow, "r1", absl::Seconds(10), true, kStart).status(),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("FinishWorkload")));
  // A pending workload has nothing to run.
  Submit("second", 0, kStart);
  EXPECT_THAT(
      state_.Heartbeat({"ns", "second"}, "r1", absl::Seconds(10), false, kStart)
          .status(),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("holds no quota")));
}

TEST_F(RunnerTest, OperatorPreemptRequeues) {
  ASSERT_TRUE(HoldsQuota(Submit("low", 0, kStart)));
  auto preempted = state_.Preempt(kLow, "node maintenance", "alice",
                                  /*deactivate=*/false, kStart);
  ASSERT_TRUE(preempted.ok()) << preempted.status();
  const Condition* evicted =
      FindCondition(preempted->conditions, kConditionEvicted);
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->reason, "Preempted");
  EXPECT_EQ(evicted->message, "Preempted by alice: node maintenance");
  // No runner: released and requeued at once; the next pass admits it
  // again since nothing else wants the quota.
  EXPECT_FALSE(HoldsQuota(*preempted));
  EXPECT_TRUE(state_.queues().Contains(kLow));
  state_.RunPasses(kStart + absl::Seconds(1));
  EXPECT_TRUE(HoldsQuota(Get(kLow)));

  EXPECT_THAT(state_.Preempt({"ns", "nope"}, "", "", false, kStart).status(),
              StatusIs(absl::StatusCode::kNotFound));
  Submit("pending", 0, kStart + absl::Seconds(1));
  EXPECT_THAT(state_.Preempt({"ns", "pending"}, "", "", false, kStart).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("holds no quota")));
}

TEST_F(RunnerTest, OperatorPreemptWaitsForRunnerAndRefusesTwice) {
  ASSERT_TRUE(HoldsQuota(Submit("low", 0, kStart)));
  ASSERT_TRUE(
      state_.Heartbeat(kLow, "r1", absl::Seconds(10), false, kStart).ok());
  ASSERT_TRUE(state_.Preempt(kLow, "", "", false, kStart).ok());
  EXPECT_TRUE(IsEvicting(Get(kLow)));
  EXPECT_THAT(state_.Preempt(kLow, "", "", false, kStart).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("already being evicted")));
}

TEST_F(RunnerTest, DeactivateAndReactivate) {
  ASSERT_TRUE(HoldsQuota(Submit("low", 0, kStart)));
  auto stopped = state_.SetActive(kLow, false, kStart);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_FALSE(stopped->active);
  EXPECT_FALSE(HoldsQuota(*stopped));
  const Condition* evicted =
      FindCondition(stopped->conditions, kConditionEvicted);
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->reason, "Deactivated");
  EXPECT_EQ(evicted->message, "The workload is deactivated");
  const Condition* requeued =
      FindCondition(stopped->conditions, kConditionRequeued);
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->status, "False");
  EXPECT_EQ(requeued->reason, "Deactivated");
  state_.RunPasses(kStart + absl::Seconds(1));
  EXPECT_FALSE(HoldsQuota(Get(kLow)));
  EXPECT_FALSE(state_.queues().Contains(kLow));

  auto resumed = state_.SetActive(kLow, true, kStart + absl::Seconds(2));
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  requeued = FindCondition(resumed->conditions, kConditionRequeued);
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->status, "True");
  EXPECT_EQ(requeued->reason, "Reactivated");
  state_.RunPasses(kStart + absl::Seconds(2));
  EXPECT_TRUE(HoldsQuota(Get(kLow)));
}

TEST_F(RunnerTest, DeactivatedWhileStoppingIsNotRequeued) {
  AdmitLowWithRunnerThenSubmitHigh(kStart);
  ASSERT_TRUE(state_.SetActive(kLow, false, kStart).ok());
  ASSERT_TRUE(
      state_.Heartbeat(kLow, "r1", absl::Seconds(10), true, kStart).ok());
  state_.RunPasses(kStart);
  EXPECT_TRUE(HoldsQuota(Get(kHigh)));
  EXPECT_FALSE(state_.queues().Contains(kLow));
}

TEST_F(RunnerTest, FinishWhileStoppingReleasesQuota) {
  AdmitLowWithRunnerThenSubmitHigh(kStart);
  auto finished = state_.FinishWorkload(kLow, "Succeeded", "done", kStart);
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_FALSE(finished->stop_deadline.has_value());
  EXPECT_FALSE(finished->runner.has_value());
  state_.RunPasses(kStart);
  EXPECT_TRUE(HoldsQuota(Get(kHigh)));
}

}  // namespace
}  // namespace kq::admission
