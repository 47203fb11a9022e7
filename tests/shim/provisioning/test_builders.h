#pragma once

// Builders for the provisioning tests, parallel to Kueue's
// utiltestingapi.MakeWorkload / MakePodSet / MakeAdmission /
// MakeProvisioningRequestConfig / MakeAdmissionCheck wrappers, producing
// kqd's protos (pod templates as JSON, converted to the pod set's Struct).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/proto_json.h"
#include "shim/provisioning/provisioning.h"

namespace kq::shim::provisioning::testing {

using json = nlohmann::json;

inline constexpr char kTestNamespace[] = "ns";
inline constexpr char kWorkloadUid[] = "wl-uid";

// Kueue's MakePodSet: one container "c" with no requests, restartPolicy
// Never.
class PodSetWrapper {
 public:
  PodSetWrapper(const std::string& name, int count)
      : name_(name), count_(count) {
    template_ = {
        {"spec",
         {{"restartPolicy", "Never"},
          {"containers",
           json::array({{{"name", "c"},
                         {"resources", {{"requests", json::object()}}}}})}}}};
  }
  PodSetWrapper& Request(const std::string& resource, const std::string& q) {
    template_["spec"]["containers"][0]["resources"]["requests"][resource] = q;
    return *this;
  }
  PodSetWrapper& Limit(const std::string& resource, const std::string& q) {
    template_["spec"]["containers"][0]["resources"]["limits"][resource] = q;
    return *this;
  }
  PodSetWrapper& PriorityClass(const std::string& pc) {
    template_["spec"]["priorityClassName"] = pc;
    return *this;
  }
  PodSetWrapper& RequiredDuringSchedulingIgnoredDuringExecution(
      const json& terms) {
    template_["spec"]["affinity"]["nodeAffinity"]
             ["requiredDuringSchedulingIgnoredDuringExecution"]
             ["nodeSelectorTerms"] = terms;
    return *this;
  }
  v1::PodSet Obj() const {
    v1::PodSet ps;
    ps.set_name(name_);
    ps.set_count(count_);
    *ps.mutable_template_() =
        *manifest::internal::JsonToStruct(template_, "template");
    const json& requests = template_["spec"]["containers"][0]["resources"];
    if (requests.contains("requests")) {
      for (const auto& [r, q] : requests["requests"].items()) {
        (*ps.mutable_requests())[r] = q.get<std::string>();
      }
    }
    return ps;
  }

 private:
  std::string name_;
  int count_;
  json template_;
};

inline v1::PodSetAssignment Assignment(
    const std::string& name, const std::map<std::string, std::string>& flavors,
    int count) {
  v1::PodSetAssignment psa;
  psa.set_name(name);
  for (const auto& [r, f] : flavors) (*psa.mutable_flavors())[r] = f;
  psa.set_count(count);
  return psa;
}

inline v1::AdmissionCheckState CheckState(const std::string& name,
                                          const std::string& state,
                                          const std::string& message = "") {
  v1::AdmissionCheckState s;
  s.set_name(name);
  s.set_state(state);
  s.set_message(message);
  return s;
}

// Kueue's MakeWorkload: pod set "main" of one pod.
class WorkloadWrapper {
 public:
  WorkloadWrapper(const std::string& name, const std::string& ns) {
    wl_.mutable_metadata()->set_name(name);
    wl_.mutable_metadata()->set_namespace_(ns);
    wl_.mutable_metadata()->set_uid(kWorkloadUid);
    *wl_.mutable_spec()->add_pod_sets() = PodSetWrapper("main", 1).Obj();
  }
  WorkloadWrapper& PodSets(const std::vector<v1::PodSet>& pod_sets) {
    wl_.mutable_spec()->clear_pod_sets();
    for (const v1::PodSet& ps : pod_sets)
      *wl_.mutable_spec()->add_pod_sets() = ps;
    return *this;
  }
  WorkloadWrapper& UID(const std::string& uid) {
    wl_.mutable_metadata()->set_uid(uid);
    return *this;
  }
  WorkloadWrapper& Annotations(const std::map<std::string, std::string>& a) {
    for (const auto& [k, v] : a)
      (*wl_.mutable_metadata()->mutable_annotations())[k] = v;
    return *this;
  }
  // Kueue's ReserveQuotaAt(MakeAdmission(cq).PodSets(...)).
  WorkloadWrapper& ReserveQuota(const std::string& cq,
                                const std::vector<v1::PodSetAssignment>& psas) {
    v1::Admission* admission = wl_.mutable_status()->mutable_admission();
    admission->set_cluster_queue(cq);
    admission->clear_pod_set_assignments();
    for (const v1::PodSetAssignment& psa : psas) {
      *admission->add_pod_set_assignments() = psa;
    }
    return Condition("QuotaReserved", "True", "QuotaReserved");
  }
  // MakeAdmission(cq) with no pod sets: "main", one pod, no flavors.
  WorkloadWrapper& ReserveQuota(const std::string& cq) {
    return ReserveQuota(cq, {Assignment("main", {}, 1)});
  }
  WorkloadWrapper& Admitted(bool admitted) {
    return Condition("Admitted", admitted ? "True" : "False",
                     admitted ? "Admitted" : "NoReservation");
  }
  WorkloadWrapper& Condition(const std::string& type, const std::string& status,
                             const std::string& reason = "",
                             const std::string& message = "") {
    for (v1::Condition& c : *wl_.mutable_status()->mutable_conditions()) {
      if (c.type() == type) {
        c.set_status(status);
        c.set_reason(reason);
        c.set_message(message);
        return *this;
      }
    }
    v1::Condition* c = wl_.mutable_status()->add_conditions();
    c->set_type(type);
    c->set_status(status);
    c->set_reason(reason);
    c->set_message(message);
    return *this;
  }
  WorkloadWrapper& AdmissionChecks(
      const std::vector<v1::AdmissionCheckState>& checks) {
    wl_.mutable_status()->clear_admission_checks();
    for (const v1::AdmissionCheckState& c : checks) {
      *wl_.mutable_status()->add_admission_checks() = c;
    }
    return *this;
  }
  WorkloadWrapper& PodSetCount(int index, int spec, int admitted) {
    wl_.mutable_spec()->mutable_pod_sets(index)->set_count(spec);
    wl_.mutable_status()
        ->mutable_admission()
        ->mutable_pod_set_assignments(index)
        ->set_count(admitted);
    return *this;
  }
  v1::Workload Obj() const { return wl_; }

