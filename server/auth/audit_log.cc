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

// Appends `text` as a JSON string. Most of what an event holds (names,
// verbs, methods) is plain ASCII and goes as it is; anything else is
// escaped by nlohmann, invalid UTF-8 from a client replaced rather than
// allowed to throw.
void AppendString(std::string& out, absl::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (plain) {
    absl::StrAppend(&out, "\"", text, "\"");
    return;
  }
  out += nlohmann::json(std::string(text))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `"key":"value"`, after a comma unless it opens its object.
void Field(std::string& out, absl::string_view key, absl::string_view value) {
  if (out.back() != '{') out += ',';
  AppendString(out, key);
  out += ':';
  AppendString(out, value);
}

void UserJson(std::string& out, absl::string_view key, const UserInfo& user) {
  absl::StrAppend(&out, ",\"", key, "\":{");
  Field(out, "username", user.name);
  if (!user.groups.empty()) {
    out += ",\"groups\":[";
    for (size_t i = 0; i < user.groups.size(); ++i) {
      if (i > 0) out += ',';
      AppendString(out, user.groups[i]);
    }
    out += ']';
  }
  out += '}';
}

// See Run.
constexpr size_t kWakeBatch = 1024;
constexpr absl::Duration kTick = absl::Milliseconds(50);

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

void DescribeRequest(const Attributes& request, AuditEvent& event) {
  event.verb = request.verb;
  event.api_group = request.path.empty() ? request.api_group : "";
  event.resource = request.resource;
  event.subresource = request.subresource;
  event.namespace_name = request.namespace_name;
  event.name = request.name;
}

// Written by hand in Kubernetes' field order: the writer thread formats
// one per call, and building an nlohmann object cost more than the rest
// of the event's path.
std::string AuditEventJson(const AuditEvent& e) {
  std::string out;
  out.reserve(768);
  out += '{';
  Field(out, "kind", "Event");
  Field(out, "apiVersion", "audit.k8s.io/v1");
  Field(out, "level", "Metadata");
  Field(out, "auditID", e.audit_id);
  Field(out, "stage", "ResponseComplete");
  Field(out, "requestURI", e.method);
  Field(out, "method", e.method);
  Field(out, "verb", e.verb);
  if (!e.principal.has_value()) {
    out += ",\"user\":{\"username\":\"\"}";
  } else if (e.principal->impersonator.has_value()) {
    UserJson(out, "user", *e.principal->impersonator);
    UserJson(out, "impersonatedUser", e.principal->user);
  } else {
    UserJson(out, "user", e.principal->user);
  }
  out += ",\"sourceIPs\":[";
  if (!e.source_ip.empty()) AppendString(out, e.source_ip);
  out += ']';
  if (!e.user_agent.empty()) Field(out, "userAgent", e.user_agent);
  if (!e.resource.empty()) {
    out += ",\"objectRef\":{";
    Field(out, "resource", e.resource);
    if (!e.subresource.empty()) Field(out, "subresource", e.subresource);
    Field(out, "namespace", e.namespace_name);
    if (!e.name.empty()) Field(out, "name", e.name);
    if (!e.api_group.empty()) Field(out, "apiGroup", e.api_group);
    out += '}';
  }
  absl::StrAppend(&out, ",\"responseStatus\":{\"code\":", e.code);
  if (!e.message.empty()) Field(out, "message", e.message);
  out += '}';
  Field(out, "requestReceivedTimestamp", Timestamp(e.received));
  Field(out, "stageTimestamp", Timestamp(e.completed));
  out += ",\"annotations\":{";
  Field(out, "authorization.k8s.io/decision", e.allowed ? "allow" : "forbid");
  if (!e.reason.empty()) Field(out, "authorization.k8s.io/reason", e.reason);
  if (e.principal.has_value()) {
    Field(out, "authentication.kq.dev/method",
          AuthMethodName(e.principal->method));
  }
  out += "}}";
  return out;
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
  ++flushes_waiting_;
  struct Until {
    AuditLog* self;
    uint64_t recorded;
  } until{this, recorded_};
  mu_.Await(absl::Condition(
      +[](Until* u) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return u->self->written_ >= u->recorded;
      },
      &until));
  --flushes_waiting_;
}

uint64_t AuditLog::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

void AuditLog::Run() {
  std::deque<AuditEvent> batch;
  for (;;) {
    {
      // Wakes for a full batch, a Flush or the stop, else at the next
      // tick: a wake-up per call cost kqd more than the writing.
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(
          absl::Condition(
              +[](AuditLog* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                return self->stopping_ || self->flushes_waiting_ > 0 ||
                       self->queue_.size() >= kWakeBatch;
              },
              this),
          kTick);
      if (queue_.empty() && stopping_) return;
      if (queue_.empty()) continue;
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
