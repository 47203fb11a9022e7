#include "server/api/proto_convert.h"

#include "server/codec/codec.h"

namespace kq::api {
namespace {

template <typename Status>
void FillQueueStatus(const engine::QueueStatus& from, Status* to) {
  for (const Condition& c : from.conditions) {
    v1::Condition* out = to->add_conditions();
    out->set_type(c.type);
    out->set_status(c.status);
    out->set_reason(c.reason);
    out->set_message(c.message);
    *out->mutable_last_transition_time() =
        codec::ToProto(c.last_transition_time);
  }
  auto fill = [](const std::vector<engine::FlavorUsage>& usage,
                 google::protobuf::RepeatedPtrField<v1::FlavorUsage>* out) {
    for (const engine::FlavorUsage& f : usage) {
      v1::FlavorUsage* fu = out->Add();
      fu->set_name(f.name);
      for (const engine::ResourceUsage& r : f.resources) {
        v1::ResourceUsage* ru = fu->add_resources();
        bool binary = UsesBinaryFormat(r.name);
        ru->set_name(r.name);
        ru->set_total(r.total.ToString(binary));
        ru->set_borrowed(r.borrowed.ToString(binary));
      }
    }
  };
  fill(from.flavors_reservation, to->mutable_flavors_reservation());
  fill(from.flavors_usage, to->mutable_flavors_usage());
  to->set_pending_workloads(from.pending_workloads);
  to->set_reserving_workloads(from.reserving_workloads);
  to->set_admitted_workloads(from.admitted_workloads);
}

void FillFairSharingStatus(const engine::QueueStatus& from,
                           v1::FairSharingStatus* to) {
  to->set_weighted_share(*from.weighted_share);
}

}  // namespace

v1::ConfigObject ToProto(const engine::ObjectView& view) {
  v1::ConfigObject proto = codec::ToProto(view.object);
  if (view.status.has_value()) {
    if (proto.has_cluster_queue()) {
      v1::ClusterQueueStatus* status =
          proto.mutable_cluster_queue()->mutable_status();
      FillQueueStatus(*view.status, status);
      if (view.status->weighted_share.has_value()) {
        FillFairSharingStatus(*view.status, status->mutable_fair_sharing());
      }
    } else if (proto.has_cohort() && view.status->weighted_share.has_value()) {
      FillFairSharingStatus(
          *view.status,
          proto.mutable_cohort()->mutable_status()->mutable_fair_sharing());
    } else if (proto.has_local_queue()) {
      FillQueueStatus(*view.status,
                      proto.mutable_local_queue()->mutable_status());
    }
  }
  google::protobuf::RepeatedPtrField<v1::Condition>* conditions = nullptr;
  if (proto.has_admission_check()) {
    conditions =
        proto.mutable_admission_check()->mutable_status()->mutable_conditions();
  } else if (proto.has_multi_kueue_cluster()) {
    conditions = proto.mutable_multi_kueue_cluster()
                     ->mutable_status()
                     ->mutable_conditions();
  }
  if (conditions != nullptr) {
    for (const Condition& c : view.conditions) {
      v1::Condition* out = conditions->Add();
      out->set_type(c.type);
      out->set_status(c.status);
      out->set_reason(c.reason);
      out->set_message(c.message);
      *out->mutable_last_transition_time() =
          codec::ToProto(c.last_transition_time);
    }
  }
  return proto;
}

v1::WatchEvent::Type WatchTypeOf(store::Event::Type type) {
  switch (type) {
    case store::Event::Type::kAdded:
      return v1::WatchEvent::ADDED;
    case store::Event::Type::kModified:
      return v1::WatchEvent::MODIFIED;
    case store::Event::Type::kDeleted:
      return v1::WatchEvent::DELETED;
  }
  return v1::WatchEvent::TYPE_UNSPECIFIED;
}

v1::WatchEvent ToProto(const store::Event& event, v1::TemplateForm form) {
  v1::WatchEvent out;
  out.set_type(WatchTypeOf(event.type));
  out.set_revision(event.revision);
  if (const auto* wl = std::get_if<Workload>(&event.object)) {
    *out.mutable_workload() = codec::ToProto(*wl, form);
  } else {
    *out.mutable_config_object() =
        codec::ToProto(std::get<ConfigObject>(event.object));
  }
  return out;
}

void FillPlacements(
    const engine::WorkloadView& view,
    google::protobuf::RepeatedPtrField<v1::PodSetPlacement>* placements) {
  for (const engine::PodSetPlacement& p : view.placements) {
    v1::PodSetPlacement* out = placements->Add();
    out->set_pod_set(p.pod_set);
    for (const engine::FlavorPlacement& f : p.flavors) {
      v1::FlavorPlacement* fp = out->add_flavors();
      fp->set_flavor(f.flavor);
      for (const auto& [k, v] : f.node_labels) {
        (*fp->mutable_node_labels())[k] = v;
      }
      for (const Toleration& t : f.tolerations) {
        v1::Toleration* pt = fp->add_tolerations();
        pt->set_key(t.key);
        pt->set_operator_(t.op);
        pt->set_value(t.value);
        pt->set_effect(t.effect);
        if (t.toleration_seconds) {
          pt->set_toleration_seconds(*t.toleration_seconds);
        }
      }
    }
  }
}

}  // namespace kq::api
