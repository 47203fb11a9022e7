#include "server/engine/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "spdlog/spdlog.h"

#include "server/common/status_macros.h"
#include "server/core/validation.h"
#include "server/scheduler/scheduler.h"

namespace kq::engine {
namespace {

using EventType = store::Event::Type;

constexpr char kReasonMisconfigured[] = "Misconfigured";
constexpr char kReasonSuspended[] = "Suspended";

std::string Describe(const ObjectKey& key) {
  if (key.namespace_name.empty()) {
    return absl::StrCat(KindName(key.kind), " \"", key.name, "\"");
  }
  return absl::StrCat(KindName(key.kind), " \"", key.namespace_name, "/",
                      key.name, "\"");
}

std::string Describe(const NamespacedName& key) {
  return absl::StrCat("Workload \"", key.first, "/", key.second, "\"");
}

// Prefixes an error with the object it is about, keeping its code.
absl::Status About(const std::string& who, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(who, ": ", status.message()));
}

NamespacedName KeyOf(const Workload& wl) {
  return {wl.meta.namespace_name, wl.meta.name};
}

// Equality of what a user applies: everything but server-set metadata.
bool SameSpec(ConfigObject a, ConfigObject b) {
  for (ConfigObject* o : {&a, &b}) {
    ObjectMeta& meta = MutableMetaOf(*o);
    meta.uid.clear();
    meta.revision = 0;
    meta.creation_timestamp = absl::UnixEpoch();
  }
  return a == b;
}

// Sets QuotaReserved=False with a reason; returns whether anything changed.
bool SetPendingCondition(Workload& wl, const std::string& reason,
                         const std::string& message, absl::Time now) {
  const Condition* current =
      FindCondition(wl.conditions, kConditionQuotaReserved);
  if (current != nullptr && current->status == "False" &&
      current->reason == reason && current->message == message) {
    return false;
  }
  SetCondition(&wl.conditions, Condition{kConditionQuotaReserved, "False",
                                         reason, message, now});
  return true;
}

// Kueue's resetActiveCondition: a True condition becomes False with the
// reason and "Previously: <message>".
void ResetActiveCondition(Workload& wl, const std::string& type,
                          const std::string& reason, absl::Time now) {
  const Condition* prev = FindCondition(wl.conditions, type);
  if (prev == nullptr || prev->status != "True") return;
  SetCondition(&wl.conditions,
               Condition{type, "False", reason,
                         absl::StrCat("Previously: ", prev->message), now});
}

bool HoldsQuota(const Workload& wl) {
  return wl.admission.has_value() &&
         IsConditionTrue(wl.conditions, kConditionQuotaReserved);
}

}  // namespace

Engine::Engine(store::Store& store, Clock& clock, EngineOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      event_log_(options.event_log_capacity) {}

Engine::~Engine() { Stop(); }

// ---------------------------------------------------------------------------
// Threading

template <typename T>
absl::StatusOr<T> Engine::Call(std::function<absl::StatusOr<T>()> fn) {
  struct Slot {
    absl::Notification done;
    absl::StatusOr<T> result = absl::UnknownError("command did not run");
  };
  auto slot = std::make_shared<Slot>();
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || !running_) {
      return absl::UnavailableError("kqd is shutting down");
    }
    commands_.push_back([this, fn = std::move(fn), slot] {
      slot->result = fn();
      replies_.push_back([slot](const absl::Status& commit) {
        if (!commit.ok()) slot->result = commit;
        slot->done.Notify();
      });
    });
    wake_.Signal();
  }
  slot->done.WaitForNotification();
  return std::move(slot->result);
}

absl::Status Engine::Start() {
  KQ_RETURN_IF_ERROR(Load());
  KQ_ASSIGN_OR_RETURN(int64_t oldest, store_.OldestEventRevision());
  KQ_ASSIGN_OR_RETURN(std::vector<store::Event> events,
                      store_.ReadEvents(oldest > 0 ? oldest - 1 : 0,
                                        options_.event_log_capacity));
  event_log_.Reset(revision_, std::move(events));
  // Converge before serving: a crash may have left admissible work.
  std::deque<Command> none;
  needs_scheduling_ = true;
  RunBatch(none);
  {
    absl::MutexLock lock(&mu_);
    running_ = true;
  }
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void Engine::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (!running_ || stopping_) {
      stopping_ = true;
      if (!thread_.joinable()) return;
    }
    stopping_ = true;
    wake_.Signal();
  }
  if (thread_.joinable()) thread_.join();
  event_log_.Close();
}

absl::Status Engine::LoadForTest() { return Load(); }

void Engine::RunOnceForTest() {
  std::deque<Command> batch;
  {
    absl::MutexLock lock(&mu_);
    batch.swap(commands_);
  }
  RunBatch(batch);
}

void Engine::Loop() {
  while (true) {
    std::deque<Command> batch;
    {
      absl::MutexLock lock(&mu_);
      while (commands_.empty() && !stopping_ && !needs_scheduling_) {
        wake_.Wait(&mu_);
      }
      if (commands_.empty() && stopping_) break;
      while (!commands_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(commands_.front()));
        commands_.pop_front();
      }
    }
    RunBatch(batch);
  }
}

