#include "server/auth/rbac.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kq::auth {
namespace {

UserInfo User(std::string name, std::vector<std::string> groups = {}) {
  groups.push_back(kAuthenticatedGroup);
  return {std::move(name), std::move(groups)};
}

Attributes Workloads(std::string verb, std::string ns, std::string name = "") {
  Attributes a;
  a.verb = std::move(verb);
  a.resource = "workloads";
  a.namespace_name = std::move(ns);
  a.name = std::move(name);
  return a;
}

Attributes ClusterScoped(std::string verb, std::string resource) {
  Attributes a;
  a.verb = std::move(verb);
  a.resource = std::move(resource);
  return a;
}

std::shared_ptr<const Policy> MustParse(
    const std::string& yaml, std::vector<std::string>* warnings = nullptr) {
  absl::StatusOr<std::shared_ptr<const Policy>> p =
      Policy::Parse(yaml, warnings);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : nullptr;
}

// The two manifests on Kueue's RBAC page
// (site/content/en/docs/tasks/manage/rbac.md), verbatim.
constexpr char kKueueDocsBindings[] = R"(# batch-admin-role-binding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: read-pods
subjects:
- kind: User
  name: admin@example.com
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: ClusterRole
  name: kueue-batch-admin-role
  apiGroup: rbac.authorization.k8s.io
---
# team-a-batch-user-role-binding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: read-pods
  namespace: team-a
subjects:
- kind: Group
  name: team-a@example.com
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: ClusterRole
  name: kueue-batch-user-role
  apiGroup: rbac.authorization.k8s.io
)";

TEST(RbacTest, KueueDocsBindingsLoadVerbatim) {
  auto policy = MustParse(kKueueDocsBindings);
  ASSERT_NE(policy, nullptr);
  EXPECT_EQ(policy->binding_count(), 2);
  const UserInfo carol = User("carol", {"team-a@example.com"});
  EXPECT_TRUE(policy->Authorize(carol, Workloads("create", "team-a")).allowed);
  EXPECT_TRUE(policy->Authorize(carol, Workloads("cancel", "team-a")).allowed);
  EXPECT_FALSE(policy->Authorize(carol, Workloads("create", "team-b")).allowed);
  const UserInfo admin = User("admin@example.com");
  EXPECT_TRUE(policy->Authorize(admin, ClusterScoped("create", "clusterqueues"))
                  .allowed);
  EXPECT_TRUE(policy->Authorize(admin, Workloads("preempt", "team-b")).allowed);
}

TEST(RbacTest, BatchUserReadsQueuesButNotQuota) {
  auto policy = MustParse(kKueueDocsBindings);
  const UserInfo carol = User("carol", {"team-a@example.com"});
  Attributes lq = Workloads("list", "team-a");
  lq.resource = "localqueues";
  EXPECT_TRUE(policy->Authorize(carol, lq).allowed);
  EXPECT_FALSE(
      policy->Authorize(carol, ClusterScoped("get", "clusterqueues")).allowed);
  // Kueue's batch user views workloads but cannot patch spec.active or
  // preempt (workload-editor is batch-admin's only).
  EXPECT_TRUE(policy->Authorize(carol, Workloads("get", "team-a")).allowed);
  EXPECT_FALSE(
      policy->Authorize(carol, Workloads("setactive", "team-a")).allowed);
  EXPECT_FALSE(policy->Authorize(carol, Workloads("run", "team-a")).allowed);
  Attributes pending;
  pending.verb = "get";
  pending.api_group = kVisibilityGroup;
  pending.resource = "localqueues";
  pending.subresource = "pendingworkloads";
  pending.namespace_name = "team-a";
  EXPECT_TRUE(policy->Authorize(carol, pending).allowed);
  pending.resource = "clusterqueues";
  pending.namespace_name = "";
  EXPECT_FALSE(policy->Authorize(carol, pending).allowed);
}

