#include "shim/webhook/server.h"

#include <dirent.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "base/metrics.h"
#include "tests/testing/status_matchers.h"

namespace kq::shim::webhook {
namespace {

using ::kq::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A CA and a serving certificate for 127.0.0.1 signed by it, made once per
// test binary with the openssl CLI.
class Certificates {
 public:
  static const Certificates& Get() {
    // Destroyed at exit, which removes the directory.
    static const Certificates certificates;
    return certificates;
  }
  ~Certificates() {
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  std::string ca() const { return dir_ + "/ca.crt"; }
  std::string cert() const { return dir_ + "/tls.crt"; }
  std::string key() const { return dir_ + "/tls.key"; }
  std::string other_ca() const { return dir_ + "/other-ca.crt"; }
  bool ok() const { return ok_; }

 private:
  Certificates() {
    char pattern[] = "/tmp/kq-webhook-test-XXXXXX";
    const char* dir = mkdtemp(pattern);
    if (dir == nullptr) return;
    dir_ = dir;
    std::ofstream(dir_ + "/ext.cnf")
        << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        << "extendedKeyUsage=serverAuth\n";
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1";
    const std::string script = absl::StrCat(
        "cd ", dir_, " && (openssl req -x509 -nodes ", ec,
        " -keyout ca.key -out ca.crt -days 1 -subj /CN=kq-test-ca"
        " -addext basicConstraints=critical,CA:TRUE"
        " -addext keyUsage=critical,keyCertSign,cRLSign && ",
        "openssl req -x509 -nodes ", ec,
        " -keyout other-ca.key -out other-ca.crt -days 1 -subj /CN=other-ca"
        " -addext basicConstraints=critical,CA:TRUE && ",
        "openssl req -nodes ", ec,
        " -keyout tls.key -out tls.csr -subj /CN=kq-webhook && ",
        "openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key"
        " -CAcreateserial -out tls.crt -days 1 -extfile ext.cnf",
        ") >/dev/null 2>openssl.log");
    ok_ = std::system(script.c_str()) == 0;
  }

  std::string dir_;
  bool ok_ = false;
};

json Review(const json& object) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "b1c2"},
            {"namespace", "team-a"},
            {"operation", "CREATE"},
            {"object", object}}}};
}

json LabelledRunningJob() {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", "train"},
            {"namespace", "team-a"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "team-a-queue"}}}}},
          {"spec",
           {{"parallelism", 2},
            {"template",
             {{"spec",
               {{"restartPolicy", "Never"},
                {"containers", {{{"name", "c"}, {"image", "pause"}}}}}}}}}}};
}

int ThreadCount() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ++count;
    }
    closedir(dir);
  }
  return count;
}

// The thread count once it is back at `expected`, or after 2 s. A thread
// that was joined may still be listed under /proc/self/task for a moment
// (the kernel wakes the joiner before it has released the task).
int ThreadCountSettledAt(int expected) {
  const absl::Time deadline = absl::Now() + absl::Seconds(2);
  int count = ThreadCount();
  while (count != expected && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
    count = ThreadCount();
  }
  return count;
}

double RequestsTotal(const std::string& result) {
  return Metrics::Global().Value("kq_shim_webhook_requests_total",
                                 {{"result", result}});
}

class ShimServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Certificates::Get().ok())
        << "openssl could not make the test certificates";
  }

  ShimServerOptions Options() {
    ShimServerOptions options;
    options.address = "127.0.0.1";
    options.https_port = 0;
    options.http_port = 0;
    options.tls_cert_file = Certificates::Get().cert();
    options.tls_key_file = Certificates::Get().key();
    options.readiness = [this]() -> absl::Status {
      absl::MutexLock lock(&mu_);
      return not_ready_.empty() ? absl::OkStatus()
                                : absl::UnavailableError(not_ready_);
    };
    return options;
  }

  void SetNotReady(std::string reason) {
    absl::MutexLock lock(&mu_);
    not_ready_ = std::move(reason);
  }

  static std::unique_ptr<httplib::SSLClient> Https(int port) {
    auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    client->set_ca_cert_path(Certificates::Get().ca().c_str());
    client->enable_server_certificate_verification(true);
    client->set_connection_timeout(2, 0);
    client->set_read_timeout(5, 0);
    return client;
  }

  static std::unique_ptr<httplib::Client> Http(int port) {
    auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
    client->set_connection_timeout(2, 0);
    client->set_read_timeout(5, 0);
    return client;
  }

  absl::Mutex mu_;
  std::string not_ready_ ABSL_GUARDED_BY(mu_);
};

