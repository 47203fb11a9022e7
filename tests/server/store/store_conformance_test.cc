// StoreConformanceTest: the behaviour every Store must have, written once
// and run against each implementation (Arrow's flight/test_definitions.h
// pattern, as a typed test).

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/core/objects.h"
#include "server/store/memory_store.h"
#include "server/store/sqlite/sqlite_store.h"
#include "server/store/store.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::store {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::AdmissionCheckBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::CohortBuilder;
using ::kq::testing::IsOkAndHolds;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::NamespaceBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::kq::testing::WorkloadPriorityClassBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

const absl::Time kCreated = absl::FromUnixSeconds(1'700'000'000);

// How each implementation under test is made.
struct MemoryStoreFactory {
  static absl::StatusOr<std::unique_ptr<Store>> Make(size_t retention) {
    return std::make_unique<MemoryStore>(retention);
  }
};

struct SqliteStoreFactory {
  static absl::StatusOr<std::unique_ptr<Store>> Make(size_t retention) {
    SqliteOptions options;
    options.event_retention = retention;
    absl::StatusOr<std::unique_ptr<SqliteStore>> store =
        SqliteStore::Open(":memory:", options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(std::move(*store));
  }
};

class FactoryNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    if (std::is_same_v<T, MemoryStoreFactory>) return "MemoryStore";
    if (std::is_same_v<T, SqliteStoreFactory>) return "SqliteStore";
    return "Unknown";
  }
};

// Fixtures.

Workload PendingWorkload(const std::string& ns, const std::string& name,
                         int64_t revision) {
  return WorkloadBuilder(name)
      .Namespace(ns)
      .Uid("uid-" + name)
      .Revision(revision)
      .Created(kCreated)
      .Queue("lq")
      .Priority(5)
      .PodSet("main", 2)
      .Request("cpu", "1")
      .Request("memory", "2Gi")
      .Build();
}

Workload AdmittedWorkload(const std::string& ns, const std::string& name,
                          int64_t revision) {
  return WorkloadBuilder(name)
      .Namespace(ns)
      .Uid("uid-" + name)
      .Revision(revision)
      .Created(kCreated)
      .Queue("lq")
      .PodSet("main", 2)
      .Request("cpu", "1")
      .Admitted(AdmissionBuilder("cq")
                    .PodSet("main", 2)
                    .Assign("cpu", "default", "2")
                    .Build(),
                kCreated + absl::Seconds(1))
      .Build();
}

Workload FinishedWorkload(const std::string& ns, const std::string& name,
                          int64_t revision) {
  return WorkloadBuilder(name)
      .Namespace(ns)
      .Uid("uid-" + name)
      .Revision(revision)
      .Created(kCreated)
      .Queue("lq")
      .Request("cpu", "1")
      .Admitted(AdmissionBuilder("cq").Assign("cpu", "default", "1").Build())
      .Finished("Succeeded", kCreated + absl::Minutes(5))
      .Build();
}

// One object of every kind, fully populated.
std::vector<ConfigObject> EveryKind(int64_t revision) {
  return {
      NamespaceBuilder("team-a").Label("team", "a").Revision(revision).Build(),
      ResourceFlavorBuilder("default")
          .NodeLabel("pool", "cpu")
          .Taint("spot", "true", "NoSchedule")
          .Revision(revision)
          .Build(),
      ClusterQueueBuilder("cq")
          .Cohort("research")
          .ResourceGroup({"cpu", "memory"})
          .Flavor("default")
          .Quota("cpu", "9")
          .BorrowingLimit("3")
          .Quota("memory", "36Gi")
          .ReclaimWithinCohort("Any")
          .AdmissionCheck("prov")
          .Revision(revision)
          .Created(kCreated)
          .Build(),
      CohortBuilder("research")
          .Quota("default", "cpu", "10")
          .Revision(revision)
          .Build(),
      LocalQueueBuilder("team-a", "lq", "cq").Revision(revision).Build(),
      WorkloadPriorityClassBuilder("high", 1000)
          .Description("important")
          .Revision(revision)
          .Build(),
      AdmissionCheckBuilder("prov")
          .ControllerName("kueue.x-k8s.io/provisioning-request")
          .Revision(revision)
          .Build(),
  };
}

Event MakeEvent(Event::Type type, std::variant<ConfigObject, Workload> object) {
  Event event;
  event.type = type;
  event.object = std::move(object);
  return event;
}

