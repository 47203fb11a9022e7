// KqdMetrics on a real engine (MemoryStore, fake clock): Kueue's counters,
// histograms and queue gauges after a known sequence, a deleted queue's
// series gone, and the exposition as promtool reads it.

#include "server/metrics/kqd_metrics.h"

#include <cstdio>
#include <fstream>
#include <functional>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "base/metrics.h"
#include "server/engine/engine.h"
#include "server/store/memory_store.h"
#include "tests/server/metrics/metrics_text.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::metrics {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::FakeClock;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;
using ::kq::testing::WorkloadPriorityClassBuilder;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

constexpr char kCq[] = "ai-training-queue";

// Runs promtool check metrics over `text`; its exit code.
int PromtoolCheck(const std::string& text) {
  kq::testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/metrics.txt";
  std::ofstream(path) << text;
  const std::string command =
      "promtool check metrics < " + path + " > " + dir.path() + "/out 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream out(dir.path() + "/out");
  std::string line;
  while (std::getline(out, line)) ADD_FAILURE() << "promtool: " << line;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class KqdMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<engine::Engine>(store_, clock_);
    metrics_ = std::make_unique<KqdMetrics>(
        *engine_, KqdMetricsOptions{.gauge_interval = absl::Milliseconds(5)});
    ASSERT_OK(engine_->Start());
    metrics_->Start();
    ClusterQueueBuilder cq(kCq);
    cq.WithinClusterQueue("LowerPriority");
    cq.ResourceGroup({"cpu", "nvidia.com/gpu"})
        .Flavor("gpu-a100")
        .Quota("nvidia.com/gpu", "8")
        .Quota("cpu", "64");
    ASSERT_OK(
        engine_
            ->Apply({ResourceFlavorBuilder("gpu-a100").Build(), cq.Build(),
                     LocalQueueBuilder("team-ml", "ml-jobs", kCq).Build(),
                     WorkloadPriorityClassBuilder("production", 1000).Build()},
                    {})
            .status());
  }
  void TearDown() override {
    metrics_->Stop();
    engine_->Stop();
  }

  Workload Job(const std::string& name, const char* gpus) {
    return WorkloadBuilder(name)
        .Namespace("team-ml")
        .Queue("ml-jobs")
        .PodSet("main", 1)
        .Request("nvidia.com/gpu", gpus)
        .Request("cpu", "1")
        .Build();
  }

  // Renders until `done` holds (the gauges are captured a few ms after a
  // change) or 10 s pass; returns the last rendering.
  std::string RenderWhen(const std::function<bool(const std::string&)>& done) {
    std::string text;
    for (int i = 0; i < 1000; ++i) {
      text = metrics_->Render();
      if (done(text)) return text;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return text;
  }

  store::MemoryStore store_;
  FakeClock clock_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<KqdMetrics> metrics_;
};

TEST_F(KqdMetricsTest, KueuesCountersAndGaugesFollowTheWorkloads) {
  ASSERT_OK(engine_->Submit(Job("low", "8")).status());
  clock_.Advance(absl::Seconds(3));
  Workload high = Job("high", "8");
  high.priority_class_name = "production";
  high.priority = 1000;
  ASSERT_OK(engine_->Submit(high).status());
  // high preempted low (no runner: the quota is released at once) and took
  // its place.
  std::string text = RenderWhen([](const std::string& t) {
    return Sample(t, "kueue_admitted_active_workloads") == 1 &&
           Sample(t, "kueue_pending_workloads", {{"status", "inadmissible"}})
                       .value_or(0) +
                   Sample(t, "kueue_pending_workloads", {{"status", "active"}})
                       .value_or(0) ==
               1;
  });
  EXPECT_THAT(Sample(text, "kueue_quota_reserved_workloads_total",
                     {{"cluster_queue", kCq},
                      {"priority_class", ""},
                      {"replica_role", "standalone"}}),
              Optional(1));
  EXPECT_THAT(
      Sample(text, "kueue_admitted_workloads_total",
             {{"cluster_queue", kCq}, {"priority_class", "production"}}),
      Optional(1));
  EXPECT_THAT(Sample(text, "kueue_evicted_workloads_total",
                     {{"cluster_queue", kCq},
                      {"reason", "Preempted"},
                      {"underlying_cause", ""},
                      {"priority_class", ""}}),
              Optional(1));
  EXPECT_THAT(
      Sample(text, "kueue_preempted_workloads_total",
             {{"preempting_cluster_queue", kCq}, {"reason", "InClusterQueue"}}),
      Optional(1));
  EXPECT_THAT(Sample(text, "kueue_workload_eviction_latency_seconds_count",
                     {{"cluster_queue", kCq}, {"reason", "Preempted"}}),
              Optional(1));
  // high waited 0 s, on the fake clock.
  EXPECT_THAT(Sample(text, "kueue_admission_wait_time_seconds_bucket",
                     {{"priority_class", "production"}, {"le", "1"}}),
              Optional(1));
  EXPECT_THAT(Sample(text, "kueue_local_queue_admitted_active_workloads",
                     {{"name", "ml-jobs"}, {"namespace", "team-ml"}}),
              Optional(1));
  EXPECT_THAT(Sample(text, "kueue_cluster_queue_resource_usage",
                     {{"cluster_queue", kCq},
                      {"flavor", "gpu-a100"},
                      {"resource", "nvidia.com/gpu"}}),
              Optional(8));
  EXPECT_THAT(Sample(text, "kueue_cluster_queue_borrowing_limit",
                     {{"resource", "cpu"}}),
              Optional(std::numeric_limits<double>::infinity()));
  EXPECT_THAT(Sample(text, "kueue_cluster_queue_status",
                     {{"cluster_queue", kCq}, {"status", "active"}}),
              Optional(1));
  EXPECT_THAT(
      Sample(text, "kueue_admission_attempts_total", {{"result", "success"}}),
      Optional(::testing::Ge(2)));

  clock_.Advance(absl::Seconds(100));
  ASSERT_OK(engine_->Finish({"team-ml", "high"}, true, "").status());
  text = RenderWhen([](const std::string& t) {
    return Sample(t, "kueue_finished_workloads_total",
                  {{"priority_class", "production"}}) == 1;
  });
  // Admitted for 100 s on the fake clock: in the 160 s bucket, not 80.
  EXPECT_THAT(Sample(text, "kueue_execution_time_seconds_bucket",
                     {{"priority_class", "production"}, {"le", "80"}}),
              Optional(0));
  EXPECT_THAT(Sample(text, "kueue_execution_time_seconds_bucket",
                     {{"priority_class", "production"}, {"le", "160"}}),
              Optional(1));
  EXPECT_THAT(Sample(text, "kueue_execution_time_seconds_sum",
                     {{"priority_class", "production"}}),
              Optional(100));
  EXPECT_EQ(PromtoolCheck(text), 0);
}

