#include "cli/kinds.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace kq::cli {
namespace {

// Indexed by Kind.
constexpr KindInfo kKinds[] = {
    {Kind::kResourceFlavor, "ResourceFlavor", "resourceflavor.kueue.x-k8s.io",
     false},
    {Kind::kClusterQueue, "ClusterQueue", "clusterqueue.kueue.x-k8s.io", false},
    {Kind::kCohort, "Cohort", "cohort.kueue.x-k8s.io", false},
    {Kind::kLocalQueue, "LocalQueue", "localqueue.kueue.x-k8s.io", true},
    {Kind::kWorkloadPriorityClass, "WorkloadPriorityClass",
     "workloadpriorityclass.kueue.x-k8s.io", false},
    {Kind::kAdmissionCheck, "AdmissionCheck", "admissioncheck.kueue.x-k8s.io",
     false},
    {Kind::kProvisioningRequestConfig, "ProvisioningRequestConfig",
     "provisioningrequestconfig.kueue.x-k8s.io", false},
    {Kind::kMultiKueueConfig, "MultiKueueConfig",
     "multikueueconfig.kueue.x-k8s.io", false},
    {Kind::kMultiKueueCluster, "MultiKueueCluster",
     "multikueuecluster.kueue.x-k8s.io", false},
    {Kind::kNamespace, "Namespace", "namespace", false},
    {Kind::kWorkload, "Workload", "workload.kueue.x-k8s.io", true},
};

// What users may type, lower case, without the API group.
struct Alias {
  const char* text;
  Kind kind;
};
constexpr Alias kAliases[] = {
    {"clusterqueue", Kind::kClusterQueue},
    {"clusterqueues", Kind::kClusterQueue},
    {"cq", Kind::kClusterQueue},
    {"localqueue", Kind::kLocalQueue},
    {"localqueues", Kind::kLocalQueue},
    {"lq", Kind::kLocalQueue},
    {"queue", Kind::kLocalQueue},
    {"queues", Kind::kLocalQueue},
    {"resourceflavor", Kind::kResourceFlavor},
    {"resourceflavors", Kind::kResourceFlavor},
    {"rf", Kind::kResourceFlavor},
    {"flavor", Kind::kResourceFlavor},
    {"flavors", Kind::kResourceFlavor},
    {"cohort", Kind::kCohort},
    {"cohorts", Kind::kCohort},
    {"co", Kind::kCohort},
    {"workloadpriorityclass", Kind::kWorkloadPriorityClass},
    {"workloadpriorityclasses", Kind::kWorkloadPriorityClass},
    {"wpc", Kind::kWorkloadPriorityClass},
    {"admissioncheck", Kind::kAdmissionCheck},
    {"admissionchecks", Kind::kAdmissionCheck},
    {"ac", Kind::kAdmissionCheck},
    {"provisioningrequestconfig", Kind::kProvisioningRequestConfig},
    {"provisioningrequestconfigs", Kind::kProvisioningRequestConfig},
    {"prc", Kind::kProvisioningRequestConfig},
    {"provreqconfig", Kind::kProvisioningRequestConfig},
    {"provreqconfigs", Kind::kProvisioningRequestConfig},
    {"multikueueconfig", Kind::kMultiKueueConfig},
    {"multikueueconfigs", Kind::kMultiKueueConfig},
    {"mkconf", Kind::kMultiKueueConfig},
    {"multikueuecluster", Kind::kMultiKueueCluster},
    {"multikueueclusters", Kind::kMultiKueueCluster},
    {"mkc", Kind::kMultiKueueCluster},
    {"workload", Kind::kWorkload},
    {"workloads", Kind::kWorkload},
    {"wl", Kind::kWorkload},
    {"kwl", Kind::kWorkload},
    {"namespace", Kind::kNamespace},
    {"namespaces", Kind::kNamespace},
    {"ns", Kind::kNamespace},
};

}  // namespace

absl::StatusOr<KindInfo> ResolveKind(absl::string_view text) {
  std::string lower = absl::AsciiStrToLower(text);
  absl::string_view bare = lower;
  // kubectl accepts the group-qualified form ("clusterqueues.kueue.x-k8s.io").
  absl::ConsumeSuffix(&bare, ".kueue.x-k8s.io");
  for (const Alias& alias : kAliases) {
    if (bare == alias.text) {
      return InfoOf(alias.kind);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the server doesn't have a resource type \"", text, "\""));
}

const KindInfo& InfoOf(Kind kind) { return kKinds[static_cast<int>(kind)]; }

absl::StatusOr<Kind> KindOf(const v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kNamespace:
      return Kind::kNamespace;
    case v1::ConfigObject::kResourceFlavor:
      return Kind::kResourceFlavor;
    case v1::ConfigObject::kClusterQueue:
      return Kind::kClusterQueue;
    case v1::ConfigObject::kCohort:
      return Kind::kCohort;
    case v1::ConfigObject::kLocalQueue:
      return Kind::kLocalQueue;
    case v1::ConfigObject::kWorkloadPriorityClass:
      return Kind::kWorkloadPriorityClass;
    case v1::ConfigObject::kAdmissionCheck:
      return Kind::kAdmissionCheck;
    case v1::ConfigObject::kProvisioningRequestConfig:
      return Kind::kProvisioningRequestConfig;
    case v1::ConfigObject::kMultiKueueConfig:
      return Kind::kMultiKueueConfig;
    case v1::ConfigObject::kMultiKueueCluster:
      return Kind::kMultiKueueCluster;
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("configuration object has no kind");
}

std::string QualifiedName(Kind kind, absl::string_view name) {
  return absl::StrCat(InfoOf(kind).resource, "/", name);
}

bool IsWorkloadKind(absl::string_view text) {
  absl::StatusOr<KindInfo> info = ResolveKind(text);
  return info.ok() && info->kind == Kind::kWorkload;
}

}  // namespace kq::cli
