#pragma once

// FakeClient: an in-memory stand-in for kqd behind kq::client::Client, so
// CLI commands can be tested without a server or a network.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

#include "kq/client/client.h"

namespace kq::cli::testing {

// Keeps configuration objects and workloads in ordered maps and answers
// like kqd does for the parts the CLI relies on: Apply is all-or-nothing
// with created / configured / unchanged actions, names, namespaces and
// queue names are checked (INVALID_ARGUMENT), missing objects are
// NOT_FOUND, duplicate workload names ALREADY_EXISTS, cancel / finish check
// the workload's state (FAILED_PRECONDITION). It does not schedule: a
// workload stays pending unless AdmitOnSubmit() or AdmitPending() says
// otherwise, and object status is stored as given, never computed.
//
// The runner handshake follows kqd's contract (queue_service.proto): Admit
// answers ADMITTED / FINISHED / DEACTIVATED as soon as the state allows
// (waiting on a condition variable, so another thread's AdmitPending() or
// CancelWorkload() wakes it) and PENDING with the QuotaReserved=False
// reason and the position among the pending workloads of the LocalQueue
// otherwise; Heartbeat attaches, renews, says stop while the workload is
// evicted (Evicted=True) and releases the quota on stopped=true, with
// kqd's FAILED_PRECONDITION / NOT_FOUND cases. Leases never lapse.
// Explain, Simulate and WatchResumable answer what the test scripted.
// Watch is UNIMPLEMENTED.
//
// Every request is recorded for assertions. Thread-safe: `kq run` calls it
// from its heartbeat and signal threads. Hooks run without the lock held
// and may call the fake.
class FakeClient : public client::Client {
 public:
  // `now` stamps creation and transition times.
  explicit FakeClient(absl::Time now);

