// kqd's HTTP port on a real engine: the probes, and /metrics as Prometheus
// fetches it.

#include "server/http/kqd_endpoint.h"

#include <httplib.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "base/metrics.h"
#include "server/engine/engine.h"
#include "server/metrics/kqd_metrics.h"
#include "server/store/memory_store.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status_matchers.h"

namespace kq::http {
namespace {

using ::testing::HasSubstr;

TEST(KqdEndpointTest, ProbesAndMetrics) {
  store::MemoryStore store;
  kq::testing::FakeClock clock;
  engine::Engine engine(store, clock);
  metrics::KqdMetrics metrics(engine);
  KqdEndpoint endpoint(engine, metrics);
  ASSERT_OK(endpoint.Start({"127.0.0.1", 0}));
  httplib::Client client("127.0.0.1", endpoint.port());

  // Serving before the state is loaded: alive, not ready.
  auto healthz = client.Get("/healthz");
  ASSERT_TRUE(healthz);
  EXPECT_EQ(healthz->status, 200);
  auto readyz = client.Get("/readyz");
  ASSERT_TRUE(readyz);
  EXPECT_EQ(readyz->status, 503);
  EXPECT_THAT(readyz->body, HasSubstr("not ready"));

  ASSERT_OK(engine.Start());
  metrics.Start();
  readyz = client.Get("/readyz");
  ASSERT_TRUE(readyz);
  EXPECT_EQ(readyz->status, 200);

  auto scrape = client.Get("/metrics");
  ASSERT_TRUE(scrape);
  EXPECT_EQ(scrape->status, 200);
  EXPECT_EQ(scrape->get_header_value("Content-Type"), kPrometheusContentType);
  EXPECT_THAT(scrape->body, HasSubstr("# TYPE kueue_build_info gauge"));
  EXPECT_THAT(scrape->body, HasSubstr("process_resident_memory_bytes"));

  // Kueue's visibility API on the same port.
  auto unknown = client.Get(
      "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/nope/"
      "pendingworkloads");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(unknown->get_header_value("Content-Type"), kJsonContentType);
  EXPECT_THAT(unknown->body, HasSubstr("\"kind\":\"Status\""));
  EXPECT_THAT(unknown->body, HasSubstr("nope"));
  auto bad_limit = client.Get(
      "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/nope/"
      "pendingworkloads?limit=x");
  ASSERT_TRUE(bad_limit);
  EXPECT_EQ(bad_limit->status, 400);
  EXPECT_THAT(bad_limit->body, HasSubstr("limit"));
  auto write = client.Delete(
      "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/nope/"
      "pendingworkloads");
  ASSERT_TRUE(write);
  EXPECT_EQ(write->status, 405);

  auto missing = client.Get("/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  metrics.Stop();
  endpoint.Stop();
  engine.Stop();
}

TEST(KqdEndpointTest, ATakenPortIsAClearError) {
  store::MemoryStore store;
  kq::testing::FakeClock clock;
  engine::Engine engine(store, clock);
  metrics::KqdMetrics metrics(engine);
  KqdEndpoint first(engine, metrics);
  ASSERT_OK(first.Start({"127.0.0.1", 0}));
  KqdEndpoint second(engine, metrics);
  const absl::Status status = second.Start({"127.0.0.1", first.port()});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("cannot bind"));
}

TEST(HostPortTest, Parses) {
  ASSERT_OK_AND_ASSIGN(HostPort hp, ParseHostPort("--http-listen", "[::1]:80"));
  EXPECT_EQ(hp.host, "::1");
  EXPECT_EQ(hp.port, 80);
  EXPECT_THAT(ParseHostPort("--http-listen", "8080").status().message(),
              HasSubstr("--http-listen: want host:port"));
  EXPECT_THAT(
      ParseHostPort("--http-listen", "localhost:99999").status().message(),
      HasSubstr("the port is not a number from 0 to 65535"));
  EXPECT_THAT(ParseHostPort("--http-listen", ":80").status().message(),
              HasSubstr("the host is empty"));
}

}  // namespace
}  // namespace kq::http
