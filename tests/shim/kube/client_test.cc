// The client against the Kubernetes API server fixture
// (tests/k8s/fake_apiserver.py) over HTTPS: authentication, TLS, the
// verbs on batch/v1 Jobs, list pagination, watch, Events.

#include "shim/kube/client.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/shim/testing/fake_apiserver_process.h"
#include "tests/testing/status_matchers.h"

namespace kq::shim::kube {
namespace {

using ::kq::testing::FakeApiServer;
using ::kq::testing::IsOkAndHolds;
using ::kq::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

// A CA that signed nothing the fixture serves.
constexpr char kOtherCa[] = R"(-----BEGIN CERTIFICATE-----
MIIBjjCCATOgAwIBAgIURUcu7wALSj34ZCAhHQXD7gw+EfYwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQa3EtdGVzdC1vdGhlci1jYTAgFw0yNjExMzAwMTI3MzVaGA8y
MTI2MTEwNjAxMjczNVowGzEZMBcGA1UEAwwQa3EtdGVzdC1vdGhlci1jYTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABGhVbCz92aZjXqv2kjPC1frXK3/u7qNCs5Oe
rXjuBcZ1PasrgEaKuYQIp8FAAota179R8/8CzU7qLBlXYaSsTc6jUzBRMB0GA1Ud
DgQWBBSap9D41T6mRLQyVbpWzI9oHGHLPjAfBgNVHSMEGDAWgBSap9D41T6mRLQy
VbpWzI9oHGHLPjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQDB
VtZ32wKjIS5tlkofESg3IgsTWwo728p4JCIhE0cFgwIhAIyDnF4iZiOg07gmN8Xu
jWMM2ShXlulRFWOUqzOMQzkJ
-----END CERTIFICATE-----
)";

json Job(const std::string& name,
         const std::map<std::string, std::string>& labels = {}) {
  json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"suspend", true},
        {"parallelism", 1},
        {"completions", 1},
        {"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             json::array({{{"name", "main"},
                           {"image", "busybox"},
                           {"resources", {{"requests", {{"cpu", "1"}}}}}},
                          {{"name", "sidecar"}, {"image", "busybox"}}})}}}}}}}};
  if (!labels.empty()) job["metadata"]["labels"] = labels;
  return job;
}

std::string Rv(const json& object) {
  return object["metadata"]["resourceVersion"].get<std::string>();
}

ClientOptions FastRetries() {
  return ClientOptions{.request_timeout = absl::Seconds(10),
                       .max_attempts = 3,
                       .initial_backoff = absl::Milliseconds(20),
                       .max_backoff = absl::Milliseconds(100)};
}

class ClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<FakeApiServer>> server =
        FakeApiServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(server_, nullptr) << "the fixture did not start";
    ASSERT_OK_AND_ASSIGN(config_, server_->LoadConfig());
    ASSERT_OK_AND_ASSIGN(client_, Client::Create(config_, FastRetries()));
  }

  // GET requests the fixture received whose path is `path`.
  std::vector<json> RequestsTo(const std::string& method,
                               const std::string& path) {
    std::vector<json> matching;
    absl::StatusOr<json> all = server_->Requests();
    EXPECT_TRUE(all.ok()) << all.status();
    if (!all.ok()) return matching;
    for (const json& request : *all) {
      if (request["method"] == method && request["path"] == path) {
        matching.push_back(request);
      }
    }
    return matching;
  }

  static FakeApiServer* server_;
  Config config_;
  std::unique_ptr<Client> client_;
};

FakeApiServer* ClientTest::server_ = nullptr;

TEST_F(ClientTest, KubeconfigPointsAtTheFixture) {
  EXPECT_EQ(config_.server, server_->url());
  EXPECT_THAT(config_.certificate_authority_data,
              StartsWith("-----BEGIN CERTIFICATE-----"));
  EXPECT_EQ(config_.bearer_token, "kq-test-token");
  EXPECT_EQ(config_.default_namespace, "default");
  EXPECT_THAT(client_->ServerVersion(), IsOkAndHolds(StartsWith("v1.")));
}