void Engine::RunBatch(std::deque<Command>& commands) {
  batch_now_ = clock_.TimeNow();
  // 1. Apply every command of the batch in arrival order.
  for (Command& command : commands) command();
  // 2. Configuration changed: rebuild quota tree and queues.
  if (config_changed_) {
    RebuildCacheAndQueues();
    config_changed_ = false;
    needs_scheduling_ = true;
  }
  // 3. Scheduling passes over the batch's state.
  if (needs_scheduling_) RunPasses(batch_now_);
  // 4. One transaction for everything, then the replies.
  absl::Status commit = CommitBatch();
  if (!commit.ok()) {
    spdlog::error("commit of revision {} failed: {}; reloading state",
                  revision_ + 1, commit.ToString());
    absl::Status reload = Load();
    if (!reload.ok()) {
      spdlog::critical("reloading state failed: {}", reload.ToString());
    }
    commit = absl::UnavailableError(
        absl::StrCat("the change was not stored: ", commit.message()));
  }
  std::vector<Reply> replies;
  replies.swap(replies_);
  for (Reply& reply : replies) reply(commit);
  finished_workloads_.clear();
}

void Engine::MarkWorkload(const NamespacedName& key, EventType type) {
  auto [it, inserted] = dirty_workloads_.emplace(key, type);
  if (!inserted && it->second != EventType::kAdded) it->second = type;
}

void Engine::MarkObject(const ObjectKey& key, EventType type) {
  auto [it, inserted] = dirty_objects_.emplace(key, type);
  if (!inserted) {
    if (it->second == EventType::kAdded && type == EventType::kDeleted) {
      // Created and deleted in one batch: nothing to store.
      dirty_objects_.erase(it);
      deleted_objects_.erase(key);
      return;
    }
    if (it->second != EventType::kAdded) it->second = type;
  }
}

absl::Status Engine::CommitBatch() {
  if (dirty_objects_.empty() && dirty_workloads_.empty()) {
    return absl::OkStatus();
  }
  store::WriteBatch batch;
  batch.revision = revision_ + 1;
  for (const auto& [key, type] : dirty_objects_) {
    if (type == EventType::kDeleted) {
      batch.deleted_objects.push_back(key);
      auto d = deleted_objects_.find(key);
      if (d != deleted_objects_.end()) {
        MutableMetaOf(d->second).revision = batch.revision;
        batch.events.push_back({batch.revision, type, d->second});
      }
      continue;
    }
    ConfigObject& object = objects_.at(key);
    MutableMetaOf(object).revision = batch.revision;
    // Keep the typed copy in step.
    std::visit(
        [&](auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, ResourceFlavor>) {
            flavors_[key.name].meta.revision = batch.revision;
          } else if constexpr (std::is_same_v<T, ClusterQueue>) {
            cluster_queues_[key.name].meta.revision = batch.revision;
          } else if constexpr (std::is_same_v<T, Cohort>) {
            cohorts_[key.name].meta.revision = batch.revision;
          } else if constexpr (std::is_same_v<T, LocalQueue>) {
            local_queues_[{key.namespace_name, key.name}].meta.revision =
                batch.revision;
          } else if constexpr (std::is_same_v<T, WorkloadPriorityClass>) {
            priority_classes_[key.name].meta.revision = batch.revision;
          } else if constexpr (std::is_same_v<T, AdmissionCheck>) {
            admission_checks_[key.name].meta.revision = batch.revision;
          } else {
            namespaces_[key.name].meta.revision = batch.revision;
          }
        },
        object);
    batch.upserted_objects.push_back(object);
    batch.events.push_back({batch.revision, type, object});
  }
  for (const auto& [key, type] : dirty_workloads_) {
    Workload* wl = nullptr;
    auto live = workloads_.find(key);
    if (live != workloads_.end()) {
      wl = &live->second;
    } else {
      auto finished = finished_workloads_.find(key);
      if (finished == finished_workloads_.end()) continue;
      wl = &finished->second;
    }
    wl->meta.revision = batch.revision;
    batch.upserted_workloads.push_back(*wl);
    batch.events.push_back({batch.revision, type, *wl});
  }
  std::vector<store::Event> events = batch.events;
  dirty_objects_.clear();
  deleted_objects_.clear();
  dirty_workloads_.clear();
  KQ_RETURN_IF_ERROR(store_.Commit(batch));
  revision_ = batch.revision;
  event_log_.Append(revision_, std::move(events));
  return absl::OkStatus();
}

absl::Status Engine::Load() {
  KQ_ASSIGN_OR_RETURN(store::LoadedState state, store_.Load());
  revision_ = state.revision;
  objects_.clear();
  flavors_.clear();
  cluster_queues_.clear();
  cohorts_.clear();
  local_queues_.clear();
  priority_classes_.clear();
  admission_checks_.clear();
  namespaces_.clear();
  workloads_.clear();
  dirty_objects_.clear();
  deleted_objects_.clear();
  dirty_workloads_.clear();
  for (ConfigObject& object : state.objects) {
    ObjectKey key = KeyOf(object);
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, ResourceFlavor>) {
            flavors_[key.name] = o;
          } else if constexpr (std::is_same_v<T, ClusterQueue>) {
            cluster_queues_[key.name] = o;
          } else if constexpr (std::is_same_v<T, Cohort>) {
            cohorts_[key.name] = o;
          } else if constexpr (std::is_same_v<T, LocalQueue>) {
            local_queues_[{key.namespace_name, key.name}] = o;
          } else if constexpr (std::is_same_v<T, WorkloadPriorityClass>) {
            priority_classes_[key.name] = o;
          } else if constexpr (std::is_same_v<T, AdmissionCheck>) {
            admission_checks_[key.name] = o;
          } else {
            namespaces_[key.name] = o;
          }
        },
        object);
    objects_.emplace(std::move(key), std::move(object));
  }
  for (Workload& wl : state.active_workloads) {
    NamespacedName key = KeyOf(wl);
    workloads_.emplace(std::move(key), std::move(wl));
  }
  RebuildCacheAndQueues();
  // Whatever Rebuild marked (condition refreshes) is written by the next
  // batch, not counted as lost.
  spdlog::info("loaded revision {}: {} objects, {} unfinished workloads",
               revision_, objects_.size(), workloads_.size());
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Queues and scheduling

