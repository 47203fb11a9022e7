#include "shim/jobs/controller.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "spdlog/spdlog.h"

#include "base/metrics.h"
#include "proto/util/workload.h"

namespace kq::shim::jobs {
namespace {

// Kueue's events.go reasons.
constexpr char kReasonStarted[] = "Started";
constexpr char kReasonStopped[] = "Stopped";
constexpr char kReasonCreatedWorkload[] = "CreatedWorkload";
constexpr char kReasonFinishedWorkload[] = "FinishedWorkload";
constexpr char kReasonErrWorkloadCompose[] = "ErrWorkloadCompose";
constexpr char kReasonUpdatedAdmissionCheck[] = "UpdatedAdmissionCheck";
// Kueue's api.TruncateEventMessage limit.
constexpr size_t kMaxEventMessage = 1024;

constexpr char kReconciled[] = "kq_shim_jobs_reconciled_total";
constexpr char kAdmissionsStarted[] = "kq_shim_job_admissions_started_total";
constexpr char kStops[] = "kq_shim_job_stops_total";
constexpr char kSubmitted[] = "kq_shim_workloads_submitted_total";
constexpr char kFinished[] = "kq_shim_workloads_finished_total";
constexpr char kErrors[] = "kq_shim_job_reconcile_errors_total";
constexpr char kHeartbeats[] = "kq_shim_heartbeats_total";
constexpr char kRunning[] = "kq_shim_jobs_running";
constexpr char kReachable[] = "kq_shim_kqd_reachable";

void DescribeMetrics() {
  Metrics& m = Metrics::Global();
  m.Describe(kReconciled, "counter", "Job reconciles, by result (ok, error).");
  m.Describe(kAdmissionsStarted, "counter",
             "Jobs unsuspended because their Workload was admitted.");
  m.Describe(kStops, "counter",
             "Jobs suspended by the shim, by reason (Evicted, NotAdmitted, "
             "MissingWorkload, WorkloadFinished).");
  m.Describe(kSubmitted, "counter", "Workloads submitted to kqd for Jobs.");
  m.Describe(kFinished, "counter",
             "Workloads ended for their Job, by how (finished, cancelled, "
             "failed_to_start).");
  m.Describe(kErrors, "counter",
             "Reconciles that failed and were retried, by status code.");
  m.Describe(kHeartbeats, "counter",
             "Heartbeats to kqd, by result (ok, stop, lost, error).");
  m.Describe(kRunning, "gauge",
             "Workloads this runner holds a lease on (running Jobs).");
  m.Describe(kReachable, "gauge", "1 when kqd answered the last call.");
}

using proto_util::FindCondition;
using proto_util::HasQuotaReservation;
using proto_util::IsAdmitted;
using proto_util::IsEvicted;

int64_t ReadyPods(const json& job) {
  if (!job.is_object() || !job.contains("status")) return 0;
  const json& status = job["status"];
  if (!status.is_object() || !status.contains("ready")) return 0;
  return status["ready"].is_number() ? status["ready"].get<int64_t>() : 0;
}

bool HasDeletionTimestamp(const json& job) {
  return job.is_object() && job.contains("metadata") &&
         job["metadata"].is_object() &&
         job["metadata"].contains("deletionTimestamp") &&
         !job["metadata"]["deletionTimestamp"].is_null();
}

bool Retryable(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable ||
         code == absl::StatusCode::kDeadlineExceeded;
}

google::protobuf::Duration ToProtoDuration(absl::Duration d) {
  return google::protobuf::util::TimeUtil::MillisecondsToDuration(
      absl::ToInt64Milliseconds(d));
}

}  // namespace

JobController::JobController(kube::Client& kube, client::Client& kq,
                             JobControllerOptions options)
    : kube_(kube),
      kq_(kq),
      options_(std::move(options)),
      queue_(options_.initial_backoff, options_.max_backoff) {
  DescribeMetrics();
}

JobController::~JobController() { Stop(); }

absl::Status JobController::Start() {
  if (options_.runner_id.empty()) {
    return absl::InvalidArgumentError("runner id: required");
  }
  if (options_.lease < absl::Seconds(3)) {
    return absl::InvalidArgumentError("lease: must be at least 3s");
  }
  if (options_.workers < 1 || options_.workers > 4) {
    return absl::InvalidArgumentError("workers: must be 1 to 4");
  }
  {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("already started");
    started_ = true;
  }
  kube::ReflectorHandlers handlers;
  handlers.on_sync = [this](const std::vector<json>& items) {
    OnJobsSync(items);
  };
  handlers.on_event = [this](const kube::WatchEvent& event) {
    OnJobEvent(event);
  };
  kube::ReflectorOptions reflector_options;
  reflector_options.label_selector = kQueueNameLabel;
  reflector_options.initial_backoff = options_.reflector_initial_backoff;
  reflector_options.max_backoff = options_.reflector_max_backoff;
  reflector_ = std::make_unique<kube::Reflector>(
      kube_, kube::kJobs, options_.namespace_name, std::move(handlers),
      reflector_options);
  reflector_thread_ = std::thread([this] { reflector_->Run(stop_); });

  KqReflectorHandlers kq_handlers;
  kq_handlers.on_sync = [this](const KqSnapshot& listed) {
    OnWorkloadsListed(listed);
  };
  kq_handlers.on_event = [this](const v1::WatchEvent& event) {
    OnWorkloadEvent(event);
  };
  kq_handlers.on_error = [this](const absl::Status& status) { NoteKq(status); };
  kq_reflector_ = std::make_unique<KqReflector>(kq_, options_.namespace_name,
                                                std::move(kq_handlers));
  kq_reflector_thread_ = std::thread([this] { kq_reflector_->Run(); });
  ticker_thread_ = std::thread([this] { RunTicker(); });
  for (int i = 0; i < options_.workers; ++i) {
    workers_.emplace_back([this] { RunWorker(); });
  }
  spdlog::info(
      "job controller started runner={} namespace={} lease={} workers={}",
      options_.runner_id,
      options_.namespace_name.empty() ? "*" : options_.namespace_name,
      absl::FormatDuration(options_.lease), options_.workers);
  return absl::OkStatus();
}

void JobController::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (!started_ || stop_.load()) return;
    stop_ = true;
    synced_cv_.SignalAll();
  }
  queue_.ShutDown();
  {
    absl::MutexLock lock(&ticker_mu_);
    ticker_cv_.SignalAll();
  }
  kq_reflector_->Stop();
  if (reflector_thread_.joinable()) reflector_thread_.join();
  if (kq_reflector_thread_.joinable()) kq_reflector_thread_.join();
  if (ticker_thread_.joinable()) ticker_thread_.join();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  spdlog::info("job controller stopped runner={}", options_.runner_id);
}

