#include "server/federation/manager/worker_link.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "spdlog/spdlog.h"

#include "server/codec/codec.h"
#include "server/federation/manager/failpoint.h"

namespace kq::federation {

namespace {

// Calls per RPC: big enough that a burst of dispatches takes a few calls,
// small enough that one call holds a worker's engine thread briefly.
constexpr size_t kMaxCallsPerRpc = 2000;

// Kueue drops the job-uid label from a copy: it names the manager's Job.
constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";

v1::RemoteKey KeyOf(const LinkCall& call, const std::string& origin) {
  v1::RemoteKey key;
  key.set_namespace_(call.key.first);
  key.set_name(call.key.second);
  key.set_origin(origin);
  key.set_origin_uid(call.origin_uid.str());
  key.set_epoch(call.epoch);
  return key;
}

const char* KindName(LinkCall::Kind kind) {
  switch (kind) {
    case LinkCall::Kind::kUpsert:
      return "UpsertRemote";
    case LinkCall::Kind::kDelete:
      return "DeleteRemote";
    case LinkCall::Kind::kBind:
      return "BindRemote";
    case LinkCall::Kind::kRenew:
      return "RenewRemote";
    case LinkCall::Kind::kDeactivate:
      return "DeactivateRemote";
  }
  return "?";
}

}  // namespace

v1::Workload CopyForWorker(const Workload& local) {
  Workload copy = local;
  copy.meta.uid = Uid();
  copy.meta.revision = 0;
  copy.meta.labels.erase(kJobUidLabel);
  v1::Workload proto = codec::ToProto(copy, v1::TEMPLATE_FORM_JSON);
  proto.clear_status();
  proto.mutable_metadata()->clear_uid();
  proto.mutable_metadata()->clear_creation_timestamp();
  return proto;
}

std::optional<RemoteCopy> RemoteCopyOf(const v1::Workload& wl,
                                       const std::string& origin) {
  if (!wl.status().has_remote() || wl.status().remote().origin() != origin) {
    return std::nullopt;
  }
  absl::StatusOr<Workload> status = codec::FromProto(wl);
  if (!status.ok()) {
    spdlog::warn("MultiKueue: cannot read the copy {}/{}: {}",
                 wl.metadata().namespace_(), wl.metadata().name(),
                 status.status().ToString());
    return std::nullopt;
  }
  RemoteCopy copy;
  copy.origin_uid = wl.status().remote().origin_uid();
  copy.epoch = wl.status().remote().epoch();
  copy.bound = wl.status().remote().bound();
  copy.status = *std::move(status);
  return copy;
}

bool SameSpec(const Workload& local, const Workload& copy) {
  if (local.priority_class_name.str() != copy.priority_class_name.str() ||
      local.pod_sets.size() != copy.pod_sets.size()) {
    return false;
  }
  for (size_t i = 0; i < local.pod_sets.size(); ++i) {
    const PodSet& a = local.pod_sets[i];
    const PodSet& b = copy.pod_sets[i];
    if (a.name != b.name || a.count != b.count || a.min_count != b.min_count ||
        a.requests != b.requests || a.node_selector != b.node_selector) {
      return false;
    }
  }
  return true;
}

WorkerLink::WorkerLink(Options options, Notify notify, absl::Time now)
    : options_(std::move(options)),
      notify_(std::move(notify)),
      client_(client::NewGrpcClient(options_.client)) {
  {
    absl::MutexLock lock(&mu_);
    connection_ = ConnectionState::NewDisconnected(now);
    last_error_ = "not connected yet";
  }
  watcher_ = std::jthread([this](std::stop_token stop) { WatchLoop(stop); });
  sender_ = std::jthread([this](std::stop_token stop) { SendLoop(stop); });
}

WorkerLink::~WorkerLink() {
  watcher_.request_stop();
  sender_.request_stop();
  {
    // Wakes the sender.
    absl::MutexLock lock(&mu_);
  }
}

ConnectionState WorkerLink::connection() const {
  absl::MutexLock lock(&mu_);
  return connection_;
}

Condition WorkerLink::ActiveCondition(absl::Time now) const {
  absl::MutexLock lock(&mu_);
  if (connection_.connected()) return ActiveConnectedCondition(now);
  return ActiveFailedCondition(kReasonClientConnectionFailed, last_error_,
                               connection_, now);
}

std::shared_ptr<const RemoteCopy> WorkerLink::CopyOf(
    const NamespacedName& key) const {
  absl::MutexLock lock(&mu_);
  auto it = mirror_.find(key);
  if (it == mirror_.end()) return nullptr;
  return it->second.copy;
}

std::vector<std::pair<NamespacedName, Uid>> WorkerLink::Copies() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<NamespacedName, Uid>> copies;
  for (const auto& [key, entry] : mirror_) {
    if (entry.copy != nullptr) copies.emplace_back(key, entry.copy->origin_uid);
  }
  return copies;
}

