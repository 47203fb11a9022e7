#pragma once

// Whether a flavor's nodes would take a pod set: its taints against the
// pod set's and the flavor's tolerations, and its labels against the pod
// set's nodeSelector and required node affinity. In Kueue this comes from
// Kubernetes' helper libraries (corev1 helpers, kube-scheduler's
// RequiredNodeAffinity), not from the flavor assigner, and the messages are
// theirs.

#include <string>
#include <vector>

#include "server/core/objects.h"

namespace kq::scheduler {

// Kubernetes' FindMatchingUntoleratedTaint restricted to NoSchedule and
// NoExecute taints: the first one no toleration tolerates, or nullptr.
const Taint* FindUntoleratedTaint(const std::vector<Taint>& taints,
                                  const std::vector<Toleration>& tolerations);

// Go's "%s" of a corev1.Taint value, which Kueue's message uses verbatim:
// {key value effect <nil>} (the last field is the unset TimeAdded).
std::string GoTaintString(const Taint& taint);

// Kueue's flavorSelector evaluated against a node carrying the flavor's
// labels (kube-scheduler's RequiredNodeAffinity): nodeSelector entries and
// required-affinity expressions whose key is not one of the flavor's own
// label keys are dropped; a term left empty drops the whole required
// affinity (terms are ORed, so it would match anything). Returns whether
// the flavor matches; sets *error for a malformed requirement reached by
// the evaluation (Kubernetes' LazyErrorNodeSelector).
bool FlavorMatchesNodeAffinity(const PodSet& ps, const Labels& node,
                               std::string* error);

}  // namespace kq::scheduler
