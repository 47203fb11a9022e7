#include "manifest/reader.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"

namespace kq::manifest::internal {

using nlohmann::json;

std::string JsonTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    case json::value_t::null:
      return "null";
    default:
      return "an unsupported value";
  }
}

std::string FieldPath(absl::string_view parent, absl::string_view key) {
  if (parent.empty()) return std::string(key);
  return absl::StrCat(parent, ".", key);
}

std::string IndexPath(absl::string_view parent, size_t index) {
  return absl::StrCat(parent, "[", index, "]");
}

std::string KeyPath(absl::string_view parent, absl::string_view key) {
  return absl::StrCat(parent, "[", key, "]");
}

absl::Status FieldError(absl::string_view path, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", reason));
}

absl::StatusOr<std::string> AsString(const json& value,
                                     absl::string_view path) {
  if (!value.is_string()) {
    return FieldError(path, "must be a string, got " + JsonTypeName(value));
  }
  return value.get<std::string>();
}

absl::StatusOr<std::string> AsQuantity(const json& value,
                                       absl::string_view path) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) {
    return value.is_number_unsigned() ? absl::StrCat(value.get<uint64_t>())
                                      : absl::StrCat(value.get<int64_t>());
  }
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (!std::isfinite(number)) {
      return FieldError(path, "must be a finite quantity");
    }
    // dump() prints the shortest text that reads back as the same double,
    // which is what the user wrote unless they wrote redundant digits.
    std::string text = value.dump();
    if (absl::string_view(text).size() > 2 &&
        absl::string_view(text).substr(text.size() - 2) == ".0") {
      text.resize(text.size() - 2);
    }
    return text;
  }
  return FieldError(
      path, "must be a quantity string or number, got " + JsonTypeName(value));
}

absl::StatusOr<int64_t> AsInteger(const json& value, absl::string_view path,
                                  int64_t min, int64_t max) {
  const std::string range =
      absl::StrCat("must be an integer between ", min, " and ", max);
  if (value.is_number_unsigned()) {
    const uint64_t number = value.get<uint64_t>();
    if (number > static_cast<uint64_t>(max)) {
      return FieldError(path, absl::StrCat(range, ", got ", number));
    }
    return static_cast<int64_t>(number);
  }
  if (value.is_number_integer()) {
    const int64_t number = value.get<int64_t>();
    if (number < min || number > max) {
      return FieldError(path, absl::StrCat(range, ", got ", number));
    }
    return number;
  }
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::isfinite(number) && std::floor(number) == number &&
        number >= static_cast<double>(min) &&
        number <= static_cast<double>(max)) {
      return static_cast<int64_t>(number);
    }
    return FieldError(path, absl::StrCat(range, ", got ", value.dump()));
  }
  return FieldError(path, "must be an integer, got " + JsonTypeName(value));
}

absl::StatusOr<bool> AsBool(const json& value, absl::string_view path) {
  if (!value.is_boolean()) {
    return FieldError(path, "must be a boolean, got " + JsonTypeName(value));
  }
  return value.get<bool>();
}

absl::StatusOr<google::protobuf::Timestamp> AsTimestamp(
    const json& value, absl::string_view path) {
  KQ_ASSIGN_OR_RETURN(const std::string text, AsString(value, path));
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return FieldError(
        path, absl::StrCat("must be an RFC 3339 time, got \"", text, "\""));
  }
  const int64_t seconds = absl::ToUnixSeconds(time);
  google::protobuf::Timestamp timestamp;
  timestamp.set_seconds(seconds);
  timestamp.set_nanos(static_cast<int32_t>(
      (time - absl::FromUnixSeconds(seconds)) / absl::Nanoseconds(1)));
  return timestamp;
}

absl::StatusOr<ObjectReader> ObjectReader::Open(
    const json& value, std::string path, std::vector<std::string>* warnings,
    bool warn_unknown) {
  if (!value.is_object()) {
    return FieldError(path.empty() ? "document" : path,
                      "must be an object, got " + JsonTypeName(value));
  }
  return ObjectReader(&value, std::move(path), warnings, warn_unknown);
}

const json* ObjectReader::Find(absl::string_view key) {
  read_.insert(std::string(key));
  const auto it = value_->find(std::string(key));
  if (it == value_->end() || it->is_null()) return nullptr;
  return &*it;
}

void ObjectReader::IgnoreRest() {
  for (const auto& [key, unused] : value_->items()) read_.insert(key);
}

absl::StatusOr<std::optional<std::string>> ObjectReader::String(
    absl::string_view key) {
  const json* field = Find(key);
  if (field == nullptr) return std::nullopt;
  KQ_ASSIGN_OR_RETURN(std::string value, AsString(*field, PathOf(key)));
  return value;
}