TEST_F(ShimServerTest, MutateRoundTripSuspendsTheJob) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  const double patched_before = RequestsTotal("patched");

  const json job = LabelledRunningJob();
  auto result = Https(server.https_port())
                    ->Post("/mutate-batch-v1-job", Review(job).dump(),
                           "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
  EXPECT_THAT(result->get_header_value("Content-Type"),
              StartsWith("application/json"));
  const json answer = json::parse(result->body);
  EXPECT_EQ(answer["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(answer["kind"], "AdmissionReview");
  EXPECT_EQ(answer["response"]["uid"], "b1c2");
  EXPECT_EQ(answer["response"]["allowed"], true);
  EXPECT_EQ(answer["response"]["patchType"], "JSONPatch");
  std::string patch;
  ASSERT_TRUE(absl::Base64Unescape(
      answer["response"]["patch"].get<std::string>(), &patch));
  json want = job;
  want["spec"]["suspend"] = true;
  EXPECT_EQ(job.patch(json::parse(patch)), want);
  EXPECT_EQ(RequestsTotal("patched"), patched_before + 1);
}

TEST_F(ShimServerTest, UnlabelledJobIsAllowedUnchanged) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  const double allowed_before = RequestsTotal("allowed");
  json job = LabelledRunningJob();
  job["metadata"].erase("labels");
  auto result = Https(server.https_port())
                    ->Post("/mutate-batch-v1-job", Review(job).dump(),
                           "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
  const json answer = json::parse(result->body);
  EXPECT_EQ(answer["response"]["allowed"], true);
  EXPECT_FALSE(answer["response"].contains("patch"));
  EXPECT_EQ(RequestsTotal("allowed"), allowed_before + 1);
}

TEST_F(ShimServerTest, MalformedJobIsDeniedInTheReview) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  const double denied_before = RequestsTotal("denied");
  json job = LabelledRunningJob();
  job["spec"]["suspend"] = "no";
  auto result = Https(server.https_port())
                    ->Post("/mutate-batch-v1-job", Review(job).dump(),
                           "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
  const json answer = json::parse(result->body);
  EXPECT_EQ(answer["response"]["allowed"], false);
  EXPECT_EQ(answer["response"]["status"]["code"], 400);
  EXPECT_EQ(RequestsTotal("denied"), denied_before + 1);
}

TEST_F(ShimServerTest, OtherContentTypeIs415) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  const double invalid_before = RequestsTotal("invalid");
  auto result = Https(server.https_port())
                    ->Post("/mutate-batch-v1-job",
                           Review(LabelledRunningJob()).dump(), "text/plain");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 415);
  const json answer = json::parse(result->body);
  EXPECT_EQ(answer["response"]["allowed"], false);
  EXPECT_THAT(answer["response"]["status"]["message"].get<std::string>(),
              HasSubstr("expected application/json"));
  EXPECT_EQ(RequestsTotal("invalid"), invalid_before + 1);

  // A charset parameter is still JSON.
  result =
      Https(server.https_port())
          ->Post("/mutate-batch-v1-job", Review(LabelledRunningJob()).dump(),
                 "application/json; charset=utf-8");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
}