// Matches an Event by revision, type and object.
MATCHER_P3(EventIs, revision, type, object, "") {
  return arg.revision == revision && arg.type == type &&
         arg.object == std::variant<ConfigObject, Workload>(object);
}

MATCHER_P(EventRevisionIs, revision, "") { return arg.revision == revision; }

// A batch of `count` ADDED events for namespaces named after the revision.
WriteBatch EventBatch(int64_t revision, int count) {
  WriteBatch batch;
  batch.revision = revision;
  for (int i = 0; i < count; ++i) {
    batch.events.push_back(MakeEvent(
        Event::Type::kAdded,
        ConfigObject(NamespaceBuilder("ns-" + std::to_string(revision) + "-" +
                                      std::to_string(i))
                         .Revision(revision)
                         .Build())));
  }
  return batch;
}

template <typename Factory>
class StoreConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = MakeStore(MemoryStore::kDefaultEventRetention);
  }

  std::unique_ptr<Store> MakeStore(size_t retention) {
    absl::StatusOr<std::unique_ptr<Store>> store = Factory::Make(retention);
    EXPECT_OK(store.status());
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::unique_ptr<Store> store_;
};

using Factories = ::testing::Types<MemoryStoreFactory, SqliteStoreFactory>;
TYPED_TEST_SUITE(StoreConformanceTest, Factories, FactoryNames);

