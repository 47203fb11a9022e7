// Moving inadmissible workloads back when quota is released (Kueue's
// QueueInadmissibleWorkloads on a finish): finishes between two passes move
// a tree's parked workloads once, and a finish after a pass that parked
// them again moves them again.

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "server/admission/state.h"
#include "server/core/objects.h"
#include "tests/testing/builders.h"

namespace kq::admission {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

// ClusterQueues "a" and "b" of cohort "co", 2 CPUs each; namespace "ns" has
// LocalQueues "la" and "lb".
class RequeueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_.LoadObject(ResourceFlavorBuilder("default").Build());
    state_.LoadObject(CohortBuilder("co").Build());
    for (const std::string cq : {"a", "b"}) {
      state_.LoadObject(ClusterQueueBuilder(cq)
                            .Cohort("co")
                            .NamespaceSelectorAll()
                            .ResourceGroup({"cpu"})
                            .Flavor("default")
                            .Quota("cpu", "2")
                            .Build());
      state_.LoadObject(LocalQueueBuilder("ns", "l" + cq, cq).Build());
    }
    state_.Rebuild(kStart);
  }

  NamespacedName Submit(const std::string& name, const std::string& queue,
                        const std::string& cpu, absl::Duration after) {
    const Workload& wl = state_.AddWorkload(WorkloadBuilder(name)
                                                .Namespace("ns")
                                                .Queue(queue)
                                                .PodSet("main", 1)
                                                .Request("cpu", cpu)
                                                .Build(),
                                            "uid-" + name, kStart + after);
    return KeyOf(wl);
  }
  // a1 and b1 (2 CPUs each) fill the cohort; big, which needs all of it,
  // is parked behind them.
  void FillTheCohort() {
    a1_ = Submit("a1", "la", "2", absl::Seconds(1));
    b1_ = Submit("b1", "lb", "2", absl::Seconds(2));
    big_ = Submit("big", "la", "4", absl::Seconds(3));
    state_.RunPasses(kStart);
    ASSERT_TRUE(Admitted(a1_));
    ASSERT_TRUE(Admitted(b1_));
    ASSERT_FALSE(Admitted(big_));
  }
  bool Admitted(const NamespacedName& key) {
    const Workload* wl = state_.FindWorkload(key);
    return wl != nullptr && HoldsQuota(*wl);
  }
  void Finish(const NamespacedName& key) {
    ASSERT_TRUE(state_.FinishWorkload(key, "Succeeded", "", kStart).ok());
  }

  Condition PsCondition() {
    return *FindCondition(state_.FindWorkload(p_)->conditions,
                          kConditionQuotaReserved);
  }
  // a1 and b1 fill the cohort; q (in a) and p (in b) wait, p with an
  // "insufficient quota" message (p_before_), and those changes are taken.
  // Then a1 finishes: both heads fit when nominated; q, within its nominal
  // quota, goes first, so p is skipped ("no longer fits") and then does not
  // fit, with the message it had. The batch's changes are left to take.
  void TurnPsMessageBack() {
    a1_ = Submit("a1", "la", "2", absl::Seconds(1));
    b1_ = Submit("b1", "lb", "2", absl::Seconds(2));
    q_ = Submit("q", "la", "2", absl::Seconds(3));
    p_ = Submit("p", "lb", "2", absl::Seconds(4));
    state_.RunPasses(kStart);
    ASSERT_FALSE(Admitted(p_));
    p_before_ = PsCondition();
    state_.TakeChanges();
    Finish(a1_);
    state_.RunPasses(kStart);
    ASSERT_TRUE(Admitted(q_));
    ASSERT_FALSE(Admitted(p_));
  }

  AdmissionState state_;
  NamespacedName a1_, b1_, big_, q_, p_;
  Condition p_before_;
};

TEST_F(RequeueTest, EveryFinishAfterAPassMovesTheParkedBack) {
  FillTheCohort();
  // Half the cohort is free: big comes back, does not fit, is parked again.
  Finish(a1_);
  state_.RunPasses(kStart);
  EXPECT_FALSE(Admitted(big_));
  // The rest is freed: big must come back once more, and fits.
  Finish(b1_);
  state_.RunPasses(kStart);
  EXPECT_TRUE(Admitted(big_));
}

