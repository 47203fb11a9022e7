// Kueue's visibility API as HTTP answers (server/visibility/visibility.h),
// from a real engine on a MemoryStore: the JSON shapes, the positions
// against GetWorkload's and Explain's (what `kq describe` prints), paging,
// and the Status of every refused request.

#include "server/visibility/visibility.h"

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "server/engine/engine.h"
#include "server/store/memory_store.h"
#include "tests/testing/builders.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"

namespace kq::visibility {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::FakeClock;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;
using ::testing::SizeIs;
using json = nlohmann::json;

constexpr char kCq[] = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/";
constexpr char kNs[] = "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/";

class VisibilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<engine::Engine>(store_, clock_);
    ASSERT_OK(engine_->Start());
    // One cpu: `Workload(name, "1")` fits once, "2" never.
    ASSERT_OK(
        engine_
            ->Apply(
                {ResourceFlavorBuilder("default").Build(),
                 ClusterQueueBuilder("cq").Quota("default", "cpu", "1").Build(),
                 LocalQueueBuilder("ns-a", "lq", "cq").Build(),
                 LocalQueueBuilder("ns-b", "lq", "cq").Build(),
                 LocalQueueBuilder("ns-a", "other", "cq").Build()},
                {})
            .status());
  }

  static Workload Wl(const std::string& ns, const std::string& lq,
                     const std::string& name, const char* cpu = "2",
                     int32_t priority = 0) {
    return WorkloadBuilder(name)
        .Namespace(ns)
        .Queue(lq)
        .Priority(priority)
        .PodSet("main", 1)
        .Request("cpu", cpu)
        .Build();
  }

  void Submit(std::vector<Workload> workloads) {
    ASSERT_OK(engine_->Apply({}, std::move(workloads)).status());
  }

  HttpAnswer Get(const std::string& path, const Query& query = {}) {
    return Serve(*engine_, "GET", path, query);
  }

  // The body of a 200 answer, parsed.
  json Items(const std::string& path, const Query& query = {}) {
    HttpAnswer answer = Get(path, query);
    EXPECT_EQ(answer.status, 200) << answer.body;
    json body = json::parse(answer.body, nullptr, false);
    EXPECT_TRUE(body.is_object()) << answer.body;
    return body.is_object() ? body["items"] : json::array();
  }

  store::MemoryStore store_;
  FakeClock clock_;
  std::unique_ptr<engine::Engine> engine_;
};

TEST_F(VisibilityTest, ClusterQueueSummaryIsKueuesJson) {
  Submit({Wl("ns-a", "lq", "first", "2", 10), Wl("ns-b", "lq", "second")});
  HttpAnswer answer = Get(absl::StrCat(kCq, "cq/pendingworkloads"));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body,
            R"({"kind":"PendingWorkloadsSummary",)"
            R"("apiVersion":"visibility.kueue.x-k8s.io/v1beta2",)"
            R"("metadata":{"creationTimestamp":null},"items":[)"
            R"({"metadata":{"name":"first","namespace":"ns-a",)"
            R"("creationTimestamp":"2023-11-14T22:13:20Z"},"priority":10,)"
            R"("localQueueName":"lq","positionInClusterQueue":0,)"
            R"("positionInLocalQueue":0},)"
            R"({"metadata":{"name":"second","namespace":"ns-b",)"
            R"("creationTimestamp":"2023-11-14T22:13:20Z"},"priority":0,)"
            R"("localQueueName":"lq","positionInClusterQueue":1,)"
            R"("positionInLocalQueue":0}]})");
}

TEST_F(VisibilityTest, EmptyQueueHasEmptyItems) {
  EXPECT_EQ(Get(absl::StrCat(kNs, "ns-a/localqueues/lq/pendingworkloads")).body,
            R"({"kind":"PendingWorkloadsSummary",)"
            R"("apiVersion":"visibility.kueue.x-k8s.io/v1beta2",)"
            R"("metadata":{"creationTimestamp":null},"items":[]})");
}

