#pragma once

// Small helpers the shim's controllers share for Kubernetes objects: the
// hash Kueue puts in the names it derives, reading a JSON object's fields,
// and the one kq.v1 message they both write into pod specs.

#include <string>

#include "absl/strings/string_view.h"
#include "kq/v1/objects.pb.h"
#include "nlohmann/json.hpp"

namespace kq::shim {

// Lower-case hex SHA-1 of `data` (Kueue derives names from it:
// GetWorkloadNameForJob, the provisioning objects' names).
std::string Sha1Hex(absl::string_view data);

// `object[key]` when `object` is a JSON object holding `key`, else nullptr.
const nlohmann::json* Field(const nlohmann::json& object,
                            absl::string_view key);

// A core/v1 Toleration as the API server's JSON: the fields that are set.
nlohmann::json TolerationToJson(const v1::Toleration& toleration);

}  // namespace kq::shim
