// LogWorkloadTransitions: which conditions of a committed batch's workloads
// make a line, at which level, with which fields.

#include "server/engine/workload_log.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

#include "server/core/conditions.h"
#include "server/store/store.h"
#include "tests/testing/builders.h"

namespace kq::engine {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kBatchTime = absl::FromUnixSeconds(1'700'000'000);
const absl::Time kEarlier = kBatchTime - absl::Seconds(30);

// Captures the default logger's lines as "<level> <message> <fields>" (a
// logger logging::Init did not make gets With's fields in the message).
class WorkloadLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_pattern("%l %v");
    auto logger = std::make_shared<spdlog::logger>("test", sink);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }

  std::vector<std::string> Log(std::vector<store::Event> events) {
    LogWorkloadTransitions(
        {.revision = 7, .time = kBatchTime, .events = events});
    std::vector<std::string> lines;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    out_.str("");
    return lines;
  }

  std::ostringstream out_;
};

store::Event Added(Workload wl) {
  return {.revision = 7,
          .type = store::Event::Type::kAdded,
          .object = std::move(wl)};
}
store::Event Modified(Workload wl) {
  return {.revision = 7,
          .type = store::Event::Type::kModified,
          .object = std::move(wl)};
}

TEST_F(WorkloadLogTest, SubmittedAndAdmittedInOneBatch) {
  EXPECT_THAT(
      Log({Added(WorkloadBuilder("a")
                     .Namespace("team-a")
                     .Queue("lq")
                     .Admitted(AdmissionBuilder("cq").Build(), kBatchTime)
                     .Build())}),
      ElementsAre("debug workload submitted workload=team-a/a "
                  "local_queue=team-a/lq cluster_queue=cq revision=7",
                  "debug workload reserved quota workload=team-a/a "
                  "local_queue=team-a/lq cluster_queue=cq revision=7",
                  "debug workload admitted workload=team-a/a "
                  "local_queue=team-a/lq cluster_queue=cq revision=7"));
}

TEST_F(WorkloadLogTest, EvictionAndPreemptionAtInfoWithTheirReasons) {
  EXPECT_THAT(
      Log({Modified(
          WorkloadBuilder("a")
              .Queue("lq")
              .Admitted(AdmissionBuilder("cq").Build(), kEarlier)
              .Condition(kConditionEvicted, kConditionTrue, kReasonPreempted,
                         "Preempted to accommodate a workload", kBatchTime)
              .Condition(kConditionPreempted, kConditionTrue, "InClusterQueue",
                         "Preempted to accommodate a workload", kBatchTime)
              .Build())}),
      ElementsAre("info workload evicted workload=default/a "
                  "local_queue=default/lq cluster_queue=cq reason=Preempted "
                  "message=\"Preempted to accommodate a workload\" revision=7",
                  "info workload preempted workload=default/a "
                  "local_queue=default/lq cluster_queue=cq "
                  "reason=InClusterQueue message=\"Preempted to accommodate a "
                  "workload\" revision=7"));
}

TEST_F(WorkloadLogTest, FinishedWithItsReason) {
  EXPECT_THAT(
      Log({Modified(WorkloadBuilder("a")
                        .Queue("lq")
                        .Admitted(AdmissionBuilder("cq").Build(), kEarlier)
                        .Finished("Failed", kBatchTime)
                        .Build())}),
      ElementsAre("debug workload finished workload=default/a "
                  "local_queue=default/lq cluster_queue=cq reason=Failed "
                  "revision=7"));
}

TEST_F(WorkloadLogTest, ConditionsFromEarlierBatchesAndFalseOnesAreNotLogged) {
  EXPECT_THAT(
      Log({Modified(WorkloadBuilder("still-admitted")
                        .Admitted(AdmissionBuilder("cq").Build(), kEarlier)
                        .Build()),
           Modified(WorkloadBuilder("pending")
                        .Condition(kConditionQuotaReserved, kConditionFalse,
                                   kReasonWaitingForQuota, "insufficient quota",
                                   kBatchTime)
                        .Build())}),
      IsEmpty());
}

TEST_F(WorkloadLogTest, InfoLevelKeepsOnlyEvictions) {
  spdlog::default_logger()->set_level(spdlog::level::info);
  EXPECT_THAT(
      Log({Added(WorkloadBuilder("a")
                     .Admitted(AdmissionBuilder("cq").Build(), kBatchTime)
                     .Build()),
           Modified(WorkloadBuilder("b")
                        .Condition(kConditionEvicted, kConditionTrue,
                                   kReasonPodsReadyTimeout, "", kBatchTime)
                        .Build())}),
      ElementsAre("info workload evicted workload=default/b "
                  "reason=PodsReadyTimeout revision=7"));
}

}  // namespace
}  // namespace kq::engine
