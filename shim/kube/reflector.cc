#include "shim/kube/reflector.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace kq::shim::kube {
namespace {

constexpr absl::Duration kStopPoll = absl::Milliseconds(100);
// A watch that ends sooner than this without a single event is treated
// like an error (backed off), so a server that closes streams at once
// cannot spin the loop.
constexpr absl::Duration kMinHealthyWatch = absl::Seconds(1);

// Sleeps `duration` in short slices; false if `stop` was set meanwhile.
bool SleepUnlessStopped(absl::Duration duration,
                        const std::atomic<bool>& stop) {
  const absl::Time deadline = absl::Now() + duration;
  while (!stop.load()) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    absl::SleepFor(std::min(left, kStopPoll));
  }
  return false;
}

// Exponential with equal jitter, reset after a healthy list or watch.
class RetryBackoff {
 public:
  RetryBackoff(absl::Duration initial, absl::Duration max)
      : initial_(initial), max_(max), next_(initial) {}
  absl::Duration Next() {
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    const absl::Duration step = next_;
    next_ = std::min(next_ * 2, max_);
    return step * jitter(rng_);
  }
  void Reset() { next_ = initial_; }

 private:
  const absl::Duration initial_;
  const absl::Duration max_;
  absl::Duration next_;
  std::mt19937_64 rng_{std::random_device{}()};
};

std::string Describe(const Resource& resource, const std::string& ns) {
  return ns.empty() ? resource.plural : resource.plural + " in " + ns;
}

}  // namespace

Reflector::Reflector(Client& client, Resource resource, std::string ns,
                     ReflectorHandlers handlers, ReflectorOptions options)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      handlers_(std::move(handlers)),
      options_(std::move(options)) {}

std::string Reflector::last_resource_version() const {
  absl::MutexLock lock(&mu_);
  return last_resource_version_;
}

int64_t Reflector::list_count() const {
  absl::MutexLock lock(&mu_);
  return list_count_;
}

void Reflector::Run(const std::atomic<bool>& stop) {
  RetryBackoff backoff(options_.initial_backoff, options_.max_backoff);
  bool need_list = true;
  while (!stop.load()) {
    // 1. LIST: the complete current state and the version to watch from.
    if (need_list) {
      absl::StatusOr<ListResult> listed =
          client_.List(resource_, ns_,
                       ListOptions{.label_selector = options_.label_selector,
                                   .field_selector = options_.field_selector});
      if (!listed.ok()) {
        spdlog::warn("reflector: listing {} failed: {}",
                     Describe(resource_, ns_), listed.status().ToString());
        SleepUnlessStopped(backoff.Next(), stop);
        continue;
      }
      {
        absl::MutexLock lock(&mu_);
        ++list_count_;
        last_resource_version_ = listed->resource_version;
      }
      if (handlers_.on_sync) handlers_.on_sync(listed->items);
      need_list = false;
      backoff.Reset();
    }

    // 2. WATCH from the last version seen; every event and bookmark moves
    // it forward so the next watch resumes without gaps or repeats.
    WatchOptions watch{.label_selector = options_.label_selector,
                       .field_selector = options_.field_selector,
                       .resource_version = last_resource_version(),
                       .allow_watch_bookmarks = true,
                       .timeout = options_.watch_timeout,
                       .stop = &stop};
    int64_t events = 0;
    const absl::Time started = absl::Now();
    absl::Status watched =
        client_.Watch(resource_, ns_, watch, [&](const WatchEvent& event) {
          ++events;
          const std::string rv = ResourceVersionOf(event.object);
          if (event.type != WatchEventType::kBookmark && handlers_.on_event) {
            handlers_.on_event(event);
          }
          if (!rv.empty()) {
            absl::MutexLock lock(&mu_);
            last_resource_version_ = rv;
          }
          return !stop.load();
        });

    // 3. Decide how to go on.
    if (stop.load()) break;
    if (watched.ok()) {
      if (events > 0 || absl::Now() - started >= kMinHealthyWatch) {
        backoff.Reset();
        continue;
      }
      SleepUnlessStopped(backoff.Next(), stop);
      continue;
    }
    if (watched.code() == absl::StatusCode::kOutOfRange) {
      // 410 Gone: the version fell out of the server's window; only a new
      // LIST can tell what happened meanwhile.
      spdlog::info("reflector: watch of {} expired ({}); listing again",
                   Describe(resource_, ns_), std::string(watched.message()));
      need_list = true;
      continue;
    }
    spdlog::warn("reflector: watch of {} failed: {}", Describe(resource_, ns_),
                 watched.ToString());
    SleepUnlessStopped(backoff.Next(), stop);
  }
}

}  // namespace kq::shim::kube
