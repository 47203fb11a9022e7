#include "tests/cli/recording_client.h"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kq::cli::testing {

void RecordingClient::Record(const char* method) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(method);
}

absl::StatusOr<v1::ApplyResponse> RecordingClient::Apply(
    const v1::ApplyRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("Apply");
    apply_requests_.push_back(request);
  }
  return real_.Apply(request);
}

absl::Status RecordingClient::Delete(const std::string& kind,
                                     const std::string& namespace_name,
                                     const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("Delete");
    deletes_.emplace_back(kind, namespace_name, name);
  }
  return real_.Delete(kind, namespace_name, name);
}

absl::StatusOr<v1::ConfigObject> RecordingClient::GetObject(
    const std::string& kind, const std::string& namespace_name,
    const std::string& name) {
  Record("GetObject");
  return real_.GetObject(kind, namespace_name, name);
}

absl::StatusOr<v1::ListObjectsResponse> RecordingClient::ListObjects(
    const std::string& kind, const std::string& namespace_name) {
  Record("ListObjects");
  return real_.ListObjects(kind, namespace_name);
}

absl::StatusOr<v1::Workload> RecordingClient::SetAdmissionCheckState(
    const v1::SetAdmissionCheckStateRequest& request) {
  Record("SetAdmissionCheckState");
  return real_.SetAdmissionCheckState(request);
}

absl::StatusOr<v1::Workload> RecordingClient::Preempt(
    const v1::PreemptRequest& request) {
  Record("Preempt");
  return real_.Preempt(request);
}

absl::StatusOr<v1::Workload> RecordingClient::SetWorkloadActive(
    const std::string& namespace_name, const std::string& name, bool active) {
  Record("SetWorkloadActive");
  return real_.SetWorkloadActive(namespace_name, name, active);
}

absl::StatusOr<v1::ConfigObject> RecordingClient::SetStopPolicy(
    const v1::SetStopPolicyRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("SetStopPolicy");
    stop_policy_requests_.push_back(request);
  }
  return real_.SetStopPolicy(request);
}

absl::StatusOr<v1::SubmitWorkloadResponse> RecordingClient::SubmitWorkload(
    const v1::SubmitWorkloadRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("SubmitWorkload");
    submitted_.push_back(request.workload());
  }
  return real_.SubmitWorkload(request);
}

void RecordingClient::SubmitWorkloadAsync(v1::SubmitWorkloadRequest request,
                                          SubmitDone done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("SubmitWorkloadAsync");
    submitted_.push_back(request.workload());
  }
  real_.SubmitWorkloadAsync(std::move(request), std::move(done));
}

absl::StatusOr<v1::GetWorkloadResponse> RecordingClient::GetWorkload(
    const v1::GetWorkloadRequest& request) {
  std::function<void()> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("GetWorkload");
    hook = after_get_workload_;
  }
  absl::StatusOr<v1::GetWorkloadResponse> response = real_.GetWorkload(request);
  if (response.ok() && hook) hook();
  return response;
}

absl::StatusOr<v1::ListWorkloadsResponse> RecordingClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  Record("ListWorkloads");
  return real_.ListWorkloads(request);
}

absl::StatusOr<v1::Workload> RecordingClient::CancelWorkload(
    const std::string& namespace_name, const std::string& name) {
  Record("CancelWorkload");
  return real_.CancelWorkload(namespace_name, name);
}

absl::StatusOr<v1::Workload> RecordingClient::FinishWorkload(
    const std::string& namespace_name, const std::string& name, bool succeeded,
    const std::string& message) {
  Record("FinishWorkload");
  return real_.FinishWorkload(namespace_name, name, succeeded, message);
}

absl::StatusOr<v1::AdmitResponse> RecordingClient::Admit(
    const v1::AdmitRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("Admit");
    admit_requests_.push_back(request);
  }
  return real_.Admit(request);
}

absl::StatusOr<v1::AdmitResponse> RecordingClient::WaitAdmitted(
    v1::AdmitRequest request, absl::Duration timeout,
    const std::function<void(const v1::AdmitResponse&)>& on_pending,
    absl::Duration poll) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("WaitAdmitted");
    admit_requests_.push_back(request);
  }
  return real_.WaitAdmitted(
      std::move(request), timeout,
      [&](const v1::AdmitResponse& pending) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          pending_answers_.push_back(pending);
        }
        if (on_pending) on_pending(pending);
      },
      poll);
}

