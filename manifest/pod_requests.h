#pragma once

// Kueue's per-pod request computation, shared by PodRequests() and the
// Job/Workload conversions (which need field paths in their errors).

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kq::manifest::internal {

// As kq::manifest::PodRequests, with errors naming fields under `path`
// (e.g. "spec.template.spec"; empty for paths relative to the pod spec).
absl::StatusOr<std::map<std::string, std::string>> PodRequestsAt(
    const nlohmann::json& pod_spec, absl::string_view path);

}  // namespace kq::manifest::internal
