// The client's HTTP behaviour that the API server fixture cannot provoke
// (5xx, 429 with Retry-After, broken and malformed watch streams), against
// a scripted plain-HTTP server on 127.0.0.1.

#include "shim/kube/transport.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "shim/kube/client.h"
#include "tests/testing/status_matchers.h"

namespace kq::shim::kube {
namespace {

using ::kq::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An httplib server on a free loopback port, for one test.
class ScriptedServer {
 public:
  ScriptedServer() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~ScriptedServer() {
    closing_ = true;
    server_.stop();
    thread_.join();
  }
  httplib::Server& server() { return server_; }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  // True once the test is over: streaming handlers end.
  const std::atomic<bool>& closing() const { return closing_; }

  void Record(const httplib::Request& request) {
    absl::MutexLock lock(&mu_);
    requests_.push_back(request);
  }
  std::vector<httplib::Request> requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> closing_{false};
  absl::Mutex mu_;
  std::vector<httplib::Request> requests_ ABSL_GUARDED_BY(mu_);
};

ClientOptions FastRetries(int max_attempts = 5) {
  return ClientOptions{.request_timeout = absl::Seconds(5),
                       .max_attempts = max_attempts,
                       .initial_backoff = absl::Milliseconds(1),
                       .max_backoff = absl::Milliseconds(5)};
}

std::unique_ptr<Client> NewClient(const std::string& url,
                                  ClientOptions options = FastRetries()) {
  Config config;
  config.server = url;
  config.bearer_token = "t";
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Create(config, options);
  EXPECT_TRUE(client.ok()) << client.status();
  return std::move(*client);
}

std::string StatusBody(int code, const std::string& reason,
                       const std::string& message) {
  return json{{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
              {"message", message}, {"reason", reason},   {"code", code}}
      .dump();
}

TEST(ResourcePathTest, CoreNamedAndClusterWide) {
  EXPECT_EQ(ResourcePath(kJobs, "ns", "a"),
            "/apis/batch/v1/namespaces/ns/jobs/a");
  EXPECT_EQ(ResourcePath(kJobs, "ns"), "/apis/batch/v1/namespaces/ns/jobs");
  EXPECT_EQ(ResourcePath(kJobs, ""), "/apis/batch/v1/jobs");
  EXPECT_EQ(ResourcePath(kEvents, "kube-system", "e.1"),
            "/api/v1/namespaces/kube-system/events/e.1");
  EXPECT_EQ(ResourcePath(kProvisioningRequests, "ns", "pr"),
            "/apis/autoscaling.x-k8s.io/v1/namespaces/ns/provisioningrequests/"
            "pr");
  const Resource namespaces{"", "v1", "namespaces", false};
  EXPECT_EQ(ResourcePath(namespaces, "ignored", "kq"), "/api/v1/namespaces/kq");
}

TEST(QueryEscapeTest, EscapesSelectorSyntax) {
  EXPECT_EQ(QueryEscape("kueue.x-k8s.io/queue-name"),
            "kueue.x-k8s.io%2Fqueue-name");
  EXPECT_EQ(QueryEscape("a=b,c!=d,e in (f g)"),
            "a%3Db%2Cc%21%3Dd%2Ce%20in%20%28f%20g%29");
  EXPECT_EQ(QueryEscape("Az09-._~"), "Az09-._~");
}

struct StatusCase {
  std::string name;
  std::string method;
  int http_status;
  std::string reason;
  absl::StatusCode want;

  friend void PrintTo(const StatusCase& tc, std::ostream* os) {
    *os << tc.name;
  }
};

class StatusFromHttpTest : public ::testing::TestWithParam<StatusCase> {};

TEST_P(StatusFromHttpTest, MapsCodeAndKeepsMessage) {
  const StatusCase& tc = GetParam();
  HttpRequest request{.method = tc.method,
                      .path = "/apis/batch/v1/namespaces/ns/jobs/a?x=1"};
  absl::Status status = StatusFromHttp(
      request, tc.http_status, StatusBody(tc.http_status, tc.reason, "boom"));
  EXPECT_EQ(status.code(), tc.want) << status;
  EXPECT_THAT(status.message(),
              HasSubstr(tc.method +
                        " /apis/batch/v1/namespaces/ns/jobs/a: "
                        "boom (HTTP " +
                        std::to_string(tc.http_status)));
  EXPECT_THAT(status.message(), ::testing::Not(HasSubstr("x=1")));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StatusFromHttpTest,
    ::testing::ValuesIn(std::vector<StatusCase>{
        {"not_found", "GET", 404, "NotFound", absl::StatusCode::kNotFound},
        {"already_exists", "POST", 409, "AlreadyExists",
         absl::StatusCode::kAlreadyExists},
        {"conflict_on_update", "PUT", 409, "Conflict",
         absl::StatusCode::kAborted},
        {"conflict_on_delete_precondition", "DELETE", 409, "Conflict",
         absl::StatusCode::kAborted},
        {"conflict_without_reason_on_create", "POST", 409, "",
         absl::StatusCode::kAlreadyExists},
        {"conflict_without_reason_on_patch", "PATCH", 409, "",
         absl::StatusCode::kAborted},
        {"gone", "GET", 410, "Expired", absl::StatusCode::kOutOfRange},
        {"bad_request", "POST", 400, "BadRequest",
         absl::StatusCode::kInvalidArgument},
        {"invalid", "PUT", 422, "Invalid", absl::StatusCode::kInvalidArgument},
        {"unauthorized", "GET", 401, "Unauthorized",
         absl::StatusCode::kUnauthenticated},
        {"forbidden", "GET", 403, "Forbidden",
         absl::StatusCode::kPermissionDenied},
        {"method_not_allowed", "PATCH", 405, "MethodNotAllowed",
         absl::StatusCode::kUnimplemented},
        {"unsupported_media_type", "PATCH", 415, "UnsupportedMediaType",
         absl::StatusCode::kInvalidArgument},
        {"too_many_requests", "GET", 429, "TooManyRequests",
         absl::StatusCode::kUnavailable},
        {"internal_error", "GET", 500, "InternalError",
         absl::StatusCode::kUnavailable},
        {"service_unavailable", "GET", 503, "ServiceUnavailable",
         absl::StatusCode::kUnavailable},
        {"teapot", "GET", 418, "", absl::StatusCode::kUnknown},
    }),
    [](const auto& info) { return info.param.name; });

TEST(StatusFromHttpTest, QuotesABodyThatIsNotAStatus) {
  absl::Status status = StatusFromHttp({.method = "GET", .path = "/version"},
                                       502, "<html>bad gateway</html>");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable,
                               HasSubstr("<html>bad gateway</html>")));
}

TEST(TransportTest, RetriesServerErrorsThenSucceeds) {
  ScriptedServer scripted;
  std::atomic<int> calls{0};
  scripted.server().Get(
      "/version", [&](const httplib::Request& req, httplib::Response& res) {
        scripted.Record(req);
        if (++calls <= 2) {
          res.status = 503;
          res.set_content(StatusBody(503, "ServiceUnavailable", "busy"),
                          "application/json");
          return;
        }
        res.set_content(R"({"gitVersion":"v1.30.1"})", "application/json");
      });
  std::unique_ptr<Client> client = NewClient(scripted.url());
  EXPECT_THAT(client->ServerVersion(), ::kq::testing::IsOkAndHolds("v1.30.1"));
  EXPECT_EQ(calls.load(), 3);
}

TEST(TransportTest, HonoursRetryAfter) {
  ScriptedServer scripted;
  std::atomic<int> calls{0};
  scripted.server().Get(
      "/version", [&](const httplib::Request&, httplib::Response& res) {
        if (++calls == 1) {
          res.status = 429;
          res.set_header("Retry-After", "1");
          res.set_content(StatusBody(429, "TooManyRequests", "slow down"),
                          "application/json");
          return;
        }
        res.set_content(R"({"gitVersion":"v1.30.1"})", "application/json");
      });
  // The backoff alone would retry after a millisecond.
  std::unique_ptr<Client> client = NewClient(scripted.url());
  const absl::Time start = absl::Now();
  EXPECT_OK(client->ServerVersion());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(950));
  EXPECT_EQ(calls.load(), 2);
}

