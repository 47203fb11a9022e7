// The engine end to end on a MemoryStore: commands in, scheduling passes,
// one commit per batch, replies; restart from the store.

#include "server/engine/engine.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/store/memory_store.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"

namespace kq::engine {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::FakeClock;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;
using ::kq::testing::WorkloadPriorityClassBuilder;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Fails the Nth commit from now (1-based), and every load while told to,
// like leveldb's ErrorEnv.
class FaultyStore : public store::Store {
 public:
  explicit FaultyStore(store::Store& base) : base_(base) {}
  void FailCommit(int nth) { fail_at_ = commits_ + nth; }
  void FailLoads(bool fail) { failing_loads_ = fail; }
  int loads() const { return loads_; }

  absl::StatusOr<store::LoadedState> Load() override {
    ++loads_;
    if (failing_loads_) return absl::InternalError("cannot read the database");
    return base_.Load();
  }
  absl::Status Commit(const store::WriteBatch& batch) override {
    if (++commits_ == fail_at_) return absl::InternalError("disk on fire");
    return base_.Commit(batch);
  }
  absl::StatusOr<std::optional<Workload>> GetWorkload(
      const NamespacedName& key) override {
    return base_.GetWorkload(key);
  }
  absl::StatusOr<std::vector<Workload>> ListFinishedWorkloads(
      const std::string& ns) override {
    return base_.ListFinishedWorkloads(ns);
  }
  absl::StatusOr<std::vector<store::Event>> ReadEvents(int64_t after,
                                                       size_t limit) override {
    return base_.ReadEvents(after, limit);
  }
  absl::StatusOr<int64_t> OldestEventRevision() override {
    return base_.OldestEventRevision();
  }
  absl::StatusOr<std::vector<store::PodTemplate>> ReadPodTemplates(
      const NamespacedName& key, const std::string& uid) override {
    return base_.ReadPodTemplates(key, uid);
  }

 private:
  store::Store& base_;
  int commits_ = 0;
  int fail_at_ = -1;
  // Set by the test's thread, read by the engine's.
  std::atomic<bool> failing_loads_ = false;
  std::atomic<int> loads_ = 0;
};

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override { StartEngine(); }

  void StartEngine() {
    engine_ = std::make_unique<Engine>(faulty_, clock_);
    ASSERT_OK(engine_->Start());
  }

  // The seed's shape: gpu-a100 first, default-cpu as fallback.
  void ApplySeed(bool namespace_selector = true,
                 StopPolicy cq_stop = StopPolicy::kNone,
                 StopPolicy lq_stop = StopPolicy::kNone,
                 const std::string& within_cluster_queue = "Never") {
    ClusterQueueBuilder cq("ai-training-queue");
    if (!namespace_selector) cq.NoNamespaceSelector();
    cq.StopPolicy(cq_stop);
    cq.WithinClusterQueue(within_cluster_queue);
    cq.ResourceGroup({"cpu", "memory", "nvidia.com/gpu"})
        .Flavor("gpu-a100")
        .Quota("nvidia.com/gpu", "16")
        .Quota("cpu", "64")
        .Quota("memory", "256Gi")
        .Flavor("default-cpu")
        .Quota("cpu", "128")
        .Quota("memory", "512Gi");
    auto results = engine_->Apply(
        {ResourceFlavorBuilder("gpu-a100")
             .NodeLabel("cloud.google.com/gke-accelerator", "nvidia-tesla-a100")
             .Build(),
         ResourceFlavorBuilder("default-cpu").Build(), cq.Build(),
         LocalQueueBuilder("team-ml", "ml-jobs", "ai-training-queue")
             .StopPolicy(lq_stop)
             .Build(),
         WorkloadPriorityClassBuilder("production-training", 1000).Build()},
        {});
    ASSERT_OK(results.status());
  }

  Workload Job(const std::string& name, int count, const char* gpus = "1") {
    return WorkloadBuilder(name)
        .Namespace("team-ml")
        .Queue("ml-jobs")
        .PodSet("main", count)
        .Request("nvidia.com/gpu", gpus)
        .Request("cpu", "2")
        .Request("memory", "8Gi")
        .Build();
  }

  store::MemoryStore store_;
  FaultyStore faulty_{store_};
  FakeClock clock_;
  std::unique_ptr<Engine> engine_;
};

const Condition* QuotaReserved(const Workload& wl) {
  return FindCondition(wl.conditions, kConditionQuotaReserved);
}

TEST_F(EngineTest, SeedJobIsAdmittedOnGpuFlavorWithNodeLabels) {
  ApplySeed();
  ASSERT_OK_AND_ASSIGN(WorkloadView view, engine_->Submit(Job("job-a", 4)));
  EXPECT_EQ(StateOf(view.workload), WorkloadState::kAdmitted);
  ASSERT_TRUE(view.workload.admission.has_value());
  const PodSetAssignment& psa = view.workload.admission->pod_set_assignments[0];
  EXPECT_EQ(psa.flavors.at("nvidia.com/gpu"), "gpu-a100");
  EXPECT_EQ(psa.flavors.at("cpu"), "gpu-a100");
  EXPECT_EQ(psa.resource_usage.at("cpu"), Quantity::FromUnits(8));
  ASSERT_EQ(view.placements.size(), 1u);
  EXPECT_EQ(view.placements[0].flavors[0].node_labels.at(
                "cloud.google.com/gke-accelerator"),
            "nvidia-tesla-a100");
  ASSERT_OK_AND_ASSIGN(
      ObjectView cq,
      engine_->GetObject({ObjectKind::kClusterQueue, "", "ai-training-queue"}));
  EXPECT_EQ(cq.status->admitted_workloads, 1);
  EXPECT_EQ(cq.status->flavors_usage[0].name, "gpu-a100");
  EXPECT_EQ(cq.status->flavors_usage[0].resources[2].name, "nvidia.com/gpu");
  EXPECT_EQ(cq.status->flavors_usage[0].resources[2].total,
            Quantity::FromUnits(4));
}