TYPED_TEST(StoreConformanceTest, EmptyStoreHoldsNothing) {
  Store& store = *this->store_;
  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_EQ(state.revision, 0);
  EXPECT_THAT(state.objects, IsEmpty());
  EXPECT_THAT(state.active_workloads, IsEmpty());
  EXPECT_THAT(store.GetWorkload({"default", "a"}), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(store.ListFinishedWorkloads(""), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(store.ReadEvents(0, 10), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(store.OldestEventRevision(), IsOkAndHolds(0));
}

TYPED_TEST(StoreConformanceTest, CommitThenLoadRoundTripsEveryKind) {
  Store& store = *this->store_;
  WriteBatch batch;
  batch.revision = 1;
  // Given out of order: Load returns ObjectKey order.
  std::vector<ConfigObject> objects = EveryKind(1);
  batch.upserted_objects.assign(objects.rbegin(), objects.rend());
  batch.upserted_workloads = {
      AdmittedWorkload("team-b", "w2", 1),
      PendingWorkload("team-a", "w3", 1),
      PendingWorkload("team-a", "w1", 1),
  };
  ASSERT_OK(store.Commit(batch));

  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_EQ(state.revision, 1);
  EXPECT_EQ(state.objects, objects);
  EXPECT_EQ(state.active_workloads,
            (std::vector<Workload>{PendingWorkload("team-a", "w1", 1),
                                   PendingWorkload("team-a", "w3", 1),
                                   AdmittedWorkload("team-b", "w2", 1)}));
}

TYPED_TEST(StoreConformanceTest, FullyPopulatedWorkloadRoundTrips) {
  Store& store = *this->store_;
  Workload workload =
      WorkloadBuilder("job")
          .Namespace("ns")
          .Uid("u")
          .Revision(3)
          .Created(kCreated + absl::Microseconds(7))
          .Label("l", "v")
          .Annotation("a", "b")
          .Queue("lq")
          .PriorityClass("high")
          .Priority(1000)
          .Active(false)
          .MaximumExecutionTimeSeconds(60)
          .PodSet("driver", 1)
          .Request("cpu", "500m")
          .PodSet("workers", 4)
          .MinCount(2)
          .Request("nvidia.com/gpu", "1")
          .NodeSelector("pool", "gpu")
          .Toleration({.key = "gpu", .op = "Exists", .effect = "NoSchedule"})
          .RequiredNodeAffinity("zone", "In", {"a"})
          // Inline, as rows written before templates went apart
          // (migration 0002) hold them: read back as they are.
          .Template(R"({"spec":{"restartPolicy":"Never"}})")
          .ReserveQuota(AdmissionBuilder("cq")
                            .PodSet("driver", 1)
                            .Assign("cpu", "default", "500m")
                            .PodSet("workers", 4)
                            .Assign("nvidia.com/gpu", "a100", "4")
                            .Build())
          .AdmissionCheck("prov", "Pending", "waiting")
          .RequeueCount(1)
          .RequeueAt(kCreated + absl::Minutes(1))
          .Build();
  WriteBatch batch;
  batch.revision = 3;
  batch.upserted_workloads = {workload};
  ASSERT_OK(store.Commit(batch));
  EXPECT_THAT(store.GetWorkload({"ns", "job"}),
              IsOkAndHolds(Optional(workload)));
  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_THAT(state.active_workloads, ElementsAre(workload));
}

TYPED_TEST(StoreConformanceTest, UpsertReplacesStoredVersion) {
  Store& store = *this->store_;
  WriteBatch first;
  first.revision = 1;
  first.upserted_objects = {
      ClusterQueueBuilder("cq").Quota("cpu", "1").Revision(1).Build()};
  first.upserted_workloads = {PendingWorkload("ns", "w", 1)};
  ASSERT_OK(store.Commit(first));

  WriteBatch second;
  second.revision = 2;
  ClusterQueue updated =
      ClusterQueueBuilder("cq").Quota("cpu", "2").Revision(2).Build();
  Workload admitted = AdmittedWorkload("ns", "w", 2);
  second.upserted_objects = {updated};
  second.upserted_workloads = {admitted};
  ASSERT_OK(store.Commit(second));

  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_EQ(state.revision, 2);
  EXPECT_THAT(state.objects, ElementsAre(ConfigObject(updated)));
  EXPECT_THAT(state.active_workloads, ElementsAre(admitted));
}

TYPED_TEST(StoreConformanceTest, FinishedWorkloadsAreKeptButNotLoaded) {
  Store& store = *this->store_;
  WriteBatch batch;
  batch.revision = 1;
  batch.upserted_workloads = {
      FinishedWorkload("b", "f3", 1), PendingWorkload("a", "p1", 1),
      FinishedWorkload("a", "f2", 1), FinishedWorkload("a", "f1", 1),
      AdmittedWorkload("b", "r1", 1),
  };
  ASSERT_OK(store.Commit(batch));

  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_THAT(state.active_workloads,
              ElementsAre(PendingWorkload("a", "p1", 1),
                          AdmittedWorkload("b", "r1", 1)));
  EXPECT_THAT(store.GetWorkload({"a", "f2"}),
              IsOkAndHolds(Optional(FinishedWorkload("a", "f2", 1))));
  EXPECT_THAT(store.ListFinishedWorkloads(""),
              IsOkAndHolds(ElementsAre(FinishedWorkload("a", "f1", 1),
                                       FinishedWorkload("a", "f2", 1),
                                       FinishedWorkload("b", "f3", 1))));
  EXPECT_THAT(store.ListFinishedWorkloads("b"),
              IsOkAndHolds(ElementsAre(FinishedWorkload("b", "f3", 1))));
  EXPECT_THAT(store.ListFinishedWorkloads("c"), IsOkAndHolds(IsEmpty()));

  // Finishing a running workload moves it out of Load.
  WriteBatch finish;
  finish.revision = 2;
  finish.upserted_workloads = {FinishedWorkload("b", "r1", 2)};
  ASSERT_OK(store.Commit(finish));
  ASSERT_OK_AND_ASSIGN(state, store.Load());
  EXPECT_THAT(state.active_workloads,
              ElementsAre(PendingWorkload("a", "p1", 1)));
  EXPECT_THAT(store.ListFinishedWorkloads("b"),
              IsOkAndHolds(ElementsAre(FinishedWorkload("b", "f3", 1),
                                       FinishedWorkload("b", "r1", 2))));
}

TYPED_TEST(StoreConformanceTest, DeletesRemoveObjectsAndWorkloads) {
  Store& store = *this->store_;
  WriteBatch create;
  create.revision = 1;
  create.upserted_objects = EveryKind(1);
  create.upserted_workloads = {PendingWorkload("ns", "p", 1),
                               FinishedWorkload("ns", "f", 1)};
  ASSERT_OK(store.Commit(create));

  WriteBatch remove;
  remove.revision = 2;
  remove.deleted_objects = {
      {.kind = ObjectKind::kClusterQueue, .name = "cq"},
      {.kind = ObjectKind::kLocalQueue,
       .namespace_name = "team-a",
       .name = "lq"},
      // Unknown keys are not an error.
      {.kind = ObjectKind::kCohort, .name = "missing"},
  };
  remove.deleted_workloads = {{"ns", "p"}, {"ns", "f"}, {"ns", "missing"}};
  ASSERT_OK(store.Commit(remove));

  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_EQ(state.revision, 2);
  std::vector<ConfigObject> want = EveryKind(1);
  std::erase_if(want, [](const ConfigObject& o) {
    return KindOf(o) == ObjectKind::kClusterQueue ||
           KindOf(o) == ObjectKind::kLocalQueue;
  });
  EXPECT_EQ(state.objects, want);
  EXPECT_THAT(state.active_workloads, IsEmpty());
  EXPECT_THAT(store.GetWorkload({"ns", "p"}), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(store.GetWorkload({"ns", "f"}), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(store.ListFinishedWorkloads(""), IsOkAndHolds(IsEmpty()));
}

TYPED_TEST(StoreConformanceTest, DeleteMatchesKindAndNamespace) {
  Store& store = *this->store_;
  WriteBatch create;
  create.revision = 1;
  create.upserted_objects = {ClusterQueueBuilder("x").Build(),
                             CohortBuilder("x").Build(),
                             LocalQueueBuilder("a", "x", "cq").Build(),
                             LocalQueueBuilder("b", "x", "cq").Build()};
  ASSERT_OK(store.Commit(create));

  WriteBatch remove;
  remove.revision = 2;
  remove.deleted_objects = {
      {.kind = ObjectKind::kCohort, .name = "x"},
      {.kind = ObjectKind::kLocalQueue, .namespace_name = "a", .name = "x"}};
  ASSERT_OK(store.Commit(remove));
  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_THAT(
      state.objects,
      ElementsAre(ConfigObject(ClusterQueueBuilder("x").Build()),
                  ConfigObject(LocalQueueBuilder("b", "x", "cq").Build())));
}

TYPED_TEST(StoreConformanceTest, UpsertThenDeleteInOneBatchEndsDeleted) {
  Store& store = *this->store_;
  WriteBatch batch;
  batch.revision = 1;
  batch.upserted_objects = {ResourceFlavorBuilder("f").Build()};
  batch.deleted_objects = {{.kind = ObjectKind::kResourceFlavor, .name = "f"}};
  batch.upserted_workloads = {PendingWorkload("ns", "w", 1)};
  batch.deleted_workloads = {{"ns", "w"}};
  ASSERT_OK(store.Commit(batch));
  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_THAT(state.objects, IsEmpty());
  EXPECT_THAT(state.active_workloads, IsEmpty());
  EXPECT_EQ(state.revision, 1);
}

// A workload of two pod sets, the first with a template kept on disk.
Workload WithTemplate(const std::string& name, const std::string& uid,
                      const std::string& json, int64_t revision) {
  return WorkloadBuilder(name)
      .Namespace("ns")
      .Uid(uid)
      .Revision(revision)
      .Created(kCreated)
      .Queue("lq")
      .PodSet("launcher", 1)
      .Request("cpu", "1")
      .Template(json)
      .PodSet("workers", 2)
      .Request("cpu", "1")
      .Build();
}

TYPED_TEST(StoreConformanceTest, TemplatesStayOnDiskApartFromTheirWorkload) {
  Store& store = *this->store_;
  const std::string json = R"({"spec":{"restartPolicy":"Never"}})";
  const Workload full = WithTemplate("a", "uid-a", json, 1);
  Workload detached = full;
  std::vector<PodTemplate> templates = DetachPodTemplates(detached);
  ASSERT_EQ(templates,
            (std::vector<PodTemplate>{{{"ns", "a"}, "uid-a", 0, json}}));
  EXPECT_TRUE(detached.pod_sets[0].template_on_disk);
  EXPECT_EQ(detached.pod_sets[0].template_json, "");
  EXPECT_FALSE(detached.pod_sets[1].template_on_disk);

  WriteBatch batch;
  batch.revision = 1;
  batch.upserted_workloads = {detached};
  batch.added_templates = templates;
  batch.events = {MakeEvent(Event::Type::kAdded, detached)};
  ASSERT_OK(store.Commit(batch));

  // Start-up reads the workload without the text; every other read has it.
  Workload attached = full;
  attached.pod_sets[0].template_on_disk = true;
  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_THAT(state.active_workloads, ElementsAre(detached));
  EXPECT_THAT(store.ReadPodTemplates({"ns", "a"}, "uid-a"),
              IsOkAndHolds(ElementsAre(templates[0])));
  EXPECT_THAT(store.ReadPodTemplates({"ns", "a"}, "uid-b"),
              IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(store.GetWorkload({"ns", "a"}), IsOkAndHolds(Optional(attached)));
  EXPECT_THAT(
      store.ReadEvents(0, 10),
      IsOkAndHolds(ElementsAre(EventIs(1, Event::Type::kAdded, attached))));
  Workload loaded = state.active_workloads[0];
  ASSERT_OK(store.AttachPodTemplates(loaded));
  EXPECT_EQ(loaded, attached);

  // Later writes of the workload leave its templates alone.
  Workload finished = detached;
  finished.meta.revision = 2;
  finished.conditions.push_back(
      {kConditionFinished, "True", "Succeeded", "done", kCreated});
  WriteBatch second;
  second.revision = 2;
  second.upserted_workloads = {finished};
  ASSERT_OK(store.Commit(second));
  Workload finished_attached = finished;
  ASSERT_OK(store.AttachPodTemplates(finished_attached));
  EXPECT_EQ(finished_attached.pod_sets[0].template_json, json);
  EXPECT_THAT(store.ListFinishedWorkloads("ns"),
              IsOkAndHolds(ElementsAre(finished_attached)));
}

TYPED_TEST(StoreConformanceTest, TemplatesGoWithTheirWorkload) {
  Store& store = *this->store_;
  Workload old = WithTemplate("a", "uid-1", R"({"old":true})", 1);
  WriteBatch first;
  first.revision = 1;
  first.added_templates = DetachPodTemplates(old);
  first.upserted_workloads = {old};
  first.events = {MakeEvent(Event::Type::kAdded, old)};
  ASSERT_OK(store.Commit(first));

  // Deleted, then created again under the same name with a new uid: the
  // new workload has its own template, the old one's events none.
  Workload renewed = WithTemplate("a", "uid-2", R"({"new":true})", 2);
  WriteBatch second;
  second.revision = 2;
  second.deleted_workloads = {{"ns", "a"}};
  second.added_templates = DetachPodTemplates(renewed);
  ASSERT_OK(store.Commit(second));
  WriteBatch third;
  third.revision = 3;
  third.upserted_workloads = {renewed};
  ASSERT_OK(store.Commit(third));

  EXPECT_THAT(store.ReadPodTemplates({"ns", "a"}, "uid-1"),
              IsOkAndHolds(IsEmpty()));
  ASSERT_OK_AND_ASSIGN(std::optional<Workload> read,
                       store.GetWorkload({"ns", "a"}));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->pod_sets[0].template_json, R"({"new":true})");
  ASSERT_OK_AND_ASSIGN(std::vector<Event> events, store.ReadEvents(0, 10));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(std::get<Workload>(events[0].object).pod_sets[0].template_json, "");

  // A row marked template_on_disk whose template is missing is an error,
  // not a workload quietly without its template.
  Workload orphan = WithTemplate("b", "uid-3", R"({})", 4);
  DetachPodTemplates(orphan);
  WriteBatch fourth;
  fourth.revision = 4;
  fourth.upserted_workloads = {orphan};
  ASSERT_OK(store.Commit(fourth));
  EXPECT_THAT(store.GetWorkload({"ns", "b"}),
              StatusIs(absl::StatusCode::kInternal));
}

// An upserted workload's change is also its event, recorded after the
// batch's other events, in order.
TYPED_TEST(StoreConformanceTest, UpsertedWorkloadsMakeTheirOwnEvents) {
  Store& store = *this->store_;
  const ConfigObject ns = NamespaceBuilder("ns").Revision(1).Build();
  WriteBatch batch;
  batch.revision = 1;
  batch.events = {MakeEvent(Event::Type::kAdded, ns)};
  batch.upserted_workloads = {PendingWorkload("ns", "b", 1),
                              AdmittedWorkload("ns", "a", 1)};
  batch.upserted_workload_events = {Event::Type::kAdded,
                                    Event::Type::kModified};
  ASSERT_OK(store.Commit(batch));
  EXPECT_THAT(
      store.ReadEvents(0, 10),
      IsOkAndHolds(ElementsAre(
          EventIs(1, Event::Type::kAdded, ns),
          EventIs(1, Event::Type::kAdded, PendingWorkload("ns", "b", 1)),
          EventIs(1, Event::Type::kModified, AdmittedWorkload("ns", "a", 1)))));

  // One event type per upserted workload, or none: anything else is
  // refused and writes nothing.
  WriteBatch mismatched;
  mismatched.revision = 2;
  mismatched.upserted_workloads = {PendingWorkload("ns", "c", 2)};
  mismatched.upserted_workload_events = {Event::Type::kAdded,
                                         Event::Type::kAdded};
  EXPECT_THAT(store.Commit(mismatched),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(store.GetWorkload({"ns", "c"}), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(store.ReadEvents(1, 10), IsOkAndHolds(IsEmpty()));
}

TYPED_TEST(StoreConformanceTest, StaleRevisionIsRefusedAndWritesNothing) {
  Store& store = *this->store_;
  WriteBatch first = EventBatch(5, 1);
  first.upserted_objects = {NamespaceBuilder("a").Build()};
  ASSERT_OK(store.Commit(first));

  for (int64_t stale : {5, 4, 0, -1}) {
    SCOPED_TRACE(stale);
    WriteBatch batch = EventBatch(stale, 2);
    batch.upserted_objects = {NamespaceBuilder("b").Build()};
    batch.upserted_workloads = {PendingWorkload("ns", "w", stale)};
    batch.deleted_objects = {{.kind = ObjectKind::kNamespace, .name = "a"}};
    EXPECT_THAT(store.Commit(batch),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         "batch revision " + std::to_string(stale) +
                             " is not greater than the store's revision 5"));
  }

  ASSERT_OK_AND_ASSIGN(LoadedState state, store.Load());
  EXPECT_EQ(state.revision, 5);
  EXPECT_THAT(state.objects,
              ElementsAre(ConfigObject(NamespaceBuilder("a").Build())));
  EXPECT_THAT(state.active_workloads, IsEmpty());
  EXPECT_THAT(store.ReadEvents(0, 100),
              IsOkAndHolds(ElementsAre(EventRevisionIs(5))));

  // Revisions need not be consecutive, only increasing.
  EXPECT_OK(store.Commit(EventBatch(9, 0)));
  ASSERT_OK_AND_ASSIGN(state, store.Load());
  EXPECT_EQ(state.revision, 9);
}

TYPED_TEST(StoreConformanceTest, EventsAreReadAfterARevisionInOrder) {
  Store& store = *this->store_;
  ClusterQueue cq = ClusterQueueBuilder("cq").Quota("cpu", "1").Build();
  Workload w1 = PendingWorkload("ns", "w1", 1);
  Workload w1_admitted = AdmittedWorkload("ns", "w1", 2);
  Workload w2 = PendingWorkload("ns", "w2", 2);

  WriteBatch b1;
  b1.revision = 1;
  b1.events = {MakeEvent(Event::Type::kAdded, ConfigObject(cq)),
               MakeEvent(Event::Type::kAdded, w1)};
  ASSERT_OK(store.Commit(b1));
  WriteBatch b2;
  b2.revision = 2;
  // Event::revision is ignored: events take the batch's revision.
  b2.events = {MakeEvent(Event::Type::kModified, w1_admitted),
               MakeEvent(Event::Type::kAdded, w2)};
  b2.events[0].revision = 77;
  ASSERT_OK(store.Commit(b2));
  WriteBatch b3;
  b3.revision = 4;
  b3.events = {MakeEvent(Event::Type::kDeleted, ConfigObject(cq))};
  ASSERT_OK(store.Commit(b3));

  EXPECT_THAT(store.ReadEvents(0, 100),
              IsOkAndHolds(ElementsAre(
                  EventIs(1, Event::Type::kAdded, ConfigObject(cq)),
                  EventIs(1, Event::Type::kAdded, w1),
                  EventIs(2, Event::Type::kModified, w1_admitted),
                  EventIs(2, Event::Type::kAdded, w2),
                  EventIs(4, Event::Type::kDeleted, ConfigObject(cq)))));
  EXPECT_THAT(store.ReadEvents(1, 100),
              IsOkAndHolds(ElementsAre(EventRevisionIs(2), EventRevisionIs(2),
                                       EventRevisionIs(4))));
  EXPECT_THAT(store.ReadEvents(3, 100),
              IsOkAndHolds(ElementsAre(EventRevisionIs(4))));
  EXPECT_THAT(store.ReadEvents(4, 100), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(store.ReadEvents(0, 0), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(store.OldestEventRevision(), IsOkAndHolds(1));
}

TYPED_TEST(StoreConformanceTest, ReadEventsNeverSplitsARevision) {
  Store& store = *this->store_;
  ASSERT_OK(store.Commit(EventBatch(1, 3)));
  ASSERT_OK(store.Commit(EventBatch(2, 2)));
  ASSERT_OK(store.Commit(EventBatch(3, 1)));

  // The limit ends exactly at a revision boundary.
  EXPECT_THAT(store.ReadEvents(0, 5),
              IsOkAndHolds(ElementsAre(EventRevisionIs(1), EventRevisionIs(1),
                                       EventRevisionIs(1), EventRevisionIs(2),
                                       EventRevisionIs(2))));
  // The limit falls inside revision 2: stop before it.
  EXPECT_THAT(store.ReadEvents(0, 4),
              IsOkAndHolds(ElementsAre(EventRevisionIs(1), EventRevisionIs(1),
                                       EventRevisionIs(1))));
  // The limit falls inside the first revision: return it whole.
  EXPECT_THAT(store.ReadEvents(0, 2),
              IsOkAndHolds(ElementsAre(EventRevisionIs(1), EventRevisionIs(1),
                                       EventRevisionIs(1))));
  EXPECT_THAT(
      store.ReadEvents(1, 1),
      IsOkAndHolds(ElementsAre(EventRevisionIs(2), EventRevisionIs(2))));
  // Paging by the last revision read visits every event exactly once.
  std::vector<std::string> seen;
  int64_t after = 0;
  for (int page = 0; page < 10; ++page) {
    ASSERT_OK_AND_ASSIGN(std::vector<Event> events, store.ReadEvents(after, 2));
    if (events.empty()) break;
    for (const Event& e : events) {
      seen.push_back(MetaOf(std::get<ConfigObject>(e.object)).name);
    }
    after = events.back().revision;
  }
  EXPECT_THAT(seen, ElementsAre("ns-1-0", "ns-1-1", "ns-1-2", "ns-2-0",
                                "ns-2-1", "ns-3-0"));
}

TYPED_TEST(StoreConformanceTest, RetentionPrunesOldestWholeRevisions) {
  std::unique_ptr<Store> store = this->MakeStore(5);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Commit(EventBatch(1, 2)));
  ASSERT_OK(store->Commit(EventBatch(2, 2)));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(1));

  // 6 events > 5: the oldest event goes, and with it the rest of revision 1.
  ASSERT_OK(store->Commit(EventBatch(3, 2)));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(2));
  EXPECT_THAT(
      store->ReadEvents(0, 100),
      IsOkAndHolds(ElementsAre(EventRevisionIs(2), EventRevisionIs(2),
                               EventRevisionIs(3), EventRevisionIs(3))));

  // 7 events > 5: two go, which is all of revision 2.
  ASSERT_OK(store->Commit(EventBatch(4, 3)));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(3));
  EXPECT_THAT(store->ReadEvents(0, 100),
              IsOkAndHolds(ElementsAre(EventRevisionIs(3), EventRevisionIs(3),
                                       EventRevisionIs(4), EventRevisionIs(4),
                                       EventRevisionIs(4))));

  // A batch without events prunes nothing.
  ASSERT_OK(store->Commit(EventBatch(5, 0)));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(3));

  // The newest revision is kept whole even when it alone exceeds the
  // retention; everything older goes.
  ASSERT_OK(store->Commit(EventBatch(6, 7)));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(6));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> events, store->ReadEvents(0, 100));
  EXPECT_EQ(events.size(), 7u);
  ASSERT_OK(store->Commit(EventBatch(7, 0)));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(6));

  // ... until the next batch with events replaces it.
  ASSERT_OK(store->Commit(EventBatch(8, 1)));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(8));
  EXPECT_THAT(store->ReadEvents(0, 100),
              IsOkAndHolds(ElementsAre(EventRevisionIs(8))));
}

TYPED_TEST(StoreConformanceTest, ZeroRetentionKeepsOnlyTheNewestRevision) {
  std::unique_ptr<Store> store = this->MakeStore(0);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Commit(EventBatch(1, 2)));
  ASSERT_OK(store->Commit(EventBatch(2, 1)));
  EXPECT_THAT(store->ReadEvents(0, 100),
              IsOkAndHolds(ElementsAre(EventRevisionIs(2))));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(2));
  ASSERT_OK_AND_ASSIGN(LoadedState state, store->Load());
  EXPECT_EQ(state.revision, 2);
}

}  // namespace
}  // namespace kq::store