absl::Status JobController::Ready() const {
  absl::MutexLock lock(&mu_);
  if (!jobs_synced_) return absl::UnavailableError("Jobs not listed yet");
  if (!workloads_synced_) {
    return absl::UnavailableError("kqd Workloads not listed yet");
  }
  if (!kq_reachable_.load()) {
    return absl::UnavailableError(absl::StrCat("kqd unreachable: ", kq_error_));
  }
  return absl::OkStatus();
}

absl::Status JobController::Kq(const absl::Status& status) {
  NoteKq(status);
  return status;
}

void JobController::NoteKq(const absl::Status& status) {
  if (status.ok()) {
    if (!kq_reachable_.exchange(true)) Metrics::Global().Set(kReachable, {}, 1);
  } else if (Retryable(status.code())) {
    {
      absl::MutexLock lock(&mu_);
      kq_error_ = std::string(status.message());
    }
    if (kq_reachable_.exchange(false)) {
      spdlog::warn("kqd unreachable: {}", status.ToString());
    }
    Metrics::Global().Set(kReachable, {}, 0);
  }
}

bool JobController::ShouldManage(const std::string& ns) const {
  return options_.namespace_name.empty() || options_.namespace_name == ns;
}

std::optional<json> JobController::CachedJob(const JobKey& key) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

// ---------------------------------------------------------------------------
// Inputs.

void JobController::OnJobsSync(const std::vector<json>& items) {
  std::set<JobKey> keys;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, job] : jobs_) keys.insert(key);
    jobs_.clear();
    for (const json& job : items) {
      JobKey key = KeyOfJob(job);
      keys.insert(key);
      jobs_[key] = job;
    }
    jobs_synced_ = true;
    synced_cv_.SignalAll();
  }
  spdlog::info("jobs listed count={}", items.size());
  // Jobs gone from the new list were deleted meanwhile: their keys too.
  for (const JobKey& key : keys) queue_.Add(key);
}

