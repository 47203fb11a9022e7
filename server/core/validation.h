#pragma once

// The rules Kueue's webhooks and OpenAPI schemas enforce, as kq enforces
// them. Every error is InvalidArgument with the field path in Kueue's
// camelCase, then the reason: "spec.resourceGroups[1].flavors[0].name:
// flavor \"x\" is already in resourceGroups[0]".

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

#include "server/core/objects.h"

namespace kq {

// DNS-1123 subdomain (at most 253 characters): object names.
absl::Status ValidateSubdomainName(absl::string_view path,
                                   absl::string_view name);
// DNS-1123 label (at most 63 characters): namespaces, pod set names.
absl::Status ValidateLabelName(absl::string_view path, absl::string_view name);

// Validates a configuration object on its own (not its references).
absl::Status ValidateConfigObject(const ConfigObject& object);

// Kubernetes' metav1 ValidateLabels at `path`: keys are qualified names
// ("example.com/name"), values label values. InvalidArgument with
// Kubernetes' wording, for the first offending entry in key order:
// `<path>: Invalid value: "@abc": name part must consist of ...`.
absl::Status ValidateLabels(absl::string_view path, const Labels& labels);
// Kubernetes' ValidateAnnotations at `path`: keys are qualified names (any
// case), and all entries together hold at most 256 KiB.
absl::Status ValidateAnnotations(absl::string_view path,
                                 const Labels& annotations);

// What Kueue accepts in status.admissionChecks[check_index].podSetUpdates of
// `workload` (the check's controller reporting `updates`): the CRD's limits
// (at most 18 updates, 8 tolerations each, its toleration rules) and the
// workload webhook's validatePodSetUpdates (names of the workload's pod
// sets, toleration keys, annotations, node selector and labels as
// Kubernetes validates them). InvalidArgument naming the field, e.g.
// `status.admissionChecks[0].podSetUpdates[1].name: Unsupported value:
// "third": supported values: "first", "second"`.
absl::Status ValidatePodSetUpdates(const Workload& workload, size_t check_index,
                                   const std::vector<PodSetUpdate>& updates);

// Kueue's podset.Merge rule, which its job reconciler applies when it starts
// an admitted job (getPodSetsInfoFromStatus, then Merge into the pod
// template): an update's labels, annotations and nodeSelector may not give
// a key another value than (in Kueue's merge order) the nodeLabels of the
// flavors assigned to the pod set (while `workload` holds quota; looked up
// in `flavors`), the kueue.x-k8s.io/podset label, the updates of the
// workload's other admission checks, and the pod set's template (its
// metadata labels and annotations, its nodeSelector). Tolerations never
// conflict (duplicates are dropped). As in Kueue, only the first update of
// a check names a pod set; later ones are ignored. Kueue fails the job
// (FailedToStart) on a conflict; kq refuses the update instead, with
// InvalidArgument naming the entry:
// `status.admissionChecks[0].podSetUpdates[0].nodeSelector[zone]: Invalid
// value: "b": conflicts with "a" in the pod set's template`.
absl::Status CheckPodSetUpdateConflicts(
    const Workload& workload, size_t check_index,
    const std::vector<PodSetUpdate>& updates,
    const std::map<std::string, ResourceFlavor>& flavors);

// Validates a workload as submitted.
absl::Status ValidateWorkload(const Workload& workload);

// ValidateWorkload for a workload being submitted: it must have a name
// (generated ones are named before this), and errors name the workload
// ("Workload \"ns/name\": spec.podSets[0].count: ...").
absl::Status ValidateSubmittedWorkload(const Workload& workload);

// Accepted-but-surprising things about an object on its own, where Kueue's
// webhook would have refused the object or silently ignored a field:
// resources listed in another order than coveredResources, covered
// resources a flavor omits (nominal quota 0), limits without a cohort, and
// a ClusterQueue without namespaceSelector (admits nothing), and a
// MultiKueueCluster whose kubeConfig is a Secret (kq reads none).
std::vector<std::string> ConfigWarnings(const ConfigObject& object);

}  // namespace kq
