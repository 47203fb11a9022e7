// Pod templates stay on disk: the engine's state holds none, and every
// workload the engine answers with or publishes carries its template, on a
// real SqliteStore and across a restart.

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/engine/engine.h"
#include "server/store/sqlite/sqlite_store.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::engine {
namespace {

using ::kq::testing::AdmissionCheckBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::FakeClock;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::ScopedTempDir;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::testing::HasSubstr;

constexpr char kTemplate[] =
    R"({"metadata":{"labels":{"team":"ml"}},"spec":{"restartPolicy":"Never"}})";

// The template of a workload's first pod set, or "(none)".
std::string TemplateOf(const Workload& wl) {
  if (wl.pod_sets.empty() || wl.pod_sets[0].template_json.empty()) {
    return "(none)";
  }
  return wl.pod_sets[0].template_json;
}

class PodTemplatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Start();
    // Quota for one workload of 3 cpu at a time; admission check "prov"
    // on a second ClusterQueue.
    ASSERT_OK(
        engine_
            ->Apply({ResourceFlavorBuilder("f").Build(),
                     AdmissionCheckBuilder("prov")
                         .ControllerName("example.com/prov")
                         .Build(),
                     ClusterQueueBuilder("cq").Quota("f", "cpu", "4").Build(),
                     ClusterQueueBuilder("checked")
                         .Quota("f", "cpu", "4")
                         .AdmissionCheck("prov")
                         .Build(),
                     LocalQueueBuilder("ns", "lq", "cq").Build(),
                     LocalQueueBuilder("ns", "lq-checked", "checked").Build()},
                    {})
            .status());
  }

  void TearDown() override {
    engine_.reset();
    store_.reset();
  }

  void Start() {
    engine_.reset();
    store_.reset();
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        store::SqliteStore::Open(dir_.File("kq.db"), store::SqliteOptions{});
    ASSERT_OK(store.status());
    store_ = *std::move(store);
    engine_ = std::make_unique<Engine>(*store_, clock_);
    ASSERT_OK(engine_->Start());
  }

  static Workload Wl(const std::string& name, const std::string& queue = "lq") {
    return WorkloadBuilder(name)
        .Namespace("ns")
        .Queue(queue)
        .Request("cpu", "3")
        .Template(kTemplate)
        .Build();
  }

  // What a start-up would load: the rows as the engine wrote them.
  std::vector<Workload> StoredActive() {
    absl::StatusOr<store::LoadedState> loaded = store_->Load();
    EXPECT_OK(loaded.status());
    return loaded.ok() ? loaded->active_workloads : std::vector<Workload>{};
  }

  ScopedTempDir dir_{"kq_templates"};
  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(PodTemplatesTest, EveryAnswerAndEventCarriesTheTemplate) {
  const int64_t start = engine_->event_log().revision();
  ASSERT_OK_AND_ASSIGN(WorkloadView a, engine_->Submit(Wl("a")));
  EXPECT_EQ(StateOf(a.workload), WorkloadState::kAdmitted);
  EXPECT_EQ(TemplateOf(a.workload), kTemplate);
  ASSERT_OK_AND_ASSIGN(std::vector<ApplyResult> applied,
                       engine_->Apply({}, {Wl("b")}));
  EXPECT_EQ(applied[0].action, "created");
  EXPECT_EQ(TemplateOf(std::get<Workload>(applied[0].object)), kTemplate);
  ASSERT_OK_AND_ASSIGN(applied, engine_->Apply({}, {Wl("b")}));
  EXPECT_EQ(applied[0].action, "unchanged");
  EXPECT_EQ(TemplateOf(std::get<Workload>(applied[0].object)), kTemplate);

  // The state holds none: the rows it writes have no text.
  for (const Workload& stored : StoredActive()) {
    EXPECT_TRUE(stored.pod_sets[0].template_on_disk) << stored.meta.name;
    EXPECT_EQ(TemplateOf(stored), "(none)") << stored.meta.name;
  }

  ASSERT_OK_AND_ASSIGN(WorkloadView got, engine_->GetWorkload({"ns", "b"}));
  EXPECT_EQ(TemplateOf(got.workload), kTemplate);
  ASSERT_OK_AND_ASSIGN(Listed<Workload> listed, engine_->ListWorkloads({}));
  ASSERT_EQ(listed.items.size(), 2u);
  for (const Workload& wl : listed.items) EXPECT_EQ(TemplateOf(wl), kTemplate);
  ASSERT_OK_AND_ASSIGN(ExplainResult explained, engine_->Explain({"ns", "b"}));
  EXPECT_EQ(TemplateOf(explained.explanation.workload), kTemplate);
  ASSERT_OK_AND_ASSIGN(admission::WhatIf what_if,
                       engine_->Simulate(std::nullopt, {"ns", "b"}));
  EXPECT_EQ(TemplateOf(what_if.workload), kTemplate);

  // An admission wait answered at once (its deadline has passed).
  absl::Notification waited;
  absl::StatusOr<AdmitOutcome> outcome;
  engine_->Admit({.key = {"ns", "b"}, .deadline = absl::InfinitePast()},
                 [&](absl::StatusOr<AdmitOutcome> o) {
                   outcome = std::move(o);
                   waited.Notify();
                 });
  waited.WaitForNotification();
  ASSERT_OK(outcome.status());
  EXPECT_EQ(outcome->kind, AdmitOutcome::Kind::kPending);
  EXPECT_EQ(TemplateOf(outcome->view.workload), kTemplate);

  // Finishing a frees the quota for b: both answers and both events.
  ASSERT_OK_AND_ASSIGN(Workload finished,
                       engine_->Finish({"ns", "a"}, true, ""));
  EXPECT_EQ(TemplateOf(finished), kTemplate);
  ASSERT_OK_AND_ASSIGN(got, engine_->GetWorkload({"ns", "b"}));
  EXPECT_EQ(StateOf(got.workload), WorkloadState::kAdmitted);
  EXPECT_EQ(TemplateOf(got.workload), kTemplate);
  ASSERT_OK_AND_ASSIGN(got, engine_->GetWorkload({"ns", "a"}));
  EXPECT_EQ(TemplateOf(got.workload), kTemplate);

  ASSERT_OK_AND_ASSIGN(
      std::vector<engine::SharedEvent> events,
      engine_->event_log().Read(start, 100, absl::ZeroDuration()));
  int workload_events = 0;
  for (const engine::SharedEvent& event : events) {
    if (const auto* wl = std::get_if<Workload>(&event->object)) {
      ++workload_events;
      EXPECT_EQ(TemplateOf(*wl), kTemplate)
          << wl->meta.name << " at revision " << event->revision;
    }
  }
  EXPECT_GE(workload_events, 4);  // a added, b added, a finished, b admitted

  // After a restart: the state loaded without text, the answers with it,
  // and the event log read back from the store.
  Start();
  ASSERT_OK_AND_ASSIGN(got, engine_->GetWorkload({"ns", "b"}));
  EXPECT_EQ(TemplateOf(got.workload), kTemplate);
  ASSERT_OK_AND_ASSIGN(got, engine_->GetWorkload({"ns", "a"}));
  EXPECT_EQ(TemplateOf(got.workload), kTemplate);
  ASSERT_OK_AND_ASSIGN(listed,
                       engine_->ListWorkloads({.include_finished = true}));
  ASSERT_EQ(listed.items.size(), 2u);
  for (const Workload& wl : listed.items) EXPECT_EQ(TemplateOf(wl), kTemplate);
  ASSERT_OK_AND_ASSIGN(
      events, engine_->event_log().Read(start, 100, absl::ZeroDuration()));
  for (const engine::SharedEvent& event : events) {
    if (const auto* wl = std::get_if<Workload>(&event->object)) {
      EXPECT_EQ(TemplateOf(*wl), kTemplate) << wl->meta.name;
    }
  }
  ASSERT_OK_AND_ASSIGN(Workload cancelled, engine_->Cancel({"ns", "b"}));
  EXPECT_EQ(TemplateOf(cancelled), kTemplate);
}