void WorkerLink::Send(std::vector<LinkCall> calls) {
  if (calls.empty()) return;
  absl::MutexLock lock(&mu_);
  for (LinkCall& call : calls) queue_.push_back(std::move(call));
}

size_t WorkerLink::pending_calls() const {
  absl::MutexLock lock(&mu_);
  return queue_.size() + in_flight_;
}

bool WorkerLink::Apply(const v1::Workload& wl, int64_t revision, bool deleted) {
  const NamespacedName key{wl.metadata().namespace_(), wl.metadata().name()};
  Entry& entry = mirror_[key];
  if (revision < entry.revision) return false;
  std::optional<RemoteCopy> copy =
      deleted ? std::nullopt : RemoteCopyOf(wl, options_.origin);
  const bool had = entry.copy != nullptr;
  entry.revision = revision;
  const bool changed = had != copy.has_value() || copy.has_value();
  entry.copy = copy.has_value()
                   ? std::make_shared<const RemoteCopy>(*std::move(copy))
                   : nullptr;
  return changed;
}

std::vector<NamespacedName> WorkerLink::CaughtUp(const NamespacedName* key,
                                                 bool all) {
  std::vector<NamespacedName> keys;
  auto it = key != nullptr ? awaiting_.lower_bound(*key) : awaiting_.begin();
  const auto end =
      key != nullptr ? awaiting_.upper_bound(*key) : awaiting_.end();
  while (it != end) {
    auto entry = mirror_.find(it->first);
    if (all ||
        (entry != mirror_.end() && entry->second.revision >= it->second)) {
      keys.push_back(it->first);
      it = awaiting_.erase(it);
    } else {
      ++it;
    }
  }
  return keys;
}

void WorkerLink::Disconnected(const absl::Status& why, absl::Time now) {
  bool was_connected;
  std::vector<NamespacedName> answered;
  {
    absl::MutexLock lock(&mu_);
    was_connected = connection_.MarkDisconnected(now);
    connection_.RecordFailedAttempt(now);
    last_error_ = std::string(why.message());
    // The controller decides on a lost worker's copies without them.
    answered = CaughtUp(nullptr, /*all=*/true);
  }
  if (was_connected) {
    spdlog::warn("MultiKueue: worker {} lost: {}", options_.name,
                 why.ToString());
  }
  notify_(options_.name, {}, Event::kConnection);
  if (!answered.empty()) notify_(options_.name, answered, Event::kAnswered);
}

void WorkerLink::WatchLoop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    absl::Duration wait;
    {
      absl::MutexLock lock(&mu_);
      wait = connection_.UntilNextAttempt(absl::Now());
    }
    if (wait > absl::ZeroDuration()) {
      // Sleeps in slices so that a stop is seen promptly.
      absl::SleepFor(std::min(wait, absl::Milliseconds(100)));
      continue;
    }
    absl::Status ended = ListAndWatch(stop);
    if (stop.stop_requested()) return;
    Disconnected(ended.ok() ? absl::UnavailableError("watch ended") : ended,
                 absl::Now());
  }
}