// Kubernetes: "RoleBindings in a given namespace only have effect in that
// namespace", even when they name a ClusterRole.
TEST(RbacTest, RoleBindingToClusterRoleStaysInItsNamespace) {
  auto policy = MustParse(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ns-admin, namespace: team-a}
subjects: [{kind: User, name: lead}]
roleRef: {kind: ClusterRole, name: cluster-admin}
)");
  const UserInfo lead = User("lead");
  EXPECT_TRUE(policy->Authorize(lead, Workloads("delete", "team-a")).allowed);
  EXPECT_FALSE(policy->Authorize(lead, Workloads("get", "team-b")).allowed);
  EXPECT_FALSE(policy->Authorize(lead, Workloads("list", "")).allowed);
  EXPECT_FALSE(
      policy->Authorize(lead, ClusterScoped("get", "clusterqueues")).allowed);
  Attributes metrics;
  metrics.verb = "get";
  metrics.path = "/metrics";
  EXPECT_FALSE(policy->Authorize(lead, metrics).allowed);
}

TEST(RbacTest, ReasonNamesTheBindingAsKubeApiserverDoes) {
  auto policy = MustParse(kKueueDocsBindings);
  Decision d = policy->Authorize(User("carol", {"team-a@example.com"}),
                                 Workloads("create", "team-a"));
  EXPECT_EQ(d.reason,
            "RBAC: allowed by RoleBinding \"read-pods/team-a\" of ClusterRole "
            "\"kueue-batch-user-role\" to Group \"team-a@example.com\"");
  d = policy->Authorize(User("admin@example.com"),
                        ClusterScoped("update", "cohorts"));
  EXPECT_EQ(d.reason,
            "RBAC: allowed by ClusterRoleBinding \"read-pods\" of ClusterRole "
            "\"kueue-batch-admin-role\" to User \"admin@example.com\"");
}

TEST(RbacTest, ForbiddenMessagesUseKubeApiserversWording) {
  const UserInfo alice = User("alice", {"team-a"});
  EXPECT_EQ(ForbiddenMessage(alice, Workloads("cancel", "team-b")),
            "user \"alice\" cannot cancel resource \"workloads\" in the "
            "namespace \"team-b\"; groups: team-a, system:authenticated");
  EXPECT_EQ(ForbiddenMessage(alice, Workloads("list", "")),
            "user \"alice\" cannot list resource \"workloads\" at the cluster "
            "scope; groups: team-a, system:authenticated");
  Attributes metrics;
  metrics.verb = "get";
  metrics.path = "/metrics";
  EXPECT_EQ(ForbiddenMessage(alice, metrics),
            "user \"alice\" cannot get path \"/metrics\"; groups: team-a, "
            "system:authenticated");
  auto policy = MustParse("");
  EXPECT_EQ(policy->Authorize(alice, Workloads("cancel", "team-b")).reason,
            ForbiddenMessage(alice, Workloads("cancel", "team-b")));
}

// The read-only role of Kueue's RBAC page, built by aggregation over the
// rbac.kueue.x-k8s.io/role label.
TEST(RbacTest, AggregationSelectsBuiltInRolesByLabel) {
  auto policy = MustParse(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-queue-readonly
aggregationRule:
  clusterRoleSelectors:
  - matchExpressions:
    - key: rbac.kueue.x-k8s.io/role
      operator: In
      values:
      - clusterqueue-viewer
      - localqueue-viewer
      - workload-viewer
rules: [] # The control plane fills this in.
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: readers}
subjects: [{kind: Group, name: sre}]
roleRef: {kind: ClusterRole, name: kueue-queue-readonly}
)");
  const UserInfo sre = User("sam", {"sre"});
  EXPECT_TRUE(
      policy->Authorize(sre, ClusterScoped("list", "clusterqueues")).allowed);
  EXPECT_TRUE(policy->Authorize(sre, Workloads("watch", "")).allowed);
  EXPECT_FALSE(policy->Authorize(sre, Workloads("cancel", "team-a")).allowed);
  EXPECT_FALSE(
      policy->Authorize(sre, ClusterScoped("list", "cohorts")).allowed);
}