// A check's pod set updates are refused when they conflict with the
// template's labels, though the state holds no template.
TEST_F(PodTemplatesTest, PodSetUpdatesAreCheckedAgainstTheTemplate) {
  ASSERT_OK_AND_ASSIGN(WorkloadView w, engine_->Submit(Wl("w", "lq-checked")));
  ASSERT_EQ(StateOf(w.workload), WorkloadState::kQuotaReserved);
  PodSetUpdate conflicting;
  conflicting.name = "main";
  conflicting.labels = {{"team", "infra"}};
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "before restart" : "after restart");
    EXPECT_THAT(engine_->SetAdmissionCheckState({"ns", "w"}, "prov", "Ready",
                                                "", {}, {conflicting}),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("conflicts with \"ml\" in the pod set's "
                                   "template")));
    Start();
  }
  PodSetUpdate agreeing = conflicting;
  agreeing.labels = {{"team", "ml"}, {"zone", "a"}};
  ASSERT_OK_AND_ASSIGN(Workload ready,
                       engine_->SetAdmissionCheckState(
                           {"ns", "w"}, "prov", "Ready", "", {}, {agreeing}));
  EXPECT_EQ(StateOf(ready), WorkloadState::kAdmitted);
  EXPECT_EQ(TemplateOf(ready), kTemplate);
}

}  // namespace
}  // namespace kq::engine
