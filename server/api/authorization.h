#pragma once

// Which Kubernetes request each kq call is (ops-security.md §3.4): the
// resource, verb and scope the RBAC policy decides on. Kinds are Kueue's
// plural resource names; a namespaced kind without a namespace is a
// request at the cluster scope (every namespace).

#include <string>

#include "server/auth/access.h"
#include "server/auth/rbac.h"
#include "server/core/objects.h"

namespace kq::api {

// The API group and plural resource of a kind ("kueue.x-k8s.io",
// "clusterqueues"; Namespace is the core group's "namespaces").
struct Resource {
  const char* api_group;
  const char* plural;
};
Resource ResourceOf(ObjectKind kind);

// A request on a kind; `namespace_name` is ignored for cluster-scoped
// kinds.
auth::Attributes ObjectRequest(const std::string& verb, ObjectKind kind,
                               const std::string& namespace_name,
                               const std::string& name);

inline auth::Attributes WorkloadRequest(const std::string& verb,
                                        const std::string& namespace_name,
                                        const std::string& name = "") {
  return ObjectRequest(verb, ObjectKind::kWorkload, namespace_name, name);
}

// Records who submitted `wl` (kSubmitterAnnotation) when authentication
// is on, replacing what the client wrote there: the owner rule trusts it.
void StampSubmitter(const auth::Principal& principal, bool enabled,
                    Workload& wl);

// The reason the audit log gives for a call the owner rule allowed.
inline constexpr char kOwnerRuleReason[] =
    "kq: allowed as the workload's submitter (--owner-may-run)";

}  // namespace kq::api