TEST_F(ClientTest, CaFromFileWorks) {
  Config config = config_;
  config.certificate_authority_data.clear();
  config.certificate_authority_file = server_->ca_path();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Create(config, FastRetries()));
  EXPECT_OK(client->ServerVersion());
}

TEST_F(ClientTest, InsecureSkipTlsVerifyNeedsNoCa) {
  Config config = config_;
  config.certificate_authority_data.clear();
  config.insecure_skip_tls_verify = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Create(config, FastRetries()));
  EXPECT_OK(client->ServerVersion());
}

// Documented choice: an unverifiable server certificate is UNAVAILABLE
// like any transport failure, but at once (no retries), with "TLS" in the
// message; no request reaches the server.
TEST_F(ClientTest, WrongCaIsUnavailableWithoutRetries) {
  ASSERT_OK(server_->ClearRequests());
  Config config = config_;
  config.certificate_authority_data = kOtherCa;
  ClientOptions options = FastRetries();
  options.initial_backoff = absl::Seconds(2);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Create(config, options));
  const absl::Time start = absl::Now();
  EXPECT_THAT(client->ServerVersion(),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("TLS"), HasSubstr("certificate"))));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_THAT(RequestsTo("GET", "/version"), SizeIs(0));
}

TEST_F(ClientTest, WrongTokenIsUnauthenticatedAndNotRetried) {
  ASSERT_OK(server_->ClearRequests());
  Config config = config_;
  config.bearer_token = "not-the-token";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Create(config, FastRetries()));
  EXPECT_THAT(client->Get(kJobs, "default", "anything"),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       HasSubstr("GET /apis/batch/v1/namespaces/default/jobs/"
                                 "anything: Unauthorized (HTTP 401")));
  EXPECT_THAT(RequestsTo("GET",
                         "/apis/batch/v1/namespaces/default/jobs/"
                         "anything"),
              SizeIs(1));
}

TEST_F(ClientTest, CreateGetUpdateDeleteJob) {
  ASSERT_OK_AND_ASSIGN(json created,
                       client_->Create(kJobs, "default", Job("crud")));
  EXPECT_EQ(created["kind"], "Job");
  EXPECT_EQ(created["metadata"]["namespace"], "default");
  const std::string uid = created["metadata"]["uid"];
  EXPECT_FALSE(uid.empty());
  EXPECT_FALSE(Rv(created).empty());

  ASSERT_OK_AND_ASSIGN(json got, client_->Get(kJobs, "default", "crud"));
  EXPECT_EQ(got["metadata"]["uid"], uid);
  EXPECT_EQ(got["spec"]["suspend"], true);

  // Update from the version just read: accepted, new resourceVersion.
  json changed = got;
  changed["metadata"]["labels"]["kq.dev/touched"] = "yes";
  ASSERT_OK_AND_ASSIGN(json updated,
                       client_->Update(kJobs, "default", changed));
  EXPECT_EQ(updated["metadata"]["labels"]["kq.dev/touched"], "yes");
  EXPECT_NE(Rv(updated), Rv(got));

  // Update from the stale version: 409 Conflict -> ABORTED, not applied.
  json stale = got;
  stale["metadata"]["labels"]["kq.dev/stale"] = "yes";
  EXPECT_THAT(client_->Update(kJobs, "default", stale),
              StatusIs(absl::StatusCode::kAborted,
                       AllOf(HasSubstr("PUT /apis/batch/v1/namespaces/default/"
                                       "jobs/crud"),
                             HasSubstr("Conflict"))));
  ASSERT_OK_AND_ASSIGN(json after, client_->Get(kJobs, "default", "crud"));
  EXPECT_FALSE(after["metadata"]["labels"].contains("kq.dev/stale"));

  // Delete guarded by another incarnation's uid: refused.
  EXPECT_THAT(client_->Delete(kJobs, "default", "crud", "not-the-uid"),
              StatusIs(absl::StatusCode::kAborted));
  EXPECT_OK(client_->Get(kJobs, "default", "crud"));
  EXPECT_OK(client_->Delete(kJobs, "default", "crud", uid));
  EXPECT_THAT(client_->Get(kJobs, "default", "crud"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("crud")));
  EXPECT_THAT(client_->Delete(kJobs, "default", "crud"),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ClientTest, CreateTwiceIsAlreadyExists) {
  ASSERT_OK(client_->Create(kJobs, "default", Job("twice")));
  EXPECT_THAT(
      client_->Create(kJobs, "default", Job("twice")),
      StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("AlreadyExists")));
}

