#pragma once

// A MultiKueue manager's link to one worker kqd (Kueue's remoteClient): a
// client, the copies of this manager's origin the worker holds, as listed
// and then watched, and the connection state with Kueue's reconnect backoff.
// It also sends the manager's calls, many per RPC, each copy's in order.
//
// The mirror is level state, never a log: a copy is what the worker last
// said of it, at the revision it said it, so a late watch event never
// undoes a newer answer, and a reconnect lists everything again.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "kq/client/client.h"
#include "server/core/objects.h"
#include "server/federation/connection.h"
#include "server/federation/group.h"

namespace kq::federation {

// A call the manager makes on one copy.
struct LinkCall {
  enum class Kind { kUpsert, kDelete, kBind, kRenew, kDeactivate };
  Kind kind = Kind::kUpsert;
  NamespacedName key;
  Uid origin_uid;
  int64_t epoch = 0;
  // kUpsert: the copy (metadata and spec) as it is sent, one for every
  // worker it goes to.
  std::shared_ptr<const v1::Workload> copy;
  // kDeactivate: "Evicted on manager: ...".
  std::string message;
};

// Thread-safe. Threads of its own: one lists and watches, one sends.
class WorkerLink {
 public:
  struct Options {
    // The MultiKueueCluster's name.
    std::string name;
    client::ClientOptions client;
    // The manager's multiKueue.origin.
    std::string origin;
    // Bookmarks the worker is asked for; a stream silent for
    // `silence_timeout` counts as lost (a stopped worker keeps its TCP
    // connection open).
    absl::Duration bookmark_interval = absl::Seconds(1);
    absl::Duration silence_timeout = absl::Seconds(4);
    // The relay runner's lease sent with Bind and Renew.
    absl::Duration relay_lease = absl::Seconds(30);
    // Lease mode: Bind asks the worker to fence the copy once the lease
    // lapses.
    bool fence = false;
  };
  // What a notification says.
  enum class Event {
    // The copies of `keys` changed.
    kCopies,
    // The connection changed (keys: every copy, after a list).
    kConnection,
    // Calls on `keys` were answered (or failed); their copies may have
    // changed.
    kAnswered,
  };
  // Told on one of the link's threads. Must not block.
  using Notify =
      std::function<void(const std::string& worker,
                         const std::vector<NamespacedName>& keys, Event event)>;

  // Starts connecting at once.
  WorkerLink(Options options, Notify notify, absl::Time now);
  ~WorkerLink();
  WorkerLink(const WorkerLink&) = delete;
  WorkerLink& operator=(const WorkerLink&) = delete;

  const std::string& name() const { return options_.name; }
  const Options& options() const { return options_; }

  ConnectionState connection() const;
  // Kueue's Active condition of the MultiKueueCluster.
  Condition ActiveCondition(absl::Time now) const;
  // The worker's copy of `key`, if the mirror has one. Shared, not copied:
  // the controller reads copies many times a round.
  std::shared_ptr<const RemoteCopy> CopyOf(const NamespacedName& key) const;
  // Every copy the mirror has, with the manager workload uid it copies (for
  // garbage collection).
  std::vector<std::pair<NamespacedName, Uid>> Copies() const;

  // Queues calls, sent after the calls on the same copies queued before
  // (calls on other copies may pass them).
  void Send(std::vector<LinkCall> calls);
  // Calls queued and not yet answered (for tests and back pressure).
  size_t pending_calls() const;

 private:
  struct Entry {
    std::shared_ptr<const RemoteCopy> copy;  // none: deleted at `revision`
    int64_t revision = 0;
  };

  void WatchLoop(std::stop_token stop);
  void SendLoop(std::stop_token stop);
  // One list and one watch; returns why the watch ended.
  absl::Status ListAndWatch(std::stop_token stop);
  // Applies the worker's word on `wl` at `revision` (deleted: it is gone),
  // unless the mirror knows a newer one. Returns whether it changed.
  bool Apply(const v1::Workload& wl, int64_t revision, bool deleted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The answers the mirror has caught up with: those on `key` (every key:
  // null) whose copy it holds at the answer's revision or later, or, with
  // `all`, every one.
  std::vector<NamespacedName> CaughtUp(const NamespacedName* key, bool all)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendBatch(LinkCall::Kind kind, std::vector<LinkCall> calls);
  void Disconnected(const absl::Status& why, absl::Time now);

  const Options options_;
  const Notify notify_;
  std::unique_ptr<client::Client> client_;

  mutable absl::Mutex mu_;
  ConnectionState connection_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  std::map<NamespacedName, Entry> mirror_ ABSL_GUARDED_BY(mu_);
  // Answers whose copies the watch has not brought yet, by copy: the
  // revision each waits for. The worker answers with the copy's revision
  // only, and the controller is told of an answer once the mirror holds
  // what it answered, so that it never decides on an older copy.
  std::multimap<NamespacedName, int64_t> awaiting_ ABSL_GUARDED_BY(mu_);
  std::deque<LinkCall> queue_ ABSL_GUARDED_BY(mu_);
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_heard_ ABSL_GUARDED_BY(mu_);

  std::jthread watcher_;
  std::jthread sender_;
};

// Kueue's cloneForCreate for kq: the copy a worker is sent of `local`
// (name, namespace, labels minus kueue.x-k8s.io/job-uid, annotations and
// the spec with its pod templates); no status, uid or revision.
v1::Workload CopyForWorker(const Workload& local);

// What a worker's workload says of the copy (nullopt for a workload that
// is no copy of `origin`).
std::optional<RemoteCopy> RemoteCopyOf(const v1::Workload& wl,
                                       const std::string& origin);

// Kueue's isRemoteSpecOutOfSync for kq's fields: the pod sets (names,
// counts, requests, node selectors) and the priority class.
bool SameSpec(const Workload& local, const Workload& copy);

}  // namespace kq::federation
