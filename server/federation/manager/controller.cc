#include "server/federation/manager/controller.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "spdlog/spdlog.h"

#include "server/codec/codec.h"
#include "server/federation/connection.h"
#include "server/federation/incremental.h"
#include "server/federation/manager/failpoint.h"

namespace kq::federation {

namespace {

// How often the loop looks at its timers, renewals and collection when
// nothing wakes it.
constexpr absl::Duration kTick = absl::Milliseconds(200);
// A decision that failed the rules' way (a nominated worker not connected)
// is tried again after this.
constexpr absl::Duration kRetryAfter = absl::Seconds(2);
// How often the clusters' Active conditions are reported to the engine.
constexpr absl::Duration kReportEvery = absl::Seconds(1);

Settings RulesSettings(const MultiKueueSettings& s) {
  Settings out;
  out.dispatcher_name = s.dispatcher_name;
  out.incremental_step_size = s.incremental_step_size;
  out.incremental_round_timeout = s.incremental_round_timeout;
  out.worker_lost_timeout = s.worker_lost_timeout;
  return out;
}

ManagerState ManagerStateOf(const Workload& wl) {
  ManagerState state;
  if (!wl.multikueue.has_value()) return state;
  state.nominated_cluster_names = wl.multikueue->nominated_cluster_names;
  state.cluster_name = wl.multikueue->cluster_name;
  state.epoch = wl.multikueue->epoch;
  state.round_start = wl.multikueue->round_start;
  return state;
}

// One workload's decision, between the commit and the calls.
struct Decided {
  NamespacedName key;
  std::shared_ptr<const Workload> local;
  GroupDecision decision;
  bool has_change = false;
};

}  // namespace

Controller::Controller(engine::Engine& engine, ControllerOptions options)
    : engine_(engine), options_(std::move(options)) {}

Controller::~Controller() { Stop(); }

void Controller::TakeConfig(const admission::AdmissionState& state) {
  Config config;
  config.settings = state.configuration().multi_kueue;
  for (const auto& [name, check] : state.admission_checks()) {
    if (check.controller_name != kMultiKueueControllerName) continue;
    std::vector<std::string>& clusters = config.check_clusters[name];
    if (check.parameters_kind != "MultiKueueConfig") continue;
    auto mkc = state.multikueue_configs().find(check.parameters_name);
    if (mkc != state.multikueue_configs().end()) {
      clusters = mkc->second.clusters;
    }
  }
  config.clusters = state.multikueue_clusters();
  configured_ = true;
  if (config == config_) return;
  config_ = std::move(config);
  config_changed_ = true;
  // Every followed workload is looked at again.
  for (const auto& [key, local] : locals_) dirty_.insert(key);
}

absl::Status Controller::Start() {
  // The configuration as committed, before the first list.
  auto read = std::make_shared<absl::Notification>();
  auto ok = std::make_shared<bool>(false);
  engine_.ReadState(
      [this, read, ok](const admission::AdmissionState* state, int64_t) {
        if (state != nullptr) {
          absl::MutexLock lock(&mu_);
          TakeConfig(*state);
          *ok = true;
        }
        read->Notify();
      });
  read->WaitForNotification();
  if (!*ok) return absl::UnavailableError("kqd is stopping");
  absl::StatusOr<engine::Listed<Workload>> listed =
      engine_.ListWorkloads(engine::WorkloadFilter{});
  if (!listed.ok()) return listed.status();
  {
    absl::MutexLock lock(&mu_);
    for (Workload& wl : listed->items) {
      std::optional<std::string> check = CheckOf(wl, config_);
      if (!check.has_value()) continue;
      const NamespacedName key = KeyOf(wl);
      auto it = locals_.find(key);
      // A batch observed since may hold a newer state.
      if (it != locals_.end() &&
          it->second.workload->meta.revision >= wl.meta.revision) {
        continue;
      }
      locals_[key] =
          Local{std::make_shared<const Workload>(std::move(wl)), *check};
      dirty_.insert(key);
    }
    listed_ = true;
  }
  thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
  return absl::OkStatus();
}

void Controller::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  std::map<std::string, std::shared_ptr<WorkerLink>> links;
  {
    absl::MutexLock lock(&mu_);
    links.swap(links_);
  }
  // Destroyed outside the lock: a link's threads notify the controller.
  links.clear();
}

