#pragma once

// The rules Kueue's webhooks and OpenAPI schemas enforce, as kq enforces
// them. Every error is InvalidArgument with the field path in Kueue's
// camelCase, then the reason: "spec.resourceGroups[1].flavors[0].name:
// flavor \"x\" is already in resourceGroups[0]".

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
// a ClusterQueue without namespaceSelector (admits nothing).
std::vector<std::string> ConfigWarnings(const ConfigObject& object);

}  // namespace kq
