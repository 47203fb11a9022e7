// Ports Kueue's TestCandidatesOrdering
// (pkg/scheduler/preemption/preemption_test.go), all 9 cases, and checks
// the tie-breaks Kueue's table does not reach (UID, then kq's namespace and
// name).
//
// Skipped cases: none. Kueue's feature gates become preemption::Features;
// its workload.Info.LocalQueueFSUsage becomes Candidate::local_queue_usage.

#include "server/preemption/ordering.h"

#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/testing/builders.h"

namespace kq::preemption {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAreArray;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
constexpr char kPreemptorCq[] = "preemptor";

// A workload holding quota in `cluster_queue` since `reserved_at`.
WorkloadBuilder Reserved(const std::string& name,
                         const std::string& cluster_queue,
                         absl::Time reserved_at = kNow) {
  WorkloadBuilder builder(name);
  builder.ReserveQuota(AdmissionBuilder(cluster_queue).Build(), reserved_at);
  return builder;
}

// One row of a case: the workload and its LocalQueue's AFS usage, if any.
struct CandidateSpec {
  Workload workload;
  std::optional<double> local_queue_usage;
};

// Kueue's shared fixtures for the AFS cases.
CandidateSpec LowUsageLq() {
  return {Reserved("low_lq_usage", kPreemptorCq)
              .Queue("low_usage_lq")
              .Priority(1)
              .Build(),
          0.1};
}
CandidateSpec MidUsageLq() {
  return {Reserved("mid_lq_usage", kPreemptorCq)
              .Queue("mid_usage_lq")
              .Priority(10)
              .Build(),
          0.5};
}
CandidateSpec HighUsageLqDifferentCq() {
  return {Reserved("high_lq_usage_different_cq", "different_cq")
              .Queue("high_usage_lq_different_cq")
              .Priority(1)
              .Build(),
          1.0};
}

std::vector<Candidate> ToCandidates(const std::vector<CandidateSpec>& specs) {
  std::vector<Candidate> candidates;
  for (const CandidateSpec& spec : specs) {
    candidates.push_back(
        {.workload = &spec.workload,
         .cluster_queue = spec.workload.admission.has_value()
                              ? spec.workload.admission->cluster_queue
                              : "",
         .local_queue_usage = spec.local_queue_usage});
  }
  return candidates;
}

std::vector<std::string> Names(const std::vector<Candidate>& candidates) {
  std::vector<std::string> names;
  for (const Candidate& c : candidates) names.push_back(c.workload->meta.name);
  return names;
}

struct OrderingCase {
  std::string name;
  std::vector<CandidateSpec> candidates;
  std::vector<std::string> want;
  Features features;
};

// Prints the case name, so failures name the case rather than its bytes.
void PrintTo(const OrderingCase& tc, std::ostream* os) { *os << tc.name; }

class CandidatesOrderingTest : public ::testing::TestWithParam<OrderingCase> {};

TEST_P(CandidatesOrderingTest, MatchesKueue) {
  const OrderingCase& tc = GetParam();
  std::vector<Candidate> candidates = ToCandidates(tc.candidates);
  std::sort(candidates.begin(), candidates.end(),
            CandidatesOrdering(kPreemptorCq, kNow, tc.features));
  EXPECT_THAT(Names(candidates), ElementsAreArray(tc.want));
  // The order must not depend on the input order.
  std::reverse(candidates.begin(), candidates.end());
  std::sort(candidates.begin(), candidates.end(),
            CandidatesOrdering(kPreemptorCq, kNow, tc.features));
  EXPECT_THAT(Names(candidates), ElementsAreArray(tc.want));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CandidatesOrderingTest,
    ::testing::ValuesIn(std::vector<OrderingCase>{
        {.name = "workloads_sorted_by_priority",
         .candidates = {{Reserved("high", kPreemptorCq).Priority(10).Build()},
                        {Reserved("low", kPreemptorCq).Priority(-10).Build()}},
         .want = {"low", "high"}},
        {.name = "workloads_sorted_by_effective_priority_with_boost",
         .candidates = {{Reserved("high-boost", kPreemptorCq)
                             .Priority(10)
                             .Annotation(kPriorityBoostAnnotation, "100")
                             .Build()},
                        {Reserved("low-boost", kPreemptorCq)
                             .Priority(10)
                             .Annotation(kPriorityBoostAnnotation, "5")
                             .Build()}},
         .want = {"low-boost", "high-boost"},
         .features = {.priority_boost = true}},
        {.name = "workload_missing_priority_boost_defaults_to_zero",
         .candidates =
             {{Reserved("missing-boost", kPreemptorCq).Priority(10).Build()},
              {Reserved("has-boost", kPreemptorCq)
                   .Priority(10)
                   .Annotation(kPriorityBoostAnnotation, "5")
                   .Build()}},
         .want = {"missing-boost", "has-boost"},
         .features = {.priority_boost = true}},
        {.name = "invalid_priority_boost_defaults_to_zero",
         .candidates = {{Reserved("invalid-boost", kPreemptorCq)
                             .Priority(10)
                             .Annotation(kPriorityBoostAnnotation, "invalid")
                             .Build()},
                        {Reserved("valid-boost", kPreemptorCq)
                             .Priority(10)
                             .Annotation(kPriorityBoostAnnotation, "5")
                             .Build()}},
         .want = {"invalid-boost", "valid-boost"},
         .features = {.priority_boost = true}},
        {.name = "evicted_workload_first",
         .candidates = {{Reserved("other", kPreemptorCq).Priority(10).Build()},
                        {WorkloadBuilder("evicted")
                             .Condition(kConditionEvicted, "True", "", "", kNow)
                             .Build()}},
         .want = {"evicted", "other"}},
        {.name = "workload_from_different_cq_first",
         .candidates =
             {{Reserved("preemptorCq", kPreemptorCq).Priority(10).Build()},
              {Reserved("other", "other").Priority(10).Build()}},
         .want = {"other", "preemptorCq"}},
        {.name = "old_workloads_last",
         .candidates =
             {{Reserved("older", kPreemptorCq, kNow - absl::Seconds(1))
                   .Build()},
              {Reserved("younger", kPreemptorCq, kNow + absl::Seconds(1))
                   .Build()},
              {Reserved("current", kPreemptorCq, kNow).Build()}},
         .want = {"younger", "current", "older"}},
        {.name = "workloads_with_higher_lq_usage_first",
         .candidates = {LowUsageLq(), MidUsageLq()},
         .want = {"mid_lq_usage", "low_lq_usage"},
         .features = {.admission_fair_sharing = true}},
        {.name = "workloads_from_different_cq_are_sorted_based_on_priority_and_"
                 "timestamp",
         .candidates = {MidUsageLq(), HighUsageLqDifferentCq()},
         .want = {"high_lq_usage_different_cq", "mid_lq_usage"},
         .features = {.admission_fair_sharing = true}},
    }),
    [](const auto& info) { return info.param.name; });

// Without AFS the LocalQueue usage is ignored and priority decides.
TEST(CandidatesOrderingTest, LocalQueueUsageIgnoredWithoutAfs) {
  std::vector<CandidateSpec> specs = {MidUsageLq(), LowUsageLq()};
  std::vector<Candidate> candidates = ToCandidates(specs);
  std::sort(candidates.begin(), candidates.end(),
            CandidatesOrdering(kPreemptorCq, kNow, {}));
  EXPECT_THAT(Names(candidates),
              ElementsAreArray({"low_lq_usage", "mid_lq_usage"}));
}

// A workload without QuotaReserved=True counts as reserved `now`, the most
// recent, so it goes before one reserved earlier.
TEST(CandidatesOrderingTest, MissingReservationCountsAsNow) {
  std::vector<CandidateSpec> specs = {
      {Reserved("earlier", kPreemptorCq, kNow - absl::Seconds(5)).Build()},
      {WorkloadBuilder("unreserved").Build()}};
  std::vector<Candidate> candidates = ToCandidates(specs);
  for (Candidate& c : candidates) c.cluster_queue = kPreemptorCq;
  std::sort(candidates.begin(), candidates.end(),
            CandidatesOrdering(kPreemptorCq, kNow, {}));
  EXPECT_THAT(Names(candidates), ElementsAreArray({"unreserved", "earlier"}));
}

// Full ties fall back to Kueue's UID order, then to namespace and name.
TEST(CandidatesOrderingTest, TiesBrokenByUidThenName) {
  std::vector<CandidateSpec> specs = {
      {Reserved("b", kPreemptorCq).Uid("uid-1").Build()},
      {Reserved("a", kPreemptorCq).Uid("uid-2").Build()},
      {Reserved("d", kPreemptorCq).Uid("uid-0").Build()},
      {Reserved("c", kPreemptorCq).Uid("uid-0").Build()}};
  std::vector<Candidate> candidates = ToCandidates(specs);
  EXPECT_LT(
      CompareCandidates(candidates[0], candidates[1], kPreemptorCq, kNow, {}),
      0);
  EXPECT_EQ(
      CompareCandidates(candidates[2], candidates[3], kPreemptorCq, kNow, {}),
      0);
  std::sort(candidates.begin(), candidates.end(),
            CandidatesOrdering(kPreemptorCq, kNow, {}));
  EXPECT_THAT(Names(candidates), ElementsAreArray({"c", "d", "b", "a"}));
}

}  // namespace
}  // namespace kq::preemption
