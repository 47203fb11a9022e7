#pragma once

// Engine views -> kq.v1 protos. Objects themselves convert through
// server/codec; this adds what only the API returns: computed status and
// placements.

#include "kq/v1/admin_service.pb.h"
#include "kq/v1/queue_service.pb.h"

#include "server/engine/engine.h"

namespace kq::api {

v1::ConfigObject ToProto(const engine::ObjectView& view);
v1::WatchEvent ToProto(const store::Event& event);
void FillPlacements(
    const engine::WorkloadView& view,
    google::protobuf::RepeatedPtrField<v1::PodSetPlacement>* placements);

}  // namespace kq::api