std::optional<std::string> Controller::CheckOf(const Workload& wl,
                                               const Config& config) {
  for (const AdmissionCheckState& check : wl.admission_checks) {
    if (config.check_clusters.contains(check.name)) return check.name;
  }
  return std::nullopt;
}

void Controller::OnCommitted(const engine::CommittedBatch& batch) {
  const admission::AdmissionState& state = *batch.state;
  bool objects_changed = false;
  for (const store::Event& event : batch.events) {
    if (const auto* object = std::get_if<ConfigObject>(&event.object)) {
      const ObjectKind kind = KindOf(*object);
      if (kind == ObjectKind::kAdmissionCheck ||
          kind == ObjectKind::kMultiKueueConfig ||
          kind == ObjectKind::kMultiKueueCluster) {
        objects_changed = true;
      }
    }
  }
  absl::MutexLock lock(&mu_);
  if (!configured_ || objects_changed ||
      !(config_.settings == state.configuration().multi_kueue)) {
    TakeConfig(state);
  }
  for (const store::Event& event : batch.events) {
    const auto* wl = std::get_if<Workload>(&event.object);
    if (wl == nullptr) continue;
    const NamespacedName key = KeyOf(*wl);
    std::optional<std::string> check = CheckOf(*wl, config_);
    if (!check.has_value()) {
      // Its copies, if it had any, are the collection's.
      locals_.erase(key);
      continue;
    }
    locals_[key] = Local{std::make_shared<const Workload>(*wl), *check};
    dirty_.insert(key);
  }
}

void Controller::Enqueue(std::vector<NamespacedName> keys) {
  absl::MutexLock lock(&mu_);
  for (NamespacedName& key : keys) {
    if (locals_.contains(key)) dirty_.insert(std::move(key));
  }
}

std::shared_ptr<WorkerLink> Controller::LinkOf(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = links_.find(name);
  return it == links_.end() ? nullptr : it->second;
}