TEST_F(EngineTest, ClusterQueueWithoutNamespaceSelectorAdmitsNothing) {
  ApplySeed(/*namespace_selector=*/false);
  ASSERT_OK_AND_ASSIGN(WorkloadView view, engine_->Submit(Job("job-a", 1)));
  EXPECT_EQ(StateOf(view.workload), WorkloadState::kPending);
  EXPECT_EQ(QuotaReserved(view.workload)->reason, "Misconfigured");
  EXPECT_EQ(QuotaReserved(view.workload)->message,
            "workload namespace doesn't match ClusterQueue selector");
  // Fixing the selector admits it.
  ApplySeed(true);
  ASSERT_OK_AND_ASSIGN(view, engine_->GetWorkload({"team-ml", "job-a"}));
  EXPECT_EQ(StateOf(view.workload), WorkloadState::kAdmitted);
}

TEST_F(EngineTest, ApplyWarnsAboutMissingNamespaceSelector) {
  ASSERT_OK_AND_ASSIGN(auto results,
                       engine_->Apply({ClusterQueueBuilder("cq")
                                           .NoNamespaceSelector()
                                           .Quota("default", "cpu", "1")
                                           .Build()},
                                      {}));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].action, "created");
  EXPECT_THAT(results[0].warnings,
              ::testing::Contains(HasSubstr("namespaceSelector is not set")));
  EXPECT_THAT(results[0].warnings,
              ::testing::Contains(HasSubstr("ResourceFlavor(s) default")));
}

TEST_F(EngineTest, MissingLocalQueueThenCreated) {
  ASSERT_OK_AND_ASSIGN(WorkloadView view, engine_->Submit(Job("job-a", 1)));
  EXPECT_EQ(QuotaReserved(view.workload)->reason, "Misconfigured");
  EXPECT_EQ(QuotaReserved(view.workload)->message,
            "LocalQueue ml-jobs doesn't exist");
  ApplySeed();
  ASSERT_OK_AND_ASSIGN(view, engine_->GetWorkload({"team-ml", "job-a"}));
  EXPECT_EQ(StateOf(view.workload), WorkloadState::kAdmitted);
}

TEST_F(EngineTest, FinishReleasesQuotaForTheNextWorkload) {
  ApplySeed();
  // 16 GPUs: two 8-GPU jobs fit, the third waits (falls back to
  // default-cpu? no: default-cpu has no GPU quota).
  ASSERT_OK(engine_->Submit(Job("a", 8)).status());
  ASSERT_OK(engine_->Submit(Job("b", 8)).status());
  ASSERT_OK_AND_ASSIGN(WorkloadView c, engine_->Submit(Job("c", 8)));
  EXPECT_EQ(StateOf(c.workload), WorkloadState::kPending);
  EXPECT_EQ(QuotaReserved(c.workload)->reason, "WaitingForQuota");
  EXPECT_THAT(QuotaReserved(c.workload)->message,
              HasSubstr("insufficient unused quota for nvidia.com/gpu in "
                        "flavor gpu-a100, 8 more needed"));
  // Submit answers without a position (no walk of the queue per
  // submission); GetWorkload has it.
  EXPECT_EQ(c.position, std::nullopt);
  ASSERT_OK_AND_ASSIGN(c, engine_->GetWorkload({"team-ml", "c"}));
  EXPECT_EQ(c.position, 0);
  ASSERT_OK(engine_->Finish({"team-ml", "a"}, true, "").status());
  ASSERT_OK_AND_ASSIGN(c, engine_->GetWorkload({"team-ml", "c"}));
  EXPECT_EQ(StateOf(c.workload), WorkloadState::kAdmitted);
  ASSERT_OK_AND_ASSIGN(WorkloadView a, engine_->GetWorkload({"team-ml", "a"}));
  EXPECT_EQ(StateOf(a.workload), WorkloadState::kFinished);
  EXPECT_EQ(FindCondition(a.workload.conditions, "Finished")->reason,
            "Succeeded");
}

TEST_F(EngineTest, PriorityOrdersPendingWorkloads) {
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("running", 16)).status());
  ASSERT_OK(engine_->Submit(Job("low", 16)).status());
  Workload high = Job("high", 16);
  high.priority_class_name = "production-training";
  ASSERT_OK_AND_ASSIGN(WorkloadView h, engine_->Submit(high));
  EXPECT_EQ(h.workload.priority, 1000);
  ASSERT_OK_AND_ASSIGN(h, engine_->GetWorkload({"team-ml", "high"}));
  EXPECT_EQ(h.position, 0);
  ASSERT_OK(engine_->Finish({"team-ml", "running"}, true, "").status());
  ASSERT_OK_AND_ASSIGN(h, engine_->GetWorkload({"team-ml", "high"}));
  EXPECT_EQ(StateOf(h.workload), WorkloadState::kAdmitted);
  ASSERT_OK_AND_ASSIGN(WorkloadView low,
                       engine_->GetWorkload({"team-ml", "low"}));
  EXPECT_EQ(StateOf(low.workload), WorkloadState::kPending);
}