void Engine::RebuildCacheAndQueues() {
  std::set<std::string> flavor_names, check_names;
  for (const auto& [name, f] : flavors_) flavor_names.insert(name);
  for (const auto& [name, c] : admission_checks_) check_names.insert(name);
  cache_.Rebuild(cluster_queues_, cohorts_, flavor_names, check_names);
  // Usage is derived from the workloads that hold quota, so it can never
  // drift from them.
  for (const auto& [key, wl] : workloads_) {
    if (!HoldsQuota(wl)) continue;
    cache::ClusterQueueSnapshot* cq =
        cache_.FindClusterQueue(wl.admission->cluster_queue);
    if (cq == nullptr) continue;
    cache::FlavorResourceQuantities usage = cache::UsageOf(*wl.admission);
    cq->AddUsage(usage);
    if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
      for (const auto& [fr, v] : usage) {
        cq->admitted_usage[fr] = SaturatingAdd(cq->admitted_usage[fr], v);
      }
    }
  }
  queues_ = queue::Manager();
  for (const auto& [name, cq] : cluster_queues_) {
    queues_.UpsertClusterQueue(name, cq.queueing_strategy);
  }
  for (auto& [key, wl] : workloads_) {
    if (!HoldsQuota(wl)) EnqueueOrBlock(wl);
  }
}

std::string Engine::ClusterQueueForWorkload(const Workload& wl) const {
  if (wl.admission) return wl.admission->cluster_queue;
  auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
  return lq == local_queues_.end() ? "" : lq->second.cluster_queue;
}

void Engine::EnqueueOrBlock(Workload& wl) {
  NamespacedName key = KeyOf(wl);
  queues_.Remove(key);
  if (!wl.active) return;
  // Kueue's getQueueBlocker, in its order.
  std::string reason, message;
  auto lq = local_queues_.find(
      key.first == wl.meta.namespace_name
          ? NamespacedName{wl.meta.namespace_name, wl.queue_name}
          : NamespacedName{});
  if (lq == local_queues_.end()) {
    reason = kReasonMisconfigured;
    message = absl::StrCat("LocalQueue ", wl.queue_name, " doesn't exist");
  } else if (lq->second.stop_policy != StopPolicy::kNone) {
    reason = kReasonSuspended;
    message = absl::StrCat("LocalQueue ", wl.queue_name, " is inactive");
  } else {
    const std::string& cq_name = lq->second.cluster_queue;
    const cache::ClusterQueueSnapshot* cq = cache_.FindClusterQueue(cq_name);
    if (cq == nullptr) {
      reason = kReasonMisconfigured;
      message = absl::StrCat("ClusterQueue ", cq_name, " doesn't exist");
    } else {
      queues_.Push(cq_name, queue::KeyFor(wl));
      if (!cq->active) {
        reason = kReasonSuspended;
        message = absl::StrCat("ClusterQueue ", cq_name, " is inactive");
      }
    }
  }
  if (!reason.empty() && SetPendingCondition(wl, reason, message, batch_now_)) {
    MarkWorkload(key, EventType::kModified);
  }
}

void Engine::RunPasses(absl::Time now) {
  needs_scheduling_ = false;
  const absl::Time deadline = clock_.TimeNow() + options_.pass_budget;
  scheduler::SchedulingContext context{&flavors_, &namespaces_};
  while (true) {
    auto popped = queues_.PopHeads([this](const std::string& name) {
      const cache::ClusterQueueSnapshot* cq = cache_.FindClusterQueue(name);
      return cq != nullptr && cq->active;
    });
    if (popped.empty()) break;
    std::vector<scheduler::Head> heads;
    heads.reserve(popped.size());
    for (const auto& [cq, key] : popped) {
      heads.push_back({&workloads_.at(key), cq});
    }
    // One Kueue cycle over the heads.
    scheduler::CycleResult result =
        scheduler::Schedule(cache_, heads, context, now);
    bool progress = false;
    for (scheduler::EntryResult& entry : result.entries) {
      Workload& wl = *const_cast<Workload*>(entry.workload);
      NamespacedName key = KeyOf(wl);
      if (entry.status == scheduler::EntryResult::Status::kAdmitted) {
        ReserveQuota(wl, std::move(entry.admission), now);
        progress = true;
        continue;
      }
      if (SetPendingCondition(wl, entry.reason, entry.message, now)) {
        MarkWorkload(key, EventType::kModified);
      }
      queue::Manager::RequeueReason reason =
          queue::Manager::RequeueReason::kGeneric;
      if (entry.namespace_mismatch) {
        reason = queue::Manager::RequeueReason::kNamespaceMismatch;
      } else if (entry.status == scheduler::EntryResult::Status::kNoFit) {
        reason = queue::Manager::RequeueReason::kNoFit;
      } else if (entry.status == scheduler::EntryResult::Status::kSkipped) {
        reason = queue::Manager::RequeueReason::kFailedAfterNomination;
      }
      progress |=
          queues_.Requeue(entry.cluster_queue, queue::KeyFor(wl), reason);
    }
    if (!progress) break;
    if (clock_.TimeNow() > deadline) {
      // Let queued commands in; continue in the next batch.
      needs_scheduling_ = true;
      break;
    }
  }
}

