#include "server/queue/scheduling_hash.h"

#include <cstring>
#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace kq::queue {
namespace {

// FNV-1a over tagged fixed-width integers and length-prefixed strings, so
// that different shapes never write the same bytes.
class HashWriter {
 public:
  HashWriter& Tag(char tag) {
    Byte(static_cast<unsigned char>(tag));
    return *this;
  }
  HashWriter& Int(uint64_t value) {
    for (int i = 0; i < 8; ++i)
      Byte(static_cast<unsigned char>(value >> (8 * i)));
    return *this;
  }
  HashWriter& Str(absl::string_view text) {
    Int(text.size());
    for (const char c : text) Byte(static_cast<unsigned char>(c));
    return *this;
  }
  uint64_t digest() const { return digest_ == 0 ? 1 : digest_; }

 private:
  void Byte(unsigned char b) {
    digest_ ^= b;
    digest_ *= 1099511628211ULL;
  }
  uint64_t digest_ = 14695981039346656037ULL;
};

}  // namespace

uint64_t SchedulingHash(const Workload& workload) {
  HashWriter out;
  out.Tag('P').Int(
      static_cast<uint64_t>(static_cast<int64_t>(workload.priority)));
  if (auto boost = workload.meta.annotations.find(kPriorityBoostAnnotation);
      boost != workload.meta.annotations.end()) {
    out.Tag('B').Str(boost->second);
  }
  // Kueue's effective count: after reclaimable pods (rarely any).
  std::map<std::string, int32_t> counts;
  if (!workload.reclaimable_pods.empty()) {
    counts = PodSetsCountsAfterReclaim(workload);
  }
  for (const PodSet& ps : workload.pod_sets) {
    const bool has_template = ps.template_on_disk || !ps.template_json.empty();
    if (has_template && ps.spec_shape == 0) return 0;
    auto count = counts.find(ps.name);
    out.Tag('S')
        .Str(ps.name)
        .Int(static_cast<uint64_t>(count == counts.end() ? ps.count
                                                         : count->second))
        .Int(static_cast<uint64_t>(ps.min_count.value_or(-1)))
        .Int(ps.spec_shape);
    for (const auto& [resource, quantity] : ps.requests) {
      out.Tag('q').Str(resource).Int(static_cast<uint64_t>(quantity.milli()));
    }
    for (const auto& [label, value] : ps.node_selector) {
      out.Tag('n').Str(label).Str(value);
    }
    for (const Toleration& t : ps.tolerations) {
      out.Tag('t').Str(t.key).Str(t.op).Str(t.value).Str(t.effect).Int(
          static_cast<uint64_t>(t.toleration_seconds.value_or(-1)));
    }
    for (const NodeSelectorTerm& term : ps.required_node_affinity) {
      out.Tag('a');
      for (const LabelSelectorRequirement& r : term.match_expressions) {
        out.Tag('e').Str(r.key).Str(r.op);
        for (const std::string& v : r.values) out.Tag('v').Str(v);
      }
    }
  }
  return out.digest();
}

}  // namespace kq::queue