TEST(TransportTest, GivesUpAfterMaxAttemptsWithUnavailable) {
  ScriptedServer scripted;
  std::atomic<int> calls{0};
  scripted.server().Post("/apis/batch/v1/namespaces/ns/jobs",
                         [&](const httplib::Request&, httplib::Response& res) {
                           ++calls;
                           res.status = 500;
                           res.set_content(
                               StatusBody(500, "InternalError", "etcd down"),
                               "application/json");
                         });
  std::unique_ptr<Client> client = NewClient(scripted.url(), FastRetries(3));
  EXPECT_THAT(
      client->Create(kJobs, "ns", json{{"metadata", {{"name", "a"}}}}),
      StatusIs(absl::StatusCode::kUnavailable,
               HasSubstr("POST /apis/batch/v1/namespaces/ns/jobs: etcd down "
                         "(HTTP 500 InternalError)")));
  EXPECT_EQ(calls.load(), 3);
}

TEST(TransportTest, NeverRetriesClientErrors) {
  for (int code : {400, 401, 403, 404, 409, 410, 422}) {
    SCOPED_TRACE(code);
    ScriptedServer scripted;
    std::atomic<int> calls{0};
    scripted.server().Get("/apis/batch/v1/namespaces/ns/jobs/a",
                          [&](const httplib::Request&, httplib::Response& res) {
                            ++calls;
                            res.status = code;
                            res.set_content(StatusBody(code, "", "no"),
                                            "application/json");
                          });
    std::unique_ptr<Client> client = NewClient(scripted.url());
    EXPECT_FALSE(client->Get(kJobs, "ns", "a").ok());
    EXPECT_EQ(calls.load(), 1);
  }
}

