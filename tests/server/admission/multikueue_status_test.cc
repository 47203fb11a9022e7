// The MultiKueue manager's writes to its own workloads
// (server/admission/multikueue.cc): Kueue's rules on status.clusterName and
// status.nominatedClusterNames (the Workload CRD's CEL rules and the
// webhook's validateClusterNameUpdate), the optimistic revision a decision
// was made on, the check state going through Kueue's workload controller,
// eviction's resetClusterNomination, and an external dispatcher's
// nominations.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/core/objects.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::admission {
namespace {

using ::kq::testing::AdmissionCheckBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::IsOk;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);
const NamespacedName kKey{"ns", "wl1"};

class MultiKueueStatusTest : public ::testing::Test {
 protected:
  void SetUp() override { Load("example.com/pin"); }

  void Load(const std::string& dispatcher) {
    Configuration config;
    config.multi_kueue.dispatcher_name = dispatcher;
    state_.SetConfiguration(config);
    state_.LoadObject(ResourceFlavorBuilder("default").Build());
    state_.LoadObject(
        AdmissionCheckBuilder("mk")
            .ControllerName(kMultiKueueControllerName)
            .Parameters("kueue.x-k8s.io", "MultiKueueConfig", "config1")
            .Build());
    MultiKueueConfig mkconfig;
    mkconfig.meta.name = "config1";
    mkconfig.clusters = {"worker1", "worker2"};
    state_.LoadObject(mkconfig);
    for (const char* name : {"worker1", "worker2"}) {
      MultiKueueCluster cluster;
      cluster.meta.name = name;
      cluster.location_type = kLocationTypePath;
      cluster.location = absl::StrCat("/etc/kq/", name, ".yaml");
      state_.LoadObject(cluster);
      state_.SetMultiKueueClusterActive(
          name,
          Condition{"Active", kConditionTrue, "Active", "Connected", kStart});
    }
    state_.LoadObject(ClusterQueueBuilder("cq")
                          .NamespaceSelectorAll()
                          .AdmissionCheck("mk")
                          .ResourceGroup({"cpu"})
                          .Flavor("default")
                          .Quota("cpu", "4")
                          .Build());
    state_.LoadObject(LocalQueueBuilder("ns", "lq", "cq").Build());
    state_.Rebuild(kStart);
    state_.AddWorkload(WorkloadBuilder("wl1")
                           .Namespace("ns")
                           .Queue("lq")
                           .Request("cpu", "1")
                           .Build(),
                       "uid-1", kStart);
    state_.RunPasses(kStart);
    state_.StampRevision(kKey, 7);
  }

  const Workload& Get() { return *state_.FindWorkload(kKey); }

  MultiKueueChange Change(MultiKueueStatus status) {
    MultiKueueChange change{kKey, "uid-1", Get().meta.revision};
    change.status = std::move(status);
    return change;
  }

  AdmissionState state_;
};

TEST_F(MultiKueueStatusTest, ReservedWorkloadWaitsForTheCheck) {
  ASSERT_TRUE(HoldsQuota(Get()));
  EXPECT_FALSE(IsConditionTrue(Get().conditions, kConditionAdmitted));
}

TEST_F(MultiKueueStatusTest, ClusterNameRules) {
  MultiKueueStatus nominated;
  nominated.nominated_cluster_names = {"worker1", "worker2"};
  nominated.epoch = 1;
  ASSERT_THAT(state_.ApplyMultiKueueChange(Change(nominated), kStart), IsOk());
  state_.StampRevision(kKey, 8);

  MultiKueueStatus both = nominated;
  both.cluster_name = "worker1";
  EXPECT_THAT(state_.ApplyMultiKueueChange(Change(both), kStart),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("clusterName and nominatedClusterNames are "
                                 "mutually exclusive")));
  MultiKueueStatus stranger;
  stranger.cluster_name = "worker3";
  stranger.epoch = 1;
  EXPECT_THAT(
      state_.ApplyMultiKueueChange(Change(stranger), kStart),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("it must be one of the nominatedClusterNames")));
  MultiKueueStatus won;
  won.cluster_name = "worker1";
  won.epoch = 1;
  ASSERT_THAT(state_.ApplyMultiKueueChange(Change(won), kStart), IsOk());
  state_.StampRevision(kKey, 9);
  MultiKueueStatus moved = won;
  moved.cluster_name = "worker2";
  EXPECT_THAT(state_.ApplyMultiKueueChange(Change(moved), kStart),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("clusterName is immutable once set")));
  EXPECT_EQ(Get().multikueue->cluster_name, "worker1");
}