 private:
  v1::Workload wl_;
};

inline v1::AdmissionCheck MakeAdmissionCheck(const std::string& name,
                                             const std::string& config) {
  v1::AdmissionCheck ac;
  ac.mutable_metadata()->set_name(name);
  ac.mutable_spec()->set_controller_name(kControllerName);
  ac.mutable_spec()->mutable_parameters()->set_api_group(kConfigApiGroup);
  ac.mutable_spec()->mutable_parameters()->set_kind(kConfigKind);
  ac.mutable_spec()->mutable_parameters()->set_name(config);
  return ac;
}

// Kueue's MakeProvisioningRequestConfig.
class ConfigWrapper {
 public:
  explicit ConfigWrapper(const std::string& name) {
    prc_.mutable_metadata()->set_name(name);
  }
  ConfigWrapper& ProvisioningClass(const std::string& c) {
    prc_.mutable_spec()->set_provisioning_class_name(c);
    return *this;
  }
  ConfigWrapper& WithParameter(const std::string& k, const std::string& v) {
    (*prc_.mutable_spec()->mutable_parameters())[k] = v;
    return *this;
  }
  ConfigWrapper& WithManagedResource(const std::string& r) {
    prc_.mutable_spec()->add_managed_resources(r);
    return *this;
  }
  ConfigWrapper& RetryStrategy(int limit, int base, int max) {
    auto* retry = prc_.mutable_spec()->mutable_retry_strategy();
    retry->set_backoff_limit_count(limit);
    retry->set_backoff_base_seconds(base);
    retry->set_backoff_max_seconds(max);
    return *this;
  }
  ConfigWrapper& RetryLimit(int limit) {
    prc_.mutable_spec()->mutable_retry_strategy()->set_backoff_limit_count(
        limit);
    return *this;
  }
  ConfigWrapper& PodSetUpdateNodeSelector(const std::string& key,
                                          const std::string& detail) {
    auto* s = prc_.mutable_spec()->add_pod_set_updates_node_selector();
    s->set_key(key);
    s->set_value_from_provisioning_class_detail(detail);
    return *this;
  }
  ConfigWrapper& PodSetMergePolicy(const std::string& policy) {
    prc_.mutable_spec()->set_pod_set_merge_policy(policy);
    return *this;
  }
  ConfigWrapper Clone() const { return *this; }
  v1::ProvisioningRequestConfig Obj() const { return prc_; }

 private:
  v1::ProvisioningRequestConfig prc_;
};

inline json OwnerAnnotationsOf(const std::string& workload,
                               const std::string& uid = kWorkloadUid) {
  return {{kWorkloadNamespaceAnnotation, kTestNamespace},
          {kWorkloadNameAnnotation, workload},
          {kWorkloadUidAnnotation, uid}};
}

// A ProvisioningRequest as the shim writes one (owned by workload "wl",
// Kueue's OwnerReferences{Name: "wl"}).
inline json Request(const std::string& name,
                    const std::vector<std::pair<std::string, int>>& pod_sets,
                    const std::string& class_name,
                    const std::map<std::string, std::string>& parameters,
                    const std::string& workload = "wl") {
  json sets = json::array();
  for (const auto& [t, c] : pod_sets) {
    sets.push_back({{"podTemplateRef", {{"name", t}}}, {"count", c}});
  }
  json spec = {{"podSets", sets}};
  if (!class_name.empty()) spec["provisioningClassName"] = class_name;
  if (!parameters.empty()) spec["parameters"] = parameters;
  return {{"apiVersion", "autoscaling.x-k8s.io/v1"},
          {"kind", "ProvisioningRequest"},
          {"metadata",
           {{"name", name},
            {"namespace", kTestNamespace},
            {"labels", {{kManagedLabel, kManagedLabelValue}}},
            {"annotations", OwnerAnnotationsOf(workload)}}},
          {"spec", spec}};
}

// Kueue's requestWithConditions.
inline json WithConditions(json request, const std::vector<json>& conditions) {
  for (const json& c : conditions) {
    request["status"]["conditions"].push_back(c);
  }
  return request;
}

// Kueue's requestWithCondition: message "By test".
inline json WithCondition(json request, const std::string& type,
                          const std::string& status) {
  return WithConditions(
      std::move(request),
      {{{"type", type}, {"status", status}, {"message", "By test"}}});
}

inline json Cond(const std::string& type, const std::string& status,
                 const std::string& message = "") {
  json c = {{"type", type}, {"status", status}};
  if (!message.empty()) c["message"] = message;
  return c;
}

}  // namespace kq::shim::provisioning::testing