TEST_F(ClientTest, GetMissingIsNotFound) {
  EXPECT_THAT(client_->Get(kJobs, "default", "no-such-job"),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("GET /apis/batch/v1/namespaces/default/jobs/"
                                 "no-such-job")));
  EXPECT_THAT(client_->Get(kJobs, "default", ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ClientTest, InvalidObjectIsInvalidArgument) {
  json job = Job("invalid");
  job["spec"]["template"]["spec"]["containers"] = json::array();
  EXPECT_THAT(client_->Create(kJobs, "default", job),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("(HTTP 422 Invalid)")));
}

TEST_F(ClientTest, EmptyNamespaceUsesTheConfiguredDefault) {
  ASSERT_OK(client_->Create(kJobs, "", Job("defaulted")));
  EXPECT_OK(client_->Get(kJobs, "default", "defaulted"));
  EXPECT_OK(client_->Get(kJobs, "", "defaulted"));
}

TEST_F(ClientTest, MergePatch) {
  ASSERT_OK(client_->Create(kJobs, "default", Job("merge")));
  // A suspended Job that never ran may change its template's scheduling
  // fields; a merge patch replaces lists whole.
  ASSERT_OK_AND_ASSIGN(
      json patched,
      client_->Patch(kJobs, "default", "merge", PatchType::kMergePatch,
                     {{"metadata", {{"annotations", {{"kq.dev/a", "1"}}}}},
                      {"spec",
                       {{"template",
                         {{"spec",
                           {{"tolerations",
                             json::array({{{"key", "gpu"},
                                           {"operator", "Exists"}}})}}}}}}}}));
  EXPECT_EQ(patched["metadata"]["annotations"]["kq.dev/a"], "1");
  EXPECT_EQ(patched["spec"]["template"]["spec"]["tolerations"],
            json::parse(R"([{"key":"gpu","operator":"Exists"}])"));
  // null deletes a key.
  ASSERT_OK_AND_ASSIGN(
      patched,
      client_->Patch(kJobs, "default", "merge", PatchType::kMergePatch,
                     {{"metadata", {{"annotations", {{"kq.dev/a", nullptr}}}}},
                      {"spec", {{"suspend", false}}}}));
  EXPECT_EQ(patched["spec"]["suspend"], false);
  EXPECT_FALSE(patched["metadata"].contains("annotations") &&
               patched["metadata"]["annotations"].contains("kq.dev/a"));
}

TEST_F(ClientTest, MergePatchWithStaleResourceVersionIsAborted) {
  ASSERT_OK_AND_ASSIGN(json created,
                       client_->Create(kJobs, "default", Job("merge-rv")));
  ASSERT_OK(client_->Patch(kJobs, "default", "merge-rv", PatchType::kMergePatch,
                           {{"metadata", {{"labels", {{"step", "1"}}}}}}));
  EXPECT_THAT(
      client_->Patch(
          kJobs, "default", "merge-rv", PatchType::kMergePatch,
          {{"metadata",
            {{"resourceVersion", Rv(created)}, {"labels", {{"step", "2"}}}}}}),
      StatusIs(absl::StatusCode::kAborted));
}

TEST_F(ClientTest, StrategicMergePatchMergesContainersByName) {
  // PodTemplates are mutable, unlike a Job's template.
  const json pod_template = {{"apiVersion", "v1"},
                             {"kind", "PodTemplate"},
                             {"metadata", {{"name", "strategic"}}},
                             {"template", Job("unused")["spec"]["template"]}};
  ASSERT_OK(client_->Create(kPodTemplates, "default", pod_template));
  ASSERT_OK_AND_ASSIGN(
      json patched,
      client_->Patch(
          kPodTemplates, "default", "strategic", PatchType::kStrategicMerge,
          {{"template",
            {{"spec",
              {{"containers",
                json::array(
                    {{{"name", "sidecar"}, {"image", "busybox:1.36"}}})}}}}}}));
  const json& containers = patched["template"]["spec"]["containers"];
  ASSERT_EQ(containers.size(), 2u);
  EXPECT_EQ(containers[0]["name"], "main");
  EXPECT_EQ(containers[0]["image"], "busybox");
  EXPECT_EQ(containers[1]["name"], "sidecar");
  EXPECT_EQ(containers[1]["image"], "busybox:1.36");
}

