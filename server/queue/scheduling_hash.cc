#include "server/queue/scheduling_hash.h"

#include <map>
#include <string>

#include "server/core/shape_key.h"

namespace kq::queue {

uint64_t SchedulingHash(const Workload& workload) {
  std::string key;
  ShapeKeyWriter out(key);
  out.Tag('P').Int(workload.priority);
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
        .Int(count == counts.end() ? ps.count : count->second)
        .Int(ps.min_count.value_or(-1))
        .Int(static_cast<int64_t>(ps.spec_shape))
        .Placement(ps);
  }
  return StableHash(key);
}

}  // namespace kq::queue
