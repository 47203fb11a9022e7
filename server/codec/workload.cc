// The workload: spec, status, pod sets with their templates, admission.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

#include "base/status_macros.h"
#include "server/codec/codec.h"
#include "server/codec/internal.h"
#include "server/core/spec_shape.h"

namespace kq::codec {
namespace {

PodSetUpdate PodSetUpdateFromProto(const v1::PodSetUpdate& proto) {
  PodSetUpdate update;
  update.name = proto.name();
  update.labels = MapFromProto(proto.labels());
  update.annotations = MapFromProto(proto.annotations());
  update.node_selector = MapFromProto(proto.node_selector());
  for (const auto& t : proto.tolerations()) {
    update.tolerations.push_back(TolerationFromProto(t));
  }
  return update;
}

void PodSetUpdateToProto(const PodSetUpdate& update, v1::PodSetUpdate* proto) {
  proto->set_name(update.name);
  MapToProto(update.labels, proto->mutable_labels());
  MapToProto(update.annotations, proto->mutable_annotations());
  MapToProto(update.node_selector, proto->mutable_node_selector());
  for (const Toleration& t : update.tolerations) {
    TolerationToProto(t, proto->add_tolerations());
  }
}

// `from_client`: the pod set came from a client, whose template fields are
// checked here (the store's were when they came in): the store's own mark,
// both forms at once, or text TemplateTextChecker refuses.
absl::StatusOr<PodSet> PodSetFromProto(int index, const v1::PodSet& proto,
                                       bool from_client) {
  const std::string path = absl::StrCat("spec.podSets[", index, "]");
  PodSet ps;
  ps.name = proto.name();
  ps.count = proto.count();
  if (proto.has_min_count()) ps.min_count = proto.min_count();
  KQ_ASSIGN_OR_RETURN(
      ps.requests,
      ResourceListFromProto(absl::StrCat(path, ".requests"), proto.requests()));
  ps.node_selector = MapFromProto(proto.node_selector());
  for (const auto& t : proto.tolerations()) {
    ps.tolerations.push_back(TolerationFromProto(t));
  }
  for (const auto& term : proto.required_node_affinity()) {
    NodeSelectorTerm t;
    for (const auto& r : term.match_expressions()) {
      t.match_expressions.push_back(RequirementFromProto(r));
    }
    ps.required_node_affinity.push_back(std::move(t));
  }
  if (from_client) {
    if (proto.template_on_disk()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path,
          ".templateOnDisk: set only by kqd's store; send the pod template "
          "in ",
          path, ".template or .templateJson"));
    }
    if (proto.has_template_() && !proto.template_json().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": set template or templateJson, not both"));
    }
    if (!proto.template_json().empty()) {
      KQ_RETURN_IF_ERROR(CheckTemplateText(absl::StrCat(path, ".templateJson"),
                                           proto.template_json()));
    }
  }
  ps.template_on_disk = proto.template_on_disk();
  uint64_t struct_spec_shape = 0;
  if (!proto.template_json().empty()) {
    ps.template_json = proto.template_json();
  } else if (proto.has_template_()) {
    KQ_ASSIGN_OR_RETURN(ps.template_json,
                        CanonicalJson(absl::StrCat(path, ".template"),
                                      proto.template_(), &struct_spec_shape));
  }
  // kqd makes the digest from a client's template (a client's own is never
  // taken); the stored form carries it.
  if (!from_client) {
    ps.spec_shape = proto.spec_shape();
  } else if (!proto.template_json().empty()) {
    ps.spec_shape = SpecShapeDigest(ps.template_json.str());
  } else if (proto.has_template_()) {
    ps.spec_shape = struct_spec_shape;
  }
  return ps;
}

// Where a pod set's template goes in its proto.
enum class TemplateOut {
  kStruct,  // PodSet.template (an answer, TEMPLATE_FORM_STRUCT)
  kJson,    // PodSet.template_json (an answer, TEMPLATE_FORM_JSON)
  kNone,    // left out (an answer, TEMPLATE_FORM_NONE)
  kStored,  // template_json, or the template_on_disk mark (the store)
};

