#pragma once

// What the files of kq's webhook validation share (validation.cc and one
// file per Kueue webhook); not part of core's interface (validation.h).

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

#include "server/core/objects.h"

namespace kq {

// InvalidArgument "<path>: <reason>".
absl::Status Invalid(absl::string_view path, absl::string_view reason);
// A Kubernetes resource name: an optional DNS-subdomain prefix and a
// qualified name.
absl::Status ValidateResourceName(absl::string_view path,
                                  absl::string_view name);
absl::Status ValidateMeta(const ObjectMeta& meta, bool namespaced);
absl::Status ValidateNonNegative(absl::string_view path, Quantity q);
absl::Status ValidateSelector(absl::string_view path,
                              const LabelSelector& selector);
absl::Status ValidateTolerations(absl::string_view path,
                                 const std::vector<Toleration>& tolerations);

// The webhooks of the kinds with files of their own.
absl::Status ValidateWeight(const std::optional<Quantity>& weight);
absl::Status ValidateClusterQueue(const ClusterQueue& cq);
absl::Status ValidateCohort(const Cohort& cohort);
absl::Status ValidateProvisioningRequestConfig(
    const ProvisioningRequestConfig& prc);
absl::Status ValidateMultiKueueConfig(const MultiKueueConfig& config);
absl::Status ValidateMultiKueueCluster(const MultiKueueCluster& cluster);

}  // namespace kq
