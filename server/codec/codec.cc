// The codec's scalars and the messages every kind shares: quantities,
// string maps, metadata, conditions, tolerations, resource lists and
// timestamps.

#include "server/codec/codec.h"

#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "base/status_macros.h"
#include "server/codec/internal.h"

namespace kq::codec {
namespace {

// Whether a resource is counted in bytes, so that its quantities print with
// binary suffixes ("256Gi") rather than decimal ones ("274877906944").
bool IsByteResource(absl::string_view resource) {
  return resource == "memory" || resource == "ephemeral-storage" ||
         resource == "storage" || absl::EndsWith(resource, "memory") ||
         absl::EndsWith(resource, "storage");
}

}  // namespace

std::string QuantityText(absl::string_view resource, Quantity q) {
  return q.ToString(IsByteResource(resource));
}

// Parses a quantity, prefixing any error with the field path so the user
// sees which of their numbers is wrong.
absl::StatusOr<Quantity> ParseQuantity(absl::string_view path,
                                       absl::string_view text) {
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", q.status().message()));
  }
  return *q;
}

absl::Status UnsupportedValue(absl::string_view path, absl::string_view value,
                              absl::string_view allowed) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": unsupported value \"", value, "\": must be ", allowed));
}

// Kueue's string-valued policies that core keeps as strings: an empty proto
// string means the Kueue default.
std::string OrDefault(const std::string& text, const char* default_value) {
  return text.empty() ? std::string(default_value) : text;
}

ObjectMeta MetaFromProto(const v1::ObjectMeta& proto) {
  ObjectMeta meta;
  meta.name = proto.name();
  meta.namespace_name = proto.namespace_();
  meta.uid = proto.uid();
  meta.revision = proto.revision();
  if (proto.has_creation_timestamp()) {
    meta.creation_timestamp = FromProto(proto.creation_timestamp());
  }
  meta.labels = MapFromProto(proto.labels());
  meta.annotations = MapFromProto(proto.annotations());
  meta.generate_name = proto.generate_name();
  return meta;
}

void MetaToProto(const ObjectMeta& meta, v1::ObjectMeta* proto) {
  proto->set_name(meta.name);
  proto->set_namespace_(meta.namespace_name);
  proto->set_uid(meta.uid.str());
  proto->set_revision(meta.revision);
  // Core's "unset" time is the Unix epoch; it stays absent in the proto so
  // that absent and unset read the same both ways. The same holds for every
  // other timestamp below.
  if (meta.creation_timestamp != absl::UnixEpoch()) {
    *proto->mutable_creation_timestamp() = ToProto(meta.creation_timestamp);
  }
  MapToProto(meta.labels, proto->mutable_labels());
  MapToProto(meta.annotations, proto->mutable_annotations());
  proto->set_generate_name(meta.generate_name.str());
}

Condition ConditionFromProto(const v1::Condition& proto) {
  Condition c;
  c.type = proto.type();
  c.status = proto.status();
  c.reason = proto.reason();
  c.message = proto.message();
  if (proto.has_last_transition_time()) {
    c.last_transition_time = FromProto(proto.last_transition_time());
  }
  return c;
}

void ConditionToProto(const Condition& c, v1::Condition* proto) {
  proto->set_type(c.type);
  proto->set_status(c.status);
  proto->set_reason(c.reason);
  proto->set_message(c.message);
  if (c.last_transition_time != absl::UnixEpoch()) {
    *proto->mutable_last_transition_time() = ToProto(c.last_transition_time);
  }
}

LabelSelectorRequirement RequirementFromProto(
    const v1::LabelSelectorRequirement& proto) {
  LabelSelectorRequirement r;
  r.key = proto.key();
  r.op = proto.operator_();
  r.values.assign(proto.values().begin(), proto.values().end());
  return r;
}

void RequirementToProto(const LabelSelectorRequirement& r,
                        v1::LabelSelectorRequirement* proto) {
  proto->set_key(r.key);
  proto->set_operator_(r.op);
  for (const std::string& v : r.values) proto->add_values(v);
}

Toleration TolerationFromProto(const v1::Toleration& proto) {
  Toleration t;
  t.key = proto.key();
  t.op = proto.operator_();
  t.value = proto.value();
  t.effect = proto.effect();
  if (proto.has_toleration_seconds()) {
    t.toleration_seconds = proto.toleration_seconds();
  }
  return t;
}

void TolerationToProto(const Toleration& t, v1::Toleration* proto) {
  proto->set_key(t.key);
  proto->set_operator_(t.op);
  proto->set_value(t.value);
  proto->set_effect(t.effect);
  if (t.toleration_seconds.has_value()) {
    proto->set_toleration_seconds(*t.toleration_seconds);
  }
}

absl::StatusOr<ResourceList> ResourceListFromProto(
    absl::string_view path,
    const google::protobuf::Map<std::string, std::string>& proto) {
  ResourceList out;
  for (const auto& [resource, text] : proto) {
    KQ_ASSIGN_OR_RETURN(
        Quantity q,
        ParseQuantity(absl::StrCat(path, "[", resource, "]"), text));
    out.emplace(resource, q);
  }
  return out;
}

void ResourceListToProto(const ResourceList& list,
                         google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& [resource, q] : list) {
    (*out)[resource] = QuantityText(resource, q);
  }
}

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

google::protobuf::Duration ToProto(absl::Duration d) {
  // Seconds and nanos share their sign, as Duration requires.
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  google::protobuf::Duration out;
  out.set_seconds(nanos / 1'000'000'000);
  out.set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
  return out;
}

absl::Time FromProto(const google::protobuf::Timestamp& ts) {
  // The extremes are what ToProto writes for the infinite times.
  if (ts.seconds() == std::numeric_limits<int64_t>::max()) {
    return absl::InfiniteFuture();
  }
  if (ts.seconds() == std::numeric_limits<int64_t>::min()) {
    return absl::InfinitePast();
  }
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

google::protobuf::Timestamp ToProto(absl::Time t) {
  google::protobuf::Timestamp ts;
  if (t == absl::InfiniteFuture()) {
    ts.set_seconds(std::numeric_limits<int64_t>::max());
    return ts;
  }
  if (t == absl::InfinitePast()) {
    ts.set_seconds(std::numeric_limits<int64_t>::min());
    return ts;
  }
  // ToUnixSeconds rounds toward negative infinity, so the remainder is a
  // non-negative count of nanoseconds, as Timestamp requires.
  const int64_t seconds = absl::ToUnixSeconds(t);
  ts.set_seconds(seconds);
  ts.set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds))));
  return ts;
}

std::string QuantityToProto(absl::string_view resource, Quantity q) {
  return QuantityText(resource, q);
}

}  // namespace kq::codec
