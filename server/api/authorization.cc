#include "server/api/authorization.h"

namespace kq::api {

Resource ResourceOf(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kNamespace:
      return {"", "namespaces"};
    case ObjectKind::kResourceFlavor:
      return {auth::kKueueGroup, "resourceflavors"};
    case ObjectKind::kClusterQueue:
      return {auth::kKueueGroup, "clusterqueues"};
    case ObjectKind::kCohort:
      return {auth::kKueueGroup, "cohorts"};
    case ObjectKind::kLocalQueue:
      return {auth::kKueueGroup, "localqueues"};
    case ObjectKind::kWorkloadPriorityClass:
      return {auth::kKueueGroup, "workloadpriorityclasses"};
    case ObjectKind::kAdmissionCheck:
      return {auth::kKueueGroup, "admissionchecks"};
    case ObjectKind::kProvisioningRequestConfig:
      return {auth::kKueueGroup, "provisioningrequestconfigs"};
    case ObjectKind::kMultiKueueConfig:
      return {auth::kKueueGroup, "multikueueconfigs"};
    case ObjectKind::kMultiKueueCluster:
      return {auth::kKueueGroup, "multikueueclusters"};
    case ObjectKind::kWorkload:
      return {auth::kKueueGroup, "workloads"};
  }
  return {auth::kKueueGroup, "unknown"};
}

auth::Attributes ObjectRequest(const std::string& verb, ObjectKind kind,
                               const std::string& namespace_name,
                               const std::string& name) {
  const Resource r = ResourceOf(kind);
  auth::Attributes a;
  a.verb = verb;
  a.api_group = r.api_group;
  a.resource = r.plural;
  if (IsNamespaced(kind)) a.namespace_name = namespace_name;
  a.name = name;
  return a;
}

void StampSubmitter(const auth::Principal& principal, bool enabled,
                    Workload& wl) {
  if (!enabled) return;
  wl.meta.annotations[auth::kSubmitterAnnotation] = principal.user.name;
}

}  // namespace kq::api