TEST_F(ShimServerTest, BadJsonIs400) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  auto client = Https(server.https_port());
  auto result =
      client->Post("/mutate-batch-v1-job", "{not json", "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 400);
  EXPECT_EQ(json::parse(result->body)["response"]["allowed"], false);

  result = client->Post("/mutate-batch-v1-job", R"({"kind":"Job"})",
                        "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 400);
  EXPECT_THAT(json::parse(result->body)["response"]["status"]["message"]
                  .get<std::string>(),
              HasSubstr("not AdmissionReview"));
}

TEST_F(ShimServerTest, TlsIsVerifiedAgainstTheIssuingCa) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  httplib::SSLClient client("127.0.0.1", server.https_port());
  client.set_ca_cert_path(Certificates::Get().other_ca().c_str());
  client.enable_server_certificate_verification(true);
  auto result = client.Get("/healthz");
  EXPECT_FALSE(result);
  EXPECT_EQ(result.error(), httplib::Error::SSLServerVerification);
}

TEST_F(ShimServerTest, HealthzOnBothPorts) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  ASSERT_GT(server.https_port(), 0);
  ASSERT_GT(server.http_port(), 0);
  EXPECT_NE(server.https_port(), server.http_port());
  auto https = Https(server.https_port())->Get("/healthz");
  ASSERT_TRUE(https) << httplib::to_string(https.error());
  EXPECT_EQ(https->status, 200);
  EXPECT_EQ(https->body, "ok");
  auto http = Http(server.http_port())->Get("/healthz");
  ASSERT_TRUE(http) << httplib::to_string(http.error());
  EXPECT_EQ(http->status, 200);
  EXPECT_EQ(http->body, "ok");
}

TEST_F(ShimServerTest, WebhookIsNotServedOverPlainHttp) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  auto result =
      Http(server.http_port())
          ->Post("/mutate-batch-v1-job", Review(LabelledRunningJob()).dump(),
                 "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 404);
}

TEST_F(ShimServerTest, ReadyzFollowsTheCallback) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  auto http = Http(server.http_port());

  SetNotReady("Job informer not synced");
  auto result = http->Get("/readyz");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 503);
  EXPECT_THAT(result->body, HasSubstr("Job informer not synced"));

  SetNotReady("");
  result = http->Get("/readyz");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->body, "ok");

  SetNotReady("kqd unreachable");
  result = Https(server.https_port())->Get("/readyz");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 503);
  EXPECT_THAT(result->body, HasSubstr("kqd unreachable"));
}

TEST_F(ShimServerTest, ReadyWithoutCallback) {
  ShimServerOptions options = Options();
  options.readiness = nullptr;
  ShimServer server(std::move(options));
  ASSERT_OK(server.Start());
  auto result = Http(server.http_port())->Get("/readyz");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
}

TEST_F(ShimServerTest, MetricsRenderTheWebhookCounters) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  auto posted =
      Https(server.https_port())
          ->Post("/mutate-batch-v1-job", Review(LabelledRunningJob()).dump(),
                 "application/json");
  ASSERT_TRUE(posted) << httplib::to_string(posted.error());
  auto result = Http(server.http_port())->Get("/metrics");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(result->body,
              HasSubstr("# TYPE kq_shim_webhook_requests_total counter\n"));
  EXPECT_THAT(result->body,
              HasSubstr(absl::StrCat("kq_shim_webhook_requests_total{result="
                                     "\"patched\"} ",
                                     RequestsTotal("patched"), "\n")));
  EXPECT_THAT(
      result->body,
      HasSubstr(
          "# TYPE kq_shim_webhook_request_duration_seconds_total counter\n"));
  EXPECT_GT(
      Metrics::Global().Value("kq_shim_webhook_request_duration_seconds_total"),
      0);
}

TEST_F(ShimServerTest, HttpPortIsOptional) {
  ShimServerOptions options = Options();
  options.http_port = -1;
  ShimServer server(std::move(options));
  ASSERT_OK(server.Start());
  EXPECT_EQ(server.http_port(), -1);
  auto result = Https(server.https_port())->Get("/metrics");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
}

TEST_F(ShimServerTest, WithoutTheWebhookHealthIsStillServed) {
  ShimServerOptions options = Options();
  options.https_port = -1;
  options.tls_cert_file.clear();
  options.tls_key_file.clear();
  ShimServer server(std::move(options));
  ASSERT_OK(server.Start());
  EXPECT_EQ(server.https_port(), -1);
  auto health = Http(server.http_port())->Get("/healthz");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  auto mutate = Http(server.http_port())
                    ->Post("/mutate-batch-v1-job", "{}", "application/json");
  ASSERT_TRUE(mutate) << httplib::to_string(mutate.error());
  EXPECT_EQ(mutate->status, 404);
}