void PodSetToProto(const PodSet& ps, TemplateOut out, v1::PodSet* proto) {
  proto->set_name(ps.name);
  proto->set_count(ps.count);
  if (ps.min_count.has_value()) proto->set_min_count(*ps.min_count);
  ResourceListToProto(ps.requests, proto->mutable_requests());
  MapToProto(ps.node_selector, proto->mutable_node_selector());
  for (const Toleration& t : ps.tolerations) {
    TolerationToProto(t, proto->add_tolerations());
  }
  for (const NodeSelectorTerm& term : ps.required_node_affinity) {
    v1::NodeSelectorTerm* term_proto = proto->add_required_node_affinity();
    for (const LabelSelectorRequirement& r : term.match_expressions) {
      RequirementToProto(r, term_proto->add_match_expressions());
    }
  }
  if (out == TemplateOut::kStored) {
    // A template kept on disk is never written into its workload's row,
    // even while the engine has its text attached.
    if (ps.template_on_disk) {
      proto->set_template_on_disk(true);
    } else {
      proto->set_template_json(ps.template_json.str());
    }
    proto->set_spec_shape(ps.spec_shape);
  } else if (out == TemplateOut::kJson) {
    proto->set_template_json(ps.template_json.str());
  } else if (out == TemplateOut::kNone) {
    // Nothing of the template.
  } else if (!ps.template_json.empty()) {
    // template_json was written from a Struct or checked when a client sent
    // it (or comes from tests), so it parses; if it does not, the template
    // is left out rather than sent half-written.
    if (!StructFromJson(ps.template_json.str(), proto->mutable_template_())) {
      proto->clear_template_();
    }
  }
}

absl::StatusOr<Admission> AdmissionFromProto(const v1::Admission& proto) {
  Admission admission;
  admission.cluster_queue = proto.cluster_queue();
  for (int i = 0; i < proto.pod_set_assignments_size(); ++i) {
    const v1::PodSetAssignment& psa_proto = proto.pod_set_assignments(i);
    PodSetAssignment psa;
    psa.name = psa_proto.name();
    psa.flavors =
        MapFromProto<std::map<std::string, std::string>>(psa_proto.flavors());
    KQ_ASSIGN_OR_RETURN(psa.resource_usage,
                        ResourceListFromProto(
                            absl::StrCat("status.admission.podSetAssignments[",
                                         i, "].resourceUsage"),
                            psa_proto.resource_usage()));
    psa.count = psa_proto.count();
    admission.pod_set_assignments.push_back(std::move(psa));
  }
  return admission;
}

void AdmissionToProto(const Admission& admission, v1::Admission* proto) {
  proto->set_cluster_queue(admission.cluster_queue);
  for (const PodSetAssignment& psa : admission.pod_set_assignments) {
    v1::PodSetAssignment* psa_proto = proto->add_pod_set_assignments();
    psa_proto->set_name(psa.name);
    MapToProto(psa.flavors, psa_proto->mutable_flavors());
    ResourceListToProto(psa.resource_usage,
                        psa_proto->mutable_resource_usage());
    psa_proto->set_count(psa.count);
  }
}

