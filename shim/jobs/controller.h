#pragma once

// JobController: Kueue's job reconciler (pkg/controller/jobframework/
// reconciler.go with the batch/v1 Job of pkg/controller/jobs/job) against a
// real Kubernetes API server, with every admission decision left to kqd.
// It is a runner in kqd's sense: it attaches to the Workloads it starts with
// Heartbeat, keeps their leases and confirms their stops.
//
// Inputs, all level-triggered into one keyed work queue (namespace/name):
//   - a Reflector (LIST+WATCH) of batch/v1 Jobs labelled
//     kueue.x-k8s.io/queue-name, in one namespace or all;
//   - a KqReflector of kqd's Workloads (a ListWorkloads, then
//     WatchResumable from its revision, re-listed after OUT_OF_RANGE or a
//     watch that gave up), so an admission or an eviction reaches its Job
//     at once;
//   - the heartbeat loop (every lease/3) for the Workloads this runner
//     holds: a `stop` answer queues the Job;
//   - a periodic resync of every Job.
// Each reconcile reads the Job from the informer cache and its Workload from
// kqd (GetWorkload), then does at most one write, in Kueue's order:
//   0. Job gone (or being deleted): cancel its unfinished Workloads, once a
//      live GET confirms it is gone. Workloads of an earlier incarnation of
//      the name (another UID) are cancelled too.
//   1. A stop in progress (suspend=true + kueue.x-k8s.io/stopping): once no
//      pod is active or ready, restore the pod template.
//   2. Workload finished by kqd (cancelled, failed to start) while the Job
//      runs: stop the Job (Kueue stops a Job whose Workload is deleted).
//   3. Job Complete/Failed: FinishWorkload(succeeded, message) when it holds
//      quota, else CancelWorkload. Event FinishedWorkload.
//   4. No Workload: a running Job is stopped first (Warning Event Stopped
//      "Missing Workload; unable to restore pod templates"); once no pod is
//      active, SubmitWorkload(WorkloadForJob(job)). Event CreatedWorkload.
//   5. Evicted=True: suspend the Job (Event Stopped with the eviction
//      message); once stopped and restored (also when someone else had
//      suspended it), Heartbeat(stopped=true) so kqd releases the quota.
//   6. Job suspended: while its Workload waits for admission checks, Event
//      UpdatedAdmissionCheck with their messages (on change). Once the
//      Workload is admitted: Heartbeat to attach, StartJob,
//      update with the Job's resourceVersion. Event Started "Admitted by
//      clusterQueue <cq>". A permanent start error (conflicting
//      podSetUpdates) finishes the Workload as failed.
//   7. Job running without an admitted Workload: stop it (Warning Event
//      Stopped "Not admitted by cluster queue"). Running with one: attach
//      (a restarted shim re-attaches with the same runner id) and report
//      reclaimable pods.
// The two Stopped Events of a Job that ran without admission (4 and 7) are
// Warnings where Kueue records Normal ones: they are the second line of the
// issue's pitfall 1, a Job that bypassed the webhook.
// Every write carries the object's resourceVersion (409 -> retried); kqd
// errors are retried with the queue's backoff and no Job is changed on a
// guess while kqd cannot be asked. On exit nothing is released: leases
// lapse, or the restarted shim re-attaches.
//
// Metrics (Metrics::Global()): kq_shim_jobs_reconciled_total{result},
// kq_shim_job_admissions_started_total, kq_shim_job_stops_total{reason},
// kq_shim_workloads_submitted_total, kq_shim_workloads_finished_total{as},
// kq_shim_job_reconcile_errors_total{code}, kq_shim_heartbeats_total{result},
// kq_shim_jobs_running (gauge), kq_shim_kqd_reachable (gauge).
//
// Thread-safety: thread-safe; Start() once, Stop() from any thread.

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "kq/client/client.h"
#include "shim/common/kq_reflector.h"
#include "shim/jobs/job_workload.h"
#include "shim/jobs/work_queue.h"
#include "shim/kube/client.h"
#include "shim/kube/reflector.h"

namespace kq::shim::jobs {

struct JobControllerOptions {
  // This runner's id at kqd. Keep it across restarts (e.g. the host or pod
  // name) so that a restarted shim re-attaches to the Workloads it ran.
  std::string runner_id;
  // The lease asked for with every Heartbeat; renewed every lease/3.
  absl::Duration lease = absl::Seconds(30);
  // The namespace whose Jobs are managed; empty for all.
  std::string namespace_name;
  // Reconcile workers, 1 to 4.
  int workers = 2;
  // Every Job is queued again this often.
  absl::Duration resync = absl::Minutes(5);
  // Per-Job retry backoff after an error.
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(30);
  // A Job waiting for its pods to go is looked at again after this even
  // without an event from the API server.
  absl::Duration stop_recheck = absl::Seconds(5);
  // The Job reflector's options (the label selector is always the
  // queue-name label).
  absl::Duration reflector_initial_backoff = absl::Milliseconds(200);
  absl::Duration reflector_max_backoff = absl::Seconds(10);
};

class JobController {
 public:
  // `kube` and `kq` must outlive the controller.
  JobController(kube::Client& kube, client::Client& kq,
                JobControllerOptions options);
  ~JobController();
  JobController(const JobController&) = delete;
  JobController& operator=(const JobController&) = delete;