void Engine::ReserveQuota(Workload& wl, Admission admission, absl::Time now) {
  const std::string cq_name = admission.cluster_queue;
  std::set<std::string> assigned_flavors;
  for (const PodSetAssignment& psa : admission.pod_set_assignments) {
    for (const auto& [resource, flavor] : psa.flavors) {
      assigned_flavors.insert(flavor);
    }
  }
  wl.admission = std::move(admission);
  // Kueue's SetQuotaReservation.
  SetCondition(
      &wl.conditions,
      Condition{kConditionQuotaReserved, "True", "QuotaReserved",
                absl::StrCat("Quota reserved in ClusterQueue ", cq_name), now});
  ResetActiveCondition(wl, kConditionEvicted, "QuotaReserved", now);
  ResetActiveCondition(wl, "Preempted", "QuotaReserved", now);
  // The checks that apply to the assigned flavors start Pending.
  const ClusterQueue& cq = cluster_queues_.at(cq_name);
  for (const AdmissionCheckStrategyRule& rule : cq.admission_checks) {
    bool applies = rule.on_flavors.empty();
    for (const std::string& f : rule.on_flavors) {
      applies = applies || assigned_flavors.count(f) > 0;
    }
    if (!applies) continue;
    bool present = false;
    for (const AdmissionCheckState& s : wl.admission_checks) {
      present = present || s.name == rule.name;
    }
    if (!present) {
      wl.admission_checks.push_back(
          AdmissionCheckState{rule.name, "Pending", now, ""});
    }
  }
  // Kueue's SyncAdmittedCondition.
  bool all_ready = true;
  for (const AdmissionCheckState& s : wl.admission_checks) {
    all_ready = all_ready && s.state == "Ready";
  }
  cache::ClusterQueueSnapshot* snapshot = cache_.FindClusterQueue(cq_name);
  if (all_ready) {
    SetCondition(&wl.conditions,
                 Condition{kConditionAdmitted, "True", "Admitted",
                           "The workload is admitted", now});
    for (const auto& [fr, v] : cache::UsageOf(*wl.admission)) {
      snapshot->admitted_usage[fr] =
          SaturatingAdd(snapshot->admitted_usage[fr], v);
    }
  } else {
    SetCondition(
        &wl.conditions,
        Condition{kConditionAdmitted, "False", "UnsatisfiedAdmissionChecks",
                  "The workload has not all checks ready", now});
  }
  MarkWorkload(KeyOf(wl), EventType::kModified);
}

void Engine::ReleaseQuota(const Workload& wl) {
  if (!HoldsQuota(wl)) return;
  cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(wl.admission->cluster_queue);
  if (cq == nullptr) return;
  cache::FlavorResourceQuantities usage = cache::UsageOf(*wl.admission);
  cq->RemoveUsage(usage);
  if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
    for (const auto& [fr, v] : usage) {
      cq->admitted_usage[fr] = SaturatingSub(cq->admitted_usage[fr], v);
    }
  }
  QueueInadmissibleInTree(wl.admission->cluster_queue);
}

void Engine::QueueInadmissibleInTree(const std::string& cluster_queue) {
  const cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(cluster_queue);
  std::vector<std::string> names;
  if (cq == nullptr || cq->parent == nullptr) {
    names.push_back(cluster_queue);
  } else {
    if (cq->parent->has_cycle) return;
    const cache::CohortSnapshot* root = cq->parent;
    while (root->parent != nullptr) root = root->parent;
    std::vector<const cache::CohortSnapshot*> stack{root};
    while (!stack.empty()) {
      const cache::CohortSnapshot* c = stack.back();
      stack.pop_back();
      for (const auto* child : c->child_cohorts) stack.push_back(child);
      for (const auto* q : c->child_cluster_queues) names.push_back(q->name());
    }
  }
  if (queues_.QueueInadmissible(names)) needs_scheduling_ = true;
}

// ---------------------------------------------------------------------------
// Commands

std::string Engine::NewUid() {
  uint64_t hi = absl::Uniform<uint64_t>(random_);
  uint64_t lo = absl::Uniform<uint64_t>(random_);
  return absl::StrFormat(
      "%08x-%04x-4%03x-%04x-%012x", hi >> 32, (hi >> 16) & 0xffff, hi & 0xfff,
      ((lo >> 48) & 0x3fff) | 0x8000, lo & 0xffffffffffffULL);
}

std::string Engine::GenerateName(const std::string& prefix) {
  // Kubernetes' alphabet for generated names: no vowels, no look-alikes.
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string name = prefix;
  for (int i = 0; i < 5; ++i) {
    name.push_back(
        kAlphabet[absl::Uniform<size_t>(random_, 0, sizeof(kAlphabet) - 1)]);
  }
  return name;
}

