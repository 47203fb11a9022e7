#include "server/core/shape_key.h"

#include <cstring>

namespace kq {

ShapeKeyWriter& ShapeKeyWriter::Int(int64_t value) {
  char bytes[sizeof(value)];
  std::memcpy(bytes, &value, sizeof(value));
  out_.append(bytes, sizeof(bytes));
  return *this;
}

ShapeKeyWriter& ShapeKeyWriter::Str(absl::string_view text) {
  Int(static_cast<int64_t>(text.size()));
  out_.append(text.data(), text.size());
  return *this;
}

ShapeKeyWriter& ShapeKeyWriter::Placement(const PodSet& pod_set) {
  for (const auto& [resource, quantity] : pod_set.requests) {
    Tag('q').Str(resource).Int(quantity.milli());
  }
  for (const auto& [label, value] : pod_set.node_selector) {
    Tag('n').Str(label).Str(value);
  }
  for (const Toleration& t : pod_set.tolerations) {
    Tag('t').Str(t.key).Str(t.op).Str(t.value).Str(t.effect).Int(
        t.toleration_seconds.value_or(-1));
  }
  for (const NodeSelectorTerm& term : pod_set.required_node_affinity) {
    Tag('a');
    for (const LabelSelectorRequirement& r : term.match_expressions) {
      Tag('e').Str(r.key).Str(r.op);
      for (const std::string& v : r.values) Tag('v').Str(v);
    }
  }
  return *this;
}

uint64_t StableHash(absl::string_view bytes) {
  uint64_t digest = 14695981039346656037ULL;
  for (const char c : bytes) {
    digest ^= static_cast<unsigned char>(c);
    digest *= 1099511628211ULL;
  }
  return digest == 0 ? 1 : digest;
}

}  // namespace kq