TEST_F(EngineTest, HigherPriorityPreemptsWithinClusterQueueAndIsAdmitted) {
  ApplySeed(true, StopPolicy::kNone, StopPolicy::kNone, "LowerPriority");
  ASSERT_OK_AND_ASSIGN(WorkloadView low, engine_->Submit(Job("low", 16)));
  ASSERT_EQ(StateOf(low.workload), WorkloadState::kAdmitted);
  Workload high = Job("high", 16);
  high.priority_class_name = "production-training";
  ASSERT_OK_AND_ASSIGN(WorkloadView h, engine_->Submit(high));

  // The preemptor takes the GPUs the victim held.
  EXPECT_EQ(StateOf(h.workload), WorkloadState::kAdmitted);
  ASSERT_TRUE(h.workload.admission.has_value());
  EXPECT_EQ(
      h.workload.admission->pod_set_assignments[0].flavors.at("nvidia.com/gpu"),
      "gpu-a100");
  EXPECT_EQ(FindCondition(h.workload.conditions, "Preempted"), nullptr);

  // The victim: evicted by preemption, requeued, pending again.
  ASSERT_OK_AND_ASSIGN(low, engine_->GetWorkload({"team-ml", "low"}));
  EXPECT_EQ(StateOf(low.workload), WorkloadState::kPending);
  EXPECT_FALSE(low.workload.admission.has_value());
  const Condition* evicted = FindCondition(low.workload.conditions, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->status, "True");
  EXPECT_EQ(evicted->reason, "Preempted");
  const std::string want_message = absl::StrCat(
      "Preempted to accommodate a workload (UID: ", h.workload.meta.uid.str(),
      ", JobUID: UNKNOWN) due to prioritization in the ClusterQueue; "
      "preemptor path: /ai-training-queue; preemptee path: "
      "/ai-training-queue");
  EXPECT_EQ(evicted->message, want_message);
  const Condition* preempted =
      FindCondition(low.workload.conditions, "Preempted");
  ASSERT_NE(preempted, nullptr);
  EXPECT_EQ(preempted->status, "True");
  EXPECT_EQ(preempted->reason, "InClusterQueue");
  EXPECT_EQ(preempted->message, want_message);
  const Condition* requeued =
      FindCondition(low.workload.conditions, "Requeued");
  ASSERT_NE(requeued, nullptr);
  EXPECT_EQ(requeued->status, "True");
  EXPECT_EQ(requeued->reason, "Preempted");
  EXPECT_EQ(QuotaReserved(low.workload)->status, "False");
  EXPECT_EQ(low.position, 0);

  // The quota was released exactly once: once the preemptor finishes, the
  // victim fits again and nothing else does.
  ASSERT_OK(engine_->Finish({"team-ml", "high"}, true, "").status());
  ASSERT_OK_AND_ASSIGN(low, engine_->GetWorkload({"team-ml", "low"}));
  EXPECT_EQ(StateOf(low.workload), WorkloadState::kAdmitted);
  ASSERT_OK_AND_ASSIGN(WorkloadView extra, engine_->Submit(Job("extra", 1)));
  EXPECT_EQ(StateOf(extra.workload), WorkloadState::kPending);
}

TEST_F(EngineTest, EqualPriorityDoesNotPreempt) {
  ApplySeed(true, StopPolicy::kNone, StopPolicy::kNone, "LowerPriority");
  ASSERT_OK(engine_->Submit(Job("first", 16)).status());
  ASSERT_OK_AND_ASSIGN(WorkloadView second, engine_->Submit(Job("second", 16)));
  EXPECT_EQ(StateOf(second.workload), WorkloadState::kPending);
  EXPECT_EQ(QuotaReserved(second.workload)->reason, "WaitingForQuota");
  ASSERT_OK_AND_ASSIGN(WorkloadView first,
                       engine_->GetWorkload({"team-ml", "first"}));
  EXPECT_EQ(StateOf(first.workload), WorkloadState::kAdmitted);
  EXPECT_EQ(FindCondition(first.workload.conditions, "Evicted"), nullptr);
}

TEST_F(EngineTest, UnknownPriorityClassIsRefused) {
  ApplySeed();
  Workload wl = Job("a", 1);
  wl.priority_class_name = "nope";
  EXPECT_THAT(engine_->Submit(wl).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kNotFound,
                                      HasSubstr("WorkloadPriorityClass "
                                                "\"nope\" not found")));
}

TEST_F(EngineTest, CancelPendingWorkload) {
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("big", 32)).status());
  ASSERT_OK_AND_ASSIGN(Workload w, engine_->Cancel({"team-ml", "big"}));
  EXPECT_EQ(FindCondition(w.conditions, "Finished")->reason, "Cancelled");
  EXPECT_THAT(engine_->Cancel({"team-ml", "big"}).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(engine_->Cancel({"team-ml", "nope"}).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(auto listed,
                       engine_->ListWorkloads({"team-ml", "", "", "", true}));
  ASSERT_EQ(listed.items.size(), 1u);
  EXPECT_EQ(StateOf(listed.items[0]), WorkloadState::kFinished);
}

TEST_F(EngineTest, DuplicateSubmitIsAlreadyExists) {
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("a", 1)).status());
  EXPECT_THAT(engine_->Submit(Job("a", 1)).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST_F(EngineTest, InvalidApplyChangesNothing) {
  ClusterQueue bad = ClusterQueueBuilder("bad")
                         .ResourceGroup({"cpu"})
                         .Flavor("a")
                         .Quota("cpu", "1")
                         .ResourceGroup({"memory"})
                         .Flavor("a")
                         .Quota("memory", "1")
                         .Build();
  absl::Status status =
      engine_->Apply({ResourceFlavorBuilder("ok").Build(), bad}, {}).status();
  EXPECT_THAT(status, ::kq::testing::StatusIs(
                          absl::StatusCode::kInvalidArgument,
                          HasSubstr("ClusterQueue \"bad\": "
                                    "spec.resourceGroups[1].flavors[0].name: "
                                    "flavor \"a\" is already in "
                                    "resourceGroups[0]")));
  ASSERT_OK_AND_ASSIGN(auto listed,
                       engine_->ListObjects(ObjectKind::kResourceFlavor, ""));
  EXPECT_TRUE(listed.items.empty());
  EXPECT_EQ(listed.revision, 0);
}

TEST_F(EngineTest, ReapplyIsUnchangedAndKeepsRevision) {
  ApplySeed();
  ASSERT_OK_AND_ASSIGN(
      ObjectView before,
      engine_->GetObject({ObjectKind::kResourceFlavor, "", "gpu-a100"}));
  ASSERT_OK_AND_ASSIGN(auto results,
                       engine_->Apply({ResourceFlavorBuilder("gpu-a100")
                                           .NodeLabel("cloud.google.com/"
                                                      "gke-accelerator",
                                                      "nvidia-tesla-a100")
                                           .Build()},
                                      {}));
  EXPECT_EQ(results[0].action, "unchanged");
  ASSERT_OK_AND_ASSIGN(
      ObjectView after,
      engine_->GetObject({ObjectKind::kResourceFlavor, "", "gpu-a100"}));
  EXPECT_EQ(MetaOf(after.object).revision, MetaOf(before.object).revision);
}

TEST_F(EngineTest, LocalQueueClusterQueueIsImmutable) {
  ApplySeed();
  EXPECT_THAT(
      engine_
          ->Apply({LocalQueueBuilder("team-ml", "ml-jobs", "other").Build()},
                  {})
          .status(),
      ::kq::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                              HasSubstr("spec.clusterQueue: field is "
                                        "immutable")));
}

