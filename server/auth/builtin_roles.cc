// The ClusterRoles kq builds in. Kueue's come from its
// config/components/rbac/*_role.yaml, named as `namePrefix: kueue-`
// installs them, with their labels, so that aggregation and label
// selection work as in Kueue. Their verbs are Kubernetes' plus the kq
// verbs that stand for what Kueue users do through other objects:
//   - a Kueue batch user creates and deletes Jobs (job-editor-role); in kq
//     that is submitting and cancelling workloads, so kq's
//     kueue-job-editor-role grants workloads create and cancel;
//   - editing a ClusterQueue's or LocalQueue's spec.stopPolicy (kueuectl
//     stop/resume) is `stop`;
//   - patching a Workload's spec.active is `setactive`, evicting one by
//     hand `preempt`, both workload-editor's;
//   - the Kueue controller's own rights (workloads/status) are the
//     runner's `run` and the admission-check controllers' `checkstate`.
// Kueue ships no role for WorkloadPriorityClasses, AdmissionChecks,
// ProvisioningRequestConfigs, MultiKueueConfigs or MultiKueueClusters (only
// cluster-admin may write them there, and only Kueue's manager role reads
// the last two); kq adds editor and viewer roles for them to batch-admin, so
// a batch administrator can apply the seed and the MultiKueue setup, and
// lets the check controllers (kq-controller-role) read every check's
// parameters, as Kueue's manager does.

#include "server/auth/rbac.h"

namespace kq::auth {

absl::string_view BuiltinRolesYaml() {
  static constexpr char kRoles[] = R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-admin
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["*"]
- nonResourceURLs: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-batch-admin-role
aggregationRule:
  clusterRoleSelectors:
  - matchLabels:
      rbac.kueue.x-k8s.io/batch-admin: "true"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-batch-user-role
aggregationRule:
  clusterRoleSelectors:
  - matchLabels:
      rbac.kueue.x-k8s.io/batch-user: "true"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-clusterqueue-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: clusterqueue-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [clusterqueues]
  verbs: [create, delete, get, list, patch, update, watch, stop]
- apiGroups: [kueue.x-k8s.io]
  resources: [clusterqueues/status]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-clusterqueue-viewer-role
  labels:
    rbac.kueue.x-k8s.io/role: clusterqueue-viewer
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [clusterqueues]
  verbs: [get, list, watch]
- apiGroups: [kueue.x-k8s.io]
  resources: [clusterqueues/status]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-cohort-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: cohort-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [cohorts]
  verbs: [create, delete, get, list, patch, update, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-cohort-viewer-role
  labels:
    rbac.kueue.x-k8s.io/role: cohort-viewer
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [cohorts]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-localqueue-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: localqueue-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [localqueues]
  verbs: [create, delete, get, list, patch, update, watch, stop]
- apiGroups: [kueue.x-k8s.io]
  resources: [localqueues/status]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-localqueue-viewer-role
  labels:
    rbac.kueue.x-k8s.io/role: localqueue-viewer
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.kueue.x-k8s.io/batch-user: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-edit: "true"
    rbac.authorization.k8s.io/aggregate-to-view: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [localqueues]
  verbs: [get, list, watch]
- apiGroups: [kueue.x-k8s.io]
  resources: [localqueues/status]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-resourceflavor-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: resourceflavor-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [resourceflavors]
  verbs: [create, delete, get, list, patch, update, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-resourceflavor-viewer-role
  labels:
    rbac.kueue.x-k8s.io/role: resourceflavor-viewer
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [resourceflavors]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-workload-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: workload-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [create, delete, get, list, patch, update, watch, cancel, setactive,
          preempt]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads/status]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-workload-viewer-role
  labels:
    rbac.kueue.x-k8s.io/role: workload-viewer
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.kueue.x-k8s.io/batch-user: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-edit: "true"
    rbac.authorization.k8s.io/aggregate-to-view: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [get, list, watch]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads/status]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-topology-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: topology-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [topologies]
  verbs: [create, delete, get, list, patch, update, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-topology-viewer-role
  labels:
    rbac.kueue.x-k8s.io/role: topology-viewer
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [topologies]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-pending-workloads-cq-viewer-role
  labels:
    rbac.kueue.x-k8s.io/role: pending-workloads-cq-viewer
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-edit: "true"
    rbac.authorization.k8s.io/aggregate-to-view: "true"
rules:
- apiGroups: [visibility.kueue.x-k8s.io]
  resources: [clusterqueues/pendingworkloads]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-pending-workloads-lq-viewer-role
  labels:
    rbac.kueue.x-k8s.io/role: pending-workloads-lq-viewer
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.kueue.x-k8s.io/batch-user: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
    rbac.authorization.k8s.io/aggregate-to-edit: "true"
    rbac.authorization.k8s.io/aggregate-to-view: "true"
rules:
- apiGroups: [visibility.kueue.x-k8s.io]
  resources: [localqueues/pendingworkloads]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-job-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: job-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
    rbac.kueue.x-k8s.io/batch-user: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [create, cancel]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kueue-metrics-reader
rules:
- nonResourceURLs: ["/metrics"]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kq-workloadpriorityclass-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: workloadpriorityclass-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloadpriorityclasses]
  verbs: [create, delete, get, list, patch, update, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kq-admissioncheck-editor-role
  labels:
    rbac.kueue.x-k8s.io/role: admissioncheck-editor
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [admissionchecks, provisioningrequestconfigs, multikueueconfigs,
              multikueueclusters]
  verbs: [create, delete, get, list, patch, update, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kq-namespace-editor-role
  labels:
    rbac.kueue.x-k8s.io/batch-admin: "true"
rules:
- apiGroups: [""]
  resources: [namespaces]
  verbs: [create, delete, get, list, patch, update, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kq-runner-role
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [get, watch, run]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kq-controller-role
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [get, list, watch, checkstate]
- apiGroups: [kueue.x-k8s.io]
  resources: [admissionchecks, provisioningrequestconfigs, multikueueconfigs,
              multikueueclusters]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kq-shim-role
aggregationRule:
  clusterRoleSelectors:
  - matchExpressions:
    - key: rbac.kueue.x-k8s.io/role
      operator: In
      values: [clusterqueue-viewer, cohort-viewer, localqueue-viewer,
               resourceflavor-viewer, topology-viewer]
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [create, get, list, watch, cancel, run, checkstate, setactive]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloadpriorityclasses, admissionchecks,
              provisioningrequestconfigs]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [users, groups]
  verbs: [impersonate]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kq-multikueue-manager-role
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [get, list, watch]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads/multikueue]
  verbs: [create, update, delete]
)";
  return kRoles;
}

}  // namespace kq::auth
