#include "shim/common/kq_reflector.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "spdlog/spdlog.h"

namespace kq::shim {
namespace {

constexpr char kWorkload[] = "Workload";

// Sleeps `duration`; false if `stop` was requested meanwhile.
bool SleepUnlessStopped(absl::Duration duration, const std::stop_token& stop) {
  absl::Notification stopped;
  std::stop_callback wake(stop, [&stopped] { stopped.Notify(); });
  return !stopped.WaitForNotificationWithTimeout(duration);
}

std::string Describe(const std::vector<std::string>& kinds,
                     const std::string& ns) {
  const std::string joined = absl::StrJoin(kinds, ",");
  return ns.empty() ? joined : joined + " in " + ns;
}

}  // namespace

KqReflector::KqReflector(client::Client& client, std::string ns,
                         KqReflectorHandlers handlers,
                         KqReflectorOptions options)
    : client_(client),
      ns_(std::move(ns)),
      handlers_(std::move(handlers)),
      options_(std::move(options)) {}

void KqReflector::Stop() { stop_.request_stop(); }

int64_t KqReflector::last_revision() const {
  absl::MutexLock lock(&mu_);
  return last_revision_;
}

int64_t KqReflector::list_count() const {
  absl::MutexLock lock(&mu_);
  return list_count_;
}

absl::StatusOr<KqSnapshot> KqReflector::List() {
  KqSnapshot snapshot;
  bool first = true;
  auto oldest = [&](int64_t revision) {
    snapshot.revision =
        first ? revision : std::min(snapshot.revision, revision);
    first = false;
  };
  for (const std::string& kind : options_.kinds) {
    if (kind == kWorkload) {
      v1::ListWorkloadsRequest request;
      request.set_namespace_(ns_);
      absl::StatusOr<v1::ListWorkloadsResponse> listed =
          client_.ListWorkloads(request);
      if (!listed.ok()) return listed.status();
      oldest(listed->revision());
      snapshot.workloads.assign(
          std::make_move_iterator(listed->mutable_workloads()->begin()),
          std::make_move_iterator(listed->mutable_workloads()->end()));
    } else {
      absl::StatusOr<v1::ListObjectsResponse> listed =
          client_.ListObjects(kind, "");
      if (!listed.ok()) return listed.status();
      oldest(listed->revision());
      snapshot.objects.insert(
          snapshot.objects.end(),
          std::make_move_iterator(listed->mutable_objects()->begin()),
          std::make_move_iterator(listed->mutable_objects()->end()));
    }
  }
  return snapshot;
}

bool KqReflector::Delivers(const v1::WatchEvent& event) const {
  return ns_.empty() || !event.has_workload() ||
         event.workload().metadata().namespace_() == ns_;
}

void KqReflector::Run() {
  const std::stop_token stop = stop_.get_token();
  // kqd's namespace filter would drop the cluster-scoped objects of the
  // other kinds too, so with those the Workloads are filtered here.
  const bool workloads_only =
      std::all_of(options_.kinds.begin(), options_.kinds.end(),
                  [](const std::string& kind) { return kind == kWorkload; });
  absl::Duration backoff = options_.initial_backoff;
  while (!stop.stop_requested()) {
    // 1. LIST: the complete current state and the revision to watch from.
    absl::StatusOr<KqSnapshot> listed = List();
    if (stop.stop_requested()) break;
    if (!listed.ok()) {
      if (handlers_.on_error) handlers_.on_error(listed.status());
      spdlog::warn("kq reflector: listing {} failed: {}",
                   Describe(options_.kinds, ns_), listed.status().ToString());
      if (!SleepUnlessStopped(backoff, stop)) break;
      backoff = std::min(backoff * 2, options_.max_backoff);
      continue;
    }
    backoff = options_.initial_backoff;
    {
      absl::MutexLock lock(&mu_);
      ++list_count_;
      last_revision_ = listed->revision;
    }
    if (handlers_.on_sync) handlers_.on_sync(*listed);

    // 2. WATCH from there; it resumes by itself across kqd restarts.
    v1::WatchRequest watch;
    watch.set_from_revision(listed->revision);
    for (const std::string& kind : options_.kinds) watch.add_kinds(kind);
    if (workloads_only) watch.set_namespace_(ns_);
    absl::Status watched = client_.WatchResumable(
        watch,
        [&](const v1::WatchEvent& event) {
          {
            absl::MutexLock lock(&mu_);
            last_revision_ = event.revision();
          }
          if (Delivers(event) && handlers_.on_event) handlers_.on_event(event);
          return true;
        },
        nullptr, stop);
    if (stop.stop_requested()) break;

    // 3. OUT_OF_RANGE: the revision left kqd's event log; any other end:
    // the watch gave up. Either way, list again.
    if (handlers_.on_error) handlers_.on_error(watched);
    spdlog::warn("kq reflector: watch of {} ended: {}; listing again",
                 Describe(options_.kinds, ns_), watched.ToString());
    if (!SleepUnlessStopped(backoff, stop)) break;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace kq::shim
