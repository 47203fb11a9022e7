#include "server/core/spec_shape.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"

#include "server/core/shape_key.h"

namespace kq {
namespace {

// Whether SpecShapeDigest keeps the member `key` whose path from the
// template's root is `path` (keys by depth; an array element's depth has
// none). The members Kueue's SpecShape reads of a PodSpec, and of each
// container only its requests and ports.
bool InSpecShape(const std::vector<std::string>& path, int depth,
                 const std::string& key) {
  static const absl::flat_hash_set<absl::string_view> kSpecFields = {
      "initContainers", "containers",
      "nodeSelector",   "affinity",
      "tolerations",    "runtimeClassName",
      "priority",       "topologySpreadConstraints",
      "overhead",       "resourceClaims",
      "resources"};
  if (depth == 1) return key == "spec";
  if (depth == 2) return kSpecFields.contains(key);
  const bool in_containers =
      path[2] == "containers" || path[2] == "initContainers";
  // spec.resources: only its requests (pod-level resources, KEP-2837).
  if (depth == 3 && path[2] == "resources") return key == "requests";
  // spec.containers[i].<key> (depth 3 is the element).
  if (depth == 4 && in_containers) return key == "resources" || key == "ports";
  if (depth == 5 && in_containers && path[4] == "resources") {
    return key == "requests";
  }
  return true;
}

// Copies the members of `in` that SpecShapeDigest's parse keeps, deciding
// each as that parse's callback does: `depth` is how many JSON containers
// enclose `in`, and `path` holds the keys by depth.
void CopySpecShape(const nlohmann::json& in, int depth,
                   std::vector<std::string>& path, nlohmann::json& out) {
  if (in.is_object()) {
    out = nlohmann::json::object();
    const int inner = depth + 1;
    for (const auto& [key, child] : in.items()) {
      path.resize(inner);
      path.push_back(key);
      if (!InSpecShape(path, inner, key)) continue;
      CopySpecShape(child, inner, path, out[key]);
    }
  } else if (in.is_array()) {
    out = nlohmann::json::array();
    for (const nlohmann::json& child : in) {
      CopySpecShape(child, depth + 1, path, out.emplace_back());
    }
  } else {
    out = in;
  }
}

}  // namespace

uint64_t SpecShapeDigestOfParsed(const nlohmann::json& template_dom) {
  std::vector<std::string> path;
  nlohmann::json shape;
  CopySpecShape(template_dom, 0, path, shape);
  // Invalid UTF-8 replaced as in the canonical text the digest is of.
  return StableHash(shape.dump(-1, ' ', /*ensure_ascii=*/false,
                               nlohmann::json::error_handler_t::replace));
}

uint64_t SpecShapeDigest(absl::string_view template_json) {
  // The template with every member outside Kueue's SpecShape dropped while
  // parsing; its dump (members sorted by key) is what is hashed, so the
  // members' order in the text does not matter.
  std::vector<std::string> path;
  auto keep = [&path](int depth, nlohmann::json::parse_event_t event,
                      nlohmann::json& parsed) {
    if (event != nlohmann::json::parse_event_t::key) return true;
    path.resize(depth);
    path.push_back(parsed.get<std::string>());
    return InSpecShape(path, depth, path.back());
  };
  nlohmann::json shape =
      nlohmann::json::parse(template_json, keep, /*allow_exceptions=*/false);
  if (shape.is_discarded()) return 0;
  return StableHash(shape.dump());
}

}  // namespace kq