TEST(TransportTest, ConnectionRefusedIsUnavailableAfterRetries) {
  // A port that was free a moment ago and has no listener now.
  int port = 0;
  {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length),
              0);
    port = ntohs(address.sin_port);
    close(fd);
  }
  std::unique_ptr<Client> client =
      NewClient("http://127.0.0.1:" + std::to_string(port), FastRetries(2));
  EXPECT_THAT(client->ServerVersion(),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("(after 2 attempts)")));
}

TEST(TransportTest, ReusesConnections) {
  ScriptedServer scripted;
  scripted.server().Get(
      "/version", [&](const httplib::Request& req, httplib::Response& res) {
        scripted.Record(req);
        res.set_content(R"({"gitVersion":"v1"})", "application/json");
      });
  std::unique_ptr<Client> client = NewClient(scripted.url());
  for (int i = 0; i < 4; ++i) EXPECT_OK(client->ServerVersion());
  std::set<int> client_ports;
  for (const httplib::Request& req : scripted.requests()) {
    client_ports.insert(req.remote_port);
  }
  EXPECT_EQ(client_ports.size(), 1u);
}

TEST(TransportTest, ListFallsBackToAFullListWhenTheContinueTokenExpires) {
  ScriptedServer scripted;
  scripted.server().Get(
      "/apis/batch/v1/namespaces/ns/jobs",
      [&](const httplib::Request& req, httplib::Response& res) {
        scripted.Record(req);
        if (req.has_param("continue")) {
          res.status = 410;
          res.set_content(StatusBody(410, "Expired",
                                     "The provided continue parameter is too "
                                     "old"),
                          "application/json");
        } else if (req.has_param("limit")) {
          res.set_content(
              R"({"kind":"JobList","apiVersion":"batch/v1",
                  "metadata":{"resourceVersion":"5","continue":"tok"},
                  "items":[{"metadata":{"name":"a"}}]})",
              "application/json");
        } else {
          res.set_content(
              R"({"kind":"JobList","apiVersion":"batch/v1",
                  "metadata":{"resourceVersion":"9"},
                  "items":[{"metadata":{"name":"a"}},
                           {"metadata":{"name":"b"}}]})",
              "application/json");
        }
      });
  std::unique_ptr<Client> client = NewClient(scripted.url());
  ASSERT_OK_AND_ASSIGN(ListResult listed,
                       client->List(kJobs, "ns", {.limit = 1}));
  ASSERT_EQ(listed.items.size(), 2u);
  EXPECT_EQ(listed.items[1]["metadata"]["name"], "b");
  EXPECT_EQ(listed.items[1]["kind"], "Job");
  EXPECT_EQ(listed.resource_version, "9");
  std::vector<httplib::Request> got = scripted.requests();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].get_param_value("continue"), "tok");
  EXPECT_FALSE(got[2].has_param("limit"));
}