absl::Status Engine::CheckPriorityClass(
    const Workload& wl, const std::vector<ConfigObject>& pending) {
  if (wl.priority_class_name.empty()) return absl::OkStatus();
  if (priority_classes_.count(wl.priority_class_name)) {
    return absl::OkStatus();
  }
  for (const ConfigObject& o : pending) {
    const auto* wpc = std::get_if<WorkloadPriorityClass>(&o);
    if (wpc != nullptr && wpc->meta.name == wl.priority_class_name) {
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(absl::StrCat(
      Describe(KeyOf(wl)), ": spec.priorityClassName: WorkloadPriorityClass \"",
      wl.priority_class_name, "\" not found"));
}

void Engine::ResolvePriority(Workload& wl) {
  // Kueue's WorkloadPriorityClassDefaulting: a class named "default".
  if (wl.priority_class_name.empty() && priority_classes_.count("default")) {
    wl.priority_class_name = "default";
  }
  if (wl.priority_class_name.empty()) return;
  wl.priority_class_source = "kueue.x-k8s.io/workloadpriorityclass";
  wl.priority = priority_classes_.at(wl.priority_class_name).value;
}

absl::StatusOr<ApplyResult> Engine::DoSubmit(Workload wl, bool from_apply) {
  NamespacedName key = KeyOf(wl);
  auto existing = workloads_.find(key);
  std::optional<Workload> stored;
  if (existing == workloads_.end()) {
    KQ_ASSIGN_OR_RETURN(stored, store_.GetWorkload(key));
  }
  if (existing != workloads_.end() || stored.has_value()) {
    if (!from_apply) {
      return absl::AlreadyExistsError(
          absl::StrCat(Describe(key), " already exists"));
    }
    return ApplyResult{
        "unchanged",
        existing != workloads_.end() ? existing->second : *stored,
        {}};
  }
  wl.meta.uid = NewUid();
  wl.meta.creation_timestamp = batch_now_;
  wl.meta.revision = 0;
  wl.admission.reset();
  wl.conditions.clear();
  wl.admission_checks.clear();
  wl.requeue_count.reset();
  wl.requeue_at.reset();
  ResolvePriority(wl);
  Workload& stored_wl = workloads_[key] = std::move(wl);
  MarkWorkload(key, EventType::kAdded);
  EnqueueOrBlock(stored_wl);
  needs_scheduling_ = true;
  return ApplyResult{"created", stored_wl, {}};
}

// Validates a workload as submitted, naming it in the error.
static absl::Status PrepareWorkload(const Workload& wl) {
  if (wl.meta.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Workload in namespace \"", wl.meta.namespace_name,
                     "\": metadata.name: name or generateName is required"));
  }
  absl::Status valid = ValidateWorkload(wl);
  if (!valid.ok()) return About(Describe(KeyOf(wl)), valid);
  return absl::OkStatus();
}

void Engine::NameIfGenerated(Workload& wl) {
  if (!wl.meta.name.empty() || wl.meta.generate_name.empty()) return;
  do {
    wl.meta.name = GenerateName(wl.meta.generate_name);
  } while (workloads_.count(KeyOf(wl)));
}

absl::StatusOr<std::vector<ApplyResult>> Engine::DoApply(
    std::vector<ConfigObject>& objects, std::vector<Workload>& workloads) {
  // 1. Validate everything before changing anything.
  for (const ConfigObject& object : objects) {
    ObjectKey key = KeyOf(object);
    absl::Status valid = ValidateConfigObject(object);
    if (!valid.ok()) return About(Describe(key), valid);
    if (const auto* lq = std::get_if<LocalQueue>(&object)) {
      auto old = local_queues_.find({key.namespace_name, key.name});
      if (old != local_queues_.end() &&
          old->second.cluster_queue != lq->cluster_queue) {
        return absl::InvalidArgumentError(absl::StrCat(
            Describe(key), ": spec.clusterQueue: field is immutable (was \"",
            old->second.cluster_queue, "\")"));
      }
    }
  }
  for (Workload& wl : workloads) {
    NameIfGenerated(wl);
    KQ_RETURN_IF_ERROR(PrepareWorkload(wl));
    KQ_RETURN_IF_ERROR(CheckPriorityClass(wl, objects));
  }

  // 2. Apply the configuration objects.
  std::vector<ApplyResult> results;
  for (ConfigObject& object : objects) {
    ObjectKey key = KeyOf(object);
    ApplyResult result;
    result.warnings = ConfigWarnings(object);
    auto old = objects_.find(key);
    if (old != objects_.end() && SameSpec(old->second, object)) {
      result.action = "unchanged";
      result.object = old->second;
    } else {
      ObjectMeta& meta = MutableMetaOf(object);
      if (old != objects_.end()) {
        const ObjectMeta& old_meta = MetaOf(old->second);
        meta.uid = old_meta.uid;
        meta.creation_timestamp = old_meta.creation_timestamp;
        result.action = "configured";
        MarkObject(key, EventType::kModified);
      } else {
        meta.uid = NewUid();
        meta.creation_timestamp = batch_now_;
        result.action = "created";
        MarkObject(key, EventType::kAdded);
      }
      meta.revision = 0;
      std::visit(
          [&](const auto& o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, ResourceFlavor>) {
              flavors_[key.name] = o;
            } else if constexpr (std::is_same_v<T, ClusterQueue>) {
              cluster_queues_[key.name] = o;
            } else if constexpr (std::is_same_v<T, Cohort>) {
              cohorts_[key.name] = o;
            } else if constexpr (std::is_same_v<T, LocalQueue>) {
              local_queues_[{key.namespace_name, key.name}] = o;
            } else if constexpr (std::is_same_v<T, WorkloadPriorityClass>) {
              priority_classes_[key.name] = o;
            } else if constexpr (std::is_same_v<T, AdmissionCheck>) {
              admission_checks_[key.name] = o;
            } else {
              namespaces_[key.name] = o;
            }
          },
          object);
      objects_[key] = object;
      result.object = object;
      config_changed_ = true;
    }
    results.push_back(std::move(result));
  }
  // References that do not resolve yet: accepted, as Kueue accepts them.
  for (ApplyResult& result : results) {
    const ConfigObject& object = std::get<ConfigObject>(result.object);
    if (const auto* lq = std::get_if<LocalQueue>(&object)) {
      if (!cluster_queues_.count(lq->cluster_queue)) {
        result.warnings.push_back(absl::StrCat(
            "LocalQueue \"", lq->meta.namespace_name, "/", lq->meta.name,
            "\": ClusterQueue \"", lq->cluster_queue,
            "\" does not exist yet; the LocalQueue is inactive "
            "(ClusterQueueDoesNotExist) until it does"));
      }
    } else if (const auto* cq = std::get_if<ClusterQueue>(&object)) {
      std::vector<std::string> missing;
      for (const ResourceGroup& g : cq->resource_groups) {
        for (const FlavorQuotas& f : g.flavors) {
          if (!flavors_.count(f.name)) missing.push_back(f.name);
        }
      }
      if (!missing.empty()) {
        result.warnings.push_back(
            absl::StrCat("ClusterQueue \"", cq->meta.name,
                         "\": ResourceFlavor(s) ", absl::StrJoin(missing, ", "),
                         " do not exist yet; the ClusterQueue is inactive "
                         "(FlavorNotFound) until they do"));
      }
      std::vector<std::string> missing_checks;
      for (const AdmissionCheckStrategyRule& r : cq->admission_checks) {
        if (!admission_checks_.count(r.name)) missing_checks.push_back(r.name);
      }
      if (!missing_checks.empty()) {
        result.warnings.push_back(absl::StrCat(
            "ClusterQueue \"", cq->meta.name, "\": AdmissionCheck(s) ",
            absl::StrJoin(missing_checks, ", "),
            " do not exist yet; the ClusterQueue is inactive "
            "(AdmissionCheckNotFound) until they do"));
      }
    }
  }
  if (config_changed_) {
    // Workloads submitted below must see the new queues.
    RebuildCacheAndQueues();
    config_changed_ = false;
    needs_scheduling_ = true;
  }

  // 3. Submit the workloads.
  for (Workload& wl : workloads) {
    KQ_ASSIGN_OR_RETURN(ApplyResult result, DoSubmit(std::move(wl), true));
    results.push_back(std::move(result));
  }
  return results;
}