void JobController::OnJobEvent(const kube::WatchEvent& event) {
  const JobKey key = KeyOfJob(event.object);
  {
    absl::MutexLock lock(&mu_);
    if (event.type == kube::WatchEventType::kDeleted) {
      jobs_.erase(key);
    } else {
      auto it = jobs_.find(key);
      if (it == jobs_.end() || kube::NotOlder(event.object, it->second)) {
        jobs_[key] = event.object;
      }
    }
  }
  queue_.Add(key);
}

void JobController::OnWorkloadsListed(const KqSnapshot& listed) {
  std::set<JobKey> keys;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, names] : workloads_) keys.insert(key);
    workloads_.clear();
    for (const v1::Workload& wl : listed.workloads) {
      std::optional<JobOwner> owner = OwnerOfWorkload(wl);
      if (!owner || !ShouldManage(owner->key.namespace_name) ||
          proto_util::IsFinished(wl)) {
        continue;
      }
      workloads_[owner->key][wl.metadata().name()] = owner->uid;
      keys.insert(owner->key);
    }
    workloads_synced_ = true;
  }
  NoteKq(absl::OkStatus());
  spdlog::info("kqd workloads listed revision={} owned_by_jobs={}",
               listed.revision, keys.size());
  for (const JobKey& key : keys) queue_.Add(key);
}

void JobController::OnWorkloadEvent(const v1::WatchEvent& event) {
  if (!event.has_workload()) return;
  const v1::Workload& wl = event.workload();
  std::optional<JobOwner> owner = OwnerOfWorkload(wl);
  if (!owner || !ShouldManage(owner->key.namespace_name)) return;
  {
    absl::MutexLock lock(&mu_);
    if (event.type() == v1::WatchEvent::DELETED || proto_util::IsFinished(wl)) {
      auto it = workloads_.find(owner->key);
      if (it != workloads_.end()) {
        it->second.erase(wl.metadata().name());
        if (it->second.empty()) workloads_.erase(it);
      }
    } else {
      workloads_[owner->key][wl.metadata().name()] = owner->uid;
    }
  }
  queue_.Add(owner->key);
}

void JobController::RunWorker() {
  {
    absl::MutexLock lock(&mu_);
    while (!jobs_synced_ && !stop_.load()) synced_cv_.Wait(&mu_);
  }
  while (std::optional<JobKey> key = queue_.Get()) {
    absl::Status status = Reconcile(*key);
    reconciles_.fetch_add(1);
    if (status.ok()) {
      queue_.Forget(*key);
      Metrics::Global().Increment(kReconciled, {{"result", "ok"}});
    } else {
      spdlog::warn("reconcile failed job={}: {}", key->String(),
                   status.ToString());
      Metrics::Global().Increment(kReconciled, {{"result", "error"}});
      Metrics::Global().Increment(
          kErrors, {{"code", absl::StatusCodeToString(status.code())}});
      if (!stop_.load()) queue_.AddRateLimited(*key);
    }
    queue_.Done(*key);
  }
}

void JobController::RunTicker() {
  const absl::Duration heartbeat_every = options_.lease / 3;
  absl::Time next_heartbeat = absl::Now() + heartbeat_every;
  absl::Time next_resync = absl::Now() + options_.resync;
  while (!stop_.load()) {
    {
      absl::MutexLock lock(&ticker_mu_);
      const absl::Time wake = std::min(next_heartbeat, next_resync);
      while (!stop_.load() && absl::Now() < wake) {
        ticker_cv_.WaitWithDeadline(&ticker_mu_, wake);
      }
    }
    if (stop_.load()) break;
    const absl::Time now = absl::Now();
    if (now >= next_heartbeat) {
      Heartbeats();
      next_heartbeat = absl::Now() + heartbeat_every;
    }
    if (now >= next_resync) {
      std::vector<JobKey> keys;
      {
        absl::MutexLock lock(&mu_);
        for (const auto& [key, job] : jobs_) keys.push_back(key);
        for (const auto& [key, names] : workloads_) keys.push_back(key);
      }
      for (const JobKey& key : keys) queue_.Add(key);
      next_resync = now + options_.resync;
    }
  }
}

