#pragma once

// The MultiKueue admission check controller inside a manager kqd (Kueue's
// multikueue_workload, multikueue_cluster and incremental dispatcher
// reconcilers). It follows the engine's committed batches for the
// workloads that carry a MultiKueue check and for the MultiKueue objects,
// keeps one WorkerLink per MultiKueueCluster, and reconciles each workload
// group with the pure rules of server/federation (IncrementalReconcile,
// ReconcileGroup). A decision is committed to the manager's own store
// before any call it implies is sent: the nominations, the winning cluster
// and the epoch are the outbox, so a manager killed at any point resumes
// from what it had decided.
//
// Threads: the engine calls OnCommitted on its thread (a copy, then a
// wakeup); one thread of the controller's reconciles; each link has its own.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kq/v1/queue_service.pb.h"

#include "server/core/config.h"
#include "server/core/objects.h"
#include "server/engine/batch_observer.h"
#include "server/engine/engine.h"
#include "server/federation/group.h"
#include "server/federation/manager/federation_metrics.h"
#include "server/federation/manager/worker_link.h"

namespace kq::federation {

// How the controller reaches a MultiKueueCluster: the client options of its
// kq contexts file, or why it cannot (Kueue's BadKubeConfig reasons).
using ClusterResolver = std::function<absl::StatusOr<client::ClientOptions>(
    const MultiKueueCluster& cluster)>;

struct ControllerOptions {
  // The Configuration's multiKueue settings are read from the engine's
  // state; these are the runtime's own.
  absl::Duration bookmark_interval = absl::Seconds(1);
  absl::Duration silence_timeout = absl::Seconds(4);
  absl::Duration relay_lease = absl::Seconds(30);
  // Workloads reconciled per round (one engine batch of decisions).
  size_t max_round = 2000;
  ClusterResolver resolve;
  // May be null.
  FederationMetrics* metrics = nullptr;
};

// Thread-safe.
class Controller : public engine::BatchObserver {
 public:
  Controller(engine::Engine& engine, ControllerOptions options);
  ~Controller() override;
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // After the engine started: lists the workloads once and starts the
  // reconcile thread.
  absl::Status Start();
  void Stop();

  void OnCommitted(const engine::CommittedBatch& batch) override;

  // For `kq describe`: what each worker holds of `key`, and the links'
  // connection states (by cluster name).
  struct CopyReport {
    std::string cluster;
    bool connected = false;
    std::optional<RemoteCopy> copy;
  };
  std::vector<CopyReport> ReportCopies(const NamespacedName& key) const;

 private:
  // What OnCommitted copies of the configuration.
  struct Config {
    MultiKueueSettings settings;
    // MultiKueue check name -> its MultiKueueConfig's clusters (config
    // order); a check whose config is missing maps to nothing.
    std::map<std::string, std::vector<std::string>> check_clusters;
    std::map<std::string, MultiKueueCluster> clusters;
    bool operator==(const Config&) const = default;
  };
  // A local workload the controller follows.
  struct Local {
    // Shared: a round reads it without copying it.
    std::shared_ptr<const Workload> workload;
    std::string check;
  };

  // Copies what the controller follows of the configuration from `state`.
  void TakeConfig(const admission::AdmissionState& state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A call of a decision on `key` was answered.
  void Answered(const NamespacedName& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop(std::stop_token stop);
  // One round over `keys` (the controller's thread).
  void Reconcile(const std::vector<NamespacedName>& keys, absl::Time now);
  // Creates, replaces and removes links to match `config`.
  void SyncLinks(const Config& config, absl::Time now);
  void RenewRelays(absl::Time now);
  void CollectGarbage(absl::Time now);
  void Enqueue(std::vector<NamespacedName> keys);
  void EnqueueWorker(const std::string& worker);
  // The MultiKueue check of `wl`, if any, given `config`.
  static std::optional<std::string> CheckOf(const Workload& wl,
                                            const Config& config);
  std::shared_ptr<WorkerLink> LinkOf(const std::string& name) const;
  void ReportClusterConditions(absl::Time now);
  // Whether `condition` says what was last reported for `cluster`.
  bool AlreadyReported(const std::string& cluster,
                       const Condition& condition) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  engine::Engine& engine_;
  const ControllerOptions options_;

  mutable absl::Mutex mu_;
  Config config_ ABSL_GUARDED_BY(mu_);
  bool configured_ ABSL_GUARDED_BY(mu_) = false;
  bool config_changed_ ABSL_GUARDED_BY(mu_) = false;
  // Calls of decisions not answered yet, per workload, and the workloads
  // that became dirty meanwhile.
  std::map<NamespacedName, int> outstanding_ ABSL_GUARDED_BY(mu_);
  std::set<NamespacedName> waiting_ ABSL_GUARDED_BY(mu_);
  std::map<NamespacedName, Local> locals_ ABSL_GUARDED_BY(mu_);
  std::set<NamespacedName> dirty_ ABSL_GUARDED_BY(mu_);
  std::multimap<absl::Time, NamespacedName> timers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<WorkerLink>> links_
      ABSL_GUARDED_BY(mu_);
  // Workers whose connection changed: their workloads are looked at again.
  std::set<std::string> workers_changed_ ABSL_GUARDED_BY(mu_);
  bool listed_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, Condition> reported_ ABSL_GUARDED_BY(mu_);

  std::jthread thread_;
};

// A CopyReport as Explain answers it (Pending, QuotaReserved, Admitted,
// Finished or Evicted, with the condition that says so).
v1::MultiKueueCopyState CopyStateOf(const Controller::CopyReport& report);

}  // namespace kq::federation
