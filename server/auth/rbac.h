#pragma once

// Kubernetes RBAC (rbac.authorization.k8s.io/v1) over kq's calls: roles,
// bindings and the decision, with Kubernetes' semantics (additive rules,
// no deny; a RoleBinding only counts in its namespace, even when it names a
// ClusterRole; ClusterRole aggregation by label) and its wording. The
// ClusterRoles Kueue installs are built in, their rules written in kq's
// verbs (BuiltinRolesYaml), so that bindings from Kueue's RBAC page load
// unchanged. Pure: no I/O; PolicyFiles reads the file.

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "server/auth/principal.h"

namespace kq::auth {

// Kueue's API group, and the group of its visibility API.
inline constexpr char kKueueGroup[] = "kueue.x-k8s.io";
inline constexpr char kVisibilityGroup[] = "visibility.kueue.x-k8s.io";

// What a call asks to do: Kubernetes' authorizer.Attributes. kq's verbs are
// Kubernetes' (get, list, watch, create, update, delete) plus cancel, run
// (heartbeat, finish, reclaimable pods), preempt, setactive, stop,
// checkstate (admission-check state) and impersonate.
struct Attributes {
  std::string verb;
  // A resource request unless `path` is set.
  std::string api_group = kKueueGroup;
  std::string resource;
  std::string subresource;
  // Empty: cluster scope (a cluster-scoped kind, or every namespace).
  std::string namespace_name;
  std::string name;
  // A non-resource request ("/metrics").
  std::string path;
};

struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;
  std::vector<std::string> non_resource_urls;

  bool Allows(const Attributes& request) const;
};

struct Subject {
  std::string kind;  // User, Group or ServiceAccount
  std::string name;
  std::string namespace_name;  // ServiceAccount only
};

struct Binding {
  std::string kind;  // RoleBinding or ClusterRoleBinding
  std::string name;
  std::string namespace_name;  // RoleBinding only
  std::string role_kind;       // ClusterRole or Role
  std::string role_name;
  std::vector<Subject> subjects;
};

// Why a request was allowed or refused, in the audit log's words.
struct Decision {
  bool allowed = false;
  // `RBAC: allowed by RoleBinding "team-a-users/team-a" of ClusterRole
  // "kueue-batch-user-role" to Group "team-a"`, or why not.
  std::string reason;
};

// The refusal kqd answers, in kube-apiserver's words: `user "alice" cannot
// cancel resource "workloads" in the namespace "team-b"; groups: team-a,
// system:authenticated`.
std::string ForbiddenMessage(const UserInfo& user, const Attributes& request);

// The roles and bindings in force. Immutable once built; shared by calls.
class Policy {
 public:
  // Parses a bindings file: YAML documents of kind ClusterRoleBinding,
  // RoleBinding, ClusterRole and Role (rbac.authorization.k8s.io/v1), or a
  // List of them. InvalidArgument naming the document and field. The
  // built-in ClusterRoles are always there; a document redefining one is
  // ignored with a warning (in `warnings`), so Kueue's own manifests load.
  static absl::StatusOr<std::shared_ptr<const Policy>> Parse(
      absl::string_view yaml, std::vector<std::string>* warnings = nullptr);

  Decision Authorize(const UserInfo& user, const Attributes& request) const;

  int binding_count() const { return static_cast<int>(bindings_.size()); }

 private:
  struct Role {
    std::vector<PolicyRule> rules;
  };
  // "ClusterRole/name" or "Role/namespace/name".
  static std::string RoleKey(const std::string& kind,
                             const std::string& namespace_name,
                             const std::string& name);

  bool Matches(const Binding& binding, const UserInfo& user,
               const Attributes& request, const Subject** subject) const;

  absl::flat_hash_map<std::string, Role> roles_;
  std::vector<Binding> bindings_;
};

// The ClusterRoles kq builds in, as RBAC YAML: Kueue's, with labels and
// aggregation as Kueue installs them (kueue- prefix), in kq's verbs; and
// kq's own (cluster-admin, kq-runner-role, kq-controller-role,
// kq-shim-role, and editors for the kinds Kueue ships no role for).
absl::string_view BuiltinRolesYaml();

}  // namespace kq::auth
