#include "server/engine/event_log.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::engine {
namespace {

using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAre;

// `count` workload events at `revision`, named "r<revision>-<i>".
std::vector<store::Event> Batch(int64_t revision, int count) {
  std::vector<store::Event> events;
  for (int i = 0; i < count; ++i) {
    events.push_back({revision, store::Event::Type::kAdded,
                      WorkloadBuilder(absl::StrCat("r", revision, "-", i))
                          .Namespace("ns")
                          .Build()});
  }
  return events;
}

std::vector<std::string> Names(const std::vector<SharedEvent>& events) {
  std::vector<std::string> names;
  for (const SharedEvent& e : events) {
    names.push_back(std::get<Workload>(e->object).meta.name);
  }
  return names;
}

TEST(EventLogTest, ReadsStartAfterTheRevisionAndNeverSplitOne) {
  EventLog log(/*capacity=*/100);
  log.Reset(0, {});
  for (int64_t revision = 1; revision <= 5; ++revision) {
    log.Append(revision, Batch(revision, 2));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<SharedEvent> events,
                       log.Read(3, 100, absl::ZeroDuration()));
  EXPECT_THAT(Names(events), ElementsAre("r4-0", "r4-1", "r5-0", "r5-1"));
  // A limit inside revision 4 still ends the read with all of it.
  ASSERT_OK_AND_ASSIGN(events, log.Read(3, 1, absl::ZeroDuration()));
  EXPECT_THAT(Names(events), ElementsAre("r4-0", "r4-1"));
  ASSERT_OK_AND_ASSIGN(events, log.Read(5, 100, absl::ZeroDuration()));
  EXPECT_TRUE(events.empty());
  ASSERT_OK_AND_ASSIGN(events, log.Read(0, 3, absl::ZeroDuration()));
  EXPECT_THAT(Names(events), ElementsAre("r1-0", "r1-1", "r2-0", "r2-1"));
}

TEST(EventLogTest, ReadersShareTheLoggedEvents) {
  EventLog log(/*capacity=*/100);
  log.Reset(0, {});
  log.Append(1, Batch(1, 1));
  ASSERT_OK_AND_ASSIGN(std::vector<SharedEvent> first,
                       log.Read(0, 100, absl::ZeroDuration()));
  ASSERT_OK_AND_ASSIGN(std::vector<SharedEvent> second,
                       log.Read(0, 100, absl::ZeroDuration()));
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(first[0].get(), second[0].get());
}

TEST(EventLogTest, DroppedRevisionsAreOutOfRange) {
  EventLog log(/*capacity=*/3);
  log.Reset(0, {});
  log.Append(1, Batch(1, 2));
  log.Append(2, Batch(2, 2));  // 4 > 3: revision 1 goes, whole
  EXPECT_EQ(log.Read(0, 100, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kOutOfRange);
  ASSERT_OK_AND_ASSIGN(std::vector<SharedEvent> events,
                       log.Read(1, 100, absl::ZeroDuration()));
  EXPECT_THAT(Names(events), ElementsAre("r2-0", "r2-1"));
}

TEST(EventLogTest, ResetKeepsTheRetainedEventsAfterTheStoreRevision) {
  EventLog log(/*capacity=*/100);
  std::vector<store::Event> retained = Batch(7, 1);
  std::vector<store::Event> more = Batch(8, 1);
  retained.push_back(std::move(more[0]));
  log.Reset(8, std::move(retained));
  EXPECT_EQ(log.revision(), 8);
  ASSERT_OK_AND_ASSIGN(std::vector<SharedEvent> events,
                       log.Read(7, 100, absl::ZeroDuration()));
  EXPECT_THAT(Names(events), ElementsAre("r8-0"));
  EXPECT_EQ(log.Read(5, 100, absl::ZeroDuration()).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(EventLogTest, CloseCancelsReaders) {
  EventLog log(/*capacity=*/100);
  log.Reset(0, {});
  log.Close();
  EXPECT_EQ(log.Read(0, 100, absl::Seconds(5)).status().code(),
            absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace kq::engine
