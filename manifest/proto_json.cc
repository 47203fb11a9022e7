#include "manifest/proto_json.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/reader.h"

namespace kq::manifest::internal {
namespace {

using nlohmann::json;

// Inputs come from LoadDocuments, which bounds nesting, so recursion here
// is bounded too.
google::protobuf::Value ToValue(const json& value) {
  google::protobuf::Value out;
  switch (value.type()) {
    case json::value_t::object: {
      google::protobuf::Struct* fields = out.mutable_struct_value();
      for (const auto& [key, child] : value.items()) {
        (*fields->mutable_fields())[key] = ToValue(child);
      }
      break;
    }
    case json::value_t::array: {
      google::protobuf::ListValue* list = out.mutable_list_value();
      for (const json& child : value) *list->add_values() = ToValue(child);
      break;
    }
    case json::value_t::string:
      out.set_string_value(value.get<std::string>());
      break;
    case json::value_t::boolean:
      out.set_bool_value(value.get<bool>());
      break;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      out.set_number_value(value.get<double>());
      break;
    default:
      out.set_null_value(google::protobuf::NULL_VALUE);
  }
  return out;
}

json FromValue(const google::protobuf::Value& value) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kStructValue:
      return StructToJson(value.struct_value());
    case google::protobuf::Value::kListValue: {
      json list = json::array();
      for (const google::protobuf::Value& child : value.list_value().values()) {
        list.push_back(FromValue(child));
      }
      return list;
    }
    case google::protobuf::Value::kStringValue:
      return json(value.string_value());
    case google::protobuf::Value::kBoolValue:
      return json(value.bool_value());
    case google::protobuf::Value::kNumberValue: {
      const double number = value.number_value();
      // 2^53: beyond it a double no longer holds every integer exactly.
      constexpr double kExactLimit = 9007199254740992.0;
      if (std::isfinite(number) && std::floor(number) == number &&
          std::fabs(number) <= kExactLimit) {
        return json(static_cast<int64_t>(number));
      }
      return json(number);
    }
    default:
      return json(nullptr);
  }
}

}  // namespace

absl::StatusOr<google::protobuf::Struct> JsonToStruct(const json& object,
                                                      const std::string& path) {
  if (!object.is_object()) {
    return FieldError(path, "must be an object, got " + JsonTypeName(object));
  }
  return std::move(*ToValue(object).mutable_struct_value());
}

json StructToJson(const google::protobuf::Struct& object) {
  json out = json::object();
  for (const auto& [key, value] : object.fields()) out[key] = FromValue(value);
  return out;
}

std::optional<json> PodSetTemplateJson(const v1::PodSet& pod_set) {
  if (!pod_set.template_json().empty()) {
    json parsed = json::parse(pod_set.template_json(), nullptr,
                              /*allow_exceptions=*/false);
    if (parsed.is_object()) return parsed;
    return std::nullopt;
  }
  if (pod_set.has_template_() && !pod_set.template_().fields().empty()) {
    return StructToJson(pod_set.template_());
  }
  return std::nullopt;
}

std::string FormatTimestamp(const google::protobuf::Timestamp& timestamp) {
  const absl::Time time = absl::FromUnixSeconds(timestamp.seconds()) +
                          absl::Nanoseconds(timestamp.nanos());
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", time, absl::UTCTimeZone());
}

}  // namespace kq::manifest::internal
