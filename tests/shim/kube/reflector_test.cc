// The reflector against the API server fixture: initial sync, events,
// resuming after watch timeouts without re-listing, re-listing after 410.

#include "shim/kube/reflector.h"

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
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "shim/kube/client.h"
#include "tests/shim/testing/fake_apiserver_process.h"
#include "tests/testing/status_matchers.h"

namespace kq::shim::kube {
namespace {

using ::kq::testing::FakeApiServer;

constexpr char kSelector[] = "kq.dev/reflected=yes";

json Job(const std::string& name) {
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", name}, {"labels", {{"kq.dev/reflected", "yes"}}}}},
      {"spec",
       {{"suspend", true},
        {"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             json::array({{{"name", "main"}, {"image", "busybox"}}})}}}}}}}};
}

// What a cache built from the handlers holds: name -> resourceVersion.
class Mirror {
 public:
  ReflectorHandlers Handlers() {
    return {.on_sync =
                [this](const std::vector<json>& items) {
                  absl::MutexLock lock(&mu_);
                  ++syncs_;
                  objects_.clear();
                  for (const json& item : items) {
                    objects_[item["metadata"]["name"]] =
                        item["metadata"]["resourceVersion"];
                  }
                },
            .on_event =
                [this](const WatchEvent& event) {
                  absl::MutexLock lock(&mu_);
                  const std::string name = event.object["metadata"]["name"];
                  events_.push_back(
                      absl::StrCat(WatchEventTypeName(event.type), " ", name));
                  if (event.type == WatchEventType::kDeleted) {
                    objects_.erase(name);
                  } else {
                    objects_[name] =
                        event.object["metadata"]["resourceVersion"];
                  }
                }};
  }

  std::set<std::string> names() {
    absl::MutexLock lock(&mu_);
    std::set<std::string> names;
    for (const auto& [name, rv] : objects_) names.insert(name);
    return names;
  }
  std::vector<std::string> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  int syncs() {
    absl::MutexLock lock(&mu_);
    return syncs_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::string> objects_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
  int syncs_ ABSL_GUARDED_BY(mu_) = 0;
};

// Polls `condition` for up to `timeout`.
template <typename Condition>
bool Eventually(Condition condition,
                absl::Duration timeout = absl::Seconds(15)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return condition();
}

class ReflectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(server_, FakeApiServer::Start());
    ASSERT_OK_AND_ASSIGN(Config config, server_->LoadConfig());
    ASSERT_OK_AND_ASSIGN(
        client_,
        Client::Create(config, {.initial_backoff = absl::Milliseconds(20),
                                .max_backoff = absl::Milliseconds(200)}));
  }

  // Runs a reflector on its own thread until Stop().
  void StartReflector(ReflectorOptions options) {
    options.label_selector = kSelector;
    options.initial_backoff = absl::Milliseconds(50);
    options.max_backoff = absl::Milliseconds(500);
    reflector_ = std::make_unique<Reflector>(*client_, kJobs, "default",
                                             mirror_.Handlers(), options);
    thread_ = std::thread([this] {
      reflector_->Run(stop_);
      returned_ = true;
    });
  }

  // Stops the reflector; returns how long Run() took to return.
  absl::Duration Stop() {
    const absl::Time start = absl::Now();
    stop_ = true;
    thread_.join();
    return absl::Now() - start;
  }

  void TearDown() override {
    if (thread_.joinable()) Stop();
  }

  std::unique_ptr<FakeApiServer> server_;
  std::unique_ptr<Client> client_;
  Mirror mirror_;
  std::unique_ptr<Reflector> reflector_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> returned_{false};
  std::thread thread_;
};

TEST_F(ReflectorTest, SyncsThenFollowsEvents) {
  ASSERT_OK(client_->Create(kJobs, "default", Job("a")));
  ASSERT_OK(client_->Create(kJobs, "default", Job("b")));
  json unlabelled = Job("unlabelled");
  unlabelled["metadata"].erase("labels");
  ASSERT_OK(client_->Create(kJobs, "default", unlabelled));

  StartReflector({});
  ASSERT_TRUE(Eventually([&] { return mirror_.syncs() == 1; }));
  EXPECT_EQ(mirror_.names(), (std::set<std::string>{"a", "b"}));
  EXPECT_FALSE(reflector_->last_resource_version().empty());

  ASSERT_OK(client_->Create(kJobs, "default", Job("c")));
  ASSERT_OK(client_->Delete(kJobs, "default", "a"));
  ASSERT_TRUE(Eventually([&] {
    return mirror_.names() == std::set<std::string>{"b", "c"};
  })) << ::testing::PrintToString(mirror_.events());
  EXPECT_EQ(reflector_->list_count(), 1);

  const absl::Duration took = Stop();
  EXPECT_LT(took, absl::Seconds(1));
}

TEST_F(ReflectorTest, ResumesAfterWatchTimeoutWithoutRelisting) {
  StartReflector({.watch_timeout = absl::Seconds(1)});
  ASSERT_TRUE(Eventually([&] { return mirror_.syncs() == 1; }));
  ASSERT_OK(client_->Create(kJobs, "default", Job("before")));
  // Several watch requests end and start again meanwhile.
  absl::SleepFor(absl::Milliseconds(2500));
  ASSERT_OK(client_->Create(kJobs, "default", Job("after")));
  ASSERT_TRUE(Eventually([&] {
    return mirror_.names() == std::set<std::string>{"before", "after"};
  }));
  absl::SleepFor(absl::Milliseconds(1200));
  EXPECT_EQ(reflector_->list_count(), 1);
  // Resuming from the last version: each object was added exactly once.
  std::vector<std::string> added;
  for (const std::string& event : mirror_.events()) {
    if (absl::StartsWith(event, "ADDED ")) added.push_back(event);
  }
  EXPECT_THAT(added,
              ::testing::UnorderedElementsAre("ADDED before", "ADDED after"));

  ASSERT_OK_AND_ASSIGN(json requests, server_->Requests());
  int watches = 0;
  for (const json& request : requests) {
    const std::string query = request["query"];
    if (request["path"] == "/apis/batch/v1/namespaces/default/jobs" &&
        absl::StrContains(query, "watch=true")) {
      ++watches;
      EXPECT_TRUE(absl::StrContains(query, "resourceVersion="));
      EXPECT_TRUE(absl::StrContains(query, "allowWatchBookmarks=true"));
      EXPECT_TRUE(absl::StrContains(query, "timeoutSeconds=1"));
    }
  }
  EXPECT_GE(watches, 3);
}

TEST_F(ReflectorTest, BookmarksAdvanceTheResourceVersion) {
  StartReflector({});
  ASSERT_TRUE(Eventually([&] { return mirror_.syncs() == 1; }));
  // A change the selector filters out moves the server's version; only a
  // BOOKMARK (the fixture sends one a second) tells the reflector.
  json unlabelled = Job("unlabelled");
  unlabelled["metadata"].erase("labels");
  ASSERT_OK_AND_ASSIGN(json created,
                       client_->Create(kJobs, "default", unlabelled));
  // resourceVersions are opaque to clients; the fixture's are counters,
  // and the Job controller may have moved it further since.
  const int64_t rv =
      std::stoll(created["metadata"]["resourceVersion"].get<std::string>());
  EXPECT_TRUE(Eventually(
      [&] { return std::stoll(reflector_->last_resource_version()) >= rv; },
      absl::Seconds(5)))
      << reflector_->last_resource_version() << " < " << rv;
  EXPECT_TRUE(mirror_.events().empty());
}

TEST_F(ReflectorTest, RelistsAfterCompactionAndConverges) {
  ASSERT_OK(client_->Create(kJobs, "default", Job("a")));
  ASSERT_OK(client_->Create(kJobs, "default", Job("b")));
  StartReflector({});
  ASSERT_TRUE(Eventually([&] { return mirror_.syncs() == 1; }));
  EXPECT_EQ(reflector_->list_count(), 1);

  // Open watches get 410 Gone: only a new LIST can tell what they missed.
  ASSERT_OK(server_->Compact(/*close_watches=*/true));
  ASSERT_TRUE(Eventually([&] { return reflector_->list_count() == 2; }));
  EXPECT_EQ(mirror_.syncs(), 2);

  ASSERT_OK(client_->Create(kJobs, "default", Job("c")));
  ASSERT_OK(client_->Delete(kJobs, "default", "a"));
  ASSERT_TRUE(Eventually([&] {
    return mirror_.names() == std::set<std::string>{"b", "c"};
  })) << ::testing::PrintToString(mirror_.events());
  EXPECT_LT(Stop(), absl::Seconds(1));
}

TEST_F(ReflectorTest, KeepsRetryingWhileTheServerIsDownUntilStopped) {
  StartReflector({});
  ASSERT_TRUE(Eventually([&] { return mirror_.syncs() == 1; }));
  server_->Kill();
  absl::SleepFor(absl::Milliseconds(800));
  EXPECT_FALSE(returned_.load());
  EXPECT_LT(Stop(), absl::Seconds(2));
}

}  // namespace
}  // namespace kq::shim::kube