TEST_F(ClientTest, StrategicMergePatchMergesNodeSelector) {
  json job = Job("strategic");
  job["spec"]["template"]["spec"]["nodeSelector"] = {{"zone", "a"}};
  ASSERT_OK(client_->Create(kJobs, "default", job));
  ASSERT_OK_AND_ASSIGN(
      json patched,
      client_->Patch(
          kJobs, "default", "strategic", PatchType::kStrategicMerge,
          {{"spec",
            {{"template",
              {{"spec",
                {{"nodeSelector",
                  {{"cloud.provider.com/accelerator", "nvidia-a100"}}}}}}}}}}));
  EXPECT_EQ(patched["spec"]["template"]["spec"]["nodeSelector"],
            json::parse(R"({"zone":"a",
                            "cloud.provider.com/accelerator":"nvidia-a100"})"));
}

TEST_F(ClientTest, JsonPatch) {
  ASSERT_OK_AND_ASSIGN(json created,
                       client_->Create(kJobs, "default", Job("jsonpatch")));
  ASSERT_OK_AND_ASSIGN(
      json patched,
      client_->Patch(
          kJobs, "default", "jsonpatch", PatchType::kJsonPatch,
          json::array(
              {{{"op", "test"},
                {"path", "/metadata/uid"},
                {"value", created["metadata"]["uid"]}},
               {{"op", "replace"}, {"path", "/spec/suspend"}, {"value", false}},
               {{"op", "add"},
                {"path", "/metadata/labels"},
                {"value", {{"patched", "json"}}}}})));
  EXPECT_EQ(patched["spec"]["suspend"], false);
  EXPECT_EQ(patched["metadata"]["labels"]["patched"], "json");
  // A failed "test" changes nothing.
  EXPECT_FALSE(client_
                   ->Patch(kJobs, "default", "jsonpatch", PatchType::kJsonPatch,
                           json::array({{{"op", "test"},
                                         {"path", "/spec/suspend"},
                                         {"value", true}},
                                        {{"op", "replace"},
                                         {"path", "/spec/parallelism"},
                                         {"value", 5}}}))
                   .ok());
  ASSERT_OK_AND_ASSIGN(json after, client_->Get(kJobs, "default", "jsonpatch"));
  EXPECT_EQ(after["spec"]["parallelism"], 1);
}

TEST_F(ClientTest, PatchMissingIsNotFound) {
  EXPECT_THAT(
      client_->Patch(kJobs, "default", "no-such-job", PatchType::kMergePatch,
                     {{"spec", json::object()}}),
      StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(ClientTest, ListFollowsContinueTokensAndSelectors) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_OK(
        client_->Create(kJobs, "default",
                        Job(absl::StrCat("paged-", i),
                            {{"kq.dev/test", "paging"},
                             {"kq.dev/parity", i % 2 ? "odd" : "even"}})));
  }
  ASSERT_OK(client_->Create(kJobs, "default",
                            Job("unpaged", {{"kq.dev/test", "other"}})));
  ASSERT_OK(server_->ClearRequests());

  ASSERT_OK_AND_ASSIGN(
      ListResult listed,
      client_->List(kJobs, "default",
                    {.label_selector = "kq.dev/test=paging", .limit = 3}));
  std::set<std::string> names;
  for (const json& item : listed.items) {
    names.insert(item["metadata"]["name"].get<std::string>());
    // List items come without them on the wire; the client restores them.
    EXPECT_EQ(item["kind"], "Job");
    EXPECT_EQ(item["apiVersion"], "batch/v1");
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"paged-0", "paged-1", "paged-2", "paged-3",
                                   "paged-4", "paged-5", "paged-6"}));
  EXPECT_FALSE(listed.resource_version.empty());
  // Three pages: 3 + 3 + 1, the later ones with a continue token.
  std::vector<json> pages =
      RequestsTo("GET", "/apis/batch/v1/namespaces/default/jobs");
  ASSERT_THAT(pages, SizeIs(3));
  EXPECT_THAT(
      pages[0]["query"].get<std::string>(),
      AllOf(HasSubstr("limit=3"), ::testing::Not(HasSubstr("continue"))));
  EXPECT_THAT(pages[1]["query"].get<std::string>(), HasSubstr("continue="));
  EXPECT_THAT(pages[2]["query"].get<std::string>(), HasSubstr("continue="));

  // Set-based selector syntax survives the query escaping.
  ASSERT_OK_AND_ASSIGN(
      ListResult odd,
      client_->List(
          kJobs, "default",
          {.label_selector = "kq.dev/test in (paging),kq.dev/parity!=even"}));
  EXPECT_THAT(odd.items, SizeIs(3));
  // All namespaces, no limit.
  ASSERT_OK_AND_ASSIGN(ListResult everywhere,
                       client_->List(kJobs, "", {.limit = 0}));
  EXPECT_GE(everywhere.items.size(), 8u);
}

