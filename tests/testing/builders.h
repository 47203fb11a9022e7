#pragma once

// Fluent builders for kq's domain objects in tests, in the manner of Kueue's
// pkg/util/testing wrappers: a test says what matters about an object and
// the builder fills in the rest.
//
// Example:
//   ClusterQueue cq = ClusterQueueBuilder("cq")
//                         .Cohort("c")
//                         .ResourceGroup({"cpu", "memory"})
//                         .Flavor("default")
//                         .Quota("cpu", "9")
//                         .Quota("memory", "36Gi")
//                         .Build();
//   Workload wl = WorkloadBuilder("a")
//                     .Namespace("ns")
//                     .Queue("lq")
//                     .Priority(10)
//                     .PodSet("main", 3)
//                     .Request("cpu", "1")
//                     .Build();
//
// Setters return the builder, so calls chain; Build() returns a copy and may
// be called more than once. Quantities are Kubernetes strings; a malformed
// one is a bug in the test and aborts it. Builders are thread-compatible.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "server/core/objects.h"
#include "server/core/quantity.h"

namespace kq::testing {

// Parses a quantity literal ("500m", "2Gi"); aborts on a malformed one.
Quantity Qty(absl::string_view text);

// Prints `why` and aborts: a builder was misused, which is a bug in the test.
[[noreturn]] void AbortBuilder(absl::string_view why);

// Setters of ObjectMeta shared by every builder. `Derived` is the builder,
// `Object` the type it builds (which has a `meta` member).
template <typename Derived, typename Object>
class ObjectBuilder {
 public:
  Derived& Name(std::string name) {
    object_.meta.name = std::move(name);
    return self();
  }
  Derived& Uid(std::string uid) {
    object_.meta.uid = std::move(uid);
    return self();
  }
  Derived& Revision(int64_t revision) {
    object_.meta.revision = revision;
    return self();
  }
  Derived& Created(absl::Time time) {
    object_.meta.creation_timestamp = time;
    return self();
  }
  Derived& Label(std::string key, std::string value) {
    object_.meta.labels[std::move(key)] = std::move(value);
    return self();
  }
  Derived& Annotation(std::string key, std::string value) {
    object_.meta.annotations[std::move(key)] = std::move(value);
    return self();
  }

  // Returns the object built so far.
  Object Build() const { return object_; }

 protected:
  explicit ObjectBuilder(std::string name) {
    object_.meta.name = std::move(name);
  }
  Derived& self() { return static_cast<Derived&>(*this); }

  Object object_;
};

// Builds the resource groups of a ClusterQueue or a Cohort.
//
// ResourceGroup() starts a group with its covered resources; Flavor() selects
// (or adds) a flavor in the current group; Quota() adds a resource quota to
// the current flavor; BorrowingLimit()/LendingLimit() apply to the last
// quota. Flavor() or Quota() without a ResourceGroup() start a group whose
// covered resources are the resources given to Quota(), in order.
template <typename Derived, typename Object>
class ResourceGroupsBuilder : public ObjectBuilder<Derived, Object> {
 public:
  // Starts a new resource group covering `covered_resources`.
  Derived& ResourceGroup(std::vector<std::string> covered_resources) {
    groups().push_back({.covered_resources = std::move(covered_resources)});
    implicit_group_ = false;
    return this->self();
  }

  // Selects flavor `name` of the current group, adding it if missing.
  Derived& Flavor(const std::string& name) {
    ::kq::ResourceGroup& group = CurrentGroup();
    for (size_t i = 0; i < group.flavors.size(); ++i) {
      if (group.flavors[i].name == name) {
        flavor_index_ = i;
        return this->self();
      }
    }
    group.flavors.push_back({.name = name});
    flavor_index_ = group.flavors.size() - 1;
    return this->self();
  }

  // Adds a quota of `resource` with `nominal` to the current flavor.
  Derived& Quota(const std::string& resource, absl::string_view nominal) {
    ::kq::ResourceGroup& group = CurrentGroup();
    if (group.flavors.empty()) {
      group.flavors.push_back({.name = "default"});
      flavor_index_ = 0;
    }
    if (implicit_group_ && std::find(group.covered_resources.begin(),
                                     group.covered_resources.end(), resource) ==
                               group.covered_resources.end()) {
      group.covered_resources.push_back(resource);
    }
    group.flavors[flavor_index_].resources.push_back(
        {.name = resource, .nominal_quota = Qty(nominal)});
    return this->self();
  }

  // Flavor(flavor) then Quota(resource, nominal).
  Derived& Quota(const std::string& flavor, const std::string& resource,
                 absl::string_view nominal) {
    Flavor(flavor);
    return Quota(resource, nominal);
  }