  absl::StatusOr<v1::ApplyResponse> Apply(
      const v1::ApplyRequest& request) override;
  absl::Status Delete(const std::string& kind,
                      const std::string& namespace_name,
                      const std::string& name) override;
  absl::StatusOr<v1::ConfigObject> GetObject(const std::string& kind,
                                             const std::string& namespace_name,
                                             const std::string& name) override;
  absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const std::string& kind, const std::string& namespace_name) override;
  // Records the check's state and message; Admitted=True follows once
  // every check is Ready on a workload holding quota. Retry and Rejected
  // are recorded only: the fake does not evict.
  absl::StatusOr<v1::Workload> SetAdmissionCheckState(
      const v1::SetAdmissionCheckStateRequest& request) override;
  using Client::SubmitWorkload;
  absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::SubmitWorkloadRequest& request) override;
  using Client::GetWorkload;
  absl::StatusOr<v1::GetWorkloadResponse> GetWorkload(
      const v1::GetWorkloadRequest& request) override;
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) override;
  absl::StatusOr<v1::Workload> CancelWorkload(const std::string& namespace_name,
                                              const std::string& name) override;
  absl::StatusOr<v1::Workload> FinishWorkload(
      const std::string& namespace_name, const std::string& name,
      bool succeeded, const std::string& message) override;
  absl::Status Watch(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event) override;
  absl::StatusOr<v1::Workload> Preempt(
      const v1::PreemptRequest& request) override;
  absl::StatusOr<v1::Workload> SetWorkloadActive(
      const std::string& namespace_name, const std::string& name,
      bool active) override;
  absl::StatusOr<v1::ConfigObject> SetStopPolicy(
      const v1::SetStopPolicyRequest& request) override;
  // Records the report in status.reclaimablePods (no quota effect here).
  absl::StatusOr<v1::Workload> SetReclaimablePods(
      const std::string& namespace_name, const std::string& name,
      const std::map<std::string, int32_t>& reclaimable_pods) override;
  // Waits up to request.timeout (1 s when unset).
  absl::StatusOr<v1::AdmitResponse> Admit(
      const v1::AdmitRequest& request) override;
  absl::StatusOr<v1::AdmitResponse> WaitAdmitted(
      v1::AdmitRequest request, absl::Duration timeout,
      const std::function<void(const v1::AdmitResponse&)>& on_pending,
      absl::Duration poll) override;
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(
      const v1::HeartbeatRequest& request) override;
  // The scripted answer (SetExplanation), else NOT_FOUND / FAILED_PRECONDITION
  // (finished) / the workload's state and pending reason.
  absl::StatusOr<v1::ExplainResponse> Explain(const std::string& namespace_name,
                                              const std::string& name) override;
  // The scripted answer (SetSimulateAnswer), else UNIMPLEMENTED.
  absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest& request) override;
  // Delivers the scripted events (AddWatchEvents) that match the request's
  // kinds, namespace and queue_name, then returns the scripted end status.
  absl::Status WatchResumable(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      client::WatchProgress* progress) override;

  // Admits a stored pending workload to `cluster_queue` on `flavor` (every
  // requested resource), as a scheduling cycle would: QuotaReserved and
  // Admitted True, Evicted and Requeued cleared. Wakes Admit waiters.
  void AdmitPending(const std::string& namespace_name, const std::string& name,
                    const std::string& cluster_queue,
                    const std::string& flavor);
  // Evicts a workload holding quota as kqd does: Evicted=True with
  // `reason` and `message`; the quota is released at once when no runner
  // is attached, else when the runner confirms the stop.
  void Evict(const std::string& namespace_name, const std::string& name,
             const std::string& reason, const std::string& message);
  // Node labels reported in the placements of admitted workloads on
  // `flavor`.
  void SetFlavorNodeLabels(const std::string& flavor,
                           std::map<std::string, std::string> labels);
  // What Explain answers for the workload, an error included.
  void SetExplanation(const std::string& namespace_name,
                      const std::string& name,
                      absl::StatusOr<v1::ExplainResponse> response);
  void SetSimulateAnswer(std::function<absl::StatusOr<v1::SimulateResponse>(
                             const v1::SimulateRequest&)>
                             answer);
  void AddWatchEvents(std::vector<v1::WatchEvent> events,
                      absl::Status end = absl::OkStatus());
  // Called after every Heartbeat, with the request and the result.
  void OnHeartbeat(
      std::function<void(const v1::HeartbeatRequest&, const absl::Status&)>
          hook);

  // Recorded requests (copies, taken under the lock).
  std::vector<v1::HeartbeatRequest> heartbeats() const;
  std::vector<v1::AdmitRequest> admit_requests() const;
  std::vector<v1::PreemptRequest> preempt_requests() const;
  // (namespace, name, active).
  std::vector<std::tuple<std::string, std::string, bool>> active_changes()
      const;
  std::vector<v1::SetStopPolicyRequest> stop_policy_requests() const;
  std::vector<v1::WatchRequest> watch_requests() const;
  std::vector<v1::SimulateRequest> simulate_requests() const;
  // (namespace, name) of every CancelWorkload call.
  std::vector<std::pair<std::string, std::string>> cancels() const;

  // From now on, SubmitWorkload admits every new workload at once to
  // `cluster_queue`, assigning `flavor` to each requested resource (as if
  // the scheduling cycle of the submit batch had admitted it).
  void AdmitOnSubmit(std::string cluster_queue, std::string flavor);

  // From now on, SubmitWorkload leaves new workloads pending with
  // QuotaReserved=False, reason "Pending" and `message` (unless
  // AdmitOnSubmit admits them).
  void PendOnSubmit(std::string message);

  // Stores a workload as is (creation time defaulted), bypassing checks;
  // for setting up states such as "admitted" or "finished".
  void PutWorkload(v1::Workload workload);

  // Every ApplyRequest received, including failed ones.
  const std::vector<v1::ApplyRequest>& apply_requests() const {
    return apply_requests_;
  }
  // Every workload given to SubmitWorkload, including failed ones.
  const std::vector<v1::Workload>& submitted() const { return submitted_; }
  // Every Delete call as (kind, namespace, name).
  const std::vector<std::tuple<std::string, std::string, std::string>>&
  deletes() const {
    return deletes_;
  }
  // The stored objects of one kind, by namespace then name.
  std::vector<v1::ConfigObject> Objects(const std::string& kind) const;
  // The stored workload, if any.
  std::optional<v1::Workload> FindWorkload(const std::string& namespace_name,
                                           const std::string& name) const;

 private:
  // (kind, namespace, name); the namespace is empty for cluster-scoped
  // kinds.
  using ObjectKey = std::tuple<std::string, std::string, std::string>;
  // (namespace, name).
  using WorkloadKey = std::pair<std::string, std::string>;

  absl::StatusOr<v1::SubmitWorkloadResponse> SubmitLocked(
      const v1::Workload& workload);
  // ADMITTED, FINISHED or DEACTIVATED when decided (attaching
  // `runner_id`), nullopt while pending.
  std::optional<v1::AdmitResponse> DecideLocked(const v1::Workload& workload,
                                                const std::string& runner_id);
  v1::AdmitResponse PendingLocked(const v1::Workload& workload) const;
  // Gives back an evicted workload's quota; requeued unless inactive.
  void ReleaseLocked(v1::Workload& workload);
  // Evicted=True, released at once when no runner is attached.
  void EvictLocked(v1::Workload& workload, const std::string& reason,
                   const std::string& message);
  void BumpLocked(v1::Workload& workload);
  absl::StatusOr<ObjectKey> KeyOf(const v1::ConfigObject& object) const;
  absl::Status CheckWorkload(const v1::Workload& workload) const;
  // Names a workload that only has metadata.generate_name:
  // "<generate_name><5-digit counter>".
  void GenerateNameIfUnset(v1::ObjectMeta& metadata);
  // Sets uid, revision and creation time of a new object.
  void Stamp(v1::ObjectMeta& metadata);

  mutable std::mutex mu_;
  // Signalled on every workload change, for Admit waiters.
  std::condition_variable changed_;
  absl::Time now_;
  int64_t revision_ = 0;
  int generated_names_ = 0;
  std::optional<std::pair<std::string, std::string>> admit_on_submit_;
  std::optional<std::string> pend_on_submit_;
  std::map<ObjectKey, v1::ConfigObject> objects_;
  std::map<WorkloadKey, v1::Workload> workloads_;
  std::vector<v1::ApplyRequest> apply_requests_;
  std::vector<v1::Workload> submitted_;
  std::vector<std::tuple<std::string, std::string, std::string>> deletes_;
  std::map<std::string, std::map<std::string, std::string>> node_labels_;
  std::map<WorkloadKey, absl::StatusOr<v1::ExplainResponse>> explanations_;
  std::function<absl::StatusOr<v1::SimulateResponse>(
      const v1::SimulateRequest&)>
      simulate_answer_;
  std::vector<v1::WatchEvent> watch_events_;
  absl::Status watch_end_;
  std::function<void(const v1::HeartbeatRequest&, const absl::Status&)>
      heartbeat_hook_;
  std::vector<v1::HeartbeatRequest> heartbeats_;
  std::vector<v1::AdmitRequest> admit_requests_;
  std::vector<v1::PreemptRequest> preempt_requests_;
  std::vector<std::tuple<std::string, std::string, bool>> active_changes_;
  std::vector<v1::SetStopPolicyRequest> stop_policy_requests_;
  std::vector<v1::WatchRequest> watch_requests_;
  std::vector<v1::SimulateRequest> simulate_requests_;
  std::vector<std::pair<std::string, std::string>> cancels_;
};

}  // namespace kq::cli::testing