TEST_F(KqdMetricsTest, ADeletedQueuesSeriesVanish) {
  ASSERT_OK(engine_->Submit(Job("w", "1")).status());
  ASSERT_OK(engine_->Cancel({"team-ml", "w"}).status());
  std::string text = RenderWhen([](const std::string& t) {
    return Sample(t, "kueue_admitted_active_workloads") == 0;
  });
  ASSERT_THAT(text, HasSubstr("cluster_queue=\"ai-training-queue\""));
  ASSERT_THAT(text, HasSubstr("name=\"ml-jobs\""));
  ASSERT_OK(engine_->Delete({ObjectKind::kLocalQueue, "team-ml", "ml-jobs"}));
  ASSERT_OK(engine_->Delete({ObjectKind::kClusterQueue, "", kCq}));
  text = RenderWhen([](const std::string& t) {
    return t.find("ai-training-queue") == std::string::npos &&
           t.find("ml-jobs") == std::string::npos;
  });
  EXPECT_THAT(text, Not(HasSubstr("ai-training-queue")));
  EXPECT_THAT(text, Not(HasSubstr("ml-jobs")));
  // What is not a queue's stays.
  EXPECT_THAT(text, HasSubstr("kueue_build_info{"));
  EXPECT_THAT(text, HasSubstr("process_cpu_seconds_total"));
}

TEST_F(KqdMetricsTest, ACaptureInManyStepsEqualsOneInOne) {
  for (int i = 0; i < 600; ++i) {
    ASSERT_OK(engine_->Submit(Job(absl::StrCat("w", i), "1")).status());
  }
  std::vector<prometheus::MetricFamily> whole, stepped;
  int steps = 0;
  absl::Notification done;
  engine_->ReadState([&](const admission::AdmissionState* state, int64_t) {
    if (state == nullptr) {
      ADD_FAILURE() << "no state";
      done.Notify();
      return;
    }
    whole = CaptureQueueGauges(*state);
    GaugeCapture capture;
    // A budget that is always spent: 256 workloads or one object a step.
    while (!capture.Step(*state, -absl::Seconds(1))) ++steps;
    stepped = capture.Take();
    done.Notify();
  });
  done.WaitForNotification();
  // Three steps of workloads, then one a step for the objects.
  EXPECT_GE(steps, 5);
  EXPECT_EQ(SerializeText(stepped), SerializeText(whole));
  EXPECT_THAT(
      SerializeText(whole),
      HasSubstr("kueue_local_queue_admitted_active_workloads{name=\"ml-"
                "jobs\",namespace=\"team-ml\",replica_role=\"standalone\"} 8"));
}

TEST(MetricsTest, LabelValuesAreEscaped) {
  Metrics metrics;
  metrics.Describe("kq_test_total", "counter", "A test counter.");
  metrics.Increment("kq_test_total", {{"value", "a\"b\\c\nd"}});
  const std::string text = metrics.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("kq_test_total{value=\"a\\\"b\\\\c\\nd\"} 1"));
  EXPECT_EQ(PromtoolCheck(text), 0);
  EXPECT_EQ(metrics.Value("kq_test_total", {{"value", "a\"b\\c\nd"}}), 1);
  EXPECT_EQ(metrics.Value("kq_test_total", {{"value", "other"}}), 0);
}

}  // namespace
}  // namespace kq::metrics