absl::StatusOr<Workload> WorkloadFromProto(const v1::Workload& proto,
                                           bool from_client) {
  const v1::WorkloadSpec& spec = proto.spec();
  const v1::WorkloadStatus& status = proto.status();
  Workload wl;
  wl.meta = MetaFromProto(proto.metadata());
  wl.queue_name = spec.queue_name();
  for (int i = 0; i < spec.pod_sets_size(); ++i) {
    KQ_ASSIGN_OR_RETURN(PodSet ps,
                        PodSetFromProto(i, spec.pod_sets(i), from_client));
    wl.pod_sets.push_back(std::move(ps));
  }
  wl.priority_class_name = spec.priority_class_name();
  // Rows stored before kq checked the value load with it dropped (no
  // source), not failing the start-up.
  if (!ParsePriorityClassSource(spec.priority_class_source(),
                                &wl.priority_class_source) &&
      from_client) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.priorityClassSource: Unsupported value: \"",
        spec.priority_class_source(), "\": supported values: \"",
        PriorityClassSourceName(PriorityClassSource::kWorkloadPriorityClass),
        "\", \"",
        PriorityClassSourceName(PriorityClassSource::kPodPriorityClass),
        "\", \"\""));
  }
  wl.priority = spec.priority();
  wl.active = spec.has_active() ? spec.active() : true;
  if (spec.has_maximum_execution_time_seconds()) {
    wl.maximum_execution_time_seconds = spec.maximum_execution_time_seconds();
  }
  if (status.has_admission()) {
    KQ_ASSIGN_OR_RETURN(wl.admission, AdmissionFromProto(status.admission()));
  }
  for (const auto& c : status.conditions()) {
    wl.conditions.push_back(ConditionFromProto(c));
  }
  for (const auto& check_proto : status.admission_checks()) {
    AdmissionCheckState check;
    check.name = check_proto.name();
    check.state = OrDefault(check_proto.state(), "Pending");
    if (check_proto.has_last_transition_time()) {
      check.last_transition_time =
          FromProto(check_proto.last_transition_time());
    }
    check.message = check_proto.message();
    for (const auto& update : check_proto.pod_set_updates()) {
      check.pod_set_updates.push_back(PodSetUpdateFromProto(update));
    }
    wl.admission_checks.push_back(std::move(check));
  }
  if (status.requeue_state().has_count()) {
    SetRequeueCount(wl, status.requeue_state().count());
  }
  if (status.requeue_state().has_requeue_at()) {
    SetRequeueAt(wl, FromProto(status.requeue_state().requeue_at()));
  }
  if (status.has_runner()) {
    wl.runner = Runner{status.runner().id(),
                       FromProto(status.runner().lease_expire_time())};
  }
  if (status.has_stop_deadline()) {
    wl.stop_deadline = FromProto(status.stop_deadline());
  }
  if (status.nominated_cluster_names_size() > 0 || status.has_cluster_name() ||
      status.has_multikueue()) {
    MultiKueueStatus mk;
    mk.nominated_cluster_names.assign(status.nominated_cluster_names().begin(),
                                      status.nominated_cluster_names().end());
    mk.cluster_name = status.cluster_name();
    mk.epoch = status.multikueue().epoch();
    if (status.multikueue().has_round_start()) {
      mk.round_start = FromProto(status.multikueue().round_start());
    }
    if (status.multikueue().has_worker_admission()) {
      KQ_ASSIGN_OR_RETURN(
          Admission admission,
          AdmissionFromProto(status.multikueue().worker_admission()));
      mk.worker_admission = std::move(admission);
    }
    wl.multikueue = std::move(mk);
  }
  if (status.has_remote()) {
    wl.remote =
        RemoteCopyStatus{status.remote().origin(), status.remote().origin_uid(),
                         status.remote().epoch(), status.remote().bound(),
                         status.remote().fenced()};
  }
  for (int i = 0; i < status.reclaimable_pods_size(); ++i) {
    const v1::ReclaimablePod& rp = status.reclaimable_pods(i);
    // A list keyed by name in Kueue (listType=map): a second entry for a
    // pod set would silently replace the first in kq's map.
    if (!wl.reclaimable_pods.emplace(rp.name(), rp.count()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("status.reclaimablePods[", i,
                       "].name: duplicate value \"", rp.name(), "\""));
    }
  }
  return wl;
}