TEST(RbacTest, CustomRulesMatchVerbsResourcesAndNames) {
  auto policy = MustParse(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: stopper, namespace: team-a}
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [localqueues]
  resourceNames: [lq]
  verbs: [stop]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: stoppers, namespace: team-a}
subjects: [{kind: ServiceAccount, name: ops}]
roleRef: {kind: Role, name: stopper}
)");
  const UserInfo ops = User("system:serviceaccount:team-a:ops");
  Attributes stop = Workloads("stop", "team-a", "lq");
  stop.resource = "localqueues";
  EXPECT_TRUE(policy->Authorize(ops, stop).allowed);
  stop.name = "other";
  EXPECT_FALSE(policy->Authorize(ops, stop).allowed);
  EXPECT_FALSE(
      policy->Authorize(User("ops"), Workloads("stop", "team-a")).allowed);
}

TEST(RbacTest, MetricsReaderGrantsThePathOnly) {
  auto policy = MustParse(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: prometheus}
subjects: [{kind: User, name: prometheus}]
roleRef: {kind: ClusterRole, name: kueue-metrics-reader}
)");
  Attributes metrics;
  metrics.verb = "get";
  metrics.path = "/metrics";
  EXPECT_TRUE(policy->Authorize(User("prometheus"), metrics).allowed);
  metrics.path = "/debug";
  EXPECT_FALSE(policy->Authorize(User("prometheus"), metrics).allowed);
  EXPECT_FALSE(policy->Authorize(User("prometheus"), Workloads("get", "team-a"))
                   .allowed);
}

TEST(RbacTest, ShimRoleImpersonatesAndRunsEverywhere) {
  auto policy = MustParse(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: shim}
subjects: [{kind: User, name: kq-k8s-shim}]
roleRef: {kind: ClusterRole, name: kq-shim-role}
)");
  const UserInfo shim = User("kq-k8s-shim");
  Attributes impersonate;
  impersonate.verb = "impersonate";
  impersonate.api_group = "";
  impersonate.resource = "users";
  impersonate.name = "alice";
  EXPECT_TRUE(policy->Authorize(shim, impersonate).allowed);
  EXPECT_TRUE(policy->Authorize(shim, Workloads("run", "x")).allowed);
  EXPECT_TRUE(policy->Authorize(shim, Workloads("create", "y")).allowed);
  EXPECT_TRUE(
      policy->Authorize(shim, ClusterScoped("list", "clusterqueues")).allowed);
  EXPECT_FALSE(policy->Authorize(shim, ClusterScoped("update", "clusterqueues"))
                   .allowed);
}

TEST(RbacTest, RedefiningABuiltInRoleKeepsItWithAWarning) {
  std::vector<std::string> warnings;
  auto policy = MustParse(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kueue-batch-user-role}
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: users, namespace: team-a}
subjects: [{kind: Group, name: team-a}]
roleRef: {kind: ClusterRole, name: kueue-batch-user-role}
)",
                          &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("is built into kqd"), std::string::npos);
  EXPECT_FALSE(
      policy->Authorize(User("a", {"team-a"}), Workloads("delete", "team-a"))
          .allowed);
}

TEST(RbacTest, BindingToAMissingRoleWarnsAndGrantsNothing) {
  std::vector<std::string> warnings;
  auto policy = MustParse(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: typo}
subjects: [{kind: User, name: a}]
roleRef: {kind: ClusterRole, name: kueue-batch-admn-role}
)",
                          &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("\"kueue-batch-admn-role\" does not exist"),
            std::string::npos);
  EXPECT_FALSE(
      policy->Authorize(User("a"), Workloads("get", "team-a")).allowed);
}