void JobController::Heartbeats() {
  std::vector<std::pair<JobKey, std::string>> held;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, attached] : attached_) {
      held.emplace_back(key, attached.workload);
    }
  }
  for (const auto& [key, workload] : held) {
    if (stop_.load()) return;
    v1::HeartbeatRequest request;
    request.set_namespace_(key.namespace_name);
    request.set_name(workload);
    request.set_runner_id(options_.runner_id);
    *request.mutable_lease() = ToProtoDuration(options_.lease);
    absl::StatusOr<v1::HeartbeatResponse> answer = kq_.Heartbeat(request);
    NoteKq(answer.status());
    if (answer.ok()) {
      if (answer->stop()) {
        spdlog::info("kqd asks to stop job={} workload={}", key.String(),
                     workload);
        Metrics::Global().Increment(kHeartbeats, {{"result", "stop"}});
        queue_.Add(key);
      } else {
        Metrics::Global().Increment(kHeartbeats, {{"result", "ok"}});
      }
      continue;
    }
    const absl::StatusCode code = answer.status().code();
    if (code == absl::StatusCode::kFailedPrecondition ||
        code == absl::StatusCode::kNotFound) {
      // No quota any more, or another runner: the reconcile decides.
      spdlog::info("lease lost job={} workload={}: {}", key.String(), workload,
                   std::string(answer.status().message()));
      Metrics::Global().Increment(kHeartbeats, {{"result", "lost"}});
      Detach(key);
      queue_.Add(key);
    } else {
      Metrics::Global().Increment(kHeartbeats, {{"result", "error"}});
    }
  }
}

void JobController::Detach(const JobKey& key) {
  absl::MutexLock lock(&mu_);
  if (attached_.erase(key) > 0) {
    Metrics::Global().Set(kRunning, {}, static_cast<double>(attached_.size()));
  }
}

// ---------------------------------------------------------------------------
// Reconcile.

absl::Status JobController::Reconcile(const JobKey& key) {
  std::optional<json> job = CachedJob(key);
  // 0. The Job is gone: what it left in kqd goes too.
  if (!job.has_value() || HasDeletionTimestamp(*job)) {
    return FinalizeDeleted(key);
  }
  const std::string uid = UidOfJob(*job);
  absl::Status others = CancelOtherIncarnations(key, uid);
  if (!others.ok()) return others;
  const std::string name = WorkloadNameForJob(key.name, uid);

  absl::StatusOr<v1::GetWorkloadResponse> got =
      kq_.GetWorkload(key.namespace_name, name);
  std::optional<v1::GetWorkloadResponse> response;
  if (got.ok()) {
    NoteKq(absl::OkStatus());
    response = *std::move(got);
  } else if (got.status().code() == absl::StatusCode::kNotFound) {
    NoteKq(absl::OkStatus());
  } else {
    return Kq(got.status());
  }
  const v1::Workload* wl = response ? &response->workload() : nullptr;

  // 1. A stop in progress finishes once the pods are gone.
  if (IsStopping(*job)) {
    return ContinueStop(key, *job, response ? &*response : nullptr);
  }
  const JobFinish finish = Finished(*job);

  // 2. kqd finished the Workload (cancelled it, or it failed to start)
  // while the Job still runs: Kueue stops a Job whose Workload is gone.
  if (wl != nullptr && proto_util::IsFinished(*wl)) {
    Detach(key);
    if (!finish.finished && !SuspendRequested(*job)) {
      const v1::Condition* c = FindCondition(*wl, "Finished");
      std::string message = "Workload is finished";
      if (c != nullptr && !c->message().empty()) message = c->message();
      return SuspendForStop(key, *job, name, "Normal", "WorkloadFinished",
                            message);
    }
    return absl::OkStatus();
  }

  // 3. The Job ended: so does its Workload.
  if (finish.finished) {
    Detach(key);
    if (wl == nullptr) return absl::OkStatus();
    return FinishForJob(key, *job, *wl);
  }

  // 4. No Workload yet.
  if (wl == nullptr) {
    if (!SuspendRequested(*job)) {
      return SuspendForStop(
          key, *job, name, "Warning", "MissingWorkload",
          "Missing Workload; unable to restore pod templates");
    }
    if (IsActive(*job)) {
      // Kueue's handleJobWithNoWorkload: wait for the pods to go.
      queue_.AddAfter(key, options_.stop_recheck);
      return absl::OkStatus();
    }
    return Submit(key, *job);
  }

  // 5. Evicted (preempted, deactivated, stopped queue, ...).
  if (IsEvicted(*wl)) {
    if (!SuspendRequested(*job)) {
      const v1::Condition* c = FindCondition(*wl, "Evicted");
      return SuspendForStop(key, *job, name, "Normal", "Evicted",
                            c != nullptr ? c->message() : "");
    }
    if (IsActive(*job) || ReadyPods(*job) > 0) {
      queue_.AddAfter(key, options_.stop_recheck);
      return absl::OkStatus();
    }
    // Kueue's "evicted but suspended": the template is restored even when
    // someone else suspended the Job.
    if (HasOriginalPodScheduling(*job))
      return ContinueStop(key, *job, &*response);
    if (HasQuotaReservation(*wl)) return ConfirmStopped(key, *wl);
    Detach(key);
    return absl::OkStatus();
  }

  // 6. Suspended: start it once admitted.
  if (IsSuspended(*job)) {
    if (IsAdmitted(*wl)) return Start(key, *job, *response);
    if (HasQuotaReservation(*wl)) RecordAdmissionCheckUpdate(key, *job, *wl);
    return absl::OkStatus();
  }

  // 7. Running.
  if (!IsAdmitted(*wl)) {
    Detach(key);
    return SuspendForStop(key, *job, name, "Warning", "NotAdmitted",
                          "Not admitted by cluster queue");
  }
  absl::Status attached = EnsureAttached(key, *wl);
  if (!attached.ok()) return attached;
  SyncReclaimablePods(key, *job, *wl);
  return absl::OkStatus();
}

