#pragma once

// RecordingClient: the CLI tests' view of what `kq` sent to the real kqd.
// It forwards every call, unchanged, to the client of a real kqd
// (tests/testing/kqd_server.h) and records the requests that kqd's
// resulting state cannot show (template forms, runner ids, the namespace a
// cluster-scoped call went without, calls that change nothing). Tests check
// kqd's state first; these records are for the rest.
//
// It also plays the two parts of a user at a terminal that a test cannot
// play from outside a blocking command: changing something while `kq
// describe` is between its calls (AfterGetWorkload), and watching a `kq
// watch` until it showed what was expected, then pressing Ctrl-C
// (OnWatchStart, EndWatchesAfter).

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

#include "kq/client/client.h"

namespace kq::cli::testing {

// Thread-safe: `kq run` calls it from its heartbeat and signal threads.
// Hooks run on the calling thread, without the lock held, and may call the
// real client.
class RecordingClient : public client::Client {
 public:
  // `real` must outlive this.
  explicit RecordingClient(client::Client& real) : real_(real) {}

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
  absl::StatusOr<v1::Workload> SetAdmissionCheckState(
      const v1::SetAdmissionCheckStateRequest& request) override;
  absl::StatusOr<v1::Workload> Preempt(
      const v1::PreemptRequest& request) override;
  absl::StatusOr<v1::Workload> SetWorkloadActive(
      const std::string& namespace_name, const std::string& name,
      bool active) override;
  absl::StatusOr<v1::ConfigObject> SetStopPolicy(
      const v1::SetStopPolicyRequest& request) override;
  using Client::SubmitWorkload;
  absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::SubmitWorkloadRequest& request) override;
  void SubmitWorkloadAsync(v1::SubmitWorkloadRequest request,
                           SubmitDone done) override;
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
  absl::StatusOr<v1::AdmitResponse> Admit(
      const v1::AdmitRequest& request) override;
  absl::StatusOr<v1::AdmitResponse> WaitAdmitted(
      v1::AdmitRequest request, absl::Duration timeout,
      const std::function<void(const v1::AdmitResponse&)>& on_pending,
      absl::Duration poll) override;
  absl::StatusOr<v1::Workload> SetReclaimablePods(
      const std::string& namespace_name, const std::string& name,
      const std::map<std::string, int32_t>& reclaimable_pods) override;
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(
      const v1::HeartbeatRequest& request) override;
  absl::StatusOr<v1::ExplainResponse> Explain(const std::string& namespace_name,
                                              const std::string& name) override;
  absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest& request) override;
  absl::StatusOr<v1::PendingWorkloadsResponse> PendingWorkloads(
      const v1::PendingWorkloadsRequest& request) override;
  absl::Status Watch(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event) override;
  // With an OnWatchStart hook, a watch "from now on" (no from_revision) is
  // pinned here, as the real client would pin it (ListObjects' revision),
  // so that the hook knows the revision after which its changes are seen;
  // the real client then watches from that revision. watch_requests()
  // keeps the request as the CLI sent it.
  absl::Status WatchResumable(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event,
      client::WatchProgress* progress) override;

  // Runs once after every successful GetWorkload, before its answer
  // returns to the CLI.
  void AfterGetWorkload(std::function<void()> hook);
  // Runs when a watch is about to stream, with the revision it streams
  // after: what the hook changes is what the watch shows.
  void OnWatchStart(std::function<void(int64_t revision)> hook);
  // Ends each watch once it has delivered `events` events (as Ctrl-C would
  // end `kq watch`); the watch then returns OK. Unset, watches run until
  // the stream fails.
  void EndWatchesAfter(int events);

  // The methods called, in order ("Apply", "SubmitWorkload", ...).
  std::vector<std::string> calls() const;
  std::vector<v1::ApplyRequest> apply_requests() const;
  // (kind, namespace, name) of every Delete.
  std::vector<std::tuple<std::string, std::string, std::string>> deletes()
      const;
  // The workload of every SubmitWorkload (sync or async).
  std::vector<v1::Workload> submitted() const;
  // Every Admit, and the request of every WaitAdmitted.
  std::vector<v1::AdmitRequest> admit_requests() const;
  // Every PENDING answer WaitAdmitted passed on to the CLI.
  std::vector<v1::AdmitResponse> pending_answers() const;
  std::vector<v1::HeartbeatRequest> heartbeats() const;
  std::vector<v1::SetStopPolicyRequest> stop_policy_requests() const;
  std::vector<v1::SimulateRequest> simulate_requests() const;
  // kqd's answer to every successful Explain: it estimates a start from
  // the time it answers, so a second Explain may differ.
  std::vector<v1::ExplainResponse> explain_answers() const;
  // Watch and WatchResumable requests, as sent by the CLI.
  std::vector<v1::WatchRequest> watch_requests() const;
  // Every PendingWorkloads request.
  std::vector<v1::PendingWorkloadsRequest> pending_workloads_requests() const;

 private:
  void Record(const char* method);

  client::Client& real_;
  mutable std::mutex mu_;
  std::function<void()> after_get_workload_;
  std::function<void(int64_t)> on_watch_start_;
  int end_watches_after_ = -1;
  std::vector<std::string> calls_;
  std::vector<v1::ApplyRequest> apply_requests_;
  std::vector<std::tuple<std::string, std::string, std::string>> deletes_;
  std::vector<v1::Workload> submitted_;
  std::vector<v1::AdmitRequest> admit_requests_;
  std::vector<v1::AdmitResponse> pending_answers_;
  std::vector<v1::HeartbeatRequest> heartbeats_;
  std::vector<v1::SetStopPolicyRequest> stop_policy_requests_;
  std::vector<v1::SimulateRequest> simulate_requests_;
  std::vector<v1::ExplainResponse> explain_answers_;
  std::vector<v1::WatchRequest> watch_requests_;
  std::vector<v1::PendingWorkloadsRequest> pending_workloads_requests_;
};

}  // namespace kq::cli::testing