TEST_F(MultiKueueStatusTest, StaleDecisionIsAborted) {
  MultiKueueStatus nominated;
  nominated.nominated_cluster_names = {"worker1"};
  MultiKueueChange change = Change(nominated);
  change.revision = 6;
  EXPECT_THAT(state_.ApplyMultiKueueChange(change, kStart),
              StatusIs(absl::StatusCode::kAborted));
  change.revision = 7;
  change.uid = "uid-other";
  EXPECT_THAT(state_.ApplyMultiKueueChange(change, kStart),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_FALSE(Get().multikueue.has_value());
}

TEST_F(MultiKueueStatusTest, ReadyAdmitsAndRetryEvictsAndClearsTheNomination) {
  MultiKueueStatus won;
  won.nominated_cluster_names = {"worker1"};
  won.epoch = 1;
  ASSERT_THAT(state_.ApplyMultiKueueChange(Change(won), kStart), IsOk());
  state_.StampRevision(kKey, 8);
  won.nominated_cluster_names.clear();
  won.cluster_name = "worker1";
  MultiKueueChange ready = Change(won);
  ready.check_state = AdmissionCheckState{
      .name = "mk",
      .state = kCheckStateReady,
      .message = "The workload was admitted on \"worker1\""};
  ASSERT_THAT(state_.ApplyMultiKueueChange(ready, kStart), IsOk());
  EXPECT_TRUE(IsConditionTrue(Get().conditions, kConditionAdmitted));
  state_.StampRevision(kKey, 9);

  MultiKueueChange retry{kKey, "uid-1", 9};
  retry.check_state = AdmissionCheckState{
      .name = "mk",
      .state = kCheckStateRetry,
      .message = "Admitting remote lost, Previously: \"Ready\""};
  ASSERT_THAT(state_.ApplyMultiKueueChange(retry, kStart), IsOk());
  const Condition* evicted = FindCondition(Get().conditions, kConditionEvicted);
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->reason, "AdmissionCheck");
  // resetClusterNomination; with no runner the quota goes at once, and
  // losing it raises the epoch, so the copies made for epoch 1 are stale.
  EXPECT_EQ(Get().multikueue->cluster_name, "");
  EXPECT_TRUE(Get().multikueue->nominated_cluster_names.empty());
  EXPECT_FALSE(HoldsQuota(Get()));
  EXPECT_EQ(Get().multikueue->epoch, 2);
}

TEST_F(MultiKueueStatusTest, RemoteFinishFinishesTheWorkload) {
  MultiKueueChange finish{kKey, "uid-1", 7};
  finish.finish = std::make_pair("Succeeded", "Job finished successfully");
  ASSERT_THAT(state_.ApplyMultiKueueChange(finish, kStart), IsOk());
  EXPECT_EQ(state_.FindWorkload(kKey), nullptr);
  const Workload* done = state_.FindRecentlyFinished(kKey);
  ASSERT_NE(done, nullptr);
  const Condition* finished =
      FindCondition(done->conditions, kConditionFinished);
  ASSERT_NE(finished, nullptr);
  EXPECT_EQ(finished->reason, "Succeeded");
  EXPECT_EQ(finished->message, "Job finished successfully");
}

TEST_F(MultiKueueStatusTest, ExternalDispatcherNominates) {
  ASSERT_THAT(state_.SetNominatedClusters(kKey, {"worker2", "worker1"}),
              IsOk());
  EXPECT_THAT(Get().multikueue->nominated_cluster_names,
              ElementsAre("worker2", "worker1"));
  EXPECT_THAT(state_.SetNominatedClusters(kKey, {"worker1", "worker1"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "status.nominatedClusterNames[1]: Duplicate value: "
                       "\"worker1\""));
  EXPECT_THAT(
      state_.SetNominatedClusters(kKey, std::vector<std::string>(21, "w")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("must have at most 20 items")));
  MultiKueueStatus won;
  won.cluster_name = "worker1";
  ASSERT_THAT(state_.ApplyMultiKueueChange(Change(won), kStart), IsOk());
  EXPECT_THAT(state_.SetNominatedClusters(kKey, {"worker2"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("mutually exclusive")));
  EXPECT_THAT(state_.SetNominatedClusters({"ns", "nope"}, {"worker2"}),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(MultiKueueStatusTest, BuiltInDispatchersRefuseOutsideNominations) {
  state_.Clear();
  Load(kMultiKueueDispatcherAllAtOnce);
  EXPECT_THAT(state_.SetNominatedClusters(kKey, {"worker1"}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("nominates the workers itself")));
}

}  // namespace
}  // namespace kq::admission