TEST(TransportTest, RequestTimeoutIsUnavailable) {
  ScriptedServer scripted;
  scripted.server().Get(
      "/version", [&](const httplib::Request&, httplib::Response& res) {
        for (int i = 0; i < 100 && !scripted.closing(); ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        res.set_content("{}", "application/json");
      });
  ClientOptions options = FastRetries(1);
  options.request_timeout = absl::Milliseconds(200);
  std::unique_ptr<Client> client = NewClient(scripted.url(), options);
  const absl::Time start = absl::Now();
  EXPECT_THAT(client->ServerVersion(),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(900));
}

TEST(TransportTest, SendsVerbsHeadersAndBodies) {
  ScriptedServer scripted;
  auto echo = [&](const httplib::Request& req, httplib::Response& res) {
    scripted.Record(req);
    res.set_content(R"({"kind":"Status","status":"Success"})",
                    "application/json");
  };
  scripted.server().Patch("/apis/batch/v1/namespaces/ns/jobs/a", echo);
  scripted.server().Put("/apis/batch/v1/namespaces/ns/jobs/a", echo);
  scripted.server().Delete("/apis/batch/v1/namespaces/ns/jobs/a", echo);
  std::unique_ptr<Client> client = NewClient(scripted.url());

  EXPECT_OK(client->Patch(kJobs, "ns", "a", PatchType::kMergePatch,
                          json{{"spec", {{"suspend", false}}}}));
  EXPECT_OK(client->Patch(kJobs, "ns", "a", PatchType::kStrategicMerge,
                          json{{"spec", {{"suspend", true}}}}));
  EXPECT_OK(client->Patch(
      kJobs, "ns", "a", PatchType::kJsonPatch,
      json::array(
          {{{"op", "replace"}, {"path", "/spec/suspend"}, {"value", true}}})));
  // An empty namespace takes the object's own.
  EXPECT_OK(client->Update(
      kJobs, "",
      json{{"metadata",
            {{"name", "a"}, {"namespace", "ns"}, {"resourceVersion", "7"}}}}));
  EXPECT_OK(client->Delete(kJobs, "ns", "a", "uid-1"));

  std::vector<httplib::Request> got = scripted.requests();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].method, "PATCH");
  EXPECT_EQ(got[0].get_header_value("Content-Type"),
            "application/merge-patch+json");
  EXPECT_EQ(json::parse(got[0].body),
            json::parse(R"({"spec":{"suspend":false}})"));
  EXPECT_EQ(got[1].get_header_value("Content-Type"),
            "application/strategic-merge-patch+json");
  EXPECT_EQ(got[2].get_header_value("Content-Type"),
            "application/json-patch+json");
  EXPECT_EQ(got[3].method, "PUT");
  EXPECT_EQ(json::parse(got[3].body)["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(got[4].method, "DELETE");
  EXPECT_EQ(json::parse(got[4].body),
            json::parse(R"({"apiVersion":"v1","kind":"DeleteOptions",
                            "propagationPolicy":"Background",
                            "preconditions":{"uid":"uid-1"}})"));
  for (const httplib::Request& req : got) {
    EXPECT_EQ(req.get_header_value("Authorization"), "Bearer t");
    EXPECT_EQ(req.get_header_value("Accept"), "application/json");
    EXPECT_EQ(req.get_header_value("User-Agent"), "kq-k8s-shim");
  }
}

TEST(TransportTest, RereadsTheTokenFileOnEveryRequest) {
  ScriptedServer scripted;
  scripted.server().Get(
      "/version", [&](const httplib::Request& req, httplib::Response& res) {
        scripted.Record(req);
        res.set_content(R"({"gitVersion":"v1"})", "application/json");
      });
  const std::string token_file = (std::filesystem::temp_directory_path() /
                                  ("kq-token-" + std::to_string(getpid())))
                                     .string();
  std::ofstream(token_file) << "first\n";
  Config config;
  config.server = scripted.url();
  config.bearer_token_file = token_file;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Create(config, FastRetries()));
  EXPECT_OK(client->ServerVersion());
  std::ofstream(token_file) << "second";
  EXPECT_OK(client->ServerVersion());
  std::filesystem::remove(token_file);
  // Unreadable: UNAUTHENTICATED, never NOT_FOUND (which means "object gone").
  EXPECT_THAT(
      client->ServerVersion(),
      StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr(token_file)));
  std::vector<httplib::Request> got = scripted.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].get_header_value("Authorization"), "Bearer first");
  EXPECT_EQ(got[1].get_header_value("Authorization"), "Bearer second");
}

