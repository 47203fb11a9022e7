#pragma once

// The objects the benchmarks create, as kq.v1 protos (the in-process
// benchmarks convert them with server/codec, so every benchmark stores the
// same shapes).

#include <cstdint>
#include <map>
#include <string>

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

// Whether condition `type` is True in the workload's status, and when it
// last changed (UnixEpoch when absent).
bool ConditionTrue(const v1::Workload& wl, const std::string& type);
const v1::Condition* FindCondition(const v1::Workload& wl,
                                   const std::string& type);

}  // namespace kq::bench
