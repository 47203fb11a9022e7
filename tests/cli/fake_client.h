#pragma once

// FakeClient: an in-memory stand-in for kqd behind kq::client::Client, so
// CLI commands can be tested without a server or a network.

#include <cstdint>
#include <functional>
#include <map>
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
// workload stays pending unless AdmitOnSubmit() says otherwise, and object
// status is stored as given, never computed. Watch is UNIMPLEMENTED.
//
// Every request is recorded for assertions. Not thread-safe: one test
// thread at a time.
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
  absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::Workload& workload) override;
  absl::StatusOr<v1::GetWorkloadResponse> GetWorkload(
      const std::string& namespace_name, const std::string& name) override;
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

  // From now on, SubmitWorkload admits every new workload at once to
  // `cluster_queue`, assigning `flavor` to each requested resource (as if
  // the scheduling cycle of the submit batch had admitted it).
  void AdmitOnSubmit(std::string cluster_queue, std::string flavor);

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

  absl::StatusOr<ObjectKey> KeyOf(const v1::ConfigObject& object) const;
  absl::Status CheckWorkload(const v1::Workload& workload) const;
  // Names a workload that only has metadata.generate_name:
  // "<generate_name><5-digit counter>".
  void GenerateNameIfUnset(v1::ObjectMeta& metadata);
  // Sets uid, revision and creation time of a new object.
  void Stamp(v1::ObjectMeta& metadata);

  absl::Time now_;
  int64_t revision_ = 0;
  int generated_names_ = 0;
  std::optional<std::pair<std::string, std::string>> admit_on_submit_;
  std::map<ObjectKey, v1::ConfigObject> objects_;
  std::map<WorkloadKey, v1::Workload> workloads_;
  std::vector<v1::ApplyRequest> apply_requests_;
  std::vector<v1::Workload> submitted_;
  std::vector<std::tuple<std::string, std::string, std::string>> deletes_;
};

}  // namespace kq::cli::testing
