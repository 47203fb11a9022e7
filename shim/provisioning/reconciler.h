#pragma once

// One reconcile of one workload: Kueue's provisioning Controller.Reconcile
// (pkg/controller/admissionchecks/provisioning/controller.go), with the
// workload and the config objects read from kqd and the Kubernetes objects
// from the caller's cache. In Kueue's order:
//   1. Workload gone or Finished: delete its ProvisioningRequests and
//      PodTemplates. Evicted, or no longer holding quota: delete them but
//      the retry records (provisioning.h); Kueue's
//      CleanupProvisioningRequestsOnEviction. A check kqd reset with
//      "Reset to Pending after eviction. Previously: Retry" whose newest
//      failed (or expired) request is not recorded yet gets it recorded
//      first: the shim stopped between the Retry and its record. Objects of
//      an earlier incarnation of the name (another UID) go as well.
//   2. Holding quota: for each of its checks whose AdmissionCheck has
//      controllerName kueue.x-k8s.io/provisioning-request, the config
//      (missing: the check is Pending "the check is not active"; a bad
//      parameters reference is an error, retried), then the active or last
//      request of the check (Kueue's activeOrLastPRForChecks: highest
//      attempt among those in sync with the config).
//   3. syncCheckStates: SyncCheckState per check, written to kqd with
//      SetAdmissionCheckState when it changed. A Retry marks its request as
//      the retry record. When kqd evicted or deactivated the workload in
//      answer (Retry, Rejected), the reconcile ends: the next one cleans up.
//   4. deleteUnusedProvisioningRequests: requests neither active nor the
//      newest retry record of a check, with their PodTemplates.
//   5. syncOwnedProvisionRequest: a check not Ready with no request, or
//      whose request Failed (or its booking expired before admission) while
//      the check is Pending, gets attempt+1: its PodTemplates (existing
//      ones are kept), then the request. PodTemplates are then owned by
//      their request.
// Creates are idempotent: an existing PodTemplate is reused; a request
// that already exists is adopted when it carries this workload's UID, and
// otherwise reported on the check ("Error creating ProvisioningRequest
// ..."), as Kueue's handleError does. Kueue's Events on the Workload are
// logged instead (a kq Workload is not a Kubernetes object).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "shim/kube/client.h"

namespace kq::shim::provisioning {

using json = nlohmann::json;

struct ReconcileInput {
  // The workload's key.
  std::string namespace_name;
  std::string name;
  // The workload as kqd has it now; null when kqd does not know it.
  const v1::Workload* workload = nullptr;
  // kqd's placements of the workload's pod sets (GetWorkloadResponse):
  // the flavors' nodeLabels and tolerations. May be null.
  const google::protobuf::RepeatedPtrField<v1::PodSetPlacement>* placements =
      nullptr;
  // kqd's AdmissionChecks and ProvisioningRequestConfigs, by name. Must
  // not be null.
  const std::map<std::string, v1::AdmissionCheck>* admission_checks = nullptr;
  const std::map<std::string, v1::ProvisioningRequestConfig>* configs = nullptr;
  // The ProvisioningRequests and the kueue.x-k8s.io/managed PodTemplates
  // of the workload's namespace, as cached (any owner).
  std::vector<json> requests;
  std::vector<json> templates;
};

struct ReconcileHooks {
  // kqd's SetAdmissionCheckState; returns the workload afterwards.
  std::function<absl::StatusOr<v1::Workload>(
      const v1::SetAdmissionCheckStateRequest&)>
      set_check_state;
  // After each write the API server answered with the object (create,
  // patch), and after each delete (also NOT_FOUND): so that a cache sees
  // the shim's own writes before their watch events. May be null.
  std::function<void(const kube::Resource&, const json& object)> on_stored;
  std::function<void(const kube::Resource&, const std::string& ns,
                     const std::string& name)>
      on_deleted;
};

// Counts of what one reconcile did, for logs and metrics.
struct ReconcileResult {
  int requests_created = 0;
  int requests_deleted = 0;
  int templates_created = 0;
  int templates_deleted = 0;
  int check_updates = 0;
};

// Reconciles one workload (see the file comment). Errors of the API server
// or kqd are returned after what could be done was done; the caller
// retries with backoff. `result` may be null.
absl::Status ReconcileWorkload(kube::Client& kube, const ReconcileHooks& hooks,
                               const ReconcileInput& input,
                               ReconcileResult* result = nullptr);

}  // namespace kq::shim::provisioning
