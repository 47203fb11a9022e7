#include "bench/objects.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

#include "manifest/proto_json.h"

namespace kq::bench {
namespace {

// A pod template as a batch Job's would be: {"spec": {"restartPolicy":
// "Never", "containers": [{"name": "main", "image": ..., "command": [...],
// "resources": {"requests": {...}}}]}}.
nlohmann::json PodTemplate(const WorkloadShape& shape) {
  nlohmann::json requests = {{"cpu", shape.cpu}};
  if (!shape.memory.empty()) requests["memory"] = shape.memory;
  return {{"spec",
           {{"restartPolicy", "Never"},
            {"containers",
             {{{"name", "main"},
               {"image", "registry.k8s.io/busybox:1.36"},
               {"command", {"sh", "-c", "echo start; sleep 30; echo done"}},
               {"resources", {{"requests", requests}}}}}}}}};
}

}  // namespace

v1::ConfigObject MakeNamespace(const std::string& name) {
  v1::ConfigObject o;
  o.mutable_namespace_()->mutable_metadata()->set_name(name);
  return o;
}

v1::ConfigObject MakeFlavor(const std::string& name) {
  v1::ConfigObject o;
  o.mutable_resource_flavor()->mutable_metadata()->set_name(name);
  return o;
}

v1::ConfigObject MakeClusterQueue(const ClusterQueueShape& shape) {
  v1::ConfigObject o;
  v1::ClusterQueue* cq = o.mutable_cluster_queue();
  cq->mutable_metadata()->set_name(shape.name);
  for (const auto& [k, v] : shape.labels) {
    (*cq->mutable_metadata()->mutable_labels())[k] = v;
  }
  v1::ClusterQueueSpec* spec = cq->mutable_spec();
  spec->set_cohort_name(shape.cohort);
  spec->set_queueing_strategy("BestEffortFIFO");
  spec->mutable_namespace_selector();
  v1::ResourceGroup* group = spec->add_resource_groups();
  group->add_covered_resources("cpu");
  if (!shape.nominal_memory.empty()) group->add_covered_resources("memory");
  v1::FlavorQuotas* flavor = group->add_flavors();
  flavor->set_name(shape.flavor);
  v1::ResourceQuota* cpu = flavor->add_resources();
  cpu->set_name("cpu");
  cpu->set_nominal_quota(shape.nominal_cpu);
  if (!shape.borrowing_limit_cpu.empty()) {
    cpu->set_borrowing_limit(shape.borrowing_limit_cpu);
  }
  if (!shape.nominal_memory.empty()) {
    v1::ResourceQuota* memory = flavor->add_resources();
    memory->set_name("memory");
    memory->set_nominal_quota(shape.nominal_memory);
  }
  spec->mutable_preemption()->set_reclaim_within_cohort(
      shape.reclaim_within_cohort);
  spec->mutable_preemption()->set_within_cluster_queue(
      shape.within_cluster_queue);
  return o;
}

v1::ConfigObject MakeLocalQueue(const std::string& namespace_name,
                                const std::string& name,
                                const std::string& cluster_queue) {
  v1::ConfigObject o;
  v1::LocalQueue* lq = o.mutable_local_queue();
  lq->mutable_metadata()->set_namespace_(namespace_name);
  lq->mutable_metadata()->set_name(name);
  lq->mutable_spec()->set_cluster_queue(cluster_queue);
  return o;
}

v1::Workload MakeWorkload(const WorkloadShape& shape) {
  v1::Workload wl;
  wl.mutable_metadata()->set_namespace_(shape.namespace_name);
  wl.mutable_metadata()->set_name(shape.name);
  for (const auto& [k, v] : shape.labels) {
    (*wl.mutable_metadata()->mutable_labels())[k] = v;
  }
  wl.mutable_spec()->set_queue_name(shape.queue_name);
  wl.mutable_spec()->set_priority(shape.priority);
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = shape.cpu;
  if (!shape.memory.empty()) (*ps->mutable_requests())["memory"] = shape.memory;
  if (shape.with_template && shape.template_as_json) {
    ps->set_template_json(PodTemplate(shape).dump());
  } else if (shape.with_template) {
    // An object always converts.
    *ps->mutable_template_() =
        *manifest::internal::JsonToStruct(PodTemplate(shape), "template");
  }
  return wl;
}

std::string PerfQueueName(int i) { return absl::StrCat("cq-", i); }

std::vector<v1::ConfigObject> MakePerfQueues(int cluster_queues, int cohorts,
                                             bool preemption) {
  std::vector<v1::ConfigObject> protos = {MakeFlavor("default")};
  for (int i = 0; i < cluster_queues; ++i) {
    const std::string name = PerfQueueName(i);
    ClusterQueueShape shape;
    shape.name = name;
    shape.cohort = absl::StrCat("cohort-", i % cohorts);
    shape.flavor = "default";
    shape.nominal_cpu = "20";
    shape.borrowing_limit_cpu = "100";
    shape.reclaim_within_cohort = preemption ? "Any" : "Never";
    shape.within_cluster_queue = preemption ? "LowerPriority" : "Never";
    protos.push_back(MakeClusterQueue(shape));
    protos.push_back(MakeNamespace(name));
    protos.push_back(MakeLocalQueue(name, name, name));
  }
  return protos;
}

}  // namespace kq::bench
