#pragma once

// YAML/JSON text <-> nlohmann::json for the manifest library.

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kq::manifest::internal {

// Splits `text` into its documents and converts each to JSON. Input that
// starts with '{' or '[' is first read as a stream of JSON values; anything
// else (and JSON that does not parse) is read as multi-document YAML.
// Empty documents are dropped.
//
// Returns InvalidArgument "yaml: line L, column C: <reason>" (1-based) when
// the text is not YAML at all. A document that is YAML but cannot become
// JSON (a list used as a map key, a duplicate key, too deep or too large)
// yields an InvalidArgument element; the other documents are unaffected.
absl::StatusOr<std::vector<absl::StatusOr<nlohmann::json>>> LoadDocuments(
    absl::string_view text);

// The value of a plain (unquoted) YAML scalar under YAML 1.2's core schema:
// null ("", "~", "null"), booleans ("true", "False"), integers ("16",
// "0x1F", "0o17"), floats ("1.5", "1e3", ".inf") and otherwise a string.
// Quoted scalars are always strings and never reach this function.
nlohmann::json ResolvePlainScalar(absl::string_view text);

// Whether a string must be quoted in YAML output to read back as the same
// string, both here and under YAML 1.1 readers such as kubectl ("yes",
// "on"), and to keep kubectl's look (timestamps are quoted).
bool YamlNeedsQuotes(absl::string_view text);

}  // namespace kq::manifest::internal
