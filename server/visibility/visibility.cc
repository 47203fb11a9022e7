#include "server/visibility/visibility.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace kq::visibility {
namespace {

// Go's encoding/json writes struct fields in declaration order; the
// ordered form keeps Kueue's.
using Json = nlohmann::ordered_json;

std::string Dump(const Json& json) {
  // Names come from clients: invalid UTF-8 is replaced, never thrown on.
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// metav1.Time's JSON: RFC 3339 in UTC, whole seconds.
std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// A metav1.Status failure: kind, apiVersion, metadata, status, message,
// reason, details (left out when null), code.
HttpAnswer Failure(int code, absl::string_view reason,
                   absl::string_view message, Json details = nullptr) {
  Json status = {{"kind", "Status"},
                 {"apiVersion", "v1"},
                 {"metadata", Json::object()},
                 {"status", "Failure"},
                 {"message", std::string(message)},
                 {"reason", std::string(reason)}};
  if (!details.is_null()) status["details"] = std::move(details);
  status["code"] = code;
  return {code, Dump(status)};
}

// 400 BadRequest for query parameter `field`, with the cause Kubernetes'
// field.Invalid would give (its message without the field).
HttpAnswer BadParameter(absl::string_view field, absl::string_view value,
                        absl::string_view detail) {
  const std::string body =
      absl::StrCat("Invalid value: \"", value, "\": ", detail);
  Json cause = {{"reason", "FieldValueInvalid"},
                {"message", body},
                {"field", std::string(field)}};
  return Failure(400, "BadRequest", absl::StrCat(field, ": ", body),
                 Json{{"causes", Json::array({std::move(cause)})}});
}

// strconv.ParseInt(value, 10, 64), the conversion Kubernetes decodes the
// parameters with: an optional sign and decimal digits, nothing else.
std::optional<std::string> ParseInt64(const std::string& value, int64_t& out) {
  absl::string_view digits = value;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    digits.remove_prefix(1);
  }
  if (digits.empty()) return "must be an integer";
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return "must be an integer";
    }
  }
  if (!absl::SimpleAtoi(value, &out)) return "must be a 64-bit integer";
  return std::nullopt;
}

// Kueue's PendingWorkloadOptions from the query (its url.Values
// conversion and defaulting), each parameter checked on its own so that a
// bad one is named; the answer to send instead when one is bad.
std::optional<HttpAnswer> ReadOptions(
    const Query& query, admission::PendingWorkloadOptions& options) {
  struct Parameter {
    const char* name;
    int64_t* value;
    absl::Status (*check)(int64_t);
  };
  for (const Parameter& p :
       {Parameter{"offset", &options.offset,
                  admission::ValidatePendingWorkloadsOffset},
        Parameter{"limit", &options.limit,
                  admission::ValidatePendingWorkloadsLimit}}) {
    auto it = query.find(p.name);
    if (it == query.end()) continue;
    if (std::optional<std::string> bad = ParseInt64(it->second, *p.value)) {
      return BadParameter(p.name, it->second, *bad);
    }
    if (absl::Status s = p.check(*p.value); !s.ok()) {
      // The core's message names the field first ("limit: ...").
      absl::string_view detail = s.message();
      absl::ConsumePrefix(&detail, absl::StrCat(p.name, ": "));
      return BadParameter(p.name, it->second, detail);
    }
  }
  return std::nullopt;
}

HttpAnswer Summary(
    const absl::StatusOr<engine::Listed<admission::PendingWorkload>>& listed,
    absl::string_view resource, absl::string_view name) {
  if (!listed.ok()) return StatusAnswer(listed.status(), resource, name);
  return {200, PendingWorkloadsSummaryJson(listed->items)};
}

HttpAnswer PathNotFound() {
  return Failure(404, "NotFound",
                 "the server could not find the requested resource",
                 Json::object());
}

}  // namespace

std::string PendingWorkloadsSummaryJson(
    const std::vector<admission::PendingWorkload>& items) {
  Json list = Json::array();
  for (const admission::PendingWorkload& p : items) {
    list.push_back(Json{
        {"metadata",
         {{"name", p.name},
          {"namespace", p.namespace_name},
          {"creationTimestamp", Rfc3339(p.creation_timestamp)}}},
        {"priority", p.priority},
        {"localQueueName", p.local_queue_name},
        {"positionInClusterQueue", p.position_in_cluster_queue},
        {"positionInLocalQueue", p.position_in_local_queue},
    });
  }
  return Dump(Json{{"kind", "PendingWorkloadsSummary"},
                   {"apiVersion", kGroupVersion},
                   {"metadata", {{"creationTimestamp", nullptr}}},
                   {"items", std::move(list)}});
}

HttpAnswer StatusAnswer(const absl::Status& status, absl::string_view resource,
                        absl::string_view name) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return Failure(
          404, "NotFound",
          absl::StrCat(resource, ".", kGroup, " \"", name, "\" not found"),
          Json{{"name", std::string(name)},
               {"group", kGroup},
               {"kind", std::string(resource)}});
    case absl::StatusCode::kInvalidArgument:
      return Failure(400, "BadRequest", status.message());
    case absl::StatusCode::kUnavailable:
      return Failure(503, "ServiceUnavailable", status.message());
    case absl::StatusCode::kDeadlineExceeded:
      return Failure(504, "Timeout", status.message());
    default:
      return Failure(500, "InternalError", status.message());
  }
}

HttpAnswer ClusterQueuePendingWorkloads(engine::Engine& engine,
                                        const std::string& cluster_queue,
                                        const Query& query) {
  admission::PendingWorkloadOptions options;
  if (std::optional<HttpAnswer> bad = ReadOptions(query, options)) {
    return *std::move(bad);
  }
  return Summary(engine.PendingWorkloadsInClusterQueue(cluster_queue, options),
                 "clusterqueue", cluster_queue);
}

HttpAnswer LocalQueuePendingWorkloads(engine::Engine& engine,
                                      const std::string& namespace_name,
                                      const std::string& name,
                                      const Query& query) {
  admission::PendingWorkloadOptions options;
  if (std::optional<HttpAnswer> bad = ReadOptions(query, options)) {
    return *std::move(bad);
  }
  // Kueue's NotFound names the LocalQueue alone: the namespace is the
  // request's.
  return Summary(
      engine.PendingWorkloadsInLocalQueue({namespace_name, name}, options),
      "localqueue", name);
}

HttpAnswer Serve(engine::Engine& engine, absl::string_view method,
                 absl::string_view path, const Query& query) {
  if (!absl::ConsumePrefix(&path, kPathPrefix)) return PathNotFound();
  const std::vector<std::string> parts = absl::StrSplit(path, '/');
  for (const std::string& part : parts) {
    if (part.empty()) return PathNotFound();
  }
  const bool cluster_queue = parts.size() == 3 && parts[0] == "clusterqueues" &&
                             parts[2] == "pendingworkloads";
  const bool local_queue = parts.size() == 5 && parts[0] == "namespaces" &&
                           parts[2] == "localqueues" &&
                           parts[4] == "pendingworkloads";
  if (!cluster_queue && !local_queue) return PathNotFound();
  if (method != "GET") {
    return Failure(405, "MethodNotAllowed",
                   "the server does not allow this method on the requested "
                   "resource",
                   Json::object());
  }
  if (cluster_queue) {
    return ClusterQueuePendingWorkloads(engine, parts[1], query);
  }
  return LocalQueuePendingWorkloads(engine, parts[1], parts[3], query);
}

}  // namespace kq::visibility