TEST(TransportTest, CreateChecksFilesAndUrl) {
  Config no_scheme;
  no_scheme.server = "127.0.0.1:6443";
  EXPECT_THAT(Client::Create(no_scheme),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("127.0.0.1:6443")));
  Config missing_ca;
  missing_ca.server = "https://127.0.0.1:6443";
  missing_ca.certificate_authority_file = "/nonexistent/ca.crt";
  EXPECT_THAT(Client::Create(missing_ca),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("/nonexistent/ca.crt")));
  Config cert_without_key;
  cert_without_key.server = "https://127.0.0.1:6443";
  cert_without_key.client_certificate_data = "PEM";
  EXPECT_THAT(Client::Create(cert_without_key),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// Watch streams served line by line, to check the client's framing.
class WatchStreamTest : public ::testing::Test {
 protected:
  // Serves `chunks` as one chunked watch response, then ends it (or, with
  // `hold`, stays silent until the test ends).
  void Serve(std::vector<std::string> chunks, bool hold = false) {
    scripted_.server().Get(
        "/apis/batch/v1/namespaces/ns/jobs",
        [this, chunks, hold](const httplib::Request& req,
                             httplib::Response& res) {
          scripted_.Record(req);
          res.set_chunked_content_provider(
              "application/json",
              [this, chunks, hold](size_t, httplib::DataSink& sink) {
                for (const std::string& chunk : chunks) {
                  sink.write(chunk.data(), chunk.size());
                  std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
                while (hold && !scripted_.closing() && sink.is_writable()) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(10));
                }
                sink.done();
                return true;
              });
        });
    client_ = NewClient(scripted_.url());
  }

  absl::Status Watch(const WatchOptions& options,
                     std::function<bool(const WatchEvent&)> on_event = {}) {
    return client_->Watch(kJobs, "ns", options, [&](const WatchEvent& event) {
      seen_.push_back(event);
      return on_event ? on_event(event) : true;
    });
  }

  static std::string Event(const std::string& type, const std::string& name,
                           const std::string& rv) {
    return json{{"type", type},
                {"object",
                 {{"kind", "Job"},
                  {"metadata", {{"name", name}, {"resourceVersion", rv}}}}}}
               .dump() +
           "\n";
  }

  static std::string ErrorEvent(int code, const std::string& reason,
                                const std::string& message) {
    json event = {{"type", "ERROR"},
                  {"object", json::parse(StatusBody(code, reason, message))}};
    return event.dump() + "\n";
  }

  ScriptedServer scripted_;
  std::unique_ptr<Client> client_;
  std::vector<WatchEvent> seen_;
};

TEST_F(WatchStreamTest, ReassemblesEventsSplitAcrossChunks) {
  const std::string added = Event("ADDED", "a", "10");
  const std::string modified = Event("MODIFIED", "a", "11");
  const std::string bookmark =
      R"({"type":"BOOKMARK","object":{"kind":"Job","metadata":{"resourceVersion":"12"}}})";
  // Cut mid-event, two events in one chunk, and no final newline.
  Serve({added.substr(0, 7), added.substr(7) + modified.substr(0, 20),
         modified.substr(20), bookmark});
  EXPECT_OK(Watch({.label_selector = "kueue.x-k8s.io/queue-name",
                   .resource_version = "9",
                   .timeout = absl::Seconds(30)}));
  ASSERT_EQ(seen_.size(), 3u);
  EXPECT_EQ(seen_[0].type, WatchEventType::kAdded);
  EXPECT_EQ(seen_[0].object["metadata"]["resourceVersion"], "10");
  EXPECT_EQ(seen_[1].type, WatchEventType::kModified);
  EXPECT_EQ(seen_[2].type, WatchEventType::kBookmark);
  EXPECT_EQ(seen_[2].object["metadata"]["resourceVersion"], "12");

  std::vector<httplib::Request> got = scripted_.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].get_param_value("watch"), "true");
  EXPECT_EQ(got[0].get_param_value("resourceVersion"), "9");
  EXPECT_EQ(got[0].get_param_value("allowWatchBookmarks"), "true");
  EXPECT_EQ(got[0].get_param_value("timeoutSeconds"), "30");
  EXPECT_EQ(got[0].get_param_value("labelSelector"),
            "kueue.x-k8s.io/queue-name");
}

