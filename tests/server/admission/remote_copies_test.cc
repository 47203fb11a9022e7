// The worker side of kq federation (server/admission/remote_copies.cc): the
// copies a MultiKueue manager holds on a worker compete for quota like any
// workload, never run before they are bound, and every call is safe to
// repeat (federation.md 5.2-5.3).

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
using ::kq::testing::IsOk;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);
const NamespacedName kKey{"ns", "job"};

RemoteRef Ref(int64_t epoch, const std::string& origin_uid = "mgr-uid") {
  return RemoteRef{kKey, "multikueue", origin_uid, epoch};
}

class RemoteCopiesTest : public ::testing::Test {
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

  static Workload Copy(const std::string& cpu = "4", int32_t priority = 0) {
    return WorkloadBuilder("job")
        .Namespace("ns")
        .Queue("lq")
        .Priority(priority)
        .Request("cpu", cpu)
        .Build();
  }

  absl::StatusOr<Workload> Upsert(const RemoteRef& ref,
                                  Workload copy = Copy()) {
    absl::StatusOr<Workload> wl =
        state_.UpsertRemote(std::move(copy), ref, "w-uid", nullptr, kStart);
    state_.RunPasses(kStart);
    return wl;
  }

  const Workload& Get() { return *state_.FindWorkload(kKey); }

  AdmissionState state_;
};

TEST_F(RemoteCopiesTest, CopyIsAdmittedButUnboundAndNoRunnerMayAttach) {
  ASSERT_THAT(Upsert(Ref(1)), IsOk());
  const Workload& wl = Get();
  ASSERT_TRUE(wl.remote.has_value());
  EXPECT_EQ(wl.remote->origin, "multikueue");
  EXPECT_EQ(wl.remote->origin_uid, "mgr-uid");
  EXPECT_FALSE(wl.remote->bound);
  EXPECT_EQ(wl.meta.labels.at(kMultiKueueOriginLabel), "multikueue");
  EXPECT_TRUE(IsConditionTrue(wl.conditions, kConditionAdmitted));
  EXPECT_THAT(state_.Heartbeat(kKey, "agent", absl::Seconds(10), false, kStart),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("unbound MultiKueue copy")));
  // Not even the manager's relay runner, before the bind.
  EXPECT_THAT(state_.Heartbeat(kKey, RelayRunnerId("multikueue"),
                               absl::Seconds(10), false, kStart),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(RemoteCopiesTest, UpsertRepeatIsANoOp) {
  ASSERT_THAT(Upsert(Ref(1)), IsOk());
  state_.TakeChanges();
  absl::StatusOr<Workload> again = Upsert(Ref(1), Copy("1"));
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->pod_sets[0].requests, Get().pod_sets[0].requests);
  EXPECT_TRUE(state_.TakeChanges().workloads.empty());
}

TEST_F(RemoteCopiesTest, NameHeldByAnotherWorkloadIsRefused) {
  state_.AddWorkload(Copy(), "local-uid", kStart);
  EXPECT_THAT(Upsert(Ref(1)), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       HasSubstr("is not a MultiKueue copy")));
  ASSERT_TRUE(state_.FindWorkload(kKey) != nullptr);
  EXPECT_FALSE(Get().remote.has_value());
}