absl::Status Engine::DoDelete(const ObjectKey& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  if (key.kind == ObjectKind::kClusterQueue) {
    int holding = 0;
    for (const auto& [k, wl] : workloads_) {
      if (HoldsQuota(wl) && wl.admission->cluster_queue == key.name) ++holding;
    }
    if (holding > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          Describe(key), " still has ", holding,
          " workload(s) holding quota; finish or cancel them first"));
    }
  }
  if (key.kind == ObjectKind::kResourceFlavor) {
    std::vector<std::string> users;
    for (const auto& [name, cq] : cluster_queues_) {
      for (const ResourceGroup& g : cq.resource_groups) {
        for (const FlavorQuotas& f : g.flavors) {
          if (f.name == key.name) users.push_back(name);
        }
      }
    }
    if (!users.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(Describe(key), " is in use by ClusterQueue(s) ",
                       absl::StrJoin(users, ", ")));
    }
  }
  switch (key.kind) {
    case ObjectKind::kResourceFlavor:
      flavors_.erase(key.name);
      break;
    case ObjectKind::kClusterQueue:
      cluster_queues_.erase(key.name);
      break;
    case ObjectKind::kCohort:
      cohorts_.erase(key.name);
      break;
    case ObjectKind::kLocalQueue:
      local_queues_.erase({key.namespace_name, key.name});
      break;
    case ObjectKind::kWorkloadPriorityClass:
      priority_classes_.erase(key.name);
      break;
    case ObjectKind::kAdmissionCheck:
      admission_checks_.erase(key.name);
      break;
    case ObjectKind::kNamespace:
      namespaces_.erase(key.name);
      break;
    case ObjectKind::kWorkload:
      return absl::InvalidArgumentError("workloads are cancelled, not deleted");
  }
  deleted_objects_[key] = it->second;
  objects_.erase(it);
  MarkObject(key, EventType::kDeleted);
  config_changed_ = true;
  return absl::OkStatus();
}

absl::StatusOr<Workload> Engine::DoFinish(const NamespacedName& key,
                                          const std::string& reason,
                                          const std::string& message) {
  auto it = workloads_.find(key);
  if (it == workloads_.end()) {
    KQ_ASSIGN_OR_RETURN(std::optional<Workload> stored,
                        store_.GetWorkload(key));
    if (stored.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat(Describe(key), " already finished"));
    }
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload wl = std::move(it->second);
  workloads_.erase(it);
  queues_.Remove(key);
  ReleaseQuota(wl);
  SetCondition(&wl.conditions, Condition{kConditionFinished, "True", reason,
                                         message, batch_now_});
  finished_workloads_[key] = wl;
  MarkWorkload(key, EventType::kModified);
  return wl;
}

// ---------------------------------------------------------------------------
// Public API: each call is one command.

absl::StatusOr<std::vector<ApplyResult>> Engine::Apply(
    std::vector<ConfigObject> objects, std::vector<Workload> workloads) {
  return Call<std::vector<ApplyResult>>(
      [this, objects = std::move(objects),
       workloads = std::move(workloads)]() mutable {
        return DoApply(objects, workloads);
      });
}