TEST_F(WatchStreamTest, ExpiredErrorEventIsOutOfRange) {
  Serve({Event("ADDED", "a", "10"),
         ErrorEvent(410, "Expired", "too old resource version: 5 (10)"),
         Event("ADDED", "never", "11")});
  EXPECT_THAT(Watch({.resource_version = "5"}),
              StatusIs(absl::StatusCode::kOutOfRange,
                       HasSubstr("too old resource version")));
  ASSERT_EQ(seen_.size(), 1u);
}

TEST_F(WatchStreamTest, OtherErrorEventsMapLikeHttpStatuses) {
  Serve({ErrorEvent(500, "InternalError", "etcd watch failed")});
  EXPECT_THAT(Watch({}), StatusIs(absl::StatusCode::kUnavailable,
                                  HasSubstr("etcd watch failed")));
}

TEST_F(WatchStreamTest, MalformedEventIsInternal) {
  Serve({Event("ADDED", "a", "10"), "{not json\n"});
  EXPECT_THAT(Watch({}), StatusIs(absl::StatusCode::kInternal,
                                  HasSubstr("malformed event")));
  EXPECT_EQ(seen_.size(), 1u);
}

TEST_F(WatchStreamTest, HandlerReturningFalseEndsWithOk) {
  Serve({Event("ADDED", "a", "10"), Event("ADDED", "b", "11")}, /*hold=*/true);
  EXPECT_OK(Watch({}, [](const WatchEvent&) { return false; }));
  EXPECT_EQ(seen_.size(), 1u);
}

TEST_F(WatchStreamTest, StopWhileIdleReturnsCancelledPromptly) {
  Serve({Event("ADDED", "a", "10")}, /*hold=*/true);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> stopped_at_ns{0};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    stopped_at_ns = absl::GetCurrentTimeNanos();
    stop = true;
  });
  EXPECT_THAT(Watch({.stop = &stop}), StatusIs(absl::StatusCode::kCancelled));
  const int64_t returned_at_ns = absl::GetCurrentTimeNanos();
  stopper.join();
  EXPECT_EQ(seen_.size(), 1u);
  RecordProperty("stop_latency_ms",
                 (returned_at_ns - stopped_at_ns.load()) / 1'000'000);
  EXPECT_LT(returned_at_ns - stopped_at_ns.load(), 300'000'000)
      << "stop took " << (returned_at_ns - stopped_at_ns.load()) / 1'000'000
      << " ms";
}

TEST_F(WatchStreamTest, RetriesBeforeTheStreamStarts) {
  std::atomic<int> calls{0};
  scripted_.server().Get(
      "/apis/batch/v1/namespaces/ns/jobs",
      [&](const httplib::Request&, httplib::Response& res) {
        if (++calls == 1) {
          res.status = 503;
          res.set_content(StatusBody(503, "ServiceUnavailable", "starting"),
                          "application/json");
          return;
        }
        res.set_content(Event("ADDED", "a", "10"), "application/json");
      });
  client_ = NewClient(scripted_.url());
  EXPECT_OK(Watch({}));
  EXPECT_EQ(calls.load(), 2);
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].object["metadata"]["name"], "a");
}

TEST_F(WatchStreamTest, ForbiddenWatchIsPermissionDenied) {
  scripted_.server().Get(
      "/apis/batch/v1/namespaces/ns/jobs",
      [](const httplib::Request&, httplib::Response& res) {
        res.status = 403;
        res.set_content(StatusBody(403, "Forbidden", "jobs.batch is forbidden"),
                        "application/json");
      });
  client_ = NewClient(scripted_.url());
  EXPECT_THAT(Watch({}), StatusIs(absl::StatusCode::kPermissionDenied,
                                  HasSubstr("jobs.batch is forbidden")));
  EXPECT_TRUE(seen_.empty());
}

}  // namespace
}  // namespace kq::shim::kube