void Controller::SyncLinks(const Config& config, absl::Time now) {
  std::vector<std::shared_ptr<WorkerLink>> retired;
  std::map<std::string, Condition> failed;
  std::map<std::string, WorkerLink::Options> wanted;
  for (const auto& [name, cluster] : config.clusters) {
    absl::StatusOr<client::ClientOptions> client = options_.resolve(cluster);
    if (!client.ok()) {
      failed[name] = ActiveFailedCondition(
          kReasonBadKubeConfig,
          LoadClientConfigFailedMessage(client.status().message()),
          ConnectionState(), now);
      continue;
    }
    WorkerLink::Options link;
    link.name = name;
    link.client = *std::move(client);
    link.origin = config.settings.origin;
    link.bookmark_interval = options_.bookmark_interval;
    link.silence_timeout = options_.silence_timeout;
    link.relay_lease = options_.relay_lease;
    if (config.settings.lease_fencing) {
      // The worker stops a copy it hears nothing about before the manager
      // may give up on that worker and dispatch elsewhere.
      link.fence = true;
      link.relay_lease = std::min(options_.relay_lease,
                                  config.settings.worker_lost_timeout / 2);
    }
    wanted[name] = std::move(link);
  }
  std::vector<std::pair<std::string, WorkerLink::Options>> to_create;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = links_.begin(); it != links_.end();) {
      auto want = wanted.find(it->first);
      const WorkerLink::Options& have = it->second->options();
      const bool same =
          want != wanted.end() && want->second.origin == have.origin &&
          want->second.client.target == have.client.target &&
          want->second.client.tls_ca_file == have.client.tls_ca_file &&
          want->second.client.tls_cert_file == have.client.tls_cert_file &&
          want->second.client.tls_key_file == have.client.tls_key_file &&
          want->second.client.token_file == have.client.token_file &&
          want->second.client.tls_server_name == have.client.tls_server_name &&
          want->second.fence == have.fence &&
          want->second.relay_lease == have.relay_lease;
      if (same) {
        wanted.erase(want);
        ++it;
        continue;
      }
      retired.push_back(it->second);
      if (options_.metrics != nullptr)
        options_.metrics->RemoveCluster(it->first);
      it = links_.erase(it);
    }
    for (auto& [name, condition] : failed) reported_.erase(name);
  }
  retired.clear();  // joins their threads, outside the lock
  {
    // Calls queued on a retired link are never answered.
    absl::MutexLock lock(&mu_);
    outstanding_.clear();
    for (const NamespacedName& key : waiting_) dirty_.insert(key);
    waiting_.clear();
  }
  for (auto& [name, link_options] : wanted) {
    auto link = std::make_shared<WorkerLink>(
        link_options,
        [this](const std::string& worker,
               const std::vector<NamespacedName>& keys,
               WorkerLink::Event event) {
          absl::MutexLock lock(&mu_);
          if (event == WorkerLink::Event::kConnection) {
            workers_changed_.insert(worker);
          }
          for (const NamespacedName& key : keys) {
            if (event == WorkerLink::Event::kAnswered) Answered(key);
            if (locals_.contains(key)) dirty_.insert(key);
          }
        },
        now);
    absl::MutexLock lock(&mu_);
    links_[name] = std::move(link);
  }
  // The clusters kq cannot reach at all say why at once.
  std::map<std::string, Condition> report;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [name, condition] : failed) {
      if (AlreadyReported(name, condition)) continue;
      reported_[name] = condition;
      report[name] = condition;
    }
  }
  if (!report.empty()) {
    absl::Status s = engine_.SetMultiKueueClusterActive(std::move(report));
    if (!s.ok()) spdlog::warn("MultiKueue: {}", s.ToString());
  }
}

bool Controller::AlreadyReported(const std::string& cluster,
                                 const Condition& condition) const {
  // The transition time alone changing is no news.
  auto old = reported_.find(cluster);
  return old != reported_.end() && old->second.status == condition.status &&
         old->second.reason == condition.reason &&
         old->second.message == condition.message;
}

void Controller::ReportClusterConditions(absl::Time now) {
  std::map<std::string, Condition> report;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, link] : links_) {
      Condition condition = link->ActiveCondition(now);
      if (options_.metrics != nullptr) {
        options_.metrics->SetConnected(name,
                                       condition.status == kConditionTrue);
      }
      if (AlreadyReported(name, condition)) continue;
      reported_[name] = condition;
      report[name] = std::move(condition);
    }
  }
  if (report.empty()) return;
  absl::Status s = engine_.SetMultiKueueClusterActive(std::move(report));
  if (!s.ok()) spdlog::warn("MultiKueue: {}", s.ToString());
}