absl::Status WorkerLink::ListAndWatch(std::stop_token stop) {
  v1::ListWorkloadsRequest list;
  list.set_origin(options_.origin);
  // The controller never reads a copy's templates.
  list.set_template_form(v1::TEMPLATE_FORM_NONE);
  absl::StatusOr<v1::ListWorkloadsResponse> listed =
      client_->ListWorkloads(list);
  if (!listed.ok()) return listed.status();
  std::vector<NamespacedName> changed;
  std::vector<NamespacedName> answered;
  {
    absl::MutexLock lock(&mu_);
    // The list is the whole truth at its revision: what it leaves out is
    // gone.
    std::set<NamespacedName> present;
    for (const v1::Workload& wl : listed->workloads()) {
      present.insert({wl.metadata().namespace_(), wl.metadata().name()});
      Apply(wl, listed->revision(), /*deleted=*/false);
    }
    for (auto& [key, entry] : mirror_) {
      changed.push_back(key);
      if (!present.contains(key) && entry.revision <= listed->revision()) {
        entry.copy.reset();
        entry.revision = listed->revision();
      }
    }
    connection_.MarkConnected();
    last_error_ = "the watch ended";
    last_heard_ = absl::Now();
    answered = CaughtUp(nullptr, /*all=*/false);
  }
  spdlog::info("MultiKueue: worker {} connected ({} copies)", options_.name,
               listed->workloads_size());
  notify_(options_.name, changed, Event::kConnection);
  if (!answered.empty()) notify_(options_.name, answered, Event::kAnswered);

  v1::WatchRequest watch;
  watch.set_from_revision(listed->revision());
  watch.set_origin(options_.origin);
  watch.set_template_form(v1::TEMPLATE_FORM_NONE);
  watch.add_kinds("Workload");
  *watch.mutable_bookmark_interval() =
      codec::ToProto(options_.bookmark_interval);
  // The watchdog ends a stream that went silent: a stopped worker's kernel
  // keeps the connection open, and gRPC would wait on it.
  std::stop_source cancel;
  std::stop_callback on_stop(stop, [&cancel] { cancel.request_stop(); });
  std::jthread watchdog([this, &cancel](std::stop_token done) {
    while (!done.stop_requested() && !cancel.stop_requested()) {
      absl::SleepFor(absl::Milliseconds(200));
      absl::MutexLock lock(&mu_);
      if (absl::Now() - last_heard_ > options_.silence_timeout) {
        last_error_ =
            absl::StrCat("no word from the worker for ",
                         absl::FormatDuration(options_.silence_timeout));
        cancel.request_stop();
      }
    }
  });
  absl::Status status = client_->Watch(
      watch,
      [this](const v1::WatchEvent& event) {
        std::vector<NamespacedName> keys;
        std::vector<NamespacedName> answered;
        {
          absl::MutexLock lock(&mu_);
          last_heard_ = absl::Now();
          if (event.type() == v1::WatchEvent::BOOKMARK ||
              !event.has_workload()) {
            return true;
          }
          const NamespacedName key{event.workload().metadata().namespace_(),
                                   event.workload().metadata().name()};
          if (Apply(event.workload(), event.revision(),
                    event.type() == v1::WatchEvent::DELETED)) {
            keys.push_back(key);
          }
          if (!awaiting_.empty()) answered = CaughtUp(&key, /*all=*/false);
        }
        if (!keys.empty()) notify_(options_.name, keys, Event::kCopies);
        if (!answered.empty()) {
          notify_(options_.name, answered, Event::kAnswered);
        }
        return true;
      },
      cancel.get_token());
  watchdog.request_stop();
  if (status.code() == absl::StatusCode::kCancelled) {
    absl::MutexLock lock(&mu_);
    return absl::UnavailableError(last_error_);
  }
  return status;
}

void WorkerLink::SendLoop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    std::vector<LinkCall> batch;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this, &stop] {
        mu_.AssertReaderHeld();
        return !queue_.empty() || stop.stop_requested();
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(200));
      if (queue_.empty()) continue;
      // The oldest call's kind, with every later call of that kind whose
      // copy has no call of another kind queued before it: the order of
      // calls on one copy (a stale copy's delete before the new epoch's
      // upsert) is kept, while calls on other copies may pass. Taking only
      // the consecutive calls of one kind made an RPC of a few calls once
      // dispatches, deletions and binds interleave in the queue, and the
      // queue then grew faster than one RPC at a time drained it.
      const LinkCall::Kind kind = queue_.front().kind;
      std::set<NamespacedName> held;
      std::deque<LinkCall> rest;
      while (!queue_.empty() && batch.size() < kMaxCallsPerRpc) {
        LinkCall& call = queue_.front();
        if (call.kind == kind && !held.contains(call.key)) {
          batch.push_back(std::move(call));
        } else {
          held.insert(call.key);
          rest.push_back(std::move(call));
        }
        queue_.pop_front();
      }
      while (!rest.empty()) {
        queue_.push_front(std::move(rest.back()));
        rest.pop_back();
      }
      in_flight_ = batch.size();
    }
    const LinkCall::Kind kind = batch.front().kind;
    SendBatch(kind, std::move(batch));
    absl::MutexLock lock(&mu_);
    in_flight_ = 0;
  }
}