absl::StatusOr<v1::Workload> RecordingClient::SetReclaimablePods(
    const std::string& namespace_name, const std::string& name,
    const std::map<std::string, int32_t>& reclaimable_pods) {
  Record("SetReclaimablePods");
  return real_.SetReclaimablePods(namespace_name, name, reclaimable_pods);
}

absl::StatusOr<v1::HeartbeatResponse> RecordingClient::Heartbeat(
    const v1::HeartbeatRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("Heartbeat");
    heartbeats_.push_back(request);
  }
  return real_.Heartbeat(request);
}

absl::StatusOr<v1::ExplainResponse> RecordingClient::Explain(
    const std::string& namespace_name, const std::string& name) {
  Record("Explain");
  absl::StatusOr<v1::ExplainResponse> response =
      real_.Explain(namespace_name, name);
  if (response.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    explain_answers_.push_back(*response);
  }
  return response;
}

absl::StatusOr<v1::SimulateResponse> RecordingClient::Simulate(
    const v1::SimulateRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("Simulate");
    simulate_requests_.push_back(request);
  }
  return real_.Simulate(request);
}

absl::StatusOr<v1::PendingWorkloadsResponse> RecordingClient::PendingWorkloads(
    const v1::PendingWorkloadsRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("PendingWorkloads");
    pending_workloads_requests_.push_back(request);
  }
  return real_.PendingWorkloads(request);
}

absl::Status RecordingClient::Watch(
    const v1::WatchRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event) {
  int end_after;
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("Watch");
    watch_requests_.push_back(request);
    end_after = end_watches_after_;
  }
  int delivered = 0;
  return real_.Watch(request, [&](const v1::WatchEvent& event) {
    if (!on_event(event)) return false;
    return end_after < 0 || ++delivered < end_after;
  });
}

absl::Status RecordingClient::WatchResumable(
    const v1::WatchRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event,
    client::WatchProgress* progress) {
  std::function<void(int64_t)> hook;
  int end_after;
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back("WatchResumable");
    watch_requests_.push_back(request);
    hook = on_watch_start_;
    end_after = end_watches_after_;
  }
  v1::WatchRequest pinned = request;
  if (hook) {
    if (!pinned.has_from_revision()) {
      absl::StatusOr<v1::ListObjectsResponse> listed =
          real_.ListObjects("ResourceFlavor", "");
      if (!listed.ok()) return listed.status();
      pinned.set_from_revision(listed->revision());
    }
    hook(pinned.from_revision());
  }
  int delivered = 0;
  return real_.WatchResumable(
      pinned,
      [&](const v1::WatchEvent& event) {
        if (!on_event(event)) return false;
        return end_after < 0 || ++delivered < end_after;
      },
      progress);
}

void RecordingClient::AfterGetWorkload(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  after_get_workload_ = std::move(hook);
}

void RecordingClient::OnWatchStart(std::function<void(int64_t)> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  on_watch_start_ = std::move(hook);
}

void RecordingClient::EndWatchesAfter(int events) {
  std::lock_guard<std::mutex> lock(mu_);
  end_watches_after_ = events;
}

std::vector<std::string> RecordingClient::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

std::vector<v1::ApplyRequest> RecordingClient::apply_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return apply_requests_;
}

std::vector<std::tuple<std::string, std::string, std::string>>
RecordingClient::deletes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return deletes_;
}

std::vector<v1::Workload> RecordingClient::submitted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return submitted_;
}

std::vector<v1::AdmitRequest> RecordingClient::admit_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admit_requests_;
}

std::vector<v1::AdmitResponse> RecordingClient::pending_answers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_answers_;
}

std::vector<v1::HeartbeatRequest> RecordingClient::heartbeats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return heartbeats_;
}

std::vector<v1::SetStopPolicyRequest> RecordingClient::stop_policy_requests()
    const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_policy_requests_;
}

std::vector<v1::SimulateRequest> RecordingClient::simulate_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return simulate_requests_;
}

std::vector<v1::ExplainResponse> RecordingClient::explain_answers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return explain_answers_;
}

std::vector<v1::WatchRequest> RecordingClient::watch_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return watch_requests_;
}

std::vector<v1::PendingWorkloadsRequest>
RecordingClient::pending_workloads_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_workloads_requests_;
}

}  // namespace kq::cli::testing
