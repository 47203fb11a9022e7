#include "tests/testing/builders.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"

namespace kq::testing {

Quantity Qty(absl::string_view text) {
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) AbortBuilder(q.status().message());
  return *q;
}

void AbortBuilder(absl::string_view why) {
  std::fprintf(stderr, "kq::testing builder misused: %.*s\n",
               static_cast<int>(why.size()), why.data());
  std::abort();
}

// ---------------------------------------------------------------------------
// ClusterQueueBuilder

ClusterQueueBuilder::ClusterQueueBuilder(std::string name)
    : ResourceGroupsBuilder(std::move(name)) {
  object_.namespace_selector = LabelSelector{};
}

ClusterQueueBuilder& ClusterQueueBuilder::Cohort(std::string cohort) {
  object_.cohort_name = std::move(cohort);
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::QueueingStrategy(
    ::kq::QueueingStrategy strategy) {
  object_.queueing_strategy = strategy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::NamespaceSelectorAll() {
  object_.namespace_selector = LabelSelector{};
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::NoNamespaceSelector() {
  object_.namespace_selector.reset();
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::NamespaceSelector(
    LabelSelector selector) {
  object_.namespace_selector = std::move(selector);
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::WhenCanBorrow(
    FungibilityPolicy policy) {
  object_.flavor_fungibility.when_can_borrow = policy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::WhenCanPreempt(
    FungibilityPolicy policy) {
  object_.flavor_fungibility.when_can_preempt = policy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::FungibilityPreference(
    std::string preference) {
  object_.flavor_fungibility.preference = std::move(preference);
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::ReclaimWithinCohort(
    std::string policy) {
  object_.preemption.reclaim_within_cohort = std::move(policy);
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::BorrowWithinCohort(
    std::string policy, std::optional<int32_t> max_priority) {
  object_.preemption.borrow_within_cohort_policy = std::move(policy);
  object_.preemption.borrow_within_cohort_max_priority_threshold = max_priority;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::WithinClusterQueue(
    std::string policy) {
  object_.preemption.within_cluster_queue = std::move(policy);
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::AdmissionCheck(
    std::string name, std::vector<std::string> on_flavors) {
  object_.admission_checks.push_back(
      {.name = std::move(name), .on_flavors = std::move(on_flavors)});
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::StopPolicy(::kq::StopPolicy policy) {
  object_.stop_policy = policy;
  return *this;
}

// ---------------------------------------------------------------------------
// CohortBuilder

CohortBuilder::CohortBuilder(std::string name)
    : ResourceGroupsBuilder(std::move(name)) {}

CohortBuilder& CohortBuilder::Parent(std::string parent) {
  object_.parent_name = std::move(parent);
  return *this;
}

// ---------------------------------------------------------------------------
// ResourceFlavorBuilder

ResourceFlavorBuilder::ResourceFlavorBuilder(std::string name)
    : ObjectBuilder(std::move(name)) {}

ResourceFlavorBuilder& ResourceFlavorBuilder::NodeLabel(std::string key,
                                                        std::string value) {
  object_.node_labels[std::move(key)] = std::move(value);
  return *this;
}

ResourceFlavorBuilder& ResourceFlavorBuilder::Taint(std::string key,
                                                    std::string value,
                                                    std::string effect) {
  object_.node_taints.push_back({.key = std::move(key),
                                 .value = std::move(value),
                                 .effect = std::move(effect)});
  return *this;
}

ResourceFlavorBuilder& ResourceFlavorBuilder::Toleration(
    ::kq::Toleration toleration) {
  object_.tolerations.push_back(std::move(toleration));
  return *this;
}

ResourceFlavorBuilder& ResourceFlavorBuilder::TopologyName(std::string name) {
  object_.topology_name = std::move(name);
  return *this;
}

// ---------------------------------------------------------------------------
// LocalQueueBuilder, NamespaceBuilder, WorkloadPriorityClassBuilder,
// AdmissionCheckBuilder

LocalQueueBuilder::LocalQueueBuilder(std::string namespace_name,
                                     std::string name,
                                     std::string cluster_queue)
    : ObjectBuilder(std::move(name)) {
  object_.meta.namespace_name = std::move(namespace_name);
  object_.cluster_queue = std::move(cluster_queue);
}

LocalQueueBuilder& LocalQueueBuilder::ClusterQueue(std::string cluster_queue) {
  object_.cluster_queue = std::move(cluster_queue);
  return *this;
}

LocalQueueBuilder& LocalQueueBuilder::StopPolicy(::kq::StopPolicy policy) {
  object_.stop_policy = policy;
  return *this;
}

LocalQueueBuilder& LocalQueueBuilder::FairSharingWeight(
    absl::string_view weight) {
  object_.fair_sharing_weight = Qty(weight);
  return *this;
}

NamespaceBuilder::NamespaceBuilder(std::string name)
    : ObjectBuilder(std::move(name)) {}

WorkloadPriorityClassBuilder::WorkloadPriorityClassBuilder(std::string name,
                                                           int32_t value)
    : ObjectBuilder(std::move(name)) {
  object_.value = value;
}

WorkloadPriorityClassBuilder& WorkloadPriorityClassBuilder::Value(
    int32_t value) {
  object_.value = value;
  return *this;
}

WorkloadPriorityClassBuilder& WorkloadPriorityClassBuilder::Description(
    std::string description) {
  object_.description = std::move(description);
  return *this;
}

AdmissionCheckBuilder::AdmissionCheckBuilder(std::string name)
    : ObjectBuilder(std::move(name)) {}

AdmissionCheckBuilder& AdmissionCheckBuilder::ControllerName(
    std::string controller) {
  object_.controller_name = std::move(controller);
  return *this;
}

AdmissionCheckBuilder& AdmissionCheckBuilder::Parameters(std::string api_group,
                                                         std::string kind,
                                                         std::string name) {
  object_.parameters_api_group = std::move(api_group);
  object_.parameters_kind = std::move(kind);
  object_.parameters_name = std::move(name);
  return *this;
}

// ---------------------------------------------------------------------------
// AdmissionBuilder

AdmissionBuilder::AdmissionBuilder(std::string cluster_queue) {
  admission_.cluster_queue = std::move(cluster_queue);
}

AdmissionBuilder& AdmissionBuilder::PodSet(std::string name, int32_t count) {
  admission_.pod_set_assignments.push_back(
      {.name = std::move(name), .count = count});
  return *this;
}

AdmissionBuilder& AdmissionBuilder::Flavor(std::string resource,
                                           std::string flavor) {
  Current().flavors[std::move(resource)] = std::move(flavor);
  return *this;
}

AdmissionBuilder& AdmissionBuilder::Usage(std::string resource,
                                          absl::string_view usage) {
  Current().resource_usage[std::move(resource)] = Qty(usage);
  return *this;
}

AdmissionBuilder& AdmissionBuilder::Assign(std::string resource,
                                           std::string flavor,
                                           absl::string_view usage) {
  Flavor(resource, std::move(flavor));
  return Usage(std::move(resource), usage);
}

PodSetAssignment& AdmissionBuilder::Current() {
  if (admission_.pod_set_assignments.empty()) PodSet("main", 1);
  return admission_.pod_set_assignments.back();
}

// ---------------------------------------------------------------------------
// WorkloadBuilder

WorkloadBuilder::WorkloadBuilder(std::string name)
    : ObjectBuilder(std::move(name)) {
  object_.meta.namespace_name = "default";
}

WorkloadBuilder& WorkloadBuilder::Namespace(std::string namespace_name) {
  object_.meta.namespace_name = std::move(namespace_name);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Queue(std::string local_queue) {
  object_.queue_name = std::move(local_queue);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Priority(int32_t priority) {
  object_.priority = priority;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::PriorityClass(std::string name) {
  object_.priority_class_name = std::move(name);
  object_.priority_class_source = PriorityClassSource::kWorkloadPriorityClass;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Active(bool active) {
  object_.active = active;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::MaximumExecutionTimeSeconds(int32_t seconds) {
  object_.maximum_execution_time_seconds = seconds;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::PodSet(std::string name, int32_t count) {
  object_.pod_sets.push_back({.name = std::move(name), .count = count});
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Request(std::string resource,
                                          absl::string_view quantity) {
  CurrentPodSet().requests[std::move(resource)] = Qty(quantity);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::MinCount(int32_t min_count) {
  CurrentPodSet().min_count = min_count;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::NodeSelector(std::string key,
                                               std::string value) {
  CurrentPodSet().node_selector[std::move(key)] = std::move(value);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Toleration(::kq::Toleration toleration) {
  CurrentPodSet().tolerations.push_back(std::move(toleration));
  return *this;
}

WorkloadBuilder& WorkloadBuilder::RequiredNodeAffinity(
    std::string key, std::string op, std::vector<std::string> values) {
  NodeSelectorTerm term;
  term.match_expressions.push_back({.key = std::move(key),
                                    .op = std::move(op),
                                    .values = std::move(values)});
  CurrentPodSet().required_node_affinity.push_back(std::move(term));
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Template(std::string json) {
  CurrentPodSet().template_json = std::move(json);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Condition(::kq::Condition condition) {
  SetCondition(&object_.conditions, std::move(condition));
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Condition(std::string type,
                                            std::string status,
                                            std::string reason,
                                            std::string message,
                                            absl::Time time) {
  return Condition(::kq::Condition{.type = std::move(type),
                                   .status = std::move(status),
                                   .reason = std::move(reason),
                                   .message = std::move(message),
                                   .last_transition_time = time});
}

WorkloadBuilder& WorkloadBuilder::ReserveQuota(Admission admission,
                                               absl::Time time) {
  object_.admission = std::move(admission);
  return Condition(
      kConditionQuotaReserved, "True", "QuotaReserved",
      "Quota reserved in ClusterQueue " + object_.admission->cluster_queue,
      time);
}

WorkloadBuilder& WorkloadBuilder::Admitted(Admission admission,
                                           absl::Time time) {
  ReserveQuota(std::move(admission), time);
  return Condition(kConditionAdmitted, "True", "Admitted",
                   "The workload is admitted", time);
}

WorkloadBuilder& WorkloadBuilder::Finished(std::string reason,
                                           absl::Time time) {
  return Condition(kConditionFinished, "True", std::move(reason), "", time);
}

WorkloadBuilder& WorkloadBuilder::AdmissionCheck(std::string name,
                                                 std::string state,
                                                 std::string message,
                                                 absl::Time time) {
  object_.admission_checks.push_back({.name = std::move(name),
                                      .state = std::move(state),
                                      .last_transition_time = time,
                                      .message = std::move(message)});
  return *this;
}

WorkloadBuilder& WorkloadBuilder::RequeueCount(int32_t count) {
  kq::SetRequeueCount(object_, count);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::RequeueAt(absl::Time time) {
  kq::SetRequeueAt(object_, time);
  return *this;
}

::kq::PodSet& WorkloadBuilder::CurrentPodSet() {
  if (object_.pod_sets.empty()) PodSet("main", 1);
  return object_.pod_sets.back();
}

}  // namespace kq::testing
