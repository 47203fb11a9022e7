// Ports Kueue's pkg/scheduler/preemption/common/preemption_policy_test.go
// (TestSatisfiesPreemptionPolicy, all 12 cases) and TestPriorityInfo from
// pkg/scheduler/preemption/preemption_test.go (all 7 cases).
//
// Skipped cases: none. Kueue's feature gates become preemption::Features;
// the cases that enable PriorityBoost set features.priority_boost.

#include "server/preemption/policy.h"

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/preemption/priority.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::preemption {
namespace {

using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
const absl::Time kNowPlus1Min = kNow + absl::Minutes(1);
const absl::Time kNowPlus6Min = kNow + absl::Minutes(6);

WorkloadBuilder Preemptor(int32_t priority) {
  WorkloadBuilder builder("preemptor");
  builder.Priority(priority);
  return builder;
}

WorkloadBuilder Candidate(int32_t priority) {
  WorkloadBuilder builder("candidate");
  builder.Priority(priority);
  return builder;
}

WorkloadBuilder Boosted(WorkloadBuilder builder, const std::string& boost) {
  builder.Annotation(kPriorityBoostAnnotation, boost);
  return builder;
}

struct PolicyCase {
  std::string name;
  bool priority_boost = false;
  Workload preemptor;
  Workload candidate;
  std::string policy;
  bool want = false;
};

// Prints the case name, so failures name the case rather than its bytes.
void PrintTo(const PolicyCase& tc, std::ostream* os) { *os << tc.name; }

class SatisfiesPreemptionPolicyTest
    : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(SatisfiesPreemptionPolicyTest, MatchesKueue) {
  const PolicyCase& tc = GetParam();
  EXPECT_EQ(SatisfiesPreemptionPolicy(tc.preemptor, tc.candidate, tc.policy,
                                      {.priority_boost = tc.priority_boost}),
            tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SatisfiesPreemptionPolicyTest,
    ::testing::ValuesIn(std::vector<PolicyCase>{
        {.name = "lower_priority_preemptor_has_higher_priority",
         .preemptor = Preemptor(10).Build(),
         .candidate = Candidate(5).Build(),
         .policy = kPolicyLowerPriority,
         .want = true},
        {.name = "lower_priority_preemptor_has_same_priority",
         .preemptor = Preemptor(10).Build(),
         .candidate = Candidate(10).Build(),
         .policy = kPolicyLowerPriority,
         .want = false},
        {.name = "lower_or_newer_equal_priority_same_priority_same_timestamp",
         .preemptor = Preemptor(10).Created(kNow).Build(),
         .candidate = Candidate(10).Created(kNow).Build(),
         .policy = kPolicyLowerOrNewerEqualPriority,
         .want = false},
        // The candidate is older, so it is not newer.
        {.name = "lower_or_newer_equal_priority_same_priority_newer_timestamp",
         .preemptor = Preemptor(10).Created(kNowPlus1Min).Build(),
         .candidate = Candidate(10).Created(kNow).Build(),
         .policy = kPolicyLowerOrNewerEqualPriority,
         .want = false},
        // The candidate is newer.
        {.name = "lower_or_newer_equal_priority_same_priority_older_timestamp",
         .preemptor = Preemptor(10).Created(kNow).Build(),
         .candidate = Candidate(10).Created(kNowPlus1Min).Build(),
         .policy = kPolicyLowerOrNewerEqualPriority,
         .want = true},
        {.name = "preemption_policy_any",
         .preemptor = Preemptor(10).Created(kNow).Build(),
         .candidate = Candidate(10).Created(kNowPlus6Min).Build(),
         .policy = kPolicyAny,
         .want = true},
        {.name = "preemption_policy_never",
         .preemptor = Preemptor(10).Created(kNow).Build(),
         .candidate = Candidate(10).Created(kNowPlus6Min).Build(),
         .policy = kPolicyNever,
         .want = false},
        {.name = "lower_priority_boost_makes_low_priority_immune",
         .priority_boost = true,
         .preemptor = Preemptor(200).Build(),
         .candidate = Boosted(Candidate(100), "150").Build(),
         .policy = kPolicyLowerPriority,
         .want = false},
        {.name = "lower_priority_boost_on_preemptor_enables_preemption",
         .priority_boost = true,
         .preemptor = Boosted(Preemptor(100), "200").Build(),
         .candidate = Candidate(200).Build(),
         .policy = kPolicyLowerPriority,
         .want = true},
        {.name = "lower_or_newer_equal_priority_boost_equalizes_older_preempts",
         .priority_boost = true,
         .preemptor = Boosted(Preemptor(100), "100").Created(kNow).Build(),
         .candidate = Candidate(200).Created(kNow + absl::Seconds(1)).Build(),
         .policy = kPolicyLowerOrNewerEqualPriority,
         .want = true},
        {.name = "lower_or_newer_equal_priority_equal_effective_newer_cannot",
         .priority_boost = true,
         .preemptor = Boosted(Preemptor(100), "100")
                          .Created(kNow + absl::Seconds(1))
                          .Build(),
         .candidate = Candidate(200).Created(kNow).Build(),
         .policy = kPolicyLowerOrNewerEqualPriority,
         .want = false},
        {.name = "any_always_satisfies_regardless_of_priority_or_boost",
         .priority_boost = true,
         .preemptor = Preemptor(50).Build(),
         .candidate = Boosted(Candidate(100), "200").Build(),
         .policy = kPolicyAny,
         .want = true},
    }),
    [](const auto& info) { return info.param.name; });

// Without the gate the boost annotation must not count (the boost cases
// above would all flip).
TEST(SatisfiesPreemptionPolicyTest, BoostIgnoredWithoutFeatureGate) {
  EXPECT_TRUE(SatisfiesPreemptionPolicy(Preemptor(200).Build(),
                                        Boosted(Candidate(100), "150").Build(),
                                        kPolicyLowerPriority, {}));
}

// Kueue's queue-order timestamp: an eviction for PodsReadyTimeout resets
// it to the eviction time, so an old workload evicted later becomes newer.
TEST(SatisfiesPreemptionPolicyTest, UsesQueueOrderTimestampOfEviction) {
  Workload preemptor = Preemptor(10).Created(kNowPlus1Min).Build();
  Workload candidate = Candidate(10)
                           .Created(kNow)
                           .Condition(kConditionEvicted, "True",
                                      "PodsReadyTimeout", "", kNowPlus6Min)
                           .Build();
  EXPECT_TRUE(SatisfiesPreemptionPolicy(preemptor, candidate,
                                        kPolicyLowerOrNewerEqualPriority, {}));
}

struct PriorityInfoCase {
  std::string name;
  Workload workload;
  bool priority_boost = true;
  PriorityInfo want;
};

// Prints the case name, so failures name the case rather than its bytes.
void PrintTo(const PriorityInfoCase& tc, std::ostream* os) { *os << tc.name; }

class PriorityInfoTest : public ::testing::TestWithParam<PriorityInfoCase> {};

TEST_P(PriorityInfoTest, MatchesKueue) {
  const PriorityInfoCase& tc = GetParam();
  const Features features{.priority_boost = tc.priority_boost};
  PriorityInfo got = PriorityInfoOf(tc.workload, features);
  EXPECT_EQ(got.effective, tc.want.effective);
  EXPECT_EQ(got.base, tc.want.base);
  EXPECT_EQ(got.boost, tc.want.boost);
  EXPECT_EQ(EffectivePriority(tc.workload, features), tc.want.effective);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PriorityInfoTest,
    ::testing::ValuesIn(std::vector<PriorityInfoCase>{
        {.name = "empty_workload",
         .workload = Workload{},
         .want = {.effective = 0, .base = 0, .boost = 0}},
        {.name = "workload_with_priority_only",
         .workload = WorkloadBuilder("w").Priority(100).Build(),
         .want = {.effective = 100, .base = 100, .boost = 0}},
        {.name = "workload_with_priority_and_positive_boost",
         .workload = Boosted(Preemptor(200), "50").Build(),
         .want = {.effective = 250, .base = 200, .boost = 50}},
        {.name = "workload_with_priority_and_negative_boost",
         .workload = Boosted(Preemptor(100), "-30").Build(),
         .want = {.effective = 70, .base = 100, .boost = -30}},
        {.name = "workload_with_invalid_boost_annotation_falls_back_to_zero",
         .workload = Boosted(Preemptor(100), "not-a-number").Build(),
         .want = {.effective = 100, .base = 100, .boost = 0}},
        {.name = "workload_with_effective_priority_above_int32_max",
         .workload = Boosted(Preemptor(std::numeric_limits<int32_t>::max()),
                             "1")
                         .Build(),
         .want = {.effective = int64_t{std::numeric_limits<int32_t>::max()} + 1,
                  .base = std::numeric_limits<int32_t>::max(),
                  .boost = 1}},
        {.name = "feature_disabled_boost_annotation_ignored",
         .workload = Boosted(Preemptor(100), "50").Build(),
         .priority_boost = false,
         .want = {.effective = 100, .base = 100, .boost = 0}},
    }),
    [](const auto& info) { return info.param.name; });

// Go's strconv.ParseInt(value, 10, 32) accepts a sign but no spaces, and
// rejects values outside int32.
TEST(PriorityBoostTest, ParsesLikeGoParseInt32) {
  const Features on{.priority_boost = true};
  auto boost = [&](const std::string& value) {
    return PriorityBoost(Boosted(Preemptor(0), value).Build(), on);
  };
  EXPECT_THAT(boost("+7"), ::kq::testing::IsOkAndHolds(7));
  EXPECT_THAT(boost("-2147483648"),
              ::kq::testing::IsOkAndHolds(std::numeric_limits<int32_t>::min()));
  EXPECT_THAT(boost(""), ::kq::testing::IsOkAndHolds(0));
  EXPECT_THAT(boost(" 7"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(boost("7 "), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(boost("-"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(boost("2147483648"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(PriorityBoost(Boosted(Preemptor(0), "x").Build(), {}),
              ::kq::testing::IsOkAndHolds(0));
}

}  // namespace
}  // namespace kq::preemption