v1::Workload WorkloadToProto(const Workload& workload, TemplateOut out) {
  v1::Workload proto;
  MetaToProto(workload.meta, proto.mutable_metadata());
  v1::WorkloadSpec* spec = proto.mutable_spec();
  spec->set_queue_name(workload.queue_name);
  for (const PodSet& ps : workload.pod_sets) {
    PodSetToProto(ps, out, spec->add_pod_sets());
  }
  spec->set_priority_class_name(workload.priority_class_name.str());
  spec->set_priority_class_source(
      PriorityClassSourceName(workload.priority_class_source));
  spec->set_priority(workload.priority);
  spec->set_active(workload.active);
  if (workload.maximum_execution_time_seconds.has_value()) {
    spec->set_maximum_execution_time_seconds(
        *workload.maximum_execution_time_seconds);
  }
  v1::WorkloadStatus* status = proto.mutable_status();
  if (workload.admission.has_value()) {
    AdmissionToProto(*workload.admission, status->mutable_admission());
  }
  for (const Condition& c : workload.conditions) {
    ConditionToProto(c, status->add_conditions());
  }
  for (const AdmissionCheckState& check : workload.admission_checks) {
    v1::AdmissionCheckState* check_proto = status->add_admission_checks();
    check_proto->set_name(check.name);
    check_proto->set_state(check.state);
    if (check.last_transition_time != absl::UnixEpoch()) {
      *check_proto->mutable_last_transition_time() =
          ToProto(check.last_transition_time);
    }
    check_proto->set_message(check.message);
    for (const PodSetUpdate& update : check.pod_set_updates) {
      PodSetUpdateToProto(update, check_proto->add_pod_set_updates());
    }
  }
  if (std::optional<int32_t> count = RequeueCount(workload)) {
    status->mutable_requeue_state()->set_count(*count);
  }
  if (std::optional<absl::Time> at = RequeueAt(workload)) {
    *status->mutable_requeue_state()->mutable_requeue_at() = ToProto(*at);
  }
  if (workload.runner.has_value()) {
    status->mutable_runner()->set_id(workload.runner->id);
    *status->mutable_runner()->mutable_lease_expire_time() =
        ToProto(workload.runner->lease_expire_time);
  }
  if (workload.stop_deadline.has_value()) {
    *status->mutable_stop_deadline() = ToProto(*workload.stop_deadline);
  }
  if (workload.multikueue.has_value()) {
    const MultiKueueStatus& mk = *workload.multikueue;
    for (const std::string& name : mk.nominated_cluster_names) {
      status->add_nominated_cluster_names(name);
    }
    if (!mk.cluster_name.empty()) status->set_cluster_name(mk.cluster_name);
    status->mutable_multikueue()->set_epoch(mk.epoch);
    if (mk.round_start.has_value()) {
      *status->mutable_multikueue()->mutable_round_start() =
          ToProto(*mk.round_start);
    }
    if (mk.worker_admission.has_value()) {
      AdmissionToProto(
          *mk.worker_admission,
          status->mutable_multikueue()->mutable_worker_admission());
    }
  }
  if (workload.remote.has_value()) {
    v1::RemoteCopy* remote = status->mutable_remote();
    remote->set_origin(workload.remote->origin);
    remote->set_origin_uid(workload.remote->origin_uid);
    remote->set_epoch(workload.remote->epoch);
    remote->set_bound(workload.remote->bound);
    remote->set_fenced(workload.remote->fenced);
  }
  for (const auto& [name, count] : workload.reclaimable_pods) {
    v1::ReclaimablePod* rp = status->add_reclaimable_pods();
    rp->set_name(name);
    rp->set_count(count);
  }
  return proto;
}

}  // namespace

absl::StatusOr<Workload> FromClientProto(const v1::Workload& proto) {
  return WorkloadFromProto(proto, /*from_client=*/true);
}

absl::StatusOr<Workload> FromProto(const v1::Workload& proto) {
  return WorkloadFromProto(proto, /*from_client=*/false);
}

v1::Workload ToProto(const Workload& workload, v1::TemplateForm form) {
  switch (form) {
    case v1::TEMPLATE_FORM_JSON:
      return WorkloadToProto(workload, TemplateOut::kJson);
    case v1::TEMPLATE_FORM_NONE:
      return WorkloadToProto(workload, TemplateOut::kNone);
    default:
      return WorkloadToProto(workload, TemplateOut::kStruct);
  }
}

v1::Workload ToStoredProto(const Workload& workload) {
  return WorkloadToProto(workload, TemplateOut::kStored);
}

PodSetUpdate FromProto(const v1::PodSetUpdate& proto) {
  return PodSetUpdateFromProto(proto);
}

v1::PodSetUpdate ToProto(const PodSetUpdate& update) {
  v1::PodSetUpdate proto;
  PodSetUpdateToProto(update, &proto);
  return proto;
}

}  // namespace kq::codec