TEST_F(EngineTest, DeleteFlavorInUseIsRefused) {
  ApplySeed();
  EXPECT_THAT(engine_->Delete({ObjectKind::kResourceFlavor, "", "gpu-a100"}),
              ::kq::testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                      HasSubstr("ai-training-queue")));
  ASSERT_OK(engine_->Submit(Job("a", 1)).status());
  EXPECT_THAT(
      engine_->Delete({ObjectKind::kClusterQueue, "", "ai-training-queue"}),
      ::kq::testing::StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(engine_->Delete({ObjectKind::kCohort, "", "nope"}),
              ::kq::testing::StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(EngineTest, RestartRestoresWorkloadsAndUsage) {
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("a", 8)).status());
  ASSERT_OK(engine_->Submit(Job("b", 8)).status());
  ASSERT_OK(engine_->Submit(Job("c", 8)).status());
  ASSERT_OK(engine_->Finish({"team-ml", "b"}, true, "").status());
  engine_->Stop();
  StartEngine();
  ASSERT_OK_AND_ASSIGN(auto listed,
                       engine_->ListWorkloads({"team-ml", "", "", "", true}));
  ASSERT_EQ(listed.items.size(), 3u);
  EXPECT_EQ(StateOf(listed.items[0]), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf(listed.items[1]), WorkloadState::kFinished);
  EXPECT_EQ(StateOf(listed.items[2]), WorkloadState::kAdmitted);
  // Read in place: GCC 12 sees a maybe-uninitialized vector when the view
  // is moved out of the StatusOr.
  absl::StatusOr<ObjectView> cq =
      engine_->GetObject({ObjectKind::kClusterQueue, "", "ai-training-queue"});
  ASSERT_OK(cq.status());
  EXPECT_EQ(cq->status->flavors_reservation[0].resources[2].total,
            Quantity::FromUnits(16));
  // Quota is never over-committed after a restart.
  ASSERT_OK_AND_ASSIGN(WorkloadView d, engine_->Submit(Job("d", 1)));
  EXPECT_EQ(StateOf(d.workload), WorkloadState::kPending);
}

TEST_F(EngineTest, FailedCommitIsNotAcknowledgedAndStateRolledBack) {
  ApplySeed();
  faulty_.FailCommit(1);
  EXPECT_THAT(engine_->Submit(Job("a", 8)).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kUnavailable,
                                      HasSubstr("disk on fire")));
  EXPECT_THAT(engine_->GetWorkload({"team-ml", "a"}).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kNotFound));
  // The quota the lost admission took is free again.
  ASSERT_OK_AND_ASSIGN(WorkloadView b, engine_->Submit(Job("b", 16)));
  EXPECT_EQ(StateOf(b.workload), WorkloadState::kAdmitted);
}

// A failed commit whose reload fails too leaves a state that was never
// stored: the engine refuses every call, reads included, with UNAVAILABLE
// instead of building on it, retries the reload with each batch, and serves
// the stored state again once a reload succeeds.
TEST_F(EngineTest, FailedCommitAndFailedReloadRefuseEveryCallUntilAReload) {
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("a", 8)).status());
  faulty_.FailCommit(1);
  faulty_.FailLoads(true);
  EXPECT_THAT(engine_->Submit(Job("b", 8)).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kUnavailable,
                                      HasSubstr("disk on fire")));
  const auto refused = ::kq::testing::StatusIs(
      absl::StatusCode::kUnavailable,
      AllOf(HasSubstr("disk on fire"), HasSubstr("cannot read the database"),
            HasSubstr("refuses every call until a reload succeeds")));
  // b was admitted in memory only: not even a read may show it.
  EXPECT_THAT(engine_->GetWorkload({"team-ml", "a"}).status(), refused);
  EXPECT_THAT(engine_->Cancel({"team-ml", "a"}).status(), refused);
  // Start, after the commit, and one before each refused batch.
  EXPECT_GE(faulty_.loads(), 4);

  // The store answers again: the next call reloads first, and sees exactly
  // what was stored.
  faulty_.FailLoads(false);
  ASSERT_OK_AND_ASSIGN(WorkloadView a, engine_->GetWorkload({"team-ml", "a"}));
  EXPECT_EQ(StateOf(a.workload), WorkloadState::kAdmitted);
  EXPECT_THAT(engine_->GetWorkload({"team-ml", "b"}).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kNotFound));
  // The 8 GPUs b held in memory are free: c takes them.
  ASSERT_OK_AND_ASSIGN(WorkloadView c, engine_->Submit(Job("c", 8)));
  EXPECT_EQ(StateOf(c.workload), WorkloadState::kAdmitted);
}

// Observers see each committed batch once, after its commit, with every
// change it stored; a batch whose commit failed is never observed (the
// admission rate, an observer, counts only stored admissions).
TEST_F(EngineTest, ObserversSeeCommittedBatchesOnly) {
  struct Recorder : BatchObserver {
    void OnCommitted(const CommittedBatch& batch) override {
      absl::MutexLock lock(&mu);
      std::vector<std::string> names;
      for (const store::Event& event : batch.events) {
        if (const Workload* wl = std::get_if<Workload>(&event.object)) {
          EXPECT_EQ(wl->meta.revision, batch.revision);
          names.push_back(wl->meta.name);
        }
      }
      batches.push_back({batch.revision, std::move(names)});
    }
    absl::Mutex mu;
    std::vector<std::pair<int64_t, std::vector<std::string>>> batches;
  };
  Recorder recorder;
  engine_->Stop();
  engine_ = std::make_unique<Engine>(faulty_, clock_);
  engine_->AddObserver(&recorder);
  ASSERT_OK(engine_->Start());
  ApplySeed();
  ASSERT_OK_AND_ASSIGN(WorkloadView a, engine_->Submit(Job("a", 8)));
  {
    absl::MutexLock lock(&recorder.mu);
    ASSERT_FALSE(recorder.batches.empty());
    EXPECT_EQ(recorder.batches.back().first, a.workload.meta.revision);
    EXPECT_THAT(recorder.batches.back().second, ::testing::ElementsAre("a"));
  }
  ASSERT_OK_AND_ASSIGN(ExplainResult before,
                       engine_->Explain({"team-ml", "a"}));

  faulty_.FailCommit(1);
  EXPECT_FALSE(engine_->Submit(Job("b", 8)).ok());
  {
    absl::MutexLock lock(&recorder.mu);
    for (const auto& [revision, names] : recorder.batches) {
      EXPECT_THAT(names, ::testing::Not(::testing::Contains("b")));
    }
  }
  // b's admission was never stored: the rate still counts a alone.
  ASSERT_OK_AND_ASSIGN(ExplainResult after, engine_->Explain({"team-ml", "a"}));
  EXPECT_EQ(after.admissions_per_minute, before.admissions_per_minute);
  EXPECT_GT(after.admissions_per_minute, 0);
}