TEST_F(VisibilityTest, AdmittedWorkloadsAreNotPending) {
  Submit({Wl("ns-a", "lq", "fits", "1"), Wl("ns-a", "lq", "waits", "1")});
  json items = Items(absl::StrCat(kCq, "cq/pendingworkloads"));
  ASSERT_THAT(items, SizeIs(1));
  EXPECT_EQ(items[0]["metadata"]["name"], "waits");
}

// 1,000 pending workloads in two LocalQueues of one ClusterQueue (and the
// namesake of one in another namespace), with five priorities: the
// listing's positions are GetWorkload's (Admit's) and Explain's (`kq
// describe`'s), and every page is a slice of the whole.
TEST_F(VisibilityTest, ThousandPendingWorkloadsMatchDescribeAndPage) {
  std::vector<Workload> workloads;
  // The first one fits the single cpu and is admitted: 1,000 stay pending.
  workloads.push_back(Wl("ns-a", "lq", "admitted", "1", 100));
  for (int i = 0; i < 1000; ++i) {
    const bool other = i % 3 == 0;
    const std::string ns = !other && i % 7 == 0 ? "ns-b" : "ns-a";
    workloads.push_back(Wl(ns, other ? "other" : "lq", absl::StrCat("wl-", i),
                           i % 10 == 0 ? "1" : "2", (i % 5) * 10));
  }
  Submit(std::move(workloads));

  json all = Items(absl::StrCat(kCq, "cq/pendingworkloads"));
  ASSERT_THAT(all, SizeIs(1000));
  std::map<std::string, int> per_local_queue;
  for (size_t i = 0; i < all.size(); ++i) {
    const json& item = all[i];
    const std::string ns = item["metadata"]["namespace"];
    const std::string name = item["metadata"]["name"];
    const std::string lq = item["localQueueName"];
    SCOPED_TRACE(ns + "/" + name);
    ASSERT_EQ(item["positionInClusterQueue"].get<int64_t>(),
              static_cast<int64_t>(i));
    ASSERT_EQ(item["positionInLocalQueue"].get<int>(),
              per_local_queue[ns + "/" + lq]++);
    ASSERT_OK_AND_ASSIGN(engine::WorkloadView view,
                         engine_->GetWorkload({ns, name}));
    ASSERT_EQ(view.position, std::optional<int64_t>(i));
    ASSERT_EQ(view.workload.priority, item["priority"].get<int32_t>());
    if (i % 37 == 0) {
      // Explain runs a flavor assignment per call: a sample.
      ASSERT_OK_AND_ASSIGN(engine::ExplainResult explained,
                           engine_->Explain({ns, name}));
      EXPECT_EQ(explained.explanation.position_in_cluster_queue,
                std::optional<int64_t>(i));
      EXPECT_EQ(
          explained.explanation.position_in_local_queue,
          std::optional<int64_t>(item["positionInLocalQueue"].get<int64_t>()));
    }
  }
  EXPECT_EQ(per_local_queue.size(), 3u);
  // Higher priorities first.
  EXPECT_EQ(all.front()["priority"], 40);
  EXPECT_EQ(all.back()["priority"], 0);

  // A ClusterQueue page is the slice of the whole.
  json page = Items(absl::StrCat(kCq, "cq/pendingworkloads"),
                    {{"offset", "250"}, {"limit", "100"}});
  ASSERT_THAT(page, SizeIs(100));
  for (size_t i = 0; i < page.size(); ++i) {
    EXPECT_EQ(page[i], all[250 + i]);
  }
  EXPECT_THAT(
      Items(absl::StrCat(kCq, "cq/pendingworkloads"), {{"offset", "995"}}),
      SizeIs(5));
  EXPECT_THAT(Items(absl::StrCat(kCq, "cq/pendingworkloads"), {{"limit", "7"}}),
              SizeIs(7));

  // A LocalQueue page: offset and limit count in the LocalQueue, each item
  // as the ClusterQueue's listing has it.
  json in_lq;
  for (const json& item : all) {
    if (item["metadata"]["namespace"] == "ns-a" &&
        item["localQueueName"] == "lq") {
      in_lq.push_back(item);
    }
  }
  ASSERT_GT(in_lq.size(), 100u);
  json lq_page =
      Items(absl::StrCat(kNs, "ns-a/localqueues/lq/pendingworkloads"),
            {{"offset", "40"}, {"limit", "25"}});
  ASSERT_THAT(lq_page, SizeIs(25));
  for (size_t i = 0; i < lq_page.size(); ++i) {
    EXPECT_EQ(lq_page[i], in_lq[40 + i]);
  }
  // The default limit is 1000: a thousand and first pending workload is
  // on the next page.
  clock_.Advance(absl::Seconds(1));
  Submit({Wl("ns-a", "lq", "last")});
  EXPECT_THAT(Items(absl::StrCat(kCq, "cq/pendingworkloads")), SizeIs(1000));
  json rest =
      Items(absl::StrCat(kCq, "cq/pendingworkloads"), {{"offset", "1000"}});
  ASSERT_THAT(rest, SizeIs(1));
  EXPECT_EQ(rest[0]["metadata"]["name"], "last");
  EXPECT_EQ(rest[0]["positionInClusterQueue"], 1000);

  // ns-b's "lq" is another queue with positions of its own.
  json b = Items(absl::StrCat(kNs, "ns-b/localqueues/lq/pendingworkloads"));
  ASSERT_FALSE(b.empty());
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b[i]["positionInLocalQueue"], static_cast<int>(i));
    EXPECT_EQ(b[i]["metadata"]["namespace"], "ns-b");
  }
}