absl::StatusOr<std::optional<std::string>> ObjectReader::Quantity(
    absl::string_view key) {
  const json* field = Find(key);
  if (field == nullptr) return std::nullopt;
  KQ_ASSIGN_OR_RETURN(std::string value, AsQuantity(*field, PathOf(key)));
  return value;
}

absl::StatusOr<std::optional<int64_t>> ObjectReader::Integer(
    absl::string_view key, int64_t min, int64_t max) {
  const json* field = Find(key);
  if (field == nullptr) return std::nullopt;
  KQ_ASSIGN_OR_RETURN(int64_t value, AsInteger(*field, PathOf(key), min, max));
  return value;
}

absl::StatusOr<std::optional<int32_t>> ObjectReader::Int32(
    absl::string_view key) {
  KQ_ASSIGN_OR_RETURN(std::optional<int64_t> value,
                      Integer(key, std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max()));
  if (!value.has_value()) return std::nullopt;
  return static_cast<int32_t>(*value);
}

absl::StatusOr<std::optional<bool>> ObjectReader::Bool(absl::string_view key) {
  const json* field = Find(key);
  if (field == nullptr) return std::nullopt;
  KQ_ASSIGN_OR_RETURN(bool value, AsBool(*field, PathOf(key)));
  return value;
}

absl::StatusOr<std::optional<google::protobuf::Timestamp>>
ObjectReader::Timestamp(absl::string_view key) {
  const json* field = Find(key);
  if (field == nullptr) return std::nullopt;
  KQ_ASSIGN_OR_RETURN(google::protobuf::Timestamp value,
                      AsTimestamp(*field, PathOf(key)));
  return value;
}

absl::Status ObjectReader::ReadString(absl::string_view key, std::string* out) {
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> value, String(key));
  if (value.has_value()) *out = std::move(*value);
  return absl::OkStatus();
}

absl::Status ObjectReader::ReadQuantity(absl::string_view key,
                                        std::string* out) {
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> value, Quantity(key));
  if (value.has_value()) *out = std::move(*value);
  return absl::OkStatus();
}

absl::Status ObjectReader::ReadInt32(absl::string_view key, int32_t* out) {
  KQ_ASSIGN_OR_RETURN(std::optional<int32_t> value, Int32(key));
  if (value.has_value()) *out = *value;
  return absl::OkStatus();
}

absl::Status ObjectReader::ReadRequiredString(absl::string_view key,
                                              std::string* out) {
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> value, String(key));
  if (!value.has_value() || value->empty()) {
    return FieldError(PathOf(key), "required");
  }
  *out = std::move(*value);
  return absl::OkStatus();
}

namespace {

// Shared by the string-map readers: `convert` turns one value into a string.
template <typename Convert>
absl::Status ReadMap(const json* field, const std::string& path,
                     google::protobuf::Map<std::string, std::string>* out,
                     Convert convert) {
  if (field == nullptr) return absl::OkStatus();
  if (!field->is_object()) {
    return FieldError(path, "must be an object, got " + JsonTypeName(*field));
  }
  for (const auto& [key, value] : field->items()) {
    KQ_ASSIGN_OR_RETURN(std::string text, convert(value, KeyPath(path, key)));
    (*out)[key] = std::move(text);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ObjectReader::ReadStringMap(
    absl::string_view key,
    google::protobuf::Map<std::string, std::string>* out) {
  return ReadMap(Find(key), PathOf(key), out,
                 [](const json& value, const std::string& path) {
                   return AsString(value, path);
                 });
}

absl::Status ObjectReader::ReadQuantityMap(
    absl::string_view key,
    google::protobuf::Map<std::string, std::string>* out) {
  return ReadMap(Find(key), PathOf(key), out,
                 [](const json& value, const std::string& path) {
                   return AsQuantity(value, path);
                 });
}

absl::Status ObjectReader::ReadStringList(
    absl::string_view key,
    google::protobuf::RepeatedPtrField<std::string>* out) {
  const json* field = Find(key);
  if (field == nullptr) return absl::OkStatus();
  const std::string path = PathOf(key);
  if (!field->is_array()) {
    return FieldError(path, "must be a list, got " + JsonTypeName(*field));
  }
  for (size_t i = 0; i < field->size(); ++i) {
    KQ_ASSIGN_OR_RETURN(std::string value,
                        AsString((*field)[i], IndexPath(path, i)));
    out->Add(std::move(value));
  }
  return absl::OkStatus();
}

void ObjectReader::WarnUnknown() {
  if (!warn_unknown_ || warnings_ == nullptr) return;
  for (const auto& [key, unused] : value_->items()) {
    if (read_.count(key) == 0) {
      warnings_->push_back(absl::StrCat("unknown field \"", PathOf(key), "\""));
    }
  }
}

}  // namespace kq::manifest::internal