// Without any call, the engine retries the reload by itself.
TEST_F(EngineTest, UnstoredStateIsReloadedWithoutACall) {
  ApplySeed();
  faulty_.FailCommit(1);
  faulty_.FailLoads(true);
  EXPECT_THAT(engine_->Submit(Job("b", 8)).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kUnavailable));
  faulty_.FailLoads(false);
  const int loads = faulty_.loads();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (faulty_.loads() == loads && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_GT(faulty_.loads(), loads);
  ASSERT_OK_AND_ASSIGN(WorkloadView c, engine_->Submit(Job("c", 8)));
  EXPECT_EQ(StateOf(c.workload), WorkloadState::kAdmitted);
}

// The callback forms, as kqd's gRPC handlers use them: `done` runs once,
// on the engine's thread, after the commit that made the answer durable.
TEST_F(EngineTest, CallbackSubmitAndFinishAnswerAfterTheirCommit) {
  ApplySeed();
  struct Answer {
    absl::Notification done;
    absl::StatusOr<WorkloadView> view;
    bool stored_when_answered = false;
    std::thread::id thread;
  };
  std::vector<std::unique_ptr<Answer>> answers;
  for (const char* name : {"a", "b", "c"}) {
    answers.push_back(std::make_unique<Answer>());
    Answer* answer = answers.back().get();
    // 8 GPUs each: a and b fit in 16, c waits.
    engine_->Submit(
        Job(name, 8), [this, answer, name](absl::StatusOr<WorkloadView> view) {
          absl::StatusOr<std::optional<Workload>> stored =
              store_.GetWorkload({"team-ml", name});
          answer->stored_when_answered = stored.ok() && stored->has_value();
          answer->thread = std::this_thread::get_id();
          answer->view = std::move(view);
          answer->done.Notify();
        });
  }
  for (const auto& answer : answers) {
    answer->done.WaitForNotification();
    ASSERT_OK(answer->view.status());
    EXPECT_TRUE(answer->stored_when_answered);
    EXPECT_NE(answer->thread, std::this_thread::get_id());
  }
  EXPECT_EQ(StateOf(answers[0]->view->workload), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf(answers[1]->view->workload), WorkloadState::kAdmitted);
  EXPECT_EQ(StateOf(answers[2]->view->workload), WorkloadState::kPending);

  auto finish = [this](const std::string& name) {
    absl::Notification done;
    absl::StatusOr<Workload> result;
    engine_->Finish({"team-ml", name}, true, "",
                    [&](absl::StatusOr<Workload> wl) {
                      result = std::move(wl);
                      done.Notify();
                    });
    done.WaitForNotification();
    return result;
  };
  EXPECT_THAT(finish("c").status(),
              ::kq::testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                      HasSubstr("holds no quota reservation")));
  EXPECT_THAT(finish("nope").status(),
              ::kq::testing::StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(Workload a, finish("a"));
  EXPECT_EQ(StateOf(a), WorkloadState::kFinished);
  // a's quota went to c in the batch that finished a.
  ASSERT_OK_AND_ASSIGN(WorkloadView c, engine_->GetWorkload({"team-ml", "c"}));
  EXPECT_EQ(StateOf(c.workload), WorkloadState::kAdmitted);
}

TEST_F(EngineTest, CallbackSubmitIsRefusedWhenTheCommitFailsOrKqdStops) {
  ApplySeed();
  faulty_.FailCommit(1);
  absl::Notification failed;
  engine_->Submit(Job("a", 8), [&](absl::StatusOr<WorkloadView> view) {
    EXPECT_THAT(view.status(),
                ::kq::testing::StatusIs(absl::StatusCode::kUnavailable,
                                        HasSubstr("disk on fire")));
    failed.Notify();
  });
  failed.WaitForNotification();
  EXPECT_THAT(engine_->GetWorkload({"team-ml", "a"}).status(),
              ::kq::testing::StatusIs(absl::StatusCode::kNotFound));

  engine_->Stop();
  // Answered at once, on the caller's thread: nothing runs commands now.
  bool answered = false;
  engine_->Submit(Job("b", 1), [&](absl::StatusOr<WorkloadView> view) {
    EXPECT_THAT(view.status(),
                ::kq::testing::StatusIs(absl::StatusCode::kUnavailable));
    answered = true;
  });
  EXPECT_TRUE(answered);
  answered = false;
  engine_->Finish({"team-ml", "b"}, true, "", [&](absl::StatusOr<Workload> wl) {
    EXPECT_THAT(wl.status(),
                ::kq::testing::StatusIs(absl::StatusCode::kUnavailable));
    answered = true;
  });
  EXPECT_TRUE(answered);
}

// A clock that moves 1 ms each time it is read, so that scheduling passes
// appear to take time.
class TickingClock : public Clock {
 public:
  absl::Time TimeNow() override {
    absl::MutexLock lock(&mu_);
    now_ += absl::Milliseconds(1);
    return now_;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) =
      absl::FromUnixSeconds(FakeClock::kStartSeconds);
};

