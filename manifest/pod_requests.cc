#include "manifest/pod_requests.h"

#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"
#include "manifest/manifest.h"
#include "manifest/quantity.h"
#include "manifest/reader.h"

namespace kq::manifest {
namespace internal {
namespace {

using nlohmann::json;

// Resource name -> quantity; ordered so results are deterministic.
using ResourceList = std::map<std::string, MilliQuantity>;

// Parses one resource map ("requests", "limits", "overhead") at `path`.
absl::StatusOr<ResourceList> ReadResourceList(ObjectReader& parent,
                                              absl::string_view key) {
  ResourceList list;
  const json* field = parent.Find(key);
  if (field == nullptr) return list;
  const std::string path = parent.PathOf(key);
  if (!field->is_object()) {
    return FieldError(path, "must be an object, got " + JsonTypeName(*field));
  }
  for (const auto& [name, value] : field->items()) {
    const std::string entry_path = KeyPath(path, name);
    KQ_ASSIGN_OR_RETURN(std::string text, AsQuantity(value, entry_path));
    absl::StatusOr<MilliQuantity> quantity = ParseQuantity(text);
    if (!quantity.ok()) {
      return FieldError(entry_path, quantity.status().message());
    }
    list[name] = *quantity;
  }
  return list;
}

// sum += addend, resource by resource.
absl::Status AddInto(const ResourceList& addend, ResourceList& sum) {
  for (const auto& [name, quantity] : addend) {
    KQ_ASSIGN_OR_RETURN(sum[name], AddQuantities(sum[name], quantity));
  }
  return absl::OkStatus();
}

// max = max(max, other), resource by resource.
void MaxInto(const ResourceList& other, ResourceList& max) {
  for (const auto& [name, quantity] : other) {
    const auto it = max.find(name);
    max[name] = it == max.end() ? quantity : MaxQuantity(it->second, quantity);
  }
}

// One container's effective requests: its requests, plus its limits for
// resources it sets only a limit for (Kueue's AdjustResources, and the API
// server's own defaulting of requests from limits). Also returns whether
// it is a sidecar (an init container with restartPolicy Always).
absl::StatusOr<ResourceList> ContainerRequests(const json& container,
                                               const std::string& path,
                                               bool* sidecar) {
  // Pod specs are opaque Kubernetes objects here: no unknown-field warnings.
  KQ_ASSIGN_OR_RETURN(ObjectReader reader,
                      ObjectReader::Open(container, path, nullptr, false));
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> restart_policy,
                      reader.String("restartPolicy"));
  if (sidecar != nullptr) {
    *sidecar = restart_policy.has_value() && *restart_policy == "Always";
  }
  ResourceList requests;
  const json* resources = reader.Find("resources");
  if (resources == nullptr) return requests;
  KQ_ASSIGN_OR_RETURN(ObjectReader resources_reader,
                      ObjectReader::Open(*resources, reader.PathOf("resources"),
                                         nullptr, false));
  KQ_ASSIGN_OR_RETURN(requests, ReadResourceList(resources_reader, "requests"));
  KQ_ASSIGN_OR_RETURN(ResourceList limits,
                      ReadResourceList(resources_reader, "limits"));
  for (const auto& [name, quantity] : limits) {
    requests.emplace(name, quantity);  // Keeps an explicit request.
  }
  return requests;
}

// Returns the elements of the list `key` (empty when absent).
absl::StatusOr<const json*> FindList(ObjectReader& reader,
                                     absl::string_view key) {
  const json* list = reader.Find(key);
  if (list != nullptr && !list->is_array()) {
    return FieldError(reader.PathOf(key),
                      "must be a list, got " + JsonTypeName(*list));
  }
  return list;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> PodRequestsAt(
    const json& pod_spec, absl::string_view path) {
  KQ_ASSIGN_OR_RETURN(
      ObjectReader spec,
      ObjectReader::Open(pod_spec, std::string(path), nullptr, false));

  // 1. Regular containers run together: their requests add up.
  ResourceList total;
  KQ_ASSIGN_OR_RETURN(const json* containers, FindList(spec, "containers"));
  if (containers != nullptr) {
    for (size_t i = 0; i < containers->size(); ++i) {
      KQ_ASSIGN_OR_RETURN(
          ResourceList requests,
          ContainerRequests((*containers)[i],
                            IndexPath(spec.PathOf("containers"), i), nullptr));
      KQ_RETURN_IF_ERROR(AddInto(requests, total));
    }
  }

  // 2. Init containers, in order, as Kubernetes' PodRequests: a sidecar
  //    (restartPolicy Always) keeps running, so it adds to the total and to
  //    every later init container; a regular init container runs alone with
  //    the sidecars started before it. The pod needs the largest of these
  //    moments.
  ResourceList sidecars;
  ResourceList init_peak;
  KQ_ASSIGN_OR_RETURN(const json* init_containers,
                      FindList(spec, "initContainers"));
  if (init_containers != nullptr) {
    for (size_t i = 0; i < init_containers->size(); ++i) {
      bool sidecar = false;
      KQ_ASSIGN_OR_RETURN(
          ResourceList requests,
          ContainerRequests((*init_containers)[i],
                            IndexPath(spec.PathOf("initContainers"), i),
                            &sidecar));
      if (sidecar) {
        KQ_RETURN_IF_ERROR(AddInto(requests, total));
        KQ_RETURN_IF_ERROR(AddInto(requests, sidecars));
        MaxInto(sidecars, init_peak);
      } else {
        KQ_RETURN_IF_ERROR(AddInto(sidecars, requests));
        MaxInto(requests, init_peak);
      }
    }
  }
  MaxInto(init_peak, total);

  // 3. The RuntimeClass overhead is charged once per pod.
  KQ_ASSIGN_OR_RETURN(ResourceList overhead,
                      ReadResourceList(spec, "overhead"));
  KQ_RETURN_IF_ERROR(AddInto(overhead, total));

  std::map<std::string, std::string> result;
  for (const auto& [name, quantity] : total) {
    result[name] = FormatQuantity(quantity);
  }
  return result;
}

}  // namespace internal

absl::StatusOr<std::map<std::string, std::string>> PodRequests(
    const nlohmann::json& pod_spec) {
  return internal::PodRequestsAt(pod_spec, "");
}

}  // namespace kq::manifest
