#include "shim/provisioning/reconciler.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

#include "proto/util/workload.h"
#include "shim/provisioning/provisioning.h"

namespace kq::shim::provisioning {
using proto_util::HasQuotaReservation;
using proto_util::IsAdmitted;
using proto_util::IsEvicted;
using proto_util::IsFinished;
namespace {

// Kueue's api.TruncateConditionMessage limit.
constexpr size_t kMaxConditionMessage = 32 * 1024;
// Kueue's resetChecksOnEviction message for a check that was Retry.
constexpr char kRetryResetMessage[] =
    "Reset to Pending after eviction. Previously: Retry";

std::string TruncateConditionMessage(std::string message) {
  if (message.size() <= kMaxConditionMessage) return message;
  message.resize(kMaxConditionMessage - 3);
  return message + "...";
}

class WorkloadReconcile {
 public:
  WorkloadReconcile(kube::Client& kube, const ReconcileHooks& hooks,
                    const ReconcileInput& in, ReconcileResult& result)
      : kube_(kube), hooks_(hooks), in_(in), result_(result) {
    for (const json& r : in.requests) {
      std::optional<WorkloadRef> owner = OwnerOf(r);
      if (owner.has_value() && owner->name == in.name &&
          NamespaceOf(r) == in.namespace_name) {
        owned_.push_back(r);
      }
    }
    for (const json& t : in.templates) {
      if (NamespaceOf(t) != in.namespace_name) continue;
      cached_templates_[NameOf(t)] = t;
      std::optional<WorkloadRef> owner = OwnerOf(t);
      if (owner.has_value() && owner->name == in.name) {
        owned_templates_.push_back(t);
      }
    }
  }

  absl::Status Run();

 private:
  std::string Describe() const {
    return absl::StrCat(in_.namespace_name, "/", in_.name);
  }

  // ---- Cleanup ----
  // Deletes the owned requests and templates not kept; templates are kept
  // with a kept request.
  absl::Status DeleteAllBut(const std::set<std::string>& keep_requests);
  absl::Status DeleteRequest(const json& request);
  absl::Status DeleteTemplate(const std::string& name);
  // The newest retry record of each check of the workload.
  std::map<std::string, const json*> NewestRecords(
      const v1::Workload& wl) const;

  // A Retry whose record was not written (the shim stopped, or the patch
  // failed, after kqd took the Retry): kqd's eviction left the check
  // "Reset to Pending after eviction. Previously: Retry", and the newest
  // failed or expired request of the check is the one retried.
  absl::Status RecordLostRetries(const v1::Workload& wl);

  // ---- Requests ----
  absl::StatusOr<json> CreateForCheck(
      const v1::Workload& wl, const std::string& check,
      const v1::ProvisioningRequestConfig& config, int32_t attempt);
  // Kueue's handleError: the message on the check, then the error.
  absl::Status HandleError(const v1::Workload& wl, const std::string& check,
                           const std::string& message, absl::Status error);
  // Kueue's syncProvisionRequestsPodTemplates: the request's templates are
  // controlled by it.
  absl::Status SyncTemplatesOwnership(const json& request);