void Controller::Loop(std::stop_token stop) {
  absl::Time next_renew = absl::Now();
  absl::Time next_gc = absl::Now();
  absl::Time next_report = absl::Now();
  while (!stop.stop_requested()) {
    std::vector<NamespacedName> keys;
    std::optional<Config> sync;
    absl::Duration gc_interval;
    absl::Duration relay_lease = options_.relay_lease;
    {
      absl::MutexLock lock(&mu_);
      auto busy = [this, &stop] {
        mu_.AssertReaderHeld();
        return !dirty_.empty() || config_changed_ ||
               !workers_changed_.empty() || stop.stop_requested();
      };
      mu_.AwaitWithTimeout(absl::Condition(&busy), kTick);
      const absl::Time now = absl::Now();
      if (config_changed_) {
        sync = config_;
        config_changed_ = false;
      }
      while (!timers_.empty() && timers_.begin()->first <= now) {
        if (locals_.contains(timers_.begin()->second)) {
          dirty_.insert(timers_.begin()->second);
        }
        timers_.erase(timers_.begin());
      }
      for (const std::string& worker : workers_changed_) {
        for (const auto& [key, local] : locals_) {
          auto clusters = config_.check_clusters.find(local.check);
          if (clusters == config_.check_clusters.end()) continue;
          if (std::find(clusters->second.begin(), clusters->second.end(),
                        worker) != clusters->second.end()) {
            dirty_.insert(key);
          }
        }
      }
      workers_changed_.clear();
      while (!dirty_.empty() && keys.size() < options_.max_round) {
        const NamespacedName key = *dirty_.begin();
        dirty_.erase(dirty_.begin());
        // Calls of an earlier decision are still out: deciding before
        // their answers would send them again.
        if (outstanding_.contains(key)) {
          waiting_.insert(key);
          continue;
        }
        keys.push_back(key);
      }
      gc_interval = config_.settings.gc_interval;
      if (config_.settings.lease_fencing) {
        relay_lease =
            std::min(relay_lease, config_.settings.worker_lost_timeout / 2);
      }
    }
    const absl::Time now = absl::Now();
    if (sync.has_value()) SyncLinks(*sync, now);
    if (!keys.empty()) Reconcile(keys, now);
    if (now >= next_report) {
      ReportClusterConditions(now);
      next_report = now + kReportEvery;
    }
    if (now >= next_renew) {
      RenewRelays(now);
      next_renew = now + relay_lease / 3;
    }
    if (gc_interval > absl::ZeroDuration() && now >= next_gc) {
      CollectGarbage(now);
      next_gc = now + gc_interval;
    }
  }
}