// Once a pass of a batch reserved quota and the batch's passes ran past
// pass_budget_when_busy, the batch commits and answers; the remaining passes
// run in the next batch. With one ClusterQueue, each pass admits one head.
TEST(EngineBatchTest, AdmissionsAreCommittedSoonAfterThePassThatMadeThem) {
  store::MemoryStore store;
  TickingClock clock;
  Engine engine(store, clock);
  ASSERT_OK(engine.Start());
  std::vector<Workload> workloads;
  for (int i = 0; i < 4; ++i) {
    workloads.push_back(WorkloadBuilder(absl::StrCat("w", i))
                            .Namespace("ns")
                            .Queue("lq")
                            .Request("cpu", "1")
                            .Build());
  }
  ASSERT_OK(engine
                .Apply({ResourceFlavorBuilder("default").Build(),
                        ClusterQueueBuilder("cq")
                            .NamespaceSelectorAll()
                            .ResourceGroup({"cpu"})
                            .Flavor("default")
                            .Quota("cpu", "8")
                            .Build(),
                        LocalQueueBuilder("ns", "lq", "cq").Build()},
                       workloads)
                .status());
  // Every workload is admitted, the first ones by the batch that submitted
  // them and the last by a later one (a later revision). That later batch
  // may still be running when Apply answers: wait for its events.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  for (int64_t seen = engine.event_log().revision(); absl::Now() < deadline;) {
    ASSERT_OK_AND_ASSIGN(WorkloadView last, engine.GetWorkload({"ns", "w3"}));
    if (StateOf(last.workload) == WorkloadState::kAdmitted) break;
    ASSERT_OK_AND_ASSIGN(
        std::vector<engine::SharedEvent> events,
        engine.event_log().Read(seen, 100, absl::Milliseconds(100)));
    if (!events.empty()) seen = events.back()->revision;
  }
  std::vector<int64_t> revisions;
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK_AND_ASSIGN(WorkloadView view,
                         engine.GetWorkload({"ns", absl::StrCat("w", i)}));
    EXPECT_EQ(StateOf(view.workload), WorkloadState::kAdmitted) << i;
    revisions.push_back(view.workload.meta.revision);
  }
  EXPECT_LT(revisions.front(), revisions.back());
  engine.Stop();
}

TEST_F(EngineTest, EventsCarryRevisions) {
  int64_t start = engine_->event_log().revision();
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("a", 1)).status());
  ASSERT_OK_AND_ASSIGN(
      std::vector<engine::SharedEvent> events,
      engine_->event_log().Read(start, 100, absl::ZeroDuration()));
  ASSERT_GE(events.size(), 6u);
  EXPECT_EQ(events.front()->revision, start + 1);
  const store::Event& last = *events.back();
  EXPECT_EQ(last.revision, start + 2);
  ASSERT_TRUE(std::holds_alternative<Workload>(last.object));
  // Submitted and admitted in the same batch: one ADDED event, admitted.
  EXPECT_EQ(last.type, store::Event::Type::kAdded);
  EXPECT_EQ(StateOf(std::get<Workload>(last.object)), WorkloadState::kAdmitted);
}

const Condition* Cond(const Workload& wl, const std::string& type) {
  return FindCondition(wl.conditions, type);
}

TEST_F(EngineTest, ClusterQueueHoldAndDrainEvictsAndResumeReadmits) {
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("a", 4)).status());
  ApplySeed(true, StopPolicy::kHoldAndDrain);
  ASSERT_OK_AND_ASSIGN(WorkloadView a, engine_->GetWorkload({"team-ml", "a"}));
  EXPECT_EQ(StateOf(a.workload), WorkloadState::kPending);
  EXPECT_FALSE(a.workload.admission.has_value());
  EXPECT_EQ(Cond(a.workload, "Evicted")->reason, "ClusterQueueStopped");
  EXPECT_EQ(Cond(a.workload, "Evicted")->message,
            "The ClusterQueue is stopped");
  EXPECT_EQ(Cond(a.workload, "Requeued")->status, "False");
  EXPECT_EQ(Cond(a.workload, "Admitted")->reason, "NoReservation");
  // Kueue's workload controller (getQueueBlocker): a stopped ClusterQueue is
  // an inactive one.
  EXPECT_EQ(Cond(a.workload, kConditionQuotaReserved)->reason, "Suspended");
  EXPECT_EQ(Cond(a.workload, kConditionQuotaReserved)->message,
            "ClusterQueue ai-training-queue is inactive");
  ASSERT_OK_AND_ASSIGN(
      ObjectView cq,
      engine_->GetObject({ObjectKind::kClusterQueue, "", "ai-training-queue"}));
  EXPECT_EQ(cq.status->reserving_workloads, 0);
  EXPECT_EQ(cq.status->conditions[0].reason, "Stopped");

  ApplySeed(true, StopPolicy::kNone);
  ASSERT_OK_AND_ASSIGN(a, engine_->GetWorkload({"team-ml", "a"}));
  EXPECT_EQ(StateOf(a.workload), WorkloadState::kAdmitted);
  EXPECT_EQ(Cond(a.workload, "Requeued")->reason, "ClusterQueueRestarted");
  EXPECT_EQ(Cond(a.workload, "Requeued")->status, "True");
  EXPECT_EQ(Cond(a.workload, "Evicted")->status, "False");
  EXPECT_EQ(Cond(a.workload, "Evicted")->message,
            "Previously: The ClusterQueue is stopped");
}

TEST_F(EngineTest, ClusterQueueHoldKeepsAdmittedAndStopsNewAdmissions) {
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("a", 4)).status());
  ApplySeed(true, StopPolicy::kHold);
  ASSERT_OK_AND_ASSIGN(WorkloadView a, engine_->GetWorkload({"team-ml", "a"}));
  EXPECT_EQ(StateOf(a.workload), WorkloadState::kAdmitted);
  ASSERT_OK_AND_ASSIGN(WorkloadView b, engine_->Submit(Job("b", 1)));
  EXPECT_EQ(StateOf(b.workload), WorkloadState::kPending);
  EXPECT_EQ(Cond(b.workload, kConditionQuotaReserved)->reason, "Suspended");
  ApplySeed(true, StopPolicy::kNone);
  ASSERT_OK_AND_ASSIGN(b, engine_->GetWorkload({"team-ml", "b"}));
  EXPECT_EQ(StateOf(b.workload), WorkloadState::kAdmitted);
}