TEST_F(ClientTest, WatchDeliversAddedModifiedDeletedInOrder) {
  const std::string selector = "kq.dev/test=watch-order";
  ASSERT_OK_AND_ASSIGN(
      ListResult listed,
      client_->List(kJobs, "default", {.label_selector = selector}));
  ASSERT_TRUE(listed.items.empty());

  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    absl::StatusOr<json> created = client_->Create(
        kJobs, "default", Job("watched", {{"kq.dev/test", "watch-order"}}));
    ASSERT_TRUE(created.ok()) << created.status();
    ASSERT_TRUE(
        client_
            ->Patch(kJobs, "default", "watched", PatchType::kMergePatch,
                    {{"metadata", {{"annotations", {{"kq.dev/step", "2"}}}}}})
            .ok());
    ASSERT_TRUE(client_->Delete(kJobs, "default", "watched").ok());
  });
  std::vector<WatchEvent> events;
  absl::Status watched =
      client_->Watch(kJobs, "default",
                     {.label_selector = selector,
                      .resource_version = listed.resource_version,
                      .timeout = absl::Seconds(20)},
                     [&](const WatchEvent& event) {
                       if (event.type == WatchEventType::kBookmark) return true;
                       events.push_back(event);
                       return event.type != WatchEventType::kDeleted;
                     });
  writer.join();
  EXPECT_OK(watched);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front().type, WatchEventType::kAdded);
  EXPECT_EQ(events.back().type, WatchEventType::kDeleted);
  bool saw_annotation = false;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i].type, WatchEventType::kModified);
    saw_annotation |= events[i].object["metadata"].contains("annotations") &&
                      events[i].object["metadata"]["annotations"].value(
                          "kq.dev/step", "") == "2";
  }
  EXPECT_TRUE(saw_annotation);
  for (const WatchEvent& event : events) {
    EXPECT_EQ(event.object["metadata"]["name"], "watched");
    EXPECT_EQ(event.object["kind"], "Job");
  }
}

TEST_F(ClientTest, WatchEndsWithOkWhenTheServerTimesOut) {
  ASSERT_OK_AND_ASSIGN(
      ListResult listed,
      client_->List(kJobs, "default", {.label_selector = "kq.dev/test=none"}));
  const absl::Time start = absl::Now();
  EXPECT_OK(client_->Watch(kJobs, "default",
                           {.label_selector = "kq.dev/test=none",
                            .resource_version = listed.resource_version,
                            .timeout = absl::Seconds(1)},
                           [](const WatchEvent&) { return true; }));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(900));
  EXPECT_LT(took, absl::Seconds(5));
}