void Controller::Reconcile(const std::vector<NamespacedName>& keys,
                           absl::Time now) {
  Config config;
  std::vector<Local> locals;
  std::map<std::string, std::shared_ptr<WorkerLink>> links;
  {
    absl::MutexLock lock(&mu_);
    config = config_;
    links = links_;
    for (const NamespacedName& key : keys) {
      auto it = locals_.find(key);
      if (it != locals_.end()) locals.push_back(it->second);
    }
  }
  const Settings settings = RulesSettings(config.settings);
  std::vector<Decided> decided;
  std::vector<admission::MultiKueueChange> changes;
  std::vector<size_t> change_of;  // index into decided, per change
  for (Local& local : locals) {
    const Workload& wl = *local.workload;
    auto clusters = config.check_clusters.find(local.check);
    if (clusters == config.check_clusters.end()) continue;
    GroupInput input;
    input.local = &wl;
    input.state = ManagerStateOf(wl);
    input.check_name = local.check;
    input.settings = settings;
    input.now = now;
    // The Incremental dispatcher's nominations come first: the group copies
    // to them.
    std::optional<IncrementalDecision> incremental;
    if (settings.dispatcher_name == kDispatcherIncremental) {
      IncrementalInput in;
      in.workload = &wl;
      in.state = input.state;
      in.check_name = local.check;
      in.clusters = clusters->second;
      in.settings = settings;
      in.now = now;
      incremental = IncrementalReconcile(in);
      if (incremental->nominated_cluster_names.has_value()) {
        input.state.nominated_cluster_names =
            *incremental->nominated_cluster_names;
      }
      if (incremental->round_start.has_value()) {
        input.state.round_start = *incremental->round_start;
      }
    }
    for (const std::string& name : clusters->second) {
      WorkerView view;
      view.name = name;
      auto link = links.find(name);
      if (link != links.end()) {
        const ConnectionState connection = link->second->connection();
        view.connected = connection.connected();
        view.lost_since = connection.lost_since();
        if (view.connected) {
          if (std::shared_ptr<const RemoteCopy> copy =
                  link->second->CopyOf(KeyOf(wl))) {
            if (SameSpec(wl, copy->status)) {
              view.copy = std::move(copy);
            } else {
              auto out_of_sync = std::make_shared<RemoteCopy>(*copy);
              out_of_sync->spec_matches = false;
              view.copy = std::move(out_of_sync);
            }
          }
        }
      }
      input.workers.push_back(std::move(view));
    }
    Decided d{KeyOf(wl), local.workload, ReconcileGroup(input), false};
    const ManagerState before = ManagerStateOf(wl);
    ManagerState after = input.state;
    const LocalUpdate& update = d.decision.update;
    if (update.nominated_cluster_names.has_value()) {
      after.nominated_cluster_names = *update.nominated_cluster_names;
    }
    if (update.cluster_name.has_value())
      after.cluster_name = *update.cluster_name;
    if (update.epoch.has_value()) after.epoch = *update.epoch;
    if (update.round_start.has_value()) after.round_start = *update.round_start;
    admission::MultiKueueChange change;
    change.key = d.key;
    change.uid = wl.meta.uid;
    change.revision = wl.meta.revision;
    if (!(after == before)) {
      MultiKueueStatus status =
          wl.multikueue.has_value() ? *wl.multikueue : MultiKueueStatus{};
      status.nominated_cluster_names = after.nominated_cluster_names;
      status.cluster_name = after.cluster_name;
      status.epoch = after.epoch;
      status.round_start = after.round_start;
      change.status = std::move(status);
    }
    if (update.check.has_value()) {
      change.check_state = *update.check;
      // The runner learns the worker's flavors from the manager.
      if (update.check->state == kCheckStateReady) {
        for (const WorkerView& view : input.workers) {
          if (view.name != after.cluster_name || view.copy == nullptr) {
            continue;
          }
          if (!change.status.has_value()) {
            change.status =
                wl.multikueue.has_value() ? *wl.multikueue : MultiKueueStatus{};
          }
          if (view.copy->status.admission.has_value()) {
            change.status->worker_admission = *view.copy->status.admission;
          }
        }
      }
    }
    if (update.finish.has_value()) {
      change.finish =
          std::make_pair(update.finish->reason, update.finish->message);
    }
    d.has_change = change.status.has_value() ||
                   change.check_state.has_value() || change.finish.has_value();
    if (d.has_change) {
      changes.push_back(std::move(change));
      change_of.push_back(decided.size());
    }
    if (incremental.has_value() &&
        incremental->requeue_after > absl::ZeroDuration() &&
        (d.decision.requeue_after == absl::ZeroDuration() ||
         incremental->requeue_after < d.decision.requeue_after)) {
      d.decision.requeue_after = incremental->requeue_after;
    }
    decided.push_back(std::move(d));
  }
  // 1. The decisions are committed before any call they imply is sent.
  std::vector<bool> committed(decided.size(), true);
  // A decision refused for another reason than a newer state (Aborted) is
  // not decided again at once: the same state would decide the same.
  std::vector<bool> refused(decided.size(), false);
  if (!changes.empty()) {
    absl::StatusOr<std::vector<absl::StatusOr<Workload>>> results =
        engine_.UpdateMultiKueue(std::move(changes));
    for (size_t i = 0; i < change_of.size(); ++i) {
      const absl::Status status =
          !results.ok() ? results.status() : (*results)[i].status();
      if (status.ok()) continue;
      committed[change_of[i]] = false;
      if (status.code() != absl::StatusCode::kAborted) {
        refused[change_of[i]] = true;
        spdlog::warn("MultiKueue: {}: {}", Describe(decided[change_of[i]].key),
                     status.ToString());
      }
    }
  }
  for (size_t i = 0; i < change_of.size(); ++i) {
    const Decided& d = decided[change_of[i]];
    if (committed[change_of[i]] && d.decision.update.cluster_name.has_value() &&
        !d.decision.update.cluster_name->empty()) {
      // The winner is stored; the losers' deletions are not sent yet.
      Failpoint("federation-after-winner-commit");
    }
  }
  // 2. The calls, per worker in decision order; then timers.
  std::map<std::string, std::vector<LinkCall>> calls;
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < decided.size(); ++i) {
    Decided& d = decided[i];
    if (refused[i]) {
      timers_.emplace(now + kRetryAfter, d.key);
      continue;
    }
    if (!committed[i]) {
      // A newer state of the workload is on its way; it is decided again
      // then (or now, if it came already).
      dirty_.insert(d.key);
      continue;
    }
    // Made once, sent to every worker copied to.
    std::shared_ptr<const v1::Workload> copy;
    for (const RemoteOp& op : d.decision.ops) {
      LinkCall call;
      call.key = d.key;
      call.origin_uid = d.local->meta.uid;
      call.epoch = op.epoch;
      call.message = op.message;
      switch (op.kind) {
        case RemoteOpKind::kUpsert:
          call.kind = LinkCall::Kind::kUpsert;
          if (copy == nullptr) {
            copy =
                std::make_shared<const v1::Workload>(CopyForWorker(*d.local));
          }
          call.copy = copy;
          break;
        case RemoteOpKind::kDelete:
          call.kind = LinkCall::Kind::kDelete;
          // A stale copy may be of another incarnation: the worker checks
          // the uid the copy carries.
          if (auto link = links.find(op.worker); link != links.end()) {
            if (std::shared_ptr<const RemoteCopy> copy =
                    link->second->CopyOf(d.key)) {
              call.origin_uid = copy->origin_uid;
              call.epoch = std::max(call.epoch, copy->epoch);
            }
          }
          break;
        case RemoteOpKind::kBind:
          call.kind = LinkCall::Kind::kBind;
          Failpoint("federation-before-bind");
          break;
        case RemoteOpKind::kDeactivate:
          call.kind = LinkCall::Kind::kDeactivate;
          break;
      }
      calls[op.worker].push_back(std::move(call));
    }
    for (const Event& event : d.decision.events) {
      spdlog::info("MultiKueue: {} ({}): {}", Describe(d.key),
                   event.type == EventType::kWarning ? "Warning" : "Normal",
                   event.message);
    }
    if (options_.metrics != nullptr) {
      for (const MetricIncrement& m : d.decision.dispatched) {
        options_.metrics->Dispatched(m.cluster_queue, m.cluster);
      }
      for (const MetricIncrement& m : d.decision.admitted) {
        options_.metrics->Admitted(m.cluster_queue, m.cluster);
      }
    }
    absl::Duration requeue = d.decision.requeue_after;
    if (!d.decision.status.ok() &&
        (requeue == absl::ZeroDuration() || requeue > kRetryAfter)) {
      requeue = kRetryAfter;
    }
    if (requeue > absl::ZeroDuration()) timers_.emplace(now + requeue, d.key);
    // A finished workload whose copies on connected workers are gone is
    // followed no more; a copy on a worker that was away is the garbage
    // collection's once it is back.
    if (d.decision.steady() &&
        IsConditionTrue(d.local->conditions, kConditionFinished)) {
      auto it = locals_.find(d.key);
      if (it != locals_.end() &&
          it->second.workload->meta.revision == d.local->meta.revision) {
        locals_.erase(it);
      }
    }
  }
  for (auto& [worker, list] : calls) {
    auto link = links.find(worker);
    if (link == links.end()) continue;
    for (const LinkCall& call : list) ++outstanding_[call.key];
    link->second->Send(std::move(list));
  }
}