struct BadQueryCase {
  std::string name;
  Query query;
  std::string field;
  std::string message;
};

void PrintTo(const BadQueryCase& c, std::ostream* os) { *os << c.name; }

class BadQueryTest : public VisibilityTest,
                     public ::testing::WithParamInterface<BadQueryCase> {};

TEST_P(BadQueryTest, IsBadRequestNamingTheParameter) {
  const BadQueryCase& tc = GetParam();
  for (const std::string& path :
       {absl::StrCat(kCq, "cq/pendingworkloads"),
        absl::StrCat(kNs, "ns-a/localqueues/lq/pendingworkloads")}) {
    SCOPED_TRACE(path);
    HttpAnswer answer = Get(path, tc.query);
    EXPECT_EQ(answer.status, 400);
    json body = json::parse(answer.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << answer.body;
    EXPECT_EQ(body["kind"], "Status");
    EXPECT_EQ(body["apiVersion"], "v1");
    EXPECT_EQ(body["status"], "Failure");
    EXPECT_EQ(body["reason"], "BadRequest");
    EXPECT_EQ(body["code"], 400);
    EXPECT_EQ(body["message"], tc.message);
    EXPECT_EQ(body["details"]["causes"][0]["field"], tc.field);
    EXPECT_EQ(body["details"]["causes"][0]["reason"], "FieldValueInvalid");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Visibility, BadQueryTest,
    ::testing::ValuesIn(std::vector<BadQueryCase>{
        {"offset_not_a_number",
         {{"offset", "abc"}},
         "offset",
         R"(offset: Invalid value: "abc": must be an integer)"},
        {"offset_negative",
         {{"offset", "-3"}},
         "offset",
         R"(offset: Invalid value: "-3": must not be negative)"},
        {"limit_negative",
         {{"limit", "-1"}},
         "limit",
         R"(limit: Invalid value: "-1": must not be negative)"},
        {"limit_too_large",
         {{"limit", "100001"}},
         "limit",
         R"(limit: Invalid value: "100001": must be at most 100000)"},
        {"limit_empty",
         {{"limit", ""}},
         "limit",
         R"(limit: Invalid value: "": must be an integer)"},
        {"limit_fraction",
         {{"limit", "1.5"}},
         "limit",
         R"(limit: Invalid value: "1.5": must be an integer)"},
        {"limit_beyond_int64",
         {{"limit", "99999999999999999999"}},
         "limit",
         R"(limit: Invalid value: "99999999999999999999": must be a 64-bit integer)"},
        {"offset_checked_before_limit",
         {{"offset", "x"}, {"limit", "y"}},
         "offset",
         R"(offset: Invalid value: "x": must be an integer)"},
    }),
    [](const auto& info) { return info.param.name; });

TEST_F(VisibilityTest, LargestLimitAndSignedNumbersAreServed) {
  Submit({Wl("ns-a", "lq", "a")});
  EXPECT_THAT(Items(absl::StrCat(kCq, "cq/pendingworkloads"),
                    {{"limit", "100000"}, {"offset", "+0"}}),
              SizeIs(1));
  // limit=0 is Kueue's default, 1000.
  EXPECT_THAT(Items(absl::StrCat(kCq, "cq/pendingworkloads"), {{"limit", "0"}}),
              SizeIs(1));
  // Other parameters are ignored, as Kubernetes ignores them.
  EXPECT_THAT(
      Items(absl::StrCat(kCq, "cq/pendingworkloads"), {{"watch", "true"}}),
      SizeIs(1));
}

TEST_F(VisibilityTest, UnknownClusterQueueIsKueuesNotFound) {
  HttpAnswer answer = Get(absl::StrCat(kCq, "missing/pendingworkloads"));
  EXPECT_EQ(answer.status, 404);
  EXPECT_EQ(
      answer.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"("status":"Failure",)"
      R"("message":"clusterqueue.visibility.kueue.x-k8s.io \"missing\" not found",)"
      R"("reason":"NotFound","details":{"name":"missing",)"
      R"("group":"visibility.kueue.x-k8s.io","kind":"clusterqueue"},)"
      R"("code":404})");
}

TEST_F(VisibilityTest, UnknownLocalQueueIsKueuesNotFound) {
  // lq exists in ns-a, not in ns-c.
  HttpAnswer answer =
      Get(absl::StrCat(kNs, "ns-c/localqueues/lq/pendingworkloads"));
  EXPECT_EQ(answer.status, 404);
  EXPECT_EQ(
      answer.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"("status":"Failure",)"
      R"("message":"localqueue.visibility.kueue.x-k8s.io \"lq\" not found",)"
      R"("reason":"NotFound","details":{"name":"lq",)"
      R"("group":"visibility.kueue.x-k8s.io","kind":"localqueue"},)"
      R"("code":404})");
}