  // Sets the borrowing limit of the last quota added.
  Derived& BorrowingLimit(absl::string_view limit) {
    LastQuota().borrowing_limit = Qty(limit);
    return this->self();
  }

  // Sets the lending limit of the last quota added.
  Derived& LendingLimit(absl::string_view limit) {
    LastQuota().lending_limit = Qty(limit);
    return this->self();
  }

  // Sets the fair-sharing weight.
  Derived& FairSharingWeight(absl::string_view weight) {
    this->object_.fair_sharing_weight = Qty(weight);
    return this->self();
  }

 protected:
  explicit ResourceGroupsBuilder(std::string name)
      : ObjectBuilder<Derived, Object>(std::move(name)) {}

 private:
  std::vector<::kq::ResourceGroup>& groups() {
    return this->object_.resource_groups;
  }

  ::kq::ResourceGroup& CurrentGroup() {
    if (groups().empty()) {
      groups().emplace_back();
      implicit_group_ = true;
      flavor_index_ = 0;
    }
    return groups().back();
  }

  ResourceQuota& LastQuota() {
    ::kq::ResourceGroup& group = CurrentGroup();
    if (group.flavors.empty() ||
        group.flavors[flavor_index_].resources.empty()) {
      AbortBuilder("BorrowingLimit/LendingLimit called before Quota");
    }
    return group.flavors[flavor_index_].resources.back();
  }

  bool implicit_group_ = false;
  size_t flavor_index_ = 0;
};

// Builds a ClusterQueue. Unlike the type's default (no namespace selector:
// admits nothing), the builder starts with an empty selector that selects
// every namespace, as Kueue's MakeClusterQueue does; NoNamespaceSelector()
// restores the type's default.
class ClusterQueueBuilder
    : public ResourceGroupsBuilder<ClusterQueueBuilder, ClusterQueue> {
 public:
  explicit ClusterQueueBuilder(std::string name);

  ClusterQueueBuilder& Cohort(std::string cohort);
  ClusterQueueBuilder& QueueingStrategy(::kq::QueueingStrategy strategy);
  // Selects every namespace (an empty selector).
  ClusterQueueBuilder& NamespaceSelectorAll();
  ClusterQueueBuilder& NoNamespaceSelector();
  ClusterQueueBuilder& NamespaceSelector(LabelSelector selector);
  ClusterQueueBuilder& WhenCanBorrow(FungibilityPolicy policy);
  ClusterQueueBuilder& WhenCanPreempt(FungibilityPolicy policy);
  ClusterQueueBuilder& FungibilityPreference(std::string preference);
  // Never, LowerPriority or Any.
  ClusterQueueBuilder& ReclaimWithinCohort(std::string policy);
  // Never or LowerPriority, with an optional maximum priority threshold.
  ClusterQueueBuilder& BorrowWithinCohort(
      std::string policy, std::optional<int32_t> max_priority = std::nullopt);
  // Never, LowerPriority or LowerOrNewerEqualPriority.
  ClusterQueueBuilder& WithinClusterQueue(std::string policy);
  // Adds an admission check; no flavors means every flavor.
  ClusterQueueBuilder& AdmissionCheck(std::string name,
                                      std::vector<std::string> on_flavors = {});
  ClusterQueueBuilder& StopPolicy(::kq::StopPolicy policy);
};

// Builds a Cohort.
class CohortBuilder : public ResourceGroupsBuilder<CohortBuilder, Cohort> {
 public:
  explicit CohortBuilder(std::string name);

  CohortBuilder& Parent(std::string parent);
};

// Builds a ResourceFlavor.
class ResourceFlavorBuilder
    : public ObjectBuilder<ResourceFlavorBuilder, ResourceFlavor> {
 public:
  explicit ResourceFlavorBuilder(std::string name);

  ResourceFlavorBuilder& NodeLabel(std::string key, std::string value);
  ResourceFlavorBuilder& Taint(std::string key, std::string value,
                               std::string effect);
  ResourceFlavorBuilder& Toleration(::kq::Toleration toleration);
  ResourceFlavorBuilder& TopologyName(std::string name);
};

// Builds a LocalQueue in `namespace_name` pointing at `cluster_queue`.
class LocalQueueBuilder : public ObjectBuilder<LocalQueueBuilder, LocalQueue> {
 public:
  LocalQueueBuilder(std::string namespace_name, std::string name,
                    std::string cluster_queue);