void Controller::Answered(const NamespacedName& key) {
  auto it = outstanding_.find(key);
  if (it == outstanding_.end()) return;
  if (--it->second > 0) return;
  outstanding_.erase(it);
  if (waiting_.erase(key) > 0) dirty_.insert(key);
}

void Controller::RenewRelays(absl::Time now) {
  std::map<std::string, std::vector<LinkCall>> calls;
  std::map<std::string, std::shared_ptr<WorkerLink>> links;
  {
    absl::MutexLock lock(&mu_);
    links = links_;
    for (const auto& [key, local] : locals_) {
      const Workload& wl = *local.workload;
      if (!wl.multikueue.has_value() || wl.multikueue->cluster_name.empty() ||
          !HoldsQuota(wl)) {
        continue;
      }
      LinkCall call;
      call.kind = LinkCall::Kind::kRenew;
      call.key = key;
      call.origin_uid = wl.meta.uid;
      call.epoch = wl.multikueue->epoch;
      calls[wl.multikueue->cluster_name].push_back(std::move(call));
    }
  }
  for (auto& [worker, list] : calls) {
    auto link = links.find(worker);
    if (link == links.end()) continue;
    // Only bound copies have a relay to renew.
    std::vector<LinkCall> bound;
    for (LinkCall& call : list) {
      std::shared_ptr<const RemoteCopy> copy = link->second->CopyOf(call.key);
      if (copy != nullptr && copy->bound) bound.push_back(std::move(call));
    }
    link->second->Send(std::move(bound));
  }
  (void)now;
}