TEST_F(RemoteCopiesTest, CopyOfAnotherManagerWorkloadIsRefused) {
  ASSERT_THAT(Upsert(Ref(1)), IsOk());
  EXPECT_THAT(Upsert(Ref(1, "other-uid")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("copy of another manager workload")));
  EXPECT_THAT(state_.DeleteRemote(Ref(1, "other-uid"), nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_TRUE(state_.FindWorkload(kKey) != nullptr);
}

TEST_F(RemoteCopiesTest, EpochsFenceStaleCalls) {
  ASSERT_THAT(Upsert(Ref(2)), IsOk());
  // A delayed call of an earlier dispatch changes nothing.
  EXPECT_THAT(Upsert(Ref(1)), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       HasSubstr("is stale")));
  EXPECT_THAT(
      state_.DeleteRemote(Ref(1), nullptr),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is stale")));
  EXPECT_THAT(state_.BindRemote(Ref(1), absl::Seconds(10), false, kStart),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not of epoch 1")));
  // A newer epoch must wait for the old copy's deletion.
  EXPECT_THAT(Upsert(Ref(3)), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       HasSubstr("delete it before")));
  EXPECT_THAT(state_.DeleteRemote(Ref(3), nullptr), IsOk());
  ASSERT_THAT(Upsert(Ref(3)), IsOk());
  EXPECT_EQ(Get().remote->epoch, 3);
}

TEST_F(RemoteCopiesTest, DeleteReleasesQuotaAndIsIdempotent) {
  ASSERT_THAT(Upsert(Ref(1)), IsOk());
  state_.TakeChanges();
  absl::StatusOr<bool> deleted = state_.DeleteRemote(Ref(1), nullptr);
  ASSERT_THAT(deleted, IsOk());
  EXPECT_TRUE(*deleted);
  EXPECT_EQ(state_.FindWorkload(kKey), nullptr);
  Changes changes = state_.TakeChanges();
  EXPECT_EQ(changes.workloads.at(kKey), Change::kDeleted);
  ASSERT_TRUE(changes.deleted_workloads.contains(kKey));
  // The quota is free again for another workload.
  const Workload& other = state_.AddWorkload(WorkloadBuilder("other")
                                                 .Namespace("ns")
                                                 .Queue("lq")
                                                 .Request("cpu", "4")
                                                 .Build(),
                                             "o-uid", kStart);
  state_.RunPasses(kStart);
  EXPECT_TRUE(HoldsQuota(*state_.FindWorkload(KeyOf(other))));
  deleted = state_.DeleteRemote(Ref(1), nullptr);
  ASSERT_THAT(deleted, IsOk());
  EXPECT_FALSE(*deleted);
}

TEST_F(RemoteCopiesTest, BindNeedsAdmissionThenTheRelayRunsIt) {
  // Too big to fit: pending, so it cannot be bound.
  ASSERT_THAT(Upsert(Ref(1), Copy("8")), IsOk());
  EXPECT_THAT(state_.BindRemote(Ref(1), absl::Seconds(10), false, kStart),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not admitted")));
  ASSERT_THAT(state_.DeleteRemote(Ref(1), nullptr), IsOk());
  ASSERT_THAT(Upsert(Ref(2)), IsOk());
  absl::StatusOr<HeartbeatResult> bound =
      state_.BindRemote(Ref(2), absl::Seconds(10), false, kStart);
  ASSERT_THAT(bound, IsOk());
  EXPECT_FALSE(bound->stop);
  EXPECT_TRUE(Get().remote->bound);
  ASSERT_TRUE(Get().runner.has_value());
  EXPECT_EQ(Get().runner->id, "multikueue/multikueue");
  // A repeat renews; another runner is still refused.
  EXPECT_THAT(state_.BindRemote(Ref(2), absl::Seconds(20), false, kStart),
              IsOk());
  EXPECT_EQ(Get().runner->lease_expire_time, kStart + absl::Seconds(20));
  EXPECT_THAT(state_.Heartbeat(kKey, "agent", absl::Seconds(10), false, kStart),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("runs through its manager")));
}

TEST_F(RemoteCopiesTest, WorkerEvictionWaitsForTheRelayedRunner) {
  ASSERT_THAT(Upsert(Ref(1)), IsOk());
  ASSERT_THAT(state_.BindRemote(Ref(1), absl::Seconds(30), false, kStart),
              IsOk());
  // A higher-priority workload of the worker's own preempts the copy.
  state_.AddWorkload(WorkloadBuilder("high")
                         .Namespace("ns")
                         .Queue("lq")
                         .Priority(100)
                         .Request("cpu", "4")
                         .Build(),
                     "h-uid", kStart);
  state_.RunPasses(kStart);
  EXPECT_TRUE(IsEvicting(Get()));
  absl::StatusOr<HeartbeatResult> renewed =
      state_.RenewRemote(Ref(1), absl::Seconds(30), false, kStart);
  ASSERT_THAT(renewed, IsOk());
  EXPECT_TRUE(renewed->stop);
  // The manager's runner stopped: the quota moves.
  ASSERT_THAT(state_.RenewRemote(Ref(1), absl::Seconds(30), true, kStart),
              IsOk());
  state_.RunPasses(kStart);
  EXPECT_FALSE(HoldsQuota(Get()));
  EXPECT_TRUE(HoldsQuota(*state_.FindWorkload({"ns", "high"})));
}

TEST_F(RemoteCopiesTest, DeactivateIsKueuesEvictedOnManagerCluster) {
  ASSERT_THAT(Upsert(Ref(1)), IsOk());
  ASSERT_THAT(state_.BindRemote(Ref(1), absl::Seconds(30), false, kStart),
              IsOk());
  absl::StatusOr<Workload> wl =
      state_.DeactivateRemote(Ref(1), "Evicted on manager: preempted", kStart);
  ASSERT_THAT(wl, IsOk());
  EXPECT_FALSE(wl->active);
  const Condition* evicted = FindCondition(wl->conditions, kConditionEvicted);
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->reason, "DeactivatedDueToEvictedOnManagerCluster");
  EXPECT_EQ(evicted->message,
            "The workload is deactivated due to Evicted on manager: preempted");
  // The relay holds a live lease: the quota waits for its stop.
  EXPECT_TRUE(HoldsQuota(*wl));
  EXPECT_THAT(state_.DeactivateRemote(Ref(1), "again", kStart), IsOk());
  ASSERT_THAT(state_.RenewRemote(Ref(1), absl::Seconds(30), true, kStart),
              IsOk());
  EXPECT_FALSE(HoldsQuota(Get()));
}

TEST_F(RemoteCopiesTest, LeaseModeFencesACopyWhoseManagerWentSilent) {
  ASSERT_THAT(Upsert(Ref(1)), IsOk());
  ASSERT_THAT(state_.BindRemote(Ref(1), absl::Seconds(4), true, kStart),
              IsOk());
  EXPECT_TRUE(Get().remote->fenced);
  // The worker wakes for the lease's end without a command.
  EXPECT_EQ(state_.NextWakeup(), kStart + absl::Seconds(4));
  // Renewed in time: nothing happens.
  const absl::Time t1 = kStart + absl::Seconds(3);
  ASSERT_THAT(state_.RenewRemote(Ref(1), absl::Seconds(4), false, t1), IsOk());
  state_.RunPasses(kStart + absl::Seconds(5));
  EXPECT_TRUE(HoldsQuota(Get()));
  EXPECT_FALSE(IsEvicting(Get()));
  // Silent past the lease: evicted and deactivated here, quota released.
  state_.RunPasses(t1 + absl::Seconds(4));
  const Workload& wl = Get();
  EXPECT_FALSE(HoldsQuota(wl));
  EXPECT_FALSE(wl.active);
  EXPECT_FALSE(wl.remote->bound);
  const Condition* evicted = FindCondition(wl.conditions, kConditionEvicted);
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->reason, "ManagerLost");
  EXPECT_THAT(evicted->message, HasSubstr("cannot run in two places"));
  // Not queued again: nothing here admits it without its manager.
  state_.RunPasses(t1 + absl::Seconds(60));
  EXPECT_FALSE(HoldsQuota(Get()));
}

TEST_F(RemoteCopiesTest, WithoutLeaseModeASilentManagerLeavesTheCopyRunning) {
  ASSERT_THAT(Upsert(Ref(1)), IsOk());
  ASSERT_THAT(state_.BindRemote(Ref(1), absl::Seconds(4), false, kStart),
              IsOk());
  state_.RunPasses(kStart + absl::Minutes(10));
  EXPECT_TRUE(HoldsQuota(Get()));
  EXPECT_TRUE(Get().remote->bound);
}

TEST_F(RemoteCopiesTest, BadRefsNameTheField) {
  EXPECT_THAT(Upsert(RemoteRef{kKey, "", "u", 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, "origin: required"));
  EXPECT_THAT(
      Upsert(RemoteRef{kKey, "o", "", 1}),
      StatusIs(absl::StatusCode::kInvalidArgument, "origin_uid: required"));
  EXPECT_THAT(
      Upsert(RemoteRef{kKey, "o", "u", 0}),
      StatusIs(absl::StatusCode::kInvalidArgument, "epoch: must be positive"));
  EXPECT_THAT(state_.BindRemote(Ref(1), absl::Seconds(1), false, kStart),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace kq::admission