TEST_F(ClientTest, WatchStopFlagReturnsCancelledQuickly) {
  ASSERT_OK_AND_ASSIGN(
      ListResult listed,
      client_->List(kJobs, "default", {.label_selector = "kq.dev/test=idle"}));
  std::atomic<bool> stop{false};
  std::atomic<int64_t> stopped_at_ns{0};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stopped_at_ns = absl::GetCurrentTimeNanos();
    stop = true;
  });
  absl::Status watched =
      client_->Watch(kJobs, "default",
                     {.label_selector = "kq.dev/test=idle",
                      .resource_version = listed.resource_version,
                      .allow_watch_bookmarks = false,
                      .timeout = absl::Minutes(5),
                      .stop = &stop},
                     [](const WatchEvent&) { return true; });
  const int64_t returned_at_ns = absl::GetCurrentTimeNanos();
  stopper.join();
  EXPECT_THAT(watched, StatusIs(absl::StatusCode::kCancelled));
  RecordProperty("stop_latency_ms",
                 (returned_at_ns - stopped_at_ns.load()) / 1'000'000);
  EXPECT_LT(returned_at_ns - stopped_at_ns.load(), 300'000'000)
      << "stop took " << (returned_at_ns - stopped_at_ns.load()) / 1'000'000
      << " ms";
}

TEST_F(ClientTest, WatchFromACompactedVersionIsOutOfRange) {
  ASSERT_OK_AND_ASSIGN(ListResult listed, client_->List(kJobs, "default"));
  ASSERT_OK(client_->Create(kJobs, "default", Job("after-list")));
  ASSERT_OK(server_->Compact());
  EXPECT_THAT(client_->Watch(kJobs, "default",
                             {.resource_version = listed.resource_version,
                              .timeout = absl::Seconds(5)},
                             [](const WatchEvent&) { return true; }),
              StatusIs(absl::StatusCode::kOutOfRange));
}

TEST_F(ClientTest, RecordEventIsListedWithItsInvolvedObject) {
  ASSERT_OK_AND_ASSIGN(json job,
                       client_->Create(kJobs, "default", Job("eventful")));
  ASSERT_OK(RecordEvent(*client_, job, "Normal", "Admitted",
                        "Admitted by ClusterQueue cluster-queue"));
  ASSERT_OK(RecordEvent(*client_, job, "Warning", "Suspended",
                        "Job ran without an admission"));
  EXPECT_THAT(RecordEvent(*client_, job, "Info", "X", "y"),
              StatusIs(absl::StatusCode::kInvalidArgument));

  ASSERT_OK_AND_ASSIGN(ListResult events, client_->List(kEvents, "default"));
  std::vector<json> mine;
  for (const json& event : events.items) {
    if (event["involvedObject"]["name"] == "eventful") mine.push_back(event);
  }
  ASSERT_THAT(mine, SizeIs(2));
  std::set<std::string> names;
  for (const json& event : mine) {
    names.insert(event["metadata"]["name"].get<std::string>());
    EXPECT_THAT(event["metadata"]["name"].get<std::string>(),
                StartsWith("eventful."));
    EXPECT_EQ(event["metadata"]["namespace"], "default");
    const json& involved = event["involvedObject"];
    EXPECT_EQ(involved["apiVersion"], "batch/v1");
    EXPECT_EQ(involved["kind"], "Job");
    EXPECT_EQ(involved["namespace"], "default");
    EXPECT_EQ(involved["uid"], job["metadata"]["uid"]);
    EXPECT_EQ(involved["resourceVersion"], job["metadata"]["resourceVersion"]);
    EXPECT_EQ(event["source"]["component"], "kq-k8s-shim");
    EXPECT_EQ(event["reportingComponent"], "kq-k8s-shim");
    EXPECT_EQ(event["count"], 1);
    absl::Time first;
    std::string error;
    EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full,
                                event["firstTimestamp"].get<std::string>(),
                                &first, &error))
        << error;
    EXPECT_LT(absl::AbsDuration(absl::Now() - first), absl::Minutes(1));
    EXPECT_EQ(event["lastTimestamp"], event["firstTimestamp"]);
    if (event["reason"] == "Admitted") {
      EXPECT_EQ(event["type"], "Normal");
      EXPECT_EQ(event["message"], "Admitted by ClusterQueue cluster-queue");
    } else {
      EXPECT_EQ(event["reason"], "Suspended");
      EXPECT_EQ(event["type"], "Warning");
    }
  }
  EXPECT_THAT(names, SizeIs(2));
}

}  // namespace
}  // namespace kq::shim::kube