void Controller::CollectGarbage(absl::Time now) {
  std::map<std::string, std::shared_ptr<WorkerLink>> links;
  std::map<NamespacedName, Uid> known;
  {
    absl::MutexLock lock(&mu_);
    if (!listed_) return;
    links = links_;
    for (const auto& [key, local] : locals_) {
      known[key] = local.workload->meta.uid;
    }
  }
  for (const auto& [name, link] : links) {
    if (!link->connection().connected()) continue;
    std::vector<LinkCall> calls;
    for (const auto& [key, uid] : link->Copies()) {
      auto it = known.find(key);
      if (it != known.end() && it->second == uid) continue;
      std::shared_ptr<const RemoteCopy> copy = link->CopyOf(key);
      if (copy == nullptr) continue;
      LinkCall call;
      call.kind = LinkCall::Kind::kDelete;
      call.key = key;
      call.origin_uid = uid;
      call.epoch = copy->epoch;
      calls.push_back(std::move(call));
    }
    if (!calls.empty()) {
      spdlog::info(
          "MultiKueue: collecting {} copies on worker {} whose "
          "workload is gone",
          calls.size(), name);
    }
    link->Send(std::move(calls));
  }
  (void)now;
}

std::vector<Controller::CopyReport> Controller::ReportCopies(
    const NamespacedName& key) const {
  std::vector<CopyReport> reports;
  absl::MutexLock lock(&mu_);
  auto local = locals_.find(key);
  if (local == locals_.end()) return reports;
  auto clusters = config_.check_clusters.find(local->second.check);
  if (clusters == config_.check_clusters.end()) return reports;
  for (const std::string& name : clusters->second) {
    CopyReport report;
    report.cluster = name;
    auto link = links_.find(name);
    if (link != links_.end()) {
      report.connected = link->second->connection().connected();
      if (auto copy = link->second->CopyOf(key)) report.copy = *copy;
    }
    reports.push_back(std::move(report));
  }
  return reports;
}

v1::MultiKueueCopyState CopyStateOf(const Controller::CopyReport& report) {
  v1::MultiKueueCopyState out;
  out.set_cluster(report.cluster);
  out.set_connected(report.connected);
  if (!report.copy.has_value()) return out;
  const Workload& wl = report.copy->status;
  out.set_present(true);
  out.set_bound(report.copy->bound);
  out.set_epoch(report.copy->epoch);
  // The condition that says most about where the copy is.
  const Condition* deciding = nullptr;
  std::string state = StateName(StateOf(wl));
  if (IsConditionTrue(wl.conditions, kConditionEvicted) &&
      StateOf(wl) != WorkloadState::kFinished) {
    state = "Evicted";
    deciding = FindCondition(wl.conditions, kConditionEvicted);
  } else {
    for (const char* type :
         {kConditionFinished, kConditionAdmitted, kConditionQuotaReserved}) {
      if (const Condition* c = FindCondition(wl.conditions, type);
          c != nullptr && (c->status == kConditionTrue ||
                           std::string(type) == kConditionQuotaReserved)) {
        deciding = c;
        break;
      }
    }
  }
  out.set_state(state);
  if (deciding != nullptr) {
    out.set_reason(deciding->reason);
    out.set_message(deciding->message);
    *out.mutable_since() = codec::ToProto(deciding->last_transition_time);
  }
  return out;
}

}  // namespace kq::federation