TEST_F(EngineTest, LocalQueueHoldAndDrainEvicts) {
  ApplySeed();
  ASSERT_OK(engine_->Submit(Job("a", 4)).status());
  ApplySeed(true, StopPolicy::kNone, StopPolicy::kHoldAndDrain);
  ASSERT_OK_AND_ASSIGN(WorkloadView a, engine_->GetWorkload({"team-ml", "a"}));
  EXPECT_EQ(StateOf(a.workload), WorkloadState::kPending);
  EXPECT_EQ(Cond(a.workload, "Evicted")->reason, "LocalQueueStopped");
  EXPECT_EQ(Cond(a.workload, kConditionQuotaReserved)->reason, "Suspended");
  EXPECT_EQ(Cond(a.workload, kConditionQuotaReserved)->message,
            "LocalQueue ml-jobs is inactive");
  EXPECT_EQ(Cond(a.workload, kConditionAdmitted)->reason, "NoReservation");
  ApplySeed(true, StopPolicy::kNone, StopPolicy::kNone);
  ASSERT_OK_AND_ASSIGN(a, engine_->GetWorkload({"team-ml", "a"}));
  EXPECT_EQ(StateOf(a.workload), WorkloadState::kAdmitted);
  EXPECT_EQ(Cond(a.workload, "Requeued")->reason, "LocalQueueRestarted");
}

TEST_F(EngineTest, StopRemovesReservationOfWorkloadWaitingForChecks) {
  ASSERT_OK(engine_
                ->Apply({ResourceFlavorBuilder("f").Build(),
                         ::kq::testing::AdmissionCheckBuilder("prov")
                             .ControllerName("example.com/prov")
                             .Build(),
                         ClusterQueueBuilder("cq")
                             .Quota("f", "cpu", "4")
                             .AdmissionCheck("prov")
                             .Build(),
                         LocalQueueBuilder("ns", "lq", "cq").Build()},
                        {})
                .status());
  ASSERT_OK_AND_ASSIGN(WorkloadView w, engine_->Submit(WorkloadBuilder("w")
                                                           .Namespace("ns")
                                                           .Queue("lq")
                                                           .Request("cpu", "1")
                                                           .Build()));
  EXPECT_EQ(StateOf(w.workload), WorkloadState::kQuotaReserved);
  EXPECT_EQ(Cond(w.workload, kConditionAdmitted)->reason,
            "UnsatisfiedAdmissionChecks");
  ASSERT_EQ(w.workload.admission_checks.size(), 1u);
  EXPECT_EQ(w.workload.admission_checks[0].state, "Pending");
  ASSERT_OK(engine_
                ->Apply({ClusterQueueBuilder("cq")
                             .Quota("f", "cpu", "4")
                             .AdmissionCheck("prov")
                             .StopPolicy(StopPolicy::kHold)
                             .Build()},
                        {})
                .status());
  ASSERT_OK_AND_ASSIGN(w, engine_->GetWorkload({"ns", "w"}));
  EXPECT_EQ(StateOf(w.workload), WorkloadState::kPending);
  EXPECT_FALSE(w.workload.admission.has_value());
  // Kueue unsets the reservation with "ClusterQueue cq is stopped"
  // (reconcileOnClusterQueueActiveState); its next reconcile finds the
  // workload without quota and re-derives the reason (getQueueBlocker).
  EXPECT_EQ(Cond(w.workload, kConditionQuotaReserved)->reason, "Suspended");
  EXPECT_EQ(Cond(w.workload, kConditionQuotaReserved)->message,
            "ClusterQueue cq is inactive");
  EXPECT_EQ(Cond(w.workload, kConditionAdmitted)->reason, "NoReservation");
}

// A ClusterQueue "cq" with AdmissionCheck "prov" and one LocalQueue, and a
// workload "w" that reserved quota there and waits for the check.
class AdmissionCheckStateTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    ASSERT_OK(engine_
                  ->Apply({ResourceFlavorBuilder("f").Build(),
                           ::kq::testing::AdmissionCheckBuilder("prov")
                               .ControllerName("example.com/prov")
                               .Build(),
                           ClusterQueueBuilder("cq")
                               .Quota("f", "cpu", "4")
                               .AdmissionCheck("prov")
                               .Build(),
                           LocalQueueBuilder("ns", "lq", "cq").Build()},
                          {})
                  .status());
    ASSERT_OK_AND_ASSIGN(WorkloadView w, engine_->Submit(Wl("w", "3")));
    ASSERT_EQ(StateOf(w.workload), WorkloadState::kQuotaReserved);
  }

  static Workload Wl(const std::string& name, const char* cpu) {
    return WorkloadBuilder(name)
        .Namespace("ns")
        .Queue("lq")
        .Request("cpu", cpu)
        .Build();
  }

  Workload Get(const std::string& name) {
    absl::StatusOr<WorkloadView> view = engine_->GetWorkload({"ns", name});
    EXPECT_OK(view.status());
    return view.ok() ? view->workload : Workload{};
  }

  QueueStatus ClusterQueueStatus() {
    absl::StatusOr<ObjectView> cq =
        engine_->GetObject({ObjectKind::kClusterQueue, "", "cq"});
    EXPECT_OK(cq.status());
    return cq.ok() && cq->status.has_value() ? *cq->status : QueueStatus{};
  }
};

TEST_F(AdmissionCheckStateTest, ReadyAdmitsAndCountsAdmittedUsage) {
  EXPECT_EQ(ClusterQueueStatus().admitted_workloads, 0);
  ASSERT_OK_AND_ASSIGN(
      Workload w, engine_->SetAdmissionCheckState({"ns", "w"}, "prov", "Ready",
                                                  "capacity found", {}));
  EXPECT_EQ(StateOf(w), WorkloadState::kAdmitted);
  EXPECT_EQ(Cond(w, kConditionAdmitted)->message, "The workload is admitted");
  ASSERT_EQ(w.admission_checks.size(), 1u);
  EXPECT_EQ(w.admission_checks[0].state, "Ready");
  EXPECT_EQ(w.admission_checks[0].message, "capacity found");
  QueueStatus status = ClusterQueueStatus();
  EXPECT_EQ(status.reserving_workloads, 1);
  EXPECT_EQ(status.admitted_workloads, 1);
  ASSERT_EQ(status.flavors_usage.size(), 1u);
  EXPECT_EQ(status.flavors_usage[0].resources[0].total.ToString(), "3");

  // Back to Pending: no longer admitted, admitted usage drops to zero.
  ASSERT_OK_AND_ASSIGN(w, engine_->SetAdmissionCheckState({"ns", "w"}, "prov",
                                                          "Pending", "", {}));
  EXPECT_EQ(StateOf(w), WorkloadState::kQuotaReserved);
  status = ClusterQueueStatus();
  EXPECT_EQ(status.admitted_workloads, 0);
  EXPECT_EQ(status.flavors_usage[0].resources[0].total.ToString(), "0");
}