absl::Status Engine::Delete(const ObjectKey& key) {
  return Call<bool>([this, key]() -> absl::StatusOr<bool> {
           KQ_RETURN_IF_ERROR(DoDelete(key));
           return true;
         })
      .status();
}

absl::StatusOr<WorkloadView> Engine::Submit(Workload workload) {
  absl::StatusOr<NamespacedName> key = Call<NamespacedName>(
      [this, workload = std::move(
                 workload)]() mutable -> absl::StatusOr<NamespacedName> {
        NameIfGenerated(workload);
        KQ_RETURN_IF_ERROR(PrepareWorkload(workload));
        KQ_RETURN_IF_ERROR(CheckPriorityClass(workload, {}));
        NamespacedName key = KeyOf(workload);
        KQ_RETURN_IF_ERROR(DoSubmit(std::move(workload), false).status());
        return key;
      });
  if (!key.ok()) return key.status();
  return GetWorkload(*key);
}

absl::StatusOr<WorkloadView> Engine::GetWorkload(const NamespacedName& key) {
  return Call<WorkloadView>([this, key]() -> absl::StatusOr<WorkloadView> {
    auto it = workloads_.find(key);
    if (it != workloads_.end()) return ViewOf(it->second);
    auto finished = finished_workloads_.find(key);
    if (finished != finished_workloads_.end()) return ViewOf(finished->second);
    KQ_ASSIGN_OR_RETURN(std::optional<Workload> stored,
                        store_.GetWorkload(key));
    if (!stored.has_value()) {
      return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
    }
    return ViewOf(*stored);
  });
}

absl::StatusOr<Listed<Workload>> Engine::ListWorkloads(
    const WorkloadFilter& filter) {
  return Call<Listed<Workload>>([this,
                                 filter]() -> absl::StatusOr<Listed<Workload>> {
    Listed<Workload> listed;
    auto keep = [&](const Workload& wl) {
      if (!filter.namespace_name.empty() &&
          wl.meta.namespace_name != filter.namespace_name) {
        return false;
      }
      if (!filter.queue_name.empty() && wl.queue_name != filter.queue_name) {
        return false;
      }
      if (!filter.cluster_queue.empty() &&
          ClusterQueueForWorkload(wl) != filter.cluster_queue) {
        return false;
      }
      return true;
    };
    for (const auto& [key, wl] : workloads_) {
      if (keep(wl)) listed.items.push_back(wl);
    }
    if (filter.include_finished) {
      KQ_ASSIGN_OR_RETURN(std::vector<Workload> finished,
                          store_.ListFinishedWorkloads(filter.namespace_name));
      for (Workload& wl : finished) {
        if (keep(wl)) listed.items.push_back(std::move(wl));
      }
      std::sort(listed.items.begin(), listed.items.end(),
                [](const Workload& a, const Workload& b) {
                  return KeyOf(a) < KeyOf(b);
                });
    }
    listed.revision = revision_;
    return listed;
  });
}

absl::StatusOr<Workload> Engine::Cancel(const NamespacedName& key) {
  return Call<Workload>([this, key]() -> absl::StatusOr<Workload> {
    return DoFinish(key, "Cancelled", "The workload was cancelled");
  });
}

absl::StatusOr<Workload> Engine::Finish(const NamespacedName& key,
                                        bool succeeded,
                                        const std::string& message) {
  return Call<Workload>([this, key, succeeded,
                         message]() -> absl::StatusOr<Workload> {
    auto it = workloads_.find(key);
    if (it != workloads_.end() && !HoldsQuota(it->second)) {
      return absl::FailedPreconditionError(absl::StrCat(
          Describe(key),
          " holds no quota reservation; only admitted workloads finish (use "
          "cancel to drop a pending one)"));
    }
    std::string text = message;
    if (text.empty()) {
      text = succeeded ? "Job finished successfully" : "Job failed";
    }
    return DoFinish(key, succeeded ? "Succeeded" : "Failed", text);
  });
}

absl::StatusOr<ObjectView> Engine::GetObject(const ObjectKey& key) {
  return Call<ObjectView>([this, key]() -> absl::StatusOr<ObjectView> {
    const ConfigObject* object = FindObject(key);
    if (object == nullptr) {
      return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
    }
    return ViewOf(*object);
  });
}

absl::StatusOr<Listed<ObjectView>> Engine::ListObjects(
    ObjectKind kind, const std::string& namespace_name) {
  return Call<Listed<ObjectView>>(
      [this, kind, namespace_name]() -> absl::StatusOr<Listed<ObjectView>> {
        Listed<ObjectView> listed;
        for (const auto& [key, object] : objects_) {
          if (key.kind != kind) continue;
          if (!namespace_name.empty() && key.namespace_name != namespace_name) {
            continue;
          }
          listed.items.push_back(ViewOf(object));
        }
        listed.revision = revision_;
        return listed;
      });
}

// ---------------------------------------------------------------------------
// Views

const ConfigObject* Engine::FindObject(const ObjectKey& key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : &it->second;
}

ObjectView Engine::ViewOf(const ConfigObject& object) const {
  ObjectView view{object, std::nullopt, {}};
  if (const auto* cq = std::get_if<ClusterQueue>(&object)) {
    view.status = ClusterQueueStatusOf(cq->meta.name);
  } else if (const auto* lq = std::get_if<LocalQueue>(&object)) {
    view.status = LocalQueueStatusOf(*lq);
  } else if (std::holds_alternative<AdmissionCheck>(object)) {
    view.conditions.push_back(Condition{kConditionActive, "True", "Active",
                                        "The admission check is active",
                                        MetaOf(object).creation_timestamp});
  }
  return view;
}