TEST_F(VisibilityTest, OtherPathsAndMethods) {
  const std::string not_found =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"("message":"the server could not find the requested resource",)"
      R"("reason":"NotFound","details":{},"code":404})";
  for (const std::string& path :
       {absl::StrCat(kCq, "cq"), absl::StrCat(kCq, "cq/pendingworkloads/x"),
        absl::StrCat(kCq, "/pendingworkloads"),
        absl::StrCat(kNs, "ns-a/localqueues//pendingworkloads"),
        absl::StrCat(kNs, "ns-a/clusterqueues/cq/pendingworkloads"),
        std::string("/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/"
                    "cq/pendingworkloads"),
        std::string(kPathPrefix)}) {
    SCOPED_TRACE(path);
    HttpAnswer answer = Get(path);
    EXPECT_EQ(answer.status, 404);
    EXPECT_EQ(answer.body, not_found);
  }
  HttpAnswer post =
      Serve(*engine_, "POST", absl::StrCat(kCq, "cq/pendingworkloads"), {});
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
            R"("status":"Failure","message":"the server does not allow this )"
            R"(method on the requested resource","reason":"MethodNotAllowed",)"
            R"("details":{},"code":405})");
}

TEST_F(VisibilityTest, StoppedEngineIsServiceUnavailable) {
  engine_->Stop();
  HttpAnswer answer = ClusterQueuePendingWorkloads(*engine_, "cq", {});
  EXPECT_EQ(answer.status, 503);
  json body = json::parse(answer.body, nullptr, false);
  EXPECT_EQ(body["reason"], "ServiceUnavailable");
  EXPECT_EQ(body["code"], 503);
}

TEST(VisibilityRenderTest, StatusAnswerMapsCodes) {
  EXPECT_EQ(
      StatusAnswer(absl::InvalidArgumentError("limit: bad"), "x", "y").status,
      400);
  EXPECT_EQ(StatusAnswer(absl::DeadlineExceededError("slow"), "x", "y").status,
            504);
  HttpAnswer internal = StatusAnswer(absl::InternalError("boom"), "x", "y");
  EXPECT_EQ(internal.status, 500);
  EXPECT_EQ(internal.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
            R"("status":"Failure","message":"boom","reason":"InternalError",)"
            R"("code":500})");
}

}  // namespace
}  // namespace kq::visibility