void WorkerLink::SendBatch(LinkCall::Kind kind, std::vector<LinkCall> calls) {
  absl::StatusOr<v1::RemoteResponse> response;
  if (kind == LinkCall::Kind::kUpsert) {
    v1::UpsertRemoteRequest request;
    request.set_template_form(v1::TEMPLATE_FORM_JSON);
    request.set_omit_workloads(true);
    for (LinkCall& call : calls) {
      v1::UpsertRemoteItem* item = request.add_items();
      *item->mutable_key() = KeyOf(call, options_.origin);
      if (call.copy != nullptr) *item->mutable_workload() = *call.copy;
    }
    response = client_->UpsertRemote(request);
  } else {
    v1::RemoteRequest request;
    *request.mutable_lease() = codec::ToProto(options_.relay_lease);
    request.set_fence(options_.fence && kind == LinkCall::Kind::kBind);
    request.set_omit_workloads(true);
    for (const LinkCall& call : calls) {
      v1::RemoteItem* item = request.add_items();
      *item->mutable_key() = KeyOf(call, options_.origin);
      item->set_message(call.message);
    }
    client::Client::RemoteVerb verb = client::Client::RemoteVerb::kDelete;
    if (kind == LinkCall::Kind::kBind) verb = client::Client::RemoteVerb::kBind;
    if (kind == LinkCall::Kind::kRenew) {
      verb = client::Client::RemoteVerb::kRenew;
    }
    if (kind == LinkCall::Kind::kDeactivate) {
      verb = client::Client::RemoteVerb::kDeactivate;
    }
    response = client_->CallRemote(verb, request);
  }
  std::vector<NamespacedName> keys;
  keys.reserve(calls.size());
  for (const LinkCall& call : calls) keys.push_back(call.key);
  if (!response.ok()) {
    // The calls are level state's: the controller decides again from what
    // the worker holds once it is reachable.
    spdlog::warn("MultiKueue: {} of {} copies on worker {} failed: {}",
                 KindName(kind), calls.size(), options_.name,
                 response.status().ToString());
    notify_(options_.name, keys, Event::kAnswered);
    return;
  }
  std::vector<NamespacedName> answered;
  {
    absl::MutexLock lock(&mu_);
    for (int i = 0; i < static_cast<int>(calls.size()); ++i) {
      const NamespacedName& key = calls[i].key;
      if (i >= response->results_size()) {
        answered.push_back(key);
        continue;
      }
      const v1::RemoteItemResult& result = response->results(i);
      if (result.code() != 0) {
        spdlog::debug("MultiKueue: {} {}/{} on worker {}: {}", KindName(kind),
                      key.first, key.second, options_.name, result.message());
      } else if (kind == LinkCall::Kind::kDelete) {
        v1::Workload gone;
        gone.mutable_metadata()->set_namespace_(key.first);
        gone.mutable_metadata()->set_name(key.second);
        Apply(gone, response->revision(), /*deleted=*/true);
      } else if (result.has_workload()) {
        // A worker that answers with the copy (one from before
        // omit_workloads).
        Apply(result.workload(), result.workload().metadata().revision(),
              /*deleted=*/false);
      } else if (result.workload_revision() > 0) {
        auto entry = mirror_.find(key);
        if (entry == mirror_.end() ||
            entry->second.revision < result.workload_revision()) {
          awaiting_.emplace(key, result.workload_revision());
          continue;
        }
      }
      answered.push_back(key);
    }
  }
  if (!answered.empty()) notify_(options_.name, answered, Event::kAnswered);
  // Copies made on the worker, nothing admitted yet.
  if (kind == LinkCall::Kind::kUpsert) Failpoint("federation-after-upsert");
}

}  // namespace kq::federation
