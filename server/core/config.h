#pragma once

// The admission-relevant part of Kueue's Configuration document
// (config.kueue.x-k8s.io, kind Configuration): fair sharing and how pod
// requests become quota requests. kqd reads it from --config=FILE and `kq
// simulate` from the scenario; without one, Kueue's defaults apply (fair
// sharing off, requests as written, undeclared resources block).
//
// Example:
//   Configuration config;
//   config.fair_sharing = FairSharingConfig{};  // Kueue's default strategies
//   config.resources.exclude_resource_prefixes = {"example.com/"};
//   KQ_RETURN_IF_ERROR(ValidateConfiguration(config));
//   ResourceList quota_requests =
//       EffectiveRequests(pod_set.requests, config.resources);

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "server/core/objects.h"

namespace kq {

// Kueue's fairSharing.preemptionStrategies entries.
enum class FairSharingStrategy {
  // S2-a: preempt when the preemptor's share with the workload is at most
  // the target's share without the victim.
  kLessThanOrEqualToFinalShare,
  // S2-b: preempt when the preemptor's share with the workload is below the
  // target's share before preemption.
  kLessThanInitialShare,
};

const char* FairSharingStrategyName(FairSharingStrategy strategy);

// Fair sharing among the ClusterQueues and Cohorts of a cohort tree. Its
// presence turns fair sharing on. Value type.
struct FairSharingConfig {
  // Tried in order; Kueue accepts [S2-a], [S2-b] and [S2-a, S2-b].
  std::vector<FairSharingStrategy> preemption_strategies = {
      FairSharingStrategy::kLessThanOrEqualToFinalShare,
      FairSharingStrategy::kLessThanInitialShare};
  friend bool operator==(const FairSharingConfig&,
                         const FairSharingConfig&) = default;
};

// What happens to the input resource of a transformation.
enum class TransformationStrategy { kRetain, kReplace };

// Kueue's ResourceTransformation: pod requests of `input` also (Retain) or
// instead (Replace) count as `outputs`, per unit of input.
struct ResourceTransformation {
  std::string input;
  TransformationStrategy strategy = TransformationStrategy::kRetain;
  // When set and requested, the input amount is multiplied by the amount of
  // this resource before computing the outputs.
  std::string multiply_by;
  ResourceList outputs;
  friend bool operator==(const ResourceTransformation&,
                         const ResourceTransformation&) = default;
};

// Kueue's resources.quotaCheckStrategy.
enum class QuotaCheckStrategy {
  // A positive request of a resource the ClusterQueue does not cover makes
  // the workload NoFit.
  kBlockUndeclared,
  // Such requests are ignored.
  kIgnoreUndeclared,
};

// Kueue's Configuration.resources. Value type.
struct ResourceConfig {
  // Requests of resources whose names start with one of these are dropped.
  std::vector<std::string> exclude_resource_prefixes;
  // At most one per input resource.
  std::vector<ResourceTransformation> transformations;
  QuotaCheckStrategy quota_check_strategy =
      QuotaCheckStrategy::kBlockUndeclared;
  friend bool operator==(const ResourceConfig&,
                         const ResourceConfig&) = default;
};

// Kueue's Configuration.multiKueue, with Kueue's defaults
// (apis/config/v1beta2/defaults.go). Read by the federation runtime; no
// admission decision of a single kqd depends on it. Value type.
struct MultiKueueSettings {
  // How often remote objects without a local owner are collected; 0 turns
  // the collection off.
  absl::Duration gc_interval = absl::Minutes(1);
  // The value of kMultiKueueOriginLabel on the copies this manager makes; a
  // valid label value.
  std::string origin = "multikueue";
  // How long a workload admitted on a worker whose connection was lost
  // keeps its reservation there before it is evicted and retried.
  absl::Duration worker_lost_timeout = absl::Minutes(15);
  // kMultiKueueDispatcherAllAtOnce, kMultiKueueDispatcherIncremental, or an
  // external dispatcher's name.
  std::string dispatcher_name = kMultiKueueDispatcherAllAtOnce;
  // incrementalDispatcherConfig.stepSize: workers nominated per round by
  // the Incremental dispatcher. Only meaningful with it.
  int32_t incremental_step_size = 3;
  // kq extensions, not in Kueue:
  // incrementalDispatcherConfig.roundTimeout: how long an Incremental round
  // waits for an admission before nominating more workers (Kueue's is a
  // fixed 5 minutes).
  absl::Duration incremental_round_timeout = absl::Minutes(5);
  // multiKueue.fencing: Lease (true) makes a copy bound to one worker hold
  // a lease the manager renews; None (false, the default) does not.
  bool lease_fencing = false;
  friend bool operator==(const MultiKueueSettings&,
                         const MultiKueueSettings&) = default;
};

// Kueue's validateMultiKueue (pkg/config/validation.go) on `settings`, in
// its order: gcInterval and workerLostTimeout not negative, origin a label
// value, then, when `incremental_config_given` (the document had
// incrementalDispatcherConfig), the Incremental dispatcher selected, and
// stepSize >= 1; and kq's roundTimeout > 0. InvalidArgument naming the field
// ("multiKueue.gcInterval: Invalid value: -1s: must be greater than or equal
// to 0").
absl::Status ValidateMultiKueueSettings(const MultiKueueSettings& settings,
                                        bool incremental_config_given);

// Value type; the default is Kueue's behaviour without a Configuration.
struct Configuration {
  // Absent: fair sharing off (classical ordering and preemption).
  std::optional<FairSharingConfig> fair_sharing;
  ResourceConfig resources;
  MultiKueueSettings multi_kueue;
  friend bool operator==(const Configuration&, const Configuration&) = default;
};

// Kueue's configuration validation for these fields: the multiKueue
// section (ValidateMultiKueueSettings, without the document-only check of
// incrementalDispatcherConfig's presence), a non-empty strategy
// list among those it accepts, one transformation per input, no excluded
// prefixes with IgnoreUndeclared. InvalidArgument names the field
// ("fairSharing.preemptionStrategies: ...") of the first error Kueue's
// validation would list.
absl::Status ValidateConfiguration(const Configuration& config);

// Kueue's dropExcludedResources then applyResourceTransformations on the
// per-pod requests of a pod set. Generated outputs are summed across
// inputs and floored at 0 before merging with the retained requests.
ResourceList EffectiveRequests(const ResourceList& per_pod,
                               const ResourceConfig& resources);

}  // namespace kq
