#include "server/auth/audit_log.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "spdlog/details/log_msg.h"
#include "spdlog/sinks/rotating_file_sink.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace kq::auth {
namespace {

std::string Timestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

nlohmann::json UserJson(const UserInfo& user) {
  nlohmann::json out = {{"username", user.name}};
  if (!user.groups.empty()) out["groups"] = user.groups;
  return out;
}

}  // namespace

std::string NewAuditId() {
  thread_local std::mt19937_64 random(std::random_device{}());
  const uint64_t hi = random();
  const uint64_t lo = random();
  // Version 4, variant 10xx.
  return absl::StrFormat(
      "%08x-%04x-4%03x-%04x-%012x", hi >> 32, (hi >> 16) & 0xffff, hi & 0xfff,
      0x8000 | ((lo >> 48) & 0x3fff), lo & 0xffffffffffffULL);
}

std::string AuditEventJson(const AuditEvent& e) {
  nlohmann::json out = {
      {"kind", "Event"},
      {"apiVersion", "audit.k8s.io/v1"},
      {"level", "Metadata"},
      {"auditID", e.audit_id},
      {"stage", "ResponseComplete"},
      {"requestURI", e.method},
      {"method", e.method},
      {"verb", e.verb},
  };
  if (e.principal.has_value()) {
    if (e.principal->impersonator.has_value()) {
      out["user"] = UserJson(*e.principal->impersonator);
      out["impersonatedUser"] = UserJson(e.principal->user);
    } else {
      out["user"] = UserJson(e.principal->user);
    }
  } else {
    out["user"] = {{"username", ""}};
  }
  out["sourceIPs"] = nlohmann::json::array();
  if (!e.source_ip.empty()) out["sourceIPs"].push_back(e.source_ip);
  if (!e.user_agent.empty()) out["userAgent"] = e.user_agent;
  if (!e.resource.empty()) {
    nlohmann::json ref = {{"resource", e.resource}};
    if (!e.subresource.empty()) ref["subresource"] = e.subresource;
    ref["namespace"] = e.namespace_name;
    if (!e.name.empty()) ref["name"] = e.name;
    if (!e.api_group.empty()) ref["apiGroup"] = e.api_group;
    out["objectRef"] = std::move(ref);
  }
  out["responseStatus"] = {{"code", e.code}};
  if (!e.message.empty()) out["responseStatus"]["message"] = e.message;
  out["requestReceivedTimestamp"] = Timestamp(e.received);
  out["stageTimestamp"] = Timestamp(e.completed);
  nlohmann::json annotations = {
      {"authorization.k8s.io/decision", e.allowed ? "allow" : "forbid"},
  };
  if (!e.reason.empty()) annotations["authorization.k8s.io/reason"] = e.reason;
  if (e.principal.has_value()) {
    annotations["authentication.kq.dev/method"] =
        AuthMethodName(e.principal->method);
  }
  out["annotations"] = std::move(annotations);
  // Invalid UTF-8 from a client (a name, a user agent) is replaced, never
  // allowed to throw.
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(
    const AuditLogOptions& options, AuthMetrics* metrics) {
  std::shared_ptr<spdlog::sinks::sink> sink;
  try {
    if (options.path == "-") {
      sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    } else {
      sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
          options.path,
          static_cast<size_t>(std::max(1, options.max_size_mb)) << 20,
          static_cast<size_t>(std::max(0, options.max_backups)));
    }
  } catch (const spdlog::spdlog_ex& e) {
    return absl::FailedPreconditionError(
        absl::StrCat("--audit-log: ", e.what()));
  }
  sink->set_pattern("%v");
  return std::unique_ptr<AuditLog>(new AuditLog(options, sink, metrics));
}

AuditLog::AuditLog(const AuditLogOptions& options,
                   std::shared_ptr<spdlog::sinks::sink> sink,
                   AuthMetrics* metrics)
    : options_(options), sink_(std::move(sink)), metrics_(metrics) {
  writer_ = std::thread([this] { Run(); });
}

AuditLog::~AuditLog() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  writer_.join();
}

void AuditLog::Record(AuditEvent event) {
  {
    absl::MutexLock lock(&mu_);
    if (queue_.size() < options_.queue_capacity) {
      queue_.push_back(std::move(event));
      ++recorded_;
      return;
    }
    ++dropped_;
  }
  if (metrics_ != nullptr) metrics_->AuditDropped();
}

void AuditLog::Flush() {
  absl::MutexLock lock(&mu_);
  struct Until {
    AuditLog* self;
    uint64_t recorded;
  } until{this, recorded_};
  mu_.Await(absl::Condition(
      +[](Until* u) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return u->self->written_ >= u->recorded;
      },
      &until));
}

uint64_t AuditLog::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

void AuditLog::Run() {
  std::deque<AuditEvent> batch;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](AuditLog* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty() && stopping_) return;
      batch.swap(queue_);
    }
    for (const AuditEvent& event : batch) {
      const std::string line = AuditEventJson(event);
      spdlog::details::log_msg msg(spdlog::string_view_t(), spdlog::level::info,
                                   line);
      try {
        sink_->log(msg);
      } catch (const spdlog::spdlog_ex& e) {
        spdlog::error("--audit-log: {}", e.what());
      }
      if (metrics_ != nullptr) metrics_->AuditWritten();
    }
    try {
      sink_->flush();
    } catch (const spdlog::spdlog_ex& e) {
      spdlog::error("--audit-log: {}", e.what());
    }
    absl::MutexLock lock(&mu_);
    written_ += batch.size();
    batch.clear();
  }
}

}  // namespace kq::auth
