#include "server/auth/audit_log.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "tests/server/auth/test_certs.h"

namespace kq::auth {
namespace {

AuditEvent Denied() {
  AuditEvent e;
  e.audit_id = NewAuditId();
  e.received = absl::FromUnixMicros(1764676800000000);
  e.completed = e.received + absl::Milliseconds(2);
  Principal alice;
  alice.user = {"alice", {"team-a", kAuthenticatedGroup}};
  alice.method = AuthMethod::kX509;
  e.principal = alice;
  e.source_ip = "10.0.0.7";
  e.method = "/kq.v1.QueueService/CancelWorkload";
  e.verb = "cancel";
  e.api_group = "kueue.x-k8s.io";
  e.resource = "workloads";
  e.namespace_name = "team-b";
  e.name = "wb";
  e.code = 7;
  e.message = "user \"alice\" cannot cancel ...";
  e.reason = e.message;
  return e;
}

TEST(AuditLogTest, EventHasKubernetesAuditFields) {
  nlohmann::json j = nlohmann::json::parse(AuditEventJson(Denied()));
  EXPECT_EQ(j["kind"], "Event");
  EXPECT_EQ(j["apiVersion"], "audit.k8s.io/v1");
  EXPECT_EQ(j["level"], "Metadata");
  EXPECT_EQ(j["stage"], "ResponseComplete");
  EXPECT_EQ(j["user"]["username"], "alice");
  EXPECT_EQ(j["user"]["groups"][0], "team-a");
  EXPECT_EQ(j["verb"], "cancel");
  EXPECT_EQ(j["objectRef"]["resource"], "workloads");
  EXPECT_EQ(j["objectRef"]["namespace"], "team-b");
  EXPECT_EQ(j["objectRef"]["name"], "wb");
  EXPECT_EQ(j["responseStatus"]["code"], 7);
  EXPECT_EQ(j["sourceIPs"][0], "10.0.0.7");
  EXPECT_EQ(j["requestReceivedTimestamp"], "2025-12-02T12:00:00.000000Z");
  EXPECT_EQ(j["stageTimestamp"], "2025-12-02T12:00:00.002000Z");
  EXPECT_EQ(j["annotations"]["authorization.k8s.io/decision"], "forbid");
  EXPECT_EQ(j["annotations"]["authentication.kq.dev/method"], "x509");
  EXPECT_EQ(j["auditID"].get<std::string>().size(), 36u);
}

TEST(AuditLogTest, ImpersonationRecordsBothUsers) {
  AuditEvent e = Denied();
  e.principal->impersonator = UserInfo{"shim", {kAuthenticatedGroup}};
  nlohmann::json j = nlohmann::json::parse(AuditEventJson(e));
  EXPECT_EQ(j["user"]["username"], "shim");
  EXPECT_EQ(j["impersonatedUser"]["username"], "alice");
}

TEST(AuditLogTest, IdsAreDistinctVersion4Uuids) {
  const std::string a = NewAuditId();
  EXPECT_NE(a, NewAuditId());
  EXPECT_EQ(a[14], '4');
  EXPECT_NE(std::string("89ab").find(a[19]), std::string::npos);
}

TEST(AuditLogTest, WritesOneLinePerEvent) {
  const std::string path = testing::TempDir() + "/audit_test.log";
  std::remove(path.c_str());
  absl::StatusOr<std::unique_ptr<AuditLog>> log =
      AuditLog::Open({.path = path}, nullptr);
  ASSERT_TRUE(log.ok()) << log.status();
  for (int i = 0; i < 50; ++i) (*log)->Record(Denied());
  (*log)->Flush();
  std::vector<std::string> lines =
      absl::StrSplit(ReadAll(path), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 50u);
  for (const std::string& line : lines) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  }
  EXPECT_EQ((*log)->dropped(), 0u);
}

TEST(AuditLogTest, DropsAndCountsWhenTheQueueIsFull) {
  const std::string path = testing::TempDir() + "/audit_full.log";
  std::remove(path.c_str());
  absl::StatusOr<std::unique_ptr<AuditLog>> log =
      AuditLog::Open({.path = path, .queue_capacity = 1}, nullptr);
  ASSERT_TRUE(log.ok()) << log.status();
  for (int i = 0; i < 10000; ++i) (*log)->Record(Denied());
  (*log)->Flush();
  const size_t written =
      std::vector<std::string>(
          absl::StrSplit(ReadAll(path), '\n', absl::SkipEmpty()))
          .size();
  EXPECT_GT((*log)->dropped(), 0u);
  EXPECT_EQ(written + (*log)->dropped(), 10000u);
}

TEST(AuditLogTest, UnwritablePathIsRefused) {
  absl::StatusOr<std::unique_ptr<AuditLog>> log =
      AuditLog::Open({.path = "/proc/no/such/audit.log"}, nullptr);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(log.status().message().find("--audit-log"), std::string::npos);
}

}  // namespace
}  // namespace kq::auth
