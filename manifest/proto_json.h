#pragma once

// Conversions between nlohmann::json and protobuf's well-known types, used
// for pod templates (google.protobuf.Struct) and times.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

namespace kq::manifest::internal {

// JSON object -> Struct. Numbers become doubles (Struct's only number
// type). Returns InvalidArgument naming `path` when `object` is not an
// object.
absl::StatusOr<google::protobuf::Struct> JsonToStruct(
    const nlohmann::json& object, const std::string& path);

// Struct -> JSON object. Whole numbers that a double holds exactly print
// as integers, so `parallelism: 4` does not come back as 4.0.
nlohmann::json StructToJson(const google::protobuf::Struct& object);

// A pod set's template as a JSON object, from whichever form it carries:
// its JSON text (template_json), else its Struct. nullopt when it carries
// neither, or text that is not a JSON object.
std::optional<nlohmann::json> PodSetTemplateJson(const v1::PodSet& pod_set);

// RFC 3339 in UTC: "2026-01-02T03:04:05Z", with fractional seconds only
// when the timestamp has them.
std::string FormatTimestamp(const google::protobuf::Timestamp& timestamp);

}  // namespace kq::manifest::internal
