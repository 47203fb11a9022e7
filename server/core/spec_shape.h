#pragma once

// A digest of a pod template's scheduling-relevant shape: the part of
// Kueue's scheduling equivalence hash (workload.computeSchedulingHash) that
// kqd cannot read from a workload once its template is on disk, so it is
// made when the template arrives and kept with the pod set
// (PodSet::spec_shape). It covers the members of spec that Kueue's
// SpecShape reads: each container's and init container's requests and
// ports, nodeSelector, affinity, tolerations, runtimeClassName, priority,
// topologySpreadConstraints, overhead, resourceClaims and pod-level
// requests. The members' order in the text does not matter; anything else
// in the template (images, commands, labels) does not count. Unlike Kueue,
// quantities count as written ("1" and "1000m" differ), which can only make
// fewer workloads equivalent.

#include <cstdint>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kq {

// Never 0 for a JSON text; 0 when the text is not JSON.
uint64_t SpecShapeDigest(absl::string_view template_json);
// The digest of a template already parsed: the same value as that of its
// text, without parsing the text again.
uint64_t SpecShapeDigestOfParsed(const nlohmann::json& template_dom);

}  // namespace kq