  // Starts the reflector, the kq watch, the heartbeat loop and the workers.
  // INVALID_ARGUMENT for an empty runner id, a lease under 3 s or a worker
  // count outside 1..4; FAILED_PRECONDITION when started already.
  absl::Status Start();
  // Stops every thread, waiting for the kqd calls under way; releases
  // nothing at kqd. Idempotent.
  void Stop();

  // OK once the Jobs and kqd's Workloads are listed and kqd answered the
  // last call; otherwise UNAVAILABLE saying why not.
  absl::Status Ready() const;

  // Reconciles finished (for tests and logs).
  int64_t reconcile_count() const { return reconciles_.load(); }

 private:
  struct Attached {
    std::string workload;
  };

  // ---- Inputs ----
  void OnJobsSync(const std::vector<json>& items);
  void OnJobEvent(const kube::WatchEvent& event);
  void OnWorkloadsListed(const KqSnapshot& listed);
  void OnWorkloadEvent(const v1::WatchEvent& event);
  void RunWorker();
  void RunTicker();
  void Heartbeats();

  // ---- Reconcile ----
  absl::Status Reconcile(const JobKey& key);
  absl::Status FinalizeDeleted(const JobKey& key);
  absl::Status CancelOtherIncarnations(const JobKey& key,
                                       const std::string& uid);
  absl::Status ContinueStop(const JobKey& key, const json& job,
                            const v1::GetWorkloadResponse* wl);
  absl::Status SuspendForStop(const JobKey& key, const json& job,
                              const std::string& workload,
                              const std::string& event_type,
                              const std::string& reason,
                              const std::string& message);
  absl::Status FinishForJob(const JobKey& key, const json& job,
                            const v1::Workload& wl);
  absl::Status Submit(const JobKey& key, const json& job);
  absl::Status Start(const JobKey& key, const json& job,
                     const v1::GetWorkloadResponse& wl);
  absl::Status ConfirmStopped(const JobKey& key, const v1::Workload& wl);
  absl::Status EnsureAttached(const JobKey& key, const v1::Workload& wl);
  void SyncReclaimablePods(const JobKey& key, const json& job,
                           const v1::Workload& wl);
  absl::Status UpdateJob(const JobKey& key, const json& job);
  absl::Status CancelWorkload(const std::string& ns, const std::string& name);
  void RecordAdmissionCheckUpdate(const JobKey& key, const json& job,
                                  const v1::Workload& wl);
  void RecordEvent(const json& job, const std::string& type,
                   const std::string& reason, const std::string& message);
  void Detach(const JobKey& key);

  std::optional<json> CachedJob(const JobKey& key) const;
  // Notes whether kqd answered (a call's status); Kq() also passes it on.
  void NoteKq(const absl::Status& status);
  absl::Status Kq(const absl::Status& status);
  bool ShouldManage(const std::string& ns) const;

  kube::Client& kube_;
  client::Client& kq_;
  const JobControllerOptions options_;
  WorkQueue queue_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> reconciles_{0};
  std::atomic<bool> kq_reachable_{false};

  mutable absl::Mutex mu_;
  absl::CondVar synced_cv_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool jobs_synced_ ABSL_GUARDED_BY(mu_) = false;
  bool workloads_synced_ ABSL_GUARDED_BY(mu_) = false;
  std::string kq_error_ ABSL_GUARDED_BY(mu_);
  std::map<JobKey, json> jobs_ ABSL_GUARDED_BY(mu_);
  // Unfinished Workloads the shim created, by Job: name -> Job UID.
  std::map<JobKey, std::map<std::string, std::string>> workloads_
      ABSL_GUARDED_BY(mu_);
  // Workloads this runner holds a lease on, by Job.
  std::map<JobKey, Attached> attached_ ABSL_GUARDED_BY(mu_);
  // The last UpdatedAdmissionCheck message recorded per Job: Kueue records
  // one per reconcile and lets the API server aggregate them; the shim's
  // Events are not aggregated, so it records changes only.
  std::map<JobKey, std::string> check_messages_ ABSL_GUARDED_BY(mu_);

  std::unique_ptr<kube::Reflector> reflector_;
  std::unique_ptr<KqReflector> kq_reflector_;
  std::thread reflector_thread_;
  std::thread kq_reflector_thread_;
  std::thread ticker_thread_;
  std::vector<std::thread> workers_;
  absl::Mutex ticker_mu_;
  absl::CondVar ticker_cv_;
};

}  // namespace kq::shim::jobs
