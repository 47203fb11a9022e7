#pragma once

// ProvisioningController: Kueue's ProvisioningRequest admission check
// controller (pkg/controller/admissionchecks/provisioning) for kqd's
// workloads: for AdmissionChecks with controllerName
// kueue.x-k8s.io/provisioning-request it creates autoscaling.x-k8s.io/v1
// ProvisioningRequests and their v1 PodTemplates from the
// ProvisioningRequestConfig, and reports each request's conditions to kqd
// as the check's state (reconciler.h has the rules, provisioning.h the
// names and the mapping).
//
// Inputs, all level-triggered into one keyed work queue (workload
// namespace/name):
//   - kqd, through a KqReflector: ListObjects of AdmissionChecks and
//     ProvisioningRequestConfigs and ListWorkloads, then one WatchResumable
//     of the three kinds from the oldest of their revisions (listed again
//     after OUT_OF_RANGE or a watch that gave up). A workload is queued
//     when it has a provisioning check or owns objects; a config change
//     queues every workload with a provisioning check;
//   - Reflectors (LIST+WATCH) of ProvisioningRequests and PodTemplates
//     labelled kueue.x-k8s.io/managed=true: a request's change queues its
//     workload (kq.dev/workload-* annotations); templates are only cached;
//   - a periodic resync of every workload known from either side.
// Each reconcile reads the workload from kqd (GetWorkload, for its
// placements) and the Kubernetes objects from the caches, which see the
// shim's own writes at once. Everything is derived from the two sides'
// current state, so a restart (of the shim or kqd) picks up where it was.
//
// AdmissionChecks whose ProvisioningRequestConfig is missing are logged and
// counted (kq_shim_provisioning_checks_without_config); their workloads'
// checks stay Pending with Kueue's "the check is not active", and kqd
// reports the AdmissionCheck Active=False.
//
// Metrics (Metrics::Global()): kq_shim_provisioning_reconciles_total{result},
// kq_shim_provisioning_requests_created_total,
// kq_shim_provisioning_requests_deleted_total,
// kq_shim_provisioning_check_updates_total,
// kq_shim_provisioning_checks_without_config (gauge).
//
// Thread-safety: Run() once, from one thread; Synced() from any.

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "kq/client/client.h"
#include "shim/common/kq_reflector.h"
#include "shim/jobs/work_queue.h"
#include "shim/kube/client.h"
#include "shim/provisioning/reconciler.h"

namespace kq::shim::provisioning {

struct ProvisioningOptions {
  // The namespace whose workloads are served; empty for all.
  std::string namespace_name;
  // Reconcile workers, 1 to 4.
  int workers = 1;
  // Every workload is queued again this often.
  absl::Duration resync = absl::Minutes(5);
  // Per-workload retry backoff after an error.
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(30);
  // The reflectors' backoff.
  absl::Duration reflector_initial_backoff = absl::Milliseconds(200);
  absl::Duration reflector_max_backoff = absl::Seconds(10);
};

class ProvisioningController {
 public:
  // `kube` and `kq` must outlive the controller.
  ProvisioningController(kube::Client& kube, client::Client& kq,
                         ProvisioningOptions options);
  ~ProvisioningController();
  ProvisioningController(const ProvisioningController&) = delete;
  ProvisioningController& operator=(const ProvisioningController&) = delete;

  // Runs the reflectors, the kq watch, the resync and the workers until
  // `stop` becomes true (checked every 100 ms), then stops them, waiting
  // for the calls under way. Returns at once, doing nothing, when called
  // again or with options out of range (logged).
  void Run(const std::atomic<bool>& stop);

  // True once ProvisioningRequests, PodTemplates and kqd's objects were
  // listed.
  bool Synced() const;

  // Reconciles finished (for tests and logs).
  int64_t reconcile_count() const { return reconciles_.load(); }

 private:
  using Key = jobs::JobKey;
  struct Cached {
    // The workload's UID and the names of its admission checks.
    std::string uid;
    std::vector<std::string> checks;
  };

  // ---- Inputs ----
  void OnRequestsSync(const std::vector<json>& items);
  void OnRequestEvent(const kube::WatchEvent& event);
  void OnTemplatesSync(const std::vector<json>& items);
  void OnTemplateEvent(const kube::WatchEvent& event);
  void OnKqListed(const KqSnapshot& listed);
  void OnKqEvent(const v1::WatchEvent& event);
  void RunWorker();
  void RunTicker(const std::atomic<bool>& stop);

  // ---- State (mu_ held) ----
  void StoreWorkloadLocked(const v1::Workload& wl)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasProvisioningCheckLocked(const Cached& cached) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues every workload with a provisioning check, after a config change,
  // and updates the missing-config gauge.
  void ConfigChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void QueueOwnerOf(const json& object);
  void StoreObject(const std::string& plural,
                   std::map<std::string, std::map<std::string, json>>& cache,
                   const json& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseObject(const std::string& plural,
                   std::map<std::string, std::map<std::string, json>>& cache,
                   const std::string& ns, const std::string& name,
                   bool tombstone) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Managed(const std::string& ns) const;

  // ---- Reconcile ----
  absl::Status Reconcile(const Key& key);

  kube::Client& kube_;
  client::Client& kq_;
  const ProvisioningOptions options_;
  jobs::WorkQueue queue_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> reconciles_{0};

  mutable absl::Mutex mu_;
  bool requests_synced_ ABSL_GUARDED_BY(mu_) = false;
  bool templates_synced_ ABSL_GUARDED_BY(mu_) = false;
  bool kq_synced_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, v1::AdmissionCheck> checks_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, v1::ProvisioningRequestConfig> configs_
      ABSL_GUARDED_BY(mu_);
  // AdmissionChecks of this controller whose config is missing or badly
  // referenced, as last reported.
  std::set<std::string> without_config_ ABSL_GUARDED_BY(mu_);
  // Unfinished workloads with admission checks.
  std::map<Key, Cached> workloads_ ABSL_GUARDED_BY(mu_);
  // namespace -> name -> object.
  std::map<std::string, std::map<std::string, json>> requests_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::map<std::string, json>> templates_
      ABSL_GUARDED_BY(mu_);
  // UIDs of objects the shim deleted, by (plural, namespace, name), until
  // their DELETED event or a re-list: a watch event from before the delete
  // must not bring them back into the caches.
  std::map<std::tuple<std::string, std::string, std::string>, std::string>
      deleted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kq::shim::provisioning