TEST_F(RequeueTest, FinishesBetweenTwoPassesBothCount) {
  FillTheCohort();
  // Two finishes in one tree before the next pass: the second moves nothing
  // new, and the pass sees all the quota both freed.
  Finish(a1_);
  Finish(b1_);
  state_.RunPasses(kStart);
  EXPECT_TRUE(Admitted(big_));
}

TEST_F(RequeueTest, AMessageThatTurnsBackWithinABatchIsNoChange) {
  ASSERT_NO_FATAL_FAILURE(TurnPsMessageBack());
  EXPECT_EQ(PsCondition(), p_before_);
  EXPECT_TRUE(state_.pending_changes().workloads.contains(p_))
      << "p's message did not change during the batch; the test is moot";

  const Changes changes = state_.TakeChanges();
  EXPECT_FALSE(changes.workloads.contains(p_));
  EXPECT_TRUE(changes.workloads.contains(q_));
  EXPECT_TRUE(changes.finished_workloads.contains(a1_));
}

TEST_F(RequeueTest, AMessageThatTurnsBackBesideAnotherChangeIsAChange) {
  ASSERT_NO_FATAL_FAILURE(TurnPsMessageBack());
  // The same batch changes p for good after its message turned back.
  ASSERT_TRUE(state_.SetReclaimablePods(p_, {{"main", 1}}, kStart).ok());
  EXPECT_TRUE(state_.TakeChanges().workloads.contains(p_));
}

TEST_F(RequeueTest, AMessageThatChangesForGoodIsAChange) {
  FillTheCohort();
  const Condition before =
      *FindCondition(state_.FindWorkload(big_)->conditions, "QuotaReserved");
  state_.TakeChanges();
  // Half the cohort is free: big still does not fit, but needs less now.
  Finish(a1_);
  state_.RunPasses(kStart);
  ASSERT_FALSE(Admitted(big_));
  ASSERT_NE(
      *FindCondition(state_.FindWorkload(big_)->conditions, "QuotaReserved"),
      before);
  EXPECT_TRUE(state_.TakeChanges().workloads.contains(big_));
}

// Kueue's SchedulingEquivalenceHashing (beta, on by default since 0.18):
// when a head is parked as NoFit in a BestEffortFIFO ClusterQueue, the
// workloads behind it with the same shape are parked with it, untried, so
// the next different one is the next pass's head.
TEST_F(RequeueTest, EquivalentWorkloadsAreParkedWithTheHead) {
  a1_ = Submit("a1", "la", "1", absl::Seconds(1));
  b1_ = Submit("b1", "lb", "2", absl::Seconds(2));
  ASSERT_EQ(state_.RunPasses(kStart), 1);
  // One CPU of the cohort is free.
  const NamespacedName e1 = Submit("e1", "la", "2", absl::Seconds(3));
  const NamespacedName e2 = Submit("e2", "la", "2", absl::Seconds(4));
  const NamespacedName e3 = Submit("e3", "la", "2", absl::Seconds(5));
  const NamespacedName small = Submit("small", "la", "1", absl::Seconds(6));
  // e1 does not fit and takes e2 and e3 with it; small is the second head.
  EXPECT_EQ(state_.RunPasses(kStart), 2);
  EXPECT_TRUE(Admitted(small));
  EXPECT_NE(FindCondition(state_.FindWorkload(e1)->conditions, "QuotaReserved"),
            nullptr);
  for (const NamespacedName& untried : {e2, e3}) {
    EXPECT_FALSE(Admitted(untried));
    EXPECT_EQ(FindCondition(state_.FindWorkload(untried)->conditions,
                            "QuotaReserved"),
              nullptr)
        << untried.second << " was tried";
  }
  // An equivalent arrival is parked at once: no pass.
  const NamespacedName e4 = Submit("e4", "la", "2", absl::Seconds(7));
  EXPECT_EQ(state_.RunPasses(kStart), 0);
  EXPECT_FALSE(Admitted(e4));
  // A finish moves them all back: e1 fits (b's quota, borrowed), e2 does
  // not and parks e3 and e4 again.
  Finish(b1_);
  EXPECT_EQ(state_.RunPasses(kStart), 2);
  EXPECT_TRUE(Admitted(e1));
  EXPECT_FALSE(Admitted(e2));
  EXPECT_EQ(FindCondition(state_.FindWorkload(e3)->conditions, "QuotaReserved"),
            nullptr);
}

}  // namespace
}  // namespace kq::admission
