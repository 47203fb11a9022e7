#pragma once

// Kueue manifests <-> kq.v1 protos. Reads the YAML users already have
// (kueue.x-k8s.io/v1beta1 and v1beta2 objects, v1 Namespace, batch/v1 Job,
// Kueue's Configuration)
// and writes Kueue-shaped JSON/YAML for `kq get -o json|yaml`.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

namespace kq::manifest {

// One document of a multi-document manifest, converted.
struct Document {
  // 1-based position of the document in its file, as users count them.
  int index = 0;
  // As written in the document (empty when absent).
  std::string api_version;
  std::string kind;
  std::string name;
  std::string namespace_name;
  // OK when converted; otherwise the reason this document cannot be applied:
  // INVALID_ARGUMENT with the field path ("spec.resourceGroups[0]
  // .coveredResources: ...") or UNIMPLEMENTED for a kind kq does not
  // support (the message names the kind). Other documents are unaffected.
  absl::Status status;
  // Exactly one is set when status is OK. A batch/v1 Job labelled
  // kueue.x-k8s.io/queue-name becomes a Workload named "job-<name>".
  // A Kueue Configuration document (config.kueue.x-k8s.io/v1beta1 or
  // v1beta2) sets `configuration`: its admission settings, for `kqd
  // --config` and `kq simulate`.
  std::optional<v1::ConfigObject> config_object;
  std::optional<v1::Workload> workload;
  std::optional<v1::Configuration> configuration;
  // Things accepted but worth telling the user.
  std::vector<std::string> warnings;
};

// Parses multi-document YAML or JSON. Empty documents are skipped.
// InvalidArgument only when the text is not YAML at all (with line and
// column); per-document problems are reported in Document::status.
//
// Details of the contract:
// - Document::index counts the non-empty documents, from 1.
// - Text starting with '{' or '[' may also be a stream of JSON values
//   (`kubectl get -o json` output, one object after another).
// - A `v1` `List` (what MakeList() prints) yields one Document per item,
//   all with the List's index.
// - Plain YAML scalars are typed by YAML 1.2's core schema (16 is a number,
//   true a boolean, "16" and 'true' strings); a string field given a
//   number, or a quantity given a list, is an INVALID_ARGUMENT naming the
//   field. Quantities may be numbers and keep the text written (16 -> "16").
// - Unknown fields add `unknown field "spec.foo"` to Document::warnings;
//   server-computed `status` and kubectl's metadata (managedFields, ...)
//   are read where kq models them and otherwise ignored silently.
absl::StatusOr<std::vector<Document>> ParseManifests(absl::string_view text);

// Kueue-shaped objects (apiVersion kueue.x-k8s.io/v1beta1, Kueue's camelCase
// field names, quantities as strings), for -o json and -o yaml. Empty
// fields are omitted as Kubernetes' omitempty does, but a sub-object the
// proto has set is written even when empty (`namespaceSelector: {}`), so
// ParseManifests(ToYaml(ToKueueJson(x))) gives back x. A pod set without a
// template gets a minimal one that derives back to its requests, node
// selector, tolerations and node affinity. A ConfigObject with no kind set
// yields JSON null.
nlohmann::json ToKueueJson(const v1::ConfigObject& object);
nlohmann::json ToKueueJson(const v1::Workload& workload);
// {"apiVersion": "v1", "kind": "List", "items": [...]}.
nlohmann::json MakeList(std::vector<nlohmann::json> items);

// Renders JSON as block-style YAML (kubectl's -o yaml look).
std::string ToYaml(const nlohmann::json& json);

// Per-pod requests of a Kubernetes pod template spec (the "spec" of a
// PodTemplateSpec), as Kueue computes them: max(sum of containers plus
// restartable init containers, max of init containers), plus overhead;
// limits stand in for requests a container does not set. Sums are exact
// and printed canonically ("500m" + "1" = "1500m"; binary suffixes only when
// every addend had one). Returns InvalidArgument naming the field relative
// to the pod spec ("containers[0].resources.requests[cpu]: ...") for a
// wrong type or a malformed quantity, or when a sum overflows.
absl::StatusOr<std::map<std::string, std::string>> PodRequests(
    const nlohmann::json& pod_spec);

}  // namespace kq::manifest