  LocalQueueBuilder& ClusterQueue(std::string cluster_queue);
  LocalQueueBuilder& StopPolicy(::kq::StopPolicy policy);
  LocalQueueBuilder& FairSharingWeight(absl::string_view weight);
};

// Builds a Namespace.
class NamespaceBuilder : public ObjectBuilder<NamespaceBuilder, Namespace> {
 public:
  explicit NamespaceBuilder(std::string name);
};

// Builds a WorkloadPriorityClass.
class WorkloadPriorityClassBuilder
    : public ObjectBuilder<WorkloadPriorityClassBuilder,
                           WorkloadPriorityClass> {
 public:
  explicit WorkloadPriorityClassBuilder(std::string name, int32_t value = 0);

  WorkloadPriorityClassBuilder& Value(int32_t value);
  WorkloadPriorityClassBuilder& Description(std::string description);
};

// Builds an AdmissionCheck.
class AdmissionCheckBuilder
    : public ObjectBuilder<AdmissionCheckBuilder, AdmissionCheck> {
 public:
  explicit AdmissionCheckBuilder(std::string name);

  AdmissionCheckBuilder& ControllerName(std::string controller);
  AdmissionCheckBuilder& Parameters(std::string api_group, std::string kind,
                                    std::string name);
};

// Builds an Admission: the ClusterQueue and, per pod set, the flavor of each
// resource and the usage charged. Flavor()/Usage() before any PodSet() apply
// to a pod set "main" of 1 pod.
class AdmissionBuilder {
 public:
  explicit AdmissionBuilder(std::string cluster_queue);

  // Starts the assignment of pod set `name` with `count` admitted pods.
  AdmissionBuilder& PodSet(std::string name, int32_t count);
  // Assigns `flavor` to `resource` in the current pod set.
  AdmissionBuilder& Flavor(std::string resource, std::string flavor);
  // Charges `usage` (for all pods of the pod set) of `resource`.
  AdmissionBuilder& Usage(std::string resource, absl::string_view usage);
  // Flavor(resource, flavor) then Usage(resource, usage).
  AdmissionBuilder& Assign(std::string resource, std::string flavor,
                           absl::string_view usage);

  Admission Build() const { return admission_; }

 private:
  PodSetAssignment& Current();

  Admission admission_;
};

// Builds a Workload, in namespace "default" unless Namespace() says
// otherwise. Pod-set setters (Request, MinCount, NodeSelector, ...) apply to
// the last PodSet(); called before any, they start a pod set "main" of 1 pod.
class WorkloadBuilder : public ObjectBuilder<WorkloadBuilder, Workload> {
 public:
  explicit WorkloadBuilder(std::string name);

  WorkloadBuilder& Namespace(std::string namespace_name);
  WorkloadBuilder& Queue(std::string local_queue);
  WorkloadBuilder& Priority(int32_t priority);
  // Sets the priority class name and Kueue's source for it; the priority
  // value is set separately with Priority().
  WorkloadBuilder& PriorityClass(std::string name);
  WorkloadBuilder& Active(bool active);
  WorkloadBuilder& MaximumExecutionTimeSeconds(int32_t seconds);

  // Starts a pod set of `count` pods.
  WorkloadBuilder& PodSet(std::string name, int32_t count);
  // Sets the per-pod request of `resource` in the current pod set.
  WorkloadBuilder& Request(std::string resource, absl::string_view quantity);
  WorkloadBuilder& MinCount(int32_t min_count);
  WorkloadBuilder& NodeSelector(std::string key, std::string value);
  WorkloadBuilder& Toleration(::kq::Toleration toleration);
  // Adds a required node-affinity term with one requirement.
  WorkloadBuilder& RequiredNodeAffinity(std::string key, std::string op,
                                        std::vector<std::string> values);
  // Sets the pod template, as JSON text.
  WorkloadBuilder& Template(std::string json);

  // Status.
  // Sets or replaces a condition (core's SetCondition).
  WorkloadBuilder& Condition(::kq::Condition condition);
  WorkloadBuilder& Condition(std::string type, std::string status,
                             std::string reason = "", std::string message = "",
                             absl::Time time = absl::UnixEpoch());
  // Sets the admission and QuotaReserved=True.
  WorkloadBuilder& ReserveQuota(Admission admission,
                                absl::Time time = absl::UnixEpoch());
  // Sets the admission, QuotaReserved=True and Admitted=True.
  WorkloadBuilder& Admitted(Admission admission,
                            absl::Time time = absl::UnixEpoch());
  // Sets Finished=True with `reason` (Kueue writes "Succeeded"/"Failed").
  WorkloadBuilder& Finished(std::string reason = "Succeeded",
                            absl::Time time = absl::UnixEpoch());
  // Adds the state of an admission check.
  WorkloadBuilder& AdmissionCheck(std::string name, std::string state,
                                  std::string message = "",
                                  absl::Time time = absl::UnixEpoch());
  WorkloadBuilder& RequeueCount(int32_t count);
  WorkloadBuilder& RequeueAt(absl::Time time);

 private:
  ::kq::PodSet& CurrentPodSet();
};

}  // namespace kq::testing