absl::Status JobController::FinalizeDeleted(const JobKey& key) {
  Detach(key);
  {
    absl::MutexLock lock(&mu_);
    check_messages_.erase(key);
  }
  std::map<std::string, std::string> owned;
  {
    absl::MutexLock lock(&mu_);
    auto it = workloads_.find(key);
    if (it != workloads_.end()) owned = it->second;
  }
  if (owned.empty()) return absl::OkStatus();
  // The informer cache may lag behind the API server: cancel only what a
  // live read confirms has no Job.
  std::string uid;
  absl::StatusOr<json> live =
      kube_.Get(kube::kJobs, key.namespace_name, key.name);
  if (live.ok()) {
    if (!HasDeletionTimestamp(*live)) uid = UidOfJob(*live);
  } else if (live.status().code() != absl::StatusCode::kNotFound) {
    return live.status();
  }
  for (const auto& [name, owner_uid] : owned) {
    if (!uid.empty() && owner_uid == uid) {
      // The Job exists: the cache will catch up and reconcile it.
      queue_.AddAfter(key, absl::Seconds(1));
      continue;
    }
    absl::Status cancelled = CancelWorkload(key.namespace_name, name);
    if (!cancelled.ok()) return cancelled;
    spdlog::info("cancelled workload={} of deleted job={} uid={}", name,
                 key.String(), owner_uid);
    Metrics::Global().Increment(kFinished, {{"as", "cancelled"}});
    absl::MutexLock lock(&mu_);
    auto it = workloads_.find(key);
    if (it != workloads_.end()) {
      it->second.erase(name);
      if (it->second.empty()) workloads_.erase(it);
    }
  }
  return absl::OkStatus();
}

absl::Status JobController::CancelOtherIncarnations(const JobKey& key,
                                                    const std::string& uid) {
  bool others = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = workloads_.find(key);
    if (it != workloads_.end()) {
      for (const auto& [name, owner_uid] : it->second) {
        others = others || owner_uid != uid;
      }
    }
  }
  if (!others) return absl::OkStatus();
  // Confirm the current UID first; the same rule as for a deleted Job.
  absl::StatusOr<json> live =
      kube_.Get(kube::kJobs, key.namespace_name, key.name);
  if (!live.ok() && live.status().code() != absl::StatusCode::kNotFound) {
    return live.status();
  }
  if (live.ok() && UidOfJob(*live) != uid) {
    // The cache is behind: reconcile again once it caught up.
    queue_.AddAfter(key, absl::Seconds(1));
    return absl::OkStatus();
  }
  std::map<std::string, std::string> owned;
  {
    absl::MutexLock lock(&mu_);
    auto it = workloads_.find(key);
    if (it != workloads_.end()) owned = it->second;
  }
  for (const auto& [name, owner_uid] : owned) {
    if (owner_uid == uid) continue;
    absl::Status cancelled = CancelWorkload(key.namespace_name, name);
    if (!cancelled.ok()) return cancelled;
    spdlog::info(
        "cancelled workload={} of an earlier job={} uid={} (now uid={})", name,
        key.String(), owner_uid, uid);
    Metrics::Global().Increment(kFinished, {{"as", "cancelled"}});
    absl::MutexLock lock(&mu_);
    workloads_[key].erase(name);
  }
  return absl::OkStatus();
}