  kube::Client& kube_;
  const ReconcileHooks& hooks_;
  const ReconcileInput& in_;
  ReconcileResult& result_;
  std::vector<json> owned_;
  std::vector<json> owned_templates_;
  // PodTemplates of the namespace by name, with those this run created.
  std::map<std::string, json> cached_templates_;
  std::set<std::string> deleted_requests_;
  std::set<std::string> deleted_templates_;
};

absl::Status WorkloadReconcile::DeleteTemplate(const std::string& name) {
  if (!deleted_templates_.insert(name).second) return absl::OkStatus();
  absl::Status deleted =
      kube_.Delete(kube::kPodTemplates, in_.namespace_name, name);
  if (!deleted.ok() && !absl::IsNotFound(deleted)) {
    deleted_templates_.erase(name);
    return deleted;
  }
  if (deleted.ok()) ++result_.templates_deleted;
  cached_templates_.erase(name);
  if (hooks_.on_deleted) {
    hooks_.on_deleted(kube::kPodTemplates, in_.namespace_name, name);
  }
  return absl::OkStatus();
}

absl::Status WorkloadReconcile::DeleteRequest(const json& request) {
  const std::string name = NameOf(request);
  if (!deleted_requests_.insert(name).second) return absl::OkStatus();
  absl::Status deleted = kube_.Delete(kube::kProvisioningRequests,
                                      in_.namespace_name, name, UidOf(request));
  // A precondition failure: the name holds another request by now.
  if (!deleted.ok() && !absl::IsNotFound(deleted) &&
      deleted.code() != absl::StatusCode::kFailedPrecondition &&
      deleted.code() != absl::StatusCode::kAborted) {
    deleted_requests_.erase(name);
    spdlog::warn("deleting the request workload={} request={}: {}", Describe(),
                 name, deleted.ToString());
    return deleted;
  }
  if (deleted.ok()) {
    ++result_.requests_deleted;
    spdlog::info("deleted ProvisioningRequest workload={} request={}",
                 Describe(), name);
  }
  if (hooks_.on_deleted) {
    hooks_.on_deleted(kube::kProvisioningRequests, in_.namespace_name, name);
  }
  // Kubernetes' garbage collector removes the templates it owns; without
  // one (or before the ownership was recorded) they go here.
  std::set<std::string> templates;
  const json* pod_sets = nullptr;
  if (request.contains("spec") && request["spec"].is_object() &&
      request["spec"].contains("podSets")) {
    pod_sets = &request["spec"]["podSets"];
  }
  if (pod_sets != nullptr && pod_sets->is_array()) {
    for (const json& ps : *pod_sets) {
      if (ps.contains("podTemplateRef") && ps["podTemplateRef"].is_object() &&
          ps["podTemplateRef"].contains("name") &&
          ps["podTemplateRef"]["name"].is_string()) {
        templates.insert(ps["podTemplateRef"]["name"].get<std::string>());
      }
    }
  }
  for (const json& t : owned_templates_) {
    if (AnnotationOf(t, kRequestAnnotation) == name) {
      templates.insert(NameOf(t));
    }
  }
  for (const std::string& t : templates) {
    absl::Status status = DeleteTemplate(t);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status WorkloadReconcile::DeleteAllBut(
    const std::set<std::string>& keep_requests) {
  absl::Status first;
  for (const json& r : owned_) {
    if (keep_requests.count(NameOf(r)) > 0) continue;
    absl::Status status = DeleteRequest(r);
    if (!status.ok() && first.ok()) first = status;
  }
  for (const json& t : owned_templates_) {
    if (keep_requests.count(AnnotationOf(t, kRequestAnnotation)) > 0) continue;
    absl::Status status = DeleteTemplate(NameOf(t));
    if (!status.ok() && first.ok()) first = status;
  }
  return first;
}

std::map<std::string, const json*> WorkloadReconcile::NewestRecords(
    const v1::Workload& wl) const {
  std::map<std::string, const json*> records;
  for (const v1::AdmissionCheckState& check : wl.status().admission_checks()) {
    for (const json& r : owned_) {
      if (!IsRetryRecord(r) ||
          !MatchesWorkloadAndCheck(NameOf(r), in_.name, check.name())) {
        continue;
      }
      const json*& newest = records[check.name()];
      if (newest == nullptr ||
          GetAttempt(NameOf(*newest), in_.name, check.name()) <
              GetAttempt(NameOf(r), in_.name, check.name())) {
        newest = &r;
      }
    }
  }
  return records;
}

absl::Status WorkloadReconcile::RecordLostRetries(const v1::Workload& wl) {
  const std::map<std::string, const json*> records = NewestRecords(wl);
  for (const v1::AdmissionCheckState& check : wl.status().admission_checks()) {
    if (check.state() != "Pending" || check.message() != kRetryResetMessage) {
      continue;
    }
    int32_t recorded = 0;
    auto record = records.find(check.name());
    if (record != records.end()) {
      recorded = GetAttempt(NameOf(*record->second), in_.name, check.name());
    }
    json* newest = nullptr;
    for (json& r : owned_) {
      if (!MatchesWorkloadAndCheck(NameOf(r), in_.name, check.name())) {
        continue;
      }
      if (newest == nullptr ||
          GetAttempt(NameOf(*newest), in_.name, check.name()) <
              GetAttempt(NameOf(r), in_.name, check.name())) {
        newest = &r;
      }
    }
    if (newest == nullptr || IsRetryRecord(*newest) ||
        GetAttempt(NameOf(*newest), in_.name, check.name()) <= recorded ||
        !(IsConditionTrue(*newest, kConditionFailed) ||
          IsConditionTrue(*newest, kConditionBookingExpired))) {
      continue;
    }
    absl::StatusOr<json> marked = kube_.Patch(
        kube::kProvisioningRequests, in_.namespace_name, NameOf(*newest),
        kube::PatchType::kMergePatch,
        {{"metadata",
          {{"annotations", {{kRetryReportedAnnotation, "true"}}}}}});
    if (absl::IsNotFound(marked.status())) continue;
    if (!marked.ok()) return marked.status();
    spdlog::info("recorded the retry of workload={} check={} request={}",
                 Describe(), check.name(), NameOf(*newest));
    *newest = *marked;
    if (hooks_.on_stored) {
      hooks_.on_stored(kube::kProvisioningRequests, *marked);
    }
  }
  return absl::OkStatus();
}

absl::Status WorkloadReconcile::HandleError(const v1::Workload& wl,
                                            const std::string& check,
                                            const std::string& message,
                                            absl::Status error) {
  spdlog::warn("FailedCreate workload={} check={}: {}", Describe(), check,
               message);
  const v1::AdmissionCheckState* state =
      proto_util::FindAdmissionCheck(wl, check);
  if (state == nullptr || !hooks_.set_check_state) return error;
  v1::SetAdmissionCheckStateRequest request;
  request.set_namespace_(in_.namespace_name);
  request.set_workload(in_.name);
  request.set_check(check);
  request.set_state(state->state());
  request.set_message(TruncateConditionMessage(message));
  *request.mutable_pod_set_updates() = state->pod_set_updates();
  absl::StatusOr<v1::Workload> written = hooks_.set_check_state(request);
  if (written.ok()) {
    ++result_.check_updates;
  } else {
    spdlog::warn("recording the error on the check workload={} check={}: {}",
                 Describe(), check, written.status().ToString());
  }
  return error;
}

absl::StatusOr<json> WorkloadReconcile::CreateForCheck(
    const v1::Workload& wl, const std::string& check,
    const v1::ProvisioningRequestConfig& config, int32_t attempt) {
  const std::string name = ProvisioningRequestName(in_.name, check, attempt);
  spdlog::debug(
      "creating ProvisioningRequest workload={} request={} "
      "attempt={}",
      Describe(), name, attempt);
  absl::StatusOr<std::vector<MergedPodSet>> merged =
      MergePodSets(wl, config.spec());
  if (!merged.ok()) return merged.status();
  std::vector<RequestPodSet> pod_sets;
  for (const MergedPodSet& ps : *merged) {
    const std::string template_name = PodTemplateName(name, ps.name);
    if (cached_templates_.count(template_name) == 0) {
      const v1::PodSetPlacement* placement = nullptr;
      if (in_.placements != nullptr) {
        for (const v1::PodSetPlacement& p : *in_.placements) {
          if (p.pod_set() == ps.name) placement = &p;
        }
      }
      absl::StatusOr<json> pt =
          BuildPodTemplate(wl, template_name, name, ps, placement);
      absl::StatusOr<json> created =
          pt.ok() ? kube_.Create(kube::kPodTemplates, in_.namespace_name, *pt)
                  : pt;
      if (created.ok()) {
        ++result_.templates_created;
        cached_templates_[template_name] = *created;
        if (hooks_.on_stored) hooks_.on_stored(kube::kPodTemplates, *created);
      } else if (absl::IsAlreadyExists(created.status())) {
        // Created by an earlier reconcile the cache has not seen yet.
        cached_templates_[template_name] = *pt;
      } else {
        return HandleError(
            wl, check,
            absl::StrCat("Error creating PodTemplate \"", template_name,
                         "\": ", created.status().message()),
            created.status());
      }
    }
    pod_sets.push_back(RequestPodSet{template_name, ps.count});
  }
  json request = BuildProvisioningRequest(wl, name, config, pod_sets);
  absl::StatusOr<json> created =
      kube_.Create(kube::kProvisioningRequests, in_.namespace_name, request);
  if (absl::IsAlreadyExists(created.status())) {
    // Ours from an earlier reconcile the cache has not seen yet is adopted;
    // one of another owner holds the name, which Kueue reports on the check.
    absl::StatusOr<json> existing =
        kube_.Get(kube::kProvisioningRequests, in_.namespace_name, name);
    if (existing.ok()) {
      std::optional<WorkloadRef> owner = OwnerOf(*existing);
      if (owner.has_value() && owner->name == in_.name &&
          owner->uid == wl.metadata().uid()) {
        if (hooks_.on_stored) {
          hooks_.on_stored(kube::kProvisioningRequests, *existing);
        }
        return *existing;
      }
    } else {
      // Not readable yet: retried without a message, as Kueue's
      // isMissingInCache.
      return created.status();
    }
  }
  if (!created.ok()) {
    return HandleError(wl, check,
                       absl::StrCat("Error creating ProvisioningRequest \"",
                                    name, "\": ", created.status().message()),
                       created.status());
  }
  ++result_.requests_created;
  spdlog::info(
      "ProvisioningRequestCreated workload={} check={} request={} "
      "attempt={}: Created ProvisioningRequest: \"{}\"",
      Describe(), check, name, attempt, name);
  if (hooks_.on_stored) hooks_.on_stored(kube::kProvisioningRequests, *created);
  return *created;
}

absl::Status WorkloadReconcile::SyncTemplatesOwnership(const json& request) {
  const std::string uid = UidOf(request);
  if (uid.empty() || !request.contains("spec") ||
      !request["spec"].is_object() || !request["spec"].contains("podSets") ||
      !request["spec"]["podSets"].is_array()) {
    return absl::OkStatus();
  }
  const json owner = {{"apiVersion", "autoscaling.x-k8s.io/v1"},
                      {"kind", "ProvisioningRequest"},
                      {"name", NameOf(request)},
                      {"uid", uid},
                      {"controller", true},
                      {"blockOwnerDeletion", true}};
  for (const json& ps : request["spec"]["podSets"]) {
    if (!ps.contains("podTemplateRef") || !ps["podTemplateRef"].is_object()) {
      continue;
    }
    const std::string name = ps["podTemplateRef"].value("name", "");
    auto it = cached_templates_.find(name);
    if (name.empty() || it == cached_templates_.end()) continue;
    const json& meta = it->second.value("metadata", json::object());
    const json refs = meta.value("ownerReferences", json::array());
    bool controlled = false;
    for (const json& ref : refs) {
      if (ref.is_object() && ref.value("uid", "") == uid &&
          ref.value("controller", false)) {
        controlled = true;
      }
    }
    if (controlled) continue;
    absl::StatusOr<json> patched = kube_.Patch(
        kube::kPodTemplates, in_.namespace_name, name,
        kube::PatchType::kMergePatch,
        {{"metadata", {{"ownerReferences", json::array({owner})}}}});
    if (absl::IsNotFound(patched.status())) continue;
    if (!patched.ok()) return patched.status();
    it->second = *patched;
    if (hooks_.on_stored) hooks_.on_stored(kube::kPodTemplates, *patched);
  }
  return absl::OkStatus();
}

absl::Status WorkloadReconcile::Run() {
  const v1::Workload* wl = in_.workload;
  // 1. Gone or finished: nothing of it stays.
  if (wl == nullptr || IsFinished(*wl)) {
    return DeleteAllBut({});
  }
  // Objects of an earlier workload of the same name.
  {
    std::vector<json> current;
    absl::Status first;
    for (const json& r : owned_) {
      std::optional<WorkloadRef> owner = OwnerOf(r);
      if (!owner->uid.empty() && owner->uid != wl->metadata().uid()) {
        absl::Status status = DeleteRequest(r);
        if (!status.ok() && first.ok()) first = status;
      } else {
        current.push_back(r);
      }
    }
    owned_ = std::move(current);
    std::vector<json> templates;
    for (const json& t : owned_templates_) {
      std::optional<WorkloadRef> owner = OwnerOf(t);
      if (!owner->uid.empty() && owner->uid != wl->metadata().uid()) {
        absl::Status status = DeleteTemplate(NameOf(t));
        if (!status.ok() && first.ok()) first = status;
      } else {
        templates.push_back(t);
      }
    }
    owned_templates_ = std::move(templates);
    if (!first.ok()) return first;
  }
  if (IsEvicted(*wl) || !HasQuotaReservation(*wl)) {
    absl::Status recorded = RecordLostRetries(*wl);
    if (!recorded.ok()) return recorded;
    std::set<std::string> keep;
    for (const auto& [check, record] : NewestRecords(*wl)) {
      keep.insert(NameOf(*record));
    }
    return DeleteAllBut(keep);
  }

  // 2. The workload's provisioning checks and their configs.
  std::vector<std::string> relevant;
  std::map<std::string, const v1::ProvisioningRequestConfig*> configs;
  for (const v1::AdmissionCheckState& state : wl->status().admission_checks()) {
    auto ac = in_.admission_checks->find(state.name());
    if (ac == in_.admission_checks->end() ||
        ac->second.spec().controller_name() != kControllerName) {
      continue;
    }
    absl::StatusOr<std::string> config_name = ConfigNameOf(ac->second);
    if (!config_name.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("AdmissionCheck \"", state.name(),
                       "\": ", config_name.status().message()));
    }
    auto config = in_.configs->find(*config_name);
    relevant.push_back(state.name());
    configs[state.name()] =
        config == in_.configs->end() ? nullptr : &config->second;
  }
  const std::map<std::string, const json*> records = NewestRecords(*wl);
  auto retry_count = [&](const std::string& check) -> int32_t {
    auto it = records.find(check);
    return it == records.end()
               ? 0
               : GetAttempt(NameOf(*it->second), in_.name, check);
  };
  std::map<std::string, bool> needed;
  for (const std::string& check : relevant) {
    if (configs[check] == nullptr) continue;
    absl::StatusOr<bool> need = ReqIsNeeded(*wl, *configs[check]);
    if (!need.ok()) return need.status();
    needed[check] = *need;
  }
  // Kueue's activeOrLastPRForChecks.
  std::map<std::string, const json*> active;
  for (const std::string& check : relevant) {
    if (configs[check] == nullptr || !needed[check]) continue;
    const json* last =
        ActiveOrLastRequest(owned_, in_.name, check, *configs[check]);
    if (last != nullptr) active[check] = last;
  }

  // 3. syncCheckStates.
  v1::Workload current = *wl;
  for (const std::string& check : relevant) {
    const v1::AdmissionCheckState* state =
        proto_util::FindAdmissionCheck(current, check);
    if (state == nullptr) continue;
    auto pr = active.find(check);
    const json* request = pr == active.end() ? nullptr : pr->second;
    CheckUpdate update =
        SyncCheckState(current, *state, configs[check], needed[check], request,
                       retry_count(check));
    if (!update.updated) continue;
    v1::SetAdmissionCheckStateRequest write;
    write.set_namespace_(in_.namespace_name);
    write.set_workload(in_.name);
    write.set_check(check);
    write.set_state(update.state.state());
    write.set_message(update.state.message());
    *write.mutable_pod_set_updates() = update.state.pod_set_updates();
    if (update.requeue_after_seconds.has_value()) {
      write.set_requeue_after_seconds(*update.requeue_after_seconds);
    }
    if (configs[check] == nullptr) {
      spdlog::warn(
          "AdmissionCheck {} of workload {} has no ProvisioningRequestConfig: "
          "the check is not active",
          check, Describe());
    }
    const std::string from = state->state();
    absl::StatusOr<v1::Workload> written = hooks_.set_check_state(write);
    if (!written.ok()) return written.status();
    ++result_.check_updates;
    std::string event =
        absl::StrCat("Admission check ", check, " updated state from ", from,
                     " to ", update.state.state());
    if (!update.state.message().empty()) {
      absl::StrAppend(&event, " with message: ", update.state.message());
    }
    // Kueue records the event for state changes only.
    if (from != update.state.state()) {
      spdlog::info("AdmissionCheckUpdated workload={}: {}", Describe(), event);
    } else {
      spdlog::debug("admission check message workload={} check={}: {}",
                    Describe(), check, update.state.message());
    }
    current = *std::move(written);
    if (update.state.state() == "Retry" && request != nullptr) {
      // The retryCount kq's check state cannot hold (provisioning.h).
      absl::StatusOr<json> marked = kube_.Patch(
          kube::kProvisioningRequests, in_.namespace_name, NameOf(*request),
          kube::PatchType::kMergePatch,
          {{"metadata",
            {{"annotations", {{kRetryReportedAnnotation, "true"}}}}}});
      if (!marked.ok()) return marked.status();
      if (hooks_.on_stored) {
        hooks_.on_stored(kube::kProvisioningRequests, *marked);
      }
    }
  }
  if (IsFinished(current) || IsEvicted(current) ||
      !HasQuotaReservation(current)) {
    return absl::OkStatus();
  }

  // 4. deleteUnusedProvisioningRequests.
  std::set<std::string> keep;
  for (const auto& [check, request] : active) keep.insert(NameOf(*request));
  for (const auto& [check, record] : records) keep.insert(NameOf(*record));
  for (const json& r : owned_) {
    if (keep.count(NameOf(r)) > 0) continue;
    absl::Status status = DeleteRequest(r);
    if (!status.ok()) return status;
  }

  // 5. syncOwnedProvisionRequest.
  for (const std::string& check : relevant) {
    const v1::ProvisioningRequestConfig* config = configs[check];
    if (config == nullptr || !needed[check]) continue;
    const v1::AdmissionCheckState* state =
        proto_util::FindAdmissionCheck(current, check);
    if (state != nullptr && state->state() == "Ready") {
      spdlog::debug(
          "skip syncing of the ProvReq for admission check which is Ready "
          "workload={} check={}",
          Describe(), check);
      continue;
    }
    auto it = active.find(check);
    const json* request = it == active.end() ? nullptr : it->second;
    int32_t attempt = 1;
    // After the cleanup deleted the earlier requests, the retry count names
    // the next attempt.
    if (state != nullptr) attempt = retry_count(check) + 1;
    bool create = false;
    if (request != nullptr) {
      if ((IsConditionTrue(*request, kConditionFailed) ||
           (IsConditionTrue(*request, kConditionBookingExpired) &&
            !IsAdmitted(current))) &&
          state != nullptr && state->state() == "Pending") {
        attempt = GetAttempt(NameOf(*request), in_.name, check) + 1;
        create = true;
      }
    } else {
      create = true;
    }
    json created;
    if (create) {
      absl::StatusOr<json> made =
          CreateForCheck(current, check, *config, attempt);
      if (!made.ok()) return made.status();
      created = *std::move(made);
      request = &created;
    }
    absl::Status owned = SyncTemplatesOwnership(*request);
    if (!owned.ok()) return owned;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReconcileWorkload(kube::Client& kube, const ReconcileHooks& hooks,
                               const ReconcileInput& input,
                               ReconcileResult* result) {
  ReconcileResult local;
  WorkloadReconcile run(kube, hooks, input, result ? *result : local);
  return run.Run();
}

}  // namespace kq::shim::provisioning