TEST_F(ShimServerTest, NothingToServeIsRefused) {
  ShimServerOptions options = Options();
  options.https_port = -1;
  options.http_port = -1;
  ShimServer server(std::move(options));
  EXPECT_EQ(server.Start().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ShimServerTest, StopClosesThePortsPromptlyAndJoinsEveryThread) {
  const int threads_before = ThreadCount();
  auto server = std::make_unique<ShimServer>(Options());
  ASSERT_OK(server->Start());
  const int https_port = server->https_port();
  const int http_port = server->http_port();
  EXPECT_GT(ThreadCount(), threads_before);

  // An idle keep-alive connection must not hold Stop() for long.
  auto keep_alive = Https(https_port);
  keep_alive->set_keep_alive(true);
  auto result = keep_alive->Get("/healthz");
  ASSERT_TRUE(result) << httplib::to_string(result.error());

  const auto start = std::chrono::steady_clock::now();
  server->Stop();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::milliseconds(2500));
  EXPECT_EQ(ThreadCountSettledAt(threads_before), threads_before);

  auto after_https = Https(https_port)->Get("/healthz");
  EXPECT_FALSE(after_https);
  auto after_http = Http(http_port)->Get("/healthz");
  EXPECT_FALSE(after_http);
  EXPECT_EQ(after_http.error(), httplib::Error::Connection);

  server->Stop();  // idempotent
  server.reset();
  EXPECT_EQ(ThreadCountSettledAt(threads_before), threads_before);
}

TEST_F(ShimServerTest, StopWithoutConnectionsIsImmediate) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  const auto start = std::chrono::steady_clock::now();
  server.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(500));
}

TEST_F(ShimServerTest, StartRefusesAMissingCertificate) {
  const int threads_before = ThreadCount();
  ShimServerOptions options = Options();
  options.tls_cert_file = "/nonexistent/tls.crt";
  ShimServer server(std::move(options));
  EXPECT_THAT(server.Start(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("/nonexistent/tls.crt")));
  EXPECT_EQ(ThreadCountSettledAt(threads_before), threads_before);

  ShimServerOptions no_key = Options();
  no_key.tls_key_file = "";
  EXPECT_THAT(ShimServer(std::move(no_key)).Start(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ShimServerTest, StartRefusesABusyPortAndLeavesNothingRunning) {
  ShimServer first(Options());
  ASSERT_OK(first.Start());
  const int threads_before = ThreadCount();

  ShimServerOptions busy_https = Options();
  busy_https.https_port = first.https_port();
  EXPECT_THAT(ShimServer(std::move(busy_https)).Start(),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(ThreadCountSettledAt(threads_before), threads_before);

  // The HTTPS listener binds first; when the HTTP port is busy it must be
  // released again.
  ShimServerOptions busy_http = Options();
  busy_http.http_port = first.http_port();
  {
    ShimServer second(std::move(busy_http));
    EXPECT_THAT(second.Start(), StatusIs(absl::StatusCode::kUnavailable));
    EXPECT_EQ(ThreadCountSettledAt(threads_before), threads_before);
  }
}

TEST_F(ShimServerTest, StartTwiceIsRefused) {
  ShimServer server(Options());
  ASSERT_OK(server.Start());
  EXPECT_THAT(server.Start(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(ShimServerTest, ExplicitPortIsUsed) {
  // Find a free port, release it, then ask for it explicitly.
  int port = 0;
  {
    ShimServerOptions probe = Options();
    probe.http_port = -1;
    ShimServer server(std::move(probe));
    ASSERT_OK(server.Start());
    port = server.https_port();
  }
  ShimServerOptions options = Options();
  options.https_port = port;
  options.http_port = -1;
  ShimServer server(std::move(options));
  ASSERT_OK(server.Start());
  EXPECT_EQ(server.https_port(), port);
  auto result = Https(port)->Get("/healthz");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
}

}  // namespace
}  // namespace kq::shim::webhook
