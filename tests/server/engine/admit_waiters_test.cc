// Tests for AdmitWaiters: which waiters a batch looks at.

#include "server/engine/admit_waiters.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kq::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

AdmitWaiters::Waiter WaiterFor(int64_t id, const std::string& name,
                               absl::Time deadline = absl::InfiniteFuture()) {
  AdmitWaiters::Waiter waiter;
  waiter.id = id;
  waiter.wait.key = {"ns", name};
  waiter.wait.deadline = deadline;
  waiter.done = [](absl::StatusOr<AdmitOutcome>) {};
  return waiter;
}

// The ids of `due`, each with "!" when expired.
std::vector<std::string> Ids(const std::vector<AdmitWaiters::Due>& due) {
  std::vector<std::string> out;
  for (const AdmitWaiters::Due& d : due) {
    out.push_back(absl::StrCat(d.waiter.id, d.expired ? "!" : ""));
  }
  return out;
}

const std::map<NamespacedName, admission::Change> kNothingChanged;

TEST(AdmitWaitersTest, NewWaitersAreDueOnceThenOnlyWhenTheirWorkloadChanges) {
  AdmitWaiters waiters;
  waiters.Add(WaiterFor(1, "a"));
  waiters.Add(WaiterFor(2, "b"));
  std::vector<AdmitWaiters::Due> due = waiters.TakeDue(kNothingChanged, kT0);
  EXPECT_THAT(Ids(due), ElementsAre("1", "2"));
  EXPECT_TRUE(waiters.empty());
  for (AdmitWaiters::Due& d : due) waiters.Restore(std::move(d.waiter));

  EXPECT_THAT(Ids(waiters.TakeDue(kNothingChanged, kT0)), IsEmpty());
  const std::map<NamespacedName, admission::Change> b_changed{
      {{"ns", "b"}, admission::Change::kModified},
      {{"ns", "z"}, admission::Change::kModified}};
  EXPECT_THAT(Ids(waiters.TakeDue(b_changed, kT0)), ElementsAre("2"));
  // Taken and not restored: gone.
  EXPECT_THAT(Ids(waiters.TakeDue(b_changed, kT0)), IsEmpty());
  EXPECT_FALSE(waiters.empty());
}

TEST(AdmitWaitersTest, DeadlinesExpireWaitersInKeyOrder) {
  AdmitWaiters waiters;
  waiters.Add(WaiterFor(1, "b", kT0 + absl::Seconds(5)));
  waiters.Add(WaiterFor(2, "a", kT0 + absl::Seconds(10)));
  waiters.Add(WaiterFor(3, "b"));
  for (AdmitWaiters::Due& d : waiters.TakeDue(kNothingChanged, kT0)) {
    waiters.Restore(std::move(d.waiter));
  }
  EXPECT_EQ(waiters.NextDeadline(), kT0 + absl::Seconds(5));
  // b's first waiter expires; b's other waiter is looked at with it.
  std::vector<AdmitWaiters::Due> due =
      waiters.TakeDue(kNothingChanged, kT0 + absl::Seconds(5));
  EXPECT_THAT(Ids(due), ElementsAre("1!", "3"));
  EXPECT_EQ(waiters.NextDeadline(), kT0 + absl::Seconds(10));
  EXPECT_THAT(Ids(waiters.TakeDue(kNothingChanged, kT0 + absl::Minutes(1))),
              ElementsAre("2!"));
  EXPECT_EQ(waiters.NextDeadline(), std::nullopt);
}

TEST(AdmitWaitersTest, CancelForgetsOneWaiterAndIgnoresUnknownIds) {
  AdmitWaiters waiters;
  waiters.Add(WaiterFor(1, "a", kT0));
  waiters.Add(WaiterFor(2, "a"));
  waiters.Cancel(1);
  waiters.Cancel(42);
  // Only the waiter without a deadline is left.
  EXPECT_EQ(waiters.NextDeadline(), absl::InfiniteFuture());
  EXPECT_THAT(Ids(waiters.TakeDue(kNothingChanged, kT0)), ElementsAre("2"));
}

TEST(AdmitWaitersTest, TakeAllEmptiesEverything) {
  AdmitWaiters waiters;
  waiters.Add(WaiterFor(1, "a", kT0));
  waiters.Add(WaiterFor(2, "b"));
  EXPECT_EQ(waiters.TakeAll().size(), 2u);
  EXPECT_TRUE(waiters.empty());
  EXPECT_EQ(waiters.NextDeadline(), std::nullopt);
  EXPECT_THAT(Ids(waiters.TakeDue(kNothingChanged, kT0)), IsEmpty());
  EXPECT_NE(waiters.NewId(), waiters.NewId());
}

}  // namespace
}  // namespace kq::engine
