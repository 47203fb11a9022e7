#pragma once

// Engine views -> kq.v1 protos. Objects themselves convert through
// server/codec; this adds what only the API returns: computed status and
// placements.

#include "kq/v1/admin_service.pb.h"
#include "kq/v1/queue_service.pb.h"

#include "server/engine/engine.h"

namespace kq::api {

v1::ConfigObject ToProto(const engine::ObjectView& view);
// A workload's pod templates in `form`.
v1::WatchEvent::Type WatchTypeOf(store::Event::Type type);
v1::WatchEvent ToProto(const store::Event& event,
                       v1::TemplateForm form = v1::TEMPLATE_FORM_STRUCT);
void FillPlacements(
    const engine::WorkloadView& view,
    google::protobuf::RepeatedPtrField<v1::PodSetPlacement>* placements);

}  // namespace kq::api