absl::Status JobController::ContinueStop(const JobKey& key, const json& job,
                                         const v1::GetWorkloadResponse* wl) {
  if (IsActive(job) || ReadyPods(job) > 0) {
    // The Job's events bring it back as its pods go; this is a fallback.
    queue_.AddAfter(key, options_.stop_recheck);
    return absl::OkStatus();
  }
  absl::StatusOr<json> restored = RestoreJob(job);
  if (!restored.ok()) {
    // An unreadable saved template cannot be restored: end the stop anyway.
    spdlog::error("job={}: {}; ending the stop without restoring", key.String(),
                  restored.status().ToString());
    json plain = job;
    plain["metadata"]["annotations"].erase(kOriginalPodSchedulingAnnotation);
    plain["metadata"]["annotations"].erase(kStoppingAnnotation);
    restored = std::move(plain);
  }
  absl::Status updated = UpdateJob(key, *restored);
  if (!updated.ok()) return updated;
  spdlog::info("restored pod template job={} workload={}", key.String(),
               wl != nullptr ? wl->workload().metadata().name() : "");
  // Confirm the stop to kqd, or start again, in the next pass.
  queue_.Add(key);
  return absl::OkStatus();
}

absl::Status JobController::SuspendForStop(const JobKey& key, const json& job,
                                           const std::string& workload,
                                           const std::string& event_type,
                                           const std::string& reason,
                                           const std::string& message) {
  absl::Status updated = UpdateJob(key, SuspendJob(job));
  if (!updated.ok()) return updated;
  RecordEvent(job, event_type, kReasonStopped, message);
  Metrics::Global().Increment(kStops, {{"reason", reason}});
  spdlog::info("stopping job={} workload={} reason={}: {}", key.String(),
               workload, reason, message);
  return absl::OkStatus();
}

absl::Status JobController::FinishForJob(const JobKey& key, const json& job,
                                         const v1::Workload& wl) {
  const std::string& name = wl.metadata().name();
  const JobFinish finish = Finished(job);
  bool done = false;
  if (HasQuotaReservation(wl)) {
    absl::StatusOr<v1::Workload> finished = kq_.FinishWorkload(
        key.namespace_name, name, finish.succeeded, finish.message);
    if (finished.ok()) {
      NoteKq(absl::OkStatus());
      done = true;
      Metrics::Global().Increment(kFinished, {{"as", "finished"}});
    } else if (finished.status().code() == absl::StatusCode::kNotFound) {
      return absl::OkStatus();
    } else if (finished.status().code() !=
               absl::StatusCode::kFailedPrecondition) {
      return Kq(finished.status());
    }
  }
  if (!done) {
    // Its quota is gone already (evicted meanwhile): it ends as cancelled.
    absl::Status cancelled = CancelWorkload(key.namespace_name, name);
    if (!cancelled.ok()) return cancelled;
    Metrics::Global().Increment(kFinished, {{"as", "cancelled"}});
  }
  RecordEvent(job, "Normal", kReasonFinishedWorkload,
              absl::StrCat("Workload '", key.namespace_name, "/", name,
                           "' is declared finished"));
  spdlog::info("job finished job={} workload={} succeeded={} message={}",
               key.String(), name, finish.succeeded, finish.message);
  return absl::OkStatus();
}

