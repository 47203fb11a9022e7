#pragma once

// Small helpers the shim's controllers share for Kubernetes objects: the
// hash Kueue puts in the names it derives, and reading a JSON object's
// fields.

#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kq::shim {

// Lower-case hex SHA-1 of `data` (Kueue derives names from it:
// GetWorkloadNameForJob, the provisioning objects' names).
std::string Sha1Hex(absl::string_view data);

// `object[key]` when `object` is a JSON object holding `key`, else nullptr.
const nlohmann::json* Field(const nlohmann::json& object,
                            absl::string_view key);

}  // namespace kq::shim
