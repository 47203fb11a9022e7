#pragma once

// Typed, path-aware reading of Kueue-shaped JSON for the manifest library.
// Every error names the field in Kueue's camelCase
// ("spec.resourceGroups[0].flavors[1].name: must be a string, got a list"),
// and fields nobody read are reported as kubectl reports them
// ("unknown field \"spec.foo\"").

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "google/protobuf/timestamp.pb.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"

namespace kq::manifest::internal {

// "a string", "a list", "an object", "a number", "a boolean" or "null".
std::string JsonTypeName(const nlohmann::json& value);

// "spec" + "cohort" -> "spec.cohort"; "" + "spec" -> "spec".
std::string FieldPath(absl::string_view parent, absl::string_view key);
// "spec.podSets" + 2 -> "spec.podSets[2]".
std::string IndexPath(absl::string_view parent, size_t index);
// Map entries: "metadata.labels" + "app" -> "metadata.labels[app]".
std::string KeyPath(absl::string_view parent, absl::string_view key);

// InvalidArgument "<path>: <reason>".
absl::Status FieldError(absl::string_view path, absl::string_view reason);

// Conversions of one JSON value found at `path`. Each returns
// InvalidArgument naming `path` when the value has the wrong type.
absl::StatusOr<std::string> AsString(const nlohmann::json& value,
                                     absl::string_view path);
// A quantity is a string or a number; numbers keep the text the user wrote
// as far as JSON can tell (16 -> "16", 1.5 -> "1.5").
absl::StatusOr<std::string> AsQuantity(const nlohmann::json& value,
                                       absl::string_view path);
// An integer in [min, max]; integral floating-point values (4.0) are
// accepted, as Kubernetes' JSON decoding does.
absl::StatusOr<int64_t> AsInteger(const nlohmann::json& value,
                                  absl::string_view path, int64_t min,
                                  int64_t max);
absl::StatusOr<bool> AsBool(const nlohmann::json& value,
                            absl::string_view path);
// An RFC 3339 time ("2026-01-02T03:04:05Z").
absl::StatusOr<google::protobuf::Timestamp> AsTimestamp(
    const nlohmann::json& value, absl::string_view path);

// Reads the fields of one JSON object and remembers which were read, so the
// rest can be reported as unknown. Holds a pointer to the JSON value and to
// the warnings list; both must outlive the reader. Thread-compatible.
//
// Example:
//   KQ_ASSIGN_OR_RETURN(ObjectReader spec,
//                                ObjectReader::Open(json, "spec", &warnings));
//   KQ_RETURN_IF_ERROR(
//       spec.ReadString("clusterQueue", lq.mutable_cluster_queue()));
//   spec.WarnUnknown();
class ObjectReader {
 public:
  // Returns InvalidArgument "<path>: must be an object, got ..." when `value`
  // is not an object. With `warn_unknown` false, WarnUnknown() stays silent
  // (used for server-computed `status`, which kq reads only in part).
  static absl::StatusOr<ObjectReader> Open(const nlohmann::json& value,
                                           std::string path,
                                           std::vector<std::string>* warnings,
                                           bool warn_unknown = true);

  // The path of this object ("" for the document root).
  const std::string& path() const { return path_; }
  // The path of one of its fields.
  std::string PathOf(absl::string_view key) const {
    return FieldPath(path_, key);
  }
  std::vector<std::string>* warnings() const { return warnings_; }

  // Returns the field, or nullptr when it is absent or null (Kubernetes
  // treats `field: null` as absent). Marks it read either way.
  const nlohmann::json* Find(absl::string_view key);
  // Marks a field read without converting it (accepted and ignored).
  void Ignore(absl::string_view key) { read_.insert(std::string(key)); }
  // Marks every field read.
  void IgnoreRest();