WorkloadView Engine::ViewOf(const Workload& wl) const {
  WorkloadView view{wl, {}, std::nullopt};
  if (HoldsQuota(wl)) {
    for (const PodSetAssignment& psa : wl.admission->pod_set_assignments) {
      PodSetPlacement placement{psa.name, {}};
      std::set<std::string> seen;
      for (const auto& [resource, flavor_name] : psa.flavors) {
        if (!seen.insert(flavor_name).second) continue;
        FlavorPlacement fp{flavor_name, {}, {}};
        auto flavor = flavors_.find(flavor_name);
        if (flavor != flavors_.end()) {
          fp.node_labels = flavor->second.node_labels;
          fp.tolerations = flavor->second.tolerations;
        }
        placement.flavors.push_back(std::move(fp));
      }
      view.placements.push_back(std::move(placement));
    }
  }
  view.position = queues_.PositionOf(KeyOf(wl));
  return view;
}

namespace {

// Usage per flavor in the order of the queue's resource groups, with every
// covered resource listed (Kueue's flavorsReservation / flavorsUsage).
std::vector<FlavorUsage> UsageByFlavor(
    const std::vector<ResourceGroup>& groups,
    const cache::FlavorResourceQuantities& usage,
    const cache::ResourceNode* node, bool in_cohort) {
  std::vector<FlavorUsage> out;
  for (const ResourceGroup& group : groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      FlavorUsage fu{flavor.name, {}};
      for (const std::string& resource : group.covered_resources) {
        cache::FlavorResource fr{flavor.name, resource};
        auto u = usage.find(fr);
        int64_t total = u == usage.end() ? 0 : u->second;
        int64_t borrowed = 0;
        if (in_cohort && node != nullptr) {
          auto q = node->quotas.find(fr);
          int64_t nominal = q == node->quotas.end() ? 0 : q->second.nominal;
          borrowed = std::max<int64_t>(0, SaturatingSub(total, nominal));
        }
        fu.resources.push_back(
            ResourceUsage{resource, QuantityFromAmount(resource, total),
                          QuantityFromAmount(resource, borrowed)});
      }
      out.push_back(std::move(fu));
    }
  }
  return out;
}

}  // namespace

QueueStatus Engine::ClusterQueueStatusOf(const std::string& name) const {
  QueueStatus status;
  const cache::ClusterQueueSnapshot* cq = cache_.FindClusterQueue(name);
  const ClusterQueue& spec = cluster_queues_.at(name);
  if (cq != nullptr) {
    status.conditions.push_back(Condition{
        kConditionActive, cq->active ? "True" : "False", cq->active_reason,
        cq->active_message, spec.meta.creation_timestamp});
    bool in_cohort = cq->parent != nullptr;
    status.flavors_reservation = UsageByFlavor(
        spec.resource_groups, cq->node.usage, &cq->node, in_cohort);
    status.flavors_usage = UsageByFlavor(
        spec.resource_groups, cq->admitted_usage, &cq->node, in_cohort);
  }
  status.pending_workloads = queues_.PendingCount(name);
  for (const auto& [key, wl] : workloads_) {
    if (!HoldsQuota(wl) || wl.admission->cluster_queue != name) continue;
    ++status.reserving_workloads;
    if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
      ++status.admitted_workloads;
    }
  }
  return status;
}

QueueStatus Engine::LocalQueueStatusOf(const LocalQueue& lq) const {
  QueueStatus status;
  Condition active{kConditionActive, "True", "Ready",
                   "Can submit new workloads to localQueue",
                   lq.meta.creation_timestamp};
  const cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(lq.cluster_queue);
  if (lq.stop_policy != StopPolicy::kNone) {
    active = {kConditionActive, "False", "Stopped", "LocalQueue is stopped",
              lq.meta.creation_timestamp};
  } else if (cq == nullptr) {
    active = {kConditionActive, "False", "ClusterQueueDoesNotExist",
              "Can't submit new workloads to clusterQueue",
              lq.meta.creation_timestamp};
  } else if (!cq->active) {
    active = {kConditionActive, "False", "ClusterQueueIsInactive",
              "Can't submit new workloads to clusterQueue",
              lq.meta.creation_timestamp};
  }
  status.conditions.push_back(active);
  cache::FlavorResourceQuantities reserved, admitted;
  for (const auto& [key, wl] : workloads_) {
    if (key.first != lq.meta.namespace_name || wl.queue_name != lq.meta.name) {
      continue;
    }
    if (!HoldsQuota(wl)) {
      if (queues_.Contains(key)) ++status.pending_workloads;
      continue;
    }
    ++status.reserving_workloads;
    cache::FlavorResourceQuantities usage = cache::UsageOf(*wl.admission);
    for (const auto& [fr, v] : usage) {
      reserved[fr] = SaturatingAdd(reserved[fr], v);
    }
    if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
      ++status.admitted_workloads;
      for (const auto& [fr, v] : usage) {
        admitted[fr] = SaturatingAdd(admitted[fr], v);
      }
    }
  }
  if (cq != nullptr) {
    status.flavors_reservation =
        UsageByFlavor(cq->spec.resource_groups, reserved, nullptr, false);
    status.flavors_usage =
        UsageByFlavor(cq->spec.resource_groups, admitted, nullptr, false);
  }
  return status;
}

}  // namespace kq::engine
