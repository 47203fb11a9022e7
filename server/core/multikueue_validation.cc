// Kueue's MultiKueueConfig and MultiKueueCluster CRD rules
// (apis/kueue/v1beta2/multikueue_types.go markers); Kueue has no webhook for
// either, so these are the API server's checks, in its words.

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "base/status_macros.h"
#include "server/core/apimachinery.h"
#include "server/core/validation_internal.h"

namespace kq {

namespace {

// Kueue keeps both behind alpha gates that kq does not turn on: a field
// that would need one is refused rather than silently ignored.
absl::Status NeedsAlphaGate(absl::string_view path, absl::string_view what,
                            absl::string_view gate) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": Forbidden: ", what, " needs Kueue's alpha feature gate ", gate,
      ", which kq does not enable"));
}

}  // namespace

absl::Status ValidateMultiKueueConfig(const MultiKueueConfig& config) {
  KQ_RETURN_IF_ERROR(ValidateMeta(config.meta, false));
  constexpr char kClusters[] = "spec.clusters";
  if (config.clusters.empty()) return RequiredValue(kClusters);
  if (config.clusters.size() > 20) {
    return TooMany(kClusters, config.clusters.size(), 20);
  }
  std::set<std::string> seen;
  bool unique = true;
  for (size_t i = 0; i < config.clusters.size(); ++i) {
    if (config.clusters[i].size() > 256) {
      return TooLong(absl::StrCat(kClusters, "[", i, "]"), 256);
    }
    unique &= seen.insert(config.clusters[i]).second;
  }
  // The CRD's CEL rule; the API server reports a CEL failure on a list as
  // the value "array".
  if (!unique) {
    return absl::InvalidArgumentError(
        absl::StrCat(kClusters, ": Invalid value: \"array\": must be unique"));
  }
  const std::string& mode = config.quota_management;
  if (mode == kQuotaManagementAutomated) {
    return NeedsAlphaGate("spec.quotaManagement", "quotaManagement Automated",
                          "MultiKueueManagerQuotaAutomation");
  }
  if (mode != kQuotaManagementManual) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.quotaManagement: Unsupported value: \"", mode,
                     "\": supported values: \"Manual\", \"Automated\""));
  }
  return absl::OkStatus();
}

absl::Status ValidateMultiKueueCluster(const MultiKueueCluster& cluster) {
  KQ_RETURN_IF_ERROR(ValidateMeta(cluster.meta, false));
  const bool has_kube_config = !cluster.location.empty();
  const bool has_profile = !cluster.cluster_profile_name.empty();
  if (has_kube_config == has_profile) {
    // The CRD's ExactlyOneOf marker.
    return absl::InvalidArgumentError(
        "spec.clusterSource: Invalid value: \"object\": exactly one of the "
        "fields in [kubeConfig clusterProfileRef] must be set");
  }
  if (has_profile) {
    constexpr char kProfile[] = "spec.clusterSource.clusterProfileRef";
    if (cluster.cluster_profile_name.size() > 256) {
      return TooLong(absl::StrCat(kProfile, ".name"), 256);
    }
    return NeedsAlphaGate(kProfile, "clusterProfileRef",
                          "MultiKueueClusterProfile");
  }
  constexpr char kLocation[] = "spec.clusterSource.kubeConfig.location";
  if (cluster.location.size() > 256) return TooLong(kLocation, 256);
  const std::string& type = cluster.location_type;
  if (type != kLocationTypeSecret && type != kLocationTypePath) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.clusterSource.kubeConfig.locationType: Unsupported value: \"",
        type, "\": supported values: \"Secret\", \"Path\""));
  }
  // Kueue (gate MultiKueueKubeConfigPathValidation, on by default) accepts
  // a Path only under /etc/multikueue/kubeconfigs, the directory its
  // manager's Pod mounts. kqd is no Pod, and a Path names a kq contexts file
  // on kqd's machine: kq asks only for an absolute path, so that what the
  // file is does not depend on the directory kqd was started in.
  if (type == kLocationTypePath && !absl::StartsWith(cluster.location, "/")) {
    return InvalidValue(kLocation, cluster.location,
                        "a Path location is a kq contexts file on kqd's "
                        "machine and must be an absolute path");
  }
  return absl::OkStatus();
}

}  // namespace kq