TEST_F(AdmissionCheckStateTest, RetryEvictsAndRequeuesAfterBackoff) {
  // A second workload waits for the quota "w" holds.
  ASSERT_OK_AND_ASSIGN(WorkloadView other, engine_->Submit(Wl("other", "3")));
  EXPECT_EQ(StateOf(other.workload), WorkloadState::kPending);

  const absl::Time retried_at = clock_.TimeNow();
  ASSERT_OK_AND_ASSIGN(
      Workload w, engine_->SetAdmissionCheckState({"ns", "w"}, "prov", "Retry",
                                                  "capacity gone", 60));
  EXPECT_EQ(Cond(w, kConditionEvicted)->status, "True");
  EXPECT_EQ(Cond(w, kConditionEvicted)->reason, "AdmissionCheck");
  EXPECT_EQ(Cond(w, kConditionEvicted)->message,
            "Evicted due to AdmissionCheck in Retry state: \"prov\" "
            "(capacity gone)");
  EXPECT_FALSE(w.admission.has_value());
  EXPECT_EQ(Cond(w, kConditionRequeued)->status, "False");
  ASSERT_EQ(w.admission_checks.size(), 1u);
  EXPECT_EQ(w.admission_checks[0].state, "Pending");
  ASSERT_TRUE(RequeueAt(w).has_value());
  EXPECT_EQ(*RequeueAt(w), retried_at + absl::Seconds(60));
  EXPECT_EQ(QueueOrderTimestamp(w), retried_at);
  // The freed quota went to the other workload.
  EXPECT_EQ(StateOf(Get("other")), WorkloadState::kQuotaReserved);

  // Before the backoff ends nothing changes.
  clock_.Advance(absl::Seconds(59));
  Get("w");
  EXPECT_EQ(Cond(Get("w"), kConditionRequeued)->status, "False");

  // After it, the workload is queued again (behind "other", which holds
  // the quota) with Requeued=True.
  ASSERT_OK(engine_->Finish({"ns", "other"}, true, "").status());
  clock_.Advance(absl::Seconds(2));
  Get("w");
  w = Get("w");
  EXPECT_EQ(Cond(w, kConditionRequeued)->status, "True");
  EXPECT_EQ(Cond(w, kConditionRequeued)->reason, "BackoffFinished");
  EXPECT_FALSE(RequeueAt(w).has_value());
  EXPECT_EQ(StateOf(w), WorkloadState::kQuotaReserved);
  EXPECT_EQ(Cond(w, kConditionEvicted)->status, "False");
}

TEST_F(AdmissionCheckStateTest, EngineWakesForBackoffWithoutCommands) {
  ASSERT_OK(engine_
                ->SetAdmissionCheckState({"ns", "w"}, "prov", "Retry",
                                         "capacity gone", 1)
                .status());
  const int64_t after = engine_->event_log().revision();
  clock_.Advance(absl::Seconds(2));
  // No command is sent: only the engine's own wakeup can requeue it.
  ASSERT_OK_AND_ASSIGN(std::vector<engine::SharedEvent> events,
                       engine_->event_log().Read(after, 100, absl::Seconds(5)));
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(std::holds_alternative<Workload>(events.back()->object));
  const Workload& w = std::get<Workload>(events.back()->object);
  EXPECT_EQ(w.meta.name, "w");
  EXPECT_EQ(Cond(w, kConditionRequeued)->reason, "BackoffFinished");
  EXPECT_EQ(StateOf(w), WorkloadState::kQuotaReserved);
}

TEST_F(AdmissionCheckStateTest, RetryWithoutDelayRequeuesAtOnce) {
  ASSERT_OK(
      engine_->SetAdmissionCheckState({"ns", "w"}, "prov", "Retry", "", {})
          .status());
  Workload w = Get("w");
  EXPECT_EQ(Cond(w, kConditionRequeued)->reason, "BackoffFinished");
  // Reserved again, its check Pending once more.
  EXPECT_EQ(StateOf(w), WorkloadState::kQuotaReserved);
  EXPECT_EQ(w.admission_checks[0].state, "Pending");
}

TEST_F(AdmissionCheckStateTest, RejectedDeactivatesForGood) {
  ASSERT_OK_AND_ASSIGN(
      Workload w, engine_->SetAdmissionCheckState(
                      {"ns", "w"}, "prov", "Rejected", "no such capacity", {}));
  EXPECT_FALSE(w.active);
  EXPECT_EQ(Cond(w, kConditionEvicted)->reason,
            "DeactivatedDueToAdmissionCheck");
  EXPECT_EQ(Cond(w, kConditionEvicted)->message,
            "The workload is deactivated due to AdmissionCheck in Rejected "
            "state: \"prov\" (no such capacity)");
  EXPECT_FALSE(w.admission.has_value());
  clock_.Advance(absl::Hours(1));
  Get("w");
  w = Get("w");
  EXPECT_EQ(StateOf(w), WorkloadState::kPending);
  QueueStatus status = ClusterQueueStatus();
  EXPECT_EQ(status.reserving_workloads, 0);
  EXPECT_EQ(status.pending_workloads, 0);
}

TEST_F(AdmissionCheckStateTest, Errors) {
  EXPECT_EQ(
      engine_->SetAdmissionCheckState({"ns", "nope"}, "prov", "Ready", "", {})
          .status()
          .code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(
      engine_->SetAdmissionCheckState({"ns", "w"}, "other", "Ready", "", {})
          .status()
          .code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(
      engine_->SetAdmissionCheckState({"ns", "w"}, "prov", "Maybe", "", {})
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  ASSERT_OK(engine_->Cancel({"ns", "w"}).status());
  EXPECT_EQ(
      engine_->SetAdmissionCheckState({"ns", "w"}, "prov", "Ready", "", {})
          .status()
          .code(),
      absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace kq::engine