  // Typed accessors: nullopt when absent; InvalidArgument naming the field
  // when present with the wrong type.
  absl::StatusOr<std::optional<std::string>> String(absl::string_view key);
  absl::StatusOr<std::optional<std::string>> Quantity(absl::string_view key);
  absl::StatusOr<std::optional<int64_t>> Integer(absl::string_view key,
                                                 int64_t min, int64_t max);
  absl::StatusOr<std::optional<int32_t>> Int32(absl::string_view key);
  absl::StatusOr<std::optional<bool>> Bool(absl::string_view key);
  absl::StatusOr<std::optional<google::protobuf::Timestamp>> Timestamp(
      absl::string_view key);

  // Writers into proto fields; leave `out` unchanged when the field is
  // absent.
  absl::Status ReadString(absl::string_view key, std::string* out);
  absl::Status ReadQuantity(absl::string_view key, std::string* out);
  absl::Status ReadInt32(absl::string_view key, int32_t* out);
  // An object of strings (labels, nodeSelector, flavors).
  absl::Status ReadStringMap(
      absl::string_view key,
      google::protobuf::Map<std::string, std::string>* out);
  // An object of quantities (requests, resourceUsage).
  absl::Status ReadQuantityMap(
      absl::string_view key,
      google::protobuf::Map<std::string, std::string>* out);
  // A list of strings (coveredResources, onFlavors).
  absl::Status ReadStringList(
      absl::string_view key,
      google::protobuf::RepeatedPtrField<std::string>* out);
  // Requires a present, non-empty string ("<path>: required").
  absl::Status ReadRequiredString(absl::string_view key, std::string* out);

  // Calls fn(ObjectReader&) for a nested object when present, then reports
  // its unknown fields. Returns fn's error or a type error.
  template <typename Fn>
  absl::Status ReadObject(absl::string_view key, Fn fn) {
    return ReadObjectImpl(key, warn_unknown_, fn);
  }
  // As ReadObject, but never warns about the nested object's unknown fields.
  template <typename Fn>
  absl::Status ReadLenientObject(absl::string_view key, Fn fn) {
    return ReadObjectImpl(key, false, fn);
  }
  // Calls fn(ObjectReader&) for each element of a list of objects, then
  // reports each element's unknown fields.
  template <typename Fn>
  absl::Status ReadObjectList(absl::string_view key, Fn fn) {
    const nlohmann::json* list = Find(key);
    if (list == nullptr) return absl::OkStatus();
    const std::string list_path = PathOf(key);
    if (!list->is_array()) {
      return FieldError(list_path,
                        "must be a list, got " + JsonTypeName(*list));
    }
    for (size_t i = 0; i < list->size(); ++i) {
      KQ_ASSIGN_OR_RETURN(
          ObjectReader item,
          Open((*list)[i], IndexPath(list_path, i), warnings_, warn_unknown_));
      KQ_RETURN_IF_ERROR(fn(item));
      item.WarnUnknown();
    }
    return absl::OkStatus();
  }

  // Adds `unknown field "<path>"` for each field not read, when enabled.
  void WarnUnknown();

 private:
  ObjectReader(const nlohmann::json* value, std::string path,
               std::vector<std::string>* warnings, bool warn_unknown)
      : value_(value),
        path_(std::move(path)),
        warnings_(warnings),
        warn_unknown_(warn_unknown) {}

  template <typename Fn>
  absl::Status ReadObjectImpl(absl::string_view key, bool warn_unknown, Fn fn) {
    const nlohmann::json* field = Find(key);
    if (field == nullptr) return absl::OkStatus();
    KQ_ASSIGN_OR_RETURN(ObjectReader nested,
                        Open(*field, PathOf(key), warnings_, warn_unknown));
    KQ_RETURN_IF_ERROR(fn(nested));
    nested.WarnUnknown();
    return absl::OkStatus();
  }

  const nlohmann::json* value_;
  std::string path_;
  std::vector<std::string>* warnings_;
  bool warn_unknown_;
  std::set<std::string> read_;
};

}  // namespace kq::manifest::internal
