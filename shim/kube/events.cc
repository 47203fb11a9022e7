// RecordEvent: core/v1 Events as client-go's legacy event recorder writes
// them (tools/record), one new Event per call (no aggregation).

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "shim/kube/client.h"

namespace kq::shim::kube {
namespace {

constexpr char kComponent[] = "kq-k8s-shim";

std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

std::string Hostname() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

// client-go names Events "<object>.<UnixNano in hex>"; taking the larger of
// the clock and the last value plus one keeps two Events of one process in
// the same nanosecond apart.
std::string UniqueSuffix() {
  static std::atomic<int64_t> last{0};
  int64_t now = absl::ToUnixNanos(absl::Now());
  int64_t previous = last.load();
  int64_t next;
  do {
    next = std::max(now, previous + 1);
  } while (!last.compare_exchange_weak(previous, next));
  return absl::StrFormat("%x", next);
}

}  // namespace

absl::Status RecordEvent(Client& client, const json& involved,
                         const std::string& type, const std::string& reason,
                         const std::string& message) {
  const json metadata = involved.is_object() && involved.contains("metadata")
                            ? involved["metadata"]
                            : json::object();
  const std::string kind = StringAt(involved, "kind");
  const std::string name = StringAt(metadata, "name");
  if (kind.empty() || name.empty()) {
    return absl::InvalidArgumentError(
        "an event's involved object needs a kind and a metadata.name");
  }
  if (type != "Normal" && type != "Warning") {
    return absl::InvalidArgumentError(
        absl::StrCat("event type \"", type, "\": must be Normal or Warning"));
  }
  const std::string object_namespace = StringAt(metadata, "namespace");
  // Events about cluster-scoped objects live in "default", as client-go
  // puts them.
  const std::string ns =
      object_namespace.empty() ? "default" : object_namespace;
  const std::string now =
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  const std::string host = Hostname();

  json reference = {{"apiVersion", StringAt(involved, "apiVersion")},
                    {"kind", kind},
                    {"name", name}};
  if (!object_namespace.empty()) reference["namespace"] = object_namespace;
  if (std::string uid = StringAt(metadata, "uid"); !uid.empty()) {
    reference["uid"] = uid;
  }
  if (std::string rv = StringAt(metadata, "resourceVersion"); !rv.empty()) {
    reference["resourceVersion"] = rv;
  }
  json source = {{"component", kComponent}};
  if (!host.empty()) source["host"] = host;

  json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata",
       {{"name", absl::StrCat(name, ".", UniqueSuffix())}, {"namespace", ns}}},
      {"involvedObject", reference},
      {"reason", reason},
      {"message", message},
      {"type", type},
      {"source", source},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1},
      {"reportingComponent", kComponent},
      {"reportingInstance", host},
  };
  return client.Create(kEvents, ns, event).status();
}

}  // namespace kq::shim::kube