absl::Status JobController::Submit(const JobKey& key, const json& job) {
  absl::StatusOr<v1::Workload> wl = WorkloadForJob(job);
  if (!wl.ok()) {
    // The Job itself is wrong; a change to it queues it again.
    spdlog::error("cannot build a workload for job={}: {}", key.String(),
                  wl.status().ToString());
    RecordEvent(job, "Warning", kReasonErrWorkloadCompose,
                std::string(wl.status().message()));
    return absl::OkStatus();
  }
  const std::string& name = wl->metadata().name();
  absl::StatusOr<v1::SubmitWorkloadResponse> submitted =
      kq_.SubmitWorkload(*wl);
  if (!submitted.ok()) {
    const absl::StatusCode code = submitted.status().code();
    if (code == absl::StatusCode::kAlreadyExists) {
      queue_.Add(key);
      return absl::OkStatus();
    }
    if (!Retryable(code) && queue_.Failures(key) == 0) {
      RecordEvent(job, "Warning", kReasonErrWorkloadCompose,
                  absl::StrCat("Failed to create Workload ", key.namespace_name,
                               "/", name, ": ", submitted.status().message()));
    }
    return Kq(submitted.status());
  }
  NoteKq(absl::OkStatus());
  Metrics::Global().Increment(kSubmitted);
  RecordEvent(
      job, "Normal", kReasonCreatedWorkload,
      absl::StrCat("Created Workload: ", key.namespace_name, "/", name));
  spdlog::info("created workload={} job={} queue={}", name, key.String(),
               wl->spec().queue_name());
  {
    absl::MutexLock lock(&mu_);
    workloads_[key][name] = UidOfJob(job);
  }
  // Admitted in the same batch: start it now rather than at the next event.
  if (IsAdmitted(submitted->workload())) queue_.Add(key);
  return absl::OkStatus();
}

absl::Status JobController::Start(const JobKey& key, const json& job,
                                  const v1::GetWorkloadResponse& response) {
  const v1::Workload& wl = response.workload();
  const std::string& name = wl.metadata().name();
  // 1. Attach first: a Workload evicted meanwhile is not started.
  v1::HeartbeatRequest request;
  request.set_namespace_(key.namespace_name);
  request.set_name(name);
  request.set_runner_id(options_.runner_id);
  *request.mutable_lease() = ToProtoDuration(options_.lease);
  absl::StatusOr<v1::HeartbeatResponse> attached = kq_.Heartbeat(request);
  if (!attached.ok()) return Kq(attached.status());
  NoteKq(absl::OkStatus());
  if (attached->stop()) {
    queue_.Add(key);
    return absl::OkStatus();
  }
  {
    absl::MutexLock lock(&mu_);
    attached_[key] = Attached{name};
    Metrics::Global().Set(kRunning, {}, static_cast<double>(attached_.size()));
  }
  // 2. The Job to write.
  absl::StatusOr<json> started = StartJob(job, wl, response.placements());
  if (!started.ok()) {
    if (started.status().code() != absl::StatusCode::kFailedPrecondition) {
      return started.status();
    }
    // Kueue: a start that can never succeed finishes the Workload
    // (FailedToStart).
    Detach(key);
    spdlog::error("job={} workload={} cannot start: {}", key.String(), name,
                  std::string(started.status().message()));
    absl::StatusOr<v1::Workload> finished =
        kq_.FinishWorkload(key.namespace_name, name, false,
                           std::string(started.status().message()));
    if (!finished.ok() &&
        finished.status().code() != absl::StatusCode::kFailedPrecondition &&
        finished.status().code() != absl::StatusCode::kNotFound) {
      return Kq(finished.status());
    }
    Metrics::Global().Increment(kFinished, {{"as", "failed_to_start"}});
    return absl::OkStatus();
  }
  // 3. Unsuspend, with the Job's resourceVersion.
  absl::Status updated = UpdateJob(key, *started);
  if (!updated.ok()) return updated;
  const std::string message = AdmittedMessage(wl);
  RecordEvent(job, "Normal", kReasonStarted, message);
  Metrics::Global().Increment(kAdmissionsStarted);
  spdlog::info("started job={} workload={} cluster_queue={}", key.String(),
               name, wl.status().admission().cluster_queue());
  return absl::OkStatus();
}

absl::Status JobController::ConfirmStopped(const JobKey& key,
                                           const v1::Workload& wl) {
  v1::HeartbeatRequest request;
  request.set_namespace_(key.namespace_name);
  request.set_name(wl.metadata().name());
  request.set_runner_id(options_.runner_id);
  *request.mutable_lease() = ToProtoDuration(options_.lease);
  request.set_stopped(true);
  absl::StatusOr<v1::HeartbeatResponse> answer = kq_.Heartbeat(request);
  if (!answer.ok()) {
    const absl::StatusCode code = answer.status().code();
    if (code != absl::StatusCode::kFailedPrecondition &&
        code != absl::StatusCode::kNotFound) {
      return Kq(answer.status());
    }
    // Released already, or held by another runner: nothing to confirm.
    spdlog::info("stop of job={} workload={} not confirmed: {}", key.String(),
                 wl.metadata().name(), std::string(answer.status().message()));
  } else {
    NoteKq(absl::OkStatus());
    spdlog::info("confirmed stop job={} workload={}", key.String(),
                 wl.metadata().name());
  }
  Detach(key);
  return absl::OkStatus();
}

