#pragma once

// The objects the benchmarks create, as kq.v1 protos (the in-process
// benchmarks convert them with server/codec, so every benchmark stores the
// same shapes).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::bench {

v1::ConfigObject MakeNamespace(const std::string& name);
v1::ConfigObject MakeFlavor(const std::string& name);

struct ClusterQueueShape {
  std::string name;
  std::string cohort;  // empty: none
  std::string flavor;
  std::string nominal_cpu;
  std::string borrowing_limit_cpu;  // empty: unlimited
  // Also cover memory with this nominal quota (empty: cpu only).
  std::string nominal_memory;
  std::string reclaim_within_cohort = "Never";
  std::string within_cluster_queue = "Never";
  // Labels, as Kueue's generator puts its class on each ClusterQueue.
  std::map<std::string, std::string> labels;
};
// A ClusterQueue selecting every namespace (Kueue's testing wrapper sets
// `namespaceSelector: {}`), BestEffortFIFO.
v1::ConfigObject MakeClusterQueue(const ClusterQueueShape& shape);

v1::ConfigObject MakeLocalQueue(const std::string& namespace_name,
                                const std::string& name,
                                const std::string& cluster_queue);

struct WorkloadShape {
  std::string namespace_name;
  std::string name;
  std::string queue_name;
  std::string cpu;
  std::string memory;  // empty: none
  int32_t priority = 0;
  // A pod template as a batch Job's would be (one container with image,
  // command and requests): what kqd stores and hands back to runners.
  bool with_template = false;
  // Send that template as JSON text (PodSet.template_json), the form kqd
  // reads for the least, instead of a Struct.
  bool template_as_json = false;
  std::map<std::string, std::string> labels;
};
v1::Workload MakeWorkload(const WorkloadShape& shape);

// The ClusterQueue (and its namespace and LocalQueue) of index `i` in
// MakePerfQueues: "cq-<i>".
std::string PerfQueueName(int i);
// Kueue's perf configs' queues: flavor "default", then `cluster_queues`
// ClusterQueues of 20 cpu (borrowing up to 100 more) in `cohorts` cohorts,
// each with a namespace and a LocalQueue of its name. With `preemption`
// false they never preempt (reclaimWithinCohort and withinClusterQueue
// Never; else Any and LowerPriority).
std::vector<v1::ConfigObject> MakePerfQueues(int cluster_queues, int cohorts,
                                             bool preemption);

}  // namespace kq::bench
