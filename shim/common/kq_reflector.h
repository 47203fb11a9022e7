#pragma once

// LIST then WATCH of kqd's objects, the twin of kube::Reflector for the
// shim's other side: ListWorkloads and ListObjects of the kinds asked for,
// then one WatchResumable of those kinds from the oldest listed revision,
// so nothing committed between the lists is missed. The watch rides out kqd
// restarts and broken streams by itself; when it gives up (OUT_OF_RANGE:
// the revision left kqd's event log, or kqd unreachable for the client's
// retry budget) the reflector backs off and lists again. Handlers run on
// the Run() thread, one at a time.

#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "kq/client/client.h"

namespace kq::shim {

// What one round of lists found: the complete current set.
struct KqSnapshot {
  // The revision the watch starts from: the oldest of the lists'.
  int64_t revision = 0;
  // Unfinished Workloads of the reflector's namespace (all when empty).
  std::vector<v1::Workload> workloads;
  // The objects of the other kinds, kind by kind in the order asked for.
  std::vector<v1::ConfigObject> objects;
};

struct KqReflectorHandlers {
  // After the first list and after every re-list (objects absent from it
  // were deleted, or Workloads finished, meanwhile).
  std::function<void(const KqSnapshot& snapshot)> on_sync;
  // ADDED / MODIFIED / DELETED, in revision order.
  std::function<void(const v1::WatchEvent& event)> on_event;
  // A list or a watch that failed, before the reflector backs off and lists
  // again (may be null); e.g. to tell that kqd is unreachable.
  std::function<void(const absl::Status& status)> on_error;
};

struct KqReflectorOptions {
  // "Workload" is listed with ListWorkloads, any other kind with
  // ListObjects of every namespace.
  std::vector<std::string> kinds = {"Workload"};
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(10);
};

class KqReflector {
 public:
  // `client` must outlive the reflector. `ns` scopes the Workloads (empty:
  // all namespaces); the other kinds are listed and watched in every one.
  KqReflector(client::Client& client, std::string ns,
              KqReflectorHandlers handlers, KqReflectorOptions options = {});

  // Lists and watches until Stop(); never returns earlier. Once.
  void Run();
  // Makes Run() return promptly: cancels its watch or backoff (a list under
  // way ends first, within the client's deadline and retry budget), and no
  // handler runs after the one running now. Thread-safe; idempotent; before
  // Run(), Run() returns at once.
  void Stop();

  // The newest revision seen: the last list's, then each event's (0 before
  // the first list). Thread-safe.
  int64_t last_revision() const;
  // Number of list rounds done (1 + re-lists). Thread-safe; for tests and
  // metrics.
  int64_t list_count() const;

 private:
  absl::StatusOr<KqSnapshot> List();
  bool Delivers(const v1::WatchEvent& event) const;

  client::Client& client_;
  const std::string ns_;
  const KqReflectorHandlers handlers_;
  const KqReflectorOptions options_;
  std::stop_source stop_;
  mutable absl::Mutex mu_;
  int64_t last_revision_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t list_count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kq::shim
