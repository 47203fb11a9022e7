#pragma once

// LIST then WATCH of one resource type, as client-go's reflector does: the
// watch resumes from the last resourceVersion seen (events and bookmarks),
// a 410 Gone (expired resourceVersion) lists again, and errors back off
// and retry until stopped. Handlers run on the Run() thread, one at a time.

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "shim/kube/client.h"

namespace kq::shim::kube {

struct ReflectorHandlers {
  // The complete current set: after the first List and after every
  // re-list (objects absent from it were deleted meanwhile).
  std::function<void(const std::vector<json>& items)> on_sync;
  // ADDED / MODIFIED / DELETED (bookmarks are consumed by the reflector).
  std::function<void(const WatchEvent& event)> on_event;
};

struct ReflectorOptions {
  std::string label_selector;
  std::string field_selector;
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(10);
  // Per watch request; the reflector watches again from where it was.
  absl::Duration watch_timeout = absl::Minutes(5);
};

class Reflector {
 public:
  // `client` must outlive the reflector. Empty `ns`: all namespaces.
  Reflector(Client& client, Resource resource, std::string ns,
            ReflectorHandlers handlers, ReflectorOptions options = {});

  // Lists and watches until `stop` becomes true; never returns earlier.
  void Run(const std::atomic<bool>& stop);

  // The resourceVersion the next watch starts from ("" before the first
  // list). Thread-safe.
  std::string last_resource_version() const;
  // Number of LISTs done (1 + re-lists). Thread-safe; for tests and metrics.
  int64_t list_count() const;

 private:
  Client& client_;
  const Resource resource_;
  const std::string ns_;
  const ReflectorHandlers handlers_;
  const ReflectorOptions options_;
  mutable absl::Mutex mu_;
  std::string last_resource_version_ ABSL_GUARDED_BY(mu_);
  int64_t list_count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kq::shim::kube