absl::Status JobController::EnsureAttached(const JobKey& key,
                                           const v1::Workload& wl) {
  const std::string& name = wl.metadata().name();
  {
    absl::MutexLock lock(&mu_);
    auto it = attached_.find(key);
    if (it != attached_.end() && it->second.workload == name) {
      return absl::OkStatus();
    }
  }
  // A running Job this runner does not hold yet: after a restart of the
  // shim, take the lease back.
  v1::HeartbeatRequest request;
  request.set_namespace_(key.namespace_name);
  request.set_name(name);
  request.set_runner_id(options_.runner_id);
  *request.mutable_lease() = ToProtoDuration(options_.lease);
  absl::StatusOr<v1::HeartbeatResponse> answer = kq_.Heartbeat(request);
  if (!answer.ok()) return Kq(answer.status());
  NoteKq(absl::OkStatus());
  {
    absl::MutexLock lock(&mu_);
    attached_[key] = Attached{name};
    Metrics::Global().Set(kRunning, {}, static_cast<double>(attached_.size()));
  }
  spdlog::info("attached to running job={} workload={}", key.String(), name);
  if (answer->stop()) queue_.Add(key);
  return absl::OkStatus();
}

void JobController::SyncReclaimablePods(const JobKey& key, const json& job,
                                        const v1::Workload& wl) {
  if (!HasQuotaReservation(wl)) return;
  std::vector<v1::ReclaimablePod> want = ReclaimablePods(job);
  if (want.empty()) return;
  int32_t count = want[0].count();
  // Kueue's LimitReclaimablePodsToPodSetSizes.
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    if (ps.name() == want[0].name()) count = std::min(count, ps.count());
  }
  int32_t current = 0;
  for (const v1::ReclaimablePod& pod : wl.status().reclaimable_pods()) {
    if (pod.name() == want[0].name()) current = pod.count();
  }
  // kqd refuses a count that goes down while quota is held.
  if (count <= current) return;
  absl::StatusOr<v1::Workload> set = kq_.SetReclaimablePods(
      key.namespace_name, wl.metadata().name(), {{want[0].name(), count}});
  NoteKq(set.status());
  if (!set.ok()) {
    spdlog::warn("reclaimable pods of job={} workload={} not reported: {}",
                 key.String(), wl.metadata().name(), set.status().ToString());
  }
}

absl::Status JobController::UpdateJob(const JobKey& key, const json& job) {
  absl::StatusOr<json> updated =
      kube_.Update(kube::kJobs, key.namespace_name, job);
  if (!updated.ok()) return updated.status();
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  if (it != jobs_.end() && kube::NotOlder(*updated, it->second))
    it->second = *updated;
  return absl::OkStatus();
}

absl::Status JobController::CancelWorkload(const std::string& ns,
                                           const std::string& name) {
  absl::StatusOr<v1::Workload> cancelled = kq_.CancelWorkload(ns, name);
  if (cancelled.ok()) return Kq(absl::OkStatus());
  const absl::StatusCode code = cancelled.status().code();
  if (code == absl::StatusCode::kNotFound ||
      code == absl::StatusCode::kFailedPrecondition) {
    return absl::OkStatus();
  }
  return Kq(cancelled.status());
}

void JobController::RecordAdmissionCheckUpdate(const JobKey& key,
                                               const json& job,
                                               const v1::Workload& wl) {
  const std::string message = AdmissionCheckMessage(wl);
  if (message.empty()) return;
  {
    absl::MutexLock lock(&mu_);
    std::string& last = check_messages_[key];
    if (last == message) return;
    last = message;
  }
  RecordEvent(job, "Normal", kReasonUpdatedAdmissionCheck, message);
}

void JobController::RecordEvent(const json& job, const std::string& type,
                                const std::string& reason,
                                const std::string& message) {
  std::string text = message;
  if (text.size() > kMaxEventMessage) text.resize(kMaxEventMessage);
  absl::Status recorded = kube::RecordEvent(kube_, job, type, reason, text);
  if (!recorded.ok()) {
    spdlog::warn("event {} on job={} not recorded: {}", reason,
                 KeyOfJob(job).String(), recorded.ToString());
  }
}

}  // namespace kq::shim::jobs
