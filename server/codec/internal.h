#pragma once

// What the codec's files share: the scalar conversions and the messages
// every kind uses. Not part of the codec's interface (codec.h).

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "google/protobuf/struct.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

#include "server/core/objects.h"

namespace kq::codec {

// A quantity as kq writes it for `resource` (binary suffixes for memory
// and storage).
std::string QuantityText(absl::string_view resource, Quantity q);
// InvalidArgument naming `path` when `text` is not a quantity.
absl::StatusOr<Quantity> ParseQuantity(absl::string_view path,
                                       absl::string_view text);
// InvalidArgument naming `path`: `value` is not one of `allowed`.
absl::Status UnsupportedValue(absl::string_view path, absl::string_view value,
                              absl::string_view allowed);
// Kueue's string-valued policies that core keeps as strings: an empty proto
// string means the Kueue default.
std::string OrDefault(const std::string& text, const char* default_value);

// Labels, or any other string map (a std::map for PodSetAssignment.flavors).
template <typename M = Labels>
M MapFromProto(const google::protobuf::Map<std::string, std::string>& m) {
  return M(m.begin(), m.end());
}

// `m`: Labels or a std::map of strings.
template <typename M>
void MapToProto(const M& m,
                google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& [key, value] : m) (*out)[key] = value;
}

ObjectMeta MetaFromProto(const v1::ObjectMeta& proto);
void MetaToProto(const ObjectMeta& meta, v1::ObjectMeta* proto);
Condition ConditionFromProto(const v1::Condition& proto);
void ConditionToProto(const Condition& c, v1::Condition* proto);
LabelSelectorRequirement RequirementFromProto(
    const v1::LabelSelectorRequirement& proto);
void RequirementToProto(const LabelSelectorRequirement& r,
                        v1::LabelSelectorRequirement* proto);
Toleration TolerationFromProto(const v1::Toleration& proto);
void TolerationToProto(const Toleration& t, v1::Toleration* proto);
// InvalidArgument naming `path[resource]` for an unparsable quantity.
absl::StatusOr<ResourceList> ResourceListFromProto(
    absl::string_view path,
    const google::protobuf::Map<std::string, std::string>& proto);
void ResourceListToProto(const ResourceList& list,
                         google::protobuf::Map<std::string, std::string>* out);

// Pod templates as JSON (pod_template_json.cc).
// Writes a Struct as JSON with object keys sorted: protobuf prints a
// Struct's keys in hash-map order, which differs between two copies of the
// same template, so that equal templates become equal strings. Sets
// `*spec_shape` to the text's SpecShapeDigest.
absl::StatusOr<std::string> CanonicalJson(
    absl::string_view path, const google::protobuf::Struct& template_struct,
    uint64_t* spec_shape);
// Reads a template kept as JSON text back into a Struct; false when it is
// not a JSON object.
bool StructFromJson(const std::string& json, google::protobuf::Struct* out);
// A template a client sent as JSON text is kept as given once this accepts
// it; InvalidArgument at `path` otherwise.
absl::Status CheckTemplateText(absl::string_view path, const std::string& text);

}  // namespace kq::codec
