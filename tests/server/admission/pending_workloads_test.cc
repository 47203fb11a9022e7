// The visibility API's listings (server/admission/pending_workloads.h).
// The tables are Kueue's pkg/visibility/storage/pending_workloads_cq_test.go
// (TestPendingWorkloadsInCQ) and pending_workloads_lq_test.go
// (TestPendingWorkloadsInLQ), every case; where Kueue clamps a negative or
// excessive limit, kq refuses it (the *_refused cases). The cases named in
// kq's words are kq's: inadmissible workloads, admitted ones, a LocalQueue
// whose ClusterQueue is missing, and positions against Explain and the
// queue's own PositionOf.

#include "server/admission/pending_workloads.h"

#include <cctype>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/admission/explain.h"
#include "server/admission/state.h"
#include "server/core/objects.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"

namespace kq::admission {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAreArray;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
constexpr int32_t kLowPrio = 50;
constexpr int32_t kHighPrio = 100;

// What a case expects of one listed workload.
struct Row {
  std::string namespace_name;
  std::string name;
  std::string local_queue_name;
  int32_t priority;
  int32_t position_in_cluster_queue;
  int32_t position_in_local_queue;
  friend bool operator==(const Row&, const Row&) = default;
};

void PrintTo(const Row& r, std::ostream* os) {
  *os << r.namespace_name << "/" << r.name << " (lq " << r.local_queue_name
      << ", priority " << r.priority << ") cq#" << r.position_in_cluster_queue
      << " lq#" << r.position_in_local_queue;
}

std::vector<Row> RowsOf(const std::vector<PendingWorkload>& items) {
  std::vector<Row> rows;
  for (const PendingWorkload& p : items) {
    rows.push_back({p.namespace_name, p.name, p.local_queue_name, p.priority,
                    p.position_in_cluster_queue, p.position_in_local_queue});
  }
  return rows;
}

Workload Pending(std::string name, std::string namespace_name,
                 std::string queue, int32_t priority, absl::Time created) {
  return WorkloadBuilder(std::move(name))
      .Namespace(std::move(namespace_name))
      .Queue(std::move(queue))
      .Priority(priority)
      .Created(created)
      .PodSet("main", 1)
      .Build();
}

struct Case {
  std::string kueue_name;
  std::vector<ConfigObject> objects;
  std::vector<Workload> workloads;
  // Run scheduling passes after loading (what fits is admitted, what does
  // not is parked as inadmissible).
  bool schedule = false;
  // The request: a ClusterQueue, or else a LocalQueue.
  std::string cluster_queue;
  NamespacedName local_queue;
  PendingWorkloadOptions options;
  std::vector<Row> want;
  absl::StatusCode want_code = absl::StatusCode::kOk;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.kueue_name; }

// Kueue's case name in snake_case, for gtest.
std::string SnakeCase(const std::string& name) {
  std::string out;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\'') continue;
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

void Load(AdmissionState& state, const Case& tc) {
  for (const ConfigObject& o : tc.objects) state.LoadObject(o);
  for (const Workload& wl : tc.workloads) state.LoadWorkload(wl);
  state.Rebuild(kNow);
  if (tc.schedule) state.RunPasses(kNow);
}

std::vector<Case> ClusterQueueCases() {
  const absl::Time now = kNow;
  const std::string ns = "foo", ns_b = "bar";
  const std::vector<ConfigObject> one_lq = {
      ClusterQueueBuilder("cqA").Build(),
      LocalQueueBuilder(ns, "lqA", "cqA").Build()};
  const std::vector<Workload> three = {
      Pending("a", ns, "lqA", kHighPrio, now),
      Pending("b", ns, "lqA", kHighPrio, now + absl::Seconds(1)),
      Pending("c", ns, "lqA", kHighPrio, now + absl::Seconds(2))};
  return {
      {.kueue_name = "single ClusterQueue and single LocalQueue setup with two "
                     "workloads and default query parameters",
       .objects = one_lq,
       .workloads = {Pending("a", ns, "lqA", kHighPrio, now),
                     Pending("b", ns, "lqA", kLowPrio, now)},
       .cluster_queue = "cqA",
       .want = {{ns, "a", "lqA", kHighPrio, 0, 0},
                {ns, "b", "lqA", kLowPrio, 1, 1}}},
      {.kueue_name = "single ClusterQueue and two LocalQueue setup with four "
                     "workloads and default query parameters",
       .objects = {ClusterQueueBuilder("cqA").Build(),
                   LocalQueueBuilder(ns, "lqA", "cqA").Build(),
                   LocalQueueBuilder(ns, "lqB", "cqA").Build()},
       .workloads = {Pending("lqA-high-prio", ns, "lqA", kHighPrio, now),
                     Pending("lqA-low-prio", ns, "lqA", kLowPrio, now),
                     Pending("lqB-high-prio", ns, "lqB", kHighPrio,
                             now + absl::Seconds(1)),
                     Pending("lqB-low-prio", ns, "lqB", kLowPrio,
                             now + absl::Seconds(1))},
       .cluster_queue = "cqA",
       .want = {{ns, "lqA-high-prio", "lqA", kHighPrio, 0, 0},
                {ns, "lqB-high-prio", "lqB", kHighPrio, 1, 0},
                {ns, "lqA-low-prio", "lqA", kLowPrio, 2, 1},
                {ns, "lqB-low-prio", "lqB", kLowPrio, 3, 1}}},
      {.kueue_name = "limit query parameter set",
       .objects = one_lq,
       .workloads = three,
       .cluster_queue = "cqA",
       .options = {.limit = 2},
       .want = {{ns, "a", "lqA", kHighPrio, 0, 0},
                {ns, "b", "lqA", kHighPrio, 1, 1}}},
      {.kueue_name = "offset query parameter set",
       .objects = one_lq,
       .workloads = three,
       .cluster_queue = "cqA",
       .options = {.offset = 1, .limit = kDefaultPendingWorkloadsLimit},
       .want = {{ns, "b", "lqA", kHighPrio, 1, 1},
                {ns, "c", "lqA", kHighPrio, 2, 2}}},
      {.kueue_name = "limit offset query parameters set",
       .objects = one_lq,
       .workloads = three,
       .cluster_queue = "cqA",
       .options = {.offset = 1, .limit = 1},
       .want = {{ns, "b", "lqA", kHighPrio, 1, 1}}},
      {.kueue_name = "negative limit refused",
       .objects = one_lq,
       .workloads = three,
       .cluster_queue = "cqA",
       .options = {.limit = -1},
       .want_code = absl::StatusCode::kInvalidArgument},
      {.kueue_name = "excessive limit refused",
       .objects = one_lq,
       .workloads = three,
       .cluster_queue = "cqA",
       .options = {.limit = 2'000'000'000},
       .want_code = absl::StatusCode::kInvalidArgument},
      {.kueue_name = "same LocalQueue name reused across different namespaces "
                     "reports position within each namespace's own "
                     "LocalQueue",
       .objects = {ClusterQueueBuilder("cqA").Build(),
                   LocalQueueBuilder(ns, "lqA", "cqA").Build(),
                   LocalQueueBuilder(ns_b, "lqA", "cqA").Build()},
       .workloads = {Pending("a", ns, "lqA", kHighPrio, now),
                     Pending("b", ns_b, "lqA", kHighPrio,
                             now + absl::Seconds(1))},
       .cluster_queue = "cqA",
       .want = {{ns, "a", "lqA", kHighPrio, 0, 0},
                {ns_b, "b", "lqA", kHighPrio, 1, 0}}},
      {.kueue_name = "empty cluster queue",
       .objects = {ClusterQueueBuilder("cqA").Build()},
       .cluster_queue = "cqA"},
      {.kueue_name = "nonexistent queue name",
       .cluster_queue = "nonexistent-queue",
       .want_code = absl::StatusCode::kNotFound},
      // kq's.
      {.kueue_name = "offset past the end lists nothing",
       .objects = one_lq,
       .workloads = three,
       .cluster_queue = "cqA",
       .options = {.offset = 3},
       .want = {}},
      {.kueue_name = "negative offset refused",
       .objects = one_lq,
       .cluster_queue = "cqA",
       .options = {.offset = -1},
       .want_code = absl::StatusCode::kInvalidArgument},
      {.kueue_name = "largest offset and limit are served",
       .objects = one_lq,
       .workloads = three,
       .cluster_queue = "cqA",
       .options = {.offset = INT64_MAX, .limit = kMaxPendingWorkloadsLimit},
       .want = {}},
      // One cpu of quota: "fits" is admitted and leaves the listing, the
      // two-cpu workloads never fit and are parked as inadmissible, yet
      // keep their places between the queued ones.
      {.kueue_name = "inadmissible workloads keep their places, admitted ones "
                     "leave",
       .objects =
           {ResourceFlavorBuilder("default").Build(),
            ClusterQueueBuilder("cqA").Quota("default", "cpu", "1").Build(),
            LocalQueueBuilder(ns, "lqA", "cqA").Build(),
            LocalQueueBuilder(ns, "lqB", "cqA").Build()},
       .workloads = {WorkloadBuilder("fits")
                         .Namespace(ns)
                         .Queue("lqA")
                         .Priority(kHighPrio)
                         .Created(now)
                         .PodSet("main", 1)
                         .Request("cpu", "1")
                         .Build(),
                     WorkloadBuilder("too-big-high")
                         .Namespace(ns)
                         .Queue("lqB")
                         .Priority(kHighPrio)
                         .Created(now + absl::Seconds(1))
                         .PodSet("main", 1)
                         .Request("cpu", "2")
                         .Build(),
                     WorkloadBuilder("small-low")
                         .Namespace(ns)
                         .Queue("lqA")
                         .Priority(kLowPrio)
                         .Created(now)
                         .PodSet("main", 1)
                         .Request("cpu", "1")
                         .Build(),
                     WorkloadBuilder("too-big-low")
                         .Namespace(ns)
                         .Queue("lqB")
                         .Priority(kLowPrio)
                         .Created(now + absl::Seconds(1))
                         .PodSet("main", 1)
                         .Request("cpu", "2")
                         .Build()},
       .schedule = true,
       .cluster_queue = "cqA",
       .want = {{ns, "too-big-high", "lqB", kHighPrio, 0, 0},
                {ns, "small-low", "lqA", kLowPrio, 1, 0},
                {ns, "too-big-low", "lqB", kLowPrio, 2, 1}}},
  };
}

std::vector<Case> LocalQueueCases() {
  const absl::Time now = kNow;
  const absl::Time later = kNow + absl::Seconds(1);
  const std::string ns_a = "nsA", ns_b = "nsB";
  const std::vector<ConfigObject> one_cq_two_lqs = {
      ClusterQueueBuilder("cqA").Build(),
      LocalQueueBuilder(ns_a, "lqA", "cqA").Build(),
      LocalQueueBuilder(ns_a, "lqB", "cqA").Build()};
  const std::vector<Workload> four_in_one_cq = {
      Pending("lqA-high-prio", ns_a, "lqA", kHighPrio, now),
      Pending("lqA-low-prio", ns_a, "lqA", kLowPrio, now),
      Pending("lqB-high-prio", ns_a, "lqB", kHighPrio, later),
      Pending("lqB-low-prio", ns_a, "lqB", kLowPrio, later)};
  const std::vector<ConfigObject> two_cqs = {
      ClusterQueueBuilder("cqA").Build(), ClusterQueueBuilder("cqB").Build(),
      LocalQueueBuilder(ns_a, "lqA", "cqA").Build(),
      LocalQueueBuilder(ns_b, "lqB", "cqB").Build()};
  const std::vector<Workload> four_in_two_cqs = {
      Pending("lqA-high-prio", ns_a, "lqA", kHighPrio, now),
      Pending("lqA-low-prio", ns_a, "lqA", kLowPrio, now),
      Pending("lqB-high-prio", ns_b, "lqB", kHighPrio, later),
      Pending("lqB-low-prio", ns_b, "lqB", kLowPrio, later)};
  const std::vector<ConfigObject> one_lq = {
      ClusterQueueBuilder("cqA").Build(),
      LocalQueueBuilder(ns_a, "lqA", "cqA").Build()};
  const std::vector<Workload> three = {
      Pending("a", ns_a, "lqA", kHighPrio, now),
      Pending("b", ns_a, "lqA", kHighPrio, now + absl::Seconds(1)),
      Pending("c", ns_a, "lqA", kHighPrio, now + absl::Seconds(2))};
  return {
      {.kueue_name = "single ClusterQueue and single LocalQueue setup with two "
                     "workloads and default query parameters",
       .objects = one_lq,
       .workloads = {Pending("a", ns_a, "lqA", kHighPrio, now),
                     Pending("b", ns_a, "lqA", kLowPrio, now)},
       .local_queue = {ns_a, "lqA"},
       .want = {{ns_a, "a", "lqA", kHighPrio, 0, 0},
                {ns_a, "b", "lqA", kLowPrio, 1, 1}}},
      {.kueue_name = "single ClusterQueue and two LocalQueue setup with four "
                     "workloads and default query parameters; LocalQueue A "
                     "request",
       .objects = one_cq_two_lqs,
       .workloads = four_in_one_cq,
       .local_queue = {ns_a, "lqA"},
       .want = {{ns_a, "lqA-high-prio", "lqA", kHighPrio, 0, 0},
                {ns_a, "lqA-low-prio", "lqA", kLowPrio, 2, 1}}},
      {.kueue_name = "single ClusterQueue and two LocalQueue setup with four "
                     "workloads and default query parameters; LocalQueue B "
                     "request",
       .objects = one_cq_two_lqs,
       .workloads = four_in_one_cq,
       .local_queue = {ns_a, "lqB"},
       .want = {{ns_a, "lqB-high-prio", "lqB", kHighPrio, 1, 0},
                {ns_a, "lqB-low-prio", "lqB", kLowPrio, 3, 1}}},
      {.kueue_name = "two Namespaces, two ClusterQueue and two LocalQueue "
                     "setup with four workloads and default query parameters, "
                     "LocalQueue A request",
       .objects = two_cqs,
       .workloads = four_in_two_cqs,
       .local_queue = {ns_a, "lqA"},
       .want = {{ns_a, "lqA-high-prio", "lqA", kHighPrio, 0, 0},
                {ns_a, "lqA-low-prio", "lqA", kLowPrio, 1, 1}}},
      {.kueue_name = "two Namespaces, two ClusterQueue and two LocalQueue "
                     "setup with four workloads and default query parameters, "
                     "LocalQueue B request",
       .objects = two_cqs,
       .workloads = four_in_two_cqs,
       .local_queue = {ns_b, "lqB"},
       .want = {{ns_b, "lqB-high-prio", "lqB", kHighPrio, 0, 0},
                {ns_b, "lqB-low-prio", "lqB", kLowPrio, 1, 1}}},
      {.kueue_name = "limit query parameter set",
       .objects = one_lq,
       .workloads = three,
       .local_queue = {ns_a, "lqA"},
       .options = {.limit = 2},
       .want = {{ns_a, "a", "lqA", kHighPrio, 0, 0},
                {ns_a, "b", "lqA", kHighPrio, 1, 1}}},
      {.kueue_name = "offset query parameter set",
       .objects = one_lq,
       .workloads = three,
       .local_queue = {ns_a, "lqA"},
       .options = {.offset = 1, .limit = kDefaultPendingWorkloadsLimit},
       .want = {{ns_a, "b", "lqA", kHighPrio, 1, 1},
                {ns_a, "c", "lqA", kHighPrio, 2, 2}}},
      {.kueue_name = "limit and offset query parameters set",
       .objects = one_lq,
       .workloads = three,
       .local_queue = {ns_a, "lqA"},
       .options = {.offset = 1, .limit = 1},
       .want = {{ns_a, "b", "lqA", kHighPrio, 1, 1}}},
      {.kueue_name = "negative limit refused",
       .objects = one_lq,
       .workloads = three,
       .local_queue = {ns_a, "lqA"},
       .options = {.limit = -1},
       .want_code = absl::StatusCode::kInvalidArgument},
      {.kueue_name = "excessive limit refused",
       .objects = one_lq,
       .workloads = three,
       .local_queue = {ns_a, "lqA"},
       .options = {.limit = 2'000'000'000},
       .want_code = absl::StatusCode::kInvalidArgument},
      {.kueue_name = "nonexistent queue name",
       .objects = one_lq,
       .local_queue = {ns_a, "nonexistent-queue"},
       .want_code = absl::StatusCode::kNotFound},
      // kq's.
      {.kueue_name = "LocalQueue of another namespace is not found",
       .objects = one_lq,
       .local_queue = {ns_b, "lqA"},
       .want_code = absl::StatusCode::kNotFound},
      {.kueue_name = "offset counts in the LocalQueue, positions stay the "
                     "ClusterQueue's",
       .objects = one_cq_two_lqs,
       .workloads = four_in_one_cq,
       .local_queue = {ns_a, "lqB"},
       .options = {.offset = 1},
       .want = {{ns_a, "lqB-low-prio", "lqB", kLowPrio, 3, 1}}},
      {.kueue_name = "LocalQueue of a missing ClusterQueue lists nothing",
       .objects = {LocalQueueBuilder(ns_a, "lqA", "missing").Build()},
       .workloads = {Pending("a", ns_a, "lqA", kHighPrio, now)},
       .local_queue = {ns_a, "lqA"},
       .want = {}},
  };
}

class PendingWorkloadsInClusterQueueTest
    : public ::testing::TestWithParam<Case> {};

TEST_P(PendingWorkloadsInClusterQueueTest, ListsThePage) {
  const Case& tc = GetParam();
  AdmissionState state;
  Load(state, tc);
  absl::StatusOr<std::vector<PendingWorkload>> got =
      PendingWorkloadsInClusterQueue(state, tc.cluster_queue, tc.options);
  ASSERT_THAT(got.status(), StatusIs(tc.want_code));
  if (!got.ok()) return;
  EXPECT_THAT(RowsOf(*got), ElementsAreArray(tc.want));
}

INSTANTIATE_TEST_SUITE_P(Kueue, PendingWorkloadsInClusterQueueTest,
                         ::testing::ValuesIn(ClusterQueueCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return SnakeCase(info.param.kueue_name);
                         });

class PendingWorkloadsInLocalQueueTest : public ::testing::TestWithParam<Case> {
};

TEST_P(PendingWorkloadsInLocalQueueTest, ListsThePage) {
  const Case& tc = GetParam();
  AdmissionState state;
  Load(state, tc);
  absl::StatusOr<std::vector<PendingWorkload>> got =
      PendingWorkloadsInLocalQueue(state, tc.local_queue, tc.options);
  ASSERT_THAT(got.status(), StatusIs(tc.want_code));
  if (!got.ok()) return;
  EXPECT_THAT(RowsOf(*got), ElementsAreArray(tc.want));
}

INSTANTIATE_TEST_SUITE_P(Kueue, PendingWorkloadsInLocalQueueTest,
                         ::testing::ValuesIn(LocalQueueCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return SnakeCase(info.param.kueue_name);
                         });

TEST(PendingWorkloadsTest, OptionErrorsNameTheField) {
  EXPECT_THAT(ValidatePendingWorkloadsOffset(-1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "offset: must not be negative"));
  EXPECT_THAT(ValidatePendingWorkloadsLimit(-5),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "limit: must not be negative"));
  EXPECT_THAT(ValidatePendingWorkloadsLimit(100'001),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "limit: must be at most 100000"));
  EXPECT_OK(ValidatePendingWorkloadsLimit(100'000));
  EXPECT_OK(ValidatePendingWorkloadsLimit(0));
  EXPECT_OK(ValidatePendingWorkloadsOffset(0));
}

TEST(PendingWorkloadsTest, NotFoundNamesTheQueue) {
  AdmissionState state;
  state.Rebuild(kNow);
  EXPECT_THAT(
      PendingWorkloadsInClusterQueue(state, "cq", {}).status(),
      StatusIs(absl::StatusCode::kNotFound, "ClusterQueue \"cq\" not found"));
  EXPECT_THAT(
      PendingWorkloadsInLocalQueue(state, {"ns", "lq"}, {}).status(),
      StatusIs(absl::StatusCode::kNotFound, "LocalQueue \"ns/lq\" not found"));
}

// The listing's positions are the ones Explain (`kq describe`) and the
// queue itself (Admit's position) report, for every workload of a mixed
// queue: several LocalQueues, two namespaces sharing a LocalQueue name,
// equal priorities and times broken by uid, parked and queued workloads.
TEST(PendingWorkloadsTest, PositionsAreExplainsAndTheQueues) {
  AdmissionState state;
  state.LoadObject(ResourceFlavorBuilder("default").Build());
  state.LoadObject(
      ClusterQueueBuilder("cq").Quota("default", "cpu", "3").Build());
  for (const std::string ns : {"ns1", "ns2"}) {
    state.LoadObject(LocalQueueBuilder(ns, "lq", "cq").Build());
    state.LoadObject(LocalQueueBuilder(ns, "other", "cq").Build());
  }
  // Half the workloads are scheduled (some admitted, the rest parked), the
  // other half arrive afterwards and wait in the heap.
  auto make = [](const std::string& ns, const std::string& lq, int i) {
    return WorkloadBuilder(absl::StrCat(lq, "-", i))
        .Namespace(ns)
        .Queue(lq)
        .Priority(i % 3 == 0 ? kHighPrio : kLowPrio)
        .Created(kNow + absl::Seconds(i % 2))
        .PodSet("main", 1)
        // Those that arrive late have shapes of their own: a shape parked
        // already would park them at once (Kueue's bulk move).
        .Request("cpu", i >= 3   ? absl::StrCat(i, "00m")
                        : i == 1 ? "4"
                                 : "1")
        .Build();
  };
  auto uid = [](int n) {
    return absl::StrCat("00000000-0000-0000-0000-0000000000", n < 10 ? "0" : "",
                        n);
  };
  int n = 0;
  for (const std::string ns : {"ns1", "ns2"}) {
    for (const std::string lq : {"lq", "other"}) {
      for (int i = 0; i < 3; ++i, ++n) {
        Workload wl = make(ns, lq, i);
        wl.meta.uid = uid(n);
        state.LoadWorkload(wl);
      }
    }
  }
  state.Rebuild(kNow);
  state.RunPasses(kNow);
  for (const std::string ns : {"ns1", "ns2"}) {
    for (const std::string lq : {"lq", "other"}) {
      for (int i = 3; i < 6; ++i, ++n) {
        state.AddWorkload(make(ns, lq, i), uid(n), kNow);
      }
    }
  }
  ASSERT_GT(state.queues().PendingInadmissible("cq"), 0);
  ASSERT_GT(state.queues().PendingActive("cq"), 0);

  ASSERT_OK_AND_ASSIGN(
      std::vector<PendingWorkload> all,
      PendingWorkloadsInClusterQueue(state, "cq", {.limit = 1000}));
  ASSERT_EQ(static_cast<int32_t>(all.size()),
            state.queues().PendingCount("cq"));
  for (size_t i = 0; i < all.size(); ++i) {
    const PendingWorkload& p = all[i];
    const NamespacedName key{p.namespace_name, p.name};
    SCOPED_TRACE(p.namespace_name + "/" + p.name);
    EXPECT_EQ(p.position_in_cluster_queue, static_cast<int32_t>(i));
    EXPECT_EQ(state.queues().PositionOf(key),
              std::optional<int64_t>(p.position_in_cluster_queue));
    EXPECT_EQ(PositionInLocalQueue(state, key),
              std::optional<int64_t>(p.position_in_local_queue));
    ASSERT_OK_AND_ASSIGN(Explanation explained, Explain(state, key, kNow));
    EXPECT_EQ(explained.position_in_cluster_queue,
              std::optional<int64_t>(p.position_in_cluster_queue));
    EXPECT_EQ(explained.position_in_local_queue,
              std::optional<int64_t>(p.position_in_local_queue));

    // The same workload in its LocalQueue's own listing, one page each.
    ASSERT_OK_AND_ASSIGN(
        std::vector<PendingWorkload> in_lq,
        PendingWorkloadsInLocalQueue(
            state, {p.namespace_name, p.local_queue_name},
            {.offset = p.position_in_local_queue, .limit = 1}));
    ASSERT_EQ(in_lq.size(), 1u);
    EXPECT_EQ(in_lq[0], p);
  }
}

}  // namespace
}  // namespace kq::admission