TEST(RbacTest, ListOfBindingsIsRead) {
  auto policy = MustParse(R"(
apiVersion: v1
kind: List
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: a}
  subjects: [{kind: User, name: a}]
  roleRef: {kind: ClusterRole, name: cluster-admin}
)");
  EXPECT_EQ(policy->binding_count(), 1);
}

struct BadPolicy {
  const char* name;
  const char* yaml;
  const char* error;
};

void PrintTo(const BadPolicy& p, std::ostream* os) { *os << p.name; }

class RbacBadPolicyTest : public testing::TestWithParam<BadPolicy> {};

TEST_P(RbacBadPolicyTest, IsRefusedNamingTheField) {
  absl::StatusOr<std::shared_ptr<const Policy>> p =
      Policy::Parse(GetParam().yaml);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(p.status().message()), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RbacBadPolicyTest,
    testing::Values(
        BadPolicy{"WrongKind",
                  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
                  "document 1 (ConfigMap \"x\"): kind: unsupported value "
                  "\"ConfigMap\": the bindings file holds ClusterRoleBinding, "
                  "RoleBinding, ClusterRole and Role"},
        BadPolicy{"WrongVersion",
                  "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: "
                  "ClusterRoleBinding\nmetadata: {name: x}\n",
                  "document 1 (ClusterRoleBinding \"x\"): apiVersion: "
                  "unsupported value \"rbac.authorization.k8s.io/v1beta1\": "
                  "must be rbac.authorization.k8s.io/v1"},
        BadPolicy{"RoleBindingWithoutNamespace",
                  "apiVersion: rbac.authorization.k8s.io/v1\nkind: "
                  "RoleBinding\nmetadata: {name: x}\nroleRef: {kind: "
                  "ClusterRole, name: cluster-admin}\n",
                  "document 1 (RoleBinding \"x\"): metadata.namespace: is "
                  "required for a RoleBinding"},
        BadPolicy{"NoRoleRef",
                  "apiVersion: rbac.authorization.k8s.io/v1\nkind: "
                  "ClusterRoleBinding\nmetadata: {name: x}\n",
                  "document 1 (ClusterRoleBinding \"x\"): roleRef: is "
                  "required"},
        BadPolicy{"BadSubjectKind",
                  "apiVersion: rbac.authorization.k8s.io/v1\nkind: "
                  "ClusterRoleBinding\nmetadata: {name: x}\nroleRef: {kind: "
                  "ClusterRole, name: a}\nsubjects: [{kind: Team, name: t}]\n",
                  "document 1 (ClusterRoleBinding \"x\"): subjects[0].kind: "
                  "unsupported value \"Team\": must be User, Group or "
                  "ServiceAccount"},
        BadPolicy{"RuleWithoutVerbs",
                  "apiVersion: rbac.authorization.k8s.io/v1\nkind: "
                  "ClusterRole\nmetadata: {name: r}\nrules: [{resources: "
                  "[workloads]}]\n",
                  "document 1 (ClusterRole \"r\"): rules[0].verbs: is "
                  "required"},
        BadPolicy{"DuplicateBinding",
                  "apiVersion: rbac.authorization.k8s.io/v1\nkind: "
                  "ClusterRoleBinding\nmetadata: {name: x}\nroleRef: {kind: "
                  "ClusterRole, name: a}\n---\napiVersion: "
                  "rbac.authorization.k8s.io/v1\nkind: "
                  "ClusterRoleBinding\nmetadata: {name: x}\nroleRef: {kind: "
                  "ClusterRole, name: a}\n",
                  "ClusterRoleBinding \"x\" is defined twice"},
        BadPolicy{"NotYaml", "a: [",
                  "yaml: line 2, column 1: did not find expected node "
                  "content (while parsing a flow node at line 2)"}),
    [](const testing::TestParamInfo<BadPolicy>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace kq::auth
